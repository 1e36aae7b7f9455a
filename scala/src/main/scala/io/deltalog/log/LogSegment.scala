package io.deltalog.log

import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * A complete checkpoint: every file of it (one for classic and V2 top-level files, all parts of
 * a multi-part set). V2 sidecars are found when the top-level file is read.
 */
final case class CheckpointInstance(version: Long, files: Seq[FileStatus]) {
  require(files.nonEmpty, "a checkpoint has at least one file")
  def isMultiPart: Boolean = files.size > 1
  /** UUID-named V2 checkpoint (`<v>.checkpoint.<uuid>.json|parquet`). */
  def isUuidNamed: Boolean = files.size == 1 && FileNames.isUuidCheckpoint(files.head.getPath.getName)
}

/**
 * The files that reconstruct a table at `version`: the newest complete checkpoint at or below
 * it (if any) and the contiguous commits after it, in version order.
 *
 * @param lastCommitTimestamp modification time of the newest commit file (or of the checkpoint
 *                            when no commit follows it)
 */
final case class LogSegment(
    logPath: Path,
    version: Long,
    deltas: Seq[FileStatus],
    checkpoint: Option[CheckpointInstance],
    lastCommitTimestamp: Long) {
  def checkpointVersion: Option[Long] = checkpoint.map(_.version)
  def deltaVersions: Seq[Long] = deltas.map(d => FileNames.deltaVersion(d.getPath))
}
