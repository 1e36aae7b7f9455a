package io.deltalog.log

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem}

import io.deltalog.actions._
import io.deltalog.exceptions.StateRecoverException
import io.deltalog.protocol.Protocol

/**
 * Where checkpoint actions come from. The default reads checkpoint files with
 * [[CheckpointReader]]; tests may substitute an in-memory source.
 */
trait CheckpointSource {
  /**
   * Pushes every action of `checkpoint` into `sink`.
   *
   * @param skipRemoves the caller does not need `remove` rows
   */
  def read(conf: Configuration, checkpoint: CheckpointInstance, sink: ReplaySink, skipRemoves: Boolean): Unit

  /**
   * [[read]] for a caller that already knows the protocol and metadata: a source may leave
   * their rows out (the default reads everything).
   */
  def readWithoutProtocolAndMetadata(conf: Configuration, checkpoint: CheckpointInstance, sink: ReplaySink,
      skipRemoves: Boolean): Unit = read(conf, checkpoint, sink, skipRemoves)

  /** The protocol and metadata rows of `checkpoint` (no file rows materialised). */
  def readProtocolAndMetadata(conf: Configuration, checkpoint: CheckpointInstance): (Option[Protocol], Option[Metadata])
}

object CheckpointSource {
  /** Checkpoint files read with [[CheckpointReader]]. */
  val Files: CheckpointSource = CheckpointReaderAdapter
}

/**
 * Replays very large logs as a distributed job (see [[LogReplay.distributedReplay]]). The Spark
 * layer registers one when a SparkSession is in use (`io.deltalog.spark.read.SparkDistributedReplay`).
 */
trait DistributedReplay {
  /**
   * Estimated-action count above which [[replay]] is used instead of the local replay, read at
   * every load from the table's Hadoop configuration (which carries the Spark session's SQL
   * configuration), else [[LogReplay.distributedThreshold]]. `Long.MaxValue`: not here (e.g. no
   * session).
   */
  def threshold(conf: Configuration): Long = LogReplay.distributedThreshold(conf)

  /**
   * The state of `segment`, reconciled by a distributed job. `expectedFiles`: the rows the state is
   * sized for up front (as the local replay sizes its own: `_last_checkpoint.numOfAddFiles` plus
   * the commits' file actions), 0 when unknown; a state sized right is never grown (copied) in
   * the driver.
   */
  def replay(segment: LogSegment, tablePath: String, fileKeys: FileKeys, conf: Configuration,
      expectedFiles: Long = 0L): SnapshotState
}

/**
 * Reverse replay of one commit list and optionally a checkpoint (digest §3.4, "reverse replay"):
 * commits are applied newest first, and inside a commit the actions last to first, so the first
 * action met for a key is the one that survives. Keys of `add`/`remove` met in JSON commits go
 * into `seen`; a later-met (= older) file action of a seen key is dropped. Checkpoint rows are
 * reconciled already and are only checked against `seen` (no hashing when it is empty).
 */
