package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StringType

import io.deltalog.commands.{VacuumCommand, VacuumOptions}
import io.deltalog.log.DeltaLog

/**
 * `VACUUM <table> [LITE | FULL] [RETAIN n HOURS] [DRY RUN]` on a deltalog table (a catalog table or
 * a path): [[VacuumCommand]]. Returns delta-spark 4.4's column `path`: a dry run the qualified
 * paths it would delete, a real run one row, the table's root.
 */
case class VacuumTableCommand(target: TableTarget, retentionHours: Option[Double], dryRun: Boolean,
    vacuumType: Option[String]) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("path", StringType, nullable = true)())

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "VACUUM")
    val deltaLog = DeltaLog.forTable(location, spark.sessionState.newHadoopConf())
    val options = VacuumTableCommand.options(spark, retentionHours, dryRun, vacuumType)
    val result = new VacuumCommand(deltaLog, name.getOrElse(deltaLog.tablePath.toString), options).run()
    if (!dryRun) DeltalogTable.refreshCaches(spark, location)
    if (dryRun) result.paths.map(Row(_)) else Seq(Row(result.tablePath))
  }
}

object VacuumTableCommand {
  val RetentionCheckKey = "spark.deltalog.retentionDurationCheck.enabled"
  val DeltaRetentionCheckKey = "spark.databricks.delta.retentionDurationCheck.enabled"
  val LoggingKey = "spark.deltalog.vacuum.logging.enabled"
  val DeltaLoggingKey = "spark.databricks.delta.vacuum.logging.enabled"
  /** delta-spark's conf choosing LITE when no type is given (default false: FULL). */
  val DeltaLiteKey = "spark.databricks.delta.vacuum.lite.enabled"

  private def bool(spark: SparkSession, keys: String*): Option[Boolean] =
    keys.view.flatMap(k => spark.conf.getOption(k)).headOption.map(_.trim.equalsIgnoreCase("true"))

  /** The session's VACUUM settings: deltalog's names first, then delta-spark's. */
  def options(spark: SparkSession, retentionHours: Option[Double], dryRun: Boolean,
      vacuumType: Option[String]): VacuumOptions =
    VacuumOptions(
      retentionHours = retentionHours,
      dryRun = dryRun,
      lite = vacuumType.map(_.equalsIgnoreCase("LITE")).getOrElse(bool(spark, DeltaLiteKey).getOrElse(false)),
      retentionCheckEnabled = bool(spark, RetentionCheckKey, DeltaRetentionCheckKey).getOrElse(true),
      loggingEnabled = bool(spark, LoggingKey, DeltaLoggingKey))
}
