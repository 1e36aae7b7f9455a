package io.deltalog.parquet

import java.nio.MappedByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.{Files, Path => NioPath, StandardOpenOption}
import java.nio.file.attribute.BasicFileAttributes
import java.util.Locale
import java.util.concurrent.TimeUnit

import org.apache.parquet.hadoop.metadata.ParquetMetadata

/**
 * Read-only memory maps of local checkpoint files, kept for the next read of the same file with
 * its parsed Parquet footer. Opening a table reads its checkpoint twice (the protocol / metaData
 * rows, then the files, on two threads) and a driver re-reads it on every fresh open; a new map
 * has to fault in every page it touches again (26 MB: ~1.5 ms) and the footer was parsed each
 * time. A file is known by path, size, modification time and file key (inode): a checkpoint
 * written again under its name is a new file.
 *
 * At most [[MaxFiles]] files and [[MaxBytes]] bytes stay mapped (least recently used first out);
 * a map dropped from here is released by garbage collection once no reader uses it. Only address
 * space and page-table entries are held: the pages are the page cache's (they count in the
 * process' resident set while mapped). A kept file that log cleanup deletes keeps its disk space
 * until its map is dropped. Not on Windows, where a mapped file cannot be deleted at all: every
 * read maps the file anew there.
 */
private[deltalog] object MappedFiles {
  /** One mapped file; `map` is shared, so readers use absolute gets or their own duplicate. */
  final class Mapped private[MappedFiles] (val map: MappedByteBuffer) {
    @volatile private var parsedFooter: ParquetMetadata = _

    /** The file's footer, `parse`d on first use (a footer is immutable once parsed). */
    def footer(parse: => ParquetMetadata): ParquetMetadata = {
      var f = parsedFooter
      if (f == null) { f = parse; parsedFooter = f }
      f
    }
  }

  val MaxFiles = 8
  val MaxBytes: Long = 1L << 30

  private final case class Key(path: String, size: Long, modifiedNanos: Long, fileKey: AnyRef)

  private val cache = new java.util.LinkedHashMap[Key, Mapped](16, 0.75f, true)
  private var cachedBytes = 0L
  private val caching = !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows")

  /** Maps created so far (tests, diagnostics). */
  val mapsCreated = new java.util.concurrent.atomic.AtomicLong()

  /** The whole file mapped (the kept map when this file was mapped before); None at 2 GB or more. */
  def apply(path: NioPath): Option[Mapped] = {
    val attrs = Files.readAttributes(path, classOf[BasicFileAttributes])
    val size = attrs.size
    if (size >= Int.MaxValue) return None
    val key = Key(path.toAbsolutePath.toString, size, attrs.lastModifiedTime.to(TimeUnit.NANOSECONDS), attrs.fileKey)
    val keep = caching && size <= MaxBytes
    if (keep) {
      val hit = synchronized(cache.get(key))
      if (hit != null) return Some(hit)
    }
    val mapped = new Mapped(mapFile(path, size))
    if (keep) synchronized {
      val raced = cache.get(key)
      if (raced != null) return Some(raced)
      cache.put(key, mapped)
      cachedBytes += size
      val it = cache.entrySet().iterator()
      while ((cache.size > MaxFiles || cachedBytes > MaxBytes) && it.hasNext) {
        val eldest = it.next()
        cachedBytes -= eldest.getKey.size
        it.remove()
      }
    }
    Some(mapped)
  }

  /** Forgets every kept map (tests). */
  def clear(): Unit = synchronized { cache.clear(); cachedBytes = 0 }

  private def mapFile(path: NioPath, size: Long): MappedByteBuffer = {
    val ch = FileChannel.open(path, StandardOpenOption.READ)
    try { mapsCreated.incrementAndGet(); ch.map(FileChannel.MapMode.READ_ONLY, 0, size) } finally ch.close()
  }
}
