package io.deltalog.commands

import java.io.IOException
import java.nio.file.{FileVisitResult, Files, LinkOption, NoSuchFileException, SimpleFileVisitor, Path => NioPath}
import java.nio.file.attribute.BasicFileAttributes
import java.util.concurrent.{Callable, ExecutorService}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * One entry under a table root.
 *
 * @param path             relative to the root, `/`-separated (as [[VacuumPaths]] writes them)
 * @param modificationTime ms since the epoch; of the link itself for a symbolic link
 */
final case class ListedEntry(path: String, size: Long, modificationTime: Long, isDir: Boolean)

/**
 * Lists everything under a table root that VACUUM may consider: every file and directory whose
 * path has no hidden segment ([[VacuumPaths.isHidden]]), `_delta_log` never. Top-level
 * directories are listed in parallel on `pool`.
 *
 * Local tables are walked with `java.nio` without following symbolic links: a link (to a file or
 * to a directory) is one entry, the link itself, and nothing behind it is listed. (Hadoop's local
 * file system follows links, so a link to a directory outside the table would be walked into.)
 * Other file systems are listed through Hadoop's `listStatus`.
 */
final class TableFileListing(fs: FileSystem, root: Path, hidden: String => Boolean, pool: ExecutorService,
    listed: AtomicLong) {

  private def isHiddenName(name: String, topLevel: Boolean): Boolean =
    (topLevel && name == "_delta_log") || hidden(name)

  /** Every non-hidden file and directory under the root. */
  def list(): Seq[ListedEntry] =
    if (fs.getUri.getScheme == "file") listLocal(java.nio.file.Paths.get(fs.makeQualified(root).toUri))
    else listHadoop()

  // ------------------------------------------------------------------------------------------ local

  private def listLocal(rootDir: NioPath): Seq[ListedEntry] = {
    val top = ArrayBuffer.empty[ListedEntry]
    val dirs = ArrayBuffer.empty[NioPath]
    val stream = Files.newDirectoryStream(rootDir)
    try stream.asScala.foreach { p =>
      val name = p.getFileName.toString
      if (!isHiddenName(name, topLevel = true)) {
        attributes(p).foreach { a =>
          if (a.isDirectory) dirs += p else top += entry(name, a)
        }
      }
    } finally stream.close()
    listed.addAndGet(top.size)
    val walks = dirs.toSeq.map(d => pool.submit(new Callable[ArrayBuffer[ListedEntry]] {
      def call(): ArrayBuffer[ListedEntry] = walk(rootDir, d)
    }))
    top.toSeq ++ walks.flatMap(_.get())
  }

  private def attributes(p: NioPath): Option[BasicFileAttributes] =
    try Some(Files.readAttributes(p, classOf[BasicFileAttributes], LinkOption.NOFOLLOW_LINKS))
    catch { case _: NoSuchFileException => None }

  private def entry(relative: String, a: BasicFileAttributes): ListedEntry =
    ListedEntry(relative, if (a.isDirectory) 0L else a.size(), a.lastModifiedTime().toMillis, a.isDirectory)

  /** `dir` and everything under it (links not followed: `walkFileTree` without FOLLOW_LINKS). */
  private def walk(rootDir: NioPath, dir: NioPath): ArrayBuffer[ListedEntry] = {
    val out = ArrayBuffer.empty[ListedEntry]
    def rel(p: NioPath): String = rootDir.relativize(p).toString.replace(java.io.File.separatorChar, '/')
    Files.walkFileTree(dir, java.util.EnumSet.noneOf(classOf[java.nio.file.FileVisitOption]), Int.MaxValue,
      new SimpleFileVisitor[NioPath] {
        override def preVisitDirectory(d: NioPath, a: BasicFileAttributes): FileVisitResult =
          if ((d ne dir) && hidden(d.getFileName.toString)) FileVisitResult.SKIP_SUBTREE
          else { out += entry(rel(d), a); listed.incrementAndGet(); FileVisitResult.CONTINUE }
        override def visitFile(f: NioPath, a: BasicFileAttributes): FileVisitResult = {
          if (!hidden(f.getFileName.toString)) { out += entry(rel(f), a); listed.incrementAndGet() }
          FileVisitResult.CONTINUE
        }
        override def visitFileFailed(f: NioPath, e: IOException): FileVisitResult = e match {
          case _: NoSuchFileException => FileVisitResult.CONTINUE // deleted while listing
          case other => throw other
        }
      })
    out
  }

  // ----------------------------------------------------------------------------------------- hadoop

  private def listHadoop(): Seq[ListedEntry] = {
    val rootPath = fs.makeQualified(root).toUri.getPath.stripSuffix("/")
    def rel(p: Path): String = p.toUri.getPath.substring(rootPath.length + 1)
    val (dirs, files) = fs.listStatus(root).toSeq
      .filterNot(s => isHiddenName(s.getPath.getName, topLevel = true)).partition(_.isDirectory)
    listed.addAndGet(files.size)
    def walk(dir: Path): ArrayBuffer[ListedEntry] = {
      val out = ArrayBuffer.empty[ListedEntry]
      val stack = scala.collection.mutable.Stack(dir)
      while (stack.nonEmpty) {
        val d = stack.pop()
        out += ListedEntry(rel(d), 0L, 0L, isDir = true)
        val children = try fs.listStatus(d) catch { case _: java.io.FileNotFoundException => Array.empty }
        children.filterNot(s => hidden(s.getPath.getName)).foreach { s =>
          if (s.isDirectory) stack.push(s.getPath)
          else out += ListedEntry(rel(s.getPath), s.getLen, s.getModificationTime, isDir = false)
        }
        listed.addAndGet(children.length + 1L)
      }
      out
    }
    val walks = dirs.map(d => pool.submit(new Callable[ArrayBuffer[ListedEntry]] {
      def call(): ArrayBuffer[ListedEntry] = walk(d.getPath)
    }))
    files.map(s => ListedEntry(rel(s.getPath), s.getLen, s.getModificationTime, isDir = false)) ++
      walks.flatMap(_.get())
  }
}
