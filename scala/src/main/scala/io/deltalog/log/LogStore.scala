package io.deltalog.log

import java.io.{BufferedReader, ByteArrayOutputStream, FileNotFoundException, IOException, InputStream, InputStreamReader, OutputStream}
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}
import java.nio.file.{AtomicMoveNotSupportedException, FileAlreadyExistsException, Files, StandardCopyOption, StandardOpenOption, Path => NioPath, Paths}

import scala.util.control.NonFatal

import io.deltalog.exceptions.CorruptLogFileException
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, LocalFileSystem, Path}

/**
 * File access for the transaction log over a Hadoop [[FileSystem]].
 *
 * Reading: sorted listing from a version prefix, line / byte reads. Writing: [[writeAtomically]]
 * (hidden temp file in the same directory, then rename), used for checkpoints, `_last_checkpoint`
 * and commits.
 *
 * On the local file system the raw (non-checksumming) file system is used, so no Hadoop `.crc`
 * side files are written or verified, and renames go through `java.nio.file` for exact
 * put-if-absent / atomic-replace semantics. Other file systems use `FileSystem.rename`, which is
 * only as atomic as the store makes it (fine for HDFS; object stores need a dedicated store).
 */
final class LogStore(underlying: FileSystem) {

  /** The file system actually used (the raw one for `file:`). */
  val fs: FileSystem = underlying match {
    case local: LocalFileSystem => local.getRawFileSystem
    case other => other
  }

  private def isLocal: Boolean = fs.getUri.getScheme == "file"

  // ---------------------------------------------------------------------------------------------
  // Reading

  /**
   * Files (not directories) of `logPath` whose name is ≥ the `%020d.` prefix of `fromVersion`,
   * sorted by name. Throws [[FileNotFoundException]] when `logPath` does not exist.
   */
  def listFrom(logPath: Path, fromVersion: Long): Iterator[FileStatus] =
    listFromName(logPath, FileNames.listingPrefix(logPath, fromVersion).getName)

  /** As [[listFrom]] with an explicit start name (inclusive). */
  def listFromName(dir: Path, startName: String): Iterator[FileStatus] = localFile(dir) match {
    case Some(local) =>
      // Local file system: read the directory's names only. Commit files are not statted here
      // (see LocalLogFile); other entries at or after `startName` are, to drop directories.
      val names = local.list()
      if (names == null) throw new FileNotFoundException(s"$dir does not exist")
      val blockSize = fs.getDefaultBlockSize(dir)
      names.filter(_.compareTo(startName) >= 0).sorted.iterator.flatMap { n =>
        val f = new java.io.File(local, n)
        if (FileNames.isPaddedCommitName(n)) Some(new LocalLogFile(dir, n, f, blockSize, null))
        else localStatusAt(f, dir, n, blockSize)
      }
    case None =>
      val all = fs.listStatus(dir) // FileNotFoundException when missing
      all.iterator
        .filter(s => !s.isDirectory && s.getPath.getName.compareTo(startName) >= 0)
        .toArray
        .sortBy(_.getPath.getName)
        .iterator
  }

  /** The local file (or directory) of `path`; None on other file systems. */
  private def localFile(path: Path): Option[java.io.File] =
    if (fs.getUri.getScheme == "file") Some(new java.io.File(path.toUri.getPath)) else None

  /** One stat of the local file `file` (`name` in `dir`); None for directories or a file that vanished. */
  private def localStatusAt(file: java.io.File, dir: Path, name: String, blockSize: Long): Option[FileStatus] = {
    try {
      val attrs = java.nio.file.Files.readAttributes(file.toPath, classOf[java.nio.file.attribute.BasicFileAttributes])
      if (attrs.isDirectory) None else Some(new LocalLogFile(dir, name, file, blockSize, attrs))
    } catch {
      case _: java.nio.file.NoSuchFileException => None
    }
  }

  /** All files of `dir` (empty when it does not exist), sorted by name. */
  def listAll(dir: Path): Seq[FileStatus] = {
    try fs.listStatus(dir).toSeq.filterNot(_.isDirectory).sortBy(_.getPath.getName)
    catch { case _: FileNotFoundException => Seq.empty }
  }

  def exists(path: Path): Boolean = fs.exists(path)

  def getFileStatus(path: Path): FileStatus = fs.getFileStatus(path)

  /**
   * The status of the file `name` in `dir` from one lookup (no listing); None when there is no
   * such file. On the local file system a missing file costs one `stat`, no exception and no
   * Hadoop path.
   */
  def statusOf(dir: Path, name: String): Option[FileStatus] = localFile(dir) match {
    case Some(d) =>
      localStatusAt(new java.io.File(d, name), dir, name, fs.getDefaultBlockSize(dir))
    case None =>
      try Some(fs.getFileStatus(LogStore.child(dir, name))).filter(!_.isDirectory)
      catch { case _: FileNotFoundException => None }
  }

