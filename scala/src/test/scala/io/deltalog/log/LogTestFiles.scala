package io.deltalog.log

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import io.deltalog.TestDirs

/** Helpers for the log-files suites: small `_delta_log` directories in temp dirs. */
object LogTestFiles {
  lazy val conf: Configuration = new Configuration()
  lazy val fs: FileSystem = FileSystem.getLocal(conf)

  /** A fresh table directory; returns (tableDir, logPath). */
  def newTable(prefix: String = "deltalog-log"): (File, Path) = {
    val dir = TestDirs.create(prefix).toFile
    val log = new File(dir, "_delta_log")
    log.mkdirs()
    (dir, new Path(log.toURI))
  }

  /** Writes `name` in `logPath` with `content` and (when given) the modification time `mtime`. */
  def put(logPath: Path, name: String, content: String = "x", mtime: Long = -1L): File = {
    val f = new File(new File(logPath.toUri), name)
    f.getParentFile.mkdirs()
    Files.write(f.toPath, content.getBytes(StandardCharsets.UTF_8))
    if (mtime >= 0) fs.setTimes(new Path(f.toURI), mtime, -1L)
    f
  }

  def commit(logPath: Path, v: Long, mtime: Long = -1L): File =
    put(logPath, FileNames.deltaFile(logPath, v).getName, "{\"commitInfo\":{}}\n", mtime)

  def commits(logPath: Path, vs: Iterable[Long]): Unit = vs.foreach(v => commit(logPath, v))

  def classicCheckpoint(logPath: Path, v: Long, content: String = "PAR1"): File =
    put(logPath, FileNames.checkpointFileSingular(logPath, v).getName, content)

  def multiPart(logPath: Path, v: Long, numParts: Int, parts: Seq[Int]): Unit = {
    val all = FileNames.checkpointFileWithParts(logPath, v, numParts)
    parts.foreach(p => put(logPath, all(p - 1).getName, "PAR1"))
  }

  def delete(logPath: Path, name: String): Unit = new File(new File(logPath.toUri), name).delete()

  def listNames(logPath: Path): Seq[String] =
    Option(new File(logPath.toUri).list()).map(_.toSeq.sorted).getOrElse(Nil)
}
