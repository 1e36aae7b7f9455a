package io.deltalog.parquet

import java.io.EOFException
import java.nio.{ByteBuffer, MappedByteBuffer}
import java.nio.file.{Path => NioPath}

import org.apache.parquet.io.{InputFile, SeekableInputStream}

/**
 * A local Parquet file read through a read-only memory map: parquet-mr's column-chunk reads
 * become one copy from the page cache into its buffers. Its own `LocalInputFile` reads through
 * `RandomAccessFile`, which stages every large read in a native buffer first (two copies); for a
 * checkpoint's hundreds of MB that was most of the time spent reading it. Files of 2 GB and more
 * (beyond one mapping) are read with parquet-mr's `LocalInputFile`.
 *
 * Checkpoint files are immutable once published, so the mapping cannot change under the reader.
 * The map (and the parsed footer, [[footer]]) comes from [[MappedFiles]], which keeps the maps of
 * recently read files for the next read.
 */
private[deltalog] final class MappedInputFile private (path: NioPath, mapped: MappedFiles.Mapped) extends InputFile {
  override def getLength: Long = mapped.map.capacity().toLong

  override def newStream(): SeekableInputStream = new MappedInputFile.Stream(mapped.map)

  /** The file's footer, `parse`d once per mapped file. */
  def footer(parse: => org.apache.parquet.hadoop.metadata.ParquetMetadata): org.apache.parquet.hadoop.metadata.ParquetMetadata =
    mapped.footer(parse)

  /** The whole file (read with absolute gets only: the map is shared). */
  def buffer: ByteBuffer = mapped.map

  override def toString: String = path.toString
}

private[deltalog] object MappedInputFile {
  /** The file through a memory map, or parquet-mr's local reader when it is too large for one. */
  def apply(path: NioPath): InputFile = MappedFiles(path) match {
    case Some(m) => new MappedInputFile(path, m)
    case None => new org.apache.parquet.io.LocalInputFile(path)
  }

  private final class Stream(map: MappedByteBuffer) extends SeekableInputStream {
    private var pos = 0

    private def remaining: Int = map.limit() - pos

    override def getPos: Long = pos

    override def seek(newPos: Long): Unit = {
      if (newPos < 0 || newPos > map.limit()) throw new EOFException(s"seek to $newPos outside 0..${map.limit()}")
      pos = newPos.toInt
    }

    override def read(): Int =
      if (pos >= map.limit()) -1 else { val b = map.get(pos) & 0xFF; pos += 1; b }

    override def read(b: Array[Byte], off: Int, len: Int): Int =
      if (len == 0) 0
      else if (remaining <= 0) -1
      else { val n = math.min(len, remaining); map.get(pos, b, off, n); pos += n; n }

    override def readFully(b: Array[Byte]): Unit = readFully(b, 0, b.length)

    override def readFully(b: Array[Byte], off: Int, len: Int): Unit = {
      if (len > remaining) throw new EOFException(s"$len bytes wanted at $pos, ${remaining} left")
      map.get(pos, b, off, len)
      pos += len
    }

    override def read(buf: ByteBuffer): Int = {
      if (!buf.hasRemaining) return 0
      if (remaining <= 0) return -1
      val n = math.min(buf.remaining(), remaining)
      buf.put(map.slice(pos, n))
      pos += n
      n
    }

    override def readFully(buf: ByteBuffer): Unit = {
      val n = buf.remaining()
      if (n > remaining) throw new EOFException(s"$n bytes wanted at $pos, ${remaining} left")
      buf.put(map.slice(pos, n))
      pos += n
    }

    override def skip(n: Long): Long = {
      val k = math.max(0L, math.min(n, remaining.toLong)).toInt
      pos += k
      k
    }

    override def available(): Int = math.max(0, remaining)
  }
}
