package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Cast, Expression}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, TimestampType}

import io.deltalog.commands.{InvalidWriteException, RestoreCommand, RestoreResult, RestoreTarget}

/**
 * `RESTORE [TABLE] <table> [TO] VERSION|SYSTEM_VERSION AS OF <n>` / `... TIMESTAMP|SYSTEM_TIME AS OF
 * <expr>` on a deltalog table (catalog name or path): [[RestoreCommand]]. The timestamp is any
 * constant expression that casts to a timestamp (`'2024-01-31 12:00:00'`, `current_timestamp() -
 * INTERVAL 1 HOUR`), zone-less strings read in the session time zone. Returns delta-spark 4.4's
 * row (`table_size_after_restore`, `num_of_files_after_restore`, `num_removed_files`,
 * `num_restored_files`, `removed_files_size`, `restored_files_size`); no row when the table is
 * already at that version.
 */
case class RestoreTableCommand(target: TableTarget, version: Option[Long], timestamp: Option[Expression])
    extends LeafRunnableCommand {
  override val output: Seq[Attribute] = RestoreTableCommand.columns.map(AttributeReference(_, LongType)())

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "RESTORE")
    val zone = spark.sessionState.conf.sessionLocalTimeZone
    val ms = timestamp.map(e => RestoreTableCommand.timestampMs(e, zone, name.getOrElse(location)))
    val result = try {
      new RestoreCommand(spark.asInstanceOf[ClassicSession], location, RestoreTarget(version, ms), name).run()
    } finally DeltalogTable.refreshCaches(spark, location)
    result.map(RestoreTableCommand.row).toSeq
  }
}

object RestoreTableCommand {
  val columns: Seq[String] = Seq("table_size_after_restore", "num_of_files_after_restore", "num_removed_files",
    "num_restored_files", "removed_files_size", "restored_files_size")

  def row(r: RestoreResult): Row = Row(r.tableSizeAfterRestore, r.numOfFilesAfterRestore, r.numRemovedFiles,
    r.numRestoredFiles, r.removedFilesSize, r.restoredFilesSize)

  /** The constant timestamp `e` names, ms since the epoch (the session time zone for zone-less strings). */
  def timestampMs(e: Expression, zone: String, table: String): Long = {
    val cast = Cast(e, TimestampType, Some(zone))
    val value = if (!e.foldable) null else scala.util.Try(cast.eval()).getOrElse(null)
    if (value == null) {
      throw new InvalidWriteException("DELTA_TIMESTAMP_INVALID", table,
        s"The provided timestamp (${e.sql}) cannot be converted to a valid timestamp (table $table); give a " +
          "constant such as '2024-01-31 12:00:00' or current_timestamp() - INTERVAL 1 HOUR.")
    }
    Math.floorDiv(value.asInstanceOf[Long], 1000L)
  }
}
