package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

import io.deltalog.commands.{ConvertCommand, ConvertResult, InvalidWriteException}

/**
 * `CONVERT TO DELTALOG parquet.`/path` [NO STATISTICS] [PARTITIONED BY (col type, …)]` (also spelled
 * `CONVERT TO DELTA`, delta-spark's name, as deltalog's other statements use delta-spark's names):
 * [[ConvertCommand]]. Returns no row, as delta-spark's command; a directory that already is a Delta
 * table is left as it is.
 */
case class ConvertTableCommand(target: String, partitionSchema: Option[StructType], collectStats: Boolean)
    extends LeafRunnableCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    ConvertTableCommand.convert(spark, target, partitionSchema, collectStats)
    Nil
  }
}

object ConvertTableCommand {
  private val ProviderPath = """(?s)^\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*\.\s*`((?:[^`]|``)*)`\s*$""".r
  private val QuotedPath = """(?s)^\s*(?:'([^']*)'|"([^"]*)"|`((?:[^`]|``)*)`)\s*$""".r

  /**
   * Converts the directory `target` names (`parquet.`/path``), returning the result and the path.
   * `delta.`/path`` / `deltalog.`/path`` naming a Delta table is a no-op (as delta-spark); anything
   * else that is not a parquet path is refused with delta-spark's error classes.
   */
  def convert(spark: SparkSession, target: String, partitionSchema: Option[StructType],
      collectStats: Boolean): (ConvertResult, String) = {
    val path = target match {
      case ProviderPath(provider, p) =>
        val dir = p.replace("``", "`")
        provider.toLowerCase(Locale.ROOT) match {
          case "parquet" => dir
          case "delta" | "deltalog" =>
            val isTable = try {
              io.deltalog.log.DeltaLog.uncached(dir, spark.asInstanceOf[ClassicSession].sessionState.newHadoopConf()).update(); true
            } catch { case _: io.deltalog.exceptions.TableNotFoundException => false }
            if (isTable) return (ConvertResult(None, 0L), dir)
            throw new InvalidWriteException("DELTA_MISSING_PROVIDER_FOR_CONVERT", dir,
              s"CONVERT TO DELTALOG only supports parquet tables and $dir is not a Delta table. Please rewrite your " +
                s"target as parquet.`$dir` if it's a parquet directory.")
          case other =>
            throw new InvalidWriteException("DELTA_CONVERT_NON_PARQUET_TABLE", target.trim,
              s"CONVERT TO DELTALOG only supports parquet tables, but you are trying to convert a $other source: ${target.trim}")
        }
      case QuotedPath(a, b, c) =>
        val dir = Option(a).orElse(Option(b)).getOrElse(c.replace("``", "`"))
        throw new InvalidWriteException("DELTA_MISSING_PROVIDER_FOR_CONVERT", dir,
          s"CONVERT TO DELTALOG only supports parquet tables. Please rewrite your target as parquet.`$dir` if it's a " +
            "parquet directory.")
      case name =>
        throw new InvalidWriteException("DELTALOG_CONVERT_CATALOG_TABLE_UNSUPPORTED", name.trim,
          s"CONVERT TO DELTALOG converts a directory, named parquet.`/path/to/dir`; converting the catalog table " +
            s"${name.trim} is not supported: convert its location, then re-create the table USING deltalog LOCATION there.")
    }
    val result = try {
      new ConvertCommand(spark.asInstanceOf[ClassicSession], path, partitionSchema, collectStats).run()
    } finally DeltalogTable.refreshCaches(spark, path)
    (result, path)
  }
}
