package io.deltalog.log

import scala.collection.mutable

import io.deltalog.exceptions.{CorruptLogFileException, TimestampOutOfRangeException}
import org.apache.hadoop.fs.FileStatus

/**
 * In-commit-timestamp (ICT) settings of a table (digest §3.5, §6.6).
 *
 * @param enabled             `delta.enableInCommitTimestamps`
 * @param enablementVersion   `delta.inCommitTimestampEnablementVersion`: first version carrying an
 *                            ICT; `None` with `enabled` means ICT since the table's creation
 * @param enablementTimestamp `delta.inCommitTimestampEnablementTimestamp`: ICT of that version
 */
final case class IctConfig(enabled: Boolean, enablementVersion: Option[Long], enablementTimestamp: Option[Long]) {
  /** First version whose commit timestamp is its ICT (`None`: ICT not used). */
  def firstIctVersion: Option[Long] = if (enabled) Some(enablementVersion.getOrElse(0L)) else None
}

object IctConfig {
  val Disabled: IctConfig = IctConfig(enabled = false, None, None)

  val EnableKey = "delta.enableInCommitTimestamps"
  val EnablementVersionKey = "delta.inCommitTimestampEnablementVersion"
  val EnablementTimestampKey = "delta.inCommitTimestampEnablementTimestamp"

  /** From table properties (`metaData.configuration`); unparsable numbers are treated as absent. */
  def fromProperties(props: collection.Map[String, String]): IctConfig = {
    def long(k: String): Option[Long] = props.get(k).flatMap(s => scala.util.Try(s.trim.toLong).toOption)
    val enabled = props.get(EnableKey).exists(_.trim.equalsIgnoreCase("true"))
    IctConfig(enabled, long(EnablementVersionKey), long(EnablementTimestampKey))
  }
}

/**
 * Commit timestamps of a range of commits, for time travel by timestamp (digest §3.5).
 *
 * Versions below the ICT enablement version use their commit file's modification time,
 * *monotonized* (walking in version order, an mtime ≤ the previous adjusted one becomes
 * previous + 1). Versions at or above it use `commitInfo.inCommitTimestamp`, obtained lazily
 * through `ictOf` (only O(log n) commits are read by a search).
 *
 * @param commits FileStatus of the commit files (any order; non-commit names are rejected)
 * @param ictOf   in-commit timestamp of a version (reads its commitInfo); called only for versions
 *                where ICT applies; `None` there is a corrupt log
 * @param ict     the table's ICT settings (use the latest snapshot's metadata)
 * @param table   table path for error messages
 */
final class CommitTimestamps(
    commits: Seq[FileStatus],
    ictOf: Long => Option[Long] = _ => None,
    ict: IctConfig = IctConfig.Disabled,
    table: String = "<table>") {

  private val sorted: Array[(Long, FileStatus)] =
    commits.map(s => FileNames.deltaVersion(s) -> s).sortBy(_._1).toArray
  require(sorted.nonEmpty, "at least one commit is needed")

  private val versionArray: Array[Long] = sorted.map(_._1)

  /** Commit versions, ascending. */
  val versions: IndexedSeq[Long] = versionArray.toIndexedSeq

  /** Index of the first commit that uses ICT (`sorted.length` when none does). */
  private val ictStart: Int = ict.firstIctVersion match {
    case None => sorted.length
    case Some(v) => val i = sorted.indexWhere(_._1 >= v); if (i < 0) sorted.length else i
  }

  /** Monotonized mtimes of the commits before `ictStart`. */
  private val adjustedMtimes: Array[Long] = {
    val out = new Array[Long](ictStart)
    var prev = Long.MinValue
    var i = 0
    while (i < ictStart) {
      val m = sorted(i)._2.getModificationTime
      val adj = if (prev != Long.MinValue && m <= prev) prev + 1 else m
      out(i) = adj
      prev = adj
      i += 1
    }
    out
  }

  private val ictCache = mutable.HashMap.empty[Int, Long]

  private def tsAt(i: Int): Long =
    if (i < ictStart) adjustedMtimes(i)
    else ictCache.synchronized(ictCache.getOrElseUpdate(i, {
      val (v, st) = sorted(i)
      ictOf(v).getOrElse(throw new CorruptLogFileException(st.getPath.toString,
        s"in-commit timestamps are enabled from version ${ict.firstIctVersion.getOrElse(0L)} " +
          s"but commit $v has no commitInfo.inCommitTimestamp"))
    }))

  def earliestVersion: Long = sorted.head._1
  def latestVersion: Long = sorted.last._1

  /** Commit timestamp of `version` (must be one of [[versions]]). */
  def timestampOf(version: Long): Long = {
    val i = java.util.Arrays.binarySearch(versionArray, version)
    require(i >= 0, s"version $version is not among the listed commits")
    tsAt(i)
  }

  def earliestTimestamp: Long = tsAt(0)
  def latestTimestamp: Long = tsAt(sorted.length - 1)

  /**
   * The latest version whose commit timestamp is ≤ `timestampMs`.
   *
   * When ICT was enabled on a table with history, the search stays on one side of the
   * enablement: versions ≥ the enablement version when `timestampMs` ≥ the enablement timestamp,
   * otherwise the earlier (mtime) versions.
   *
   * @param allowAfterLatest return the latest version for a timestamp after the last commit
   *                         (instead of failing)
   * @throws TimestampOutOfRangeException before the first commit, or after the last one unless
   *                                      `allowAfterLatest`
   */
  def versionAtOrBefore(timestampMs: Long, allowAfterLatest: Boolean = false): Long = {
    val n = sorted.length
    if (timestampMs > latestTimestamp && !allowAfterLatest) outOfRange(timestampMs)
    // Choose the index range to search.
    val (lo, hi) =
      if (ictStart == 0 || ictStart == n) (0, n - 1)
      else {
        val boundary = ict.enablementTimestamp.getOrElse(tsAt(ictStart))
        if (timestampMs >= boundary) (ictStart, n - 1) else (0, ictStart - 1)
      }
    // Greatest index in [lo, hi] with ts ≤ T.
    var l = lo
    var h = hi
    var found = -1
    while (l <= h) {
      val mid = (l + h) >>> 1
      if (tsAt(mid) <= timestampMs) { found = mid; l = mid + 1 } else h = mid - 1
    }
    if (found < 0) {
      // Only possible before the first commit of the searched range.
      if (lo == 0) outOfRange(timestampMs)
      // T ≥ enablement timestamp but < ICT of the enablement version: inconsistent properties;
      // the last pre-ICT version is the best answer.
      sorted(lo - 1)._1
    } else sorted(found)._1
  }

  private def outOfRange(t: Long): Nothing =
    throw new TimestampOutOfRangeException(table, t, earliestTimestamp, latestTimestamp)
}

object CommitTimestamps {
  def apply(
      commits: Seq[FileStatus],
      ictOf: Long => Option[Long] = _ => None,
      ict: IctConfig = IctConfig.Disabled,
      table: String = "<table>"): CommitTimestamps =
    new CommitTimestamps(commits, ictOf, ict, table)
}
