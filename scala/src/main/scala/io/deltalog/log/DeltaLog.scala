package io.deltalog.log

import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.deltalog.actions.Metadata
import io.deltalog.exceptions.{StateRecoverException, TableNotFoundException}
import io.deltalog.protocol.Protocol

/**
 * Entry point for one table: snapshots (latest, by version, by timestamp), incremental update,
 * metadata-only reads and checkpoints.
 *
 * Incremental update ([[update]]): the log is listed from the cached snapshot's version + 1.
 * Nothing new ⇒ the cached snapshot is returned. Otherwise the new commits are applied on top of
 * the cached state (even when a newer checkpoint appeared meanwhile — the commits since the
 * cached version are fewer than a checkpoint's rows): unchanged file chunks are shared and the
 * checkpoint is not read again. When the new commits do not continue the cached version (log
 * cleaned up or table re-created) the snapshot is rebuilt from scratch.
 *
 * @param tablePath qualified table path
 */
final class DeltaLog private[log] (
    val tablePath: Path,
    val hadoopConf: Configuration,
    checkpointSource: CheckpointSource = CheckpointSource.Files) {
  import DeltaLog._

  val fs: FileSystem = tablePath.getFileSystem(hadoopConf)
  val logPath: Path = new Path(tablePath, "_delta_log")

  /** Counter hook: number of commit files parsed by this instance. */
  val commitFilesRead = new AtomicLong()

  /** Names of (about) the last [[DeltaLog.MaxRecordedReads]] commit files parsed (tests, diagnostics). */
  val recentCommitReads = new java.util.concurrent.ConcurrentLinkedDeque[String]()

  private[log] val commitReader = new CommitReader(fs, { p =>
    // ConcurrentLinkedDeque.size is O(n): trim only every 64 reads.
    if ((commitFilesRead.incrementAndGet() & 63) == 0) {
      var n = recentCommitReads.size
      while (n > MaxRecordedReads) { recentCommitReads.pollFirst(); n -= 1 }
    }
    recentCommitReads.addLast(p.getName)
  })
  private[log] val replay = new LogReplay(fs, hadoopConf, tablePath.toString, commitReader, checkpointSource)

  @volatile private var current: Snapshot = _

  /** The latest snapshot (cached; call [[update]] to see new commits). */
  def snapshot(): Snapshot = {
    val s = current
    if (s != null) s else update()
  }

  /** The cached snapshot, if any, without touching storage. */
  def cachedSnapshot: Option[Snapshot] = Option(current)

  /** Brings the cached snapshot up to date with the log (see the class comment). */
  def update(): Snapshot = synchronized {
    val cached = current
    val next =
      if (cached == null) createSnapshot(None)
      else {
        val newCommits = LogSegmentBuilder.listCommits(fs, logPath, cached.version + 1)
        if (newCommits.isEmpty) cached
        else if (!contiguousFrom(newCommits, cached.version + 1)) {
          log.info(s"Table $tablePath: new commits do not continue version ${cached.version}; rebuilding")
          createSnapshot(None)
        } else incremental(cached, newCommits)
      }
    next.protocol // metadata-only path: fail early on missing / unreadable protocol
    current = next
    next
  }

  private def contiguousFrom(commits: Seq[FileStatus], from: Long): Boolean =
    commits.iterator.map(c => FileNames.deltaVersion(c)).zipWithIndex.forall { case (v, i) => v == from + i }

  private def incremental(base: Snapshot, newCommits: Seq[FileStatus]): Snapshot = {
    val seg = base.logSegment
    val newSegment = LogSegment(logPath, FileNames.deltaVersion(newCommits.last), seg.deltas ++ newCommits,
      seg.checkpoint, newCommits.last.getModificationTime)
    val onlyNew = LogSegment(logPath, newSegment.version, newCommits, None, newSegment.lastCommitTimestamp)
    val checksum = VersionChecksum.read(fs, logPath, newSegment.version)
    val pmLoader = () => {
      val (p, m, ict) = replay.protocolAndMetadata(onlyNew)
      (p.orElse(Some(base.protocol)), m.orElse(Some(base.metadata)), ict)
    }
    val stateLoader = () =>
      if (base.isStateLoaded) replay.update(base.state, newCommits)
      else replay.load(newSegment)
    new Snapshot(this, newSegment, None, checksum, pmLoader, stateLoader)
  }

  private def createSnapshot(version: Option[Long]): Snapshot = {
    if (!fs.exists(logPath)) {
      throw new TableNotFoundException(tablePath.toString, s"there is no $logPath directory")
    }
    val hint = LastCheckpointInfo.read(fs, logPath)
    val segment = LogSegmentBuilder.build(fs, logPath, tablePath.toString, version, hint)
    snapshotFor(segment)
  }

  private[log] def snapshotFor(segment: LogSegment): Snapshot = {
    val checksum = VersionChecksum.read(fs, logPath, segment.version)
    new Snapshot(this, segment, None, checksum, () => replay.protocolAndMetadata(segment),
      () => replay.load(segment))
  }

  /** The snapshot at `version` (the cached one when it is that version). */
  def snapshotAt(version: Long): Snapshot = {
    val c = current
    if (c != null && c.version == version) c
    else {
      val s = createSnapshot(Some(version))
      s.protocol
      s
    }
  }

  /**
   * The snapshot of the latest commit whose commit timestamp is ≤ `timestampMs` (ICT when the
   * table enables it, else monotonized file modification times).
   *
   * @param allowAfterLatest give the latest version for a timestamp after the last commit
   * @throws io.deltalog.exceptions.TimestampOutOfRangeException outside the table's history
   */
  def snapshotAtTimestamp(timestampMs: Long, allowAfterLatest: Boolean = false): Snapshot =
    snapshotAt(commitTimestamps().versionAtOrBefore(timestampMs, allowAfterLatest))

  /** Commit timestamps of every listed commit (for time travel and history). */
  def commitTimestamps(): CommitTimestamps = {
    val latest = update()
    val commits = LogSegmentBuilder.listCommits(fs, logPath, 0L)
    if (commits.isEmpty) throw new TableNotFoundException(tablePath.toString, s"$logPath contains no commits")
    new CommitTimestamps(commits, v => inCommitTimestampOf(v),
      IctConfig.fromProperties(latest.metadata.configuration), tablePath.toString)
  }

  /** `commitInfo.inCommitTimestamp` of commit `version` (reads its commit file). */
  def inCommitTimestampOf(version: Long): Option[Long] = {
    val c = current
    val cached = if (c != null && c.isStateLoaded) c.state.inCommitTimestamps.get(version) else None
    cached.orElse {
      try {
        val file = fs.getFileStatus(FileNames.deltaFile(logPath, version))
        commitReader.read(file).inCommitTimestamp
      } catch {
        case _: java.io.FileNotFoundException => None
      }
    }
  }

  /**
   * Protocol and metadata at `version` (latest when None) without loading files: the version's
   * `.crc`, else a newest-first scan of the commits, else the checkpoint's rows. No readability
   * check is made (callers may inspect tables they cannot read).
   *
   * @throws StateRecoverException when the log has no protocol or no metadata
   */
  def readProtocolAndMetadata(version: Option[Long] = None): (Protocol, Metadata) = {
    if (!fs.exists(logPath)) {
      throw new TableNotFoundException(tablePath.toString, s"there is no $logPath directory")
    }
    val segment = LogSegmentBuilder.build(fs, logPath, tablePath.toString, version, LastCheckpointInfo.read(fs, logPath))
    VersionChecksum.read(fs, logPath, segment.version) match {
      case Some(c) => (c.protocol, c.metadata)
      case None =>
        val (p, m, _) = replay.protocolAndMetadata(segment)
        (p.getOrElse(throw new StateRecoverException(tablePath.toString, segment.version,
          "no protocol action found in the log")),
          m.getOrElse(throw new StateRecoverException(tablePath.toString, segment.version,
            "no metaData action found in the log")))
    }
  }

  /** Writes a checkpoint of `snapshot` (default: the latest) and `_last_checkpoint`. */
  def checkpoint(snapshot: Snapshot): CheckpointOutcome = Checkpoints.write(this, snapshot)

  /** Writes a checkpoint of `snapshot` with an explicit multi-part size (actions per part). */
  def checkpoint(snapshot: Snapshot, partSize: Option[Long]): CheckpointOutcome =
    Checkpoints.write(this, snapshot, partSize)

  /** Writes a checkpoint of the latest snapshot. */
  def checkpoint(): CheckpointOutcome = checkpoint(update())

  /**
   * The snapshot of a table that does not exist yet: version -1, no files, protocol (1,1) and a
   * metadata with an empty schema. Transactions that create the table start from it; it is never
   * cached.
   */
  def initialSnapshot: Snapshot = {
    val segment = LogSegment(logPath, -1L, Nil, None, -1L)
    val protocol = Protocol(1, 1)
    val metadata = Metadata(schemaString = DeltaLog.EmptySchemaString)
    val state = () => new SnapshotState(-1L, protocol, metadata, Map.empty, Map.empty, Vector(FileChunk.empty),
      Vector(null), IndexedSeq.empty, Map.empty, None, replay.fileKeys)
    new Snapshot(this, segment, Some((protocol, metadata)), None, () => (Some(protocol), Some(metadata), None), state)
  }

  /** Forgets the cached snapshot. */
  def invalidate(): Unit = synchronized { current = null }

  override def toString: String = s"DeltaLog($tablePath)"
}

