package io.deltalog.api

import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.functions.expr
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.deltalog.commands.DeleteCommand

/**
 * py4j entry points of the row-level statements (`DeltaTable.delete`): one DataFrame row with
 * the statement's result (`num_affected_rows`, as the SQL statement returns it).
 */
object DmlApi {
  private val ResultSchema = StructType(Seq(StructField("num_affected_rows", LongType, nullable = false)))

  /** DELETE with a SQL condition (null: every row). */
  def delete(spark: SparkSession, path: String, condition: String): DataFrame =
    run(spark, path, Option(condition).map(expr))

  /** DELETE with a Column condition. */
  def deleteWhere(spark: SparkSession, path: String, condition: Column): DataFrame =
    run(spark, path, Option(condition))

  /**
   * Test hook: `sql` runs once, in the next DELETE, right before it commits (a competing commit
   * landing between the DELETE's read and its commit; see `DeleteCommand.setBeforeCommitHook`).
   */
  def runSqlBeforeNextDeleteCommit(spark: SparkSession, sql: String): Unit =
    DeleteCommand.setBeforeCommitHook(_ => spark.sql(sql).collect())

  private def run(spark: SparkSession, path: String, condition: Option[Column]): DataFrame = {
    val result = new DeleteCommand(spark.asInstanceOf[ClassicSession], path, condition).run()
    io.deltalog.spark.DeltalogTable.refreshCaches(spark, path)
    spark.createDataFrame(java.util.Collections.singletonList(Row(result.numDeletedRows)), ResultSchema)
  }
}
