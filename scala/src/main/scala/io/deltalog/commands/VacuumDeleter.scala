package io.deltalog.commands

import java.io.IOException
import java.nio.file.{Files, LinkOption, Path => NioPath}
import java.util.concurrent.{Callable, ConcurrentHashMap, ExecutorService}
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

/**
 * Deletes paths relative to a table root, each non-recursively (a directory only when empty), in
 * parallel on `pool`: files first, then directories deepest first. Returns how many were deleted.
 *
 * On a local file system every deletion first checks that the entry's parent directory is the
 * real directory under the root (no symbolic link on the way, however the path was found), then
 * unlinks the entry itself: a symbolic link is removed as a link, its target is never touched. A
 * deleted file's checksum sidecar (`.name.crc`, as Hadoop's local file system writes them) goes with
 * it, as Hadoop's `delete` does.
 */
final class VacuumDeleter(fs: FileSystem, root: Path, pool: ExecutorService, deleted: AtomicLong) {
  private val log = LoggerFactory.getLogger(classOf[VacuumDeleter])
  private val local = fs.getUri.getScheme == "file"
  private lazy val rootDir: NioPath = java.nio.file.Paths.get(fs.makeQualified(root).toUri)
  private lazy val rootReal: NioPath = rootDir.toRealPath()
  /** parent relative path → whether it is a real directory under the root (no link on the way). */
  private val parentOk = new ConcurrentHashMap[String, java.lang.Boolean]()

  def delete(files: Seq[String], dirs: Seq[String]): Long = {
    val n = parallel(files)
    n + dirs.groupBy(d => d.count(_ == '/')).toSeq.sortBy(-_._1).map { case (_, level) => parallel(level) }.sum
  }

  private def parallel(paths: Seq[String]): Long = {
    if (paths.isEmpty) return 0L
    val slices = paths.grouped(math.max(1, math.min(1000, paths.size / 64 + 1))).toSeq
    slices.map(s => pool.submit(new Callable[Long] {
      def call(): Long = s.count(deleteOne).toLong
    })).map(_.get().longValue()).sum
  }

  private def deleteOne(relative: String): Boolean = {
    require(!relative.isEmpty && !relative.startsWith("/") && !relative.split('/').exists(s => s == ".." || s == "."),
      s"not a normalized path under the table root: $relative")
    val ok = try {
      if (local) deleteLocal(relative) else fs.delete(new Path(root, relative), false)
    } catch {
      case e: IOException =>
        log.debug(s"could not delete $relative under $root: $e")
        false
    }
    if (ok) deleted.incrementAndGet()
    ok
  }

  private def deleteLocal(relative: String): Boolean = {
    if (!isDeletable(relative)) {
      log.warn(s"VACUUM: not deleting $relative under $rootDir: its directory is not the table's own (a symbolic link?)")
      return false
    }
    val target = rootDir.resolve(relative)
    if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) return false
    Files.delete(target) // a link: the link itself; a directory: only when empty
    // Hadoop's local file system deletes a file's checksum sidecar with it (`.name.crc`), as delta-spark does
    val crc = target.resolveSibling("." + target.getFileName.toString + ".crc")
    if (Files.isRegularFile(crc, LinkOption.NOFOLLOW_LINKS)) Files.deleteIfExists(crc)
    true
  }

  /** Whether `relative`'s directory is the table's own (locally: no symbolic link on the way). */
  def isDeletable(relative: String): Boolean = !local || {
    val parent = relative.lastIndexOf('/') match {
      case -1 => ""
      case i => relative.substring(0, i)
    }
    parentOk.computeIfAbsent(parent, p => java.lang.Boolean.valueOf(isRealDirUnderRoot(p))).booleanValue()
  }

  /**
   * False only for an entry that exists, is a directory or was modified at or after `deleteBefore`
   * (LITE's candidates come from the log: a file written again since, or a directory, stays).
   */
  def olderThan(relative: String, deleteBefore: Long): Boolean = try {
    if (local) {
      val a = Files.readAttributes(rootDir.resolve(relative), classOf[java.nio.file.attribute.BasicFileAttributes],
        LinkOption.NOFOLLOW_LINKS)
      !a.isDirectory && a.lastModifiedTime().toMillis < deleteBefore
    } else {
      val s = fs.getFileStatus(new Path(root, relative))
      !s.isDirectory && s.getModificationTime < deleteBefore
    }
  } catch { case _: java.io.FileNotFoundException | _: java.nio.file.NoSuchFileException => true }

  private def isRealDirUnderRoot(parent: String): Boolean = try {
    if (parent.isEmpty) true
    else {
      val dir = rootDir.resolve(parent)
      Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) && dir.toRealPath() == rootReal.resolve(parent)
    }
  } catch { case NonFatal(_) => false }
}
