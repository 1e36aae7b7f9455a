package io.deltalog.log

import java.time.{Instant, ZoneOffset}
import java.time.temporal.ChronoUnit

import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FileStatus, Path}
import org.slf4j.LoggerFactory

import io.deltalog.actions.{Action, CommitInfo, Metadata, SidecarFile}

/**
 * Metadata cleanup (digest §4.5): the newest complete checkpoint at or before the newest commit
 * older than a cut-off is kept with its own commit and everything after; every older commit,
 * checkpoint, checksum, compaction and staged commit is deleted, oldest first (readers tolerate a
 * log whose oldest files are missing), then the sidecars no remaining checkpoint references and
 * older than the cut-off. Every version newer than the cut-off stays reconstructable, and the
 * latest checkpoint is never deleted.
 *
 * Two callers: log retention after an automatic checkpoint ([[cleanUpExpiredLogs]]:
 * `delta.enableExpiredLogCleanup`, `delta.logRetentionDuration`, cut-off rounded down to midnight
 * UTC as delta-spark does) and `DROP FEATURE … TRUNCATE HISTORY` ([[truncate]] with the drop's own
 * retention, not rounded).
 */
private[deltalog] object MetadataCleanup {
  private val log = LoggerFactory.getLogger(getClass)

  val EnableKey = "delta.enableExpiredLogCleanup"
  val RetentionKey = "delta.logRetentionDuration"
  val DefaultRetentionMs: Long = 30L * 24 * 3600 * 1000
  val ProtectBeforeKey = "delta.requireCheckpointProtectionBeforeVersion"

  /** Cut-off of a truncation at `nowMs`: `nowMs - retentionMs`. */
  def cutoff(nowMs: Long, retentionMs: Long): Long = nowMs - retentionMs

  /** Cut-off of log retention: midnight UTC of `nowMs - retentionMs` (delta-spark's day rounding). */
  def retentionCutoff(nowMs: Long, retentionMs: Long): Long =
    Instant.ofEpochMilli(nowMs - retentionMs).atOffset(ZoneOffset.UTC).truncatedTo(ChronoUnit.DAYS).toInstant.toEpochMilli

  /** `delta.enableExpiredLogCleanup` (default true). */
  def enabled(metadata: Metadata): Boolean =
    metadata.configuration.get(EnableKey).forall(!_.trim.equalsIgnoreCase("false"))

  /** `delta.logRetentionDuration` (default 30 days). */
  def retentionMs(metadata: Metadata): Long =
    metadata.configuration.get(RetentionKey).flatMap(IntervalProperty.parseMillis).getOrElse(DefaultRetentionMs)

  /**
   * Log retention after a checkpoint of `snapshot`: deletes the expired history when the table
   * enables it. With `checkpointProtection`, history before
   * `delta.requireCheckpointProtectionBeforeVersion` is only deleted all at once (the kept
   * checkpoint is at or after that version), never in part. Returns the files deleted.
   */
  def cleanUpExpiredLogs(deltaLog: DeltaLog, snapshot: Snapshot, nowMs: Long): Int = {
    val metadata = snapshot.metadata
    if (!enabled(metadata)) return 0
    val protectBefore =
      if (!snapshot.protocol.writerFeatures.exists(_.contains("checkpointProtection"))) 0L
      else metadata.configuration.get(ProtectBeforeKey).flatMap(_.trim.toLongOption).getOrElse(0L)
    val cut = retentionCutoff(nowMs, retentionMs(metadata))
    val deleted = cleanUp(deltaLog, cut, protectBefore)._2
    if (deleted > 0) {
      log.info(s"Table ${deltaLog.tablePath}: deleted $deleted log files older than ${Instant.ofEpochMilli(cut)} " +
        s"($RetentionKey = ${metadata.configuration.getOrElse(RetentionKey, "interval 30 days")}).")
    }
    deleted
  }

  /**
   * Deletes the history older than the cut-off. Returns the earliest version whose state can
   * still be reconstructed afterwards (the kept checkpoint, or the earliest commit when nothing
   * was deleted).
   */
  def truncate(deltaLog: DeltaLog, cutoffMs: Long): Long = cleanUp(deltaLog, cutoffMs, 0L)._1

  private def cleanUp(deltaLog: DeltaLog, cutoffMs: Long, protectBefore: Long): (Long, Int) = {
    val files = listing(deltaLog, deltaLog.logPath)
    val commits = files.collect { case (c: LogFile.Commit, s) => c.version -> s }.sortBy(_._1)
    if (commits.isEmpty) return (0L, 0)
    val earliest = commits.head._1
    val reader = new CommitReader(deltaLog.fs)
    // Commit timestamps only grow (ICT) or nearly so (file times): scan from the oldest.
    val older = commits.takeWhile { case (_, s) => commitTimestamp(reader, s) <= cutoffMs }
    if (older.isEmpty) return (earliest, 0)
    val cutoffCommit = older.last._1
    val checkpoints = completeCheckpoints(files)
    val keep = checkpoints.filter(_ <= cutoffCommit)
    if (keep.isEmpty) return (earliest, 0)
    val checkpoint = keep.max
    if (checkpoint < protectBefore) return (earliest, 0)
    val staged = listing(deltaLog, FileNames.stagedCommitDir(deltaLog.logPath))
    val doomed: Seq[(Long, Path)] = (files ++ staged).collect {
      case (c: LogFile.Commit, s) if c.version < checkpoint => c.version -> s.getPath
      case (c: LogFile.Checkpoint, s) if c.version < checkpoint => c.version -> s.getPath
      case (c: LogFile.Crc, s) if c.version < checkpoint => c.version -> s.getPath
      case (c: LogFile.Compaction, s) if c.startVersion <= checkpoint => c.startVersion -> s.getPath
      case (c: LogFile.StagedCommit, s) if c.version <= checkpoint => c.version -> s.getPath
    }
    doomed.sortBy(_._1).foreach { case (_, p) => deltaLog.fs.delete(p, false) }
    val remaining = files.filter { case (f, _) => checkpointVersion(f).exists(_ >= checkpoint) }.map(_._2)
    (checkpoint, doomed.size + deleteUnreferencedSidecars(deltaLog, remaining, cutoffMs))
  }

  /** The log's (or a sub-directory's) recognised files, by kind. */
  private def listing(deltaLog: DeltaLog, dir: Path): Seq[(LogFile, FileStatus)] =
    if (!deltaLog.fs.exists(dir)) Nil
    else deltaLog.fs.listStatus(dir).toSeq.flatMap(s => FileNames.parse(s).map(_ -> s))

  private def checkpointVersion(f: LogFile): Option[Long] = f match {
    case c: LogFile.Checkpoint.Classic => Some(c.version)
    case m: LogFile.Checkpoint.MultiPart => Some(m.version)
    case u: LogFile.Checkpoint.Uuid => Some(u.version)
    case _ => None
  }

  /** Commit timestamp: the in-commit timestamp when the commit has one, else the file's modification time. */
  private def commitTimestamp(reader: CommitReader, status: FileStatus): Long =
    try {
      reader.read(status).commitInfo.flatMap((c: CommitInfo) => c.inCommitTimestamp)
        .getOrElse(status.getModificationTime)
    } catch { case NonFatal(_) => status.getModificationTime }

  /** Versions of complete checkpoints (classic, all parts of a multi-part set, or a V2 top file). */
  private def completeCheckpoints(files: Seq[(LogFile, FileStatus)]): Set[Long] = {
    val cps = files.collect { case (c: LogFile.Checkpoint, _) => c }
    val multi = cps.collect { case m: LogFile.Checkpoint.MultiPart => m }
      .groupBy(m => (m.version, m.numParts))
      .collect { case ((v, n), parts) if parts.map(_.part).toSet.size == n => v }
    (cps.collect {
      case c: LogFile.Checkpoint.Classic => c.version
      case u: LogFile.Checkpoint.Uuid => u.version
    } ++ multi).toSet
  }

  /**
   * Deletes the files of `_delta_log/_sidecars/` that no remaining checkpoint file references and
   * that are older than the cut-off (a younger one may belong to a checkpoint being written). When
   * a remaining checkpoint cannot be read, no sidecar is deleted.
   */
  private def deleteUnreferencedSidecars(deltaLog: DeltaLog, remaining: Seq[FileStatus], cutoffMs: Long): Int = {
    val dir = new Path(deltaLog.logPath, FileNames.SidecarDirName)
    if (!deltaLog.fs.exists(dir)) return 0
    val candidates = deltaLog.fs.listStatus(dir).toSeq.filter(s => s.isFile && s.getModificationTime <= cutoffMs)
    if (candidates.isEmpty) return 0
    val referenced =
      try remaining.flatMap(s => sidecarReferences(deltaLog, s)).map(p => deltaLog.fs.makeQualified(p)).toSet
      catch {
        case NonFatal(e) =>
          log.warn(s"Table ${deltaLog.tablePath}: not deleting sidecars, a checkpoint could not be read", e)
          return 0
      }
    val doomed = candidates.filterNot(s => referenced.contains(deltaLog.fs.makeQualified(s.getPath)))
    doomed.foreach(s => deltaLog.fs.delete(s.getPath, false))
    doomed.size
  }

  /** The sidecar files one checkpoint file names (its `sidecar` rows only; none for classic ones). */
  private def sidecarReferences(deltaLog: DeltaLog, status: FileStatus): Seq[Path] = {
    val found = Vector.newBuilder[Path]
    val instance = CheckpointInstance(FileNames.parse(status).flatMap(checkpointVersion).getOrElse(-1L), Seq(status))
    CheckpointReader.read(deltaLog.hadoopConf, instance, new ReplaySink {
      override def accept(version: Long, action: Action): Unit = action match {
        case s: SidecarFile => found += CheckpointReader.sidecarPath(deltaLog.logPath, s.path)
        case _ =>
      }
    }, CheckpointReadOptions(onlySidecars = true))
    found.result()
  }
}
