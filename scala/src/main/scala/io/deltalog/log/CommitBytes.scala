package io.deltalog.log

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.{AtomicLong, AtomicReference}

import org.apache.hadoop.fs.FileStatus

/**
 * Commit files a metadata-only scan read, kept for the replay of the same snapshot so it does not
 * read them again. A table without a checkpoint has its `metaData` in commit 0, so opening it
 * reads every commit once for protocol/metadata and then again for the files.
 *
 * At most [[CommitBytes.Budget]] bytes are kept, and only by the latest scan of the JVM: a new
 * scan empties the previous one ([[CommitBytes.start]]), so kept bytes never add up across tables
 * or snapshots that are opened but not loaded. A replay that finds nothing (emptied, over budget)
 * reads the file as usual.
 */
final class CommitBytes private () {
  private val files = new ConcurrentHashMap[FileStatus, Array[Byte]]()
  private val used = new AtomicLong()

  /** Keeps `bytes` of `file` if the budget allows (called from the reading threads). */
  def offer(file: FileStatus, bytes: Array[Byte]): Unit =
    if (used.addAndGet(bytes.length) <= CommitBytes.Budget) files.put(file, bytes)

  /** The kept bytes of `file`, removed from this store; null when not kept. */
  def take(file: FileStatus): Array[Byte] = files.remove(file)

  /** Drops everything kept. */
  def clear(): Unit = { files.clear(); used.set(Long.MaxValue / 2) }
}

object CommitBytes {
  /** Bytes one scan may keep. */
  val Budget: Long = 64L << 20

  private val latest = new AtomicReference[CommitBytes]()

  /** A new store for a scan; the previous scan's store is emptied. */
  def start(): CommitBytes = {
    val c = new CommitBytes()
    val prev = latest.getAndSet(c)
    if (prev != null) prev.clear()
    c
  }
}