private[log] final class ReverseReplay(fileKeys: FileKeys, expectedFiles: Int = 1024, expectedKeys: Int = 16,
    jsonOnlyBytes: Long = 0L) {
  private val SeenHashBits = 1 << 20
  val seen = new FileKeySet(expectedKeys)
  val files = new FileChunkBuilder(expectedFiles)
  val tombstones = mutable.ArrayBuffer.empty[RemoveFile]
  var protocol: Protocol = _
  var metadata: Metadata = _
  val txns = mutable.HashMap.empty[String, SetTransaction]
  val domains = mutable.HashMap.empty[String, DomainMetadata] // removed ones kept as markers
  val inCommitTimestamps = mutable.HashMap.empty[Long, Long]
  var newestCommitInfo: Option[CommitInfo] = None
  var commitsApplied = 0

  private def addFile(a: AddFile): Unit = files += a
  private def addTombstone(r: RemoveFile): Unit =
    tombstones += (if (r.dataChange) r.copy(dataChange = false) else r)

  private def other(a: Action): Unit = a match {
    case p: Protocol => if (protocol == null) protocol = p
    case m: Metadata => if (metadata == null) metadata = m
    case t: SetTransaction => if (!txns.contains(t.appId)) txns(t.appId) = t
    case d: DomainMetadata => if (!domains.contains(d.domain)) domains(d.domain) = d
    case bad: MalformedAction =>
      if ((bad.name == "protocol" && protocol == null) || (bad.name == Metadata.ActionName && metadata == null)) {
        throw bad.error
      }
    case _ => // commitInfo, cdc, checkpointMetadata, sidecar, unknown
  }

  /** Applies one JSON commit; commits must come newest first. */
  def applyCommit(c: ParsedCommit): Unit = {
    if (commitsApplied == 0) newestCommitInfo = c.commitInfo
    commitsApplied += 1
    c.inCommitTimestamp.foreach(ts => inCommitTimestamps(c.version) = ts)
    val plain = c.plainAdds
    if (files.size == 0 && plain.length > 0) { // size the state's string columns from the newest adds
      val (p, st) = plain.meanBytesPerRow
      files.expectBytesPerRow(p + p / 32 + 1, st + st / 32 + 1)
      // without a checkpoint, the files come from commits like this one: as many per byte of log
      val commitBytes = LocalLogFile.lengthHint(c.file)
      if (jsonOnlyBytes > 0 && commitBytes > 0) {
        files.expectRows(math.min(jsonOnlyBytes.toDouble * plain.length / commitBytes, Int.MaxValue / 2).toInt + 16)
      }
    }
    plain.warmKeys(seen)
    c.foreachReverse(
      row => if (plain.addKeyTo(seen, row, fileKeys)) plain.appendTo(files, row),
      {
        case a: AddFile => if (seen.add(fileKeys.key(a))) addFile(a)
        case r: RemoveFile => if (seen.add(fileKeys.key(r))) addTombstone(r)
        case a => other(a)
      })
  }

  /** Sink for the checkpoint's actions (call after every commit was applied). */
  def checkpointSink: ReplaySink = new ReplaySink {
    private val check = !seen.isEmpty
    // Hashes of the keys met in commits (one bit per hash, a one-hash Bloom filter): a plain
    // checkpoint path, whose key is the path itself, is decoded and looked up only on a hit.
    private val seenHashes: java.util.BitSet = if (!check) null else {
      val b = new java.util.BitSet(SeenHashBits)
      // Keys that are not plain paths can only match checkpoint paths that are not plain either,
      // and those are always looked up.
      seen.iterator.foreach { k =>
        val h = PathCodec.plainPathHash(k)
        if (h != Long.MinValue) b.set(h.toInt & (SeenHashBits - 1))
      }
      b
    }
    private def maybeSeen(r: PlainAddRow): Boolean = {
      val h = PathCodec.plainPathHash(r.pathBuf, r.pathOff, r.pathLen)
      h == Long.MinValue || seenHashes.get(h.toInt & (SeenHashBits - 1))
    }
    override def accept(version: Long, action: Action): Unit = action match {
      case a: AddFile => if (!check || !seen.contains(fileKeys.key(a))) addFile(a)
      case r: RemoveFile => if (!check || !seen.contains(fileKeys.key(r))) addTombstone(r)
      case a => other(a)
    }
    override def wantsPlainAdds: Boolean = true
    override def expectAddBytesPerRow(path: Int, stats: Int): Unit = files.expectBytesPerRow(path, stats)
    override val detachedStats: DetachedStats = new DetachedStats {
      override def keptRows: Int = files.size
      override def keepsEveryAdd: Boolean = !check // no key met in a commit: every checkpoint add is live
      override def detach(): Utf8ColumnBuilder = files.detachStats()
      override def attach(stats: Utf8ColumnBuilder): Unit = files.attachStats(stats)
    }
    override def acceptPlainAdd(version: Long, r: PlainAddRow): Unit =
      if (!check || !maybeSeen(r) || !seen.contains(fileKeys.key(r.path, null))) {
        files.addPlain(r.pathBuf, r.pathOff, r.pathLen, r.partitionValues, r.size, r.modificationTime,
          r.statsBuf, r.statsOff, r.statsLen)
      }
  }

  /** Live domains (tombstones dropped). */
  def liveDomains: Map[String, DomainMetadata] = domains.iterator.filterNot(_._2.removed).toMap
}

