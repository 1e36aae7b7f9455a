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
import org.apache.spark.sql.functions.{coalesce, col, lit, not}
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
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(hadoopOptions)
    val deltaLog = DeltaLog.uncached(path, hadoopConf)
    val txn = OptimisticTransaction.start(deltaLog)
    val table = tableName.getOrElse(deltaLog.tablePath.toString)
    if (txn.readVersion < 0) throw new TableNotFoundException(table, s"$path has no Delta log")
    Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, table)
    val meta = txn.metadata
    val conf = meta.configuration
    if (MetadataView.boolValue(AppendOnlyKey, conf.get(AppendOnlyKey))) {
      throw new InvalidWriteException("DELTA_CANNOT_MODIFY_APPEND_ONLY", table,
        s"Table $table (version ${txn.readVersion}) is configured to only allow appends (delta.appendOnly = true); " +
          s"nothing was deleted. If you would like to permit updates or deletes, use 'ALTER TABLE $table SET " +
          "TBLPROPERTIES (delta.appendOnly=false)'.")
    }
    val schema = WriteIntoDeltalog.parseSchema(meta.schemaString)
    val resolved = condition.map(c => resolve(c, schema, table))
    val predicateSql = Seq(resolved.map(predicateText).getOrElse("true"))
    // a condition that is constantly true deletes everything, like no condition
    val cond = resolved.filterNot(e => e.foldable && scala.util.Try(e.eval() == true).getOrElse(false))
    val partitionCols = meta.partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
    val mapped = ColumnMappingWriter.enabled(conf)
    val physicalNames = schema.fields.zip(ColumnMappingWriter.physicalSchema(schema, mapped).fields)
      .map { case (l, p) => l.name.toLowerCase(Locale.ROOT) -> p.name }.toMap

    // ------------------------------------------------------------ candidates
    val candidates: Seq[AddFile] = cond match {
      case None => txn.filterFiles()
      case Some(e) => txn.filterFiles(partitionPredicates(e, partitionCols))
    }
    val proof = cond.map(e => new StatsProof(e, partitionCols, physicalNames, spark.sessionState.conf.sessionLocalTimeZone))
    val proven = candidates.map(f => f -> proof.map(_.prove(f)).getOrElse((true, false)))
    val whole = proven.collect { case (f, (true, _)) => f }
    val toScan = proven.collect { case (f, (false, false)) => f }

    val dvMode = MetadataView.boolValue(EnableDvKey, conf.get(EnableDvKey)) &&
      txn.protocol.isFeatureSupported(TableFeature.DeletionVectors)
    val cdfOn = MetadataView.boolValue(WriteIntoDeltalog.CdfKey, conf.get(WriteIntoDeltalog.CdfKey))
    val rowIds = rowIdColumns(txn, table)
    val reader = new TouchedFiles(spark, txn, schema, meta.partitionColumns, conf, if (dvMode) None else rowIds)
    val matches: Column = coalesce(cond.map(e => org.apache.spark.sql.deltalog.SparkInternals.column(unresolve(e))).getOrElse(lit(true)), lit(false))
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
        collectBitmaps(rows).foreach { case (key, added) =>
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
          (f.copy(deletionVector = Some(d), dataChange = true, stats = f.stats.map(looseBounds)), f.remove(now))
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
      val commitInfo = rowIds.filter(_ => !dvMode && rewritten.nonEmpty).map { _ =>
        val body = Action.mapper.createObjectNode()
        body.putObject("tags").put("delta.rowTracking.preserved", "true")
        CommitInfo(body)
      }
      val op = Operation.delete(predicateSql).withMetrics(metrics.operationMetrics)
      takeBeforeCommitHook().foreach(_(path))
      val version = txn.commit(commitInfo.toSeq ++ actions, op)
      DeleteResult(numDeleted.getOrElse(-1L), version)
    } catch {
      case NonFatal(e) =>
        // A commit file that landed before the failure (e.g. while reading the new snapshot) keeps its files.
        if (!txn.committed && !WriteIntoDeltalog.inLog(deltaLog, txn)) {
          writer.deleteFiles(written)
          dvFile.foreach(p => try p.getFileSystem(hadoopConf).delete(p, false) catch { case NonFatal(_) => })
        }
        throw e
    }
  }

  /** `condition` resolved against the table's columns (an empty relation with the table's schema). */
  private def resolve(c: Column, schema: StructType, table: String): Expression = {
    val plainSchema = StructType(schema.fields.map(f => f.copy(metadata = org.apache.spark.sql.types.Metadata.empty)))
    val empty = spark.createDataFrame(spark.sparkContext.emptyRDD[Row], plainSchema)
    val analyzed = try empty.where(c).asInstanceOf[ClassicDataset[_]].queryExecution.analyzed catch {
      case e: org.apache.spark.sql.AnalysisException => throw new InvalidWriteException("DELTA_INVALID_DELETE_CONDITION",
        table, s"Table $table: the DELETE condition cannot be resolved against the table's columns " +
          s"(${schema.fieldNames.mkString(", ")}): ${e.getMessage}")
    }
    val e = analyzed.collectFirst { case Filter(cond, _) => cond }.getOrElse(
      throw new IllegalStateException(s"no filter in the analyzed plan of the DELETE condition: $analyzed"))
    if (e.exists(_.isInstanceOf[SubqueryExpression])) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_SUBQUERY", table,
        s"Table $table: subqueries are not supported in the DELETE condition (${conditionSql(e)}); nothing was deleted.")
    }
    if (!e.deterministic) {
      throw new InvalidWriteException("DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED", table,
        s"Table $table: the DELETE condition ${conditionSql(e)} is not deterministic; nothing was deleted.")
    }
    e
  }
}

