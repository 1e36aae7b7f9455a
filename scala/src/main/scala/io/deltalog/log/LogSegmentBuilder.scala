package io.deltalog.log

import java.io.FileNotFoundException

import scala.collection.mutable

import io.deltalog.exceptions.{TableNotFoundException, VersionNotContiguousException, VersionNotFoundException}
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

/**
 * Versions available in a log, from one listing.
 *
 * @param earliest earliest reconstructable version: 0 when `0.json` exists, otherwise the oldest
 *                 complete checkpoint (when the log has neither, the oldest commit version —
 *                 nothing is reconstructable then, but error messages need a number)
 * @param latest   newest commit or complete checkpoint version
 */
final case class VersionRange(earliest: Long, latest: Long)

/**
 * Selects the files that reconstruct a table version (digest §3.4): the newest *complete*
 * checkpoint at or below the target, then the contiguous commits after it.
 */
object LogSegmentBuilder {
  private val log = LoggerFactory.getLogger(getClass)

  /** Upper bound of missing versions carried by a [[VersionNotContiguousException]]. */
  private val MaxReportedMissing = 10000

  /** Commits and checkpoints found by one listing, in version order. */
  private final case class Listing(
      commits: Seq[(Long, FileStatus)],
      checkpoints: Seq[CheckpointInstance]) {
    def isEmpty: Boolean = commits.isEmpty && checkpoints.isEmpty
    lazy val commitVersions: Set[Long] = commits.iterator.map(_._1).toSet
    def latest: Long = (commits.lastOption.map(_._1).toSeq ++ checkpoints.lastOption.map(_.version)).max
    def range: VersionRange = {
      val earliest =
        if (commits.headOption.exists(_._1 == 0L)) 0L
        else checkpoints.headOption.map(_.version)
          .orElse(commits.headOption.map(_._1)).getOrElse(0L)
      VersionRange(earliest, latest)
    }
  }

  /**
   * Builds the segment for `targetVersion` (latest when `None`).
   *
   * @param tablePath used in error messages only
   * @param hint      `_last_checkpoint` content: listing starts at its version when the target is
   *                  not older; when the listing from there holds no usable checkpoint (hint
   *                  points to a deleted / incomplete checkpoint) the log is listed from 0
   * @throws TableNotFoundException         no `_delta_log`, or no commit / checkpoint in it
   * @throws VersionNotFoundException       target beyond the latest version, below the earliest
   *                                        reconstructable one, or with no commit file
   * @throws VersionNotContiguousException  commits missing between the base and the target
   */
  def build(
      fs: FileSystem,
      logPath: Path,
      tablePath: String,
      targetVersion: Option[Long],
      hint: Option[LastCheckpointInfo]): LogSegment =
    buildWithCommit(fs, logPath, tablePath, targetVersion, hint)._1

