package io.deltalog.commands

import java.util.concurrent.{Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.actions.{Action, AddFile, DomainMetadata, Metadata, PathCodec}
import io.deltalog.exceptions.VersionNotFoundException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.txn.Operation

/**
 * What `RESTORE` is asked for: exactly one of a version or a timestamp.
 *
 * @param timestampMs the timestamp, ms since the epoch (a zone-less string read in the session time zone)
 */
final case class RestoreTarget(version: Option[Long], timestampMs: Option[Long]) {
  require(version.isDefined != timestampMs.isDefined, "RESTORE needs either a version or a timestamp")
}

/** RESTORE's metrics (delta-spark 4.4's names), also its result row. */
final case class RestoreResult(
    version: Long,
    restoredVersion: Long,
    tableSizeAfterRestore: Long,
    numOfFilesAfterRestore: Long,
    numRemovedFiles: Long,
    numRestoredFiles: Long,
    removedFilesSize: Long,
    restoredFilesSize: Long) {

  /** `operationMetrics` in delta-spark 4.4's order. */
  def metrics: Map[String, String] = scala.collection.immutable.ListMap(
    "numRestoredFiles" -> numRestoredFiles.toString, "removedFilesSize" -> removedFilesSize.toString,
    "numRemovedFiles" -> numRemovedFiles.toString, "restoredFilesSize" -> restoredFilesSize.toString,
    "numOfFilesAfterRestore" -> numOfFilesAfterRestore.toString,
    "tableSizeAfterRestore" -> tableSizeAfterRestore.toString)
}

/**
 * `RESTORE TABLE t TO VERSION AS OF n | TIMESTAMP AS OF ts` (and `DeltaTable.restoreToVersion` /
 * `restoreToTimestamp`): one commit that makes the live files those of the restored version.
 * Files live then and not now are re-added (`dataChange = true`, with their deletion vectors,
 * statistics, tags and row ids); files live now and not then are removed. A file is the same
 * file when its path and its deletion vector are the same (a file whose DV changed is removed
 * with the new DV and re-added with the old one). The restored version's metadata is written
 * (identity high-water marks never go back); the protocol never goes down (the two versions'
 * protocols merged); domain metadata is kept as it is now, as delta-spark does. Every file to
 * re-add must still exist (checked in parallel) unless `spark.sql.files.ignoreMissingFiles` is
 * true; a version older than `delta.deletedFileRetentionDuration` is refused, as delta-spark does,
 * unless [[RestoreCommand.EnforceRetentionKey]] is false. Restoring the current version commits nothing and returns no row, as delta-spark 4.4.
 *
 * The transaction reads the whole table: a concurrent commit that removes files or changes the
 * metadata fails the restore; a concurrent blind append on a WriteSerializable table is kept (it
 * serializes after the restore).
 */
final class RestoreCommand(
    spark: ClassicSession,
    path: String,
    target: RestoreTarget,
    tableName: Option[String] = None,
    hadoopOptions: Map[String, String] = Map.empty) {

  /** None when the table already is at the requested version (nothing committed). */
  def run(): Option[RestoreResult] = {
    val DmlSupport.Opened(hadoopConf, deltaLog, table, txn) =
      DmlSupport.open(spark, path, tableName, hadoopOptions, "RESTORE", allowAppendOnly = true)
    val latest = txn.snapshot
    val version = versionToRestore(deltaLog, table, latest.version)
    if (version == latest.version) return None
    if (RestoreCommand.enforceRetention(spark)) {
      val retention = latest.deletedFileRetentionMillis
      if (deltaLog.commitTimestamps().timestampOf(version) < System.currentTimeMillis() - retention) {
        throw RestoreErrors.beyondRetention(table, version, retention)
      }
    }
    val restored = try deltaLog.snapshotAt(version) catch {
      case e: VersionNotFoundException => throw RestoreErrors.version(table, version, e.earliest, e.latest)
    }

    txn.readWholeTable()
    txn.writeProtocolEvenIfUnchanged()
    val key = (f: AddFile) => (PathCodec.canonicalPathKey(f.path), f.deletionVectorUniqueId)
    val now = latest.allFiles.map(f => key(f) -> f).toMap
    val then = restored.allFiles.map(f => key(f) -> f).toMap
    val toAdd = then.iterator.collect { case (k, f) if !now.contains(k) => f.copy(dataChange = true) }.toVector
    val deletionTimestamp = System.currentTimeMillis()
    val toRemove = now.iterator.collect { case (k, f) if !then.contains(k) => f }.toVector

    if (!spark.sessionState.conf.ignoreMissingFiles) {
      val missing = RestoreCommand.missingFiles(deltaLog, hadoopConf, toAdd)
      if (missing.nonEmpty) throw RestoreErrors.missingFiles(table, version, missing)
    }

    val result = RestoreResult(
      version = -1L, restoredVersion = version,
      tableSizeAfterRestore = restored.sizeInBytes, numOfFilesAfterRestore = restored.numFiles,
      numRemovedFiles = toRemove.size, numRestoredFiles = toAdd.size,
      removedFilesSize = toRemove.map(_.size).sum, restoredFilesSize = toAdd.map(_.size).sum)
    val metadata = RestoreCommand.withHighWaterMarks(restored.metadata, latest.metadata)
    val actions: Seq[Action] = Seq(metadata, restored.protocol) ++ toAdd ++
      toRemove.map(_.remove(deletionTimestamp)) ++ RestoreCommand.clusteringDomain(restored, latest)
    val op = Operation.restore(target.version, target.timestampMs.map(RestoreCommand.shown))
      .withMetrics(result.metrics)
    val committed = txn.commit(actions, op)
    Some(result.copy(version = committed))
  }

  private def versionToRestore(deltaLog: DeltaLog, table: String, latest: Long): Long = target match {
    case RestoreTarget(Some(v), _) =>
      if (v < 0 || v > latest) {
        val earliest = scala.util.Try(deltaLog.commitTimestamps().earliestVersion).getOrElse(0L)
        throw RestoreErrors.version(table, v, earliest, latest)
      }
      v
    case RestoreTarget(None, Some(ms)) =>
      val ts = deltaLog.commitTimestamps()
      if (ms < ts.earliestTimestamp) throw RestoreErrors.timestampEarlier(table, ms, ts.earliestTimestamp)
      if (ms > ts.latestTimestamp) throw RestoreErrors.timestampGreater(table, ms, ts.latestTimestamp)
      ts.versionAtOrBefore(ms)
    case _ => throw new IllegalArgumentException("RESTORE needs either a version or a timestamp")
  }
}

object RestoreCommand {

  /** delta-spark's switch for refusing to restore a version older than `delta.deletedFileRetentionDuration`. */
  val EnforceRetentionKey = "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration"

  private def enforceRetention(spark: ClassicSession): Boolean =
    !spark.conf.getOption(EnforceRetentionKey).exists(_.trim.equalsIgnoreCase("false"))

  /** A timestamp as delta-spark shows it in RESTORE's parameters and errors (`java.sql.Timestamp`'s form). */
  private[commands] def shown(ms: Long): String = new java.sql.Timestamp(ms).toString

  /** A data file's location: `path` (a URI, relative to the table root or absolute). */
  private def location(root: Path, path: String): Path = {
    val p = try new Path(new java.net.URI(path)) catch {
      case scala.util.control.NonFatal(_) => new Path(PathCodec.decodePath(path))
    }
    if (PathCodec.isAbsolute(path)) p else new Path(root, p)
  }

  /** Paths (as in the log) of `files` that no longer exist, at most 100, checked in parallel. */
  private[commands] def missingFiles(deltaLog: DeltaLog, hadoopConf: Configuration, files: Seq[AddFile]): Seq[String] = {
    if (files.isEmpty) return Nil
    val root = deltaLog.tablePath
    val fs = root.getFileSystem(hadoopConf)
    def exists(f: AddFile): Boolean = fs.exists(location(root, f.path))
    if (files.size < 64) return files.filterNot(exists).map(_.path).take(100)
    val pool = Executors.newFixedThreadPool(math.min(16, math.max(2, Runtime.getRuntime.availableProcessors() * 4)))
    try {
      implicit val ec: ExecutionContext = ExecutionContext.fromExecutorService(pool)
      val chunks = files.grouped(math.max(256, files.size / 64)).toVector
      val checked = chunks.map(c => Future(c.filterNot(exists).map(_.path)))
      checked.flatMap(Await.result(_, Duration.Inf)).take(100)
    } finally {
      pool.shutdown()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
  }

  /**
   * The restored metadata with each identity column's high-water mark no lower (for a negative
   * step: no higher) than it is now, so that values generated after the restore never repeat.
   */
  private[commands] def withHighWaterMarks(restored: Metadata, current: Metadata): Metadata = {
    import org.apache.spark.sql.types.{DataType, MetadataBuilder, StructType}
    val parse = (s: String) => DataType.fromJson(s).asInstanceOf[StructType]
    val now = scala.util.Try(parse(current.schemaString)).toOption
      .map(_.fields.filter(WriteRules.isIdentity).map(f => f.name.toLowerCase -> f).toMap).getOrElse(Map.empty)
    if (now.isEmpty) return restored
    val schema = parse(restored.schemaString)
    var changed = false
    val fields = schema.fields.map { f =>
      now.get(f.name.toLowerCase).filter(_ => WriteRules.isIdentity(f)) match {
        case None => f
        case Some(cur) =>
          val (_, step, old) = WriteRules.identityParams(f)
          val (_, _, mark) = WriteRules.identityParams(cur)
          val merged = (old, mark) match {
            case (Some(o), Some(m)) => Some(if (step > 0) math.max(o, m) else math.min(o, m))
            case (o, m) => m.orElse(o)
          }
          if (merged == old || merged.isEmpty) f
          else {
            changed = true
            f.copy(metadata = new MetadataBuilder().withMetadata(f.metadata)
              .putLong(WriteRules.IdentityHighWaterMark, merged.get).build())
          }
      }
    }
    if (changed) restored.copy(schemaString = StructType(fields).json) else restored
  }

  /**
   * The clustering domain after the restore (delta-spark's rule): when the table has one now, it
   * gets the restored version's clustering columns (none when that version was not clustered).
   */
  private[commands] def clusteringDomain(restored: Snapshot, latest: Snapshot): Seq[DomainMetadata] = {
    val current = ClusteredTable.domain(latest)
    if (current.isEmpty) return Nil
    val columns = ClusteredTable.domain(restored).map(_.configuration).getOrElse(ClusteredTable.emptyDomain.configuration)
    if (current.get.configuration == columns) Nil else Seq(DomainMetadata(ClusteredTable.Domain, columns))
  }

}

/** RESTORE's refusals, with delta-spark 4.4's error classes and messages (plus the table). */
private[commands] object RestoreErrors {
  private def ts(ms: Long): String = RestoreCommand.shown(ms)

  def version(table: String, v: Long, earliest: Long, latest: Long): InvalidWriteException =
    new InvalidWriteException("DELTA_CANNOT_RESTORE_TABLE_VERSION", table,
      s"Cannot restore table to version $v. Available versions: [$earliest, $latest]. (table $table)")

  def timestampEarlier(table: String, ms: Long, earliestMs: Long): InvalidWriteException =
    new InvalidWriteException("DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER", table,
      s"Cannot restore table to timestamp (${ts(ms)}) as it is before the earliest version available. " +
        s"Please use a timestamp after (${ts(earliestMs)}). (table $table)")

  def timestampGreater(table: String, ms: Long, latestMs: Long): InvalidWriteException =
    new InvalidWriteException("DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER", table,
      s"Cannot restore table to timestamp (${ts(ms)}) as it is after the latest version available. " +
        s"Please use a timestamp before (${ts(latestMs)}). (table $table)")

  def beyondRetention(table: String, version: Long, retentionMs: Long): InvalidWriteException =
    new InvalidWriteException("DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION", table,
      s"Cannot time travel beyond delta.deletedFileRetentionDuration (${retentionMs / 3600000L} HOURS) set on the " +
        s"table. Table $table: version $version is older, so VACUUM may have deleted its files. Restore a more recent " +
        s"version, or set ${RestoreCommand.EnforceRetentionKey}=false to try anyway (files still missing are named).")

  def missingFiles(table: String, version: Long, missing: Seq[String]): InvalidWriteException =
    new InvalidWriteException("DELTALOG_RESTORE_MISSING_FILES", table,
      s"Table $table: not all files of version $version are available in the file system (deleted by hand " +
        s"or by VACUUM). Missing files (first 100): ${missing.mkString(", ")}. Restore a more recent version " +
        "or timestamp, or set spark.sql.files.ignoreMissingFiles=true to restore without them (their rows are lost).")
}
