package io.deltalog.api

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.deltalog.commands.{MergeClause, MergeCommand}

/**
 * py4j side of `DeltaTable.merge(...)` (the Python `DeltaMergeBuilder` collects the clauses and
 * calls these once, in order, on `execute()`): conditions and values are Columns (None: no
 * condition), assignment keys target column names (`a`, `s.x`, optionally qualified by the
 * target's alias).
 */
final class MergeBuilder(spark: SparkSession, path: String, source: DataFrame, alias: String, condition: Column) {
  private val clauses = scala.collection.mutable.ArrayBuffer[MergeClause]()
  private var evolution = false

  private def key(k: String): Seq[String] = {
    val parts = UnresolvedAttribute.quotedString(k).nameParts
    if (parts.size > 1 && Option(alias).exists(_.equalsIgnoreCase(parts.head))) parts.tail else parts
  }
  private def pairs(keys: java.util.List[String], values: java.util.List[Column]): Seq[(Seq[String], Column)] =
    keys.asScala.toSeq.map(key).zip(values.asScala.toSeq)

  def whenMatchedUpdate(cond: Column, keys: java.util.List[String], values: java.util.List[Column]): MergeBuilder =
    add(MergeClause.matchedUpdate(Option(cond), pairs(keys, values)))
  def whenMatchedUpdateAll(cond: Column): MergeBuilder = add(MergeClause.matchedUpdateAll(Option(cond)))
  def whenMatchedDelete(cond: Column): MergeBuilder = add(MergeClause.matchedDelete(Option(cond)))
  def whenNotMatchedInsert(cond: Column, keys: java.util.List[String], values: java.util.List[Column]): MergeBuilder =
    add(MergeClause.notMatchedInsert(Option(cond), pairs(keys, values)))
  def whenNotMatchedInsertAll(cond: Column): MergeBuilder = add(MergeClause.notMatchedInsertAll(Option(cond)))
  def whenNotMatchedBySourceUpdate(cond: Column, keys: java.util.List[String],
      values: java.util.List[Column]): MergeBuilder =
    add(MergeClause.notMatchedBySourceUpdate(Option(cond), pairs(keys, values)))
  def whenNotMatchedBySourceDelete(cond: Column): MergeBuilder = add(MergeClause.notMatchedBySourceDelete(Option(cond)))
  def withSchemaEvolution(): MergeBuilder = { evolution = true; this }

  private def add(c: MergeClause): MergeBuilder = { clauses += c; this }

  /** Runs the MERGE; one row: num_affected_rows, num_updated_rows, num_deleted_rows, num_inserted_rows. */
  def execute(): DataFrame = {
    val r = new MergeCommand(spark.asInstanceOf[ClassicSession], path, source, Option(alias), condition,
      clauses.toSeq, evolution).run()
    io.deltalog.spark.DeltalogTable.refreshCaches(spark, path)
    spark.createDataFrame(java.util.Collections.singletonList(
      Row(r.numAffected, r.numUpdated, r.numDeleted, r.numInserted)), MergeBuilder.ResultSchema)
  }
}

object MergeBuilder {
  val ResultSchema: StructType = StructType(Seq("num_affected_rows", "num_updated_rows", "num_deleted_rows",
    "num_inserted_rows").map(n => StructField(n, LongType, nullable = false)))
}
