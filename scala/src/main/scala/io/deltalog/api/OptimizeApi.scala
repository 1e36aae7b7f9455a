package io.deltalog.api

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.commands.OptimizeCommand
import io.deltalog.spark.{DeltalogTable, OptimizeTableCommand, ReorgTableCommand}

/**
 * py4j entry point of `DeltaTable.optimize()` (`DeltaOptimizeBuilder.executeCompaction` /
 * `executeZOrderBy`): one DataFrame row `(path, metrics)`, as `OPTIMIZE` in SQL returns it.
 */
object OptimizeApi {
  /**
   * OPTIMIZE the table at `path`: `partitionFilter` a SQL predicate on partition columns (null: every
   * partition), `zOrderBy` the Z-order columns (empty: compaction).
   */
  def optimize(spark: SparkSession, path: String, partitionFilter: String,
      zOrderBy: java.util.List[String]): DataFrame = {
    val predicate = Option(partitionFilter).map(spark.sessionState.sqlParser.parseExpression)
    val result = try {
      new OptimizeCommand(spark.asInstanceOf[ClassicSession], path, predicate, zOrderBy.asScala.toSeq).run()
    } finally DeltalogTable.refreshCaches(spark, path)
    val row = OptimizeTableCommand.row(result, spark.sparkContext.defaultParallelism)
    spark.createDataFrame(java.util.Collections.singletonList(row), ReorgTableCommand.schema)
  }
}
