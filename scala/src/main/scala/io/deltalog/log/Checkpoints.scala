package io.deltalog.log

import java.util.Locale

import org.apache.hadoop.conf.Configuration

import io.deltalog.actions._
import io.deltalog.protocol.{ClientCapabilities, Protocol, TableFeature}

/**
 * Result of [[Checkpoints.write]]: what the writer produced and the `_last_checkpoint` written
 * after it.
 */
final case class CheckpointOutcome(result: CheckpointResult, lastCheckpoint: LastCheckpointInfo) {
  def version: Long = result.version
}

/**
 * "Write a checkpoint of this snapshot": the reconciled state (protocol, metadata, live txns,
 * live domain metadata, live files, unexpired tombstones) is streamed from the snapshot's
 * [[SnapshotState]] into [[CheckpointWriter]], then `_last_checkpoint` is written with
 * [[LastCheckpointInfo.write]] (only after every checkpoint file exists).
 *
 * Files are streamed in state order (not sorted by path as [[InMemoryLogReplay.checkpoint]]
 * does) so that a checkpoint of a large table never materialises one object per file; readers
 * do not depend on row order.
 *
 * Format, from the table properties and configuration:
 *  - `delta.checkpointPolicy = v2` and the protocol supports `v2Checkpoint` ⇒ V2 (UUID-named
 *    top-level Parquet file plus sidecars);
 *  - otherwise classic; multi-part when a part size is configured (argument, else Hadoop conf /
 *    JVM system property `spark.databricks.delta.checkpoint.partSize`; default none) and the
 *    checkpoint has more actions than one part;
 *  - `delta.checkpoint.writeStatsAsJson` (default true), `delta.checkpoint.writeStatsAsStruct`
 *    (default false, the spec's default).
 */
object Checkpoints {
  val PartSizeKey = "spark.databricks.delta.checkpoint.partSize"
  val CheckpointPolicyKey = "delta.checkpointPolicy"
  val WriteStatsAsJsonKey = "delta.checkpoint.writeStatsAsJson"
  val WriteStatsAsStructKey = "delta.checkpoint.writeStatsAsStruct"

  /** Configured part size: Hadoop conf, then JVM system property. */
  def configuredPartSize(conf: Configuration): Option[Long] =
    Option(conf.get(PartSizeKey)).orElse(Option(System.getProperty(PartSizeKey)))
      .flatMap(s => s.trim.toLongOption).filter(_ > 0)

  /** Writer options for a table with this protocol and metadata. */
  def writeOptions(protocol: Protocol, metadata: Metadata, partSize: Option[Long]): CheckpointWriteOptions = {
    val props = metadata.configuration
    def bool(k: String, default: Boolean): Boolean =
      props.get(k).map(_.trim.toLowerCase(Locale.ROOT)).map(_ == "true").getOrElse(default)
    val v2 = props.get(CheckpointPolicyKey).exists(_.trim.equalsIgnoreCase("v2")) &&
      protocol.isFeatureSupported(TableFeature.V2Checkpoint)
    CheckpointWriteOptions(
      partSize = if (v2) None else partSize,
      v2 = v2,
      writeStatsAsJson = bool(WriteStatsAsJsonKey, default = true),
      writeStatsAsStruct = bool(WriteStatsAsStructKey, default = false))
  }

  /**
   * The checkpoint content of `snapshot`: non-file actions first, then files and tombstones. Given
   * unread to [[CheckpointWriter.write]], the files are written straight from the snapshot's
   * columnar state (see [[CheckpointActions]]).
   */
  def actions(snapshot: Snapshot): Iterator[Action] = new CheckpointActions(snapshot)

  /**
   * Writes a checkpoint of `snapshot` into `deltaLog`'s log, then `_last_checkpoint`. A checkpoint
   * is a write to the log: a table whose protocol needs writer features (or a writer version)
   * deltalog does not support is refused with `UnsupportedTableFeatureException` ("write") before
   * anything is written, since such a feature may govern checkpoints too (e.g. which actions they
   * must keep).
   *
   * @param partSize overrides the configured multi-part size
   */
  def write(deltaLog: DeltaLog, snapshot: Snapshot, partSize: Option[Long] = None): CheckpointOutcome = {
    Protocol.checkCanWrite(snapshot.protocol, ClientCapabilities.deltalog, deltaLog.tablePath.toString)
    val opts = writeOptions(snapshot.protocol, snapshot.metadata,
      partSize.orElse(configuredPartSize(deltaLog.hadoopConf)))
    val result = CheckpointWriter.write(deltaLog.hadoopConf, deltaLog.logPath, snapshot.version,
      actions(snapshot), opts)
    val info = LastCheckpointInfo(
      version = result.version,
      size = result.numActions,
      parts = result.parts,
      sizeInBytes = Some(result.sizeInBytes),
      numOfAddFiles = Some(result.numAddFiles))
    LastCheckpointInfo.write(LogStore(deltaLog.fs), deltaLog.logPath, info)
    CheckpointOutcome(result, info)
  }
}
