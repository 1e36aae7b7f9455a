package io.deltalog.log

import java.util.concurrent.{ExecutorService, LinkedBlockingQueue, ThreadFactory, ThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

/**
 * Background threads of the checkpoint writer (page compression, typed stats): daemon threads,
 * one per core (at most 4), idle ones stop after 30 s. None on a single-core machine: callers
 * then do the work themselves.
 */
private[log] object CheckpointThreads {
  lazy val executor: ExecutorService = {
    val n = math.min(4, Runtime.getRuntime.availableProcessors())
    if (n < 2) null
    else {
      val count = new AtomicInteger()
      val e = new ThreadPoolExecutor(n, n, 30, TimeUnit.SECONDS, new LinkedBlockingQueue[Runnable](), new ThreadFactory {
        override def newThread(r: Runnable): Thread = {
          val t = new Thread(r, s"deltalog-checkpoint-${count.incrementAndGet()}")
          t.setDaemon(true)
          t
        }
      })
      e.allowCoreThreadTimeOut(true)
      e
    }
  }

  /** Number of threads (0: none). */
  def size: Int = executor match {
    case null => 0
    case e: ThreadPoolExecutor => e.getMaximumPoolSize
    case _ => 1
  }
}
