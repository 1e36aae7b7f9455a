package io.deltalog.log

import java.io.{IOException, InputStream}
import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}
import java.util.concurrent.{Callable, ExecutionException, ExecutorService, Executors, Future, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.immutable.VectorMap
import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, JsonProcessingException, JsonToken}
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import io.deltalog.actions._
import io.deltalog.exceptions.{ActionParseException, CorruptLogFileException, DeltalogException}

/**
 * A `protocol` or `metaData` line that [[ActionCodec]] rejected. Replay raises [[error]] only if
 * the action would be used, i.e. no newer action of the same kind supersedes it (delta-spark
 * parses such lines leniently and then replaces them; e.g. an early `metaData` without
 * `schemaString` written by Delta Live Tables). Every other malformed line fails at once.
 */
final case class MalformedAction(name: String, error: ActionParseException) extends Action {
  override def actionName: String = name
  override def toJsonNode: com.fasterxml.jackson.databind.node.ObjectNode = throw error
}

/**
 * One parsed JSON commit.
 *
 * @param version    commit version (from the file name)
 * @param file       the commit file
 * @param actions    its actions in file order (blank lines skipped)
 */
final case class ParsedCommit(version: Long, file: FileStatus, actions: Array[Action]) {
  /** The first `commitInfo` of the commit, if any. */
  def commitInfo: Option[CommitInfo] = {
    var i = 0
    while (i < actions.length) {
      actions(i) match {
        case c: CommitInfo => return Some(c)
        case _ =>
      }
      i += 1
    }
    None
  }

  /** `commitInfo.inCommitTimestamp` of this commit, if present. */
  def inCommitTimestamp: Option[Long] = commitInfo.flatMap(_.inCommitTimestamp)
}

/**
 * Parses JSON commit files (`%020d.json`, also compacted / staged commits: any file of log lines).
 *
 * Every line goes through [[ActionCodec]] semantics. `add` and `remove` lines take a Jackson
 * streaming fast path that builds the case class directly; the fast path only accepts lines made
 * of the fields it models with their protocol types (no unknown field, no explicit null, no
 * duplicate key, integers in range). Anything else falls back to [[ActionCodec.parseLine]], so
 * the result (and every error, with file name and 1-based line number) is exactly the codec's.
 *
 * Several files are read in parallel on a small shared pool ([[CommitReader.Parallelism]]
 * threads, default 2, system property `deltalog.commitReader.threads`); results are delivered in
 * the order the files were given, with a bounded read-ahead.
 *
 * @param fs     file system of the log
 * @param onRead called (on a pool thread) for every file opened; a counter hook for tests
 */
final class CommitReader(fs: FileSystem, onRead: Path => Unit = _ => ()) {

  // Same test as LogStore's local listing (Spark may install a subclass of LocalFileSystem).
  private val localFs: Boolean = fs.getUri.getScheme == "file"

  /** Reads and parses one commit file. */
  def read(file: FileStatus): ParsedCommit = {
    val path = file.getPath
    val version = CommitReader.versionOf(path)
    ParsedCommit(version, file, readActions(path))
  }

  /**
   * Like [[read]], but only the lines that can hold a `protocol` or `metaData` action (and, with
   * `withCommitInfo`, a `commitInfo`) are parsed; see [[CommitReader.LineFilter]]. The result
   * holds those actions only.
   */
  def readProtocolAndMetadata(file: FileStatus, withCommitInfo: Boolean): ParsedCommit = {
    val path = file.getPath
    ParsedCommit(CommitReader.versionOf(path), file,
      readActions(path, if (withCommitInfo) CommitReader.PmAndCommitInfoLines else CommitReader.PmLines))
  }

  /** Reads and parses one file of log lines. */
  def readActions(path: Path): Array[Action] = readActions(path, null)

  private def readActions(path: Path, filter: CommitReader.LineFilter): Array[Action] = {
    onRead(path)
    val name = path.toString
    val bytes = try readBytes(path) catch {
      case e @ (_: java.io.FileNotFoundException | _: java.nio.file.NoSuchFileException) =>
        throw new CorruptLogFileException(name, "the file disappeared while the log was read " +
          "(concurrent cleanup?)", e)
      case e: IOException => throw new CorruptLogFileException(name, s"read failed: ${e.getMessage}", e)
    }
    CommitReader.parseBytes(bytes, bytes.length, name, filter)
  }