  /**
   * As [[build]], plus the listed commit file of the segment's version (None when that version
   * has no commit file left, only a checkpoint): what [[DeltaLog.update]] checks later to see
   * whether the log changed, without listing it.
   */
  def buildWithCommit(
      fs: FileSystem,
      logPath: Path,
      tablePath: String,
      targetVersion: Option[Long],
      hint: Option[LastCheckpointInfo]): (LogSegment, Option[FileStatus]) = {
    val store = LogStore(fs)
    val startFrom = hint match {
      case Some(h) if targetVersion.forall(_ >= h.version) => h.version
      case _ => 0L
    }

    var listing = list(store, logPath, tablePath, startFrom)
    var fullListing = startFrom == 0L
    if (!fullListing) {
      val usable = listing.checkpoints.exists(c => targetVersion.forall(c.version <= _))
      if (!usable) {
        log.info(s"Table $tablePath: no complete checkpoint found from the _last_checkpoint hint " +
          s"(version $startFrom); listing the log from version 0")
        listing = list(store, logPath, tablePath, 0L)
        fullListing = true
      }
    }
    if (listing.isEmpty) {
      throw new TableNotFoundException(tablePath, s"$logPath contains no commit or checkpoint files")
    }

    val latest = listing.latest
    def earliest: Long =
      if (fullListing) listing.range.earliest else listVersions(fs, logPath, tablePath).earliest
    def notFound(v: Long) = new VersionNotFoundException(tablePath, v, earliest, latest)

    val target = targetVersion.getOrElse(latest)
    if (target < 0 || target > latest) throw notFound(target)

    val checkpoint = listing.checkpoints.filter(_.version <= target).lastOption
    val base = checkpoint.map(_.version + 1).getOrElse(0L)
    val deltas = listing.commits.filter { case (v, _) => v >= base && v <= target }

    val targetPresent = checkpoint.exists(_.version == target) || deltas.lastOption.exists(_._1 == target)
    if (!targetPresent || (checkpoint.isEmpty && target < earliest)) throw notFound(target)
    val missing = missingVersions(deltas.map(_._1), base, target)
    if (missing.nonEmpty) {
      if (target < earliest) throw notFound(target)
      throw new VersionNotContiguousException(tablePath, missing)
    }

    val lastCommitTimestamp = deltas.lastOption.map(_._2.getModificationTime)
      .getOrElse(checkpoint.get.files.map(_.getModificationTime).max)
    val targetCommit = listing.commits.reverseIterator.find(_._1 == target).map(_._2)
    (LogSegment(logPath, target, deltas.map(_._2), checkpoint, lastCommitTimestamp), targetCommit)
  }

  /** Overload taking the log path's parent as the table path for messages. */
  def build(fs: FileSystem, logPath: Path, targetVersion: Option[Long],
      hint: Option[LastCheckpointInfo]): LogSegment =
    build(fs, logPath, tablePathOf(logPath), targetVersion, hint)

  /**
   * Earliest reconstructable and latest version from a full listing.
   *
   * @throws TableNotFoundException no `_delta_log`, or no commit / checkpoint in it
   */
  def listVersions(fs: FileSystem, logPath: Path, tablePath: String): VersionRange = {
    val listing = list(LogStore(fs), logPath, tablePath, 0L)
    if (listing.isEmpty) {
      throw new TableNotFoundException(tablePath, s"$logPath contains no commit or checkpoint files")
    }
    listing.range
  }

  def listVersions(fs: FileSystem, logPath: Path): VersionRange =
    listVersions(fs, logPath, tablePathOf(logPath))

  /**
   * The commit files of `fromVersion`, `fromVersion + 1`, ... up to the first missing version,
   * each found by one lookup instead of a listing of the log; None when there are more than `max`
   * (a listing is cheaper then). Only zero-padded names are looked up. For callers that need the
   * versions right after one they know exists: a commit is only written after its predecessor and
   * cleanup deletes the oldest files, so no newer commit exists after the first missing one.
   */
  def lookUpCommits(fs: FileSystem, logPath: Path, fromVersion: Long, max: Int): Option[Seq[FileStatus]] = {
    val store = LogStore(fs)
    val found = mutable.ArrayBuffer.empty[FileStatus]
    while (found.size < max) {
      store.statusOf(logPath, LogStore.commitFileName(fromVersion + found.size)) match {
        case Some(st) => found += st
        case None => return Some(found.toSeq)
      }
    }
    None
  }

  /** All commit files from `fromVersion`, in version order (for commit timestamps / history). */
  def listCommits(fs: FileSystem, logPath: Path, fromVersion: Long = 0L): Seq[FileStatus] =
    list(LogStore(fs), logPath, tablePathOf(logPath), fromVersion).commits.map(_._2)

  // ---------------------------------------------------------------------------------------------

  private def tablePathOf(logPath: Path): String =
    Option(logPath.getParent).getOrElse(logPath).toString

