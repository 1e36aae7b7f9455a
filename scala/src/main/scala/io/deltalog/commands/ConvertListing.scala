package io.deltalog.commands

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

/**
 * A Parquet file CONVERT adds: `relative` is its path below the table root as the file system names
 * it (not yet URI-encoded); `location` its qualified path.
 */
final case class ConvertFile(location: String, relative: String, size: Long, modificationTime: Long)

/**
 * The files below a directory to convert, as delta-spark lists them: recursively, leaving out
 * hidden files (names starting with `_` or `.`: `_SUCCESS`, `.crc` files, `_delta_log`) and hidden
 * directories (the same prefixes, except names with `=`, which may be partition directories of a
 * column whose name starts so). Directories are listed in parallel, level by level.
 */
private[commands] object ConvertListing {
  def hiddenFile(name: String): Boolean = name.startsWith("_") || name.startsWith(".")
  def hiddenDir(name: String): Boolean = hiddenFile(name) && !name.contains("=")

  /** The visible files below `root` (qualified), sorted by relative path. */
  def list(fs: FileSystem, root: Path): Vector[ConvertFile] = {
    val rootString = root.toString.stripSuffix("/") + "/"
    def relative(p: Path): String = {
      val s = p.toString
      if (s.startsWith(rootString)) s.substring(rootString.length)
      else throw new IllegalStateException(s"listed file $s is not below $rootString")
    }
    val files = Vector.newBuilder[ConvertFile]
    var level = Vector(root)
    val pool = Executors.newFixedThreadPool(8)
    try {
      while (level.nonEmpty) {
        val listed: Vector[Array[FileStatus]] =
          if (level.size == 1) Vector(fs.listStatus(level.head))
          else level.map(d => pool.submit(new Callable[Array[FileStatus]] { def call() = fs.listStatus(d) }))
            .map(_.get())
        val next = Vector.newBuilder[Path]
        listed.foreach(_.foreach { st =>
          val name = st.getPath.getName
          if (st.isDirectory) { if (!hiddenDir(name)) next += st.getPath }
          else if (!hiddenFile(name)) {
            files += ConvertFile(st.getPath.toString, relative(st.getPath), st.getLen, st.getModificationTime)
          }
        })
        level = next.result()
      }
    } catch {
      case e: java.util.concurrent.ExecutionException => throw e.getCause
    } finally {
      pool.shutdownNow()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
    files.result().sortBy(_.relative)
  }
}
