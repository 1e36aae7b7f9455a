package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, Expression, Literal, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.Filter
import org.apache.spark.sql.classic.{Dataset => ClassicDataset, SparkSession => ClassicSession}
import org.apache.spark.sql.functions.{col, lit, not}
import org.apache.spark.sql.types.{StringType, StructType}
import org.slf4j.LoggerFactory

import io.deltalog.actions._
import io.deltalog.dv.RoaringBitmapArray
import io.deltalog.exceptions.TableNotFoundException
import io.deltalog.expressions.{PredicateParser, Predicate => LogPredicate}
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{ClientCapabilities, MetadataView, Protocol, TableFeature}
import io.deltalog.txn.{OptimisticTransaction, Operation, RowTracking}

/** The outcome of a DELETE: rows deleted (-1 when unknown) and the committed version (-1: nothing committed). */
final case class DeleteResult(numDeletedRows: Long, version: Long)

/**
 * `DELETE FROM t [WHERE condition]`: one transaction that removes the rows matching `condition`
 * (all rows without one). Rows where the condition is NULL are kept.
 *
 *  - Files whose partition values or statistics prove every row matches are removed without
 *    being read; files they prove hold no matching row are left alone ([[StatsProof]]). A
 *    condition on partition columns only therefore reads nothing.
 *  - The other candidate files are scanned ([[TouchedFiles]], existing DVs applied). With
 *    `delta.enableDeletionVectors = true` each file holding a matching row gets a new deletion
 *    vector (its old one merged; [[DeletionVectorWriter]]): `remove` (old DV) + `add` (same path,
 *    new DV, same stats with `tightBounds: false`); a file left without rows is removed. Otherwise
 *    (copy-on-write) its other rows are written to new files and it is removed; under row
 *    tracking the rows keep their row ids and commit versions (materialized columns).
 *  - Change data feed: the deleted rows are written as `delete` change data when files are
 *    rewritten or get DVs (rows of files removed whole in the same commit included, since
 *    readers then take the change data files only); a commit that only removes whole files
 *    writes none (readers take the removed files' rows).
 *
 * @param condition the condition as an unresolved Column (resolved here against the table's columns)
 * @param table     the name for messages (the path when None)
 */