  /** The whole file (local files through NIO: no Hadoop stream or checksum file per commit). */
  private def readBytes(path: Path): Array[Byte] = {
    val uri = path.toUri
    if (localFs && (uri.getScheme == null || uri.getScheme == "file")) {
      java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(uri.getPath))
    } else {
      val in = try fs.open(path) catch {
        case e: java.io.FileNotFoundException => throw e
        case e: IOException => throw new CorruptLogFileException(path.toString, s"cannot open: ${e.getMessage}", e)
      }
      try in.readAllBytes() finally in.close()
    }
  }

  /**
   * Reads `files` in parallel and hands each result to `consume` in the order of `files`
   * (on the calling thread). At most `2 * Parallelism` files are parsed ahead of `consume`.
   * The first error (in file order) is rethrown.
   */
  def readInOrder(files: Seq[FileStatus])(consume: ParsedCommit => Unit): Unit =
    readInOrderUntil(files, read) { c => consume(c); true }

  /**
   * [[readInOrder]] with a custom parse function (run on the pool), stopping as soon as
   * `consume` returns false (files parsed ahead are dropped).
   */
  def readInOrderUntil(files: Seq[FileStatus], parse: FileStatus => ParsedCommit)(
      consume: ParsedCommit => Boolean): Unit = {
    if (files.isEmpty) return
    // Files that would travel as one batch anyway (a snapshot update after a few small commits,
    // a conflict check) are parsed on the calling thread: no hand-off, no pool wake-up.
    if (files.size == 1 || CommitReader.Parallelism <= 1 ||
        (files.size <= CommitReader.BatchFiles && files.iterator.map(_.getLen).sum <= CommitReader.BatchBytes)) {
      val it = files.iterator
      while (it.hasNext && consume(parse(it.next()))) {}
      return
    }
    val window = 2 * CommitReader.Parallelism
    // Small commits travel in batches (up to BatchFiles files / BatchBytes bytes per task), so the
    // hand-off between threads is not paid per file.
    // A file's error is kept in its slot and rethrown only when `consume` reaches that file.
    val pending = new java.util.ArrayDeque[Future[Array[AnyRef]]]()
    val it = files.iterator.buffered
    def submitNext(): Unit = if (it.hasNext) {
      val batch = Array.newBuilder[FileStatus]
      var n = 0
      var bytes = 0L
      while (it.hasNext && (n == 0 || (n < CommitReader.BatchFiles && bytes + it.head.getLen <= CommitReader.BatchBytes))) {
        val f = it.next()
        batch += f
        n += 1
        bytes += f.getLen
      }
      val fs = batch.result()
      pending.add(CommitReader.pool.submit(new Callable[Array[AnyRef]] {
        def call(): Array[AnyRef] = fs.map { f =>
          try parse(f): AnyRef
          catch { case e: Throwable => e }
        }
      }))
    }
    try {
      while (pending.size < window && it.hasNext) submitNext()
      var continue = true
      while (continue && !pending.isEmpty) {
        val fut = pending.poll()
        val parsed = try fut.get() catch {
          case e: ExecutionException => throw e.getCause
        }
        submitNext()
        var i = 0
        while (continue && i < parsed.length) {
          parsed(i) match {
            case e: Throwable => throw e
            case c: ParsedCommit => continue = consume(c)
          }
          i += 1
        }
      }
    } finally {
      val rest = pending.iterator()
      while (rest.hasNext) rest.next().cancel(true)
    }
  }
}

object CommitReader {
  /** Threads used to parse commits in parallel (default 2). */
  val Parallelism: Int =
    Option(System.getProperty("deltalog.commitReader.threads")).flatMap(_.toIntOption).filter(_ > 0).getOrElse(2)

  /** At most this many commit files per parallel task... */
  private val BatchFiles = 16
  /** ... and at most this many bytes (a larger file is a task of its own). */
  private val BatchBytes = 256L * 1024

