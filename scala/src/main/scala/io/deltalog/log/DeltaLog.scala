package io.deltalog.log

import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.deltalog.actions.{ActionCodec, CommitInfo, Metadata}
import io.deltalog.exceptions.{StateRecoverException, TableNotFoundException}
import io.deltalog.protocol.Protocol

/**
 * Entry point for one table: snapshots (latest, by version, by timestamp), incremental update,
 * metadata-only reads and checkpoints.
 *
 * Incremental update ([[update]]): the new commits are applied on top of the cached state (even
 * when a newer checkpoint appeared meanwhile — the commits since the cached version are fewer than
 * a checkpoint's rows): unchanged file chunks are shared and the checkpoint is not read again.
 * Nothing new ⇒ the cached snapshot is returned. When the log no longer continues the cached
 * version (log cleaned up, table deleted and re-created) the snapshot is rebuilt from scratch.
 *
 * Finding the new commits costs no listing in the common case: when the commit file of the cached
 * version is still the one seen when the snapshot was built (same length, modification time and,
 * locally, file key: see [[LogStore.FileState]]), the next versions' commit files are looked up
 * one by one until one is missing. Commits are written put-if-absent in version order and log
 * cleanup only deletes the oldest files, so no newer commit can exist after the first missing
 * one. In every other case (no recorded commit file, a changed or deleted one, many new commits)
 * the log is listed from the cached version + 1 as before.
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

  /** The last [[DeltaLog.MaxRecordedReads]] commit files parsed (tests, diagnostics). */
  val recentCommitReads = new RecentReads(MaxRecordedReads)

  private[log] val commitReader = new CommitReader(fs, { p =>
    commitFilesRead.incrementAndGet()
    recentCommitReads.record(p)
  })
  private[log] val replay = new LogReplay(fs, hadoopConf, tablePath.toString, commitReader, checkpointSource)

  private val store = LogStore(fs)

  /** Which files may have NaN-blind float/double upper bounds, from the commits that added them (built lazily). */
  lazy val statsProvenance: StatsProvenance = new StatsProvenance(this)

  /**
   * Number of times [[update]] had to list the log because the lookup of the commit files could
   * not settle what changed (tests, diagnostics).
   */
  val updateListings = new AtomicLong()

  @volatile private var current: Snapshot = _

  /** The commit file of `current`'s version as it was when `current` was built; null when unknown. */
  @volatile private var currentCommit: DeltaLog.CommitFile = _

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
    val (next, commit) =
      if (cached == null) createLatest()
      else {
        val known = currentCommit
        val unchanged = known != null && known.version == cached.version &&
          store.fileState(known.path).contains(known.state)
        if (unchanged) {
          lookUpCommitsAfter(cached.version) match {
            case Some(Seq()) => (cached, known)
            case Some(newCommits) => (incremental(cached, newCommits), commitFile(newCommits.last))
            case None => listedUpdate(cached, known)
          }
        } else if (known != null && known.version == cached.version) {
          log.info(s"Table $tablePath: the commit file of version ${cached.version} was replaced or " +
            "deleted; rebuilding")
          createLatest()
        } else listedUpdate(cached, known)
      }
    next.protocol // metadata-only path: fail early on missing / unreadable protocol
    current = next
    currentCommit = commit
    next
  }

  /** [[update]] from a listing of the log after `cached`'s version. */
  private def listedUpdate(cached: Snapshot, known: DeltaLog.CommitFile): (Snapshot, DeltaLog.CommitFile) = {
    updateListings.incrementAndGet()
    val newCommits = LogSegmentBuilder.listCommits(fs, logPath, cached.version + 1)
    if (newCommits.isEmpty) (cached, known)
    else if (!contiguousFrom(newCommits, cached.version + 1)) {
      log.info(s"Table $tablePath: new commits do not continue version ${cached.version}; rebuilding")
      createLatest()
    } else (incremental(cached, newCommits), commitFile(newCommits.last))
  }

  /** The commits after `version` ([[LogSegmentBuilder.lookUpCommits]]); None: list the log instead. */
  private def lookUpCommitsAfter(version: Long): Option[Seq[FileStatus]] =
    LogSegmentBuilder.lookUpCommits(fs, logPath, version + 1, MaxLookedUpCommits)

  /**
   * The [[DeltaLog.CommitFile]] of a listed or looked-up commit file, when its current state is
   * still what the listing saw and it has the standard (zero-padded) name; otherwise null.
   */
  private def commitFile(listed: FileStatus): DeltaLog.CommitFile = {
    val version = FileNames.deltaVersion(listed)
    if (listed.getPath.getName != LogStore.commitFileName(version)) null
    else store.fileState(listed.getPath) match {
      case Some(st) if st.length == listed.getLen && st.modificationTime == listed.getModificationTime =>
        DeltaLog.CommitFile(version, listed.getPath, st)
      case _ => null
    }
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
      else if (oldestFileRemains(newSegment)) replay.load(newSegment)
      else {
        // log cleanup removed the base segment's oldest files: a newer checkpoint has the version
        replay.load(LogSegmentBuilder.build(fs, logPath, tablePath.toString, Some(newSegment.version),
          LastCheckpointInfo.read(fs, logPath)))
      }
    new Snapshot(this, newSegment, None, checksum, pmLoader, stateLoader)
  }

  /** True when the oldest file of `segment` exists (log cleanup deletes the oldest files first). */
  private def oldestFileRemains(segment: LogSegment): Boolean =
    segment.checkpoint.map(_.files.head).orElse(segment.deltas.headOption).forall(f => fs.exists(f.getPath))

  private def createSnapshot(version: Option[Long]): Snapshot = createSnapshotWithCommit(version)._1

  /** The latest snapshot built from scratch, with its version's commit file. */
  private def createLatest(): (Snapshot, DeltaLog.CommitFile) = {
    val (s, commit) = createSnapshotWithCommit(None)
    (s, commit.map(commitFile).orNull)
  }

  private def createSnapshotWithCommit(version: Option[Long]): (Snapshot, Option[FileStatus]) = {
    if (!fs.exists(logPath)) {
      throw new TableNotFoundException(tablePath.toString, s"there is no $logPath directory")
    }
    val hint = LastCheckpointInfo.read(fs, logPath)
    val (segment, commit) = LogSegmentBuilder.buildWithCommit(fs, logPath, tablePath.toString, version, hint)
    val adds = hint.filter(h => segment.checkpointVersion.contains(h.version)).flatMap(_.numOfAddFiles)
    (snapshotFor(segment, adds), commit)
  }

  private[log] def snapshotFor(segment: LogSegment, checkpointAdds: Option[Long] = None): Snapshot = {
    val checksum = VersionChecksum.read(fs, logPath, segment.version)
    // The protocol and metadata read from the log (not from a .crc, which replay does not trust)
    // spare the replay a second read of the checkpoint's protocol / metaData rows.
    @volatile var fromLog: Option[(Protocol, Metadata)] = None
    // The commits that scan reads are kept for the replay (see CommitBytes).
    @volatile var kept: CommitBytes = null
    val pmLoader = () => {
      val keep = CommitBytes.start()
      kept = keep
      val r = replay.protocolAndMetadata(segment, keep)
      for (p <- r._1; m <- r._2) fromLog = Some((p, m))
      r
    }
    val stateLoader = () => {
      val k = kept
      kept = null
      try replay.load(segment, fromLog, checkpointAdds, k) finally if (k != null) k.clear()
    }
    new Snapshot(this, segment, None, checksum, pmLoader, stateLoader)
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
    val commits = LogSegmentBuilder.listCommits(fs, logPath, 0L)
    if (commits.isEmpty) throw new TableNotFoundException(tablePath.toString, s"$logPath contains no commits")
    new CommitTimestamps(commits, v => inCommitTimestampOf(v), latestIctConfig(commits.maxBy(FileNames.deltaVersion)),
      tablePath.toString)
  }

  /**
   * ICT settings of the latest version. While in-commit timestamps are enabled, every commit
   * starts with a `commitInfo` carrying `inCommitTimestamp` (protocol): when the newest commit
   * does not, ICT is off at the latest version and the table's metadata (for a log without a
   * recent checkpoint, a scan of many commits) is not needed. Otherwise it comes from the
   * latest metadata, as delta-spark does.
   */
  private def latestIctConfig(newest: FileStatus): IctConfig =
    if (startsWithInCommitTimestamp(newest)) IctConfig.fromProperties(update().metadata.configuration)
    else IctConfig.Disabled

  /** True when the first line of `commit` is a `commitInfo` with `inCommitTimestamp` (or cannot be read). */
  private def startsWithInCommitTimestamp(commit: FileStatus): Boolean =
    try {
      val in = new java.io.BufferedReader(new java.io.InputStreamReader(fs.open(commit.getPath),
        java.nio.charset.StandardCharsets.UTF_8), 8192)
      try {
        val line = in.readLine()
        line == null || (line.contains("inCommitTimestamp") && (ActionCodec.parseLine(line) match {
          case Some(c: CommitInfo) => c.inCommitTimestamp.isDefined
          case _ => false
        }))
      } finally in.close()
    } catch { case NonFatal(_) => true } // let the metadata decide

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
  def invalidate(): Unit = synchronized { current = null; currentCommit = null }

  override def toString: String = s"DeltaLog($tablePath)"
}