/**
 * Loads a [[LogSegment]] into a [[SnapshotState]] (reverse replay, see [[ReverseReplay]]) and
 * applies new commits to an existing state ([[update]]).
 *
 * JSON commits are parsed by [[CommitReader]] (streaming fast path, several files in parallel,
 * delivered newest first). The checkpoint comes from a [[CheckpointSource]].
 *
 * Large logs: when a [[DistributedReplay]] is registered in [[LogReplay.distributedReplay]] and
 * the estimated number of actions (checkpoint size in bytes / 100 plus commit bytes / 250)
 * exceeds its [[DistributedReplay.threshold]], it is used instead of the local path.
 *
 * @param tablePath for error messages
 */
final class LogReplay(
    fs: FileSystem,
    conf: Configuration,
    tablePath: String,
    commitReader: CommitReader,
    checkpoints: CheckpointSource = CheckpointSource.Files) {

  val fileKeys: FileKeys = FileKeys.forFileSystem(fs.getUri)

  /**
   * Full replay of `segment`. `known`: the protocol and metadata of the segment's version as the
   * metadata-only path read them from the same log; when given, the checkpoint's protocol and
   * metaData rows are not read again. `checkpointAdds`: the number of `add` rows of the
   * segment's checkpoint (from `_last_checkpoint`), for sizing the state.
   */
  def load(segment: LogSegment, known: Option[(Protocol, Metadata)] = None,
      checkpointAdds: Option[Long] = None, kept: CommitBytes = null): SnapshotState = {
    // JSON commits: a file action line takes a few hundred bytes
    val commitKeys = math.min(segment.deltas.iterator.map(LocalLogFile.lengthHint).sum / 300, 1L << 22).toInt
    LogReplay.distributedReplay match {
      case Some(d) if LogReplay.estimatedActions(segment) > d.threshold(conf) =>
        return d.replay(segment, tablePath, fileKeys, conf,
          checkpointAdds.filter(_ => segment.checkpoint.isDefined).map(_ + commitKeys).getOrElse(0L))
      case _ =>
    }
    // The state's arrays are sized up front: `_last_checkpoint.numOfAddFiles` when it describes
    // this checkpoint, else a generous guess from its size (a row takes 64+ bytes).
    val expected = segment.checkpoint.map(c => checkpointAdds.map(n => math.min(n, Int.MaxValue.toLong).toInt)
      .getOrElse((c.files.map(_.getLen).sum / 64).toInt)).getOrElse(0)
    val jsonOnlyBytes = if (segment.checkpoint.isEmpty) segment.deltas.iterator.map(LocalLogFile.lengthHint).sum else 0L
    val r = new ReverseReplay(fileKeys, math.max(1024, math.min(expected + commitKeys, 1 << 22)), commitKeys, jsonOnlyBytes)
    commitReader.readInOrderForReplay(segment.deltas.reverse, fileKeys, kept)(r.applyCommit)
    segment.checkpoint.foreach { cp =>
      // Commits after the checkpoint win; what they did not set is the checkpoint's, which the
      // metadata-only path read already when `known` is given.
      known.foreach { case (p, m) =>
        if (r.protocol == null) r.protocol = p
        if (r.metadata == null) r.metadata = m
      }
      if (r.protocol != null && r.metadata != null) {
        checkpoints.readWithoutProtocolAndMetadata(conf, cp, r.checkpointSink, skipRemoves = false)
      } else checkpoints.read(conf, cp, r.checkpointSink, skipRemoves = false)
    }
    if (r.protocol == null) {
      throw new StateRecoverException(tablePath, segment.version, "no protocol action found in the log")
    }
    if (r.metadata == null) {
      throw new StateRecoverException(tablePath, segment.version, "no metaData action found in the log")
    }
    val snapshotCommitInfo = if (segment.deltas.nonEmpty) r.newestCommitInfo else None
    new SnapshotState(segment.version, r.protocol, r.metadata, r.txns.toMap, r.liveDomains,
      Vector(r.files.result()), Vector(null), r.tombstones.toIndexedSeq, r.inCommitTimestamps.toMap,
      snapshotCommitInfo, fileKeys)
  }

  /**
   * Applies `newCommits` (contiguous, in version order, starting at `base.version + 1`) on top of
   * `base`. Unchanged chunks are shared; the checkpoint is not read again.
   */
  def update(base: SnapshotState, newCommits: Seq[FileStatus]): SnapshotState = {
    if (newCommits.isEmpty) return base
    val r = new ReverseReplay(fileKeys)
    commitReader.readInOrderForReplay(newCommits.reverse, fileKeys)(r.applyCommit)
    val newVersion = CommitReader.versionOf(newCommits.last)

    val keys = base.fileKeys
    var deleted = base.deleted
    if (!r.seen.isEmpty) {
      val cloned = Array.fill(base.chunks.size)(false)
      val it = r.seen.iterator
      while (it.hasNext) {
        val key = it.next()
        var ci = base.chunks.size - 1
        var found = false
        while (ci >= 0 && !found) {
          val row = base.chunks(ci).indexOf(key, keys)
          if (row >= 0 && (deleted(ci) == null || !deleted(ci).get(row))) {
            if (!cloned(ci)) {
              val b = if (deleted(ci) == null) new java.util.BitSet(base.chunks(ci).length)
                else deleted(ci).clone().asInstanceOf[java.util.BitSet]
              deleted = deleted.updated(ci, b)
              cloned(ci) = true
            }
            deleted(ci).set(row)
            found = true
          }
          ci -= 1
        }
      }
    }
    val oldTombstones =
      if (r.seen.isEmpty) base.allTombstones
      else base.allTombstones.filterNot(t => r.seen.contains(keys.key(t)))

    var chunks = base.chunks :+ r.files.result()
    deleted = deleted :+ null
    val protocol = Option(r.protocol).getOrElse(base.protocol)
    val metadata = Option(r.metadata).getOrElse(base.metadata)
    val txns = base.setTransactions ++ r.txns
    val domains = (base.domainMetadata -- r.domains.keys) ++ r.liveDomains

    // Merge chunks when there are too many or too many deleted rows.
    val totalRows = chunks.map(_.length.toLong).sum
    val deletedRows = deleted.map(b => if (b == null) 0L else b.cardinality().toLong).sum
    if (chunks.size > SnapshotState.MaxChunks || (totalRows > 1024 && deletedRows * 2 > totalRows)) {
      val b = new FileChunkBuilder(math.max(16, (totalRows - deletedRows).toInt))
      chunks.indices.foreach { ci =>
        val c = chunks(ci)
        val d = deleted(ci)
        var i = 0
        while (i < c.length) { if (d == null || !d.get(i)) b.addFrom(c, i); i += 1 }
      }
      chunks = Vector(b.result())
      deleted = Vector(null)
    }
    new SnapshotState(newVersion, protocol, metadata, txns, domains, chunks, deleted,
      oldTombstones ++ r.tombstones, base.inCommitTimestamps ++ r.inCommitTimestamps, r.newestCommitInfo, keys)
  }

  /**
   * Protocol and metadata at `segment.version` without loading files: commits are scanned newest
   * first until both are found, then the checkpoint's rows are used for what is still missing.
   * Also returns the in-commit timestamp of the segment's own version when its commit was read.
   * The commits read are offered to `keep` (see [[CommitBytes]]).
   */
  def protocolAndMetadata(segment: LogSegment, keep: CommitBytes = null): (Option[Protocol], Option[Metadata], Option[Long]) = {
    var protocol: Protocol = null
    var metadata: Metadata = null
    var ict: Option[Long] = None
    // Only lines that can hold a protocol / metaData are parsed (plus the commitInfo of the
    // newest commit), several commits in parallel, newest first, stopping once both are found.
    val newestFirst = segment.deltas.reverse
    val newest = newestFirst.headOption.orNull
    var first = true
    commitReader.readInOrderUntil(newestFirst, f => commitReader.readProtocolAndMetadata(f, f eq newest, keep)) { c =>
      if (first) { ict = c.inCommitTimestamp; first = false }
      var i = c.actions.length - 1
      while (i >= 0) {
        c.actions(i) match {
          case p: Protocol => if (protocol == null) protocol = p
          case m: Metadata => if (metadata == null) metadata = m
          case bad: MalformedAction =>
            if ((bad.name == "protocol" && protocol == null) || (bad.name == Metadata.ActionName && metadata == null)) {
              throw bad.error
            }
          case _ =>
        }
        i -= 1
      }
      protocol == null || metadata == null
    }
    if ((protocol == null || metadata == null) && segment.checkpoint.isDefined) {
      val (p, m) = checkpoints.readProtocolAndMetadata(conf, segment.checkpoint.get)
      if (protocol == null) protocol = p.orNull
      if (metadata == null) metadata = m.orNull
    }
    (Option(protocol), Option(metadata), ict)
  }
}

