package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression}
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{BooleanType, DataType, StringType, StructType}

import io.deltalog.exceptions.DeltalogException
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{Protocol, TableFeature}

/**
 * deltalog's SQL parser: recognises `DESC[RIBE] PROTOCOL <table>`, `DESC[RIBE] HISTORY <table>
 * [LIMIT n]`, `DESC[RIBE] DETAIL <table>` and `ALTER TABLE <table> DROP FEATURE <name> [TRUNCATE
 * HISTORY]` ([[DropFeatureCommand]]), `REORG TABLE <table> [WHERE <partition predicate>] APPLY (PURGE)`
 * ([[ReorgTableCommand]]), `RESTORE [TABLE] <table> [TO] VERSION|TIMESTAMP AS OF ...` ([[RestoreTableCommand]]), `VACUUM <table> [LITE | FULL] [RETAIN n HOURS] [DRY RUN]` ([[VacuumTableCommand]]),
 * `OPTIMIZE <table> [FULL] [WHERE <partition predicate>] [ZORDER BY (c, …)]` ([[OptimizeTableCommand]]),
 * `CONVERT TO DELTALOG|DELTA parquet.`/path` [NO STATISTICS] [PARTITIONED BY (col type, …)]` ([[ConvertTableCommand]]),
 * `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] <t> [SHALLOW | DEEP] CLONE <s> …` ([[CloneTableCommand]]),
 * `GENERATE symlink_format_manifest FOR TABLE <t>` ([[GenerateTableCommand]]) and hands every other statement (and every other
 * parser entry point) to Spark's parser unchanged.
 *
 * `<table>` is a quoted path (`'/data/events'`), a path table (`delta.`/data/events``,
 * `deltalog.`/data/events``) or a table name of the session catalog. Like delta-spark's
 * `DESCRIBE DETAIL`, these shadow `DESCRIBE <table named protocol/history/detail> <column>`.
 */
class DeltalogSqlParser(delegate: ParserInterface) extends ParserInterface {
  override def parsePlan(sqlText: String): LogicalPlan =
    DeltalogSqlParser.parse(sqlText, delegate).getOrElse(delegate.parsePlan(sqlText))

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    DeltalogSqlParser.parse(sqlText, delegate)
      .getOrElse(delegate.parsePlanWithParameters(sqlText, context))

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}

object DeltalogSqlParser {
  private val Protocol = """(?is)^\s*desc(?:ribe)?\s+protocol\s+(.+?)\s*;?\s*$""".r
  private val History = """(?is)^\s*desc(?:ribe)?\s+history\s+(.+?)(?:\s+limit\s+(\d+))?\s*;?\s*$""".r
  private val Detail = """(?is)^\s*desc(?:ribe)?\s+detail\s+(.+?)\s*;?\s*$""".r
  private val DropFeature =
    """(?is)^\s*alter\s+table\s+(.+?)\s+drop\s+feature\s+(`(?:[^`]|``)+`|'[^']+'|"[^"]+"|[^\s;`'"]+)(\s+truncate\s+history)?\s*;?\s*$""".r

  /** The feature name as written: an identifier, a back-quoted identifier or a string literal. */
  private def featureName(text: String): String =
    if (text.startsWith("`")) text.substring(1, text.length - 1).replace("``", "`")
    else if (text.startsWith("'") || text.startsWith("\"")) text.substring(1, text.length - 1)
    else text

  private val Reorg =
    """(?is)^\s*reorg\s+table\s+(.+?)(?:\s+where\s+(.+?))?\s+apply\s*\(\s*purge\s*\)\s*;?\s*$""".r

  private val RestoreVersion =
    """(?is)^\s*restore\s+(?:table\s+)?(.+?)\s+(?:to\s+)?(?:version|system_version)\s+as\s+of\s+(\d+)\s*;?\s*$""".r
  private val RestoreTimestamp =
    """(?is)^\s*restore\s+(?:table\s+)?(.+?)\s+(?:to\s+)?(?:timestamp|system_time)\s+as\s+of\s+(.+?)\s*;?\s*$""".r