  /**
   * What identifies the current content of the file `path` without reading it (see
   * [[LogStore.FileState]]); None when there is no such file.
   */
  def fileState(path: Path): Option[LogStore.FileState] = localFile(path) match {
    case Some(f) =>
      try {
        val a = Files.readAttributes(f.toPath, classOf[java.nio.file.attribute.BasicFileAttributes])
        if (a.isDirectory) None
        else Some(LogStore.FileState(a.size(), a.lastModifiedTime().toMillis, a.lastModifiedTime(), a.fileKey()))
      } catch { case _: java.nio.file.NoSuchFileException => None }
    case None =>
      try {
        val st = fs.getFileStatus(path)
        if (st.isDirectory) None else Some(LogStore.FileState(st.getLen, st.getModificationTime, null, null))
      } catch { case _: FileNotFoundException => None }
  }

  /**
   * The lines of a UTF-8 text file, lazily. A final line without a newline is returned; `\r\n`
   * line ends are accepted. Invalid UTF-8 raises [[CorruptLogFileException]] naming the file. The
   * file is closed when the iterator is exhausted or [[LogStore.LineIterator.close]] is called.
   */
  def readLines(path: Path): LogStore.LineIterator = {
    val in = fs.open(path)
    try new LogStore.LineIterator(path, in)
    catch { case NonFatal(e) => in.close(); throw e }
  }

  /** The whole file as bytes. */
  def readBytes(path: Path): Array[Byte] = localFile(path) match {
    case Some(local) =>
      // NIO: a fresh driver's first Hadoop stream (the `_last_checkpoint` read) took ~13 ms
      try java.nio.file.Files.readAllBytes(local.toPath)
      catch { case _: java.nio.file.NoSuchFileException => throw new FileNotFoundException(s"File $path does not exist") }
    case None =>
      val in = fs.open(path)
      try {
        val out = new ByteArrayOutputStream()
        in.transferTo(out)
        out.toByteArray
      } finally in.close()
  }

  /** The whole file decoded as UTF-8 (strict: invalid bytes ⇒ [[CorruptLogFileException]]). */
  def readAll(path: Path): String = {
    val bytes = readBytes(path)
    try {
      StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(java.nio.ByteBuffer.wrap(bytes)).toString
    } catch {
      case e: CharacterCodingException => throw new CorruptLogFileException(path.toString, "not valid UTF-8", e)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  /**
   * Writes `path` atomically: `write` fills a hidden temp file `.<name>.<uuid>.tmp` in the same
   * directory, which is closed and then renamed to `path`.
   *
   *  - `overwrite = false`: fails with [[java.nio.file.FileAlreadyExistsException]] when `path`
   *    exists and never replaces it (put-if-absent).
   *  - `overwrite = true`: replaces `path` atomically (local FS) or as atomically as the store allows.
   *
   * The temp file is deleted on any failure, so a failed write leaves nothing behind; a crash
   * leaves only the hidden temp file, which no reader recognises. The parent directory is
   * created when missing.
   *
   * `durable = true` (commits) also makes the result survive a power loss: the temp file's data
   * is forced to disk (fsync / `hsync`) before it is linked or renamed, and (local FS) the
   * directory is forced after, so that the new name itself is persistent.
   */
  def writeAtomically(path: Path, overwrite: Boolean, durable: Boolean = false)(write: OutputStream => Unit): Unit = {
    if (!overwrite) LogStore.assertPutIfAbsentIsAtomic(fs.getUri.getScheme, fs.getConf, path)
    if (isLocal) writeLocal(path, overwrite, durable, write) else writeHadoop(path, overwrite, durable, write)
  }

  private def toNio(path: Path): NioPath = Paths.get(fs.makeQualified(path).toUri)

  /** True for the local file system (where [[stage]] and [[localPath]] apply). */
  def isLocalStore: Boolean = isLocal

  /** The local file of `path` (local file system only). */
  def localPath(path: Path): NioPath = toNio(path)

  /** fsync of a file or directory; directories that cannot be opened for sync are skipped. */
  private def forceLocal(p: NioPath, isDir: Boolean): Unit = {
    try {
      val ch = java.nio.channels.FileChannel.open(p,
        if (isDir) StandardOpenOption.READ else StandardOpenOption.WRITE)
      try ch.force(true) finally ch.close()
    } catch {
      case e: IOException if isDir => () // some platforms cannot open or sync directories
    }
  }

  private def writeLocal(path: Path, overwrite: Boolean, durable: Boolean, write: OutputStream => Unit): Unit = {
    val target = toNio(path)
    val dir = target.getParent
    Files.createDirectories(dir)
    if (!overwrite && Files.exists(target)) throw new FileAlreadyExistsException(path.toString)
    val temp = writeTemp(dir, target.getFileName.toString, durable, write)
    try {
      if (overwrite) {
        try Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE)
        catch {
          case _: AtomicMoveNotSupportedException =>
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING)
        }
      } else if (!linkIfAbsent(temp, target)) {
        throw new FileAlreadyExistsException(path.toString)
      }
      Files.deleteIfExists(temp)
      published(target, durable)
    } catch {
      case NonFatal(e) =>
        try Files.deleteIfExists(temp) catch { case NonFatal(s) => e.addSuppressed(s) }
        throw e
    }
  }

