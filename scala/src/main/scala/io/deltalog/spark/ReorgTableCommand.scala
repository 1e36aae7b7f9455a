package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

import io.deltalog.actions.AddFile
import io.deltalog.commands.{ReorgPurgeCommand, ReorgPurgeResult}

/**
 * `REORG TABLE <table> [WHERE <partition predicate>] APPLY (PURGE)` on a deltalog table (a catalog
 * table or a path): [[ReorgPurgeCommand]]. Returns one row `(path, metrics)` with the columns of
 * delta-spark 4.4's result (its OPTIMIZE metrics struct, [[ReorgTableCommand.schema]]); the
 * z-order, clustering and auto-compaction parts are always null, as for a purge there.
 *
 * @param predicate the WHERE clause's text (parsed when the command runs, so that the analyzer
 *                  does not try to resolve its columns against nothing)
 */
case class ReorgTableCommand(target: TableTarget, predicate: Option[String]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(ReorgTableCommand.schema)

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "REORG TABLE")
    val result = try {
      val parsed = predicate.map(spark.sessionState.sqlParser.parseExpression)
      new ReorgPurgeCommand(spark.asInstanceOf[ClassicSession], location, parsed, name).run()
    } finally DeltalogTable.refreshCaches(spark, location)
    Seq(ReorgTableCommand.row(result, spark.sparkContext.defaultParallelism))
  }
}

object ReorgTableCommand {
  private def long(name: String, nullable: Boolean = false) = StructField(name, LongType, nullable)

  private val fileStats = StructType(Seq(long("min", nullable = true), long("max", nullable = true),
    StructField("avg", DoubleType, nullable = false), long("totalFiles"), long("totalSize")))
  private def numSize(num: String) = StructType(Seq(long(num), long("size")))
  private val zOrderStats = StructType(Seq(StructField("strategyName", StringType),
    StructField("inputCubeFiles", numSize("num")), StructField("inputOtherFiles", numSize("num")),
    long("inputNumCubes"), StructField("mergedFiles", numSize("num")), long("numOutputCubes"),
    long("mergedNumCubes", nullable = true)))
  private val clusteringStats = StructType(Seq(StructField("inputZCubeFiles", numSize("numFiles")),
    StructField("inputOtherFiles", numSize("numFiles")), long("inputNumZCubes"),
    StructField("mergedFiles", numSize("numFiles")), long("numOutputZCubes")))
  private val parallelismStats = StructType(Seq("maxClusterActiveParallelism", "minClusterActiveParallelism",
    "maxSessionActiveParallelism", "minSessionActiveParallelism").map(long(_, nullable = true)))
  private val dvStats = StructType(Seq(long("numDeletionVectorsRemoved"), long("numDeletionVectorRowsRemoved")))

  /** delta-spark 4.4's OPTIMIZE / REORG metrics struct (names, order, types and nullability). */
  val metricsType: StructType = StructType(Seq(
    long("numFilesAdded"), long("numFilesRemoved"),
    StructField("filesAdded", fileStats), StructField("filesRemoved", fileStats),
    long("partitionsOptimized"), StructField("zOrderStats", zOrderStats),
    StructField("clusteringStats", clusteringStats), long("numBins"), long("numBatches"),
    long("totalConsideredFiles"), long("totalFilesSkipped"),
    StructField("preserveInsertionOrder", BooleanType, nullable = false),
    long("numFilesSkippedToReduceWriteAmplification"), long("numBytesSkippedToReduceWriteAmplification"),
    long("startTimeMs"), long("endTimeMs"), long("totalClusterParallelism"), long("totalScheduledTasks"),
    StructField("autoCompactParallelismStats", parallelismStats), StructField("deletionVectorStats", dvStats),
    long("numTableColumns"), long("numTableColumnsWithStats")))

  val schema: StructType = StructType(Seq(StructField("path", StringType), StructField("metrics", metricsType)))

  private[spark] def stats(files: Seq[AddFile]): Row = {
    val sizes = files.map(_.size)
    Row(sizes.reduceOption(_ min _).map(Long.box).orNull, sizes.reduceOption(_ max _).map(Long.box).orNull,
      if (sizes.isEmpty) 0.0 else sizes.sum.toDouble / sizes.size, sizes.size.toLong, sizes.sum)
  }

  /**
   * The result row. As in delta-spark 4.4: `numBins` counts the partitions rewritten, `numBatches`
   * is 1, `endTimeMs` 0 and `deletionVectorStats` null when no deletion vector was purged.
   */
  def row(r: ReorgPurgeResult, parallelism: Int): Row = {
    val dvs = if (r.removed.isEmpty) null else Row(r.removed.size.toLong, r.dvRowsRemoved)
    Row(r.tablePath, Row(r.added.size.toLong, r.removed.size.toLong, stats(r.added), stats(r.removed),
      r.partitionsOptimized.toLong, null, null, r.partitionsOptimized.toLong, 1L, r.considered.toLong,
      (r.considered - r.removed.size).toLong, false, 0L, 0L, r.startTimeMs, 0L, parallelism.toLong, 0L, null, dvs,
      r.numTableColumns.toLong, r.numTableColumnsWithStats.toLong))
  }
}
