package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
import org.apache.spark.sql.catalyst.expressions.{Cast, EvalMode, Literal}
import org.apache.spark.sql.types.{StringType, StructType}

/**
 * The partition values of a file to convert, from the `col=value` directories of its path (Hive
 * style, as Spark writes them): read from the innermost directory outwards up to the first directory
 * without `=` once one with `=` was met (Spark's partition discovery); names and values unescaped
 * (`%2F` → `/`), `__HIVE_DEFAULT_PARTITION__` → null. They must be the partition schema's columns, in
 * its order (names case-insensitively), and each value must cast to its column's type (Spark's
 * non-ANSI cast, timestamps in the session time zone); values are kept as written, as delta-spark
 * keeps them.
 */
private[commands] final class ConvertPartitions(partitionSchema: StructType, timeZone: String, table: String) {
  private val names = partitionSchema.fieldNames.toSeq
  private val cache = scala.collection.mutable.HashMap.empty[String, Map[String, String]]

  /** The values of the file at `relative` (its path below the table root), keyed by the schema's names. */
  def valuesOf(relative: String): Map[String, String] = {
    val slash = relative.lastIndexOf('/')
    val dir = if (slash < 0) "" else relative.substring(0, slash)
    cache.getOrElseUpdate(dir, parse(dir, relative))
  }

  private def parse(dir: String, file: String): Map[String, String] = {
    val parts = if (dir.isEmpty) Array.empty[String] else dir.split('/')
    var found = List.empty[(String, String)]
    var i = parts.length - 1
    var done = false
    while (i >= 0 && !done) {
      val name = parts(i)
      val eq = name.indexOf('=')
      if (eq < 0) { if (found.nonEmpty) done = true }
      else {
        val column = ExternalCatalogUtils.unescapePathName(name.substring(0, eq))
        val raw = name.substring(eq + 1)
        if (column.isEmpty || raw.isEmpty) throw ConvertErrors.emptyPartitionName(table, name, file)
        val value = ExternalCatalogUtils.unescapePathName(raw)
        found = (column, if (value == ExternalCatalogUtils.DEFAULT_PARTITION_NAME) null else value) :: found
      }
      i -= 1
    }
    if (found.size != names.size) throw ConvertErrors.partitionCount(table, file, names, found.map(_._1))
    names.zip(found).zip(partitionSchema.fields).map { case ((expected, (parsed, value)), field) =>
      if (expected.toLowerCase(Locale.ROOT) != parsed.toLowerCase(Locale.ROOT)) {
        throw ConvertErrors.partitionColumn(table, file, expected, parsed)
      }
      if (value != null && field.dataType != StringType &&
          Cast(Literal(value), field.dataType, Some(timeZone), EvalMode.LEGACY).eval() == null) {
        throw ConvertErrors.partitionValue(table, file, field.name, value, field.dataType.simpleString)
      }
      expected -> value
    }.toMap
  }
}