  /** A new hidden temp file in `dir` filled by `write` (forced when `durable`); removed on failure. */
  private def writeTemp(dir: NioPath, name: String, durable: Boolean, write: OutputStream => Unit): NioPath = {
    val temp = dir.resolve(FileNames.tempFileName(name))
    try {
      val out = Files.newOutputStream(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      try write(out) finally out.close()
      if (durable) forceLocal(temp, isDir = false)
      temp
    } catch {
      case NonFatal(e) =>
        try Files.deleteIfExists(temp) catch { case NonFatal(s) => e.addSuppressed(s) }
        throw e
    }
  }

  /**
   * Put-if-absent of `temp` at `target`: a hard link is created only if the name is free,
   * atomically. Without hard links, a rename that does not replace (which consumes `temp`).
   * False when `target` exists.
   */
  private def linkIfAbsent(temp: NioPath, target: NioPath): Boolean = {
    try { Files.createLink(target, temp); true }
    catch {
      case _: FileAlreadyExistsException => false
      case _: UnsupportedOperationException =>
        try { Files.move(temp, target); true }
        catch { case _: FileAlreadyExistsException => false }
    }
  }

  /** After a file appeared at `target`: drop a stale Hadoop checksum side file; force the directory. */
  private def published(target: NioPath, durable: Boolean): Unit = {
    Files.deleteIfExists(target.getParent.resolve(s".${target.getFileName}.crc"))
    if (durable) forceLocal(target.getParent, isDir = true)
  }

  /**
   * A commit's bytes written once under a hidden temp name in `dir` (and forced to disk when
   * `durable`), then offered to successive versions with [[publish]] until one is free. A writer
   * that loses a version keeps its staged file, so a retry costs a link, not another write and
   * fsync. Only for the local file system (`None` elsewhere: use [[writeAtomically]] per attempt).
   */
  def stage(dir: Path, bytes: Array[Byte], durable: Boolean): Option[LogStore.Staged] = {
    if (!isLocal) return None
    val d = toNio(dir)
    Files.createDirectories(d)
    Some(new LogStore.Staged(writeTemp(d, "commit", durable, _.write(bytes)), bytes, durable))
  }

  /**
   * Put-if-absent of a staged file at `path`. False when `path` exists; the staged file stays for
   * the next attempt.
   */
  def publish(staged: LogStore.Staged, path: Path): Boolean = {
    LogStore.assertPutIfAbsentIsAtomic(fs.getUri.getScheme, fs.getConf, path)
    val target = toNio(path)
    if (Files.exists(target) || !linkIfAbsent(staged.temp, target)) return false
    published(target, staged.durable)
    true
  }

  /** Removes a staged file (after its commit was published, or when the transaction gives up). */
  def discard(staged: LogStore.Staged): Unit =
    try Files.deleteIfExists(staged.temp) catch { case NonFatal(_) => () }

  private def writeHadoop(path: Path, overwrite: Boolean, durable: Boolean, write: OutputStream => Unit): Unit = {
    val dir = path.getParent
    if (!overwrite && fs.exists(path)) throw new FileAlreadyExistsException(path.toString)
    val temp = new Path(dir, FileNames.tempFileName(path.getName))
    try {
      val out = fs.create(temp, false)
      try {
        write(out)
        if (durable) out.hsync()
      } finally out.close()
      if (!fs.rename(temp, path)) {
        if (!overwrite) {
          if (fs.exists(path)) throw new FileAlreadyExistsException(path.toString)
          throw new IOException(s"rename of $temp to $path failed")
        }
        // Rename does not replace on most Hadoop file systems: delete, then rename (not atomic).
        fs.delete(path, false)
        if (!fs.rename(temp, path)) throw new IOException(s"rename of $temp to $path failed")
      }
    } catch {
      case e: org.apache.hadoop.fs.FileAlreadyExistsException if !overwrite =>
        deleteQuietly(temp, e)
        val ex = new FileAlreadyExistsException(path.toString)
        ex.initCause(e)
        throw ex
      case NonFatal(e) =>
        deleteQuietly(temp, e)
        throw e
    }
  }

  private def deleteQuietly(p: Path, e: Throwable): Unit =
    try fs.delete(p, false) catch { case NonFatal(s) => e.addSuppressed(s) }
}

object LogStore {
  def apply(fs: FileSystem): LogStore = new LogStore(fs)

