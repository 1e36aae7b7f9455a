package io.deltalog.txn

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode

import io.deltalog.actions.{AddFile, Metadata}
import io.deltalog.expressions.{FileSkipping, Predicate}

/**
 * Whether a concurrently added file may hold rows a recorded read predicate selects: partition
 * values and data skipping over the file's stats ([[FileSkipping]]), data columns resolved against
 * the schema read (logical names, matched case-insensitively, to physical stats paths under column
 * mapping). A file without stats, a column the schema does not have, or anything not understood
 * counts as matching.
 */
private[txn] final class DataFilter(metadata: Metadata) {
  private val mapped = SchemaInfo.columnMappingMode(metadata.configuration) != "none"
  private val partitionColumns = metadata.partitionColumns
  private val physicalPartitions = SchemaInfo.physicalPartitionColumns(metadata)
  private val partitionTypes =
    if (partitionColumns.isEmpty) Map.empty[String, String]
    else PartitionFilter.partitionTypes(metadata.schemaString, partitionColumns)
  private val fields: Seq[JsonNode] =
    try SchemaInfo.parse(metadata.schemaString, "").get("fields").elements().asScala.toSeq
    catch { case NonFatal(_) => Nil }
  private val partitionSet = partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet

  private def find(fs: Seq[JsonNode], name: String): Seq[JsonNode] =
    fs.filter(f => Option(f.get("name")).exists(_.asText().equalsIgnoreCase(name)))

  private def physical(f: JsonNode): String = {
    val logical = f.get("name").asText()
    if (!mapped) logical
    else Option(f.get("metadata")).flatMap(m => Option(m.get(SchemaInfo.PhysicalNameKey)))
      .filter(_.isTextual).map(_.asText()).getOrElse(logical)
  }

  /** A primitive leaf at `path` (logical names) through structs: its physical path and type name. */
  private def leaf(path: Seq[String]): Option[FileSkipping.StatsColumn] = {
    var level = fields
    val out = Vector.newBuilder[String]
    var typeName: Option[String] = None
    val it = path.iterator
    while (it.hasNext) {
      val part = it.next()
      val hit = find(level, part)
      if (hit.size != 1) return None
      val f = hit.head
      out += physical(f)
      val t = f.get("type")
      if (t != null && t.isTextual) {
        if (it.hasNext) return None
        typeName = Some(t.asText())
      } else if (t != null && t.isObject && Option(t.get("type")).exists(_.asText() == "struct") && it.hasNext) {
        level = Option(t.get("fields")).toSeq.flatMap(_.elements().asScala)
      } else return None
    }
    typeName.map(FileSkipping.StatsColumn(out.result(), _))
  }

  /**
   * The stats column of a predicate's column name: a top-level column of that exact name, else a
   * dotted path into structs; None when both or neither exist (the file then counts as matching).
   */
  private def dataColumn(name: String): Option[FileSkipping.StatsColumn] = {
    if (partitionSet.contains(name.toLowerCase(Locale.ROOT))) return None
    val top = leaf(Seq(name))
    val parts = name.split("\\.", -1).toSeq
    val nested = if (parts.size > 1) leaf(parts) else None
    (top, nested) match {
      case (Some(t), None) => Some(t)
      case (None, Some(n)) => Some(n)
      case _ => None
    }
  }

  /** True unless `a`'s partition values or stats prove no row satisfies every predicate of `ps`. */
  def mayMatchAll(ps: Seq[Predicate], a: AddFile): Boolean = {
    val pv = SchemaInfo.logicalPartitionValues(metadata, physicalPartitions, Option(a.partitionValues).getOrElse(Map.empty))
    FileSkipping.mayMatch(Predicate.and(ps), pv, partitionTypes, a.stats, dataColumn)
  }
}
