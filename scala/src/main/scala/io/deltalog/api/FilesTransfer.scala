package io.deltalog.api

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Paths, StandardOpenOption}
import java.util.concurrent.ArrayBlockingQueue

import io.deltalog.log.{EncodedMap, FileChunk, SnapshotState, Utf8Column}
import io.deltalog.parquet.RowBlocks

/**
 * The live files of a snapshot written for Python as raw Arrow buffers, without Arrow Java: each
 * batch's columns are laid out exactly as Arrow arrays (validity bitmaps, int32 offsets, UTF-8
 * data, little-endian int64s; every buffer 64-byte aligned); a JSON footer says where each
 * buffer is. Python builds the arrays over a memory map of the file
 * (`pyarrow.Array.from_buffers`), so the bytes are never copied again. The result is the table
 * [[FilesArrow.addsFromState]] gives (same schema, rows and batches), which is the reference the
 * Python tests compare it with.
 *
 * A batch is a list of runs of consecutive live rows (a whole chunk when it has no deleted rows),
 * and strings are copied a segment slice of a run at a time: the data bytes of a slice are
 * contiguous in the [[Utf8Column]], and its Arrow offsets are its segment offsets shifted in one
 * loop; sizes and modification times are copied as arrays. A new file is written through its
 * channel with the kernel's copy on a second thread ([[ChannelOut]]); a file written before (the
 * Python side reuses them) through its kept memory map ([[MappedOut]], [[TransferMaps]]).
 *
 * Only plain states are written this way: when a file has tags, a deletion vector, row tracking
 * or a clustering provider, [[write]] returns false and the caller uses [[FilesArrow]]. Those
 * columns are therefore all null here and take no bytes.
 *
 * File: `buffers... footer(JSON) footerLength(int32 LE) "DLFILES1"`.
 */
object FilesTransfer {
  val Magic: String = "DLFILES1"
  private val BatchSize = 65536
  private val Align = 64

  /** True when every live file of `state` fits this format (see the class comment). */
  def applies(state: SnapshotState): Boolean = {
    var ok = true
    state.foreachChunk { (c, _) =>
      ok &&= c.hasNoTags && c.hasNoDeletionVectors && c.hasNoRowTracking && c.hasNoClusteringProviders
    }
    ok
  }

  /** Writes the live files of `state` into `file`; false (nothing written) when not [[applies]]. */
  def write(state: SnapshotState, file: String): Boolean = write(state, file, BatchSize)

  /** [[write]] with `batchSize` rows per batch (tests use small batches). */
  def write(state: SnapshotState, file: String, batchSize: Int): Boolean = {
    if (!applies(state)) return false
    // A file that exists (the Python side reuses a transfer file once no table maps it any more)
    // is written through a memory map kept from its previous use ([[TransferMaps]]): its pages
    // are mapped already, so the bytes are copied once, with no system call. A new file is
    // written through its channel.
    TransferMaps.acquire(Paths.get(file)) match {
      case Some(target) =>
        val out = new MappedOut(target)
        writeAll(state, out, batchSize) // on a failure the map is not kept
        out.close()
        TransferMaps.release(target)
      case None =>
        val ch = FileChannel.open(Paths.get(file), StandardOpenOption.WRITE, StandardOpenOption.CREATE)
        try {
          val out = new ChannelOut(ch)
          try {
            writeAll(state, out, batchSize)
            val failure = out.close()
            if (failure != null) throw failure
            ch.truncate(out.position)
          } finally out.close() // on failure: stops the writer thread
        } finally ch.close()
    }
    true
  }

  /** The batches, footer and magic of the file (the caller closes `out`). */
  private def writeAll(state: SnapshotState, out: Out, batchSize: Int): Unit = {
    val footer = new TransferFooter
    val batch = new Batch(batchSize)
    def flush(): Unit = { batch.writeTo(out, footer); batch.clear() }
    state.foreachChunk { (c, deleted) =>
      // Live rows go in as runs of consecutive rows (the whole chunk when nothing is deleted),
      // cut at batch boundaries, so that strings are copied a run at a time.
      var from = if (deleted == null) 0 else deleted.nextClearBit(0)
      while (from < c.length) {
        val next = if (deleted == null) -1 else deleted.nextSetBit(from)
        val liveEnd = if (next < 0 || next > c.length) c.length else next
        val until = math.min(liveEnd, from + (batchSize - batch.count))
        batch.add(c, from, until)
        if (batch.count == batchSize) flush()
        from = if (until < liveEnd || deleted == null) until else deleted.nextClearBit(until)
      }
    }
    if (batch.count > 0 || footer.batchCount == 0) flush()
    val end = trailer(footer)
    out.put(end, 0, end.length)
  }