  /**
   * Length and modification time of a file, plus (local file system) the full-precision time and
   * the file key (device and inode), which change when a file is deleted and written again.
   *
   * @param modificationTime milliseconds, as in a listing's `FileStatus`
   */
  final case class FileState(length: Long, modificationTime: Long, preciseTime: AnyRef, key: AnyRef)

  private def plainName(name: String): Boolean = {
    var i = 0
    while (i < name.length) {
      val c = name.charAt(i)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
        c == '-')) return false
      i += 1
    }
    name.nonEmpty && name != "." && name != ".."
  }

  /**
   * `new Path(dir, name)` for a listed file name: log names (digits, letters, `.`, `_`, `-`) are
   * appended to the directory URI and parsed once, instead of Hadoop's resolve of two parsed
   * paths (half of a 1,000-commit listing); anything else takes Hadoop's way.
   */
  private[log] def child(dir: Path, name: String): Path = {
    val u = dir.toUri
    if (!plainName(name) || u.getQuery != null || u.getFragment != null || u.getPath == null ||
      u.getPath.isEmpty || u.getPath.endsWith("/")) new Path(dir, name)
    else new Path(java.net.URI.create(u.toString + "/" + name))
  }

  /**
   * The name of commit `version`, `<version zero-padded to 20 digits>.json` — the name
   * [[FileNames.deltaFile]] gives — built without `String.format` (looked up on every update).
   */
  private[log] def commitFileName(version: Long): String = {
    require(version >= 0, s"version must be non-negative, got $version")
    val digits = java.lang.Long.toString(version)
    val b = new java.lang.StringBuilder(25)
    var i = digits.length
    while (i < 20) { b.append('0'); i += 1 }
    b.append(digits).append(".json").toString
  }

  /** A commit file written under a temp name, waiting for a free version (see `LogStore.stage`). */
  final class Staged private[LogStore] (private[LogStore] val temp: NioPath, val bytes: Array[Byte],
      private[LogStore] val durable: Boolean)

  /**
   * Stores whose rename is atomic and refuses to replace an existing file, so that
   * write-temp-then-rename is a real put-if-absent. Object stores (S3, GCS, ...) are not among them:
   * two writers could both "win" a version and one commit would be lost silently. Until a
   * conditional-put or externally locked LogStore exists for them, commits there are refused.
   */
  val AtomicRenameSchemes: Set[String] = Set("file", "hdfs", "viewfs", "abfs", "abfss")

  /** Escape hatch for a store known to be single-writer: `deltalog.logStore.allowUnsafePutIfAbsent`. */
  val AllowUnsafeKey = "deltalog.logStore.allowUnsafePutIfAbsent"

  def assertPutIfAbsentIsAtomic(scheme: String, conf: Configuration, path: Path): Unit = {
    val s = Option(scheme).getOrElse("file").toLowerCase(java.util.Locale.ROOT)
    val allowed = AtomicRenameSchemes.contains(s) ||
      Option(conf).exists(_.getBoolean(AllowUnsafeKey, false)) || java.lang.Boolean.getBoolean(AllowUnsafeKey)
    if (!allowed) {
      throw new io.deltalog.exceptions.DeltalogException("DELTA_UNSAFE_LOG_STORE",
        s"Cannot write $path: the '$s' file system has no atomic put-if-absent, so concurrent commits " +
          "could overwrite each other and lose data. Use a file system with atomic rename (local, HDFS, " +
          s"ABFS), or, if only one writer ever commits to this table, set $AllowUnsafeKey=true.")
    }
  }

  def forPath(path: Path, hadoopConf: Configuration): LogStore = new LogStore(path.getFileSystem(hadoopConf))

  /** Lazy UTF-8 line reader that closes its stream at the end (or on [[close]]). */
  final class LineIterator private[LogStore] (path: Path, in: InputStream)
    extends Iterator[String] with AutoCloseable {
    private val reader = new BufferedReader(new InputStreamReader(in,
      StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)))
    private var nextLine: String = _
    private var closed = false
    advance()

    private def advance(): Unit = {
      if (closed) { nextLine = null; return }
      nextLine =
        try reader.readLine()
        catch {
          case e: CharacterCodingException =>
            close()
            throw new CorruptLogFileException(path.toString, "not valid UTF-8", e)
          case NonFatal(e) =>
            close()
            throw e
        }
      if (nextLine == null) close()
    }

    override def hasNext: Boolean = nextLine != null

    override def next(): String = {
      if (nextLine == null) throw new NoSuchElementException(s"end of $path")
      val line = nextLine
      advance()
      line
    }

    override def close(): Unit = if (!closed) {
      closed = true
      reader.close()
    }
  }
}