  private[log] lazy val pool: ExecutorService = Executors.newFixedThreadPool(Parallelism, new ThreadFactory {
    private val n = new AtomicInteger()
    def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"deltalog-commit-reader-${n.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  })

  private val Delta = """^(\d+)\.json$""".r

  /** Version of a `%020d.json` file, or -1 for other files of log lines. */
  def versionOf(path: Path): Long = path.getName match {
    case Delta(v) => v.toLong
    case _ => -1L
  }

  private val factory: JsonFactory = Action.mapper.getFactory

  /**
   * Which lines of a commit [[CommitReader.readProtocolAndMetadata]] parses: a line is skipped
   * only when its bytes prove it holds none of the wanted actions, i.e. it contains none of the
   * quoted names (a JSON key `"protocol"` can only appear literally, since quotes inside strings
   * are escaped) and no backslash-u escape (a key could be spelled with escapes). Skipped lines are not
   * validated; the full replay still parses them.
   */
  final class LineFilter private[CommitReader] (names: Seq[String]) {
    private val needles: Array[String] = (names.map(n => "\"" + n + "\"") :+ "\\u").toArray

    /**
     * Start offsets of the lines of `bytes(0 until len)` that contain a needle, ascending. The
     * text is searched as Latin-1 with `String.indexOf` (a vectorised intrinsic): most commits
     * hold no needle at all and cost a few fast scans.
     */
    def candidateLines(bytes: Array[Byte], len: Int): Array[Int] = {
      val text = new String(bytes, 0, len, StandardCharsets.ISO_8859_1)
      var starts: java.util.TreeSet[Integer] = null
      var k = 0
      while (k < needles.length) {
        var p = text.indexOf(needles(k))
        while (p >= 0) {
          val lineStart = text.lastIndexOf('\n', p) + 1
          if (starts == null) starts = new java.util.TreeSet[Integer]()
          starts.add(lineStart)
          val next = text.indexOf('\n', p)
          p = if (next < 0) -1 else text.indexOf(needles(k), next + 1)
        }
        k += 1
      }
      if (starts == null) Array.emptyIntArray
      else {
        val out = new Array[Int](starts.size)
        val it = starts.iterator()
        var i = 0
        while (it.hasNext) { out(i) = it.next().intValue; i += 1 }
        out
      }
    }
  }

  private[log] val PmLines = new LineFilter(Seq("protocol", Metadata.ActionName))
  private[log] val PmAndCommitInfoLines = new LineFilter(Seq("protocol", Metadata.ActionName, CommitInfo.ActionName))

  /** Parses the whole text of a log file held in memory (tests and small files). */
  def parseBytes(bytes: Array[Byte], file: String): Array[Action] = parseBytes(bytes, bytes.length, file, null)

  /** Parses a stream of log lines (`\n` or `\r\n` separated, blank lines skipped). */
  def parseStream(in: InputStream, file: String): Array[Action] = {
    val bytes = in.readAllBytes()
    parseBytes(bytes, bytes.length, file, null)
  }

  /**
   * Parses the log lines in `bytes(0 until len)` in place; with a `filter`, lines it rules out
   * are skipped (line numbers still count them).
   */
  def parseBytes(bytes: Array[Byte], len: Int, file: String, filter: LineFilter): Array[Action] = {
    if (filter != null) return parseCandidateLines(bytes, len, file, filter)
    val out = new java.util.ArrayList[Action](math.max(4, len / 300))
    // Line ends found with String.indexOf on a Latin-1 view (a vectorised intrinsic).
    val text = new String(bytes, 0, len, StandardCharsets.ISO_8859_1)
    var lineNo = 0
    var start = 0
    while (start < len) {
      var end = text.indexOf('\n', start)
      if (end < 0) end = len
      lineNo += 1
      var l = end - start
      if (l > 0 && bytes(start + l - 1) == '\r') l -= 1
      val a = parseLine(bytes, start, l, file, lineNo)
      if (a != null) out.add(a)
      start = end + 1
    }
    out.toArray(new Array[Action](out.size))
  }

  private def parseCandidateLines(bytes: Array[Byte], len: Int, file: String, filter: LineFilter): Array[Action] = {
    val starts = filter.candidateLines(bytes, len)
    val out = new java.util.ArrayList[Action](starts.length)
    var lineNo = 0
    var counted = 0 // line numbers: newlines in bytes(0 until counted) are counted in lineNo
    var k = 0
    while (k < starts.length) {
      val start = starts(k)
      while (counted < start) { if (bytes(counted) == '\n') lineNo += 1; counted += 1 }
      var end = start
      while (end < len && bytes(end) != '\n') end += 1
      var l = end - start
      if (l > 0 && bytes(start + l - 1) == '\r') l -= 1
      val a = parseLine(bytes, start, l, file, lineNo + 1)
      if (a != null) out.add(a)
      k += 1
    }
    out.toArray(new Array[Action](out.size))
  }

  /** Parses one line held in `bytes(off until off+len)`; null for a blank line. */
  def parseLine(bytes: Array[Byte], off: Int, len: Int, file: String, lineNo: Int): Action = {
    var s = off
    val end = off + len
    while (s < end && (bytes(s) == ' ' || bytes(s) == '\t' || bytes(s) == '\r')) s += 1
    if (s == end) return null
    val fast = fastParse(bytes, off, len)
    if (fast != null) return fast
    val text = decodeUtf8(bytes, off, len, file, lineNo)
    try ActionCodec.parseLine(text, file, lineNo).orNull
    catch {
      case e: ActionParseException => recover(text, file, lineNo, e)
    }
  }

  private val KnownActions = Set(AddFile.ActionName, RemoveFile.ActionName, Metadata.ActionName, "protocol",
    CommitInfo.ActionName, AddCDCFile.ActionName, SetTransaction.ActionName, DomainMetadata.ActionName,
    CheckpointMetadata.ActionName, SidecarFile.ActionName)

  /**
   * Lenient readings of lines the codec rejects, matching delta-spark's reader:
   *  - several top-level keys of which exactly one is a known action (the others are unknown
   *    actions, which readers must ignore): that action; none known: the line is ignored;
   *  - a `protocol` / `metaData` line with a bad body: a [[MalformedAction]] (fails only if used).
   * Anything else rethrows the codec's error.
   */
  private def recover(text: String, file: String, lineNo: Int, e: ActionParseException): Action = {
    val tree = try ActionCodec.reader.readTree(text) catch { case NonFatal(_) => throw e }
    if (tree == null || !tree.isObject) throw e
    if (tree.size() > 1) {
      val names = Vector.newBuilder[String]
      tree.fieldNames().forEachRemaining(n => names += n)
      val known = names.result().filter(KnownActions.contains)
      known match {
        case Seq() => null
        case Seq(name) =>
          try ActionCodec.parseAction(name, tree.get(name))
          catch {
            case inner: ActionParseException =>
              val located = new ActionParseException(file, lineNo, inner.field, inner.reason, inner.getCause)
              if (name == Metadata.ActionName || name == "protocol") MalformedAction(name, located) else throw located
          }
        case _ => throw e
      }
    } else if (tree.size() == 1) {
      val name = tree.fieldNames().next()
      if ((name == Metadata.ActionName || name == "protocol") && e.field != ActionCodec.LineField) {
        MalformedAction(name, e)
      } else throw e
    } else throw e
  }

  private def decodeUtf8(bytes: Array[Byte], off: Int, len: Int, file: String, lineNo: Int): String =
    try {
      StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes, off, len)).toString
    } catch {
      case e: CharacterCodingException =>
        throw new CorruptLogFileException(file, s"line $lineNo is not valid UTF-8", e)
    }

