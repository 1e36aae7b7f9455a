package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.{IntegerType, StringType, StructType}
import org.apache.spark.storage.StorageLevel

import io.deltalog.actions._
import io.deltalog.dv.RoaringBitmapArray
import io.deltalog.protocol.MetadataView
import io.deltalog.txn.{OptimisticTransaction, Operation, RowTracking}

/**
 * The two passes UPDATE and MERGE share once they can say, for the rows of some data files, what
 * happens to each ([[RowChanges]]):
 *
 *  1. [[findTouched]]: the statement's changes over the candidate files, reduced to the files that
 *     hold a changed row (with the rows' physical indexes in deletion-vector mode) and row counts.
 *  2. [[commit]]: the changes over the touched files only, written: copy-on-write rewrites each
 *     touched file's surviving rows (updated ones with their new values) into new files and removes
 *     it; with deletion vectors the changed rows are marked in a DV (merged with the file's old one)
 *     and only updated and inserted rows are written. Change data (`delete`, `update_preimage`,
 *     `update_postimage`, `insert`) goes to `_change_data/` when the table has the change data feed
 *     on. Under row tracking updated rows keep their row id and get the commit's version.
 *
 * Rows written are checked against the table's rules (NOT NULL, CHECK, invariants, generated
 * columns; [[WriteRules.checkAll]]). Everything is one transaction; files written by a failed
 * statement are deleted.
 *
 * @param forceCopyOnWrite rewrite touched files (copy-on-write) even when the table has deletion
 *                         vectors enabled (REORG ... APPLY (PURGE), which must leave no DV behind)
 * @param readAs           the metadata the touched files are read with when it is not the metadata
 *                         written (`evolved`): DROP FEATURE columnMapping reads the files by their
 *                         physical names and writes them under the logical names
 */
private[commands] object RowLevelRewrite {
  /** Rows of pass 1 kept for pass 2 that one write task writes (deletion-vector UPDATE). */
  val RowsPerWriteTask = 1000000L
}

