package io.deltalog.log

import java.util.UUID

import scala.util.matching.Regex

import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * One recognised file of a `_delta_log/` directory (digest §1.2). Every kind carries the table
 * `version` it belongs to (for a compaction: its end version).
 */
sealed abstract class LogFile extends Product with Serializable {
  def version: Long
}

object LogFile {
  /** `%020d.json`: the commit of `version`. */
  final case class Commit(version: Long) extends LogFile

  /** Any checkpoint file (classic, one part of a multi-part set, or UUID-named V2 top file). */
  sealed abstract class Checkpoint extends LogFile

  object Checkpoint {
    /** `%020d.checkpoint.parquet` */
    final case class Classic(version: Long) extends Checkpoint

    /** `%020d.checkpoint.%010d.%010d.parquet`; parts are numbered 1..numParts. */
    final case class MultiPart(version: Long, part: Int, numParts: Int) extends Checkpoint

    /** `%020d.checkpoint.<uuid>.json|parquet` (V2); `format` is `"json"` or `"parquet"`. */
    final case class Uuid(version: Long, uuid: String, format: String) extends Checkpoint
  }

  /** `%020d.%020d.compacted.json`: reconciled actions of commits `startVersion..endVersion`. */
  final case class Compaction(startVersion: Long, endVersion: Long) extends LogFile {
    def version: Long = endVersion
  }

  /** `%020d.crc`: version checksum file. */
  final case class Crc(version: Long) extends LogFile

  /** `_staged_commits/%020d.<uuid>.json`: a proposed commit of a catalog-managed table. */
  final case class StagedCommit(version: Long, uuid: String) extends LogFile
}

/**
 * Names of the files in `_delta_log/` (digest §1.2): parsing into [[LogFile]] and builders.
 *
 * Writers always zero-pad versions to 20 digits (parts to 10); readers accept any number of
 * digits. Anything that does not match a known pattern (hidden temp files, `_last_checkpoint`,
 * `.crc.tmp`, Hadoop side files, …) parses to `None` and must be ignored.
 */
object FileNames {
  val LastCheckpointName = "_last_checkpoint"
  val SidecarDirName = "_sidecars"
  val StagedCommitDirName = "_staged_commits"

  private val CommitRe: Regex = """(\d+)\.json""".r
  private val CrcRe: Regex = """(\d+)\.crc""".r
  private val CompactionRe: Regex = """(\d+)\.(\d+)\.compacted\.json""".r
  private val ClassicCheckpointRe: Regex = """(\d+)\.checkpoint\.parquet""".r
  private val MultiPartCheckpointRe: Regex = """(\d+)\.checkpoint\.(\d+)\.(\d+)\.parquet""".r
  private val UuidCheckpointRe: Regex = """(\d+)\.checkpoint\.([^.]+)\.(json|parquet)""".r
  private val StagedCommitRe: Regex = """(\d+)\.([^.]+)\.json""".r

  // ---------------------------------------------------------------------------------------------
  // Parsing

  /**
   * Parses a file name found directly inside `_delta_log/`. Staged commits are only recognised
   * through `parse(path)` (they live in a sub-directory).
   */
  def parseName(name: String): Option[LogFile] = {
    try {
      if (isPaddedCommitName(name)) Some(LogFile.Commit(java.lang.Long.parseLong(name, 0, 20, 10)))
      else parseUnsafe(name)
    } catch { case _: NumberFormatException => None } // e.g. a version above Long.MaxValue
  }

  /** True for a commit name as writers spell it: 20 digits then `.json` (checked without a regex). */
  def isPaddedCommitName(name: String): Boolean =
    name.length == 25 && name.endsWith(".json") && digits(name, 0, 20)

  private def digits(s: String, from: Int, until: Int): Boolean = {
    var i = from
    while (i < until) { val c = s.charAt(i); if (c < '0' || c > '9') return false; i += 1 }
    true
  }

  /** Parses a path: inside `_staged_commits/` only staged commits match, elsewhere [[parseName]]. */
  def parse(path: Path): Option[LogFile] = {
    val parent = path.getParent
    if (parent != null && parent.getName == StagedCommitDirName) {
      try {
        path.getName match {
          case StagedCommitRe(v, uuid) => Some(LogFile.StagedCommit(v.toLong, uuid))
          case _ => None
        }
      } catch { case _: NumberFormatException => None }
    } else {
      parseName(path.getName)
    }
  }

  def parse(status: FileStatus): Option[LogFile] = parse(status.getPath)