  // ---------------------------------------------------------------------------------------------
  // Streaming fast path for add / remove. Returns null whenever the line is not a plain, valid
  // add/remove made only of modelled fields; the caller then uses ActionCodec.

  private final class Bail extends RuntimeException(null, null, false, false)
  private val bail = new Bail

  /** The add/remove on this line, or null (not add/remove, or anything unusual). */
  def fastParse(bytes: Array[Byte], off: Int, len: Int): Action = {
    val p = factory.createParser(bytes, off, len)
    try {
      if (p.nextToken() != JsonToken.START_OBJECT) return null
      if (p.nextToken() != JsonToken.FIELD_NAME) return null
      val kind = p.currentName() match {
        case "add" => 1
        case "remove" => 2
        case _ => return null
      }
      if (p.nextToken() != JsonToken.START_OBJECT) return null
      val action = if (kind == 1) readAdd(p, new RawInput(bytes, off, off + len)) else readRemove(p)
      if (p.nextToken() != JsonToken.END_OBJECT) return null
      if (p.nextToken() != null) return null
      action
    } catch {
      case _: Bail => null
      case _: JsonProcessingException => null
      case _: IOException => null
    } finally p.close()
  }

  private def str(p: JsonParser): String = if (p.nextToken() == JsonToken.VALUE_STRING) p.getText else throw bail

