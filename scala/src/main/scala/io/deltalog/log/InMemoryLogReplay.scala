package io.deltalog.log

import scala.collection.mutable

import io.deltalog.actions._
import io.deltalog.exceptions.DeltalogAssertionError
import io.deltalog.protocol.Protocol

/**
 * Reconciliation keys of logical files (`(path, dvId)`, digest §3.2), shared by every replay so
 * that [[InMemoryLogReplay]] and [[LogReplay]] agree exactly.
 *
 * The path part is [[PathCodec.canonicalPathKey]] plus the qualification delta-spark applies
 * during state reconstruction: an absolute URI whose scheme and authority are those of the
 * table's file system (`file:/x`, `file:///x`, `hdfs://nn/x` on `hdfs://nn`) and a scheme-less
 * absolute path (`/x`) compare equal; the path part of an absolute URI is re-escaped the same
 * way as a relative path. Keys are plain strings: `pathKey` alone, or `pathKey + '\u0000' + dvId`.
 *
 * @param fsScheme    scheme of the table's file system (e.g. "file", "s3a")
 * @param fsAuthority authority of the table's file system (null or "" when it has none)
 */
final class FileKeys(fsScheme: String, fsAuthority: String) extends Serializable {
  private val scheme = Option(fsScheme).map(_.toLowerCase(java.util.Locale.ROOT)).orNull
  private val authority = Option(fsAuthority).filter(_.nonEmpty).orNull

  /** Canonical key of a stored (URI-encoded) path. */
  def pathKey(path: String): String =
    if (PathCodec.isPlain(path)) path // fast path: nothing to decode, re-encode or qualify
    else try canonical(path) catch { case _: IllegalArgumentException => path }

  private def canonical(path: String): String = {
    if (path.isEmpty) return path
    if (path.charAt(0) == '/') return PathCodec.canonicalPathKey(path)
    if (!PathCodec.isAbsolute(path)) return PathCodec.canonicalPathKey(path)
    // scheme ':' ['//' authority] path
    val colon = path.indexOf(':')
    val s = path.substring(0, colon).toLowerCase(java.util.Locale.ROOT)
    var rest = path.substring(colon + 1)
    var auth: String = null
    if (rest.startsWith("//")) {
      val slash = rest.indexOf('/', 2)
      auth = if (slash < 0) rest.substring(2) else rest.substring(2, slash)
      rest = if (slash < 0) "/" else rest.substring(slash)
    }
    if (auth != null && auth.isEmpty) auth = null
    val canonRest = try PathCodec.canonicalPathKey(rest) catch { case _: IllegalArgumentException => rest }
    if (scheme != null && s == scheme && (auth == null || auth == authority)) canonRest
    else if (auth == null) s + ":" + canonRest
    else s + "://" + auth + canonRest
  }

  /** Key of a logical file from its stored path and DV unique id (may be null). */
  def key(path: String, dvUniqueId: String): String = {
    val p = pathKey(path)
    if (dvUniqueId == null) p else p + '\u0000' + dvUniqueId
  }

  /** Key of an `add` / `remove`. */
  def key(a: FileAction): String = key(a.path, a.deletionVector match {
    case Some(dv) => dv.uniqueId
    case None => null
  })
}

object FileKeys {
  /** Keys for a table on the local file system. */
  val Local: FileKeys = new FileKeys("file", null)

  /** Keys for a table on the file system with this URI. */
  def forFileSystem(uri: java.net.URI): FileKeys = new FileKeys(uri.getScheme, uri.getAuthority)
}

/**
 * The reference forward replay (the seed): actions are appended one commit at a time in version
 * order and reconciled in memory with one object per logical file.
 *
 *  - `protocol` / `metaData`: the latest wins;
 *  - `txn`: the latest occurrence per `appId` wins; with a `minSetTransactionRetentionTimestamp`
 *    only those with `lastUpdated` above it are reported;
 *  - `domainMetadata`: the latest per domain wins, `removed = true` drops the domain;
 *  - `add`: becomes the live file of its key `(path, dvId)` (with `dataChange = false`) and
 *    cancels a tombstone of that key;
 *  - `remove`: drops the live file of its key and becomes its tombstone (with
 *    `dataChange = false`); tombstones are reported while `deletionTimestamp` (missing = 0) is
 *    above `minFileRetentionTimestamp` (None keeps all);
 *  - `commitInfo`, `cdc` and checkpoint-only actions are ignored.
 *
 * Not thread safe.
 */
