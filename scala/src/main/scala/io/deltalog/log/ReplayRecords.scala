package io.deltalog.log

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.deltalog.actions._
import io.deltalog.protocol.Protocol

/**
 * One log file for a distributed replay: a JSON commit, a checkpoint file (one part of a
 * multi-part set, or a classic / V2 top-level file read without following its sidecars), or a V2
 * sidecar. Plain strings and numbers, so that it travels to an executor as is.
 */
final case class ReplayUnit(kind: Int, path: String, length: Long, version: Long) {
  def status: FileStatus = new FileStatus(length, false, 1, 0L, 0L, new Path(new java.net.URI(path)))
}

object ReplayUnit {
  val Commit = 0
  val CheckpointFile = 1
  val Sidecar = 2
}

/**
 * The records of a distributed log replay (no Spark here: the job that moves them lives in the
 * Spark layer). Each action of a unit becomes `(key, record)`:
 *
 *  - `add` / `remove`: key = the logical file's key (`(path, dvId)`, [[FileKeys]]);
 *  - `protocol`, `metaData`, `txn` (per `appId`), `domainMetadata` (per domain): keys starting
 *    with `'\u0000'` (no file key does), so that "the newest wins" is the same rule for them;
 *  - a commit's first `commitInfo`: its own key per version (for in-commit timestamps).
 *
 * A record is `[kind: 1 byte][version: 8][order: 4][the action as one JSON log line]` (plain
 * checkpoint `add` rows: binary, [[encodePlain]]), where
 * `order` is the action's index in its commit (-1 in a checkpoint, which is reconciled already
 * and older than every commit of the segment). [[newer]] keeps the record of the highest
 * (version, order): the seeds' InMemoryLogReplay rule, applied per key. [[ReplayAssembler]] turns
 * the surviving records into a [[SnapshotState]] equal to [[LogReplay.load]]'s.
 */
object ReplayRecords {
  val Add: Byte = 0
  val Remove: Byte = 1
  val ProtocolKind: Byte = 2
  val MetadataKind: Byte = 3
  val Txn: Byte = 4
  val Domain: Byte = 5
  val CommitInfoKind: Byte = 6
  /** A `protocol` / `metaData` line that does not parse: fatal only if it is the newest one. */
  val Malformed: Byte = 7
  /**
   * A plain checkpoint `add` row ([[PlainAddRow]]) in binary instead of JSON: path, size,
   * modificationTime, stats, partition values (see [[encodePlain]]); the driver appends it to
   * the state column-wise, as the local replay does.
   */
  val PlainAdd: Byte = 8

  private[log] val HeaderBytes = 13
  val ProtocolKey = "\u0000p"
  val MetadataKey = "\u0000m"

  def encode(kind: Byte, version: Long, order: Int, payload: Array[Byte]): Array[Byte] = {
    val b = ByteBuffer.allocate(HeaderBytes + payload.length)
    b.put(kind).putLong(version).putInt(order).put(payload)
    b.array()
  }

  private def utf8(s: String): Array[Byte] = if (s == null) null else s.getBytes(UTF_8)

  /** `[header][pathLen][path][size][mtime][statsLen | -1][stats][n][keyLen key valueLen|-1 value]*n`. */
  def encodePlain(version: Long, row: PlainAddRow): Array[Byte] = {
    val pv = row.partitionValues.toArray.map { case (k, v) => (utf8(k), utf8(v)) }
    val pvBytes = pv.map { case (k, v) => 8 + k.length + (if (v == null) 0 else v.length) }.sum
    val statsLen = if (row.statsBuf == null) -1 else row.statsLen
    val b = ByteBuffer.allocate(HeaderBytes + 4 + row.pathLen + 16 + 4 + math.max(0, statsLen) + 4 + pvBytes)
    b.put(PlainAdd).putLong(version).putInt(-1)
    b.putInt(row.pathLen).put(row.pathBuf.duplicate().position(row.pathOff).limit(row.pathOff + row.pathLen))
    b.putLong(row.size).putLong(row.modificationTime)
    b.putInt(statsLen)
    if (statsLen >= 0) b.put(row.statsBuf.duplicate().position(row.statsOff).limit(row.statsOff + row.statsLen))
    b.putInt(pv.length)
    pv.foreach { case (k, v) =>
      b.putInt(k.length).put(k)
      if (v == null) b.putInt(-1) else b.putInt(v.length).put(v)
    }
    b.array()
  }

  /** Appends a [[PlainAdd]] record to `files` (no `AddFile` built). */
  private[log] def appendPlain(r: Array[Byte], files: FileChunkBuilder): Unit = {
    val b = ByteBuffer.wrap(r)
    b.position(HeaderBytes)
    val pathLen = b.getInt()
    val pathOff = b.position()
    b.position(pathOff + pathLen)
    val size = b.getLong()
    val mtime = b.getLong()
    val statsLen = b.getInt()
    val statsOff = b.position()
    if (statsLen > 0) b.position(statsOff + statsLen)
    val n = b.getInt()
    var pv = Map.empty[String, String]
    var i = 0
    while (i < n) {
      val kl = b.getInt(); val k = new String(r, b.position(), kl, UTF_8); b.position(b.position() + kl)
      val vl = b.getInt()
      val v = if (vl < 0) null else { val x = new String(r, b.position(), vl, UTF_8); b.position(b.position() + vl); x }
      pv = pv.updated(k, v)
      i += 1
    }
    val whole = ByteBuffer.wrap(r)
    files.addPlain(whole, pathOff, pathLen, pv, size, mtime, if (statsLen < 0) null else whole, statsOff,
      math.max(0, statsLen))
  }

