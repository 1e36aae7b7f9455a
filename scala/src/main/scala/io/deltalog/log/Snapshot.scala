package io.deltalog.log

import java.io.FileNotFoundException
import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

import io.deltalog.actions._
import io.deltalog.exceptions.StateRecoverException
import io.deltalog.protocol.{ClientCapabilities, Protocol}

/**
 * The parts of a version checksum file (`<version>.crc`, digest §1.4) that snapshots use.
 *
 * @param inCommitTimestamp `inCommitTimestampOpt`
 */
final case class VersionChecksum(
    version: Long,
    protocol: Protocol,
    metadata: Metadata,
    numFiles: Long,
    tableSizeBytes: Long,
    inCommitTimestamp: Option[Long])

object VersionChecksum {
  private val log = LoggerFactory.getLogger(classOf[VersionChecksum])

  /**
   * Reads `<logPath>/<version>.crc`. None when it is missing or unusable (malformed JSON, no
   * valid protocol / metadata, no numFiles / tableSizeBytes): the file is optional, so a bad one
   * is ignored with a warning and the log is replayed instead.
   */
  def read(fs: FileSystem, logPath: Path, version: Long): Option[VersionChecksum] = {
    val file = FileNames.crcFile(logPath, version)
    val text = try Some(LogStore(fs).readAll(file)) catch {
      case _: FileNotFoundException => None
      case NonFatal(e) => log.warn(s"Ignoring unreadable $file: ${e.getMessage}"); None
    }
    text.flatMap(t => parse(t, version, file.toString))
  }

  /** Parses the text of a `.crc` file; None (with a warning) if it is unusable. */
  def parse(text: String, version: Long, file: String): Option[VersionChecksum] =
    try {
      val root = ActionCodec.reader.readTree(text)
      def long(name: String): Option[Long] = Option(root.get(name))
        .filter(n => n.isIntegralNumber && n.canConvertToLong).map(_.longValue())
      def obj(name: String): JsonNode = Option(root.get(name)).filter(_.isObject).orNull
      val p = obj("protocol")
      val m = obj("metadata")
      if (!root.isObject || p == null || m == null) None
      else {
        val protocol = ActionCodec.parseAction("protocol", p).asInstanceOf[Protocol]
        val metadata = ActionCodec.parseAction(Metadata.ActionName, m).asInstanceOf[Metadata]
        for (n <- long("numFiles"); s <- long("tableSizeBytes"))
          yield VersionChecksum(version, protocol, metadata, n, s, long("inCommitTimestampOpt"))
      }
    } catch {
      case NonFatal(e) =>
        log.warn(s"Ignoring unusable version checksum file $file: ${e.getMessage}")
        None
    }
}

/**
 * Parsing of interval table properties such as `delta.deletedFileRetentionDuration`:
 * `interval 1 week`, `interval 7 days`, `168 hours`, `1 day 12 hours`, `interval 30 minutes`
 * (units nanosecond(s) … week(s), case-insensitive, optional leading `interval`).
 */
object IntervalProperty {
  private val unitMs: Map[String, Double] = Map(
    "nanosecond" -> 1e-6, "microsecond" -> 1e-3, "millisecond" -> 1.0, "ms" -> 1.0,
    "second" -> 1000.0, "sec" -> 1000.0, "s" -> 1000.0,
    "minute" -> 60000.0, "min" -> 60000.0, "m" -> 60000.0,
    "hour" -> 3600000.0, "h" -> 3600000.0,
    "day" -> 86400000.0, "d" -> 86400000.0,
    "week" -> 604800000.0, "w" -> 604800000.0)

  /** Milliseconds, or None when `value` is not an interval of these units. */
  def parseMillis(value: String): Option[Long] = {
    val tokens = value.trim.toLowerCase(Locale.ROOT).split("\\s+").toList match {
      case "interval" :: rest => rest
      case all => all
    }
    if (tokens.isEmpty || tokens.size % 2 != 0) return None
    var total = 0.0
    tokens.grouped(2).foreach {
      case List(n, u) =>
        val num = n.toDoubleOption.getOrElse(return None)
        val unit = if (u.length > 1 && u.endsWith("s") && unitMs.contains(u.dropRight(1))) u.dropRight(1) else u
        total += num * unitMs.getOrElse(unit, return None)
      case _ => return None
    }
    Some(math.round(total))
  }

  /** `configuration(key)` in ms, `default` when absent or unparsable. */
  def millis(configuration: Map[String, String], key: String, default: Long): Long =
    configuration.get(key).flatMap(parseMillis).getOrElse(default)
}

/**
 * A table version: the files and state of [[logSegment]].
 *
 * Protocol and metadata come from a metadata-only path (the `.crc` of this exact version, else a
 * newest-first scan of the commits stopping when both are found, else the checkpoint's rows) and
 * are checked for readability ([[Protocol.checkCanRead]]) as soon as they are known. The file
 * state ([[state]]) is loaded on first access by log replay.
 */
