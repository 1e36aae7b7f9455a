package io.deltalog.api

import java.io.RandomAccessFile
import java.nio.MappedByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.{Files, NoSuchFileException, Path => NioPath, StandardOpenOption}
import java.nio.file.attribute.BasicFileAttributes

/**
 * Writable memory maps of the transfer files that Python reuses (`deltalog._files_transfer`
 * keeps up to two per directory and hands one to the JVM again once no table maps it), kept from
 * one write of a file to the next. Writing 28 MB into a kept map costs ~1.3 ms; through the file
 * channel ~4.3 ms (kernel copy), and through a new map more still (every page faulted in again).
 *
 * A file is mapped on its second write (at its first it does not exist yet, or is empty, and is
 * written through its channel: files used once, as with `DELTALOG_TRANSFER_REUSE=0`, are never
 * mapped). A kept map is used again only for the same file (path and file key); the map covers
 * [[Target.capacity]] bytes and the file is extended back to that length before each write
 * (writes end by cutting the file to its content, which Python reads up to the end). At most
 * [[MaxFiles]] maps are kept (least recently used out; a map dropped is released by garbage
 * collection): their pages are the files' own, already in `/dev/shm`.
 */
private[api] object TransferMaps {
  val MaxFiles = 4

  /** One file's map; used by one writer at a time (taken out of the cache while in use). */
  final class Target private[TransferMaps] (val path: NioPath, private[TransferMaps] val fileKey: AnyRef,
      private var mapped: MappedByteBuffer) {
    def map: MappedByteBuffer = mapped
    def capacity: Long = mapped.capacity().toLong

    /** Extends the file to `bytes` and maps it anew (the old map stays valid for slices taken from it). */
    def grow(bytes: Long): Unit = {
      if (bytes >= Int.MaxValue) throw new IllegalStateException(s"transfer file $path over 2 GB")
      mapped = TransferMaps.map(path, bytes)
    }

    /** Cuts the file to `length` bytes (the map keeps its capacity). */
    def truncate(length: Long): Unit = {
      val f = new RandomAccessFile(path.toFile, "rw")
      try f.setLength(length) finally f.close()
    }
  }

  private val cache = new java.util.LinkedHashMap[String, Target](8, 0.75f, true)

  /** Maps created so far (tests, diagnostics). */
  val mapsCreated = new java.util.concurrent.atomic.AtomicLong()

  /**
   * The map to write `path` through, or None when the file does not exist or is empty (write it
   * through its channel). The file is extended to the map's capacity.
   */
  def acquire(path: NioPath): Option[Target] = {
    val attrs = try Files.readAttributes(path, classOf[BasicFileAttributes]) catch {
      case _: NoSuchFileException => return None
    }
    if (!attrs.isRegularFile || attrs.size == 0 || attrs.size >= Int.MaxValue) return None
    val key = path.toAbsolutePath.toString
    val kept = synchronized(cache.remove(key))
    val target =
      if (kept != null && kept.fileKey != null && kept.fileKey == attrs.fileKey) kept
      else new Target(path, attrs.fileKey, map(path, attrs.size))
    if (attrs.size < target.capacity) {
      val f = new RandomAccessFile(path.toFile, "rw")
      try f.setLength(target.capacity) finally f.close()
    }
    Some(target)
  }

  /** Keeps `target`'s map for the file's next write. */
  def release(target: Target): Unit = synchronized {
    cache.put(target.path.toAbsolutePath.toString, target)
    val it = cache.entrySet().iterator()
    while (cache.size > MaxFiles && it.hasNext) { it.next(); it.remove() }
  }

  /** Forgets every kept map (tests). */
  def clear(): Unit = synchronized(cache.clear())

  private def map(path: NioPath, bytes: Long): MappedByteBuffer = {
    val ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)
    try {
      mapsCreated.incrementAndGet()
      ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes) // extends the file to `bytes` when shorter
    } finally ch.close()
  }
}
