package io.deltalog.commands

import java.util.UUID

import scala.collection.immutable.ListMap
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.actions.{Action, AddFile, DomainMetadata, Metadata, PathCodec}
import io.deltalog.exceptions.{TableNotFoundException, VersionNotFoundException}
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.schema.ColumnMapping
import io.deltalog.txn.{OptimisticTransaction, Operation, TableProperties}

/**
 * The table CLONE copies: `path` (`name`, its catalog name, when it has one) at `version`, at the
 * latest commit at or before `timestampMs`, or at its latest version.
 */
final case class CloneSource(path: String, name: Option[String] = None, version: Option[Long] = None,
    timestampMs: Option[Long] = None) {
  require(version.isEmpty || timestampMs.isEmpty, "CLONE takes a version or a timestamp, not both")
}

/**
 * Where CLONE writes: `path` (`name`, its catalog name, when it has one).
 *
 * @param create      the table may be created (CREATE / CREATE OR REPLACE); false for REPLACE TABLE
 * @param replace     an existing table is replaced (OR REPLACE / REPLACE)
 * @param ifNotExists an existing table makes the statement a no-op
 */
final case class CloneTarget(path: String, name: Option[String] = None, create: Boolean = true,
    replace: Boolean = false, ifNotExists: Boolean = false)

/** CLONE's metrics (delta-spark 4.4's names), also its result row. */
final case class CloneResult(
    version: Long,
    sourceTableSize: Long,
    sourceNumOfFiles: Long,
    numRemovedFiles: Long,
    numCopiedFiles: Long,
    removedFilesSize: Long,
    copiedFilesSize: Long) {

  /** `operationMetrics` in the order delta-spark 4.4 writes them. */
  def metrics: Map[String, String] = ListMap(
    "removedFilesSize" -> removedFilesSize, "numRemovedFiles" -> numRemovedFiles,
    "sourceTableSize" -> sourceTableSize, "numCopiedFiles" -> numCopiedFiles,
    "copiedFilesSize" -> copiedFilesSize, "sourceNumOfFiles" -> sourceNumOfFiles).map { case (k, v) => k -> v.toString }
}

/**
 * `CREATE [OR REPLACE] TABLE t [SHALLOW | DEEP] CLONE s [VERSION AS OF n | TIMESTAMP AS OF ts]` and
 * `DeltaTable.clone` / `cloneAtVersion` / `cloneAtTimestamp`: one commit on the target that holds the
 * source version's schema, partitioning, properties (with `properties` over them, coordinated-commits
 * keys left out), protocol (merged with the one the properties need; on REPLACE never lower than the
 * target's), clustering domain and every live file with its statistics, partition values, tags and
 * deletion vector (row ids are not kept: the target assigns its own, as delta-spark does).
 *
 *  - SHALLOW: the files stay where they are; the target names them by absolute URI, their deletion
 *    vectors too (storage type `p`).
 *  - DEEP: data files and deletion-vector files are first copied into the target (same relative
 *    paths; a file from another root by its name), in parallel; the target's first commit is
 *    written only after every copy landed. A failed copy or commit deletes the copies.
 *
 * An existing target is replaced only with `replace` (one new version: the old files removed, its
 * table id, name, description and identity high-water marks kept); without it the clone is refused
 * (or, with `ifNotExists`, nothing happens and None is returned).
 */
