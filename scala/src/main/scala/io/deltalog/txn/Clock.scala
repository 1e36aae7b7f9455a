package io.deltalog.txn

/** Source of wall-clock time (ms since the epoch); tests use a manual clock. */
trait Clock {
  def nowMillis(): Long
}

object Clock {
  /** `System.currentTimeMillis`. */
  val system: Clock = () => System.currentTimeMillis()

  /** A clock that always returns `ms`. */
  def fixed(ms: Long): Clock = () => ms
}

/** A clock set by hand (thread-safe). */
final class ManualClock(start: Long) extends Clock {
  private val now = new java.util.concurrent.atomic.AtomicLong(start)
  override def nowMillis(): Long = now.get()
  def set(ms: Long): Unit = now.set(ms)
  def advance(ms: Long): Unit = { now.addAndGet(ms); () }
}