  /**
   * A long string value (stats JSON, full of escaped quotes), decoded straight from the input
   * bytes instead of through Jackson's character buffers; Jackson then skips the token without
   * decoding it. Falls back to `getText` for anything but plain ASCII with simple escapes.
   */
  private def rawStr(p: JsonParser, in: RawInput): String = {
    if (p.nextToken() != JsonToken.VALUE_STRING) throw bail
    val off = p.currentTokenLocation().getByteOffset // from the start of the parsed range
    if (off >= 0 && off < in.end - in.off) {
      val r = decodeAsciiString(in.bytes, in.off + off.toInt, in.end)
      if (r != null) return r
    }
    p.getText
  }

  /** The line being parsed by [[fastParse]]: `bytes(off until end)`. */
  private final class RawInput(val bytes: Array[Byte], val off: Int, val end: Int)

  private val unescapeBuf = ThreadLocal.withInitial[Array[Byte]](() => new Array[Byte](1024))

  /**
   * The JSON string starting with the quote at `b(q)`, or null unless it is pure ASCII with only
   * two-character escapes (the caller falls back to Jackson).
   */
  private def decodeAsciiString(b: Array[Byte], q: Int, end: Int): String = {
    if (q >= end || b(q) != '"') return null
    var buf = unescapeBuf.get()
    var n = 0
    var i = q + 1
    while (i < end) {
      val c = b(i)
      if (c == '"') return new String(buf, 0, n, StandardCharsets.ISO_8859_1)
      if (c < 0x20) return null // control character (invalid) or non-ASCII byte (negative)
      var out = c
      if (c == '\\') {
        i += 1
        if (i >= end) return null
        out = b(i) match {
          case '"' => '"'
          case '\\' => '\\'
          case '/' => '/'
          case 'b' => '\b'
          case 'f' => '\f'
          case 'n' => '\n'
          case 'r' => '\r'
          case 't' => '\t'
          case _ => return null // \u escapes and invalid ones: Jackson decides
        }
      }
      if (n == buf.length) { buf = java.util.Arrays.copyOf(buf, n * 2); unescapeBuf.set(buf) }
      buf(n) = out
      n += 1
      i += 1
    }
    null
  }

  private def lng(p: JsonParser): Long = {
    if (p.nextToken() != JsonToken.VALUE_NUMBER_INT) throw bail
    p.getNumberType match {
      case JsonParser.NumberType.INT | JsonParser.NumberType.LONG => p.getLongValue
      case _ => throw bail
    }
  }

  private def int(p: JsonParser): Int = {
    if (p.nextToken() != JsonToken.VALUE_NUMBER_INT) throw bail
    if (p.getNumberType != JsonParser.NumberType.INT) throw bail
    p.getIntValue
  }

  private def bool(p: JsonParser): Boolean = p.nextToken() match {
    case JsonToken.VALUE_TRUE => true
    case JsonToken.VALUE_FALSE => false
    case _ => throw bail
  }

  private val EmptyMap: Map[String, String] = VectorMap.empty

  private def map(p: JsonParser, allowNullValues: Boolean): Map[String, String] = {
    if (p.nextToken() != JsonToken.START_OBJECT) throw bail
    var t = p.nextToken()
    if (t == JsonToken.END_OBJECT) return EmptyMap
    val b = VectorMap.newBuilder[String, String]
    var keys: java.util.HashSet[String] = null
    var first: String = null
    var count = 0
    while (t == JsonToken.FIELD_NAME) {
      val k = p.currentName()
      count += 1
      if (count == 2) { keys = new java.util.HashSet[String](); keys.add(first) }
      if (count == 1) first = k
      else if (!keys.add(k)) throw bail
      p.nextToken() match {
        case JsonToken.VALUE_STRING => b += k -> p.getText
        case JsonToken.VALUE_NULL if allowNullValues => b += k -> null
        case _ => throw bail
      }
      t = p.nextToken()
    }
    if (t != JsonToken.END_OBJECT) throw bail
    b.result()
  }