  /** The end of a file: the footer (JSON, the batches' entries), its length (int32 LE), [[Magic]]. */
  private[api] def trailer(footer: TransferFooter): Array[Byte] = {
    val json = footer.bytes
    val magic = Magic.getBytes(UTF_8)
    ByteBuffer.allocate(json.length + 4 + magic.length).order(ByteOrder.LITTLE_ENDIAN)
      .put(json).putInt(json.length).put(magic).array()
  }

  /**
   * Sequential writer into `buf`, a little-endian direct buffer that [[flush]] hands on and
   * replaces when full; tracks the file position for buffer offsets.
   */
  private abstract class Out {
    protected var buf: ByteBuffer
    var position = 0L

    /** Hands on `buf` (its bytes `[0, buf.position)`, the last of the file's `position`) and replaces it with an empty one. */
    protected def flush(): Unit

    private def room(n: Int): Unit = if (buf.remaining < n) flush()

    def put(b: Array[Byte], off: Int, len: Int): Unit = {
      var o = off
      var left = len
      while (left > 0) {
        if (!buf.hasRemaining) flush()
        val n = math.min(left, buf.remaining)
        buf.put(b, o, n)
        o += n; left -= n
        position += n
      }
    }
    def putInt(v: Int): Unit = { room(4); buf.putInt(v); position += 4 }
    def zeros(n: Long): Unit = {
      var left = n
      while (left > 0) { val k = math.min(left, Zeros.length).toInt; put(Zeros, 0, k); left -= k }
    }
    def align(): Unit = zeros((Align - position % Align) % Align)

    // Bulk copies through views of the (little-endian) buffer.
    def putInts(a: Array[Int], from: Int, until: Int): Unit =
      putWords(from, until, 4)((i, n) => buf.asIntBuffer().put(a, i, n))
    def putLongs(a: Array[Long], from: Int, until: Int): Unit =
      putWords(from, until, 8)((i, n) => buf.asLongBuffer().put(a, i, n))

    /** Elements `from until until` of `width` bytes each, `put(i, n)` copying `n` from `i` into `buf`. */
    private def putWords(from: Int, until: Int, width: Int)(put: (Int, Int) => Unit): Unit = {
      var i = from
      while (i < until) {
        if (buf.remaining < width) flush()
        val n = math.min(until - i, buf.remaining / width)
        put(i, n)
        buf.position(buf.position() + width * n)
        i += n
        position += width.toLong * n
      }
    }

    /**
     * Puts `offsets(a + 1 .. b)` of a [[Utf8Column]] segment, their null marks removed, plus
     * `shift`: the Arrow offsets of rows `a until b` continuing a batch's column. They are
     * computed into a heap array and bulk-copied: one `putInt` on the direct buffer per offset
     * costs several calls until the JIT has compiled them (a fresh driver's first transfer).
     */
    def putOffsets(offsets: Array[Int], a: Int, b: Int, shift: Int): Unit = {
      var r = a + 1
      while (r <= b) {
        val n = math.min(b + 1 - r, scratch.length)
        var i = 0
        while (i < n) { // in short calls, compiled early (RowBlocks)
          val k = math.min(n - i, RowBlocks.Size)
          offsetBlock(offsets, r + i, k, shift, i)
          i += k
        }
        putInts(scratch, 0, n)
        r += n
      }
    }

    private val scratch = new Array[Int](4096)

    /** `offsets(from until from + n)` (null marks removed, plus `shift`) into `scratch(at ...)`. */
    private def offsetBlock(offsets: Array[Int], from: Int, n: Int, shift: Int, at: Int): Unit = {
      val sc = scratch
      var j = 0
      while (j < n) {
        val o = offsets(from + j)
        sc(at + j) = (if (o < 0) -o - 1 else o) + shift
        j += 1
      }
    }
  }

  /**
   * [[Out]] into a file channel. On tmpfs most of the time is the kernel's (page allocation and
   * copy, serialized per file), so our filling of buffers runs on the calling thread while a
   * second thread only hands full buffers to the kernel. Buffers are small so that they are still
   * in the CPU cache when the kernel copies them.
   */
  private final class ChannelOut(ch: FileChannel) extends Out {
    private val free = new ArrayBlockingQueue[ByteBuffer](Buffers)
    private val full = new ArrayBlockingQueue[ByteBuffer](Buffers + 1)
    for (_ <- 0 until Buffers) free.add(ByteBuffer.allocateDirect(BufferBytes).order(ByteOrder.LITTLE_ENDIAN))
    protected var buf: ByteBuffer = free.take()
    @volatile private var failure: Throwable = _
    private var closed = false
    private val writer = new Thread(() => {
      var b = full.take()
      while (b ne End) {
        // After a failure, buffers are still recycled so that the filling thread never blocks.
        if (failure == null) try { while (b.hasRemaining) ch.write(b) } catch { case t: Throwable => failure = t }
        b.clear()
        free.put(b)
        b = full.take()
      }
    }, "deltalog-files-transfer")
    writer.setDaemon(true)
    writer.start()