  private def parseUnsafe(name: String): Option[LogFile] = name match {
    case CommitRe(v) => Some(LogFile.Commit(v.toLong))
    case CrcRe(v) => Some(LogFile.Crc(v.toLong))
    case CompactionRe(lo, hi) =>
      val (s, e) = (lo.toLong, hi.toLong)
      if (s <= e) Some(LogFile.Compaction(s, e)) else None
    case ClassicCheckpointRe(v) => Some(LogFile.Checkpoint.Classic(v.toLong))
    case MultiPartCheckpointRe(v, p, n) =>
      val (part, numParts) = (p.toInt, n.toInt)
      if (numParts >= 1 && part >= 1 && part <= numParts) {
        Some(LogFile.Checkpoint.MultiPart(v.toLong, part, numParts))
      } else None
    case UuidCheckpointRe(v, uuid, ext) => Some(LogFile.Checkpoint.Uuid(v.toLong, uuid, ext))
    case _ => None
  }

  def isCommitFile(path: Path): Boolean = parse(path).exists(_.isInstanceOf[LogFile.Commit])
  def isCheckpointFile(path: Path): Boolean = parse(path).exists(_.isInstanceOf[LogFile.Checkpoint])

  /** `<v>.checkpoint.<uuid>.json|parquet` (and not a multi-part name). */
  def isUuidCheckpoint(name: String): Boolean = parseName(name) match {
    case Some(_: LogFile.Checkpoint.Uuid) => true
    case _ => false
  }

  /** Version of a commit file (`N.json`); throws for any other name. */
  def deltaVersion(path: Path): Long = parseName(path.getName) match {
    case Some(LogFile.Commit(v)) => v
    case _ => throw new IllegalArgumentException(s"not a commit file: ${path.getName}")
  }

  def deltaVersion(status: FileStatus): Long = deltaVersion(status.getPath)

  /** Version of any recognised log file; throws for unrecognised names. */
  def fileVersion(path: Path): Long = parse(path).map(_.version).getOrElse(
    throw new IllegalArgumentException(s"not a Delta log file: ${path.getName}"))

  // ---------------------------------------------------------------------------------------------
  // Builders (always zero-padded)

  private def v20(version: Long): String = {
    require(version >= 0, s"version must be non-negative, got $version")
    f"$version%020d"
  }

  def deltaFile(logPath: Path, version: Long): Path = new Path(logPath, s"${v20(version)}.json")

  def checkpointFileSingular(logPath: Path, version: Long): Path =
    new Path(logPath, s"${v20(version)}.checkpoint.parquet")

  /** All part paths (1..numParts) of a multi-part checkpoint. */
  def checkpointFileWithParts(logPath: Path, version: Long, numParts: Int): Seq[Path] = {
    require(numParts >= 1, s"numParts must be >= 1, got $numParts")
    val v = v20(version)
    (1 to numParts).map(i => new Path(logPath, f"$v.checkpoint.$i%010d.$numParts%010d.parquet"))
  }

  /** A new UUID-named (V2) checkpoint path; `ext` is `"json"` or `"parquet"`. */
  def uuidCheckpoint(logPath: Path, version: Long, ext: String): Path =
    uuidCheckpoint(logPath, version, ext, UUID.randomUUID().toString)

  def uuidCheckpoint(logPath: Path, version: Long, ext: String, uuid: String): Path = {
    require(ext == "json" || ext == "parquet", s"V2 checkpoint extension must be json or parquet, got $ext")
    require(uuid.nonEmpty && !uuid.contains('.') && !uuid.contains('/'), s"invalid checkpoint uuid '$uuid'")
    new Path(logPath, s"${v20(version)}.checkpoint.$uuid.$ext")
  }

  def sidecarDir(logPath: Path): Path = new Path(logPath, SidecarDirName)

  /** A sidecar file referenced by a V2 checkpoint: `_delta_log/_sidecars/<name>`. */
  def sidecarPath(logPath: Path, name: String): Path = new Path(sidecarDir(logPath), name)

  def crcFile(logPath: Path, version: Long): Path = new Path(logPath, s"${v20(version)}.crc")

  def compactionFile(logPath: Path, startVersion: Long, endVersion: Long): Path = {
    require(startVersion <= endVersion, s"compaction range $startVersion..$endVersion is empty")
    new Path(logPath, s"${v20(startVersion)}.${v20(endVersion)}.compacted.json")
  }

  def stagedCommitDir(logPath: Path): Path = new Path(logPath, StagedCommitDirName)

  def stagedCommitFile(logPath: Path, version: Long, uuid: String): Path =
    new Path(stagedCommitDir(logPath), s"${v20(version)}.$uuid.json")

  def lastCheckpointFile(logPath: Path): Path = new Path(logPath, LastCheckpointName)

  /**
   * `<logPath>/%020d.`: a lexicographic listing starting at this name returns every file of
   * version ≥ `version` (the path itself never exists).
   */
  def listingPrefix(logPath: Path, version: Long): Path = new Path(logPath, s"${v20(version)}.")

  /** The name of a hidden temp file for `name` (`.<name>.<uuid>.tmp`). */
  def tempFileName(name: String): String = s".$name.${UUID.randomUUID()}.tmp"
}