  def kindOf(r: Array[Byte]): Byte = r(0)
  def versionOf(r: Array[Byte]): Long = ByteBuffer.wrap(r).getLong(1)
  def orderOf(r: Array[Byte]): Int = ByteBuffer.wrap(r).getInt(9)

  /** The record that wins for one key: the newest version, then the latest in the commit. */
  def newer(a: Array[Byte], b: Array[Byte]): Array[Byte] = {
    val va = versionOf(a)
    val vb = versionOf(b)
    if (va != vb) { if (va > vb) a else b }
    else if (orderOf(a) >= orderOf(b)) a else b
  }

  /** Reads `unit` with the driver's parsers and hands every record to `emit`. */
  def read(unit: ReplayUnit, conf: Configuration, fileKeys: FileKeys)(emit: (String, Array[Byte]) => Unit): Unit =
    unit.kind match {
      case ReplayUnit.Commit => readCommit(unit, conf, fileKeys, emit)
      case ReplayUnit.CheckpointFile =>
        CheckpointReader.read(conf, CheckpointInstance(unit.version, Seq(unit.status)),
          new CheckpointRecordSink(fileKeys, emit), CheckpointReadOptions(followSidecars = false))
      case ReplayUnit.Sidecar =>
        val path = new Path(new java.net.URI(unit.path))
        val status =
          try path.getFileSystem(conf).getFileStatus(path)
          catch {
            case e: java.io.FileNotFoundException =>
              throw new io.deltalog.exceptions.CorruptLogFileException(path.toString,
                s"sidecar file referenced by the checkpoint of version ${unit.version} is missing", e)
          }
        CheckpointReader.readSidecar(conf, status, unit.version, new CheckpointRecordSink(fileKeys, emit))
      case k => throw new IllegalArgumentException(s"unknown replay unit kind $k")
    }

  private def json(a: Action): Array[Byte] = a.json.getBytes(UTF_8)

  /** `(key, record)` of an action that is not a file action; None for the ones replay ignores. */
  private def small(a: Action, version: Long, order: Int): Option[(String, Array[Byte])] = a match {
    case p: Protocol => Some(ProtocolKey -> encode(ProtocolKind, version, order, json(p)))
    case m: Metadata => Some(MetadataKey -> encode(MetadataKind, version, order, json(m)))
    case t: SetTransaction => Some(("\u0000t" + t.appId) -> encode(Txn, version, order, json(t)))
    case d: DomainMetadata => Some(("\u0000d" + d.domain) -> encode(Domain, version, order, json(d)))
    case bad: MalformedAction if bad.name == "protocol" =>
      Some(ProtocolKey -> encode(Malformed, version, order, Array.emptyByteArray))
    case bad: MalformedAction if bad.name == Metadata.ActionName =>
      Some(MetadataKey -> encode(Malformed, version, order, Array.emptyByteArray))
    case _ => None // commitInfo (handled per commit), cdc, checkpointMetadata, sidecar, unknown
  }

  private def readCommit(unit: ReplayUnit, conf: Configuration, fileKeys: FileKeys,
      emit: (String, Array[Byte]) => Unit): Unit = {
    val status = unit.status
    val c = new CommitReader(status.getPath.getFileSystem(conf)).read(status)
    val v = unit.version
    c.commitInfo.foreach(ci => emit("\u0000c" + v, encode(CommitInfoKind, v, -1, json(ci))))
    val actions = c.actions
    var i = 0
    while (i < actions.length) {
      actions(i) match {
        case a: AddFile => emit(fileKeys.key(a), encode(Add, v, i, json(a)))
        case r: RemoveFile => emit(fileKeys.key(r), encode(Remove, v, i, json(r)))
        case other => small(other, v, i).foreach { case (k, r) => emit(k, r) }
      }
      i += 1
    }
  }

  /** Checkpoint actions as records (`order` -1); plain `add` rows are taken column-wise. */
  private final class CheckpointRecordSink(fileKeys: FileKeys, emit: (String, Array[Byte]) => Unit)
      extends ReplaySink {
    override def accept(version: Long, action: Action): Unit = action match {
      case a: AddFile => emit(fileKeys.key(a), encode(Add, version, -1, json(a)))
      case r: RemoveFile => emit(fileKeys.key(r), encode(Remove, version, -1, json(r)))
      case other => small(other, version, -1).foreach { case (k, r) => emit(k, r) }
    }
    override def wantsPlainAdds: Boolean = true
    override def acceptPlainAdd(version: Long, row: PlainAddRow): Unit =
      emit(fileKeys.key(row.path, null), encodePlain(version, row))
  }

