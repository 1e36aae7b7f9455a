package io.deltalog.log

import io.deltalog.actions.{ActionCodec, CommitInfo}
import io.deltalog.exceptions.TableNotFoundException

/** One commit of a table's history: its version, commit timestamp (ms) and `commitInfo` (None: it has none). */
final case class HistoryEntry(version: Long, timestamp: Long, commitInfo: Option[CommitInfo])

/**
 * A table's history, newest first, as `DESCRIBE HISTORY` shows it: the log is listed once and only
 * the commit files of the versions returned are read (for `LIMIT n`, the n newest), never the
 * table's state. Timestamps are the ones time travel uses ([[CommitTimestamps]]: in-commit
 * timestamps where enabled, else monotonized file modification times), so `TIMESTAMP AS OF` a
 * row's timestamp gives that row's version.
 */
object TableHistory {

  /**
   * @param limit  at most this many entries (the newest); None for every commit still in the log
   * @param upTo   the newest version to include (None: the latest)
   */
  def apply(log: DeltaLog, limit: Option[Int] = None, upTo: Option[Long] = None): Seq[HistoryEntry] = {
    require(limit.forall(_ >= 0), s"history limit must be >= 0, got ${limit.get}")
    val timestamps = log.commitTimestamps()
    val versions = timestamps.versions.reverseIterator.filter(v => upTo.forall(v <= _))
    val chosen = limit.fold(versions.toVector)(n => versions.take(n).toVector)
    chosen.map(v => HistoryEntry(v, timestamps.timestampOf(v), commitInfoOf(log, v)))
  }

  /** The `commitInfo` of commit `version` (read from its file; usually its first line). */
  def commitInfoOf(log: DeltaLog, version: Long): Option[CommitInfo] = {
    val path = FileNames.deltaFile(log.logPath, version)
    val lines = try LogStore(log.fs).readLines(path) catch {
      case e: java.io.FileNotFoundException =>
        throw new TableNotFoundException(log.tablePath.toString, s"commit file $path is gone (${e.getMessage})")
    }
    try {
      var n = 0
      while (lines.hasNext) {
        n += 1
        ActionCodec.parseLine(lines.next(), path.toString, n) match {
          case Some(c: CommitInfo) => return Some(c)
          case _ =>
        }
      }
      None
    } finally lines.close()
  }
}
