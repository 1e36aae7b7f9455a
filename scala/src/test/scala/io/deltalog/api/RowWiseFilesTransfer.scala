package io.deltalog.api

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Paths, StandardOpenOption}


import io.deltalog.log.{FileChunk, SnapshotState, Utf8Column}

/**
 * The first, row-at-a-time [[FilesTransfer]] writer, kept as the test reference: it copies each
 * row's values separately, so it does not share the run/segment slicing of the production writer,
 * and both must give byte-identical files.
 */
object RowWiseFilesTransfer {
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
    val ch = FileChannel.open(Paths.get(file), StandardOpenOption.WRITE, StandardOpenOption.CREATE,
      StandardOpenOption.TRUNCATE_EXISTING)
    try {
      val out = new Out(ch)
      val footer = new TransferFooter
      val rows = new Rows(batchSize)
      def flush(): Unit = { rows.writeTo(out, footer); rows.clear() }
      state.foreachChunk { (c, deleted) =>
        var r = if (deleted == null) 0 else deleted.nextClearBit(0)
        while (r < c.length) {
          rows.add(c, r)
          if (rows.count == batchSize) flush()
          r = if (deleted == null) r + 1 else deleted.nextClearBit(r + 1)
        }
      }
      if (rows.count > 0 || footer.batchCount == 0) flush()
      val end = FilesTransfer.trailer(footer) // the trailer is not what this reference checks
      out.put(end, 0, end.length)
      out.flush()
    } finally ch.close()
    true
  }

  /** Sequential writer through one direct buffer; tracks the file position for buffer offsets. */
  private final class Out(ch: FileChannel) {
    private val buf = ByteBuffer.allocateDirect(8 << 20).order(ByteOrder.LITTLE_ENDIAN)
    var position = 0L

    def flush(): Unit = {
      buf.flip()
      while (buf.hasRemaining) ch.write(buf)
      buf.clear()
    }
    private def room(n: Int): Unit = if (buf.remaining < n) flush()

    def put(b: Array[Byte], off: Int, len: Int): Unit = {
      var o = off
      var left = len
      while (left > 0) {
        if (!buf.hasRemaining) flush()
        val n = math.min(left, buf.remaining)
        buf.put(b, o, n)
        o += n; left -= n
      }
      position += len
    }
    def putInt(v: Int): Unit = { room(4); buf.putInt(v); position += 4 }
    def putLong(v: Long): Unit = { room(8); buf.putLong(v); position += 8 }
    def zeros(n: Long): Unit = { var i = 0L; while (i < n) { room(1); buf.put(0.toByte); i += 1 }; position += n }
    def align(): Unit = { val pad = (Align - position % Align) % Align; zeros(pad) }
  }

  /** One batch of live rows as (chunk, row) references. */
  private final class Rows(capacity: Int) {
    var count = 0
    private val chunks = new Array[FileChunk](capacity)
    private val rows = new Array[Int](capacity)

    def add(c: FileChunk, r: Int): Unit = { chunks(count) = c; rows(count) = r; count += 1 }
    def clear(): Unit = { java.util.Arrays.fill(chunks.asInstanceOf[Array[AnyRef]], 0, count, null); count = 0 }

    /** Writes the batch's buffers and their entry in `footer`. */
    def writeTo(out: Out, footer: TransferFooter): Unit = {
      val n = count
      footer.beginBatch(n)
      def begin(name: String): Long = { out.align(); out.position }
      def end(name: String, start: Long): Unit = footer.buffer(name, start, out.position - start)

      utf8(out, "path", _.pathColumn, nullable = false, begin, end)
      utf8(out, "stats", _.statsColumn, nullable = true, begin, end)
      var s = begin("size"); var i = 0
      while (i < n) { out.putLong(chunks(i).size(rows(i))); i += 1 }
      end("size", s)
      s = begin("modificationTime"); i = 0
      while (i < n) { out.putLong(chunks(i).modificationTime(rows(i))); i += 1 }
      end("modificationTime", s)
      s = begin("dataChange"); out.zeros((n + 7) / 8); end("dataChange", s)
      partitionValues(out, begin, end)
      footer.endBatch()
    }

    private def utf8(out: Out, name: String, col: FileChunk => Utf8Column, nullable: Boolean,
        begin: String => Long, end: (String, Long) => Unit): Unit = {
      val n = count
      if (nullable) {
        val validity = new Array[Byte]((n + 7) / 8)
        var nulls = 0
        var i = 0
        while (i < n) {
          if (col(chunks(i)).isNull(rows(i))) nulls += 1 else validity(i >> 3) = (validity(i >> 3) | (1 << (i & 7))).toByte
          i += 1
        }
        if (nulls > 0) { val s = begin(name + ".validity"); out.put(validity, 0, validity.length); end(name + ".validity", s) }
      }
      var s = begin(name + ".offsets")
      var pos = 0L
      out.putInt(0)
      var i = 0
      while (i < n) {
        pos += col(chunks(i)).byteLength(rows(i))
        if (pos > Int.MaxValue) throw new IllegalStateException(s"a batch of column $name holds over 2 GB")
        out.putInt(pos.toInt)
        i += 1
      }
      end(name + ".offsets", s)
      s = begin(name + ".data")
      i = 0
      while (i < n) {
        val c = col(chunks(i))
        val r = rows(i)
        if (!c.isNull(r)) out.put(c.segmentData(r), c.start(r), c.byteLength(r))
        i += 1
      }
      end(name + ".data", s)
    }

    /** `partitionValues`: entry offsets, then keys and values as UTF-8 columns (values may be null). */
    private def partitionValues(out: Out, begin: String => Long, end: (String, Long) => Unit): Unit = {
      val n = count
      // Each distinct map object is encoded once (rows of one partition share it).
      val encoded = new java.util.IdentityHashMap[Map[String, String], (Array[Array[Byte]], Array[Array[Byte]])]()
      def enc(m: Map[String, String]) = {
        var e = encoded.get(m)
        if (e == null) {
          e = (m.keys.map(_.getBytes(UTF_8)).toArray, m.values.map(v => if (v == null) null else v.getBytes(UTF_8)).toArray)
          if (encoded.size < 100000) encoded.put(m, e)
        }
        e
      }
      val validity = new Array[Byte]((n + 7) / 8)
      var nullMaps = 0
      var i = 0
      while (i < n) {
        if (chunks(i).partitionValuesAt(rows(i)) == null) nullMaps += 1
        else validity(i >> 3) = (validity(i >> 3) | (1 << (i & 7))).toByte
        i += 1
      }
      if (nullMaps > 0) {
        val v = begin("partitionValues.validity"); out.put(validity, 0, validity.length); end("partitionValues.validity", v)
      }
      var s = begin("partitionValues.offsets")
      var entries = 0
      out.putInt(0)
      i = 0
      while (i < n) {
        val m = chunks(i).partitionValuesAt(rows(i))
        if (m != null) entries += m.size
        out.putInt(entries)
        i += 1
      }
      end("partitionValues.offsets", s)
      if (entries == 0) return
      def strings(name: String, pick: ((Array[Array[Byte]], Array[Array[Byte]])) => Array[Array[Byte]]): Unit = {
        val validity = new Array[Byte]((entries + 7) / 8)
        var nulls = 0
        var k = 0
        i = 0
        while (i < n) {
          val m = chunks(i).partitionValuesAt(rows(i))
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
          val m = chunks(i).partitionValuesAt(rows(i))
          if (m != null && m.nonEmpty) pick(enc(m)).foreach { b => if (b != null) pos += b.length; out.putInt(pos) }
          i += 1
        }
        end(name + ".offsets", o)
        val d = begin(name + ".data")
        i = 0
        while (i < n) {
          val m = chunks(i).partitionValuesAt(rows(i))
          if (m != null && m.nonEmpty) pick(enc(m)).foreach { b => if (b != null) out.put(b, 0, b.length) }
          i += 1
        }
        end(name + ".data", d)
      }
      strings("partitionValues.key", _._1)
      strings("partitionValues.value", _._2)
    }

  }
}