object DeltaLog {
  private val log = LoggerFactory.getLogger(classOf[DeltaLog])

  private val MaxCached = 64

  /** `schemaString` of a struct without fields (the [[DeltaLog.initialSnapshot]] schema). */
  val EmptySchemaString: String = """{"type":"struct","fields":[]}"""

  /** How many commit file names [[DeltaLog.recentCommitReads]] keeps. */
  val MaxRecordedReads = 1000

  /** New commits [[DeltaLog.update]] looks up one by one before it lists the log instead. */
  val MaxLookedUpCommits = 16

  /** The commit file of a cached snapshot's version and its state when the snapshot was built. */
  private final case class CommitFile(version: Long, path: Path, state: LogStore.FileState)
  private val cache = new java.util.LinkedHashMap[String, DeltaLog](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[String, DeltaLog]): Boolean = size() > MaxCached
  }

  /**
   * The `DeltaLog` of the table at `path` (a local path or any Hadoop URI, e.g. `file:/x`,
   * `s3a://b/t`), cached by qualified path. A cached instance is reused only with the same
   * `conf` object.
   */
  def forTable(path: String, conf: Configuration): DeltaLog = {
    val qualified = qualifyAbsolute(path, conf)
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
  def clearCache(): Unit = cache.synchronized { cache.clear(); qualified.clear() }

  /** A path qualified under a configuration whose default file system was `defaultFs`. */
  private final case class Qualified(conf: Configuration, defaultFs: String, path: Path)

  /** Recently qualified absolute paths (reads qualify the same path again and again). */
  private val qualified = new java.util.concurrent.ConcurrentHashMap[String, Qualified]()

  private val AbsolutePath = java.util.regex.Pattern.compile("/|[a-zA-Z][a-zA-Z0-9+.-]*:/")

  /**
   * [[qualify]], remembered for absolute paths (a leading `/` or a scheme): they qualify the same
   * way under the same configuration object while its default file system stays. Relative paths
   * depend on the working directory and are always qualified again.
   */
  private def qualifyAbsolute(path: String, conf: Configuration): Path = {
    if (!AbsolutePath.matcher(path).lookingAt()) return qualify(path, conf)
    val defaultFs = conf.get(FileSystem.FS_DEFAULT_NAME_KEY)
    val hit = qualified.get(path)
    if (hit != null && (hit.conf eq conf) && hit.defaultFs == defaultFs) hit.path
    else {
      val q = qualify(path, conf)
      if (qualified.size >= MaxCached * 4) qualified.clear()
      qualified.put(path, Qualified(conf, defaultFs, q))
      q
    }
  }

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
