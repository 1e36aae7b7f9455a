package io.deltalog.spark

import java.sql.Timestamp

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

import io.deltalog.actions.CommitInfo
import io.deltalog.log.{DeltaLog, HistoryEntry, TableHistory}

/**
 * `DESCRIBE HISTORY <table> [LIMIT n]`: one row per commit, newest first, with delta-spark's
 * columns ([[DescribeHistoryCommand.schema]]) taken from each commit's `commitInfo`
 * ([[TableHistory]]: only the commits shown are read).
 */
case class DescribeHistoryCommand(target: TableTarget, limit: Option[Int]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(DescribeHistoryCommand.schema)

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, _) = target.resolve(spark, "DESCRIBE HISTORY")
    DescribeHistoryCommand.rows(TableHistory(DeltaLog.forTable(location, spark.sessionState.newHadoopConf()), limit))
  }
}

object DescribeHistoryCommand {
  private val jobType = StructType(Seq("jobId", "jobName", "jobRunId", "runId", "jobOwnerId", "triggerType")
    .map(StructField(_, StringType)))
  private val notebookType = StructType(Seq(StructField("notebookId", StringType)))
  private val stringMap = MapType(StringType, StringType)

  /** delta-spark's `DESCRIBE HISTORY` columns, in its order. */
  val schema: StructType = StructType(Seq(
    StructField("version", LongType), StructField("timestamp", TimestampType),
    StructField("userId", StringType), StructField("userName", StringType),
    StructField("operation", StringType), StructField("operationParameters", stringMap),
    StructField("job", jobType), StructField("notebook", notebookType),
    StructField("clusterId", StringType), StructField("readVersion", LongType),
    StructField("isolationLevel", StringType), StructField("isBlindAppend", BooleanType),
    StructField("operationMetrics", stringMap), StructField("userMetadata", StringType),
    StructField("engineInfo", StringType)))

  def rows(entries: Seq[HistoryEntry]): Seq[Row] = entries.map(row)

  private def row(e: HistoryEntry): Row = {
    val c = e.commitInfo
    def str(f: CommitInfo => Option[String]): String = c.flatMap(f).orNull
    def struct(m: Option[Map[String, String]], t: StructType): Row =
      m.map(v => Row.fromSeq(t.fieldNames.toSeq.map(v.get(_).orNull))).orNull
    Row(e.version, new Timestamp(e.timestamp), str(_.userId), str(_.getString("userName")), str(_.operation),
      c.flatMap(_.operationParameters).orNull, struct(c.flatMap(_.job), jobType),
      struct(c.flatMap(_.notebook), notebookType), str(_.clusterId),
      c.flatMap(_.readVersion).map(Long.box).orNull, str(_.isolationLevel),
      c.flatMap(_.isBlindAppend).map(Boolean.box).orNull, c.flatMap(_.operationMetrics).orNull,
      str(_.userMetadata), str(_.engineInfo))
  }
}