final class CloneCommand(
    spark: ClassicSession,
    source: CloneSource,
    target: CloneTarget,
    isShallow: Boolean,
    properties: Map[String, String] = Map.empty,
    hadoopOptions: Map[String, String] = Map.empty) {

  private val hadoopConf = spark.sessionState.newHadoopConfWithOptions(hadoopOptions)

  def run(): Option[CloneResult] = {
    val sourceLog = DeltaLog.uncached(source.path, hadoopConf)
    val sourceTable = source.name.getOrElse(CloneCommand.pathName(sourceLog.tablePath.toString))
    val snapshot = sourceSnapshot(sourceLog, sourceTable)
    val targetLog = DeltaLog.uncached(target.path, hadoopConf)
    val targetTable = target.name.getOrElse(targetLog.tablePath.toString)
    val txn = OptimisticTransaction.start(targetLog)
    val exists = txn.readVersion >= 0
    val sameTable = sameLocation(sourceLog, targetLog)

    if (exists) {
      if (target.ifNotExists) return None
      if (!target.replace) throw CloneErrors.targetExists(targetTable, target.name.isDefined, txn.readVersion)
      if (sameTable) throw CloneErrors.replaceSameTable(targetTable)
    } else {
      if (!target.create) throw CloneErrors.replaceMissing(targetTable)
      if (sameTable) throw CloneErrors.replaceSameTable(targetTable)
      refuseNonEmptyLocation(targetLog, targetTable)
    }
    TableProperties.validate(TableProperties.canonicalize(properties), targetTable, txn.allowArbitraryProperties)

    val metadata = targetMetadata(snapshot, txn, targetTable)
    // The source's properties pass as they are (checked by the engine that set them); session
    // defaults for new tables are not merged in (the clone must have the source's properties).
    txn.sessionDefaults = Map.empty
    txn.allowArbitraryProperties = true
    txn.updateMetadataForNewTable(metadata)
    txn.writeProtocolEvenIfUnchanged()
    txn.readWholeTable() // the commit depends on the target's state (delta-spark: never a blind append)

    val targetRoot = targetLog.tablePath
    val existedBefore = try targetLog.fs.exists(targetRoot) catch { case NonFatal(_) => true }
    val sourceFiles = snapshot.allFiles.toVector
    var placed: Option[PlacedFiles] = None
    try {
      placed = Some(if (isShallow) CloneFiles.shallow(sourceLog, sourceFiles)
        else CloneFiles.deep(spark, hadoopConf, sourceLog, targetRoot, sourceFiles))
      val adds = placed.get.files.map(_.copy(dataChange = true, baseRowId = None, defaultRowCommitVersion = None))
      val addKeys = adds.map(f => (PathCodec.canonicalPathKey(f.path), f.deletionVectorUniqueId)).toSet
      val now = System.currentTimeMillis()
      val removed = if (!exists) Vector.empty[AddFile] else txn.snapshot.allFiles.toVector
        .filterNot(f => addKeys.contains((PathCodec.canonicalPathKey(f.path), f.deletionVectorUniqueId)))
      val result = CloneResult(-1L, snapshot.sizeInBytes, snapshot.numFiles, removed.size, placed.get.copiedFiles,
        removed.map(_.size).sum, placed.get.copiedBytes)
      val actions: Seq[Action] = Seq(snapshot.protocol) ++ adds ++ removed.map(_.remove(now)) ++
        CloneCommand.domainMetadata(snapshot, if (exists) Some(txn.snapshot) else None)
      val op = Operation.clone(sourceTable, snapshot.version, isShallow).withMetrics(result.metrics)
      val version = txn.commit(actions, op)
      Some(result.copy(version = version))
    } catch {
      case NonFatal(e) =>
        val landed = txn.committed ||
          (scala.util.Try(targetLog.fs.exists(targetLog.logPath)).getOrElse(true) && WriteIntoDeltalog.inLog(targetLog, txn))
        if (!landed) {
          placed.foreach(_.deleteCopies(hadoopConf, targetRoot))
          if (!existedBefore && DeltalogTableCreationCleanup.noLog(targetLog)) {
            try targetLog.fs.delete(targetRoot, true) catch { case NonFatal(_) => () }
          }
        }
        throw e
    }
  }

  private def sourceSnapshot(log: DeltaLog, table: String): Snapshot = {
    val latest = try log.update() catch {
      case e: TableNotFoundException =>
        throw new TableNotFoundException(table, s"the CLONE source ${log.tablePath} has no Delta log")
    }
    try {
      (source.version, source.timestampMs) match {
        case (Some(v), _) => if (v == latest.version) latest else log.snapshotAt(v)
        case (_, Some(ms)) =>
          val ts = log.commitTimestamps()
          if (ms > ts.latestTimestamp) {
            throw new InvalidWriteException("DELTA_TIMESTAMP_GREATER_THAN_COMMIT", table,
              s"The provided timestamp (${RestoreCommand.shown(ms)}) is after the latest version available to table " +
                s"$table (${RestoreCommand.shown(ts.latestTimestamp)}). Please use a timestamp before or at it.")
          }
          if (ms < ts.earliestTimestamp) {
            throw new InvalidWriteException("DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", table,
              s"The provided timestamp (${RestoreCommand.shown(ms)}) is before the earliest version available to " +
                s"table $table (${RestoreCommand.shown(ts.earliestTimestamp)}). Please use a timestamp after it.")
          }
          log.snapshotAt(ts.versionAtOrBefore(ms))
        case _ => latest
      }
    } catch {
      case e: VersionNotFoundException => throw new VersionNotFoundException(table, e.requested, e.earliest, e.latest)
    }
  }

  private def sameLocation(a: DeltaLog, b: DeltaLog): Boolean = {
    def q(l: DeltaLog) = l.fs.makeQualified(l.tablePath).toUri.normalize().toString.stripSuffix("/")
    try q(a) == q(b) catch { case NonFatal(_) => a.tablePath == b.tablePath }
  }

  /** A new table's location must be empty or missing (delta-spark's rule for CREATE TABLE). */
  private def refuseNonEmptyLocation(log: DeltaLog, table: String): Unit = {
    val root = log.tablePath
    val nonEmpty = try log.fs.exists(root) && log.fs.listStatus(root).nonEmpty catch { case NonFatal(_) => false }
    if (nonEmpty) throw CloneErrors.nonEmptyLocation(table, root.toString)
  }

  /**
   * The source's metadata for the target: a new table id (the target's on REPLACE, with its name
   * and description), the properties given over the source's, coordinated-commits keys left out,
   * identity high-water marks never below the replaced table's. The column mapping mode cannot change.
   */
  private def targetMetadata(snapshot: Snapshot, txn: OptimisticTransaction, table: String): Metadata = {
    val src = snapshot.metadata
    val existing = if (txn.readVersion >= 0) Some(txn.snapshot.metadata) else None
    val conf = src.configuration.filterNot { case (k, _) => CloneCommand.neverCopied(k) } ++
      TableProperties.canonicalize(properties)
    var m = src.copy(id = existing.map(_.id).getOrElse(UUID.randomUUID().toString),
      name = existing.flatMap(_.name), description = existing.flatMap(_.description), configuration = conf)
    val srcMode = ColumnMapping.fromConfiguration(src.configuration)
    val newMode = ColumnMapping.fromConfiguration(conf)
    if (srcMode != newMode) throw CloneErrors.columnMappingChange(table, srcMode.name, newMode.name)
    existing.foreach { e =>
      val oldMode = ColumnMapping.fromConfiguration(e.configuration)
      if (oldMode != newMode) throw CloneErrors.columnMappingChange(table, oldMode.name, newMode.name)
      m = RestoreCommand.withHighWaterMarks(m, e)
    }
    m
  }
}

