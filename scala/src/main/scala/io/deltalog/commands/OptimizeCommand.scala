package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions.{lit, struct}
import org.apache.spark.sql.types.DataType
import org.slf4j.LoggerFactory

import io.deltalog.actions.AddFile
import io.deltalog.txn.Operation

/**
 * What an OPTIMIZE did (the facts of delta-spark's result row).
 *
 * @param version    the commit's version, -1 when nothing was committed (no bin to rewrite)
 * @param considered the files in the predicate's partitions
 * @param bins       the groups of files rewritten together (compaction: one output file each)
 * @param zOrderBy   the Z-order columns as written (empty for compaction)
 * @param clusteringStats delta-spark's `clusteringStats` (OPTIMIZE of a clustered table only)
 */
final case class OptimizeResult(
    version: Long,
    tablePath: String,
    added: Seq[AddFile],
    removed: Seq[AddFile],
    considered: Int,
    bins: Seq[Seq[AddFile]],
    zOrderBy: Seq[String],
    startTimeMs: Long,
    numTableColumns: Int,
    numTableColumnsWithStats: Int,
    clusteringStats: Option[ClusteringStats] = None) {
  def partitionsOptimized: Int = bins.map(_.head.partitionValues).distinct.size
  def dvsRemoved: Int = removed.count(_.deletionVector.isDefined)
  def dvRowsRemoved: Long = removed.flatMap(_.deletionVector).map(_.cardinality).sum
}

/**
 * `OPTIMIZE t [WHERE partition predicate] [ZORDER BY (c, …)]`: the small files (and files with many
 * deleted rows) of the predicate's partitions are compacted into files of about the target size
 * ([[OptimizeBins]]), or with ZORDER BY rewritten along the Z curve of the columns ([[ZOrder]]), in one
 * commit that changes no data: `dataChange = false` on every add and remove, operation `OPTIMIZE`
 * with delta-spark 4.4's parameters and metrics. Rows are rewritten without the rows their deletion
 * vectors delete and, under row tracking, keep their row ids and row commit versions
 * ([[RowLevelRewrite]] with `forceCopyOnWrite`). The transaction depends only on the files it
 * rewrites: concurrent appends never conflict with it, a concurrent removal of one of its files does.
 * Bins are written in parallel (one Spark task each, no shuffle for compaction). Allowed on
 * append-only tables. Without a bin to rewrite nothing is committed.
 *
 * @param predicate the WHERE clause as parsed (unresolved); only partition columns may be referenced
 * On a clustered table (liquid clustering) the files not yet clustered (every file with `full`) are
 * clustered by the table's clustering columns instead ([[OptimizeClustering]]).
 *
 * @param zOrderBy  the Z-order columns (data columns with statistics, see [[checkZOrderColumns]])
 * @param full      `OPTIMIZE … FULL`: re-cluster every file of a clustered table
 */