final class DeleteCommand(
    spark: ClassicSession,
    path: String,
    condition: Option[Column],
    tableName: Option[String] = None,
    hadoopOptions: Map[String, String] = Map.empty) {
  import DeleteCommand._

  def run(): DeleteResult = {
    val started = System.nanoTime()
    val DmlSupport.Opened(hadoopConf, deltaLog, table, txn) = DmlSupport.open(spark, path, tableName, hadoopOptions, "DELETE")
    val meta = txn.metadata
    val conf = meta.configuration
    val schema = WriteIntoDeltalog.parseSchema(meta.schemaString)
    val resolved = condition.map(c => DmlSupport.resolveCondition(spark, c, schema, table, "DELETE"))
    val predicateSql = Seq(resolved.map(DmlSupport.predicateText).getOrElse("true"))
    // a condition that is constantly true deletes everything, like no condition
    val cond = resolved.filterNot(DmlSupport.alwaysTrue)
    val partitionCols = meta.partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
    val mapped = ColumnMappingWriter.enabled(conf)
    val physicalNames = schema.fields.zip(ColumnMappingWriter.physicalSchema(schema, mapped).fields)
      .map { case (l, p) => l.name.toLowerCase(Locale.ROOT) -> p.name }.toMap

    // ------------------------------------------------------------ candidates
    val candidates: Seq[AddFile] = cond match {
      case None => txn.filterFiles()
      case Some(e) => txn.filterFiles(ReadPredicates.of(e, partitionCols))
    }
    val proof = cond.map(e => new StatsProof(e, partitionCols, physicalNames, spark.sessionState.conf.sessionLocalTimeZone))
    val proven = candidates.map(f => f -> proof.map(_.prove(f)).getOrElse((true, false)))
    val whole = proven.collect { case (f, (true, _)) => f }
    val toScan = proven.collect { case (f, (false, false)) => f }

    val dvMode = DmlSupport.deletionVectorsOn(txn)
    val cdfOn = MetadataView.boolValue(WriteIntoDeltalog.CdfKey, conf.get(WriteIntoDeltalog.CdfKey))
    val rowIds = DmlSupport.rowIdColumns(txn, table, "DELETE")
    val reader = new TouchedFiles(spark, txn, schema, meta.partitionColumns, conf, if (dvMode) None else rowIds)
    val matches: Column = DmlSupport.rowCondition(cond)
    val byKey = toScan.map(f => reader.fileKey(f) -> f).toMap

    val now = System.currentTimeMillis()
    val scanStart = System.nanoTime()
    // ------------------------------------------------------------ scan: which files hold matching rows
    val removedWhole = scala.collection.mutable.ArrayBuffer[AddFile]() ++= whole
    val dvUpdates = scala.collection.mutable.ArrayBuffer[(AddFile, RoaringBitmapArray, Long)]() // file, new DV, rows
    var rewritten: Seq[AddFile] = Nil
    var scannedDeleted = 0L
    if (toScan.nonEmpty) {
      val rows = reader.read(toScan).filter(matches)
      if (dvMode) {
        val old = reader.existingDeletionVectors(toScan)
        DmlSupport.collectBitmaps(rows).foreach { case (key, added) =>
          val f = byKey(key)
          val merged = old.get(key).map(_.union(added)).getOrElse(added)
          val newRows = merged.cardinality - old.get(key).map(_.cardinality).getOrElse(0L)
          scannedDeleted += newRows
          val physicalRows = RowTracking.numRecords(f)
          if (physicalRows.isEmpty) {
            throw new InvalidWriteException("DELTA_DELETION_VECTOR_MISSING_NUM_RECORDS", table,
              s"Table $table: file ${f.path} has no numRecords statistics, which a file with a deletion vector " +
                "must have; nothing was deleted. Disable deletion vectors (delta.enableDeletionVectors = false) " +
                "to rewrite such files instead, or recompute the file's statistics.")
          }
          if (physicalRows.contains(merged.cardinality)) removedWhole += f
          else dvUpdates += ((f, merged, newRows))
        }
      } else {
        val counts = rows.groupBy(col(TouchedFiles.FileColumn)).count().collect()
          .map(r => r.getString(0) -> r.getLong(1)).toMap
        scannedDeleted = counts.values.sum
        rewritten = toScan.filter(f => counts.contains(reader.fileKey(f)))
      }
    }
    val scanTimeMs = (System.nanoTime() - scanStart) / 1000000L

    // ------------------------------------------------------------ write: new data files, change data, DVs
    val rewriteStart = System.nanoTime()
    val writeCdc = cdfOn && (rewritten.nonEmpty || dvUpdates.nonEmpty)
    val flag = DataFileWriter.CdcFlag
    val ct = ReplaceWhere.ChangeTypeColumnName
    val extra = if (dvMode) Nil else rowIds.toSeq.flatMap(r => Seq(r.idColumn, r.versionColumn))
    val writer = new DataFileWriter(spark, deltaLog.tablePath.toString, hadoopConf, schema, meta.partitionColumns,
      conf, Map.empty, Nil, table, if (writeCdc) Some(flag) else None, extra)
    // rows deleted from files removed whole, as change data (only when other change data is written)
    def wholeFileRows: Option[DataFrame] =
      if (!writeCdc) None
      else {
        val already = (dvUpdates.map(_._1) ++ rewritten).map(reader.fileKey).toSet
        val plain = removedWhole.filterNot(f => already.contains(reader.fileKey(f)))
        // files fully deleted through the scan are in `rows` of the scanned files; only the proven ones are read here
        val proven = plain.filterNot(f => byKey.contains(reader.fileKey(f)))
        if (proven.isEmpty) None else Some(reader.read(proven.toSeq))
      }
    val toWrite: Option[DataFrame] =
      if (dvMode) {
        if (!writeCdc) None
        else {
          val scanned = dvUpdates.map(_._1) ++ removedWhole.filter(f => byKey.contains(reader.fileKey(f)))
          val deleted = reader.read(scanned.toSeq).filter(matches)
          Some((Seq(deleted) ++ wholeFileRows).reduce(_ unionByName _)
            .withColumn(flag, lit(true)).withColumn(ct, lit("delete")))
        }
      } else if (rewritten.isEmpty) None
      else {
        val existing = reader.read(rewritten)
        val kept = existing.filter(not(matches))
        if (!writeCdc) Some(kept)
        else {
          val deleted = (Seq(existing.filter(matches)) ++ wholeFileRows).reduce(_ unionByName _)
          Some(kept.withColumn(flag, lit(false)).withColumn(ct, lit(null).cast(StringType))
            .unionByName(deleted.withColumn(flag, lit(true)).withColumn(ct, lit("delete"))))
        }
      }
    val written = toWrite.map(writer.write).getOrElse(Nil)
    var dvFile: Option[Path] = None
    try {
      val rootPrefix = deltaLog.tablePath.toString.stripSuffix("/") + "/"
      def rel(p: String) = PathCodec.encodePath(if (p.startsWith(rootPrefix)) p.substring(rootPrefix.length) else p)
      def pv(f: WrittenFile) = f.partitionValues - flag
      val adds = written.filterNot(writer.isChangeData).map { f =>
        AddFile(path = rel(f.path), partitionValues = pv(f), size = f.size, modificationTime = f.modificationTime,
          dataChange = true, stats = Some(f.stats))
      }
      val cdcs = written.filter(writer.isChangeData).map { f =>
        AddCDCFile(path = rel(f.path), partitionValues = pv(f), size = f.size)
      }
      val (dvAdds, dvRemoves) = if (dvUpdates.isEmpty) (Nil, Nil) else {
        val (file, descriptors) = DeletionVectorWriter.write(deltaLog.tablePath, hadoopConf, dvUpdates.map(_._2).toSeq)
        dvFile = Some(file)
        dvUpdates.toSeq.zip(descriptors).map { case ((f, _, _), d) =>
          (f.copy(deletionVector = Some(d), dataChange = true, stats = f.stats.map(DmlSupport.looseBounds)), f.remove(now))
        }.unzip
      }
      val removes = (removedWhole.toSeq ++ rewritten).map(_.remove(now)) ++ dvRemoves
      val rewriteTimeMs = (System.nanoTime() - rewriteStart) / 1000000L

      val wholeRows: Option[Long] = {
        val scannedKeys = byKey.keySet
        val proven = removedWhole.filterNot(f => scannedKeys.contains(reader.fileKey(f)))
        val counts = proven.map(f => RowTracking.numRecords(f).map(_ - f.deletionVector.map(_.cardinality).getOrElse(0L)))
        if (counts.forall(_.isDefined)) Some(counts.flatten.sum) else None
      }
      val numDeleted = wholeRows.map(_ + scannedDeleted)
      val removedFiles = removedWhole.toSeq ++ rewritten
      val metrics = DmlMetrics(
        numRemovedFiles = removedFiles.size,
        numAddedFiles = adds.size,
        numDeletedRows = numDeleted,
        numCopiedRows = written.filterNot(writer.isChangeData).map(_.numRecords).sum,
        numAddedChangeFiles = cdcs.size,
        // delta-spark 4.4 reports 0 removed bytes (and no scan / rewrite time) for deletion-vector deletes
        numRemovedBytes = if (dvMode) 0L else removedFiles.map(_.size).sum,
        numAddedBytes = adds.map(_.size).sum,
        numDeletionVectorsAdded = dvUpdates.count(_._1.deletionVector.isEmpty),
        numDeletionVectorsRemoved = removedWhole.count(_.deletionVector.isDefined),
        numDeletionVectorsUpdated = dvUpdates.count(_._1.deletionVector.isDefined),
        executionTimeMs = (System.nanoTime() - started) / 1000000L,
        scanTimeMs = if (dvMode) 0L else scanTimeMs,
        rewriteTimeMs = if (dvMode) 0L else rewriteTimeMs)
      val actions: Seq[Action] = removes ++ dvAdds ++ adds ++ cdcs
      if (actions.isEmpty) {
        log.info(s"Table $table: DELETE matched no rows; nothing committed.")
        return DeleteResult(0L, -1L)
      }
      val commitInfo = rowIds.filter(_ => !dvMode && rewritten.nonEmpty).map(_ => DmlSupport.rowTrackingPreserved)
      val op = DmlSupport.withSessionUserMetadata(spark, Operation.delete(predicateSql).withMetrics(metrics.operationMetrics))
      takeBeforeCommitHook().foreach(_(path))
      val version = txn.commit(commitInfo.toSeq ++ actions, op)
      DeleteResult(numDeleted.getOrElse(-1L), version)
    } catch {
      case NonFatal(e) =>
        DmlSupport.cleanUpAfterFailure(txn, writer, written, dvFile, hadoopConf)
        throw e
    }
  }
}

object DeleteCommand {
  private val log = LoggerFactory.getLogger(classOf[DeleteCommand])

  @volatile private var beforeCommitHook: Option[String => Unit] = None

  /**
   * Test hook: `hook(path)` runs once, in the next DELETE, UPDATE or MERGE, after its files were read and written
   * and right before its commit, so that a test can land a competing commit there deterministically.
   */
  def setBeforeCommitHook(hook: String => Unit): Unit = synchronized { beforeCommitHook = Option(hook) }

  private def takeBeforeCommitHook(): Option[String => Unit] = synchronized {
    val h = beforeCommitHook; beforeCommitHook = None; h
  }

  /** Runs (and clears) the hook, if set; every row-level statement calls it right before its commit. */
  private[commands] def runBeforeCommitHook(path: String): Unit = takeBeforeCommitHook().foreach(_(path))

  /** See [[DmlSupport.unresolve]]. */
  def unresolve(e: Expression): Expression = DmlSupport.unresolve(e)
}
