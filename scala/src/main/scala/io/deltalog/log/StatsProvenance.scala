package io.deltalog.log

import scala.collection.mutable

import io.deltalog.actions.{ActionCodec, AddFile, CommitInfo}

/**
 * The data files whose float/double upper bounds may leave NaN out ([[NanAwareWriters]]), found
 * from the commits that added them.
 *
 * Built lazily, only when a query's skipping or Parquet push-down would rely on such a bound, and
 * kept per [[DeltaLog]]: commit files never change, so later calls read only the commits written
 * since. A commit by a NaN-aware writer costs the read of its first line (where delta-spark,
 * deltalog and delta-rs put `commitInfo`); the others are read whole for their `add` paths.
 *
 * Files of commits that log cleanup already removed have no known writer. When no commit still
 * in the log was written by a NaN-blind writer they are trusted (the table's retained history is
 * Spark's); when one was, every file is treated as NaN-blind ([[NanBlindFiles.All]]).
 */
final class StatsProvenance private[log] (deltaLog: DeltaLog) {
  private val store = LogStore(deltaLog.fs)
  private var scannedUpTo = -1L
  private var truncated = false
  private val blindPaths = mutable.HashSet[String]()

  /** Number of commit files read so far (tests, diagnostics). */
  @volatile var commitsRead = 0L

  /** The table (`metaData.id`) the scanned commits belong to: a table deleted and re-created at the path starts over. */
  private var tableId: String = _

  /** The NaN-blind files of `snapshot` (a superset when newer commits were scanned already). */
  def nanBlindFiles(snapshot: Snapshot): NanBlindFiles = nanBlindFiles(snapshot.version, snapshot.metadata.id)

  /**
   * The NaN-blind files among those added at or before `version` of the table whose `metaData.id`
   * is `id` (a superset is returned after a newer scan).
   */
  def nanBlindFiles(version: Long, id: String): NanBlindFiles = synchronized {
    if (tableId != id) {
      tableId = id
      scannedUpTo = -1L
      truncated = false
      blindPaths.clear()
    }
    if (version > scannedUpTo) scan(version)
    if (blindPaths.isEmpty) NanBlindFiles.None
    else if (truncated) NanBlindFiles.All
    else NanBlindFiles.Paths(blindPaths.toSet)
  }

  private def scan(upTo: Long): Unit = {
    val commits = LogSegmentBuilder.listCommits(deltaLog.fs, deltaLog.logPath, scannedUpTo + 1)
      .map(s => FileNames.deltaVersion(s) -> s).filter(_._1 <= upTo).sortBy(_._1)
    if (scannedUpTo < 0 && commits.headOption.exists(_._1 > 0)) truncated = true
    commits.foreach { case (v, status) =>
      readCommit(status.getPath)
      scannedUpTo = v
    }
    scannedUpTo = math.max(scannedUpTo, upTo)
  }

  private def readCommit(path: org.apache.hadoop.fs.Path): Unit = {
    commitsRead += 1
    val lines = store.readLines(path)
    try {
      var commitInfo: Option[CommitInfo] = None
      val adds = mutable.ArrayBuffer[String]()
      var n = 0
      while (lines.hasNext) {
        n += 1
        ActionCodec.parseLine(lines.next(), path.getName, n) match {
          case Some(c: CommitInfo) =>
            commitInfo = Some(c)
            if (NanAwareWriters.countsNaN(commitInfo)) return
          case Some(a: AddFile) => adds += a.path
          case _ =>
        }
      }
      if (!NanAwareWriters.countsNaN(commitInfo)) blindPaths ++= adds
    } finally lines.close()
  }
}

/** Which live files may have NaN-blind float/double upper bounds. */
sealed trait NanBlindFiles {
  /** True when `path` (an `add.path` as in the log) may have NaN-blind upper bounds. */
  def contains(path: String): Boolean
  def isEmpty: Boolean
}

object NanBlindFiles {
  case object None extends NanBlindFiles {
    def contains(path: String): Boolean = false
    def isEmpty: Boolean = true
  }
  case object All extends NanBlindFiles {
    def contains(path: String): Boolean = true
    def isEmpty: Boolean = false
  }
  final case class Paths(paths: Set[String]) extends NanBlindFiles {
    def contains(path: String): Boolean = paths.contains(path)
    def isEmpty: Boolean = paths.isEmpty
  }
}
