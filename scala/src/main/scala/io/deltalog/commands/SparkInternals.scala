// Lives under io/deltalog/commands (the write path owns it) but in a package below
// org.apache.spark.sql, the only place Spark's `private[sql]` Expression <-> Column bridge can be used.
package org.apache.spark.sql.deltalog

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.{Dataset => ClassicDataset, ExpressionUtils, SparkSession => ClassicSession}
import org.apache.spark.sql.types.StructType

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

  /**
   * The rows of `parts` (same schema) as one DataFrame whose Spark partitions are theirs, side by
   * side (an RDD union: Spark 4's partitioning-aware `Union` would zip children of equal
   * partitioning, e.g. two `coalesce(1)`, into one partition). OPTIMIZE writes one file per bin so.
   * A column is nullable when it is in any part: a partition column is a literal per bin, non-null
   * in a bin of `p=z` and null in the bin of the NULL partition, and the writer trusts the schema.
   */
  def unionKeepingPartitions(spark: ClassicSession, parts: Seq[DataFrame]): DataFrame = {
    val rdds = parts.map(_.asInstanceOf[ClassicDataset[_]].queryExecution.toRdd)
    val schemas = parts.map(_.schema)
    val schema = StructType(schemas.head.fields.zipWithIndex.map { case (f, i) =>
      f.copy(nullable = schemas.exists(_.fields(i).nullable))
    })
    spark.internalCreateDataFrame(spark.sparkContext.union(rdds), schema)
  }
}
