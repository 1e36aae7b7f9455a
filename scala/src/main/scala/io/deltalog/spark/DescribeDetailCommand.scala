package io.deltalog.spark

import java.sql.Timestamp

import scala.util.control.NonFatal

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

import io.deltalog.actions.Action
import io.deltalog.log.{DeltaLog, Snapshot}

/**
 * `DESCRIBE DETAIL <table>`: one row with delta-spark's columns ([[DescribeDetailCommand.schema]])
 * for the table's latest version.
 */
case class DescribeDetailCommand(target: TableTarget) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(DescribeDetailCommand.schema)

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "DESCRIBE DETAIL")
    val log = DeltaLog.forTable(location, spark.sessionState.newHadoopConf())
    Seq(DescribeDetailCommand.row(log.update(), name))
  }
}

object DescribeDetailCommand {
  /**
   * delta-spark 4.4's `DESCRIBE DETAIL` columns, in its order, then `statistics` (the table-level
   * statistics Delta's documentation lists: `numDeletionVectors`, `numRowsDeletedByDeletionVectors`;
   * delta-spark 4.4 does not fill this column).
   */
  val schema: StructType = StructType(Seq(
    StructField("format", StringType), StructField("id", StringType), StructField("name", StringType),
    StructField("description", StringType), StructField("location", StringType),
    StructField("createdAt", TimestampType), StructField("lastModified", TimestampType),
    StructField("partitionColumns", ArrayType(StringType)), StructField("clusteringColumns", ArrayType(StringType)),
    StructField("numFiles", LongType), StructField("sizeInBytes", LongType),
    StructField("properties", MapType(StringType, StringType)),
    StructField("minReaderVersion", IntegerType), StructField("minWriterVersion", IntegerType),
    StructField("tableFeatures", ArrayType(StringType)),
    StructField("statistics", MapType(StringType, LongType))))

  /** The row of `snapshot`; `name` is the catalog name (None for a path). */
  def row(snapshot: Snapshot, name: Option[String]): Row = {
    val m = snapshot.metadata
    val p = snapshot.protocol
    Row("delta", m.id, name.orNull, m.description.orNull, snapshot.deltaLog.tablePath.toString,
      m.createdTime.map(new Timestamp(_)).orNull, new Timestamp(snapshot.timestamp), m.partitionColumns,
      clusteringColumns(snapshot), snapshot.numFiles, snapshot.sizeInBytes, m.configuration,
      p.minReaderVersion, p.minWriterVersion, DescribeProtocolCommand.featureNames(p).sorted, statistics(snapshot))
  }

  /** Live deletion vectors and the rows they delete (one pass over the live files). */
  def statistics(snapshot: Snapshot): Map[String, Long] = {
    var dvs, rows = 0L
    snapshot.allFiles.foreach(a => a.deletionVector.foreach { dv => dvs += 1; rows += dv.cardinality })
    Map("numDeletionVectors" -> dvs, "numRowsDeletedByDeletionVectors" -> rows)
  }

  /** Liquid clustering columns from the `delta.clustering` domain (logical dotted names), else none. */
  private def clusteringColumns(snapshot: Snapshot): Seq[String] = io.deltalog.commands.ClusteredTable.logicalColumns(snapshot)
}