  /** Parses the JSON line of a record. */
  private[log] def action(r: Array[Byte], what: String): Action =
    CommitReader.parseLine(r, HeaderBytes, r.length - HeaderBytes, what, 1)
}

/**
 * Builds the [[SnapshotState]] of `segment` from the records that won their key (in any order):
 * the live `add`s go into one [[FileChunk]], `remove`s become tombstones (`dataChange = false`),
 * the newest protocol / metadata / txn / domain metadata are kept (removed domains dropped), and
 * in-commit timestamps and the newest commit's `commitInfo` are taken from the commit records,
 * as [[LogReplay.load]] does. Only the final state is held: records are consumed one by one.
 *
 * @param expectedFiles sizing hint for the file chunk
 */
final class ReplayAssembler(segment: LogSegment, tablePath: String, fileKeys: FileKeys, conf: Configuration,
    expectedFiles: Int) {
  private val files = new FileChunkBuilder(math.max(1024, expectedFiles))
  private val tombstones = scala.collection.mutable.ArrayBuffer.empty[RemoveFile]
  private var protocol: Protocol = _
  private var metadata: Metadata = _
  private var malformed: List[(String, Long)] = Nil
  private var checkpointProtocol = false
  private var checkpointMetadata = false
  private val txns = scala.collection.mutable.HashMap.empty[String, SetTransaction]
  private val domains = scala.collection.mutable.HashMap.empty[String, DomainMetadata]
  private val timestamps = scala.collection.mutable.HashMap.empty[Long, Long]
  private var newestCommitInfo: Option[CommitInfo] = None
  private val newestDelta: Long = if (segment.deltas.isEmpty) -1L else segment.deltaVersions.max
  private val what = s"distributed replay of $tablePath at version ${segment.version}"

  def accept(r: Array[Byte]): Unit = {
    val kind = ReplayRecords.kindOf(r)
    if (kind == ReplayRecords.PlainAdd) {
      ReplayRecords.appendPlain(r, files)
      return
    }
    if (kind == ReplayRecords.Malformed) {
      malformed ::= ((if (ReplayRecords.orderOf(r) >= 0) "commit" else "checkpoint"), ReplayRecords.versionOf(r))
      return
    }
    ReplayRecords.action(r, what) match {
      case a: AddFile if kind == ReplayRecords.Add => files += a
      // A checkpoint's protocol / metaData row the reader took but the JSON codec refuses (e.g. no
      // schemaString): the driver reads those two rows itself, as the local replay has them.
      case _: MalformedAction if ReplayRecords.orderOf(r) < 0 &&
          (kind == ReplayRecords.ProtocolKind || kind == ReplayRecords.MetadataKind) =>
        if (kind == ReplayRecords.ProtocolKind) checkpointProtocol = true else checkpointMetadata = true
      case t: RemoveFile => tombstones += (if (t.dataChange) t.copy(dataChange = false) else t)
      case p: Protocol => protocol = p
      case m: Metadata => metadata = m
      case t: SetTransaction => txns(t.appId) = t
      case d: DomainMetadata => if (!d.removed) domains(d.domain) = d
      case ci: CommitInfo =>
        val v = ReplayRecords.versionOf(r)
        ci.inCommitTimestamp.foreach(ts => timestamps(v) = ts)
        if (v == newestDelta) newestCommitInfo = Some(ci)
      case other =>
        throw new io.deltalog.exceptions.StateRecoverException(tablePath, segment.version,
          s"distributed replay returned an unexpected ${other.actionName} record")
    }
  }

  def result(): SnapshotState = {
    if (checkpointProtocol || checkpointMetadata) segment.checkpoint.foreach { cp =>
      val (p, m) = CheckpointReader.readProtocolAndMetadata(conf, cp)
      if (checkpointProtocol) protocol = p.orNull
      if (checkpointMetadata) metadata = m.orNull
    }
    // A protocol / metaData line that does not parse and is the newest one: the same error as the
    // local replay, from the commit read again here (rare).
    malformed.foreach { case (_, v) =>
      segment.deltas.find(d => CommitReader.versionOf(d) == v).foreach { d =>
        new CommitReader(d.getPath.getFileSystem(conf)).read(d).actions.reverseIterator.foreach {
          case bad: MalformedAction if (bad.name == "protocol" && protocol == null) ||
              (bad.name == Metadata.ActionName && metadata == null) => throw bad.error
          case _ =>
        }
      }
    }
    if (protocol == null) {
      throw new io.deltalog.exceptions.StateRecoverException(tablePath, segment.version,
        "no protocol action found in the log")
    }
    if (metadata == null) {
      throw new io.deltalog.exceptions.StateRecoverException(tablePath, segment.version,
        "no metaData action found in the log")
    }
    new SnapshotState(segment.version, protocol, metadata, txns.toMap, domains.toMap,
      Vector(files.result()), Vector(null), tombstones.toIndexedSeq, timestamps.toMap, newestCommitInfo, fileKeys)
  }
}
