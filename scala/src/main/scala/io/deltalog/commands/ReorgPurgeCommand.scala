package io.deltalog.commands

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions.{lit, struct}
import org.apache.spark.sql.types.{StructField, StructType}
import org.slf4j.LoggerFactory

import io.deltalog.actions.AddFile
import io.deltalog.log.DeltaLog
import io.deltalog.txn.Operation

/**
 * What a `REORG TABLE … APPLY (PURGE)` did (the facts of delta-spark's OPTIMIZE-style result row).
 *
 * @param version             the commit's version, -1 when nothing was committed (no file had a DV)
 * @param tablePath           the table's root as a qualified URI (`file:/data/t`)
 * @param considered          files in the predicate's partitions
 * @param dvRowsRemoved       rows the purged deletion vectors marked deleted
 */
final case class ReorgPurgeResult(
    version: Long,
    tablePath: String,
    added: Seq[AddFile],
    removed: Seq[AddFile],
    considered: Int,
    dvRowsRemoved: Long,
    startTimeMs: Long,
    numTableColumns: Int,
    numTableColumnsWithStats: Int) {
  def partitionsOptimized: Int = removed.map(_.partitionValues).distinct.size
}

/**
 * `REORG TABLE t [WHERE partition predicate] APPLY (PURGE)`: every data file (in the predicate's
 * partitions) that has a deletion vector (with [[ReorgMode.RewriteTypeWidening]]: that stores a
 * column with an older type) is rewritten without its deleted rows and removed, in one
 * commit that changes no data (`dataChange = false`; operation `REORG`, OPTIMIZE's metrics, as
 * delta-spark 4.4). Files are rewritten copy-on-write even when the table has deletion vectors
 * enabled ([[RowLevelRewrite]] with `forceCopyOnWrite`); under row tracking rows keep their row ids
 * and row commit versions. Allowed on append-only tables (nothing is deleted). Without a file to
 * purge nothing is committed.
 *
 * @param predicate the WHERE clause as parsed (unresolved); only partition columns may be referenced
 */
final class ReorgPurgeCommand(
    spark: ClassicSession,
    path: String,
    predicate: Option[Expression],
    tableName: Option[String] = None,
    hadoopOptions: Map[String, String] = Map.empty,
    mode: ReorgMode = ReorgMode.Purge) {
  import RowChanges._

  def run(): ReorgPurgeResult = {
    val startTimeMs = System.currentTimeMillis()
    val DmlSupport.Opened(hadoopConf, deltaLog, table, txn) =
      DmlSupport.open(spark, path, tableName, hadoopOptions, "REORG", allowAppendOnly = true)
    val rw = new RowLevelRewrite(spark, txn, hadoopConf, table, "REORG", forceCopyOnWrite = true)
    val cond = predicate.map { p =>
      val resolved = DmlSupport.resolveCondition(spark, SparkInternals.column(p), rw.schema, table, "REORG")
      PartitionScope.checkPartitionOnly(resolved, rw, table, "REORG")
      resolved
    }.filterNot(DmlSupport.alwaysTrue)
    val inScope = cond match {
      case None => txn.filterFiles()
      case Some(e) => PartitionScope.matchingPartitions(spark, txn.filterFiles(DmlSupport.partitionPredicates(e, rw.partitionCols)), e, rw)
    }
    val withDvs = mode match {
      case ReorgMode.Purge => inScope.filter(_.deletionVector.isDefined)
      case ReorgMode.RewriteTypeWidening =>
        val physical = ColumnMappingWriter.physicalSchema(rw.schema, ColumnMappingWriter.enabled(rw.conf))
        ParquetFileTypes.filesWithOtherTypes(spark, deltaLog.tablePath, hadoopConf, inScope, physical)
    }
    val qualified = deltaLog.tablePath.getFileSystem(hadoopConf).makeQualified(deltaLog.tablePath).toString
    val (numColumns, withStats) = ReorgPurgeCommand.tableColumnCounts(rw)
    val base = ReorgPurgeResult(-1L, qualified, Nil, Nil, inScope.size, 0L, startTimeMs, numColumns, withStats)
    if (withDvs.isEmpty) {
      ReorgPurgeCommand.log.info(s"Table $table: REORG ($mode) found no file to rewrite; nothing committed.")
      return base
    }
    val dvRows = withDvs.flatMap(_.deletionVector).map(_.cardinality).sum
    // every row is kept: the rewrite only drops the rows the DVs already deleted
    val identity = struct(rw.schema.fieldNames.toSeq.map(n => WriteSchema.column(n).as(n)): _*)
    def changes(rows: DataFrame): DataFrame =
      rows.withColumn(ActionColumn, lit(Keep)).withColumn(NewValuesColumn, identity)
    val predicateText = predicate.map(_.toString).toSeq
    val outcome = rw.commit(withDvs.map(f => rw.Touched(f, 0L, 0L, None)), changes, withInserts = false,
      identityColumns = Nil, scanTimeMs = 0L,
      op = o => Operation.reorgPurge(predicateText)
        .withMetrics(ReorgPurgeCommand.metrics(o, withDvs.count(_.deletionVector.isDefined))),
      beforeCommit = () => DeleteCommand.runBeforeCommitHook(path), dataChange = false)
    outcome match {
      case None => base
      case Some(o) => base.copy(version = o.version, added = o.addedFiles, removed = o.removedFiles,
        dvRowsRemoved = dvRows)
    }
  }
}