class InMemoryLogReplay(
    val minFileRetentionTimestamp: Option[Long],
    val minSetTransactionRetentionTimestamp: Option[Long],
    val fileKeys: FileKeys = FileKeys.Local) {

  /** Convenience: a fixed file retention timestamp and no transaction retention. */
  def this(minFileRetentionTimestamp: Long) = this(Some(minFileRetentionTimestamp), None)

  private var _currentProtocolVersion: Protocol = null
  private var _currentVersion: Long = -1L
  private var _currentMetaData: Metadata = null
  private val _transactions = mutable.LinkedHashMap.empty[String, SetTransaction]
  private val _domainMetadata = mutable.LinkedHashMap.empty[String, DomainMetadata]
  private val _activeFiles = mutable.LinkedHashMap.empty[String, AddFile]
  private val _tombstones = mutable.LinkedHashMap.empty[String, RemoveFile]

  /**
   * Applies the actions of commit (or checkpoint) `version`.
   *
   * @throws DeltalogAssertionError (an `AssertionError`) unless this is the first append or
   *                                `version == currentVersion + 1`
   */
  def append(version: Long, actions: Iterator[Action]): Unit = {
    if (!(_currentVersion == -1L || version == _currentVersion + 1)) {
      throw new DeltalogAssertionError("DELTA_REPLAY_VERSION_ORDER",
        s"Attempted to replay version $version, but state is at ${_currentVersion}")
    }
    _currentVersion = version
    actions.foreach {
      case t: SetTransaction =>
        _transactions.remove(t.appId)
        _transactions(t.appId) = t
      case d: DomainMetadata =>
        _domainMetadata.remove(d.domain)
        if (!d.removed) _domainMetadata(d.domain) = d
      case m: Metadata => _currentMetaData = m
      case p: Protocol => _currentProtocolVersion = p
      case add: AddFile =>
        val k = fileKeys.key(add)
        _activeFiles.remove(k)
        _activeFiles(k) = if (add.dataChange) add.copy(dataChange = false) else add
        _tombstones.remove(k)
      case rm: RemoveFile =>
        val k = fileKeys.key(rm)
        _activeFiles.remove(k)
        _tombstones.remove(k)
        _tombstones(k) = if (rm.dataChange) rm.copy(dataChange = false) else rm
      case _ => // commitInfo, cdc, checkpointMetadata, sidecar, unknown actions
    }
  }

  /** Version of the last append, -1 before the first. */
  def currentVersion: Long = _currentVersion
  /** The latest protocol, or null. */
  def currentProtocolVersion: Protocol = _currentProtocolVersion
  /** The latest metadata, or null. */
  def currentMetaData: Metadata = _currentMetaData

  /** Live transactions (retention applied), by appId. */
  def transactions: Map[String, SetTransaction] = minSetTransactionRetentionTimestamp match {
    case None => _transactions.toMap
    case Some(ts) => _transactions.iterator.filter(_._2.lastUpdated.exists(_ > ts)).toMap
  }

  /** Live domain metadata (no tombstones), by domain. */
  def domainMetadata: Map[String, DomainMetadata] = _domainMetadata.toMap

  /** Live files by logical-file key. */
  def activeFiles: Map[String, AddFile] = _activeFiles.toMap

  /** Unexpired tombstones by logical-file key. */
  def tombstones: Map[String, RemoveFile] = minFileRetentionTimestamp match {
    case None => _tombstones.toMap
    case Some(ts) => _tombstones.iterator.filter(_._2.delTimestamp > ts).toMap
  }

  /**
   * The reconciled state as actions: protocol, metadata, transactions, domain metadata, then the
   * live files and unexpired tombstones sorted by path.
   */
  def checkpoint: Iterator[Action] = {
    val files: Seq[FileAction] = (_activeFiles.valuesIterator ++ tombstones.valuesIterator).toVector.sortBy(_.path)
    Option(_currentProtocolVersion).iterator ++
      Option(_currentMetaData).iterator ++
      transactions.valuesIterator ++
      _domainMetadata.valuesIterator ++
      files.iterator
  }
}