  private def list(store: LogStore, logPath: Path, tablePath: String, from: Long): Listing = {
    val files =
      try {
        // From 0, list everything: names written without zero-padding ("0.json") sort before
        // the "%020d." prefix. Versions are re-checked after parsing anyway.
        if (from == 0L) store.listFromName(logPath, "").toSeq else store.listFrom(logPath, from).toSeq
      }
      catch {
        case _: FileNotFoundException =>
          throw new TableNotFoundException(tablePath, s"$logPath does not exist")
      }
    val commits = mutable.ArrayBuffer.empty[(Long, FileStatus)]
    val classic = mutable.ArrayBuffer.empty[(Long, FileStatus)]
    val uuid = mutable.ArrayBuffer.empty[(Long, FileStatus)]
    // (version, numParts) -> part -> file
    val multi = mutable.Map.empty[(Long, Int), mutable.Map[Int, FileStatus]]
    files.foreach { st =>
      FileNames.parseName(LocalLogFile.nameOf(st)) match {
        case Some(LogFile.Commit(v)) if v >= from => commits += v -> st
        case Some(LogFile.Checkpoint.Classic(v)) if v >= from && st.getLen > 0 => classic += v -> st
        case Some(LogFile.Checkpoint.Uuid(v, _, _)) if v >= from && st.getLen > 0 => uuid += v -> st
        case Some(LogFile.Checkpoint.MultiPart(v, part, n)) if v >= from && st.getLen > 0 =>
          multi.getOrElseUpdate((v, n), mutable.Map.empty).update(part, st)
        case _ => // crc, compactions, zero-length checkpoints, unknown names: ignored
      }
    }
    val complete = mutable.ArrayBuffer.empty[((Long, Int, Int, String), CheckpointInstance)]
    classic.foreach { case (v, st) =>
      complete += ((v, 0, 1, LocalLogFile.nameOf(st)) -> CheckpointInstance(v, Seq(st)))
    }
    multi.foreach { case ((v, n), parts) =>
      if (parts.size == n) {
        val sorted = (1 to n).map(parts)
        complete += ((v, 1, n, LocalLogFile.nameOf(sorted.head)) -> CheckpointInstance(v, sorted))
      } else {
        log.debug(s"Ignoring incomplete multi-part checkpoint at version $v " +
          s"(${parts.size} of $n parts present)")
      }
    }
    uuid.foreach { case (v, st) =>
      complete += ((v, 2, 1, LocalLogFile.nameOf(st)) -> CheckpointInstance(v, Seq(st)))
    }
    // One checkpoint per version: the greatest by (format, numParts, name), like delta-spark.
    val perVersion = complete.groupBy(_._1._1).values.map(_.maxBy(_._1)._2).toSeq.sortBy(_.version)
    Listing(dedupCommits(commits), perVersion)
  }

  /**
   * `commits` sorted by version, one per version: for duplicate names of one version (e.g.
   * `1.json` and `0…01.json`) the longest (padded) name. Listed names are sorted, so the input is
   * usually in version order already.
   */
  private def dedupCommits(commits: mutable.ArrayBuffer[(Long, FileStatus)]): Seq[(Long, FileStatus)] = {
    var sorted = true
    var i = 1
    while (sorted && i < commits.length) { sorted = commits(i - 1)._1 < commits(i)._1; i += 1 }
    if (sorted) return commits.toSeq
    val bySize = commits.sortBy(c => (c._1, -LocalLogFile.nameOf(c._2).length))
    val out = mutable.ArrayBuffer.empty[(Long, FileStatus)]
    bySize.foreach(c => if (out.isEmpty || out.last._1 != c._1) out += c)
    out.toSeq
  }

  /** Versions in `[from, to]` absent from the sorted `present`, capped at [[MaxReportedMissing]]. */
  private def missingVersions(present: Seq[Long], from: Long, to: Long): Seq[Long] = {
    val out = mutable.ArrayBuffer.empty[Long]
    var expected = from
    val it = present.iterator
    while (it.hasNext && out.size < MaxReportedMissing) {
      val v = it.next()
      while (expected < v && out.size < MaxReportedMissing) { out += expected; expected += 1 }
      expected = v + 1
    }
    while (expected <= to && out.size < MaxReportedMissing) { out += expected; expected += 1 }
    out.toSeq
  }
}