object CloneCommand {
  private val ClusteringDomain = "delta.clustering"

  /** How a path table is named in CLONE's `source` parameter (delta-spark: ``delta.`/path` ``). */
  def pathName(path: String): String = s"deltalog.`$path`"

  /** Properties never copied to a clone (delta-spark: coordinated commits and the catalog's table id). */
  private def neverCopied(key: String): Boolean =
    key.startsWith("delta.coordinatedCommits.") || key == "io.unitycatalog.tableId"

  /**
   * delta-spark's domain rule for CLONE: the source's clustering domain is copied; a replaced
   * table's clustering domain the source lacks is removed; its other domains stay.
   */
  private[commands] def domainMetadata(source: Snapshot, replaced: Option[Snapshot]): Seq[DomainMetadata] = {
    val copied = source.domainMetadata.filter(d => d.domain == ClusteringDomain && !d.removed)
    val dropped = replaced.toSeq.flatMap(_.domainMetadata)
      .filter(d => d.domain == ClusteringDomain && !d.removed && !copied.exists(_.domain == d.domain))
      .map(_.copy(removed = true))
    copied ++ dropped
  }
}

/** Whether a table location holds no commit (after a failed first commit). */
private[commands] object DeltalogTableCreationCleanup {
  def noLog(log: DeltaLog): Boolean =
    try !log.fs.exists(log.logPath) || log.fs.listStatus(log.logPath).forall(!_.getPath.getName.endsWith(".json"))
    catch { case NonFatal(_) => false }
}

/** CLONE's refusals, with delta-spark 4.4's error classes (plus the table and what to do). */
private[commands] object CloneErrors {
  def targetExists(table: String, isCatalogName: Boolean, version: Long): InvalidWriteException =
    if (isCatalogName) {
      new InvalidWriteException("DELTA_TABLE_ALREADY_EXISTS", table,
        s"Table $table already exists (version $version). Use CREATE OR REPLACE TABLE ... CLONE to replace it, " +
          "or CREATE TABLE IF NOT EXISTS ... CLONE to leave it as it is.")
    } else {
      new InvalidWriteException("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", table,
        s"Cannot create table ('$table'): the location already holds a Delta table (version $version). Use " +
          "CREATE OR REPLACE TABLE ... CLONE (or replace=True) to replace it, CREATE TABLE IF NOT EXISTS to leave " +
          "it as it is, or clone to another location.")
    }

  def nonEmptyLocation(table: String, location: String): InvalidWriteException =
    new InvalidWriteException("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", table,
      s"Cannot create table ('$table'). The associated location ('$location') is not empty and also not a Delta " +
        "table. Clone into an empty or missing directory.")

  def replaceMissing(table: String): InvalidWriteException =
    new InvalidWriteException("DELTA_CANNOT_REPLACE_MISSING_TABLE", table,
      s"Table $table cannot be replaced as it does not exist. Use CREATE OR REPLACE TABLE ... CLONE to create the table.")

  def replaceSameTable(table: String): InvalidWriteException =
    new InvalidWriteException("DELTA_UNSUPPORTED_CLONE_REPLACE_SAME_TABLE", table,
      s"You tried to REPLACE an existing table ($table) with CLONE of itself. This operation is unsupported. Try " +
        "a different target for CLONE or delete the table at the current target.")

  def columnMappingChange(table: String, from: String, to: String): InvalidWriteException =
    new InvalidWriteException("DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE", table,
      s"Changing column mapping mode from '$from' to '$to' is not supported (CLONE into $table). Leave " +
        "delta.columnMapping.mode out of the clone's properties, or clone to a new table.")
}
