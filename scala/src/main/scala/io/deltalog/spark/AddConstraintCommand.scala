package io.deltalog.spark

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.antlr.v4.runtime.{CharStream, CharStreams, CodePointCharStream, IntStream, Token}
import org.antlr.v4.runtime.misc.Interval
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{CheckConstraint, SubqueryExpression}
import org.apache.spark.sql.catalyst.parser.SqlBaseLexer
import org.apache.spark.sql.catalyst.plans.logical.Project
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.functions.{coalesce, expr, lit, not}
import org.apache.spark.sql.types.BooleanType

import io.deltalog.commands.InvalidWriteException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.{ClientCapabilities, Protocol}
import io.deltalog.spark.read.DeltalogReader
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * `ALTER TABLE t ADD CONSTRAINT name CHECK (expr)` on a deltalog table (planned by
 * [[DeltalogAnalysis]] from Spark's `AddCheckConstraint`). See [[AddConstraint.prepare]].
 *
 * @param name the constraint name as written
 * @param condition the expression's text as written (Spark's `CheckConstraint.condition`)
 */
case class AddConstraintCommand(table: DeltalogTable, name: String, condition: String) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    AddConstraint.prepare(spark, table.path, table.name(), table.options, name, condition).commit()
    Nil
  }
}

/**
 * Adding a CHECK constraint: one transaction that reads the whole latest snapshot, counts the rows
 * for which the expression is false or NULL (both violate, as in delta-spark and on every later
 * write) and, when there are none, commits the metadata with `delta.constraints.<lower-case name>`
 * = the expression (operation `ADD CONSTRAINT`, parameters `name` and `expr`). The protocol gains
 * `checkConstraints` through the transaction's usual upgrade for what the metadata enables.
 *
 * Concurrency: the rows are counted on the transaction's own snapshot and the transaction records a
 * read of the whole table. What [[io.deltalog.txn.ConflictChecker]] then does with a winning commit:
 *  - one that adds files (even a blind append): ConcurrentAppendException, because a commit with a
 *    metadata action keeps the table's isolation level (never downgraded to snapshot isolation) and
 *    every added file matches the whole-table read. The new rows were never validated, so failing
 *    (not retrying) is the only safe outcome; the user re-runs the statement;
 *  - one that removes files (DELETE, OPTIMIZE, ...): ConcurrentDeleteReadException (whole table read);
 *  - one that changes the metadata or the protocol: MetadataChangedException / ProtocolChangedException,
 *    since this commit changes the metadata (and maybe the protocol) too;
 *  - one with neither (e.g. only a SetTransaction or domain metadata of other domains): adopted.
 */
object AddConstraint {
  val Prefix = "delta.constraints."

  /** The table property of constraint `name`. */
  def key(name: String): String = Prefix + name.toLowerCase(Locale.ROOT)

