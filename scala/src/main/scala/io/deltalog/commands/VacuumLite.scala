package io.deltalog.commands

import java.nio.charset.StandardCharsets

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.node.JsonNodeFactory
import org.apache.hadoop.fs.Path

import io.deltalog.actions.{Action, AddCDCFile, RemoveFile}
import io.deltalog.exceptions.TimestampOutOfRangeException
import io.deltalog.log.{CommitReader, DeltaLog, FileNames, LogSegmentBuilder, Snapshot}

/**
 * `VACUUM … LITE`: the deletion candidates come from the log instead of a listing — the `remove`
 * actions (their files and deletion-vector files, "modified" at their `deletionTimestamp`) and
 * `cdc` files of the commits since the last VACUUM up to the newest commit at or before the
 * retention horizon, as delta-spark 4.4 does. `_delta_log/_last_vacuum_info` remembers that
 * commit for the next run.
 *
 * Each path must lie under the table root ([[VacuumPaths.relativeInside]]) with no hidden segment
 * (so a hostile `remove` can never name `_delta_log/…`); anything else is ignored.
 */
object VacuumLite {
  val LastVacuumInfoName = "_last_vacuum_info"
  private val LatestOutsideKey = "latestCommitVersionOutsideOfRetentionWindow"

  /** Candidates (relative paths) and the commit range they came from. */
  final case class Eligible(files: Seq[ListedEntry], startVersion: Option[Long], endVersion: Option[Long])

  /** The newest commit at or before `deleteBefore` (None: every commit is younger). */
  def latestCommitOutsideRetention(deltaLog: DeltaLog, deleteBefore: Long): Option[Long] =
    try Some(deltaLog.commitTimestamps().versionAtOrBefore(deleteBefore, allowAfterLatest = true))
    catch { case _: TimestampOutOfRangeException => None }

  def eligible(deltaLog: DeltaLog, snapshot: Snapshot, table: String, paths: VacuumPaths,
      hidden: String => Boolean, latestOutside: Option[Long]): Eligible = {
    val end = latestOutside.getOrElse(return Eligible(Nil, None, None))
    val commits = LogSegmentBuilder.listCommits(deltaLog.fs, deltaLog.logPath, 0L)
    val earliest = commits.headOption.map(FileNames.deltaVersion).getOrElse(0L)
    val lastVacuumed = readLastVacuumInfo(deltaLog)
    if (earliest != 0 && lastVacuumed.forall(_ < earliest)) {
      throw new VacuumException("DELTA_CANNOT_VACUUM_LITE", table,
        s"VACUUM LITE cannot delete all eligible files as some files are not referenced by the Delta log. " +
          s"Please run VACUUM FULL. (Table $table: its log starts at version $earliest and no earlier VACUUM " +
          "recorded which commits it already covered; nothing was deleted.)")
    }
    val start = math.min(snapshot.version, lastVacuumed.map(_ + 1).getOrElse(earliest))
    if (start > end) return Eligible(Nil, None, None)
    val inRange = commits.filter { f => val v = FileNames.deltaVersion(f); v >= start && v <= end }
    val out = ArrayBuffer.empty[ListedEntry]
    val root = deltaLog.tablePath.toString
    def add(path: String, size: Long, time: Long): Unit =
      paths.relativeInside(path).filterNot(_.split('/').exists(hidden))
        .foreach(r => out += ListedEntry(r, size, time, isDir = false))
    new CommitReader(deltaLog.fs).readInOrder(inRange) { commit =>
      commit.actions.foreach {
        case r: RemoveFile =>
          val time = r.delTimestamp
          r.deletionVector.filter(_.isOnDisk).foreach { dv =>
            try add(dv.absolutePath(root), dv.sizeInBytes.toLong, time) catch { case NonFatal(_) => }
          }
          add(r.path, r.size.getOrElse(0L), time)
        case c: AddCDCFile => add(c.path, c.size, 0L)
        case _: Action =>
      }
    }
    Eligible(out.toSeq, Some(start), Some(end))
  }

  private def infoPath(deltaLog: DeltaLog): Path = new Path(deltaLog.logPath, LastVacuumInfoName)

  /** `latestCommitVersionOutsideOfRetentionWindow` of `_delta_log/_last_vacuum_info`, if readable. */
  def readLastVacuumInfo(deltaLog: DeltaLog): Option[Long] = try {
    val in = deltaLog.fs.open(infoPath(deltaLog))
    val text = try new String(in.readAllBytes(), StandardCharsets.UTF_8) finally in.close()
    Option(Action.mapper.readTree(text.linesIterator.find(_.trim.nonEmpty).getOrElse("{}")).get(LatestOutsideKey))
      .filter(_.canConvertToLong).map(_.asLong())
  } catch { case NonFatal(_) => None }

  /** Writes `_delta_log/_last_vacuum_info` (failures are logged, as delta-spark). */
  def writeLastVacuumInfo(deltaLog: DeltaLog, latestOutside: Option[Long]): Unit = try {
    val node = JsonNodeFactory.instance.objectNode()
    latestOutside.foreach(v => node.put(LatestOutsideKey, v))
    val out = deltaLog.fs.create(infoPath(deltaLog), true)
    try out.write(Action.mapper.writeValueAsBytes(node)) finally out.close()
  } catch {
    case NonFatal(e) => org.slf4j.LoggerFactory.getLogger(getClass).warn(s"could not write ${infoPath(deltaLog)}", e)
  }

}