object LogReplay {
  /** Property / Spark conf key of the distributed-replay threshold (estimated actions). */
  val DistributedThresholdKey = "spark.deltalog.replay.distributedThreshold"

  /**
   * Estimated-action count above which a registered [[DistributedReplay]] is used (default 5M):
   * the JVM system property of that name.
   */
  def distributedThreshold: Long =
    Option(System.getProperty(DistributedThresholdKey)).flatMap(_.trim.toLongOption).getOrElse(5000000L)

  /** [[DistributedThresholdKey]] of `conf` (a Spark session's conf reaches it), else [[distributedThreshold]]. */
  def distributedThreshold(conf: Configuration): Long =
    Option(conf.get(DistributedThresholdKey)).flatMap(_.trim.toLongOption).getOrElse(distributedThreshold)

  /** Registered distributed implementation; None = always replay locally. */
  @volatile var distributedReplay: Option[DistributedReplay] = None

  /** Rough number of actions of a segment, from file sizes. */
  def estimatedActions(segment: LogSegment): Long =
    segment.checkpoint.map(_.files.map(_.getLen).sum / 100).getOrElse(0L) +
      segment.deltas.iterator.map(LocalLogFile.lengthHint).sum / 250
}

/** [[CheckpointSource]] over [[CheckpointReader]]. */
private[log] object CheckpointReaderAdapter extends CheckpointSource {
  override def read(conf: Configuration, checkpoint: CheckpointInstance, sink: ReplaySink,
      skipRemoves: Boolean): Unit =
    CheckpointReader.read(conf, checkpoint, sink, CheckpointReadOptions(skipRemoves = skipRemoves))

  override def readWithoutProtocolAndMetadata(conf: Configuration, checkpoint: CheckpointInstance, sink: ReplaySink,
      skipRemoves: Boolean): Unit =
    CheckpointReader.read(conf, checkpoint, sink,
      CheckpointReadOptions(skipRemoves = skipRemoves, skipProtocolAndMetadata = true))

  override def readProtocolAndMetadata(conf: Configuration,
      checkpoint: CheckpointInstance): (Option[Protocol], Option[Metadata]) =
    CheckpointReader.readProtocolAndMetadata(conf, checkpoint)
}
