package io.deltalog.log

import java.io.{IOException, InputStream}
import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}
import java.util.concurrent.{Callable, ExecutionException, ExecutorService, Executors, Future, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

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
 * Read for replay ([[CommitReader.readForReplay]]), its plain `add` lines are kept column-wise in
 * [[plainAdds]] and [[foreachReverse]] visits them by row; [[actions]] rebuilds them as `AddFile`s
 * on first use. Read otherwise, every action is an object and [[plainAdds]] is empty.
 *
 * @param version    commit version (from the file name)
 * @param file       the commit file
 */
final class ParsedCommit private[log] (
    val version: Long,
    val file: FileStatus,
    entries: Array[Action], // file order; null: the next row of plainAdds
    val plainAdds: PlainAdds) {

  /** Its actions in file order (blank lines skipped). */
  lazy val actions: Array[Action] = CommitReader.materialize(entries, plainAdds)

  /**
   * Visits the actions last to first (the order of reverse replay): `plainAdd(row)` for a row of
   * [[plainAdds]], `action(a)` for every other action.
   */
  def foreachReverse(plainAdd: Int => Unit, action: Action => Unit): Unit = {
    var row = plainAdds.length - 1
    var i = entries.length - 1
    while (i >= 0) {
      val a = entries(i)
      if (a == null) { plainAdd(row); row -= 1 } else action(a)
      i -= 1
    }
  }

  /** The first `commitInfo` of the commit, if any. */
  def commitInfo: Option[CommitInfo] = {
    var i = 0
    while (i < entries.length) {
      entries(i) match {
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

object ParsedCommit {
  def apply(version: Long, file: FileStatus, actions: Array[Action]): ParsedCommit =
    new ParsedCommit(version, file, actions, PlainAdds.empty)
}

/**
 * Parses JSON commit files (`%020d.json`, also compacted / staged commits: any file of log lines).
 *
 * Every line goes through [[ActionCodec]] semantics. `add` and `remove` lines are first tried by
 * [[FileActionLineParser]], which reads their bytes directly and only accepts lines made of the
 * fields it models with their protocol types (no unknown field, no explicit null, no duplicate
 * key, integers in range, valid UTF-8). Anything else goes to [[ActionCodec.parseLine]], so the
 * result (and every error, with file name and 1-based line number) is exactly the codec's.
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
  private val store = new LogStore(fs)

  /** Reads and parses one commit file (every action an object). */
  def read(file: FileStatus): ParsedCommit =
    ParsedCommit(CommitReader.versionOf(file), file, readActions(file))

  /**
   * Reads one commit for log replay: plain `add` lines stay column-wise in
   * [[ParsedCommit.plainAdds]], with their reconciliation keys under `fileKeys` computed here (on
   * the reading thread).
   */
  def readForReplay(file: FileStatus, fileKeys: FileKeys, kept: CommitBytes = null): ParsedCommit = {
    val reused = if (kept == null) null else kept.take(file)
    val bytes = if (reused != null) reused else readFile(file)
    val rows = new PlainAddsBuilder(bytes, bytes.length / 256, fileKeys)
    val entries = CommitReader.parseInto(bytes, bytes.length, file.getPath.toString, null, rows)
    new ParsedCommit(CommitReader.versionOf(file), file, entries, rows.result())
  }

  /** [[readInOrder]] with [[readForReplay]]. */
  def readInOrderForReplay(files: Seq[FileStatus], fileKeys: FileKeys, kept: CommitBytes = null)(
      consume: ParsedCommit => Unit): Unit =
    readInOrderUntil(files, readForReplay(_, fileKeys, kept)) { c => consume(c); true }

  /**
   * Like [[read]], but only the lines that can hold a `protocol` or `metaData` action (and, with
   * `withCommitInfo`, a `commitInfo`) are parsed; see [[CommitReader.LineFilter]]. The result
   * holds those actions only. The file's bytes are offered to `keep` for a later replay.
   */
  def readProtocolAndMetadata(file: FileStatus, withCommitInfo: Boolean, keep: CommitBytes = null): ParsedCommit = {
    val bytes = readFile(file)
    if (keep != null) keep.offer(file, bytes)
    val filter = if (withCommitInfo) CommitReader.PmAndCommitInfoLines else CommitReader.PmLines
    ParsedCommit(CommitReader.versionOf(file), file, CommitReader.parseBytes(bytes, bytes.length, file.getPath.toString, filter))
  }

  /** Reads and parses one file of log lines. */
  private def readActions(file: FileStatus): Array[Action] = {
    val bytes = readFile(file)
    CommitReader.parseBytes(bytes, bytes.length, file.getPath.toString, null)
  }

  /** The bytes of a listed file (a [[LocalLogFile]] is read from its local file directly). */
  private def readFile(file: FileStatus): Array[Byte] = file match {
    case l: LocalLogFile if localFs =>
      val bytes = readFile(l.getPath, java.nio.file.Files.readAllBytes(l.file.toPath))
      l.noteLength(bytes.length)
      bytes
    // local files through NIO (no Hadoop stream or checksum file per commit), as LogStore reads them
    case _ => val path = file.getPath; readFile(path, store.readBytes(path))
  }

  private def readFile(path: Path, read: => Array[Byte]): Array[Byte] = {
    onRead(path)
    try read catch {
      case e @ (_: java.io.FileNotFoundException | _: java.nio.file.NoSuchFileException) =>
        throw new CorruptLogFileException(path.toString, "the file disappeared while the log was read " +
          "(concurrent cleanup?)", e)
      case e: IOException => throw new CorruptLogFileException(path.toString, s"read failed: ${e.getMessage}", e)
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
        (files.size <= CommitReader.BatchFiles &&
          files.iterator.map(LocalLogFile.lengthHint).sum <= CommitReader.BatchBytes)) {
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
      while (it.hasNext && (n == 0 ||
          (n < CommitReader.BatchFiles && bytes + LocalLogFile.lengthHint(it.head) <= CommitReader.BatchBytes))) {
        val f = it.next()
        batch += f
        n += 1
        bytes += LocalLogFile.lengthHint(f)
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

  /** Version of a `%020d.json` file, or -1 for other files of log lines. */
  def versionOf(path: Path): Long = versionOfName(path.getName)

  /** [[versionOf]] a listed file (no path built for a [[LocalLogFile]]). */
  def versionOf(file: FileStatus): Long = versionOfName(LocalLogFile.nameOf(file))

  private def versionOfName(name: String): Long =
    FileNames.parseName(name).collect { case LogFile.Commit(v) => v }.getOrElse(-1L)

  /**
   * Which lines of a commit [[CommitReader.readProtocolAndMetadata]] parses: a line is skipped
   * only when its bytes prove it holds none of the wanted actions. That is the case when
   *  - it starts exactly `{"add":{` or `{"remove":{`: an add or remove whatever follows (a second
   *    known action on the line makes the full reading reject the line, see [[recover]]; the
   *    metadata-only path does not validate file actions either), or
   *  - it contains none of the quoted names (a JSON key `"protocol"` can only appear literally,
   *    since quotes inside strings are escaped) and no backslash-u escape (a key could be spelled
   *    with escapes).
   * Skipped lines are not validated; the full replay still parses them.
   */
  final class LineFilter private[CommitReader] (names: Seq[String]) {
    private val needles: Array[Array[Byte]] =
      (names.map(n => "\"" + n + "\"") :+ "\\u").map(_.getBytes(StandardCharsets.US_ASCII)).toArray

    /**
     * Start offsets of the lines of `bytes(0 until len)` that may hold a wanted action, ascending.
     * Line ends are found 8 bytes at a time; most lines of a commit are file actions, recognised
     * by their first bytes, and the few others are searched for the needles.
     */
    def candidateLines(bytes: Array[Byte], len: Int): Array[Int] = {
      val c = candidates(bytes, len)
      Array.tabulate(c.length / 3)(i => c(3 * i))
    }

    /**
     * The candidate lines as `(start, end, line number)` triples, flattened: the end (index of its
     * `\n`, or `len`) and 1-based number come from the same walk over the line ends, so the parse
     * of a candidate does not scan for them again.
     */
    private[CommitReader] def candidates(bytes: Array[Byte], len: Int): Array[Int] = {
      val words = ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      var out: Array[Int] = null
      var n = 0
      var s = 0
      var lineNo = 0
      while (s < len) {
        lineNo += 1
        val head = LineFilter.fileActionHead(bytes, s, len)
        val end = LineFilter.lineEnd(words, bytes, s + head, len)
        if (head == 0 && containsNeedle(bytes, s, end)) {
          if (out == null) out = new Array[Int](12) else if (n + 3 > out.length) out = java.util.Arrays.copyOf(out, n * 2)
          out(n) = s; out(n + 1) = end; out(n + 2) = lineNo
          n += 3
        }
        s = end + 1
      }
      if (out == null) Array.emptyIntArray else java.util.Arrays.copyOf(out, n)
    }

    private def containsNeedle(bytes: Array[Byte], from: Int, until: Int): Boolean = {
      var k = 0
      while (k < needles.length) {
        val needle = needles(k)
        val last = until - needle.length
        var i = from
        while (i <= last) {
          if (bytes(i) == needle(0) && java.util.Arrays.equals(bytes, i, i + needle.length, needle, 0, needle.length)) return true
          i += 1
        }
        k += 1
      }
      false
    }
  }

  private[log] object LineFilter {
    private val AddHead = "{\"add\":{".getBytes(StandardCharsets.US_ASCII)
    private val RemoveHead = "{\"remove\":{".getBytes(StandardCharsets.US_ASCII)
    private val Newlines = io.deltalog.actions.WordBytes.repeated('\n')

    /** Length of the add / remove head the line at `s` starts with, else 0. */
    def fileActionHead(bytes: Array[Byte], s: Int, len: Int): Int =
      if (startsWith(bytes, s, len, AddHead)) AddHead.length
      else if (startsWith(bytes, s, len, RemoveHead)) RemoveHead.length
      else 0

    private def startsWith(bytes: Array[Byte], s: Int, len: Int, head: Array[Byte]): Boolean =
      s + head.length <= len && java.util.Arrays.equals(bytes, s, s + head.length, head, 0, head.length)

    /**
     * Index of the first `\n` in `bytes(from until len)`, or `len`. Words of 8 bytes (little-endian,
     * so the lowest flagged byte is the first in the text) are tested for a newline byte at once:
     * a newline is a zero byte of the word xor'ed with newlines ([[io.deltalog.actions.WordBytes.zeroBytes]]).
     */
    def lineEnd(words: ByteBuffer, bytes: Array[Byte], from: Int, len: Int): Int = {
      var i = from
      while (i <= len - 8) {
        val t = io.deltalog.actions.WordBytes.zeroBytes(words.getLong(i) ^ Newlines)
        if (t != 0) return i + (java.lang.Long.numberOfTrailingZeros(t) >>> 3)
        i += 8
      }
      while (i < len && bytes(i) != '\n') i += 1
      i
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
   * Parses the log lines in `bytes(0 until len)` (only read); with a `filter`, lines it rules out
   * are skipped (line numbers still count them).
   */
  def parseBytes(bytes: Array[Byte], len: Int, file: String, filter: LineFilter): Array[Action] =
    parseInto(bytes, len, file, filter, null)

  /** `entries` with each null replaced by the next row of `plain` as an `AddFile`. */
  private[log] def materialize(entries: Array[Action], plain: PlainAdds): Array[Action] = {
    if (plain.length == 0) return entries
    val out = new Array[Action](entries.length)
    var row = 0
    var i = 0
    while (i < entries.length) {
      val a = entries(i)
      if (a != null) out(i) = a
      else { out(i) = plain.toAddFile(row); row += 1 }
      i += 1
    }
    out
  }

  /**
   * The actions of the lines, in order. With `rows` (then `bytes` is overwritten, see
   * [[FileActionLineParser]]) a plain `add` is a row of `rows` and a null entry.
   */
  private[log] def parseInto(bytes: Array[Byte], len: Int, file: String, filter: LineFilter,
      rows: PlainAddsBuilder): Array[Action] = {
    if (filter != null) return parseCandidateLines(bytes, len, file, filter)
    val out = new java.util.ArrayList[Action](math.max(4, len / 300))
    val parser = new FileActionLineParser(bytes, rows)
    var lineNo = 0
    var start = 0
    while (start < len) {
      lineNo += 1
      val fast = parser.parse(start, len)
      if (fast != null) {
        out.add(if (fast eq FileActionLineParser.PlainAdd) null else fast.asInstanceOf[Action])
        start = parser.lineEnd + 1
      } else {
        var end = start
        while (end < len && bytes(end) != '\n') end += 1
        var l = end - start
        if (l > 0 && bytes(start + l - 1) == '\r') l -= 1
        val a = parseWithCodec(bytes, start, l, file, lineNo)
        if (a != null) out.add(a)
        start = end + 1
      }
    }
    out.toArray(new Array[Action](out.size))
  }

  private def parseCandidateLines(bytes: Array[Byte], len: Int, file: String, filter: LineFilter): Array[Action] = {
    val lines = filter.candidates(bytes, len)
    if (lines.isEmpty) return Array.empty
    val out = new java.util.ArrayList[Action](lines.length / 3)
    val parser = new FileActionLineParser(bytes, null)
    var k = 0
    while (k < lines.length) {
      val start = lines(k)
      val end = lines(k + 1)
      val fast = parser.parse(start, end)
      if (fast != null) out.add(fast.asInstanceOf[Action])
      else {
        var l = end - start
        if (l > 0 && bytes(start + l - 1) == '\r') l -= 1
        val a = parseWithCodec(bytes, start, l, file, lines(k + 2))
        if (a != null) out.add(a)
      }
      k += 3
    }
    out.toArray(new Array[Action](out.size))
  }

  /** Parses one line held in `bytes(off until off+len)`; null for a blank line. */
  def parseLine(bytes: Array[Byte], off: Int, len: Int, file: String, lineNo: Int): Action = {
    val parser = new FileActionLineParser(bytes, null)
    val fast = parser.parse(off, off + len)
    if (fast != null && parser.lineEnd == off + len) fast.asInstanceOf[Action]
    else parseWithCodec(bytes, off, len, file, lineNo)
  }

  /** The line through [[ActionCodec]] (and [[recover]]); null for a blank line. */
  private[log] def parseWithCodec(bytes: Array[Byte], off: Int, len: Int, file: String, lineNo: Int): Action = {
    var s = off
    val end = off + len
    while (s < end && (bytes(s) == ' ' || bytes(s) == '\t' || bytes(s) == '\r')) s += 1
    if (s == end) return null
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
}
