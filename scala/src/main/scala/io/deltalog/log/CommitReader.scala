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

  /** Reads and parses one commit file. */
  def read(file: FileStatus): ParsedCommit = {
    val path = file.getPath
    val version = CommitReader.versionOf(path)
    ParsedCommit(version, file, readActions(path))
  }

  /** Reads and parses one file of log lines. */
  def readActions(path: Path): Array[Action] = {
    onRead(path)
    val name = path.toString
    val in = try fs.open(path) catch {
      case e: java.io.FileNotFoundException =>
        throw new CorruptLogFileException(name, "the file disappeared while the log was read " +
          "(concurrent cleanup?)", e)
      case e: IOException => throw new CorruptLogFileException(name, s"cannot open: ${e.getMessage}", e)
    }
    try CommitReader.parseStream(in, name)
    catch {
      case e: DeltalogException => throw e
      case e: IOException => throw new CorruptLogFileException(name, s"read failed: ${e.getMessage}", e)
    } finally in.close()
  }

  /**
   * Reads `files` in parallel and hands each result to `consume` in the order of `files`
   * (on the calling thread). At most `2 * Parallelism` files are parsed ahead of `consume`.
   * The first error (in file order) is rethrown.
   */
  def readInOrder(files: Seq[FileStatus])(consume: ParsedCommit => Unit): Unit = {
    if (files.isEmpty) return
    if (files.size == 1 || CommitReader.Parallelism <= 1) { files.foreach(f => consume(read(f))); return }
    val window = 2 * CommitReader.Parallelism
    val pending = new java.util.ArrayDeque[Future[ParsedCommit]]()
    val it = files.iterator
    def submitNext(): Unit = if (it.hasNext) {
      val f = it.next()
      pending.add(CommitReader.pool.submit(new Callable[ParsedCommit] { def call(): ParsedCommit = read(f) }))
    }
    try {
      while (pending.size < window && it.hasNext) submitNext()
      while (!pending.isEmpty) {
        val fut = pending.poll()
        val parsed = try fut.get() catch {
          case e: ExecutionException => throw e.getCause
        }
        submitNext()
        consume(parsed)
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

  /** Parses the whole text of a log file held in memory (tests and small files). */
  def parseBytes(bytes: Array[Byte], file: String): Array[Action] =
    parseStream(new java.io.ByteArrayInputStream(bytes), file)

  /** Parses a stream of log lines (`\n` or `\r\n` separated, blank lines skipped). */
  def parseStream(in: InputStream, file: String): Array[Action] = {
    val out = Array.newBuilder[Action]
    val buf = new Array[Byte](1 << 16)
    var line = new Array[Byte](1 << 12)
    var lineLen = 0
    var lineNo = 0
    def flush(): Unit = {
      lineNo += 1
      var len = lineLen
      if (len > 0 && line(len - 1) == '\r') len -= 1
      val a = parseLine(line, 0, len, file, lineNo)
      if (a != null) out += a
      lineLen = 0
    }
    var n = in.read(buf)
    while (n >= 0) {
      var i = 0
      while (i < n) {
        val start = i
        while (i < n && buf(i) != '\n') i += 1
        val chunk = i - start
        if (chunk > 0) {
          if (lineLen + chunk > line.length) {
            line = java.util.Arrays.copyOf(line, math.max(line.length * 2, lineLen + chunk))
          }
          System.arraycopy(buf, start, line, lineLen, chunk)
          lineLen += chunk
        }
        if (i < n) { flush(); i += 1 }
      }
      n = in.read(buf)
    }
    if (lineLen > 0) flush()
    out.result()
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
      val action = if (kind == 1) readAdd(p) else readRemove(p)
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

  private def readAdd(p: JsonParser): AddFile = {
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
        case "stats" => stats = Some(str(p)); 32
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
