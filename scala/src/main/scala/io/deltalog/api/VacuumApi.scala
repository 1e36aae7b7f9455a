package io.deltalog.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.{StringType, StructField, StructType}

import io.deltalog.commands.{VacuumCommand, VacuumProgress, VacuumResult}
import io.deltalog.log.DeltaLog
import io.deltalog.spark.{DeltalogTable, VacuumTableCommand}

/**
 * py4j entry points of VACUUM (`DeltaTable.vacuum`, `deltalog vacuum`): the session's settings as
 * the SQL statement reads them ([[VacuumTableCommand.options]]).
 */
object VacuumApi {
  private val PathSchema = StructType(Seq(StructField("path", StringType, nullable = true)))

  /**
   * `DeltaTable.vacuum(retentionHours, dryRun)`: as delta-spark, an empty DataFrame after a real
   * run; a dry run returns the paths it would delete (column `path`).
   *
   * @param retentionHours NaN for none (the table's retention)
   */
  def vacuum(spark: SparkSession, path: String, retentionHours: Double, dryRun: Boolean, lite: Boolean): DataFrame = {
    val result = start(spark, path, retentionHours, dryRun, lite).run()
    if (dryRun) spark.createDataFrame(java.util.Arrays.asList(result.paths.map(Row(_)): _*), PathSchema)
    else spark.emptyDataFrame
  }

  /** A VACUUM ready to [[VacuumRun.run]], whose progress can be polled from another thread (the CLI). */
  def start(spark: SparkSession, path: String, retentionHours: Double, dryRun: Boolean, lite: Boolean): VacuumRun = {
    val hours = if (retentionHours.isNaN) None else Some(retentionHours)
    val options = VacuumTableCommand.options(spark, hours, dryRun, Some(if (lite) "LITE" else "FULL"))
    new VacuumRun(spark, path, DeltaLog.forTable(path, spark.sessionState.newHadoopConf()), options)
  }
}

/** One VACUUM for py4j: `run()` on one thread, `progress*` polled from another. */
final class VacuumRun(spark: SparkSession, path: String, deltaLog: DeltaLog,
    options: io.deltalog.commands.VacuumOptions) {
  private val progress = new VacuumProgress

  def run(): VacuumResult = {
    val r = new VacuumCommand(deltaLog, deltaLog.tablePath.toString, options, progress).run()
    if (!options.dryRun) DeltalogTable.refreshCaches(spark, path)
    r
  }

  /** [[run]], its result as one JSON object (the CLI's summary; delta-spark's metric names). */
  def runJson(): String = {
    val r = run()
    val node = io.deltalog.actions.Action.mapper.createObjectNode()
    node.put("table", r.tablePath).put("dryRun", r.dryRun).put("vacuumType", r.vacuumType)
      .put("numFilesToDelete", r.paths.size.toLong).put("sizeOfDataToDelete", r.sizeOfDataToDelete)
      .put("numDeletedFiles", r.deleted).put("numVacuumedDirectories", r.directories)
      .put("deleteBeforeTimestamp", r.deleteBeforeTimestamp)
    val arr = node.putArray("paths")
    r.paths.foreach(arr.add)
    io.deltalog.actions.Action.mapper.writeValueAsString(node)
  }

  def phase: String = progress.phase
  def listed: Long = progress.listed.get()
  def toDelete: Long = progress.toDelete.get()
  def deleted: Long = progress.deleted.get()
}
