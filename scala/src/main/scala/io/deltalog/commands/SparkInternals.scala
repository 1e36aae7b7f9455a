// Lives under io/deltalog/commands (the write path owns it) but in a package below
// org.apache.spark.sql, the only place Spark's `private[sql]` Expression <-> Column bridge can be used.
package org.apache.spark.sql.deltalog

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * Catalyst expressions as DataFrame columns (the write path's rule checks and identity values), and a
 * Hadoop configuration shipped to tasks.
 */
object SparkInternals {
  def column(e: Expression): Column = ExpressionUtils.column(e)
  def expression(c: Column): Expression = ExpressionUtils.expression(c)

  /** `conf` for tasks: a serializable function that returns it on an executor (Spark's `private[spark]` wrapper). */
  def hadoopConfForTasks(conf: Configuration): () => Configuration = {
    val wrapped = new org.apache.spark.util.SerializableConfiguration(conf)
    () => wrapped.value
  }
}
