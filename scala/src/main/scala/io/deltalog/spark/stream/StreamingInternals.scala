// Lives with the streaming source and sink but in a package below org.apache.spark.sql, the only
// place Spark's `private[sql]` Dataset constructors, V1 streaming relation and DataSource can be used.
package org.apache.spark.sql.deltalog

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.classic.{Dataset => ClassicDataset, SparkSession => ClassicSession}
import org.apache.spark.sql.execution.LogicalRDD
import org.apache.spark.sql.execution.datasources.DataSource
import org.apache.spark.sql.execution.streaming.runtime.{StreamExecution, StreamingRelation}

/** What deltalog's streaming source and sink need of Spark's internals. */
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

  /**
   * Spark's V1 streaming relation over a data source class, as `readStream.format(...)` builds it:
   * replaces `v2` (a table without V2 streaming read) keeping its output attributes and source name.
   */
  def v1StreamingRelation(session: SparkSession, className: String, options: Map[String, String],
      catalogTable: Option[CatalogTable], v2: StreamingRelationV2): LogicalPlan = {
    val ds = DataSource(session.asInstanceOf[ClassicSession], className = className, options = options,
      catalogTable = catalogTable)
    StreamingRelation(ds, v2.sourceName, v2.output, v2.sourceIdentifyingName)
  }
}
