package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8

/**
 * An immutable column of nullable UTF-8 strings stored as raw bytes: segments of up to
 * [[Utf8Column.SegmentRows]] rows, each one `byte[]` of values plus an `int[]` of offsets (a null
 * row is marked by a negative end offset `-(start) - 1`). Strings of a live-file state (paths,
 * stats) live here instead of as one `String` object each: no object header per value, no
 * decode when bytes come from a Parquet checkpoint, and a bulk copy when they leave for Arrow or
 * a checkpoint writer. [[string]] decodes one value on demand.
 */
final class Utf8Column private[log] (
    val length: Int,
    private val data: Array[Array[Byte]],
    private val offsets: Array[Array[Int]],
    /** Null rows (a bulk reader skips its null checks when 0). */
    val nullCount: Int) {
  import Utf8Column._

  @inline private def seg(i: Int): Int = i >>> SegmentShift
  @inline private def row(i: Int): Int = i & SegmentMask

  /** True when row `i` is null. */
  def isNull(i: Int): Boolean = offsets(seg(i))(row(i) + 1) < 0

  /** The bytes of row `i` live in `segmentData(i)` from [[start]] (inclusive) to [[end]] (exclusive). */
  def segmentData(i: Int): Array[Byte] = data(seg(i))
  /**
   * The offsets of the segment holding row `i` (raw: a null's end is marked `-end - 1`); row `i`
   * is at index `i & (SegmentRows - 1)`. For bulk copies of consecutive rows, whose bytes are
   * contiguous in [[segmentData]]. Must not be modified.
   */
  def segmentOffsets(i: Int): Array[Int] = offsets(seg(i))
  def start(i: Int): Int = { val o = offsets(seg(i))(row(i)); if (o < 0) -o - 1 else o }
  def end(i: Int): Int = { val o = offsets(seg(i))(row(i) + 1); if (o < 0) -o - 1 else o }
  /** Length in bytes of row `i` (0 when null). */
  def byteLength(i: Int): Int = end(i) - start(i)

  /** Row `i` decoded, or null. */
  def string(i: Int): String = {
    val s = seg(i)
    val r = row(i)
    val e = offsets(s)(r + 1)
    if (e < 0) null
    else { val b = offsets(s)(r); val st = if (b < 0) -b - 1 else b; new String(data(s), st, e - st, UTF_8) }
  }

  /** A copy of the bytes of row `i`, or null. */
  def bytes(i: Int): Array[Byte] =
    if (isNull(i)) null else java.util.Arrays.copyOfRange(segmentData(i), start(i), end(i))

  /** True when row `i` equals `s` (UTF-8), without decoding. */
  def equalsString(i: Int, s: String): Boolean = {
    if (isNull(i)) return s == null
    if (s == null) return false
    val b = s.getBytes(UTF_8)
    java.util.Arrays.equals(segmentData(i), start(i), end(i), b, 0, b.length)
  }

  /** Total bytes of all values. */
  def totalBytes: Long = {
    var t = 0L
    var s = 0
    while (s < data.length) {
      val n = math.min(SegmentRows, length - s * SegmentRows)
      val o = offsets(s)(n)
      t += (if (o < 0) -o - 1 else o)
      s += 1
    }
    t
  }
}

object Utf8Column {
  val SegmentShift: Int = 16
  /** Rows per segment (65,536). */
  val SegmentRows: Int = 1 << SegmentShift
  private val SegmentMask: Int = SegmentRows - 1

  val empty: Utf8Column = new Utf8ColumnBuilder().result()
}

/** Appends strings or raw UTF-8 bytes to a [[Utf8Column]] (single-threaded). */
final class Utf8ColumnBuilder(expectedBytesPerRow: Int = 64, expectedRows: Int = 1024) {
  import Utf8Column._

  private val segData = scala.collection.mutable.ArrayBuffer.empty[Array[Byte]]
  private val segOffsets = scala.collection.mutable.ArrayBuffer.empty[Array[Int]]
  private var data: Array[Byte] = _
  private var offsets: Array[Int] = _
  private var pos = 0 // bytes used in `data`
  private var r = 0 // rows in the current segment
  private var n = 0
  private var nulls = 0
  // The first segment is sized for the expected rows, so growing it rarely copies.
  private var expected = expectedRows
  private var firstRows = math.max(16, math.min(expectedRows, SegmentRows))
  private var perRow = expectedBytesPerRow
  /** Bytes copied to grow or trim segments so far (tests, diagnostics). */
  private[log] var copiedBytes = 0L

