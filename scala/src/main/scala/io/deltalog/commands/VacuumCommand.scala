package io.deltalog.commands

import java.net.URI
import java.util.concurrent.{ExecutorService, Executors, ThreadFactory, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.collection.mutable

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.deltalog.actions.DeletionVectorDescriptor
import io.deltalog.exceptions.TableNotFoundException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.{ClientCapabilities, Protocol}
import io.deltalog.txn.{Clock, OptimisticTransaction, Operation}

/**
 * How a VACUUM runs.
 *
 * @param retentionHours        RETAIN n HOURS (rounded to whole hours, as delta-spark); None: the
 *                              table's `delta.deletedFileRetentionDuration` (default 1 week)
 * @param lite                  take the candidates from the log ([[VacuumLite]]) instead of a listing
 * @param retentionCheckEnabled refuse a retention below the table's (`spark.deltalog.` or
 *                              `spark.databricks.delta.retentionDurationCheck.enabled`)
 * @param loggingEnabled        write the VACUUM START / END commits; None: on the file systems
 *                              delta-spark logs on (local, HDFS, Azure, GCS; not S3)
 */
final case class VacuumOptions(
    retentionHours: Option[Double] = None,
    dryRun: Boolean = false,
    lite: Boolean = false,
    retentionCheckEnabled: Boolean = true,
    loggingEnabled: Option[Boolean] = None)

/** Live counters of a running VACUUM (polled by the CLI's progress line). */
final class VacuumProgress {
  @volatile var phase: String = "starting"
  val listed = new AtomicLong()
  val toDelete = new AtomicLong()
  val deleted = new AtomicLong()
}

/**
 * What a VACUUM found or did.
 *
 * @param tablePath     the qualified table root
 * @param paths         qualified paths of the files and directories that were (or, dry run, would be) deleted
 * @param deleted       files and directories deleted (0 on a dry run)
 * @param directories   directories under the root, the root included (`numVacuumedDirectories`)
 */
final case class VacuumResult(
    tablePath: String,
    dryRun: Boolean,
    vacuumType: String,
    paths: Seq[String],
    sizeOfDataToDelete: Long,
    deleted: Long,
    directories: Long,
    deleteBeforeTimestamp: Long)

/**
 * VACUUM: deletes the files under the table root that no version within the retention references
 * and that are older than it, as delta-spark 4.4's `VacuumCommand.gc`:
 *
 *  1. Kept: every live file and its deletion vector file, every `remove` tombstone younger than the
 *     horizon (`now − retention`, by `deletionTimestamp`) and its deletion vector file, and every
 *     directory on their paths. Only paths under the root count ([[VacuumPaths]]).
 *  2. Candidates: FULL lists the root ([[TableFileListing]]: hidden names kept, `_delta_log` never
 *     listed, symbolic links never followed); LITE reads them from the log ([[VacuumLite]]).
 *  3. Deleted: candidate files modified before the horizon that are not kept, and directories
 *     that hold no such file and are not kept (deleted only when empty) — [[VacuumDeleter]], in
 *     parallel on a bounded pool (`-Ddeltalog.vacuum.threads`, default 8).
 *
 * A real run commits `VACUUM START` (what it will delete) before deleting and `VACUUM END` after
 * (commitInfo only) and writes `_delta_log/_last_vacuum_info`.
 */
final class VacuumCommand(
    deltaLog: DeltaLog,
    table: String,
    options: VacuumOptions,
    progress: VacuumProgress = new VacuumProgress,
    clock: Clock = Clock.system) {
  import VacuumCommand._

  def run(): VacuumResult = {
    val snapshot = deltaLog.update()
    if (snapshot.version < 0) throw new TableNotFoundException(table, s"${deltaLog.logPath} has no commit; VACUUM needs a Delta table")
    Protocol.checkCanWrite(snapshot.protocol, ClientCapabilities.deltalog, table)
    val defaultRetention = snapshot.deletedFileRetentionMillis
    val specified = options.retentionHours.map(h => TimeUnit.HOURS.toMillis(math.round(h)))
    checkRetention(specified, defaultRetention)
    val deleteBefore = clock.nowMillis() - specified.getOrElse(defaultRetention)
    val root = deltaLog.tablePath
    val paths = new VacuumPaths(root)
    val partitionColumns = snapshot.metadata.partitionColumns
    val icebergHidden = snapshot.metadata.configuration.get("delta.universalFormat.enabledFormats")
      .exists(_.split(',').map(_.trim.toLowerCase).contains("iceberg"))
    val hidden: String => Boolean = VacuumPaths.isHidden(_, partitionColumns, icebergHidden)
    val vacuumType = if (options.lite) "LITE" else "FULL"
    log.info(s"VACUUM $vacuumType (dryRun = ${options.dryRun}) of $root: files older than " +
      s"${java.time.Instant.ofEpochMilli(deleteBefore)} no version within the retention references")

    val pool = newPool()
    try {
      val deleter = new VacuumDeleter(deltaLog.fs, root, pool, progress.deleted)
      val valid = keptPaths(snapshot, paths, deleteBefore)
      progress.phase = "listing"
      val latestOutside = if (options.lite) VacuumLite.latestCommitOutsideRetention(deltaLog, deleteBefore) else None
      val (entries, dirCount) =
        if (options.lite) {
          val e = VacuumLite.eligible(deltaLog, snapshot, table, paths, hidden, latestOutside)
          progress.listed.addAndGet(e.files.size)
          // candidates from the log: only entries in the table's own directories, not modified since
          val onDisk = e.files.filter(f => f.modificationTime >= deleteBefore || valid.contains(f.path) ||
            (deleter.isDeletable(f.path) && deleter.olderThan(f.path, deleteBefore)))
          (onDisk, 1L)
        } else {
          val listed = new TableFileListing(deltaLog.fs, root, hidden, pool, progress.listed).list()
          (listed, listed.count(_.isDir) + 1L)
        }
      val (files, dirs, size) = diff(entries, valid, deleteBefore)
      val (delFiles, delDirs) = (files, dirs)
      progress.toDelete.set(delFiles.size + delDirs.size)
      val qualified = (delFiles ++ delDirs).map(qualify(root, _))
      val result = VacuumResult(root.toString, options.dryRun, vacuumType, qualified, size, 0L, dirCount, deleteBefore)
      if (options.dryRun) {
        log.info(s"Found ${qualified.size} files ($size bytes) and directories in a total of $dirCount directories " +
          s"that are safe to delete ($root).")
        progress.phase = "done"
        return result
      }
      val logging = options.loggingEnabled.getOrElse(LoggedSchemes.contains(Option(root.toUri.getScheme).getOrElse("")))
      if (logging) {
        OptimisticTransaction.start(deltaLog, clock).commit(Nil, Operation.vacuumStart(options.retentionCheckEnabled,
          specified, defaultRetention, qualified.size.toLong, size))
      }
      progress.phase = "deleting"
      val deleted = try deleter.delete(delFiles, delDirs.sortBy(d => -d.count(_ == '/'))) catch {
        case t: Throwable =>
          if (logging) OptimisticTransaction.start(deltaLog, clock).commit(Nil, Operation.vacuumEnd(None))
          throw t
      }
      if (logging) {
        OptimisticTransaction.start(deltaLog, clock).commit(Nil, Operation.vacuumEnd(Some((deleted, dirCount))))
      }
      VacuumLite.writeLastVacuumInfo(deltaLog, latestOutside)
      log.info(s"Deleted $deleted files and directories in a total of $dirCount directories ($root).")
      progress.phase = "done"
      result.copy(deleted = deleted)
    } finally pool.shutdownNow()
  }

  /** delta-spark's checks: no negative retention; none below the table's while the check is on. */
  private def checkRetention(specified: Option[Long], defaultRetention: Long): Unit = {
    if (specified.exists(_ < 0)) {
      throw new VacuumException("DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE", table,
        s"Retention period for Vacuum can't be less than 0 hours (table $table). Nothing was deleted.")
    }
    if (options.retentionCheckEnabled && specified.exists(_ < defaultRetention)) {
      val hours = (defaultRetention + TimeUnit.HOURS.toMillis(1) - 1) / TimeUnit.HOURS.toMillis(1)
      throw new VacuumException("DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", table,
        "The specified VACUUM retention period is too low and may corrupt this Delta table if any writes are in " +
          s"progress: table $table keeps removed files for $hours hours (delta.deletedFileRetentionDuration) and " +
          s"RETAIN asked for ${options.retentionHours.get} hours. Nothing was deleted; use a retention period of at " +
          s"least $hours hours.\n\nIf no operations (insert, upsert, delete, optimize) are running, you can disable " +
          "this safety check by setting:\nspark.deltalog.retentionDurationCheck.enabled = false\n(or delta-spark's " +
          "spark.databricks.delta.retentionDurationCheck.enabled = false)")
    }
  }
}

object VacuumCommand {
  private val log = LoggerFactory.getLogger(classOf[VacuumCommand])

  /** Schemes delta-spark 4.4 writes VACUUM START / END commits on by default. */
  val LoggedSchemes: Set[String] = Set("wasbs", "wasbss", "abfs", "abfss", "adl", "gs", "file", "hdfs")

  val ThreadsProperty = "deltalog.vacuum.threads"

  private def newPool(): ExecutorService = {
    val n = math.max(1, Integer.getInteger(ThreadsProperty, 8).intValue())
    val count = new AtomicInteger()
    Executors.newFixedThreadPool(n, new ThreadFactory {
      def newThread(r: Runnable): Thread = {
        val t = new Thread(r, s"deltalog-vacuum-${count.incrementAndGet()}")
        t.setDaemon(true)
        t
      }
    })
  }

  /** Relative paths VACUUM must keep: referenced files, their deletion vectors, the directories on their way. */
  private[commands] def keptPaths(snapshot: Snapshot, paths: VacuumPaths, deleteBefore: Long): java.util.HashSet[String] = {
    val kept = new java.util.HashSet[String](snapshot.numFiles.toInt * 2 + 16)
    val root = snapshot.deltaLog.tablePath.toString
    def keep(path: String): Unit = paths.protectedForms(path).foreach { r =>
      if (kept.add(r)) VacuumPaths.ancestors(r).foreach(kept.add)
    }
    def keepDv(dv: DeletionVectorDescriptor): Unit =
      if (dv != null && dv.isOnDisk) {
        try keep(dv.absolutePath(root)) catch { case _: IllegalArgumentException => }
      }
    snapshot.state.foreachChunk { (chunk, deleted) =>
      var i = 0
      while (i < chunk.length) {
        if (deleted == null || !deleted.get(i)) {
          keep(chunk.path(i))
          keepDv(chunk.deletionVectorAt(i))
        }
        i += 1
      }
    }
    snapshot.state.tombstones.foreach { r =>
      if (r.delTimestamp >= deleteBefore) {
        keep(r.path)
        r.deletionVector.foreach(keepDv)
      }
    }
    kept
  }

  /**
   * (files, directories, bytes) to delete among `entries`: files modified before `deleteBefore`
   * that are not kept, and directories (listed, or on the way of such a file) with no such file
   * below them that are not kept — delta-spark's "count = 1" rule.
   */
  private[commands] def diff(entries: Seq[ListedEntry], kept: java.util.HashSet[String],
      deleteBefore: Long): (Seq[String], Seq[String], Long) = {
    val counts = mutable.HashMap.empty[String, Int]
    entries.foreach(e => if (e.isDir) counts(e.path) = counts.getOrElse(e.path, 0) + 1)
    val old = entries.filter(e => !e.isDir && e.modificationTime < deleteBefore)
    old.foreach(e => VacuumPaths.ancestors(e.path).foreach(a => counts(a) = counts.getOrElse(a, 0) + 1))
    val files = old.filterNot(e => kept.contains(e.path)).groupBy(_.path).values.map(_.head).toSeq.sortBy(_.path)
    val dirs = counts.iterator.collect { case (d, 1) if !kept.contains(d) => d }.toSeq.sorted
    (files.map(_.path), dirs, files.map(_.size).sum)
  }

  /** The qualified path of `relative` under `root`, as delta-spark shows it (decoded: `file:/t/a b/x`). */
  def qualify(root: Path, relative: String): String = {
    val u = root.toUri
    new Path(new URI(u.getScheme, u.getAuthority, u.getPath.stripSuffix("/") + "/" + relative, null, null)).toString
  }
}