final class OptimizeCommand(
    spark: ClassicSession,
    path: String,
    predicate: Option[Expression],
    zOrderBy: Seq[String] = Nil,
    tableName: Option[String] = None,
    hadoopOptions: Map[String, String] = Map.empty,
    full: Boolean = false) {
  import RowChanges._

  def run(): OptimizeResult = {
    val startTimeMs = System.currentTimeMillis()
    val DmlSupport.Opened(hadoopConf, deltaLog, table, txn) =
      DmlSupport.open(spark, path, tableName, hadoopOptions, "OPTIMIZE", allowAppendOnly = true)
    val clustering = OptimizeClustering(txn.snapshot, predicate.map(_.sql), zOrderBy, full, table)
    val rw = new RowLevelRewrite(spark, txn, hadoopConf, table, "OPTIMIZE", forceCopyOnWrite = true)
    val zColumns = if (clustering.isClustering) clustering.zColumns(rw.schema)
      else OptimizeCommand.checkZOrderColumns(spark, zOrderBy, rw, table).map { case (n, dt) => (Seq(n), dt) }
    val cond = predicate.map { p =>
      val resolved = DmlSupport.resolveCondition(spark, SparkInternals.column(p), rw.schema, table, "OPTIMIZE")
      PartitionScope.checkPartitionOnly(resolved, rw, table, "OPTIMIZE")
      resolved
    }.filterNot(DmlSupport.alwaysTrue)
    // the snapshot's files, not txn.filterFiles: the transaction depends only on the files rewritten
    val all = txn.snapshot.allFiles.toVector
    val inScope = cond.map(e => PartitionScope.matchingPartitions(spark, all, e, rw)).getOrElse(all)
    val settings = OptimizeBins.settings(spark, rw.conf, table)
    val bins =
      if (clustering.isClustering) Seq(clustering.candidates(inScope)).filter(_.nonEmpty)
      else OptimizeBins.bins(inScope.filter(OptimizeBins.isCandidate(_, settings)), settings, zColumns.nonEmpty)
    val qualified = deltaLog.tablePath.getFileSystem(hadoopConf).makeQualified(deltaLog.tablePath).toString
    val (numColumns, withStats) = ReorgPurgeCommand.tableColumnCounts(rw)
    def clusteringStats(committed: Boolean) =
      if (clustering.isClustering) Some(clustering.stats(inScope, bins.flatten, committed)) else None
    val base = OptimizeResult(-1L, qualified, Nil, Nil, inScope.size, bins, zOrderBy, startTimeMs, numColumns, withStats,
      clusteringStats(committed = false))
    if (bins.isEmpty) {
      OptimizeCommand.log.info(s"Table $table: OPTIMIZE found no files to rewrite; nothing committed.")
      return base
    }
    val files = bins.flatten
    txn.readFilesOnly(files)
    val binOf = bins.zipWithIndex.flatMap { case (b, i) => b.map(f => rw.reader.fileKey(f) -> i) }.toMap
    // every row is kept: the rewrite only drops the rows the DVs already deleted
    val identity = struct(rw.schema.fieldNames.toSeq.map(n => WriteSchema.column(n).as(n)): _*)
    def changes(rows: DataFrame): DataFrame =
      rows.withColumn(ActionColumn, lit(Keep)).withColumn(NewValuesColumn, identity)
    def readRows(touched: Seq[AddFile]): DataFrame = {
      val grouped = touched.groupBy(f => binOf(rw.reader.fileKey(f))).toSeq.sortBy(_._1).map(_._2)
      OptimizeCommand.laidOut(spark, grouped, rw, zColumns, settings)
    }
    val zCubeId = java.util.UUID.randomUUID().toString
    val finishAdd: AddFile => AddFile =
      if (clustering.isClustering) (a: AddFile) => ClusteredTable.markClustered(a, clustering.columns, zCubeId)
      else (a: AddFile) => a
    val outcome = rw.commit(files.map(f => rw.Touched(f, 0L, 0L, None)), changes, withInserts = false,
      identityColumns = Nil, scanTimeMs = 0L,
      op = o => Operation.optimize(predicate.map(_.toString).toSeq, zOrderBy, clusterBy = clustering.columns,
          isFull = full)
        .withMetrics(ReorgPurgeCommand.metrics(o, o.removedFiles.count(_.deletionVector.isDefined))),
      beforeCommit = () => DeleteCommand.runBeforeCommitHook(path), dataChange = false, readRows = readRows,
      finishAdd = finishAdd)
    outcome match {
      case None => base
      case Some(o) => base.copy(version = o.version, added = o.addedFiles, removed = o.removedFiles,
        clusteringStats = clusteringStats(committed = true))
    }
  }
}

object OptimizeCommand {
  private val log = LoggerFactory.getLogger(classOf[OptimizeCommand])
  val CheckStatsConf = "spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled"

