package io.deltalog.txn

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode

import io.deltalog.actions.{Action, Metadata}
import io.deltalog.exceptions.{InvalidCommitException, InvalidTablePropertyException}

/** What the transaction needs from a `schemaString`: top-level fields and column-mapping metadata. */
private[txn] final case class FieldInfo(name: String, typeName: String, metadata: JsonNode) {
  def metaLong(key: String): Option[Long] =
    Option(metadata).flatMap(m => Option(m.get(key))).filter(_.canConvertToLong).map(_.longValue())
  def metaString(key: String): Option[String] =
    Option(metadata).flatMap(m => Option(m.get(key))).filter(_.isTextual).map(_.textValue())
}

private[txn] object SchemaInfo {
  val ColumnMappingModeKey = "delta.columnMapping.mode"
  val MaxColumnIdKey = "delta.columnMapping.maxColumnId"
  val ColumnIdKey = "delta.columnMapping.id"
  val PhysicalNameKey = "delta.columnMapping.physicalName"

  /** Parses a schema; `DELTA_INVALID_SCHEMA` when it is not a struct type JSON. */
  def parse(schemaString: String, table: String): JsonNode = {
    val root =
      try Action.mapper.readTree(Option(schemaString).getOrElse(""))
      catch { case NonFatal(e) => throw invalid(table, s"it is not valid JSON (${e.getMessage})") }
    if (root == null || !root.isObject || !Option(root.get("type")).exists(_.asText() == "struct") ||
        !Option(root.get("fields")).exists(_.isArray)) {
      throw invalid(table, "it must be a JSON struct type {\"type\":\"struct\",\"fields\":[...]}")
    }
    root
  }

  private def invalid(table: String, why: String) =
    new InvalidTablePropertyException("DELTA_INVALID_SCHEMA", s"Table $table: the schema is invalid: $why.")

  def topLevelFields(root: JsonNode): Seq[FieldInfo] =
    root.get("fields").elements().asScala.toSeq.map(f => toField(f))

  private def toField(f: JsonNode): FieldInfo = {
    val t = f.get("type")
    FieldInfo(Option(f.get("name")).map(_.asText()).orNull,
      if (t == null) null else if (t.isTextual) t.textValue() else Option(t.get("type")).map(_.asText()).orNull,
      f.get("metadata"))
  }

  /** Every struct field, nested ones included (through structs, arrays and maps). */
  def allFields(root: JsonNode): Seq[FieldInfo] = {
    val out = Vector.newBuilder[FieldInfo]
    def walkType(t: JsonNode): Unit = if (t != null && t.isObject) {
      Option(t.get("type")).map(_.asText()).getOrElse("") match {
        case "struct" => Option(t.get("fields")).toSeq.flatMap(_.elements().asScala).foreach { f =>
          out += toField(f); walkType(f.get("type"))
        }
        case "array" => walkType(t.get("elementType"))
        case "map" => walkType(t.get("keyType")); walkType(t.get("valueType"))
        case _ =>
      }
    }
    walkType(root)
    out.result()
  }

  def columnMappingMode(conf: Map[String, String]): String =
    conf.get(ColumnMappingModeKey).map(_.trim.toLowerCase(Locale.ROOT)).getOrElse("none")

  /** Logical → physical name of the partition columns (identity without column mapping). */
  def physicalPartitionColumns(m: Metadata): Seq[String] = {
    if (columnMappingMode(m.configuration) == "none") m.partitionColumns
    else {
      val fields = try topLevelFields(parse(m.schemaString, "")) catch { case NonFatal(_) => Nil }
      m.partitionColumns.map { c =>
        fields.find(f => f.name != null && f.name.equalsIgnoreCase(c)).flatMap(_.metaString(PhysicalNameKey))
          .getOrElse(c)
      }
    }
  }

  /** `partitionValues` (physical keys) re-keyed by logical partition column names. */
  def logicalPartitionValues(m: Metadata, physical: Seq[String], pv: Map[String, String]): Map[String, String] =
    if (physical == m.partitionColumns) pv
    else m.partitionColumns.zip(physical).flatMap { case (l, p) => pv.get(p).map(v => l -> v) }.toMap

  /**
   * Checks a new metadata: valid schema JSON, no duplicate top-level names, partition columns in
   * the schema (top level), column-mapping metadata consistent with the mode.
   */
  def verify(m: Metadata, table: String): Unit = {
    val root = parse(m.schemaString, table)
    val top = topLevelFields(root)
    val lowerNames = top.flatMap(f => Option(f.name)).map(_.toLowerCase(Locale.ROOT))
    val dups = lowerNames.groupBy(identity).collect { case (n, v) if v.size > 1 => n }.toSeq.sorted
    if (dups.nonEmpty) {
      throw new InvalidCommitException("DELTA_DUPLICATE_COLUMNS_FOUND", table,
        s"Table $table: the schema has duplicate column(s) ${dups.mkString(", ")} (names are case-insensitive).")
    }
    val missing = m.partitionColumns.filterNot(c => lowerNames.contains(c.toLowerCase(Locale.ROOT)))
    if (missing.nonEmpty) {
      throw new InvalidCommitException("DELTA_PARTITION_COLUMN_NOT_FOUND", table,
        s"Table $table: partition column(s) ${missing.mkString(", ")} are not top-level columns of the schema " +
          s"(columns: ${top.flatMap(f => Option(f.name)).mkString(", ")}).")
    }
    val dupPart = m.partitionColumns.map(_.toLowerCase(Locale.ROOT)).groupBy(identity).collect {
      case (n, v) if v.size > 1 => n
    }
    if (dupPart.nonEmpty) {
      throw new InvalidCommitException("DELTA_DUPLICATE_COLUMNS_FOUND", table,
        s"Table $table: partition column(s) ${dupPart.toSeq.sorted.mkString(", ")} are listed more than once.")
    }
    val mode = columnMappingMode(m.configuration)
    if (mode == "name" || mode == "id") {
      val fields = allFields(root)
      def bad(why: String): Nothing = throw new InvalidCommitException("DELTA_INVALID_COLUMN_MAPPING_METADATA",
        table, s"Table $table: column mapping mode '$mode' but $why.")
      val noId = fields.filter(_.metaLong(ColumnIdKey).isEmpty).map(_.name)
      if (noId.nonEmpty) bad(s"field(s) ${noId.mkString(", ")} have no $ColumnIdKey")
      val noPhys = fields.filter(_.metaString(PhysicalNameKey).isEmpty).map(_.name)
      if (noPhys.nonEmpty) bad(s"field(s) ${noPhys.mkString(", ")} have no $PhysicalNameKey")
      val ids = fields.flatMap(_.metaLong(ColumnIdKey))
      val dupIds = ids.groupBy(identity).collect { case (i, v) if v.size > 1 => i }
      if (dupIds.nonEmpty) bad(s"column id(s) ${dupIds.toSeq.sorted.mkString(", ")} are used more than once")
      val maxId = m.configuration.get(MaxColumnIdKey).flatMap(_.trim.toLongOption)
      val maxUsed = if (ids.isEmpty) 0L else ids.max
      if (maxId.isEmpty) bad(s"$MaxColumnIdKey is not set")
      if (maxId.get < maxUsed) bad(s"$MaxColumnIdKey = ${maxId.get} is below the largest column id $maxUsed")
    }
  }
}