  private val Vacuum =
    """(?is)^\s*vacuum\s+(.+?)((?:\s+(?:lite|full|retain\s+[-+]?(?:\d+\.?\d*|\.\d+)\s+hours?|dry\s+run))*)\s*;?\s*$""".r
  private val VacuumModifier = """(?is)(lite|full)|retain\s+([-+]?(?:\d+\.?\d*|\.\d+))\s+hours?|(dry\s+run)""".r
  private val VacuumInventory = """(?is)^\s*vacuum\s+.*\susing\s+inventory\s.*""".r

  /** `VACUUM` with its modifiers in any order, each at most once (delta-spark's grammar, without USING INVENTORY). */
  private def vacuum(target: String, modifiers: String, delegate: ParserInterface): VacuumTableCommand = {
    var vacuumType = Option.empty[String]
    var retain = Option.empty[Double]
    var dryRun = false
    def once(seen: Boolean, clause: String): Unit =
      if (seen) throw new DeltalogException("DELTA_DUPLICATE_CLAUSE", s"Found duplicate clauses: $clause in VACUUM.")
    VacuumModifier.findAllMatchIn(modifiers).foreach { m =>
      if (m.group(1) != null) { once(vacuumType.isDefined, "LITE/FULL"); vacuumType = Some(m.group(1).toUpperCase(Locale.ROOT)) }
      else if (m.group(2) != null) { once(retain.isDefined, "RETAIN"); retain = Some(m.group(2).toDouble) }
      else { once(dryRun, "DRY RUN"); dryRun = true }
    }
    VacuumTableCommand(TableTarget.parse(target, delegate), retain, dryRun, vacuumType)
  }

  private val Optimize =
    """(?is)^\s*optimize\s+(.+?)(\s+full)?(?:\s+where\s+(.+?))?(?:\s+zorder\s+by\s*(?:\((.*)\)|([^();]+?)))?\s*;?\s*$""".r

  /** The column names of a ZORDER BY list (back-quoted names unquoted). */
  private def zOrderColumns(list: String): Seq[String] =
    list.split(",(?=(?:[^`]*`[^`]*`)*[^`]*$)").toSeq.map(_.trim).filter(_.nonEmpty).map(featureName)

  private val Convert =
    """(?is)^\s*convert\s+to\s+(?:deltalog|delta)\s+(.+?)(\s+no\s+statistics)?(?:\s+partitioned\s+by\s*\((.*)\))?\s*;?\s*$""".r

  private val Generate = """(?is)^\s*generate\s+(\S+)\s+for\s+table\s+(.+?)\s*;?\s*$""".r

  /** A table name or path as one token: no blanks outside back quotes or quotes. */
  private val TableToken = """((?:`(?:[^`]|``)*`|'[^']*'|"[^"]*"|[^\s`'"();])+)"""
  private val Clone =
    ("""(?is)^\s*(create\s+or\s+replace|create|replace)\s+table\s+(if\s+not\s+exists\s+)?""" + TableToken +
      """\s+(?:(shallow|deep)\s+)?clone\s+""" + TableToken +
      """(?:\s+(?:version|system_version)\s+as\s+of\s+(\d+)|\s+(?:timestamp|system_time)\s+as\s+of\s+(.+?))?""" +
      """(?:\s+tblproperties\s*\((.*?)\))?(?:\s+location\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))?\s*;?\s*$""").r
  private val Property =
    """\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([\w.\-]+))\s*=?\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,\s]+))\s*(?:,|$)""".r

