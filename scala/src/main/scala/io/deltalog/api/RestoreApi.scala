package io.deltalog.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.deltalog.commands.{RestoreCommand, RestoreTarget}
import io.deltalog.spark.{DeltalogTable, RestoreTableCommand}

/**
 * py4j entry points of `DeltaTable.restoreToVersion` / `restoreToTimestamp`: the statement's result
 * as `RESTORE TABLE` returns it (no row when the table already is at that version).
 */
object RestoreApi {
  private val Schema = StructType(RestoreTableCommand.columns.map(StructField(_, LongType)))

  def restoreToVersion(spark: SparkSession, path: String, version: Long): DataFrame =
    run(spark, path, RestoreTarget(Some(version), None))

  /** `timestamp`: a date or timestamp string (zone-less: the session time zone), as delta-spark takes it. */
  def restoreToTimestamp(spark: SparkSession, path: String, timestamp: String): DataFrame = {
    val ms = RestoreTableCommand.timestampMs(org.apache.spark.sql.catalyst.expressions.Literal(timestamp),
      spark.asInstanceOf[ClassicSession].sessionState.conf.sessionLocalTimeZone, path)
    run(spark, path, RestoreTarget(None, Some(ms)))
  }

  private def run(spark: SparkSession, path: String, target: RestoreTarget): DataFrame = {
    val result = try new RestoreCommand(spark.asInstanceOf[ClassicSession], path, target).run()
    finally DeltalogTable.refreshCaches(spark, path)
    spark.createDataFrame(java.util.Arrays.asList(result.map(RestoreTableCommand.row).toSeq: _*), Schema)
  }
}
