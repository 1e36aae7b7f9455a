package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import io.deltalog.commands.DropTableFeature
import io.deltalog.log.DeltaLog
import io.deltalog.spark.read.DeltalogReader

/**
 * `ALTER TABLE <table> DROP FEATURE <name> [TRUNCATE HISTORY]` on a deltalog table (a catalog
 * table or a path): [[DropTableFeature]]. Returns no rows, as delta-spark's command.
 */
case class DropFeatureCommand(target: TableTarget, featureName: String, truncateHistory: Boolean)
    extends LeafRunnableCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "ALTER TABLE ... DROP FEATURE")
    val log = DeltaLog.uncached(location, DeltalogReader.hadoopConf(spark, Map.empty))
    try DropTableFeature.run(log, featureName, truncateHistory, name.getOrElse(location))
    finally DeltalogTable.refreshCaches(spark, location)
    Seq.empty
  }
}