  /** `TBLPROPERTIES (k = v, …)`'s entries (keys and values quoted or bare). */
  private def properties(list: String): Map[String, String] = {
    val entries = Property.findAllMatchIn(list).toSeq
    val covered = entries.map(_.matched.length).sum
    if (covered != list.length && list.trim.nonEmpty) {
      throw new DeltalogException("PARSE_SYNTAX_ERROR", s"Cannot read the TBLPROPERTIES list ($list) of CLONE: write " +
        "them as 'key' = 'value' pairs separated by commas.")
    }
    def first(m: scala.util.matching.Regex.Match, groups: Int*): String =
      groups.map(m.group).find(_ != null).map(StringContext.processEscapes).get
    entries.map(m => first(m, 1, 2, 3) -> first(m, 4, 5, 6)).toMap
  }

  private def clone(header: String, ifNotExists: String, target: String, kind: String, source: String,
      version: String, timestamp: String, props: String, location: String, delegate: ParserInterface): LogicalPlan = {
    val h = header.toLowerCase(Locale.ROOT).split("\\s+").mkString(" ")
    val create = h.startsWith("create")
    val replace = h.endsWith("replace")
    if (replace && ifNotExists != null) {
      throw new DeltalogException("DELTA_PARSING_MUTUALLY_EXCLUSIVE_CLAUSES",
        "IF NOT EXISTS cannot be used together with REPLACE (CLONE).")
    }
    CloneTableCommand(TableTarget.parse(target, delegate), TableTarget.parse(source, delegate),
      isShallow = kind != null && kind.equalsIgnoreCase("shallow"), create = create, replace = replace,
      ifNotExists = ifNotExists != null, version = Option(version).map(_.toLong),
      timestamp = Option(timestamp).map(delegate.parseExpression), properties = Option(props).map(properties)
        .getOrElse(Map.empty), location = Option(location).map(l => StringContext.processEscapes(l.substring(1, l.length - 1))))
  }

  /** deltalog's command for `sqlText` (DESCRIBE PROTOCOL / HISTORY / DETAIL, DROP FEATURE, REORG … APPLY (PURGE)), or None for any other statement. */
  def parse(sqlText: String, delegate: ParserInterface): Option[LogicalPlan] = sqlText match {
    case Protocol(target) =>
      val t = TableTarget.parse(target, delegate)
      Some(DescribeProtocolCommand(t.path, t.table))
    case History(target, limit) =>
      Some(DescribeHistoryCommand(TableTarget.parse(target, delegate), Option(limit).map(_.toInt)))
    case Detail(target) => Some(DescribeDetailCommand(TableTarget.parse(target, delegate)))
    case DropFeature(target, name, truncate) =>
      Some(DropFeatureCommand(TableTarget.parse(target, delegate), featureName(name), truncate != null))
    case Vacuum(target, modifiers) => Some(vacuum(target, modifiers, delegate))
    case VacuumInventory() =>
      throw new DeltalogException("DELTALOG_VACUUM_INVENTORY_UNSUPPORTED",
        "VACUUM ... USING INVENTORY is not supported by deltalog: run VACUUM without it (deltalog lists the table itself).")
    case Reorg(target, where) =>
      Some(ReorgTableCommand(TableTarget.parse(target, delegate), Option(where)))
    case RestoreVersion(target, v) => Some(RestoreTableCommand(TableTarget.parse(target, delegate), Some(v.toLong), None))
    case RestoreTimestamp(target, ts) =>
      Some(RestoreTableCommand(TableTarget.parse(target, delegate), None, Some(delegate.parseExpression(ts))))
    case Generate(mode, target) => Some(GenerateTableCommand(TableTarget.parse(target, delegate), featureName(mode)))
    case Clone(header, ifNotExists, target, kind, source, version, timestamp, props, location) =>
      Some(clone(header, ifNotExists, target, kind, source, version, timestamp, props, location, delegate))
    case Optimize(target, full, where, zList, zOne) =>
      Some(OptimizeTableCommand(TableTarget.parse(target, delegate), Option(where),
        Option(zList).orElse(Option(zOne)).map(zOrderColumns).getOrElse(Nil), full != null))
    case Convert(target, noStats, partitionList) =>
      Some(ConvertTableCommand(target, Option(partitionList).map(delegate.parseTableSchema), noStats == null))
    case _ => None
  }
}

