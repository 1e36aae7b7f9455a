// Below org.apache.spark.sql: Spark's V1 streaming relation and DataSource are internal to Spark SQL.
package org.apache.spark.sql.deltalog

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.datasources.DataSource
import org.apache.spark.sql.execution.streaming.runtime.StreamingRelation

/** Spark's V1 streaming relation over a data source class, as `readStream.format(...)` builds it. */
object SparkStreamingInternals {
  /** Replaces `v2` (a table without V2 streaming read) keeping its output attributes and source name. */
  def v1StreamingRelation(session: SparkSession, className: String, options: Map[String, String],
      catalogTable: Option[CatalogTable], v2: StreamingRelationV2): LogicalPlan = {
    val ds = DataSource(session.asInstanceOf[ClassicSession], className = className, options = options,
      catalogTable = catalogTable)
    StreamingRelation(ds, v2.sourceName, v2.output, v2.sourceIdentifyingName)
  }
}