  private def dv(p: JsonParser): DeletionVectorDescriptor = {
    if (p.nextToken() != JsonToken.START_OBJECT) throw bail
    var seen = 0
    var storageType: String = null
    var pathOrInline: String = null
    var offset: Option[Int] = None
    var sizeInBytes = 0
    var cardinality = 0L
    var maxRowIndex: Option[Long] = None
    var t = p.nextToken()
    while (t == JsonToken.FIELD_NAME) {
      val bit = p.currentName() match {
        case "storageType" => storageType = str(p); 1
        case "pathOrInlineDv" => pathOrInline = str(p); 2
        case "offset" => offset = Some(int(p)); 4
        case "sizeInBytes" => sizeInBytes = int(p); 8
        case "cardinality" => cardinality = lng(p); 16
        case "maxRowIndex" => maxRowIndex = Some(lng(p)); 32
        case _ => throw bail
      }
      if ((seen & bit) != 0) throw bail
      seen |= bit
      t = p.nextToken()
    }
    if (t != JsonToken.END_OBJECT || (seen & (1 | 2 | 8 | 16)) != (1 | 2 | 8 | 16)) throw bail
    DeletionVectorDescriptor(storageType, pathOrInline, offset, sizeInBytes, cardinality, maxRowIndex)
  }

  private def readAdd(p: JsonParser, in: RawInput): AddFile = {
    var seen = 0
    var path: String = null
    var pv: Map[String, String] = EmptyMap
    var size = 0L
    var mtime = 0L
    var dataChange = true
    var stats: Option[String] = None
    var tags: Option[Map[String, String]] = None
    var dvd: Option[DeletionVectorDescriptor] = None
    var baseRowId: Option[Long] = None
    var drcv: Option[Long] = None
    var cp: Option[String] = None
    var t = p.nextToken()
    while (t == JsonToken.FIELD_NAME) {
      val bit = p.currentName() match {
        case "path" => path = str(p); 1
        case "partitionValues" => pv = map(p, allowNullValues = true); 2
        case "size" => size = lng(p); 4
        case "modificationTime" => mtime = lng(p); 8
        case "dataChange" => dataChange = bool(p); 16
        case "stats" => stats = Some(rawStr(p, in)); 32
        case "tags" => tags = Some(map(p, allowNullValues = false)); 64
        case "deletionVector" => dvd = Some(dv(p)); 128
        case "baseRowId" => baseRowId = Some(lng(p)); 256
        case "defaultRowCommitVersion" => drcv = Some(lng(p)); 512
        case "clusteringProvider" => cp = Some(str(p)); 1024
        case _ => throw bail
      }
      if ((seen & bit) != 0) throw bail
      seen |= bit
      t = p.nextToken()
    }
    if (t != JsonToken.END_OBJECT || (seen & (1 | 4 | 8)) != (1 | 4 | 8)) throw bail
    AddFile(path, pv, size, mtime, dataChange, stats, tags, dvd, baseRowId, drcv, cp)
  }

  private def readRemove(p: JsonParser): RemoveFile = {
    var seen = 0
    var path: String = null
    var delTs: Option[Long] = None
    var dataChange = true
    var efm: Option[Boolean] = None
    var pv: Option[Map[String, String]] = None
    var size: Option[Long] = None
    var stats: Option[String] = None
    var tags: Option[Map[String, String]] = None
    var dvd: Option[DeletionVectorDescriptor] = None
    var baseRowId: Option[Long] = None
    var drcv: Option[Long] = None
    var t = p.nextToken()
    while (t == JsonToken.FIELD_NAME) {
      val bit = p.currentName() match {
        case "path" => path = str(p); 1
        case "deletionTimestamp" => delTs = Some(lng(p)); 2
        case "dataChange" => dataChange = bool(p); 4
        case "extendedFileMetadata" => efm = Some(bool(p)); 8
        case "partitionValues" => pv = Some(map(p, allowNullValues = true)); 16
        case "size" => size = Some(lng(p)); 32
        case "stats" => stats = Some(str(p)); 64
        case "tags" => tags = Some(map(p, allowNullValues = false)); 128
        case "deletionVector" => dvd = Some(dv(p)); 256
        case "baseRowId" => baseRowId = Some(lng(p)); 512
        case "defaultRowCommitVersion" => drcv = Some(lng(p)); 1024
        case _ => throw bail
      }
      if ((seen & bit) != 0) throw bail
      seen |= bit
      t = p.nextToken()
    }
    if (t != JsonToken.END_OBJECT || (seen & 1) == 0) throw bail
    RemoveFile(path, delTs, dataChange, efm, pv, size, stats, tags, dvd, baseRowId, drcv)
  }
}
