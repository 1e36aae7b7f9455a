package io.deltalog.log

import java.util.concurrent.atomic.{AtomicLong, AtomicReferenceArray}

import org.apache.hadoop.fs.Path

/**
 * The last `capacity` commit files a [[DeltaLog]] parsed (tests, diagnostics): a ring of paths
 * filled from the reading threads with one atomic increment per file; names are computed only
 * when asked for.
 */
final class RecentReads(capacity: Int) {
  require(capacity > 0)
  private val ring = new AtomicReferenceArray[Path](capacity)
  private val count = new AtomicLong()
  @volatile private var from = 0L // first index [[names]] reports (moved by [[clear]])

  def record(path: Path): Unit = {
    val i = count.getAndIncrement()
    ring.lazySet((i % capacity).toInt, path)
  }

  /** File names of the last reads (at most `capacity`), oldest first. */
  def names: Seq[String] = {
    val end = count.get()
    val start = math.max(from, end - capacity)
    (start until end).flatMap(i => Option(ring.get((i % capacity).toInt))).map(_.getName)
  }

  /** Forgets the reads so far. */
  def clear(): Unit = from = count.get()
}