/**
 * `DESCRIBE PROTOCOL`: one row per feature of the table's latest protocol — the same facts as
 * the Python advisor's `explain()` (kind, legacy version, what supports it, which features need
 * it, whether `DROP FEATURE` removes it and the resulting protocol), computed with the engine's
 * protocol rules. The protocol and metadata are read without loading the table's files, so
 * tables this engine cannot read can still be described.
 */
case class DescribeProtocolCommand(path: Option[String], table: Option[TableIdentifier])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("feature", StringType, nullable = false)(),
    AttributeReference("type", StringType, nullable = false)(),
    AttributeReference("legacy_version", StringType)(),
    AttributeReference("min_protocol", StringType, nullable = false)(),
    AttributeReference("supported_by", StringType, nullable = false)(),
    AttributeReference("required_by", StringType)(),
    AttributeReference("requires", StringType)(),
    AttributeReference("enabled_by", StringType)(),
    AttributeReference("droppable", BooleanType, nullable = false)(),
    AttributeReference("drop_result", StringType, nullable = false)(),
    AttributeReference("protocol", StringType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, _) = TableTarget(path, table).resolve(spark, "DESCRIBE PROTOCOL")
    val log = DeltaLog.forTable(location, spark.sessionState.newHadoopConf())
    val (protocol, _) = log.readProtocolAndMetadata()
    DescribeProtocolCommand.rows(protocol)
  }
}

object DescribeProtocolCommand {
  private def pair(r: Int, w: Int): String = s"($r,$w)"

  /** Implied legacy features (by name), then listed names (case-insensitively, first spelling kept). */
  def featureNames(p: Protocol): Seq[String] = {
    val implied = p.implicitlySupportedFeatures.map(_.name).toSeq.sorted
    val listed = p.readerAndWriterFeatureNames.toSeq.sortBy(_.toLowerCase(Locale.ROOT))
    (implied ++ listed).foldLeft(Vector.empty[String]) { (acc, n) =>
      if (acc.exists(_.equalsIgnoreCase(n))) acc else acc :+ n
    }
  }

  def rows(p: Protocol): Seq[Row] = {
    val supported = p.implicitlyAndExplicitlySupportedFeatures
    featureNames(p).map { name =>
      val feature = TableFeature.byName(name)
      val (droppable, dropResult) =
        try (true, Protocol.dropFeatureSupport(p, name).simpleString)
        catch { case e: DeltalogException => (false, e.errorClass) }
      feature match {
        case Some(f) =>
          val legacy = if (f.isLegacyFeature) Some(pair(math.max(1, f.minReaderVersion), f.minWriterVersion)) else None
          val minProtocol = legacy.getOrElse(pair(if (f.isReaderWriterFeature) 3 else 1, 7))
          val implied = p.implicitlySupportedFeatures.contains(f)
          val requiredBy = supported.filter(_.requiredFeatureNames.contains(f.name)).map(_.name).toSeq.sorted
          Row(f.name, if (f.isReaderWriterFeature) "reader-writer" else "writer-only", legacy.orNull, minProtocol,
            if (implied) s"implied by ${pair(p.minReaderVersion, p.minWriterVersion)}" else "listed",
            if (requiredBy.isEmpty) null else requiredBy.mkString(","),
            if (f.requiredFeatureNames.isEmpty) null else f.requiredFeatureNames.sorted.mkString(","),
            f.enabledBy, droppable, dropResult, p.simpleString)
        case None =>
          val inReader = p.readerFeatureNames.exists(_.equalsIgnoreCase(name))
          Row(name, "unknown", null, pair(if (inReader) 3 else 1, 7), "listed", null, null, null,
            droppable, dropResult, p.simpleString)
      }
    }
  }
}
