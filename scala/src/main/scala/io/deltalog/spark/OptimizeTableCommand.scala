package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import io.deltalog.commands.{OptimizeCommand, OptimizeResult}

/**
 * `OPTIMIZE <table> [FULL] [WHERE <partition predicate>] [ZORDER BY (c, …)]` on a deltalog table (a catalog
 * table or a path): [[OptimizeCommand]]. Returns one row `(path, metrics)` with the columns of
 * delta-spark 4.4's result ([[ReorgTableCommand.schema]]).
 *
 * @param predicate the WHERE clause's text (parsed when the command runs)
 */
case class OptimizeTableCommand(target: TableTarget, predicate: Option[String], zOrderBy: Seq[String],
    full: Boolean = false)
    extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(ReorgTableCommand.schema)

  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "OPTIMIZE")
    val result = try {
      val parsed = predicate.map(spark.sessionState.sqlParser.parseExpression)
      new OptimizeCommand(spark.asInstanceOf[ClassicSession], location, parsed, zOrderBy, name, full = full).run()
    } finally DeltalogTable.refreshCaches(spark, location)
    Seq(OptimizeTableCommand.row(result, spark.sparkContext.defaultParallelism))
  }
}

object OptimizeTableCommand {
  private def numSize(files: Seq[io.deltalog.actions.AddFile]): Row = Row(files.size.toLong, files.map(_.size).sum)

  /**
   * The result row, as delta-spark 4.4 fills it: `numBins` bins, `numBatches` 1, `endTimeMs` 0,
   * `totalFilesSkipped` = considered - removed; Z-order statistics (strategy `all`, every candidate an
   * "other" input file, one output cube per bin) only with ZORDER BY; `deletionVectorStats` null when
   * no rewritten file had a deletion vector; `clusteringStats` only on a clustered table.
   */
  def row(r: OptimizeResult, parallelism: Int): Row = {
    val inputs = r.bins.flatten
    val zStats = if (r.zOrderBy.isEmpty) null else
      Row("all", Row(0L, 0L), numSize(inputs), 0L, numSize(r.removed), r.bins.size.toLong, null)
    val dvs = if (r.dvsRemoved == 0) null else Row(r.dvsRemoved.toLong, r.dvRowsRemoved)
    val numBins = if (r.removed.isEmpty) 0L else r.bins.size.toLong
    Row(r.tablePath, Row(r.added.size.toLong, r.removed.size.toLong, ReorgTableCommand.stats(r.added),
      ReorgTableCommand.stats(r.removed), (if (r.removed.isEmpty) 0 else r.partitionsOptimized).toLong, zStats,
      r.clusteringStats.map(c => Row(Row(c.inputZCubeFiles.toLong, c.inputZCubeBytes), Row(c.inputOtherFiles.toLong,
        c.inputOtherBytes), c.inputNumZCubes.toLong, Row(c.mergedFiles.toLong, c.mergedBytes),
        c.numOutputZCubes.toLong)).orNull,
      numBins, 1L, r.considered.toLong, (r.considered - r.removed.size).toLong, false, 0L, 0L, r.startTimeMs, 0L,
      parallelism.toLong, 0L, null, dvs, r.numTableColumns.toLong, r.numTableColumnsWithStats.toLong))
  }
}