object ReorgPurgeCommand {
  private val log = LoggerFactory.getLogger(classOf[ReorgPurgeCommand])

  private def leafCount(t: StructType): Int = t.fields.map {
    case StructField(_, s: StructType, _, _) => leafCount(s)
    case _ => 1
  }.sum

  /** The result row's `numTableColumns` and `numTableColumnsWithStats` (OPTIMIZE and REORG). */
  private[commands] def tableColumnCounts(rw: RowLevelRewrite): (Int, Int) = {
    val numColumns = leafCount(rw.schema)
    val indexed = rw.conf.get(StatsSpec.NumIndexedColsKey).flatMap(v => scala.util.Try(v.trim.toInt).toOption)
      .getOrElse(StatsSpec.DefaultNumIndexedCols)
    (numColumns, if (indexed < 0) numColumns else math.min(indexed, numColumns))
  }

  /** `commitInfo.operationMetrics` of a REORG PURGE under delta-spark 4.4's names (OPTIMIZE's). */
  private[commands] def metrics(o: RowLevelRewrite#Outcome, dvsRemoved: Int): Map[String, String] = {
    val sizes = o.addedFiles.map(_.size).sorted
    def pct(p: Double): Long = if (sizes.isEmpty) 0L else sizes(math.min(sizes.size - 1, (p * sizes.size).toInt))
    Map(
      "numRemovedFiles" -> o.removedFiles.size.toLong,
      "numRemovedBytes" -> o.removedFiles.map(_.size).sum,
      "p25FileSize" -> pct(0.25),
      "numDeletionVectorsRemoved" -> dvsRemoved.toLong,
      "minFileSize" -> sizes.headOption.getOrElse(0L),
      "p75FileSize" -> pct(0.75),
      "p50FileSize" -> pct(0.5),
      "numAddedBytes" -> sizes.sum,
      "numAddedFiles" -> sizes.size.toLong,
      "maxFileSize" -> sizes.lastOption.getOrElse(0L)).map { case (k, v) => k -> v.toString }
  }
}

/** Which files a [[ReorgPurgeCommand]] rewrites (delta-spark's reorg modes; both log `REORG`, `applyPurge`). */
sealed trait ReorgMode

object ReorgMode {
  /** `REORG TABLE … APPLY (PURGE)`: the files with a deletion vector. */
  case object Purge extends ReorgMode

  /**
   * DROP FEATURE typeWidening's rewrite: the files storing a column with another type than the
   * table's ([[ParquetFileTypes]]), so that readers without type widening can read every file.
   */
  case object RewriteTypeWidening extends ReorgMode
}