  /**
   * The rows of each bin in their own Spark partitions: compaction reads a bin in one task (one
   * output file, no shuffle); Z-order lays each bin out along the Z curve in `max(1, bytes /
   * maxFileSize)` partitions.
   */
  private def laidOut(spark: ClassicSession, bins: Seq[Seq[AddFile]], rw: RowLevelRewrite,
      zColumns: Seq[(Seq[String], DataType)],
      settings: OptimizeBins.Settings): DataFrame = {
    // only the table's columns (and row ids) cross the RDD union below: columns it does not need
    // (the file key, a UDF over each row's file path; the row index) cannot be pruned beyond it
    val reads = bins.map(b => rw.reader.read(b).drop(TouchedFiles.FileColumn, TouchedFiles.RowIndexColumn))
    val parts = if (zColumns.isEmpty) reads.map(_.coalesce(1)) else {
      val bounds = ZOrder.boundaries(reads, zColumns)
      val partitionNames = rw.schema.fieldNames.filter(n => rw.partitionCols.contains(n.toLowerCase(Locale.ROOT))).toSeq
      reads.zip(bins).zipWithIndex.map { case ((df, bin), i) =>
        val numFiles = math.max(1L, bin.map(_.size).sum / settings.maxFileSize).min(Int.MaxValue).toInt
        ZOrder.layout(df, zColumns, bounds.getOrElse(i, zColumns.map(_ => Array.empty[Double])), numFiles, partitionNames)
      }
    }
    SparkInternals.unionKeepingPartitions(spark, parts)
  }

  /**
   * The Z-order columns resolved against the table (name as in the schema, type), refused as
   * delta-spark refuses them: a column that does not exist, a partition column, a column without
   * statistics (unless `spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled` is false),
   * and (deltalog) a column of a type that has no order.
   */
  private[commands] def checkZOrderColumns(spark: SparkSession, names: Seq[String], rw: RowLevelRewrite,
      table: String): Seq[(String, DataType)] = {
    val resolved = names.map { n =>
      val field = rw.schema.fields.find(_.name.equalsIgnoreCase(n)).getOrElse(
        throw new InvalidWriteException("DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST", table,
          s"Table $table: Z-Ordering column $n does not exist in data schema (columns: " +
            s"${rw.schema.fieldNames.mkString(", ")}); OPTIMIZE changed nothing. Name a data column of the table."))
      if (rw.partitionCols.contains(field.name.toLowerCase(Locale.ROOT))) {
        throw new InvalidWriteException("DELTA_ZORDERING_ON_PARTITION_COLUMN", table,
          s"Table $table: $n is a partition column. Z-Ordering can only be performed on data columns; OPTIMIZE " +
            "changed nothing. Restrict partitions with WHERE instead.")
      }
      if (!ZOrder.rankable(field.dataType)) {
        throw new InvalidWriteException("DELTA_ZORDERING_ON_UNSUPPORTED_TYPE", table,
          s"Table $table: Z-Ordering column $n has type ${field.dataType.simpleString}, which has no order deltalog " +
            "can rank; OPTIMIZE changed nothing. Z-order by numeric, date, timestamp, string or binary columns.")
      }
      field.name -> field.dataType
    }
    val check = spark.conf.getOption(CheckStatsConf).forall(!_.trim.equalsIgnoreCase("false"))
    if (check && resolved.nonEmpty) {
      val data = org.apache.spark.sql.types.StructType(rw.schema.fields.filterNot(f =>
        rw.partitionCols.contains(f.name.toLowerCase(Locale.ROOT))))
      val physical = ColumnMappingWriter.physicalSchema(data, ColumnMappingWriter.enabled(rw.conf))
      val indexed = StatsSpec.forTable(data, physical, rw.conf, table).fields.collect {
        case l: LeafStatsNode => l.name
      }.toSet
      val physicalOf = data.fields.zip(physical.fields).map { case (l, p) => l.name -> p.name }.toMap
      val without = resolved.map(_._1).filterNot(n => indexed.contains(physicalOf(n)))
      if (without.nonEmpty) {
        throw new InvalidWriteException("DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS", table,
          s"Table $table: Z-Ordering on [${without.mkString(", ")}] will be ineffective, because we currently do not " +
            "collect stats for these columns. You can disable this check by setting\n SET " +
            s"$CheckStatsConf = false")
      }
    }
    resolved
  }
}