    protected def flush(): Unit = { buf.flip(); full.put(buf); buf = free.take() }

    /** Hands over what is left and waits for the writer: its failure, or null. Idempotent. */
    def close(): Throwable = {
      if (!closed) {
        closed = true
        buf.flip()
        full.put(buf)
        full.put(End)
        writer.join()
      }
      failure
    }
  }

  /**
   * [[Out]] into the memory map of a file ([[TransferMaps.Target]]): each buffer is the next
   * window of the map, so filling it is writing the file. The map grows (file extended, mapped
   * anew) when a window would pass its end; [[close]] cuts the file to the bytes written.
   */
  private final class MappedOut(target: TransferMaps.Target) extends Out {
    protected var buf: ByteBuffer = window(0L)

    /** The map from `at` on (the file's next bytes). */
    private def window(at: Long): ByteBuffer = {
      if (target.capacity - at < BufferBytes) target.grow(math.max(target.capacity * 2, at + BufferBytes))
      target.map.slice(at.toInt, BufferBytes).order(ByteOrder.LITTLE_ENDIAN)
    }

    protected def flush(): Unit = buf = window(position)

    /** Cuts the file to the bytes written. */
    def close(): Unit = target.truncate(position)
  }

  private val Zeros = new Array[Byte](4096)
  private val Buffers = 4
  private[api] val BufferBytes = 1 << 20
  /** Tells the writer thread of [[Out]] to stop. */
  private val End = ByteBuffer.allocate(0)
  private val SegmentMask = Utf8Column.SegmentRows - 1

  /** Start of a row in its segment's offsets (a null's mark removed). */
  @inline private def at(offsets: Array[Int], r: Int): Int = { val o = offsets(r); if (o < 0) -o - 1 else o }

  /**
   * Visits the rows of a batch in one string column a segment slice at a time: rows `a until b`
   * of `offsets` (see [[Utf8Column.segmentOffsets]]), whose bytes are contiguous in `data`.
   */
  private abstract class Slices {
    def slice(data: Array[Byte], offsets: Array[Int], a: Int, b: Int): Unit
  }

  /** One batch of live rows as runs `from until until` of consecutive rows of a chunk. */
  private final class Batch(capacity: Int) {
    var count = 0
    private var runs = 0
    private val chunks = new Array[FileChunk](capacity)
    private val froms = new Array[Int](capacity)
    private val untils = new Array[Int](capacity)

    def add(c: FileChunk, from: Int, until: Int): Unit = {
      chunks(runs) = c; froms(runs) = from; untils(runs) = until; runs += 1; count += until - from
    }
    def clear(): Unit = { java.util.Arrays.fill(chunks.asInstanceOf[Array[AnyRef]], 0, runs, null); runs = 0; count = 0 }

    private def foreachSlice(col: FileChunk => Utf8Column, f: Slices): Unit = {
      var i = 0
      while (i < runs) {
        val c = col(chunks(i))
        var r = froms(i)
        val until = untils(i)
        while (r < until) {
          val a = r & SegmentMask
          val b = a + math.min(until - r, SegmentMask + 1 - a)
          f.slice(c.segmentData(r), c.segmentOffsets(r), a, b)
          r += b - a
        }
        i += 1
      }
    }

    /** Writes the batch's buffers and their entry in `footer`. */
    def writeTo(out: Out, footer: TransferFooter): Unit = {
      val n = count
      footer.beginBatch(n)
      def begin(name: String): Long = { out.align(); out.position }
      def end(name: String, start: Long): Unit = footer.buffer(name, start, out.position - start)

      utf8(out, "path", _.pathColumn, nullable = false, begin, end)
      utf8(out, "stats", _.statsColumn, nullable = true, begin, end)
      var s = begin("size")
      var i = 0
      while (i < runs) { out.putLongs(chunks(i).sizeColumn, froms(i), untils(i)); i += 1 }
      end("size", s)
      s = begin("modificationTime")
      i = 0
      while (i < runs) { out.putLongs(chunks(i).modificationTimeColumn, froms(i), untils(i)); i += 1 }
      end("modificationTime", s)
      s = begin("dataChange"); out.zeros((n + 7) / 8); end("dataChange", s)
      partitionValues(out, begin, end)
      footer.endBatch()
    }