private[commands] final class RowLevelRewrite(
    spark: ClassicSession,
    val txn: OptimisticTransaction,
    hadoopConf: Configuration,
    val table: String,
    statement: String,
    evolved: Option[Metadata] = None,
    forceCopyOnWrite: Boolean = false,
    readAs: Option[Metadata] = None) {
  import RowChanges._
  import RowLevelRewrite.RowsPerWriteTask

  /** The table's metadata after the statement (MERGE schema evolution: `evolved`, committed with it). */
  val meta: Metadata = evolved.getOrElse(txn.metadata)
  val conf: Map[String, String] = meta.configuration
  val schema: StructType = WriteIntoDeltalog.parseSchema(meta.schemaString)
  val partitionCols: Set[String] = meta.partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
  val dvMode: Boolean = !forceCopyOnWrite && DmlSupport.deletionVectorsOn(txn)
  val cdfOn: Boolean = MetadataView.boolValue(WriteIntoDeltalog.CdfKey, conf.get(WriteIntoDeltalog.CdfKey))
  val rowIds: Option[TouchedFiles.RowIds] = DmlSupport.rowIdColumns(txn, table, statement)
  private val readMeta: Metadata = readAs.getOrElse(meta)
  val reader = new TouchedFiles(spark, txn, WriteIntoDeltalog.parseSchema(readMeta.schemaString),
    readMeta.partitionColumns, readMeta.configuration, rowIds)
  /** Logical name (lower case) → physical name of each top-level column. */
  val physicalNames: Map[String, String] =
    schema.fields.zip(ColumnMappingWriter.physicalSchema(schema, ColumnMappingWriter.enabled(conf)).fields)
      .map { case (l, p) => l.name.toLowerCase(Locale.ROOT) -> p.name }.toMap

  /**
   * A file holding changed rows: its rows updated and deleted (of which by MERGE's not-matched-by-source
   * clauses), the changed rows (DV mode) merged with its old DV.
   */
  final case class Touched(file: AddFile, updated: Long, deleted: Long, bitmap: Option[RoaringBitmapArray],
      updatedBySource: Long = 0, deletedBySource: Long = 0, flagged: Long = 0)

  /**
   * Pass 1: `changes` over the rows of `candidates`, reduced to the files with a row whose action
   * is not Keep (or, with `alsoMatched`, a row the column `alsoMatched` marks: MERGE's matched
   * rows, whose files a not-matched clause needs so that matched source rows are not inserted).
   * Rows `flagged` are counted per file ([[Touched.flagged]]; MERGE's multiple matches).
   */
  def findTouched(candidates: Seq[AddFile], changes: DataFrame => DataFrame,
      alsoMatched: Option[Column] = None, flagged: Option[Column] = None, keepChanged: Boolean = false): Seq[Touched] = {
    if (candidates.isEmpty) return Nil
    val byKey = candidates.map(f => reader.fileKey(f) -> f).toMap
    val action = col(ActionColumn)
    val rows = changes(reader.read(candidates))
    val changed = action === Update || action === Delete
    val relevant0 = rows.filter(Seq(Some(changed), alsoMatched, flagged).flatten.reduce(_ || _))
    // deletion vectors: pass 2 writes only the changed rows, which pass 1 has in hand; kept (memory,
    // spilling to disk) so that pass 2 does not scan the touched files again
    val relevant = if (dvMode && keepChanged) {
      val kept = relevant0.persist(StorageLevel.MEMORY_AND_DISK)
      changedRows = Some(kept)
      kept
    } else relevant0
    val file = col(TouchedFiles.FileColumn)
    val bySource = if (rows.columns.contains(BySourceColumn)) col(BySourceColumn) else lit(false)
    val flag = flagged.getOrElse(lit(false))
    if (!dvMode) {
      def count(c: Column) = sum(when(c, 1L).otherwise(0L))
      relevant.groupBy(file).agg(count(action === Update), count(action === Delete),
        count(action === Update && bySource), count(action === Delete && bySource), count(flag)).collect().toSeq
        .map(r => Touched(byKey(r.getString(0)), r.getLong(1), r.getLong(2), None, r.getLong(3), r.getLong(4), r.getLong(5)))
    } else {
      // one pass, no shuffle: each task builds per file the changed rows' bitmap and the counts of
      // its rows; the driver unions the parts of a file that several tasks read
      val parts = relevant.select(file, col(TouchedFiles.RowIndexColumn), action, bySource, flag).rdd
        .mapPartitions { it =>
          val acc = scala.collection.mutable.LinkedHashMap[String, (scala.collection.mutable.ArrayBuffer[Long], Array[Long])]()
          it.foreach { r =>
            val (indexes, c) = acc.getOrElseUpdate(r.getString(0), (scala.collection.mutable.ArrayBuffer[Long](), new Array[Long](5)))
            val a = r.getInt(2)
            if (a == Update || a == Delete) indexes += r.getLong(1)
            if (a == Update) { c(0) += 1; if (r.getBoolean(3)) c(2) += 1 }
            if (a == Delete) { c(1) += 1; if (r.getBoolean(3)) c(3) += 1 }
            if (r.getBoolean(4)) c(4) += 1
          }
          acc.iterator.map { case (k, (indexes, c)) =>
            (k, if (indexes.isEmpty) None else Some(RoaringBitmapArray.fromIterator(indexes.iterator).serialize), c)
          }
        }.collect().toSeq
      val perFile = parts.groupBy(_._1).toSeq.map { case (key, ps) =>
        val bitmap = ps.flatMap(_._2).map(RoaringBitmapArray.deserialize).reduceOption(_ union _)
        val c = ps.map(_._3).transpose.map(_.sum)
        (key, (bitmap, (c(0), c(1), c(2), c(3), c(4))))
      }
      val old = reader.existingDeletionVectors(perFile.map(x => byKey(x._1)))
      perFile.map { case (key, (bitmap, (u, d, ub, db, fl))) =>
        val merged = bitmap.map(b => old.get(key).map(_.union(b)).getOrElse(b))
        Touched(byKey(key), u, d, merged, ub, db, fl)
      }
    }
  }

  /** [[findTouched]]'s changed rows, kept for [[commit]] (`keepChanged` in deletion-vector mode). */
  private var changedRows: Option[DataFrame] = None

  /** Drops the rows [[findTouched]] kept, if any. */
  def release(): Unit = {
    changedRows.foreach(_.unpersist(blocking = false))
    changedRows = None
  }

  /** The result of [[commit]]: what was written and removed, for the statement's metrics. */
  final case class Outcome(
      version: Long,
      numUpdated: Long,
      numDeleted: Long,
      numInserted: Long,
      numCopied: Long,
      addedFiles: Seq[AddFile],
      removedFiles: Seq[AddFile],
      numChangeFiles: Int,
      dvAdded: Int,
      dvRemoved: Int,
      dvUpdated: Int,
      scanTimeMs: Long,
      rewriteTimeMs: Long)

  /**
   * Pass 2 and the commit: `changes` over the touched files' rows (plus MERGE's inserted rows,
   * which `changes` returns with action Insert), written as described in the class doc.
   *
   * @param identityColumns identity columns whose values inserted rows were given by the statement
   *                        (their high water marks are raised)
   * @param op              the operation, metrics filled in by `metrics` from the outcome
   * @param beforeCommit    test hook run right before the commit
   * @param dataChange      false for a rewrite that changes no data (REORG ... APPLY (PURGE)): every
   *                        touched file is rewritten whether or not a row of it changed, and the
   *                        `add` / `remove` actions say `dataChange = false`
   * @param readRows        how the touched files' rows are read (null: [[TouchedFiles.read]]); OPTIMIZE
   *                        lays them out (one Spark partition per output file) without changing them
   * @param finishAdd       applied to each written file's `add` (OPTIMIZE on a clustered table marks them clustered)
   * @return None when nothing changed (nothing committed)
   */
  def commit(touched: Seq[Touched], changes: DataFrame => DataFrame, withInserts: Boolean,
      identityColumns: Seq[String], scanTimeMs: Long,
      op: Outcome => Operation, beforeCommit: () => Unit = () => (),
      dataChange: Boolean = true, readRows: Seq[AddFile] => DataFrame = null,
      finishAdd: AddFile => AddFile = identity, setTxn: () => Option[Action] = () => None): Option[Outcome] = {
    val rewriteStart = System.nanoTime()
    val deltaLog = txn.deltaLog
    val flag = DataFileWriter.CdcFlag
    val ct = ReplaceWhere.ChangeTypeColumnName
    val numRecords = touched.map(t => t.file -> RowTracking.numRecords(t.file)).toMap
    if (dvMode) touched.foreach { t =>
      if (numRecords(t.file).isEmpty) {
        throw new InvalidWriteException("DELTA_DELETION_VECTOR_MISSING_NUM_RECORDS", table,
          s"Table $table: file ${t.file.path} has no numRecords statistics, which a file with a deletion vector " +
            s"must have; the $statement changed nothing. Disable deletion vectors (delta.enableDeletionVectors = false) " +
            "to rewrite such files instead, or recompute the file's statistics.")
      }
    }
    // DV mode: a file whose every row changed is removed whole
    // files read only because a MERGE source row matched one of their rows (no row changed): not rewritten
    val (changedFiles, unchanged) = touched.partition(t => !dataChange || t.updated + t.deleted > 0)
    val (wholeDv, partialDv) = changedFiles.filter(_.bitmap.isDefined)
      .partition(t => t.bitmap.exists(b => numRecords(t.file).contains(b.cardinality)))
    val writeCdc = cdfOn
    val extra = rowIds.toSeq.flatMap(r => Seq(r.idColumn, r.versionColumn))
    val writer = new DataFileWriter(spark, deltaLog.tablePath.toString, hadoopConf, schema, meta.partitionColumns,
      conf, Map.empty, identityColumns, table, if (writeCdc) Some(flag) else None, extra)

    val toRead = touched.map(_.file)
    // deletion vectors without change data: a statement that only deletes writes no rows (pass 2 skipped)
    val needWrite = withInserts || (if (dvMode) writeCdc || changedFiles.exists(_.updated > 0) else changedFiles.nonEmpty)
    val written: Seq[WrittenFile] = if (!needWrite) Nil else {
      // pass 1's kept rows are few next to the partitions of the scan they came from: one write task
      // (and file) per RowsPerWriteTask of them, not one per scan partition
      val rows = changedRows.filter(_ => dvMode && readRows == null && !withInserts)
        .map(_.coalesce(math.max(1L, (changedFiles.map(_.updated).sum + RowsPerWriteTask - 1) / RowsPerWriteTask)
          .min(Int.MaxValue).toInt))
        .getOrElse(changes(Option(readRows).getOrElse(reader.read _)(toRead)))
      writer.write(if (dataChange) output(rows, writeCdc, unchanged.map(t => reader.fileKey(t.file)).toSet)
        else kept(rows))
    }
    var dvFile: Option[Path] = None
    try {
      val now = System.currentTimeMillis()
      val rootPrefix = deltaLog.tablePath.toString.stripSuffix("/") + "/"
      def rel(p: String) = PathCodec.encodePath(if (p.startsWith(rootPrefix)) p.substring(rootPrefix.length) else p)
      def pv(f: WrittenFile) = f.partitionValues - flag
      val dataFiles = written.filterNot(writer.isChangeData)
      val adds = dataFiles.map { f =>
        finishAdd(AddFile(path = rel(f.path), partitionValues = pv(f), size = f.size, modificationTime = f.modificationTime,
          dataChange = dataChange, stats = Some(f.stats)))
      }
      val cdcs = written.filter(writer.isChangeData).map(f => AddCDCFile(path = rel(f.path), partitionValues = pv(f),
        size = f.size))
      val (dvAdds, dvRemoves) = if (!dvMode || partialDv.isEmpty) (Nil, Nil) else {
        val (file, descriptors) = DeletionVectorWriter.write(deltaLog.tablePath, hadoopConf, partialDv.map(_.bitmap.get))
        dvFile = Some(file)
        partialDv.zip(descriptors).map { case (t, d) =>
          (t.file.copy(deletionVector = Some(d), dataChange = true, stats = t.file.stats.map(DmlSupport.looseBounds)),
            t.file.remove(now))
        }.unzip
      }
      val removedWhole = if (dvMode) wholeDv.map(_.file) else changedFiles.map(_.file)
      val removes = removedWhole.map(_.remove(now, dataChange)) ++ dvRemoves
      val numUpdated = touched.map(_.updated).sum
      val numDeleted = touched.map(_.deleted).sum
      val numDataRows = dataFiles.map(_.numRecords).sum
      // rows written = copied (CoW) + updated + inserted
      val numInserted = if (!withInserts) 0L else {
        val copied = if (dvMode) 0L else changedFiles.map(_.file).map(f => RowTracking.numRecords(f).getOrElse(0L) -
          f.deletionVector.map(_.cardinality).getOrElse(0L)).sum - numUpdated - numDeleted
        numDataRows - copied - numUpdated
      }
      val numCopied = numDataRows - numUpdated - numInserted
      val outcome = Outcome(-1L, numUpdated, numDeleted, numInserted, numCopied, adds, removedWhole,
        cdcs.size, partialDv.count(_.file.deletionVector.isEmpty), wholeDv.count(_.file.deletionVector.isDefined),
        partialDv.count(_.file.deletionVector.isDefined), scanTimeMs, (System.nanoTime() - rewriteStart) / 1000000L)
      val actions: Seq[Action] = removes ++ dvAdds ++ adds ++ cdcs
      val newMetadata = evolved
      if (actions.isEmpty && newMetadata.isEmpty) return None
      val withHwm = if (identityColumns.isEmpty) newMetadata else {
        val base = newMetadata.getOrElse(meta)
        val updated = IdentityHighWaterMarks.update(base, schema, written, writer.physicalNames)
        if (updated ne base) Some(updated) else newMetadata
      }
      withHwm.foreach(txn.updateMetadata)
      val commitInfo = rowIds.filter(_ => adds.nonEmpty).map(_ => DmlSupport.rowTrackingPreserved)
      beforeCommit()
      val version = txn.commit(commitInfo.toSeq ++ setTxn().toSeq ++ actions, DmlSupport.withSessionUserMetadata(spark, op(outcome)))
      Some(outcome.copy(version = version))
    } catch {
      case NonFatal(e) =>
        DmlSupport.cleanUpAfterFailure(txn, writer, written, dvFile, hadoopConf)
        throw e
    }
  }

  /**
   * The rows to write for a rewrite that changes no data (`dataChange = false`: every row is kept as
   * it is, with its row id and row commit version; no change data): the columns [[output]] gives, by
   * a plain projection.
   */
  private def kept(rows: DataFrame): DataFrame = {
    val ids = rowIds.toSeq.flatMap(r => Seq(WriteSchema.column(r.idColumn).as(r.idColumn),
      WriteSchema.column(r.versionColumn).as(r.versionColumn)))
    val cols = schema.fieldNames.toSeq.map(n => WriteSchema.column(n).as(n)) ++ ids ++
      Seq(lit(false).as(DataFileWriter.CdcFlag), lit(null).cast(StringType).as(ReplaceWhere.ChangeTypeColumnName))
    WriteRules.checkAll(rows.select(cols: _*), schema, conf, table, None)
  }

  /**
   * The rows to write for `rows` (the statement's changes over the touched files and inserts), in
   * one pass: each row becomes up to three output rows (its data row, and change data), exploded
   * from an array; the table's rules checked on the result.
   */
  private def output(rows: DataFrame, writeCdc: Boolean, unchangedFiles: Set[String]): DataFrame = {
    val action = col(ActionColumn)
    val flag = DataFileWriter.CdcFlag
    val ct = ReplaceWhere.ChangeTypeColumnName
    val names = schema.fieldNames.toSeq
    val oldVals = names.map(n => WriteSchema.column(n))
    val newVals = names.map(n => col(NewValuesColumn).getField(n))
    val (idCol, versionCol) = rowIds match {
      case Some(r) => (Some(r.idColumn), Some(r.versionColumn))
      case None => (None, None)
    }
    def entry(values: Seq[Column], id: Column, version: Column, isCdc: Boolean, changeType: Option[String]): Column = {
      val fields = values.zip(names).map { case (v, n) => v.as(n) } ++
        idCol.map(c => id.as(c)) ++ versionCol.map(c => version.as(c)) ++
        Seq(lit(isCdc).as(flag), changeType.map(lit).getOrElse(lit(null).cast(StringType)).as(ct))
      struct(fields: _*)
    }
    val nullLong = lit(null).cast("long")
    val oldId = idCol.map(c => WriteSchema.column(c)).getOrElse(nullLong)
    val oldVersion = versionCol.map(c => WriteSchema.column(c)).getOrElse(nullLong)
    val dataRow = if (dvMode) {
      when(action === Update, entry(newVals, oldId, nullLong, isCdc = false, None))
        .when(action === Insert, entry(newVals, nullLong, nullLong, isCdc = false, None))
    } else {
      when(action === Keep, entry(oldVals, oldId, oldVersion, isCdc = false, None))
        .when(action === Update, entry(newVals, oldId, nullLong, isCdc = false, None))
        .when(action === Insert, entry(newVals, nullLong, nullLong, isCdc = false, None))
    }
    val cdcRows = if (!writeCdc) Nil else Seq(
      when(action === Delete, entry(oldVals, oldId, oldVersion, isCdc = true, Some("delete")))
        .when(action === Update, entry(oldVals, oldId, oldVersion, isCdc = true, Some("update_preimage")))
        .when(action === Insert, entry(newVals, nullLong, nullLong, isCdc = true, Some("insert"))),
      when(action === Update, entry(newVals, oldId, nullLong, isCdc = true, Some("update_postimage"))))
    val entries = "__deltalog_out"
    val skip = if (unchangedFiles.isEmpty) lit(false)
      else action === Keep && col(TouchedFiles.FileColumn).isin(unchangedFiles.toSeq: _*)
    // with deletion vectors a kept row is not written (no data row, no change data): dropped before
    // the output rows are built
    val dropped = if (dvMode) action.isin(Ignore, Keep) else action === lit(Ignore).cast(IntegerType)
    val exploded = rows.filter(!dropped && !skip)
      .select(explode(array((dataRow +: cdcRows): _*)).as(entries))
      .filter(col(entries).isNotNull)
      .select(col(entries + ".*"))
    WriteRules.checkAll(exploded, schema, conf, table, None)
  }
}
