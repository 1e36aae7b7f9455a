package io.deltalog.commands

import org.apache.hadoop.fs.{FileStatus, Path}

import io.deltalog.actions.CommitInfo
import io.deltalog.log.{CommitReader, DeltaLog, FileNames, LogFile}

/**
 * Metadata cleanup for `DROP FEATURE ... TRUNCATE HISTORY` (digest §4.5 with the drop's own
 * retention, `delta.dropFeatureTruncateHistory.retentionDuration`): the
 * newest complete checkpoint at or before the newest commit older than the cut-off is kept with
 * its commit and everything after; every older commit, checkpoint, checksum and compaction is
 * deleted, oldest first (readers tolerate a log whose oldest files are missing).
 */
private[deltalog] object HistoryTruncation {

  /**
   * Cut-off of a truncation at `nowMs`: `nowMs - retentionMs` (not rounded: with a zero retention
   * delta-spark 4.4 keeps only the checkpoint it has just written).
   */
  def cutoff(nowMs: Long, retentionMs: Long): Long = nowMs - retentionMs

  /** The log's recognised files, by kind. */
  private def listing(log: DeltaLog): Seq[(LogFile, FileStatus)] =
    if (!log.fs.exists(log.logPath)) Nil
    else log.fs.listStatus(log.logPath).toSeq.flatMap(s => FileNames.parse(s).map(_ -> s))

  /** Commit timestamp: the in-commit timestamp when the commit has one, else the file's modification time. */
  private def commitTimestamp(reader: CommitReader, status: FileStatus): Long =
    try {
      reader.read(status).commitInfo.flatMap((c: CommitInfo) => c.inCommitTimestamp)
        .getOrElse(status.getModificationTime)
    } catch { case scala.util.control.NonFatal(_) => status.getModificationTime }

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
   * Deletes the history older than the cut-off. Returns the earliest version whose state can
   * still be reconstructed afterwards (the kept checkpoint, or the earliest commit when nothing
   * was deleted).
   */
  def truncate(log: DeltaLog, cutoffMs: Long): Long = {
    val files = listing(log)
    val commits = files.collect { case (c: LogFile.Commit, s) => c.version -> s }.sortBy(_._1)
    if (commits.isEmpty) return 0L
    val earliest = commits.head._1
    val reader = new CommitReader(log.fs)
    // Commit timestamps only grow (ICT) or nearly so (file times): scan from the oldest.
    val older = commits.takeWhile { case (_, s) => commitTimestamp(reader, s) <= cutoffMs }
    if (older.isEmpty) return earliest
    val cutoffCommit = older.last._1
    val keep = completeCheckpoints(files).filter(_ <= cutoffCommit)
    if (keep.isEmpty) return earliest
    val checkpoint = keep.max
    val doomed: Seq[(Long, Path)] = files.collect {
      case (c: LogFile.Commit, s) if c.version < checkpoint => c.version -> s.getPath
      case (c: LogFile.Checkpoint, s) if c.version < checkpoint => c.version -> s.getPath
      case (c: LogFile.Crc, s) if c.version < checkpoint => c.version -> s.getPath
      case (c: LogFile.Compaction, s) if c.startVersion <= checkpoint => c.startVersion -> s.getPath
    }
    doomed.sortBy(_._1).foreach { case (_, p) => log.fs.delete(p, false) }
    checkpoint
  }
}
