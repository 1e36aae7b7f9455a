package io.deltalog.api

import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.functions.expr
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute

import io.deltalog.commands.{DeleteCommand, UpdateCommand}

/**
 * py4j entry points of the row-level statements (`DeltaTable.delete`, `update`, `merge`): one
 * DataFrame row with the statement's result, as the SQL statement returns it.
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
   * UPDATE: `keys` name target columns (or nested fields, `s.x`), `values` their new values; `condition`
   * null for every row.
   */
  def update(spark: SparkSession, path: String, condition: Column, keys: java.util.List[String],
      values: java.util.List[Column]): DataFrame = {
    val assignments = keys.asScala.toSeq.map(k => UnresolvedAttribute.quotedString(k).nameParts).zip(values.asScala.toSeq)
    val result = new UpdateCommand(spark.asInstanceOf[ClassicSession], path, assignments, Option(condition)).run()
    io.deltalog.spark.DeltalogTable.refreshCaches(spark, path)
    spark.createDataFrame(java.util.Collections.singletonList(Row(result.numUpdatedRows)), ResultSchema)
  }

  /** The builder `DeltaTable.merge` fills in (`alias`: the target's alias, null for none). */
  def merge(spark: SparkSession, path: String, source: DataFrame, alias: String, condition: Column): MergeBuilder =
    new MergeBuilder(spark, path, source, alias, condition)

  /**
   * Test hook: `sql` runs once, in the next DELETE, UPDATE or MERGE, right before it commits (a competing commit
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
