package io.deltalog.spark.read

import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}

import scala.collection.mutable.ArrayBuffer

/**
 * An iterator over what a push-style reader (`produce(emit)`) emits, without holding all of it:
 * the reader runs on its own daemon thread and hands batches through a small bounded queue, so a
 * task reading a checkpoint part of millions of rows keeps a few thousand in memory. The
 * reader's exception is rethrown by `hasNext`; the thread is started on first use and stops when
 * the iterator is exhausted or the task ends ([[close]]).
 */
private[read] final class PushIterator[T <: AnyRef](produce: (T => Unit) => Unit, batchSize: Int = 1024)
    extends Iterator[T] with AutoCloseable {

  private case class Failed(e: Throwable)
  private case object End
  private val queue = new ArrayBlockingQueue[AnyRef](8)
  @volatile private var closed = false
  private var thread: Thread = _
  private var current: ArrayBuffer[T] = _
  private var pos = 0
  private var done = false

  private def put(x: AnyRef): Unit =
    while (!closed && !queue.offer(x, 100, TimeUnit.MILLISECONDS)) {}

  private def start(): Unit = {
    val ctx = org.apache.spark.TaskContext.get()
    if (ctx != null) ctx.addTaskCompletionListener[Unit](_ => close())
    thread = new Thread(() => {
      var batch = new ArrayBuffer[T](batchSize)
      try {
        produce { x =>
          if (closed) throw new InterruptedException("consumer closed")
          batch += x
          if (batch.size >= batchSize) { put(batch); batch = new ArrayBuffer[T](batchSize) }
        }
        if (batch.nonEmpty) put(batch)
        put(End)
      } catch {
        case e: Throwable => put(Failed(e))
      }
    }, "deltalog-replay-reader")
    thread.setDaemon(true)
    thread.start()
  }

  override def hasNext: Boolean = {
    if (done) return false
    if (thread == null) start()
    while (current == null || pos >= current.size) {
      queue.take() match {
        case End => done = true; return false
        case Failed(e) => done = true; closed = true; throw e
        case b: ArrayBuffer[T @unchecked] => current = b; pos = 0
        case other => throw new IllegalStateException(s"unexpected $other")
      }
    }
    true
  }

  override def next(): T = {
    if (!hasNext) throw new NoSuchElementException
    val x = current(pos)
    pos += 1
    x
  }

  override def close(): Unit = closed = true
}