  /** The command for Spark's parsed constraint; refuses what a Delta CHECK constraint cannot be. */
  def command(table: DeltalogTable, c: CheckConstraint): AddConstraintCommand = {
    val name = table.name()
    if (c.userProvidedName == null || c.userProvidedName.isEmpty) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", name,
        s"ALTER TABLE $name ADD CHECK (${c.condition}): a Delta CHECK constraint needs a name; write " +
          s"ALTER TABLE $name ADD CONSTRAINT <name> CHECK (${c.condition}). Nothing was changed.")
    }
    val ch = c.userProvidedCharacteristic
    if (ch.enforced.contains(false) || ch.rely.contains(true)) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", name,
        s"ALTER TABLE $name ADD CONSTRAINT ${c.userProvidedName}: Delta CHECK constraints are always enforced " +
          "and never RELY; leave out NOT ENFORCED / RELY. Nothing was changed.")
    }
    AddConstraintCommand(table, c.userProvidedName, c.condition)
  }

  /** A validated constraint addition, not committed yet. */
  final class Pending private[AddConstraint] (
      spark: SparkSession,
      val txn: OptimisticTransaction,
      path: String,
      val name: String,
      val expression: String) {
    /** Commits (`ADD CONSTRAINT`) and returns the version; a concurrent data change makes it fail. */
    def commit(): Long = {
      val v = txn.commit(Nil, Operation.addConstraint(name, expression))
      DeltalogTable.refreshCaches(spark, path)
      v
    }
  }

  /**
   * Starts the transaction, checks the constraint (new name, expression over the table's columns,
   * boolean, deterministic, no subquery) and validates every row of the snapshot read.
   *
   * @param tableName the name used in messages
   * @param condition the expression as written; stored in delta-spark's spelling ([[deltaSpelling]])
   */
  def prepare(spark: SparkSession, path: String, tableName: String, options: Map[String, String], name: String,
      condition: String): Pending = {
    val txn = OptimisticTransaction.start(DeltaLog.uncached(path, DeltalogReader.hadoopConf(spark, options)))
    Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, tableName)
    val m = txn.metadata
    val k = key(name)
    m.configuration.find(_._1.toLowerCase(Locale.ROOT) == k).foreach { case (_, old) =>
      throw new InvalidWriteException("DELTA_CONSTRAINT_ALREADY_EXISTS", tableName,
        s"Constraint '${name.toLowerCase(Locale.ROOT)}' already exists. Please delete the old constraint first.\n" +
          s"Old constraint:\n$old")
    }
    val text = deltaSpelling(spark, condition)
    txn.readWholeTable()
    val n = violations(spark, txn.snapshot, tableName, name, text)
    if (n > 0) {
      throw new InvalidWriteException("DELTA_NEW_CHECK_CONSTRAINT_VIOLATION", tableName,
        s"$n rows in $tableName violate the new CHECK constraint ($text)")
    }
    txn.updateMetadata(m.copy(configuration = m.configuration + (k -> text)))
    new Pending(spark, txn, path, name, text)
  }

  /** [[prepare]] without file-system options (for py4j callers). */
  def prepare(spark: SparkSession, path: String, tableName: String, name: String, condition: String): Pending =
    prepare(spark, path, tableName, Map.empty[String, String], name, condition)

  /** Rows of `snapshot` for which `text` is false or NULL; the expression is checked first. */
  private def violations(spark: SparkSession, snapshot: Snapshot, tableName: String, name: String,
      text: String): Long = {
    val df = spark.asInstanceOf[ClassicSession].baseRelationToDataFrame(DeltalogReader.relation(spark, snapshot))
    val c = expr(text)
    // Analysis errors (unknown column, wrong function, ...) surface here as Spark's, before anything runs.
    val analyzed = df.select(c.as("check")).queryExecution.analyzed
    val e = analyzed match {
      case Project(Seq(e), _) => e
      case _ =>
        throw new InvalidWriteException("DELTA_INVALID_CHECK_CONSTRAINT", tableName,
          s"CHECK constraint '$name' ($text) must be an expression over one row (no aggregate, window or " +
            "generator); nothing was changed.")
    }
    if (e.dataType != BooleanType) {
      throw new InvalidWriteException("DELTA_NON_BOOLEAN_CHECK_CONSTRAINT", tableName,
        s"CHECK constraint '$name' ($text) should be a boolean expression.")
    }
    if (!e.deterministic || SubqueryExpression.hasSubquery(e)) {
      throw new InvalidWriteException("DELTA_INVALID_CHECK_CONSTRAINT", tableName,
        s"CHECK constraint '$name' ($text) must be deterministic and may not contain a subquery: every " +
          "later write checks its rows with it. Nothing was changed.")
    }
    df.where(not(coalesce(c, lit(false)))).count()
  }

  /**
   * The expression text delta-spark stores for `condition`: its SQL tokens (comments and
   * whitespace dropped) joined by one space, e.g. `s.a>0` -> `s . a > 0`. Falls back to the text as
   * written when the spelling would not parse back.
   */
  def deltaSpelling(spark: SparkSession, condition: String): String = {
    val spelled = try {
      val lexer = new SqlBaseLexer(new UpperCaseLookahead(CharStreams.fromString(condition)))
      lexer.removeErrorListeners()
      lexer.getAllTokens.asScala
        .filter(t => t.getChannel == Token.DEFAULT_CHANNEL && t.getType != Token.EOF)
        .flatMap(t => splitQuoted(t.getText)).mkString(" ")
    } catch { case NonFatal(_) => "" }
    val ok = spelled.nonEmpty &&
      (try { spark.sessionState.sqlParser.parseExpression(spelled); true } catch { case NonFatal(_) => false })
    if (ok) spelled else condition.trim
  }

  /**
   * delta-spark's lexer reads a string literal with a doubled quote (`'it''s'`, one literal for
   * Spark) as adjacent literals (`'it' 's'`, which Spark's parser concatenates).
   */
  private def splitQuoted(token: String): Seq[String] = {
    val q = token.headOption.getOrElse(' ')
    if (q != '\'' && q != '"') return Seq(token)
    val parts = Seq.newBuilder[String]
    var i = 0
    while (i < token.length && token(i) == q) {
      var j = i + 1
      while (j < token.length && token(j) != q) j += (if (token(j) == '\\') 2 else 1)
      if (j >= token.length) return Seq(token)
      parts += token.substring(i, j + 1)
      i = j + 1
    }
    if (i == token.length) parts.result() else Seq(token)
  }
}

/** Spark's lexer matches keywords on upper-case lookahead; token texts stay as written. */
private final class UpperCaseLookahead(in: CodePointCharStream) extends CharStream {
  override def consume(): Unit = in.consume()
  override def LA(i: Int): Int = {
    val c = in.LA(i)
    if (c == 0 || c == IntStream.EOF) c else Character.toUpperCase(c)
  }
  override def mark(): Int = in.mark()
  override def release(marker: Int): Unit = in.release(marker)
  override def index(): Int = in.index()
  override def seek(index: Int): Unit = in.seek(index)
  override def size(): Int = in.size()
  override def getSourceName: String = in.getSourceName
  override def getText(interval: Interval): String = in.getText(interval)
}