object DeleteCommand {
  private val log = LoggerFactory.getLogger(classOf[DeleteCommand])
  val AppendOnlyKey = "delta.appendOnly"
  val EnableDvKey = "delta.enableDeletionVectors"

  @volatile private var beforeCommitHook: Option[String => Unit] = None

  /**
   * Test hook: `hook(path)` runs once, in the next DELETE, after its files were read and written
   * and right before its commit, so that a test can land a competing commit there deterministically.
   */
  def setBeforeCommitHook(hook: String => Unit): Unit = synchronized { beforeCommitHook = Option(hook) }

  private def takeBeforeCommitHook(): Option[String => Unit] = synchronized {
    val h = beforeCommitHook; beforeCommitHook = None; h
  }

  /**
   * A resolved condition as delta-spark 4.4 logs it in `operationParameters.predicate`: the
   * expression's string form after constant folding (`(id#12L > 5)`, `((id#3L > 5) AND (name#4 = x))`,
   * attribute ids included), `true` for no condition.
   */
  def predicateText(e: Expression): String =
    e.transformUp {
      case x if x.foldable && !x.isInstanceOf[Literal] && x.deterministic =>
        try Literal.create(x.eval(), x.dataType) catch { case NonFatal(_) => x }
    }.toString

  /** The SQL of a resolved condition without qualifiers (for deltalog's own predicate parser). */
  private def conditionSql(e: Expression): String =
    e.transform { case a: AttributeReference => a.withQualifier(Nil) }.sql

  /** `e` with its attribute references turned back into names (to be resolved against another plan). */
  def unresolve(e: Expression): Expression =
    e.transform { case a: AttributeReference => UnresolvedAttribute(Seq(a.name)) }

  /** The conjuncts of `e` on partition columns only that the log's predicate parser understands. */
  private def partitionPredicates(e: Expression, partitionCols: Set[String]): Seq[LogPredicate] = {
    def conjuncts(x: Expression): Seq[Expression] = x match {
      case And(l, r) => conjuncts(l) ++ conjuncts(r)
      case other => Seq(other)
    }
    conjuncts(e).filter(c => c.references.nonEmpty &&
      c.references.forall(a => partitionCols.contains(a.name.toLowerCase(Locale.ROOT))))
      .flatMap(c => try Some(PredicateParser.parse(conditionSql(c))) catch { case NonFatal(_) => None })
  }

  /** Materialized row tracking columns when the rewritten rows must keep their ids. */
  private def rowIdColumns(txn: OptimisticTransaction, table: String): Option[TouchedFiles.RowIds] = {
    if (!RowTracking.assignsIds(txn.protocol, txn.metadata)) return None
    val c = txn.metadata.configuration
    (c.get(RowTracking.MaterializedRowIdColumnNameKey), c.get(RowTracking.MaterializedRowCommitVersionColumnNameKey)) match {
      case (Some(id), Some(v)) => Some(TouchedFiles.RowIds(id, v))
      case _ if RowTracking.isEnabled(txn.protocol, txn.metadata) =>
        throw new InvalidWriteException("DELTA_ROW_TRACKING_MATERIALIZED_COLUMNS_MISSING", table,
          s"Table $table has row tracking enabled but its configuration lacks the materialized column names " +
            s"(${RowTracking.MaterializedRowIdColumnNameKey}, ${RowTracking.MaterializedRowCommitVersionColumnNameKey}); " +
            "rewritten rows could not keep their row ids. Nothing was deleted.")
      case _ => None
    }
  }

  /** The stats of a file that gets a deletion vector: bounds no longer tight. */
  private def looseBounds(stats: String): String = try {
    val n = Action.mapper.readTree(stats).asInstanceOf[ObjectNode]
    n.put("tightBounds", false)
    Action.mapper.writeValueAsString(n)
  } catch { case NonFatal(_) => stats }

  /** (file key, matching rows) of `rows` (columns of [[TouchedFiles]]), bitmaps built on the executors. */
  private def collectBitmaps(rows: DataFrame): Seq[(String, RoaringBitmapArray)] = {
    val pairs = rows.select(col(TouchedFiles.FileColumn), col(TouchedFiles.RowIndexColumn)).rdd
      .map(r => r.getString(0) -> r.getLong(1))
    pairs.groupByKey().mapValues(it => RoaringBitmapArray.fromIterator(it.iterator).serialize).collect()
      .toSeq.map { case (k, bytes) => k -> RoaringBitmapArray.deserialize(bytes) }
  }
}
