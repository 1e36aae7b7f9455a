package io.deltalog.commands

import java.util.UUID

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.{JobContext, TaskAttemptContext}
import org.apache.spark.internal.io.FileCommitProtocol
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.apache.spark.internal.io.FileNameSpec

/**
 * Writes data files straight to their final place under the table root (`<root>/<partition dirs>/
 * part-<task>-<uuid>.c000.snappy.parquet`): a file only becomes part of the table when the
 * driver's commit references it, so there is nothing to move. A failed task deletes its files; a
 * failed job deletes the files of its successful tasks ([[abortJob]]), best effort.
 *
 * @param root      the table root (data files go below it)
 * @param cdcColumn the first partition column when it marks change-data rows: directories
 *                  `<cdcColumn>=true/...` become `_change_data/...`, `<cdcColumn>=false/...` the
 *                  table's own partition directories
 */
final class DeltalogCommitProtocol(root: String, cdcColumn: Option[String]) extends FileCommitProtocol
  with Serializable {

  /** Files of this task attempt (executor side). */
  @transient private var taskFiles: mutable.ArrayBuffer[String] = _
  /** Files of committed tasks (driver side). */
  @transient private lazy val committedFiles = mutable.ArrayBuffer.empty[String]

  override def setupJob(jobContext: JobContext): Unit = ()

  override def commitJob(jobContext: JobContext, taskCommits: Seq[TaskCommitMessage]): Unit = ()

  override def abortJob(jobContext: JobContext): Unit = deleteAll(committedFiles.toSeq, jobContext)

  /** Part of every file name of this job (so a failed job's files can be found and deleted). */
  val jobId: String = UUID.randomUUID().toString

  /**
   * Deletes every file of this job: those of committed tasks, and those of tasks whose result the
   * driver never saw (killed after writing), found by [[jobId]] under the table root.
   */
  def deleteWrittenFiles(conf: org.apache.hadoop.conf.Configuration): Unit = {
    committedFiles.foreach { f =>
      try { val p = new Path(f); p.getFileSystem(conf).delete(p, false) } catch { case NonFatal(_) => }
    }
    try {
      val rootPath = new Path(root)
      val fs = rootPath.getFileSystem(conf)
      if (fs.exists(rootPath)) {
        val it = fs.listFiles(rootPath, true)
        val mine = mutable.ArrayBuffer.empty[Path]
        while (it.hasNext) {
          val st = it.next()
          if (st.getPath.getName.contains(jobId)) mine += st.getPath
        }
        mine.foreach(p => try fs.delete(p, false) catch { case NonFatal(_) => })
      }
    } catch { case NonFatal(_) => }
  }

  override def setupTask(taskContext: TaskAttemptContext): Unit = taskFiles = mutable.ArrayBuffer.empty[String]

  override def newTaskTempFile(taskContext: TaskAttemptContext, dir: Option[String], ext: String): String =
    newTaskTempFile(taskContext, dir, FileNameSpec("", ext))

  override def newTaskTempFile(taskContext: TaskAttemptContext, dir: Option[String], spec: FileNameSpec): String = {
    val split = taskContext.getTaskAttemptID.getTaskID.getId
    val name = f"${spec.prefix}part-$split%05d-$jobId-${UUID.randomUUID().toString.take(8)}${spec.suffix}"
    val rel = (mapDir(dir).toSeq :+ name).mkString("/")
    val path = new Path(new Path(root), rel).toString
    if (taskFiles == null) taskFiles = mutable.ArrayBuffer.empty[String]
    taskFiles += path
    path
  }

  private def mapDir(dir: Option[String]): Option[String] = cdcColumn match {
    case None => dir
    case Some(c) => dir.map { d =>
      val (first, rest) = d.indexOf('/') match {
        case -1 => (d, "")
        case i => (d.substring(0, i), d.substring(i + 1))
      }
      if (first == s"$c=true") (if (rest.isEmpty) "_change_data" else s"_change_data/$rest") else rest
    }.filter(_.nonEmpty)
  }

  override def newTaskTempFileAbsPath(taskContext: TaskAttemptContext, absoluteDir: String, ext: String): String =
    throw new UnsupportedOperationException("deltalog tables do not support custom partition locations")

  override def commitTask(taskContext: TaskAttemptContext): TaskCommitMessage =
    new TaskCommitMessage(Option(taskFiles).map(_.toSeq).getOrElse(Nil))

  override def abortTask(taskContext: TaskAttemptContext): Unit = {
    Option(taskFiles).foreach(fs => deleteAll(fs.toSeq, taskContext))
    taskFiles = null
  }

  override def onTaskCommit(taskCommit: TaskCommitMessage): Unit = taskCommit.obj match {
    case fs: Seq[_] => committedFiles.synchronized(committedFiles ++= fs.collect { case s: String => s })
    case _ =>
  }

  private def deleteAll(files: Seq[String], ctx: JobContext): Unit = files.foreach { f =>
    try { val p = new Path(f); p.getFileSystem(ctx.getConfiguration).delete(p, false) }
    catch { case NonFatal(_) => }
  }
}
