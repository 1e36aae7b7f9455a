package io.deltalog.commands

import scala.collection.mutable

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobEnd, SparkListenerJobStart, SparkListenerTaskEnd,
  SparkListenerTaskStart}

/**
 * Follows the tasks of the Spark jobs run while `run` executes in this thread, so that after a
 * failed write the driver can wait for the tasks of the failed stage that are still being killed
 * (such a task may finish its file after the job has failed) before deleting the job's files.
 */
private[commands] final class WriteJobTasks(sc: SparkContext, tag: String) extends SparkListener {
  private val stages = mutable.HashSet.empty[Int]
  private val jobs = mutable.HashSet.empty[Int]
  private var running = 0
  private var ended = 0

  override def onJobStart(e: SparkListenerJobStart): Unit = synchronized {
    if (Option(e.properties).exists(p => p.getProperty(WriteJobTasks.Property) == tag)) {
      jobs += e.jobId
      stages ++= e.stageIds
    }
  }
  override def onJobEnd(e: SparkListenerJobEnd): Unit = synchronized {
    if (jobs.contains(e.jobId)) { ended += 1; notifyAll() }
  }
  override def onTaskStart(e: SparkListenerTaskStart): Unit = synchronized {
    if (stages.contains(e.stageId)) running += 1
  }
  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = synchronized {
    if (stages.contains(e.stageId)) { running -= 1; notifyAll() }
  }

  /** Waits (at most `timeoutMs`) until every job seen has ended and none of its tasks runs. */
  def awaitQuiet(timeoutMs: Long): Unit = synchronized {
    val deadline = System.currentTimeMillis() + timeoutMs
    while ((ended < jobs.size || running > 0) && System.currentTimeMillis() < deadline) {
      wait(math.max(1L, deadline - System.currentTimeMillis()))
    }
  }
}

private[commands] object WriteJobTasks {
  val Property = "deltalog.write.job"

  /** Runs `body` with the tracker registered and the job tag set on this thread. */
  def track[T](sc: SparkContext, tag: String)(body: WriteJobTasks => T): T = {
    val t = new WriteJobTasks(sc, tag)
    val previous = sc.getLocalProperty(Property)
    sc.addSparkListener(t)
    sc.setLocalProperty(Property, tag)
    try body(t)
    finally {
      sc.setLocalProperty(Property, previous)
      sc.removeSparkListener(t)
    }
  }
}