    private def utf8(out: Out, name: String, col: FileChunk => Utf8Column, nullable: Boolean,
        begin: String => Long, end: (String, Long) => Unit): Unit = {
      if (nullable && hasNulls(col)) {
        val bits = new Slices {
          val validity = new Array[Byte]((count + 7) / 8)
          var k = 0
          var nulls = 0
          def slice(data: Array[Byte], offsets: Array[Int], a: Int, b: Int): Unit = {
            var r = a
            while (r < b) {
              if (offsets(r + 1) < 0) nulls += 1 else validity(k >> 3) = (validity(k >> 3) | (1 << (k & 7))).toByte
              k += 1; r += 1
            }
          }
        }
        foreachSlice(col, bits)
        if (bits.nulls > 0) {
          val s = begin(name + ".validity"); out.put(bits.validity, 0, bits.validity.length); end(name + ".validity", s)
        }
      }
      var s = begin(name + ".offsets")
      out.putInt(0)
      foreachSlice(col, new Slices {
        var pos = 0L
        def slice(data: Array[Byte], offsets: Array[Int], a: Int, b: Int): Unit = {
          val start = at(offsets, a)
          val bytes = at(offsets, b) - start
          if (pos + bytes > Int.MaxValue) throw new IllegalStateException(s"a batch of column $name holds over 2 GB")
          out.putOffsets(offsets, a, b, (pos - start).toInt)
          pos += bytes
        }
      })
      end(name + ".offsets", s)
      s = begin(name + ".data")
      foreachSlice(col, new Slices {
        def slice(data: Array[Byte], offsets: Array[Int], a: Int, b: Int): Unit = {
          val start = at(offsets, a)
          out.put(data, start, at(offsets, b) - start)
        }
      })
      end(name + ".data", s)
    }

    /** True when a row of the batch may be null in `col` (false when its chunks have no null). */
    private def hasNulls(col: FileChunk => Utf8Column): Boolean = (0 until runs).exists(i => col(chunks(i)).nullCount > 0)

    /** `partitionValues`: entry offsets, then keys and values as UTF-8 columns (values may be null). */
    private def partitionValues(out: Out, begin: String => Long, end: (String, Long) => Unit): Unit = {
      val n = count
      if ((0 until runs).forall(i => chunks(i).hasNoPartitionValues)) { // every map empty: offsets all 0
        val s = begin("partitionValues.offsets")
        out.zeros(4L * (n + 1))
        end("partitionValues.offsets", s)
        return
      }
      val maps = new Array[Map[String, String]](n)
      var i = 0
      var k = 0
      while (i < runs) {
        val c = chunks(i); var r = froms(i)
        while (r < untils(i)) { maps(k) = c.partitionValuesAt(r); k += 1; r += 1 }
        i += 1
      }
      // Each distinct map object is encoded once (rows of one partition share it).
      val enc = new EncodedMap.Cache(100000)
      val validity = new Array[Byte]((n + 7) / 8)
      val offsets = new Array[Int](n + 1)
      var nullMaps = 0
      var entries = 0
      i = 0
      while (i < n) {
        val m = maps(i)
        if (m == null) nullMaps += 1
        else {
          validity(i >> 3) = (validity(i >> 3) | (1 << (i & 7))).toByte
          entries += m.size
        }
        offsets(i + 1) = entries
        i += 1
      }
      if (nullMaps > 0) {
        val v = begin("partitionValues.validity"); out.put(validity, 0, validity.length); end("partitionValues.validity", v)
      }
      val s = begin("partitionValues.offsets")
      out.putInts(offsets, 0, n + 1)
      end("partitionValues.offsets", s)
      if (entries == 0) return
      def strings(name: String, pick: EncodedMap => Array[Array[Byte]]): Unit = {
        val validity = new Array[Byte]((entries + 7) / 8)
        var nulls = 0
        var k = 0
        i = 0
        while (i < n) {
          val m = maps(i)
          if (m != null && m.nonEmpty) pick(enc(m)).foreach { b =>
            if (b == null) nulls += 1 else validity(k >> 3) = (validity(k >> 3) | (1 << (k & 7))).toByte
            k += 1
          }
          i += 1
        }
        if (nulls > 0) { val v = begin(name + ".validity"); out.put(validity, 0, validity.length); end(name + ".validity", v) }
        val o = begin(name + ".offsets")
        var pos = 0
        out.putInt(0)
        i = 0
        while (i < n) {
          val m = maps(i)
          if (m != null && m.nonEmpty) pick(enc(m)).foreach { b => if (b != null) pos += b.length; out.putInt(pos) }
          i += 1
        }
        end(name + ".offsets", o)
        val d = begin(name + ".data")
        i = 0
        while (i < n) {
          val m = maps(i)
          if (m != null && m.nonEmpty) pick(enc(m)).foreach { b => if (b != null) out.put(b, 0, b.length) }
          i += 1
        }
        end(name + ".data", d)
      }
      strings("partitionValues.key", _.keys)
      strings("partitionValues.value", _.values)
    }
  }
}