final class Snapshot private[log] (
    val deltaLog: DeltaLog,
    val logSegment: LogSegment,
    knownProtocolAndMetadata: Option[(Protocol, Metadata)],
    checksum: Option[VersionChecksum],
    pmLoader: () => (Option[Protocol], Option[Metadata], Option[Long]),
    stateLoader: () => SnapshotState) {

  import Snapshot._

  /** The table version. */
  def version: Long = logSegment.version

  private def tablePath: String = deltaLog.tablePath.toString

  @volatile private var loader: () => SnapshotState = stateLoader
  @volatile private var loadedState: SnapshotState = _
  @volatile private var ictFromPmScan: Option[Long] = None

  private lazy val pm: (Protocol, Metadata) = {
    val (p, m) = knownProtocolAndMetadata
      .orElse(checksum.map(c => (c.protocol, c.metadata)))
      .getOrElse {
        val (p, m, ict) = pmLoader()
        ictFromPmScan = ict
        val protocol = p.getOrElse(throw new StateRecoverException(tablePath, version,
          "no protocol action found in the log"))
        val metadata = m.getOrElse(throw new StateRecoverException(tablePath, version,
          "no metaData action found in the log"))
        (protocol, metadata)
      }
    Protocol.checkCanRead(p, ClientCapabilities.deltalog, tablePath)
    (p, m)
  }

  /** True once the file state has been loaded. */
  def isStateLoaded: Boolean = loadedState != null

  /** The reconciled file state (loaded by log replay on first access). */
  def state: SnapshotState = {
    var s = loadedState
    if (s == null) synchronized {
      s = loadedState
      if (s == null) {
        pm // protocol checks first
        s = loader()
        loadedState = s
        loader = null
        checksum.foreach { c =>
          if (c.numFiles != s.numFiles || c.tableSizeBytes != s.sizeInBytes) {
            Snapshot.log.warn(s"Table $tablePath version $version: the .crc file claims ${c.numFiles} files / " +
              s"${c.tableSizeBytes} bytes but log replay gives ${s.numFiles} / ${s.sizeInBytes}; using the log")
          }
        }
      }
    }
    s
  }

  /** The table's protocol (no file state needed). */
  def protocol: Protocol = if (loadedState != null) loadedState.protocol else pm._1
  /** The table's metadata (no file state needed). */
  def metadata: Metadata = if (loadedState != null) loadedState.metadata else pm._2
  def schemaString: String = metadata.schemaString
  def partitionColumns: Seq[String] = metadata.partitionColumns

  /**
   * Number of live files, from log replay. The `.crc` of this version is not trusted for it: a
   * checksum that disagrees with the log exists in the wild (conformance `crc-full`); see
   * [[versionChecksum]] for the cheap, unverified value.
   */
  def numFiles: Long = state.numFiles
  /** Total bytes of the live files, from log replay. */
  def sizeInBytes: Long = state.sizeInBytes

  /** The `.crc` of exactly this version, if present and usable (its counts are not verified). */
  def versionChecksum: Option[VersionChecksum] = checksum

  /** True when `delta.enableInCommitTimestamps` is on. */
  def inCommitTimestampsEnabled: Boolean = IctConfig.fromProperties(metadata.configuration).enabled

  /**
   * Commit timestamp of this version: its in-commit timestamp when ICT is enabled, else the
   * modification time of the last commit file.
   */
  lazy val timestamp: Long =
    if (!inCommitTimestampsEnabled) logSegment.lastCommitTimestamp
    else {
      val fromState = Option(loadedState).flatMap(_.inCommitTimestamps.get(version))
      fromState
        .orElse(checksum.flatMap(_.inCommitTimestamp))
        .orElse(if (logSegment.deltas.nonEmpty) ictFromPmScan else None)
        .orElse(deltaLog.inCommitTimestampOf(version))
        .getOrElse(logSegment.lastCommitTimestamp)
    }

  /** `delta.deletedFileRetentionDuration` in ms (default 1 week). */
  def deletedFileRetentionMillis: Long =
    IntervalProperty.millis(metadata.configuration, DeletedFileRetentionKey, DefaultDeletedFileRetentionMs)

  /** Tombstones with `deletionTimestamp` at or below this are expired. */
  def minFileRetentionTimestamp: Long = timestamp - deletedFileRetentionMillis

  /** `txn`s older than this are expired; None when `delta.setTransactionRetentionDuration` is unset. */
  def minSetTransactionRetentionTimestamp: Option[Long] =
    metadata.configuration.get(SetTransactionRetentionKey).flatMap(IntervalProperty.parseMillis).map(timestamp - _)

  /** Live `txn`s (retention applied), by appId. */
  def setTransactions: Seq[SetTransaction] = {
    val all = state.setTransactions.values.toSeq.sortBy(_.appId)
    minSetTransactionRetentionTimestamp match {
      case None => all
      case Some(ts) => all.filter(_.lastUpdated.exists(_ > ts))
    }
  }

  /** Live domain metadata, sorted by domain. */
  def domainMetadata: Seq[DomainMetadata] = state.domainMetadata.values.toSeq.sortBy(_.domain)

  /** The live files. */
  def allFiles: Iterator[AddFile] = state.iterator

  /** Unexpired tombstones (`deletionTimestamp > minFileRetentionTimestamp`). */
  def tombstones: Iterator[RemoveFile] = {
    val min = minFileRetentionTimestamp
    state.tombstones.filter(_.delTimestamp > min)
  }

  /** `commitInfo` of this version, when it was read during replay. */
  def commitInfo: Option[CommitInfo] = state.snapshotCommitInfo

  override def toString: String = s"Snapshot($tablePath, version=$version)"
}

object Snapshot {
  private val log = LoggerFactory.getLogger(classOf[Snapshot])
  val DeletedFileRetentionKey = "delta.deletedFileRetentionDuration"
  val SetTransactionRetentionKey = "delta.setTransactionRetentionDuration"
  val DefaultDeletedFileRetentionMs: Long = 7L * 24 * 3600 * 1000
}
