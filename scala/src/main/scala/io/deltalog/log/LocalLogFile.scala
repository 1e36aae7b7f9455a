package io.deltalog.log

import java.nio.file.{Files, NoSuchFileException}
import java.nio.file.attribute.BasicFileAttributes

import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * A file of a local `_delta_log` listing whose Hadoop [[Path]] and `stat` are made on first use.
 *
 * Listing a log of 1,000 commits used to stat every file (half of the listing's time) and build
 * a Hadoop path for each, although replay reads the commits whole (the read learns the length)
 * and only the newest commit's time is needed. Commit names (`%020d.json`) are listed as
 * unstatted entries; other names are statted at once ([[LogStore]] drops directories and needs
 * checkpoint lengths). A file that vanished before its first stat reports length and time 0;
 * reading it fails with the usual error naming it.
 *
 * @param dir  the directory as a Hadoop path (the child path is built from it when asked for)
 * @param name the file name
 * @param file the local file
 */
final class LocalLogFile private[log] (
    dir: Path,
    val name: String,
    val file: java.io.File,
    blockSize: Long,
    known: BasicFileAttributes)
  extends FileStatus(0L, false, 1, blockSize, 0L, null) {

  @volatile private var path: Path = _
  @volatile private var statted = false
  @volatile private var lengthKnown = false
  private var length = 0L
  private var modified = 0L
  if (known != null) record(known.size(), known.lastModifiedTime().toMillis)

  private def record(len: Long, time: Long): Unit = synchronized {
    length = len
    modified = time
    lengthKnown = true
    statted = true
  }

  /** The length the file had when it was read whole (what sizing estimates want), until a stat. */
  private[log] def noteLength(len: Long): Unit = synchronized {
    if (!statted) { length = len; lengthKnown = true }
  }

  private def stat(): Unit = if (!statted) {
    try {
      val a = Files.readAttributes(file.toPath, classOf[BasicFileAttributes])
      record(a.size(), a.lastModifiedTime().toMillis)
    } catch { case _: NoSuchFileException => record(0L, 0L) }
  }

  /** True once the length and time are known (no `stat` needed to read them). */
  def isStatted: Boolean = statted

  /** True once the length is known without a stat (statted, or the file was read). */
  def isLengthKnown: Boolean = lengthKnown

  override def getPath: Path = {
    var p = path
    if (p == null) { p = LogStore.child(dir, name); path = p }
    p
  }

  override def getLen: Long = { if (!lengthKnown) stat(); synchronized(length) }

  // Java serialization (a status captured by a Spark task) sends a plain Hadoop status, statted
  // here: a lazy one would stat the receiving machine's disk.
  private def writeReplace(): AnyRef =
    new FileStatus(getLen, false, getReplication, getBlockSize, getModificationTime, getPath)
  override def getModificationTime: Long = { stat(); synchronized(modified) }
}

object LocalLogFile {
  /** Length assumed for an unstatted commit where only a size estimate is wanted (batching, sizing). */
  val AssumedCommitBytes = 4096L

  /** `st.getLen` when known without a `stat` (statted or read before), else [[AssumedCommitBytes]]. */
  def lengthHint(st: FileStatus): Long = st match {
    case l: LocalLogFile if !l.isLengthKnown => AssumedCommitBytes
    case _ => st.getLen
  }

  /** The file name of a listed status, without building its path when it is a [[LocalLogFile]]. */
  def nameOf(st: FileStatus): String = st match {
    case l: LocalLogFile => l.name
    case _ => st.getPath.getName
  }
}
