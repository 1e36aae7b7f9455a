package io.deltalog.spark.stream

import java.util.Locale

import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.StreamingInternals
import org.apache.spark.sql.connector.expressions.Expressions
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.execution.streaming.Sink
import org.apache.spark.sql.streaming.OutputMode
import org.slf4j.LoggerFactory

import io.deltalog.commands.{InvalidWriteException, StatementContext, WriteIntoDeltalog, WriteOptions}
import io.deltalog.spark.DeltalogTable
import io.deltalog.txn.Operation

/**
 * The Structured Streaming sink of `writeStream.format("deltalog")` (and of `toTable` on a deltalog
 * catalog table): every micro-batch is one transaction of the batch write path
 * ([[WriteIntoDeltalog]]: schema enforcement / `mergeSchema`, partitioning, NOT NULL / CHECK,
 * generated and identity columns, stats), committed with a `txn` action (appId = the query id,
 * version = the batch id) and the operation `STREAMING UPDATE`.
 *
 *  - Append: the batch's rows are added.
 *  - Complete: the batch's rows replace the table's contents in one commit (removes + adds).
 *
 * `writeStream.clusterBy(cols)` (Spark hands it over as an option) clusters the table the first
 * batch creates, as `CREATE TABLE ... CLUSTER BY`; an existing table keeps its layout.
 *
 * A batch Spark replays after a restart (its id not newer than the query's `txn` version in the
 * log) is skipped: nothing is written twice.
 */
final class DeltalogSink(
    sqlContext: SQLContext,
    path: String,
    partitionColumns: Seq[String],
    outputMode: OutputMode,
    parameters: Map[String, String]) extends Sink {
  import DeltalogSink._

  private val complete = outputMode == OutputMode.Complete()

  /** `writeStream.clusterBy(...)`: the clustering of a table the first batch creates (as CLUSTER BY). */
  private val clusterBy: Option[Seq[Seq[String]]] = clusteringColumns(parameters)

  override def addBatch(batchId: Long, data: DataFrame): Unit = {
    val spark = data.sparkSession.asInstanceOf[ClassicSession]
    val queryId = spark.sparkContext.getLocalProperty(StreamingInternals.QueryIdKey)
    if (queryId == null) {
      throw new IllegalStateException(s"Streaming sink for $path: micro-batch $batchId has no query id " +
        s"(local property ${StreamingInternals.QueryIdKey})")
    }
    val options = new WriteOptions(sinkOptions(parameters, queryId, batchId, complete), k => spark.conf.getOption(k))
    val statement = StatementContext(clusterBy = clusterBy, streamingUpdate =
      Some(Operation.streamingUpdate(outputMode.toString, queryId, batchId)))
    val mode = if (complete) SaveMode.Overwrite else SaveMode.Append
    val batch = StreamingInternals.microBatchAsBatch(data)
    val version = new WriteIntoDeltalog(spark, path, mode, options, partitionColumns, batch, statement).run()
    version match {
      case Some(v) => log.info(s"Streaming query $queryId batch $batchId committed as version $v of $path")
      case None => log.info(s"Streaming query $queryId batch $batchId was already committed to $path; skipped")
    }
    DeltalogTable.refreshCaches(spark, path)
  }

  override def toString: String = s"DeltalogSink[$path]"
}

object DeltalogSink {
  private val log = LoggerFactory.getLogger(classOf[DeltalogSink])

  /** Writer options that make no sense for a micro-batch (a replace predicate, dynamic partition overwrite). */
  private val Ignored = Set(WriteOptions.ReplaceWhere, WriteOptions.PartitionOverwriteMode, WriteOptions.TxnAppId,
    WriteOptions.TxnVersion, DataSourceUtils.CLUSTERING_COLUMNS_KEY).map(_.toLowerCase(Locale.ROOT))

  /**
   * The batch write's options: the query's, with the micro-batch's transaction identifier (appId
   * = query id, version = batch id) and a static overwrite (the whole table, complete mode only);
   * `overwriteSchema` is honoured in complete mode only, as delta-spark does.
   */
  def sinkOptions(parameters: Map[String, String], queryId: String, batchId: Long,
      complete: Boolean): Map[String, String] = {
    val kept = parameters.filter { case (k, _) =>
      val l = k.toLowerCase(Locale.ROOT)
      !Ignored.contains(l) && (complete || l != WriteOptions.OverwriteSchema.toLowerCase(Locale.ROOT))
    }
    kept ++ Map(WriteOptions.TxnAppId -> queryId, WriteOptions.TxnVersion -> batchId.toString,
      WriteOptions.PartitionOverwriteMode -> "static")
  }

  /** The columns of `writeStream.clusterBy(...)` (Spark's option), as column paths. */
  def clusteringColumns(parameters: Map[String, String]): Option[Seq[Seq[String]]] =
    parameters.get(DataSourceUtils.CLUSTERING_COLUMNS_KEY).map { v =>
      DataSourceUtils.decodePartitioningColumns(v).map(c => Expressions.column(c).fieldNames.toSeq)
    }

  /** delta-spark's refusal of an output mode other than Append and Complete. */
  def unsupportedOutputMode(path: String, mode: OutputMode): InvalidWriteException =
    new InvalidWriteException("DELTA_UNSUPPORTED_OUTPUT_MODE", path,
      s"Data source deltalog does not support $mode output mode (table $path): use outputMode(\"append\") or " +
        "outputMode(\"complete\"); for upserts per micro-batch use foreachBatch with DeltaTable.merge.")
}
