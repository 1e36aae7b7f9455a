package io.deltalog.commands

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileUtil, Path}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals

/**
 * One file DEEP CLONE copies: from `source` (a qualified URI) to `relative` (a decoded path under
 * the target root). `isDeletionVector`: a `deletion_vector_<uuid>.bin` file, renamed with a new UUID
 * when the name is taken (else the data file name gets a random prefix).
 */
final case class CloneCopy(source: String, relative: String, isDeletionVector: Boolean)

/** Where a [[CloneCopy]] landed: its final relative path (decoded) and its size in bytes. */
final case class CloneCopied(index: Int, relative: String, bytes: Long)

/**
 * Copies DEEP CLONE's files into the target table, in parallel as one Spark job (the bytes go from
 * executor to storage, never through the driver). A file already at the wanted name is never
 * overwritten: the copy takes a fresh name (a REPLACE onto an earlier clone of the same source
 * meets the same names, and those files are still the target's live files until the commit).
 */
private[commands] object CloneFileCopier {

  /**
   * Copies every one of `copies` under `targetRoot`. When a copy fails, every file copied so far is
   * deleted and the first failure is thrown (a task never fails the job: it reports its failure, so
   * the driver knows every file that landed).
   */
  def copyAll(spark: ClassicSession, hadoopConf: Configuration, targetRoot: Path,
      copies: IndexedSeq[CloneCopy]): IndexedSeq[CloneCopied] = {
    if (copies.isEmpty) return IndexedSeq.empty
    val conf = SparkInternals.hadoopConfForTasks(hadoopConf)
    val root = targetRoot.toString
    val slices = math.max(1, math.min(copies.size, spark.sparkContext.defaultParallelism * 4))
    val results = spark.sparkContext.parallelize(copies.zipWithIndex, slices).mapPartitions { it =>
      val c = conf()
      var failed = false
      it.map { case (copy, i) =>
        if (failed) (i, null: String, 0L, "skipped after an earlier failure")
        else try {
          val l = copyOne(c, new Path(root), copy, i)
          (i, l.relative, l.bytes, null: String)
        } catch {
          case NonFatal(e) =>
            failed = true
            (i, null: String, 0L, s"${copy.source}: $e")
        }
      }
    }.collect()
    val errors = results.collect { case (_, _, _, err) if err != null && !err.startsWith("skipped") => err }
    if (errors.nonEmpty) {
      results.foreach { case (_, rel, _, _) => if (rel != null) deleteQuietly(hadoopConf, targetRoot, rel) }
      throw new java.io.IOException(s"CLONE could not copy ${errors.length} file(s) into $targetRoot (nothing was " +
        s"committed; the files copied so far were deleted). First: ${errors.head}")
    }
    results.map { case (i, rel, bytes, _) => CloneCopied(i, rel, bytes) }.sortBy(_.index).toIndexedSeq
  }

  private def copyOne(conf: Configuration, root: Path, copy: CloneCopy, index: Int): CloneCopied = {
    val src = new Path(new java.net.URI(copy.source))
    val srcFs = src.getFileSystem(conf)
    val dstFs = root.getFileSystem(conf)
    var relative = copy.relative
    var attempts = 0
    while (dstFs.exists(new Path(root, relative))) {
      attempts += 1
      if (attempts > 10) throw new java.io.IOException(s"CLONE: no free name for ${copy.relative} under $root")
      relative = freshName(copy)
    }
    val dst = new Path(root, relative)
    if (!FileUtil.copy(srcFs, src, dstFs, dst, false, false, conf)) {
      throw new java.io.IOException(s"CLONE: could not copy ${copy.source} to $dst")
    }
    CloneCopied(index, relative, dstFs.getFileStatus(dst).getLen)
  }

  /** Another name in the same directory for a copy whose name is taken. */
  private def freshName(copy: CloneCopy): String = {
    val slash = copy.relative.lastIndexOf('/')
    val dir = if (slash < 0) "" else copy.relative.substring(0, slash + 1)
    val name = copy.relative.substring(slash + 1)
    if (copy.isDeletionVector) s"${dir}deletion_vector_${UUID.randomUUID()}.bin"
    else s"${dir}clone-${UUID.randomUUID().toString.take(8)}-$name"
  }

  private def deleteQuietly(conf: Configuration, root: Path, relative: String): Unit =
    try root.getFileSystem(conf).delete(new Path(root, relative), false) catch { case NonFatal(_) => () }
}
