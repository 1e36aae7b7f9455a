// Lives with the streaming sink but in a package below org.apache.spark.sql, the only place Spark's
// `private[sql]` Dataset constructors can be used.
package org.apache.spark.sql.deltalog

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.classic.{Dataset => ClassicDataset}
import org.apache.spark.sql.execution.LogicalRDD
import org.apache.spark.sql.execution.streaming.runtime.StreamExecution

/** What the streaming sink needs of Spark's internals. */
object StreamingInternals {
  /** The local property holding the id of the streaming query a micro-batch belongs to. */
  val QueryIdKey: String = StreamExecution.QUERY_ID_KEY

  /**
   * A micro-batch's DataFrame as a batch DataFrame over the rows its incremental plan produces (the
   * plan, with its state-store operators, runs once, when the result is written). Planning the
   * micro-batch's logical plan again instead would run stateful operators without their state and
   * fail Spark's "streaming sources must be executed with writeStream.start()" check.
   */
  def microBatchAsBatch(data: DataFrame): DataFrame = {
    val ds = data.asInstanceOf[ClassicDataset[_]]
    val node = LogicalRDD.fromDataset(ds.queryExecution.toRdd, ds, isStreaming = false)
    ClassicDataset.ofRows(ds.sparkSession, node)
  }
}

/**
 * Spark's `private[sql]` marker of a V2 table with a V1 catalog entry to fall back to, made public:
 * `DataStreamWriter.toTable` starts a table of this kind on its provider's V1 streaming sink.
 */
trait V1FallbackTable extends org.apache.spark.sql.connector.catalog.V2TableWithV1Fallback
