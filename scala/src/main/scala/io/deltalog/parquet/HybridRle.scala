package io.deltalog.parquet

import java.nio.ByteBuffer

/**
 * Bulk decoding of Parquet's RLE / bit-packing hybrid encoding (definition levels, dictionary
 * ids, RLE booleans) into an int array, a whole page at a time. parquet-mr's decoder hands out
 * one value per call through several layers; for a checkpoint's few leaves that is a large part
 * of the read, while a run-length run here is one `Arrays.fill`.
 *
 * Format (Parquet `Encodings.md`): runs until `count` values are produced, each starting with a
 * ULEB128 header; an even header is an RLE run of `header >>> 1` copies of one value stored in
 * `ceil(bitWidth / 8)` little-endian bytes; an odd header is `header >>> 1` groups of 8 values,
 * each group `bitWidth` bytes, values packed from the least significant bit.
 */
private[deltalog] object HybridRle {

  /** Receives runs from [[foreachRun]]: `length` values equal to `value` from index `start`. */
  abstract class RunVisitor {
    /** False stops the walk. */
    def run(start: Int, length: Int, value: Int): Boolean
  }

  /**
   * Walks the first `count` values (as [[decode]] reads them) run by run without expanding RLE
   * runs: `v.run` gets each RLE run whole and each value of a bit-packed run on its own (length 1),
   * in order, until it returns false. Throws IllegalStateException as [[decode]] does.
   */
  def foreachRun(buf: ByteBuffer, pos: Int, end: Int, bitWidth: Int, count: Int, v: RunVisitor): Unit = {
    if (bitWidth < 0 || bitWidth > 32) throw new IllegalStateException(s"bad bit width $bitWidth")
    if (bitWidth == 0) { if (count > 0) v.run(0, count, 0); return }
    val runs = new Runs(buf, pos, end, bitWidth)
    var unpacked: Array[Int] = null
    var k = 0
    while (k < count) {
      runs.next()
      val take = math.min(runs.length, count - k)
      if (runs.rle) { if (!v.run(k, take, runs.value)) return }
      else {
        if (unpacked == null || unpacked.length < take) unpacked = new Array[Int](take)
        runs.unpack(take, unpacked, 0)
        var i = 0
        while (i < take) { if (!v.run(k + i, 1, unpacked(i))) return; i += 1 }
      }
      k += take
    }
  }

  /** How many of the first `count` values equal `value`; RLE runs are counted whole. */
  def countEqual(buf: ByteBuffer, pos: Int, end: Int, bitWidth: Int, count: Int, value: Int): Int = {
    var n = 0
    foreachRun(buf, pos, end, bitWidth, count, new RunVisitor {
      def run(start: Int, length: Int, v: Int): Boolean = { if (v == value) n += length; true }
    })
    n
  }

  /**
   * Index of the `nth` (0-based) of the first `count` values equal to `value`, or -1 when there
   * are not that many; RLE runs are skipped whole ([[foreachRun]]).
   */
  def indexOfNth(buf: ByteBuffer, pos: Int, end: Int, bitWidth: Int, count: Int, value: Int, nth: Long): Int = {
    var found = -1
    foreachRun(buf, pos, end, bitWidth, count, new RunVisitor {
      private var seen = 0L
      def run(start: Int, length: Int, v: Int): Boolean = {
        if (v != value) true
        else if (seen + length > nth) { found = start + (nth - seen).toInt; false }
        else { seen += length; true }
      }
    })
    found
  }

  /**
   * Decodes `count` values of `bitWidth` bits (0..32) from `buf` starting at absolute position
   * `pos` (bytes up to `end`) into `out(0 until count)`; returns the position after the last run
   * read. Throws IllegalStateException on data that ends early or an impossible run.
   */
  def decode(buf: ByteBuffer, pos: Int, end: Int, bitWidth: Int, count: Int, out: Array[Int]): Int = {
    if (bitWidth < 0 || bitWidth > 32) throw new IllegalStateException(s"bad bit width $bitWidth")
    if (bitWidth == 0) { java.util.Arrays.fill(out, 0, count, 0); return pos }
    val runs = new Runs(buf, pos, end, bitWidth)
    var k = 0
    while (k < count) {
      runs.next()
      val take = math.min(runs.length, count - k)
      if (runs.rle) java.util.Arrays.fill(out, k, k + take, runs.value)
      else {
        // a long bit-packed run (dictionary ids) in short calls, compiled early (RowBlocks)
        var done = 0
        while (done < take) {
          val n = math.min(take - done, UnpackPiece)
          runs.unpack(done, n, out, k + done)
          done += n
        }
      }
      k += take
    }
    runs.position
  }

  /** Values unpacked per call of [[Runs.unpack]] by [[decode]] (a multiple of 8). */
  private final val UnpackPiece = 8 * RowBlocks.Size

  /**
   * The runs of `buf` from absolute position `pos` (bytes up to `end`), one [[next]] at a time:
   * an RLE run of [[length]] copies of [[value]], or a bit-packed run of [[length]] values (whole
   * groups of 8) read by [[unpack]]. `bitWidth` is 1..32.
   */
  private[deltalog] final class Runs(buf: ByteBuffer, pos: Int, end: Int, bitWidth: Int) {
    private val valueBytes = (bitWidth + 7) / 8
    private val mask = if (bitWidth == 32) 0xFFFFFFFFL else (1L << bitWidth) - 1
    private val le = if (buf.order() == java.nio.ByteOrder.LITTLE_ENDIAN) buf else buf.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN)
    private var p = pos
    private var packedAt = 0
    var rle = false
    var length = 0
    var value = 0

    /** Position after the runs read so far. */
    def position: Int = p

    /** Reads the next run's header (and an RLE run's value). */
    def next(): Unit = {
      // ULEB128 run header
      var header = 0L
      var shift = 0
      var more = true
      while (more) {
        if (p >= end) throw new IllegalStateException("RLE/bit-packed data ends inside a run header")
        val b = buf.get(p) & 0xFF
        p += 1
        header |= (b & 0x7FL) << shift
        shift += 7
        more = (b & 0x80) != 0
        if (shift > 35 && more) throw new IllegalStateException("RLE/bit-packed run header too long")
      }
      rle = (header & 1) == 0
      if (rle) {
        val n = (header >>> 1).toInt
        if (n <= 0 || p + valueBytes > end) throw new IllegalStateException("bad RLE run")
        var v = 0L
        var i = 0
        while (i < valueBytes) { v |= (buf.get(p + i) & 0xFFL) << (8 * i); i += 1 }
        p += valueBytes
        length = n
        value = v.toInt
      } else {
        val groups = (header >>> 1).toInt
        val runEnd = p.toLong + groups.toLong * bitWidth
        if (groups <= 0 || runEnd > end || groups.toLong * 8 > Int.MaxValue) throw new IllegalStateException("bad bit-packed run")
        packedAt = p
        length = groups * 8
        p = runEnd.toInt
      }
    }

    /** The first `take` values of the current bit-packed run into `out(at until at + take)`. */
    def unpack(take: Int, out: Array[Int], at: Int): Unit = unpack(0, take, out, at)

    /** Values `first until first + take` (`first` a multiple of 8) of the current bit-packed run into `out(at ...)`. */
    def unpack(first: Int, take: Int, out: Array[Int], at: Int): Unit = {
      // Value i starts `i * bitWidth` bits after the group of `first`; with a width of at most 32
      // and a bit shift below 8 it lies within the 8 bytes from its first byte: one little-endian
      // `getLong` per value (fewer calls than byte by byte, which matters before the JIT has
      // compiled this), bytes one at a time only within 8 bytes of the buffer's end.
      val base = packedAt + (first >>> 3) * bitWidth
      val last = le.limit() - 8
      var bitOff = 0L
      var i = 0
      while (i < take) {
        val byteAt = base + (bitOff >>> 3).toInt
        val shift = (bitOff & 7).toInt
        val word = if (byteAt <= last) le.getLong(byteAt) else tailWord(byteAt, (shift + bitWidth + 7) >>> 3)
        out(at + i) = ((word >>> shift) & mask).toInt
        bitOff += bitWidth
        i += 1
      }
    }

    /** The `n` bytes from `at` (little-endian) near the buffer's end. */
    private def tailWord(at: Int, n: Int): Long = {
      var w = 0L
      var k = 0
      while (k < n) { w |= (le.get(at + k) & 0xFFL) << (8 * k); k += 1 }
      w
    }
  }
}