  def size: Int = n

  /**
   * A better estimate of the bytes per value (e.g. from a checkpoint's column statistics), used
   * for the first segment when nothing was added yet: a segment sized right is neither grown
   * (copied) nor trimmed (copied again) when it is closed.
   */
  def expectBytesPerRow(bytes: Int): Unit = if (data == null && segData.isEmpty && bytes > 0) perRow = bytes

  /** A better estimate of the rows to come, taken (like [[expectBytesPerRow]]) before the first value. */
  def expectRows(rows: Int): Unit = if (data == null && segData.isEmpty && rows > 0) {
    expected = rows
    firstRows = math.max(16, math.min(rows, SegmentRows))
  }

  private def closeSegment(): Unit = {
    // Slack above 1/8 is trimmed so a state never holds much more than its bytes.
    segData += (if (data.length - pos > data.length / 8) { copiedBytes += pos; java.util.Arrays.copyOf(data, pos) } else data)
    segOffsets += (if (offsets.length == r + 1) offsets else java.util.Arrays.copyOf(offsets, r + 1))
  }

  private def newSegment(): Unit = {
    // Rows the next segment is sized for: what is left of the expected rows, else a full segment.
    val remaining = expected.toLong - n
    val rows = if (data == null) firstRows else if (remaining >= 16) math.min(remaining, SegmentRows).toInt else SegmentRows
    val initial =
      if (data != null) {
        val used = pos
        val perRowSeen = used.toDouble / math.max(r, 1)
        closeSegment()
        (perRowSeen * rows * 17 / 16).toLong + 64 // the density seen so far, plus 1/16
      } else perRow.toLong * firstRows
    data = new Array[Byte](math.max(1024L, math.min(initial, Int.MaxValue / 4)).toInt)
    offsets = new Array[Int](rows + 1)
    pos = 0
    r = 0
  }

  private def room(rowBytes: Int): Unit = {
    if (data == null || r == SegmentRows) newSegment()
    if (r + 1 >= offsets.length) offsets = java.util.Arrays.copyOf(offsets, math.min(SegmentRows, offsets.length * 2) + 1)
    val need = pos.toLong + rowBytes
    if (need > data.length) {
      if (need > Int.MaxValue - 16) throw new IllegalStateException(s"string column segment over 2 GB ($need bytes)")
      copiedBytes += pos
      data = java.util.Arrays.copyOf(data, math.min(Int.MaxValue - 16L, math.max(need, data.length * 2L)).toInt)
    }
  }

  def addNull(): Unit = {
    room(0)
    offsets(r + 1) = -pos - 1
    r += 1
    n += 1
    nulls += 1
  }

  /** Appends `len` bytes of `src` from `off` (already UTF-8). */
  def add(src: Array[Byte], off: Int, len: Int): Unit = {
    room(len)
    System.arraycopy(src, off, data, pos, len)
    pos += len
    offsets(r + 1) = pos
    r += 1
    n += 1
  }

  /** Appends `len` bytes of `src` from its position `off` (already UTF-8). */
  def add(src: java.nio.ByteBuffer, off: Int, len: Int): Unit = {
    room(len)
    src.get(off, data, pos, len)
    pos += len
    offsets(r + 1) = pos
    r += 1
    n += 1
  }

  /** Appends `s` (null: a null row). */
  def add(s: String): Unit =
    if (s == null) addNull()
    else { val b = s.getBytes(UTF_8); add(b, 0, b.length) }

  /** Appends row `i` of `c`. */
  def addFrom(c: Utf8Column, i: Int): Unit =
    if (c.isNull(i)) addNull() else add(c.segmentData(i), c.start(i), c.byteLength(i))

  /** The column (the builder must not be used afterwards). */
  def result(): Utf8Column = {
    if (data != null) { closeSegment(); data = null }
    new Utf8Column(n, segData.toArray, segOffsets.toArray, nulls)
  }
}