object DeltaLog {
  private val log = LoggerFactory.getLogger(classOf[DeltaLog])

  private val MaxCached = 64

  /** `schemaString` of a struct without fields (the [[DeltaLog.initialSnapshot]] schema). */
  val EmptySchemaString: String = """{"type":"struct","fields":[]}"""

  /** How many commit file names [[DeltaLog.recentCommitReads]] keeps. */
  val MaxRecordedReads = 1000
  private val cache = new java.util.LinkedHashMap[String, DeltaLog](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[String, DeltaLog]): Boolean = size() > MaxCached
  }

  /**
   * The `DeltaLog` of the table at `path` (a local path or any Hadoop URI, e.g. `file:/x`,
   * `s3a://b/t`), cached by qualified path. A cached instance is reused only with the same
   * `conf` object.
   */
  def forTable(path: String, conf: Configuration): DeltaLog = {
    val qualified = qualify(path, conf)
    cache.synchronized {
      val hit = cache.get(qualified.toString)
      if (hit != null && (hit.hadoopConf eq conf)) hit
      else {
        val dl = new DeltaLog(qualified, conf)
        cache.put(qualified.toString, dl)
        dl
      }
    }
  }

  /** A `DeltaLog` that is not cached, with a custom checkpoint source (tests). */
  def uncached(path: String, conf: Configuration, checkpoints: CheckpointSource = CheckpointSource.Files): DeltaLog =
    new DeltaLog(qualify(path, conf), conf, checkpoints)

  /** Empties the cache. */
  def clearCache(): Unit = cache.synchronized(cache.clear())

  /** Qualified path of `path` (trailing slashes dropped). */
  def qualify(path: String, conf: Configuration): Path = {
    val trimmed = if (path.length > 1) path.reverse.dropWhile(_ == '/').reverse match {
      case "" => "/"
      case p => p
    } else path
    val p = new Path(trimmed)
    try p.getFileSystem(conf).makeQualified(p)
    catch { case NonFatal(e) => throw new TableNotFoundException(path, s"cannot resolve the path: ${e.getMessage}") }
  }
}
