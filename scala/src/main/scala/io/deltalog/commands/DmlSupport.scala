package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, Expression, Literal, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.Filter
import org.apache.spark.sql.classic.{Dataset => ClassicDataset, SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions.{coalesce, col, lit}
import org.apache.spark.sql.types.StructType

import io.deltalog.actions.{Action, CommitInfo}
import io.deltalog.dv.RoaringBitmapArray
import io.deltalog.exceptions.TableNotFoundException
import io.deltalog.expressions.{PredicateParser, Predicate => LogPredicate}
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{ClientCapabilities, MetadataView, Protocol}
import io.deltalog.txn.{OptimisticTransaction, RowTracking}

/** What DELETE, UPDATE and MERGE share: opening the transaction, resolving conditions, row ids, DVs. */
private[commands] object DmlSupport {
  val AppendOnlyKey = "delta.appendOnly"
  val EnableDvKey = "delta.enableDeletionVectors"

  /**
   * A transaction on the table at `deltaLog` for `statement` (DELETE, UPDATE, MERGE): refused when
   * the table does not exist, when this client cannot write its protocol, or when it is append-only
   * (unless `allowAppendOnly`: a rewrite that changes no data, REORG ... APPLY (PURGE), as in delta-spark).
   */
  def start(deltaLog: DeltaLog, path: String, table: String, statement: String,
      allowAppendOnly: Boolean = false): OptimisticTransaction = {
    val txn = OptimisticTransaction.start(deltaLog)
    if (txn.readVersion < 0) throw new TableNotFoundException(table, s"$path has no Delta log")
    Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, table)
    val conf = txn.metadata.configuration
    if (!allowAppendOnly && MetadataView.boolValue(AppendOnlyKey, conf.get(AppendOnlyKey))) {
      throw new InvalidWriteException("DELTA_CANNOT_MODIFY_APPEND_ONLY", table,
        s"Table $table (version ${txn.readVersion}) is configured to only allow appends (delta.appendOnly = true); " +
          s"the $statement changed nothing. If you would like to permit updates or deletes, use 'ALTER TABLE $table SET " +
          "TBLPROPERTIES (delta.appendOnly=false)'.")
    }
    txn
  }

  /** The table a statement opens: its Hadoop configuration, log, name for messages and transaction. */
  final case class Opened(hadoopConf: org.apache.hadoop.conf.Configuration, deltaLog: DeltaLog, table: String,
      txn: OptimisticTransaction)

  /** Opens `path` for `statement` (see [[start]]); `tableName` names it in messages (the path when None). */
  def open(spark: ClassicSession, path: String, tableName: Option[String], hadoopOptions: Map[String, String],
      statement: String, allowAppendOnly: Boolean = false): Opened = {
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(hadoopOptions)
    val deltaLog = DeltaLog.uncached(path, hadoopConf)
    val table = tableName.getOrElse(deltaLog.tablePath.toString)
    Opened(hadoopConf, deltaLog, table, start(deltaLog, path, table, statement, allowAppendOnly))
  }

  /**
   * After a failure: unless the commit landed (its file is in the log, even if a later step failed),
   * deletes the data files and the deletion-vector file the statement wrote.
   */
  def cleanUpAfterFailure(txn: OptimisticTransaction, writer: DataFileWriter, written: Seq[WrittenFile],
      dvFile: Option[org.apache.hadoop.fs.Path], hadoopConf: org.apache.hadoop.conf.Configuration): Unit =
    if (!txn.committed && !WriteIntoDeltalog.inLog(txn.deltaLog, txn)) {
      writer.deleteFiles(written)
      dvFile.foreach(p => try p.getFileSystem(hadoopConf).delete(p, false) catch { case NonFatal(_) => })
    }

  /**
   * `op` with the session's `spark.databricks.delta.commitInfo.userMetadata` when it has none
   * (delta-spark records the session's user metadata in every commit, DML included).
   */
  def withSessionUserMetadata(spark: org.apache.spark.sql.SparkSession, op: io.deltalog.txn.Operation): io.deltalog.txn.Operation =
    if (op.userMetadata.isDefined) op
    else spark.conf.getOption(WriteOptions.UserMetadataConf).filter(_.nonEmpty).fold(op)(op.withUserMetadata)

  /** Whether row-level changes mark rows in deletion vectors instead of rewriting files. */
  def deletionVectorsOn(txn: OptimisticTransaction): Boolean =
    MetadataView.boolValue(EnableDvKey, txn.metadata.configuration.get(EnableDvKey)) &&
      txn.protocol.isFeatureSupported(io.deltalog.protocol.TableFeature.DeletionVectors)

  /** `schema` without column metadata (for an empty relation that resolves expressions). */
  def plainSchema(schema: StructType): StructType =
    StructType(schema.fields.map(f => f.copy(metadata = org.apache.spark.sql.types.Metadata.empty)))

  /**
   * `c` resolved against the table's columns (an empty relation with the table's schema); refused
   * when it does not resolve, holds a subquery or is not deterministic.
   */
  def resolveCondition(spark: ClassicSession, c: Column, schema: StructType, table: String,
      statement: String): Expression = {
    val empty = spark.createDataFrame(spark.sparkContext.emptyRDD[Row], plainSchema(schema))
    val analyzed = try empty.where(c).asInstanceOf[ClassicDataset[_]].queryExecution.analyzed catch {
      case e: org.apache.spark.sql.AnalysisException => throw new InvalidWriteException(s"DELTA_INVALID_${statement}_CONDITION",
        table, s"Table $table: the $statement condition cannot be resolved against the table's columns " +
          s"(${schema.fieldNames.mkString(", ")}): ${e.getMessage}")
    }
    val e = analyzed.collectFirst { case Filter(cond, _) => cond }.getOrElse(
      throw new IllegalStateException(s"no filter in the analyzed plan of the $statement condition: $analyzed"))
    checkPlain(e, table, statement, "condition")
    e
  }

  /** Refuses subqueries and non-deterministic expressions in a condition or value of a DML statement. */
  def checkPlain(e: Expression, table: String, statement: String, what: String): Unit = {
    if (e.exists(_.isInstanceOf[SubqueryExpression])) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_SUBQUERY", table,
        s"Table $table: subqueries are not supported in the $statement $what (${conditionSql(e)}); nothing was changed.")
    }
    if (!e.deterministic) {
      throw new InvalidWriteException("DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED", table,
        s"Table $table: the $statement $what ${conditionSql(e)} is not deterministic; nothing was changed.")
    }
  }

  /** True for a condition that is constantly true (it selects every row, like no condition). */
  def alwaysTrue(e: Expression): Boolean = e.foldable && scala.util.Try(e.eval() == true).getOrElse(false)

  /**
   * A resolved condition as delta-spark 4.4 logs it in `operationParameters.predicate`: the
   * expression's string form after constant folding (`(id#12L > 5)`, `((id#3L > 5) AND (name#4 = x))`,
   * attribute ids included).
   */
  def predicateText(e: Expression): String =
    e.transformUp {
      case x if x.foldable && !x.isInstanceOf[Literal] && x.deterministic =>
        try Literal.create(x.eval(), x.dataType) catch { case NonFatal(_) => x }
    }.toString

  /** The SQL of a resolved expression without qualifiers. */
  def conditionSql(e: Expression): String =
    e.transform { case a: AttributeReference => a.withQualifier(Nil) }.sql

  /**
   * The column that evaluates a resolved condition over the rows a statement reads: true where it
   * holds, false where it is false or NULL. Its literals that Spark would spell into generated code
   * are parameters ([[LiteralParameters]]), so that statements differing only in them share code.
   */
  def rowCondition(cond: Option[Expression]): Column =
    coalesce(cond.map(e => SparkInternals.column(unresolve(LiteralParameters(e)))).getOrElse(lit(true)), lit(false))

  /** `e` with its attribute references turned back into names (to be resolved against another plan). */
  def unresolve(e: Expression): Expression =
    e.transform { case a: AttributeReference => UnresolvedAttribute(Seq(a.name)) }

  /** The conjuncts of `e`. */
  def conjuncts(x: Expression): Seq[Expression] = x match {
    case And(l, r) => conjuncts(l) ++ conjuncts(r)
    case other => Seq(other)
  }

  /** The conjuncts of `e` on partition columns only that the log's predicate parser understands. */
  def partitionPredicates(e: Expression, partitionCols: Set[String]): Seq[LogPredicate] =
    conjuncts(e).filter(c => c.references.nonEmpty &&
      c.references.forall(a => partitionCols.contains(a.name.toLowerCase(Locale.ROOT))))
      .flatMap(c => try Some(PredicateParser.parse(conditionSql(c))) catch { case NonFatal(_) => None })

  /** Materialized row tracking columns when rewritten rows must keep their ids. */
  def rowIdColumns(txn: OptimisticTransaction, table: String, statement: String): Option[TouchedFiles.RowIds] = {
    if (!RowTracking.assignsIds(txn.protocol, txn.metadata)) return None
    val c = txn.metadata.configuration
    (c.get(RowTracking.MaterializedRowIdColumnNameKey), c.get(RowTracking.MaterializedRowCommitVersionColumnNameKey)) match {
      case (Some(id), Some(v)) => Some(TouchedFiles.RowIds(id, v))
      case _ if RowTracking.isEnabled(txn.protocol, txn.metadata) =>
        throw new InvalidWriteException("DELTA_ROW_TRACKING_MATERIALIZED_COLUMNS_MISSING", table,
          s"Table $table has row tracking enabled but its configuration lacks the materialized column names " +
            s"(${RowTracking.MaterializedRowIdColumnNameKey}, ${RowTracking.MaterializedRowCommitVersionColumnNameKey}); " +
            s"rewritten rows could not keep their row ids. The $statement changed nothing.")
      case _ => None
    }
  }

  /** The commitInfo tag saying rewritten rows kept their row ids (delta-spark's `delta.rowTracking.preserved`). */
  def rowTrackingPreserved: CommitInfo = {
    val body = Action.mapper.createObjectNode()
    body.putObject("tags").put("delta.rowTracking.preserved", "true")
    CommitInfo(body)
  }

  /** The stats of a file that gets a deletion vector: bounds no longer tight. */
  def looseBounds(stats: String): String = try {
    val n = io.deltalog.actions.ExactJson.readTree(stats).asInstanceOf[ObjectNode]
    n.put("tightBounds", false)
    io.deltalog.actions.ExactJson.mapper.writeValueAsString(n)
  } catch { case NonFatal(_) => stats }

  /** (file key, row indexes) of `rows` (columns of [[TouchedFiles]]), bitmaps built on the executors. */
  def collectBitmaps(rows: DataFrame): Seq[(String, RoaringBitmapArray)] = {
    val pairs = rows.select(col(TouchedFiles.FileColumn), col(TouchedFiles.RowIndexColumn)).rdd
      .map(r => r.getString(0) -> r.getLong(1))
    pairs.groupByKey().mapValues(it => RoaringBitmapArray.fromIterator(it.iterator).serialize).collect()
      .toSeq.map { case (k, bytes) => k -> RoaringBitmapArray.deserialize(bytes) }
  }
}
