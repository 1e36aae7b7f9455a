package io.deltalog.parquet

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.statistics.{SizeStatistics, Statistics}
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.PrimitiveType
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._

/** Receives the finished (uncompressed) data pages of a [[ColumnChunkWriter]]. */
private[deltalog] trait PageSink {
  /**
   * A data page V1 body, bytes `[from, until)` of `body` (repetition levels, definition levels,
   * PLAIN values); the sink owns `body` afterwards.
   */
  def page(column: ColumnChunkWriter, body: Array[Byte], from: Int, until: Int, numValues: Int): Unit

  /** An empty buffer for page values (at least [[ColumnChunkWriter.Reserve]] + page size bytes). */
  def valuesBuffer(): Array[Byte]
}

/**
 * Builds one column chunk (one leaf column of one row group) of a Parquet file from entries
 * (repetition level, definition level, value) in row order, the way Dremel shredding produces
 * them. Values are PLAIN-encoded as they arrive; levels are kept as runs and RLE / bit-packing
 * hybrid encoded when a page is cut. Pages are cut only where a row starts (repetition level 0)
 * once their values reach `pageSize` bytes, and handed to the [[PageSink]].
 *
 * Also gathered for the column chunk metadata: value and null counts, min / max (Parquet's type
 * order: signed for INT32 / INT64, unsigned bytes for BINARY) and size statistics (level
 * histograms, unencoded BINARY bytes).
 */
private[deltalog] final class ColumnChunkWriter(val descriptor: ColumnDescriptor, sink: PageSink, pageSize: Int) {
  import ColumnChunkWriter.Reserve

  val primitiveType: PrimitiveType = descriptor.getPrimitiveType
  private val kind: PrimitiveTypeName = primitiveType.getPrimitiveTypeName
  val maxDef: Int = descriptor.getMaxDefinitionLevel
  val maxRep: Int = descriptor.getMaxRepetitionLevel
  private val defWidth = ParquetLevels.bitWidth(maxDef)
  private val repWidth = ParquetLevels.bitWidth(maxRep)

  // Page in progress: values from Reserve (the levels are put in front of them at the cut).
  private var buf: Array[Byte] = _
  private var vpos = Reserve
  private var pageValues = 0
  private var bools = 0 // booleans in the page (bit-packed PLAIN)
  private val defs = new LevelRuns
  private val reps = new LevelRuns

  // Column chunk totals.
  private var entries = 0L
  private var nullEntries = 0L
  private var pagesCut = 0
  private var unencodedBytes = 0L
  private val defHistogram = new Array[Long](maxDef + 1)
  private val repHistogram = new Array[Long](maxRep + 1)
  private val exactStats: Statistics[_] =
    if (kind == FLOAT || kind == DOUBLE || kind == FIXED_LEN_BYTE_ARRAY) Statistics.createStats(primitiveType)
    else null
  private var hasMinMax = false
  private var minL = 0L
  private var maxL = 0L
  private var minB: Array[Byte] = _
  private var minOff = 0
  private var minLen = 0
  private var maxB: Array[Byte] = _
  private var maxOff = 0
  private var maxLen = 0

  // ------------------------------------------------------------------------------ entries

  @inline private def entry(rep: Int, defLevel: Int, count: Int): Unit = {
    if (rep == 0 && pageValues > 0 && vpos - Reserve + 4L * (defs.runs + reps.runs) >= pageSize) cutPage()
    if (maxRep > 0) { reps.add(rep, count); repHistogram(rep) += count }
    if (maxDef > 0) defs.add(defLevel, count)
    defHistogram(defLevel) += count
    pageValues += count
    entries += count
  }

  /** Entries (values and nulls) so far. */
  def valueCount: Long = entries
  /** Null entries so far. */
  def nullCount: Long = nullEntries
  /** Pages cut so far. */
  def pages: Int = pagesCut

  /** `count` null entries with these levels (`rep == 0`: `count` rows). */
  def nulls(rep: Int, defLevel: Int, count: Int): Unit = if (count > 0) {
    require(defLevel < maxDef, "a null needs a definition level below the maximum")
    entry(rep, defLevel, count)
    nullEntries += count
  }

  @inline private def room(n: Int): Unit = {
    if (buf == null) { buf = sink.valuesBuffer(); vpos = Reserve }
    if (buf.length - vpos < n) buf = java.util.Arrays.copyOf(buf, math.max(vpos + n, buf.length * 2))
  }

  @inline private def putInt(v: Int): Unit = {
    val b = buf; val p = vpos
    b(p) = v.toByte; b(p + 1) = (v >>> 8).toByte; b(p + 2) = (v >>> 16).toByte; b(p + 3) = (v >>> 24).toByte
    vpos = p + 4
  }

  @inline private def putLong(v: Long): Unit = {
    val b = buf; val p = vpos
    b(p) = v.toByte; b(p + 1) = (v >>> 8).toByte; b(p + 2) = (v >>> 16).toByte; b(p + 3) = (v >>> 24).toByte
    b(p + 4) = (v >>> 32).toByte; b(p + 5) = (v >>> 40).toByte; b(p + 6) = (v >>> 48).toByte; b(p + 7) = (v >>> 56).toByte
    vpos = p + 8
  }

  @inline private def minMax(v: Long): Unit =
    if (!hasMinMax) { hasMinMax = true; minL = v; maxL = v }
    else if (v < minL) minL = v
    else if (v > maxL) maxL = v

  /** A BINARY value (bytes `[off, off + len)` of `b`, which must not change afterwards). */
  def binary(rep: Int, b: Array[Byte], off: Int, len: Int): Unit = {
    entry(rep, maxDef, 1)
    room(4 + len)
    putInt(len)
    System.arraycopy(b, off, buf, vpos, len)
    vpos += len
    unencodedBytes += len
    if (!hasMinMax) {
      hasMinMax = true
      minB = b; minOff = off; minLen = len; maxB = b; maxOff = off; maxLen = len
    } else if (java.util.Arrays.compareUnsigned(b, off, off + len, minB, minOff, minOff + minLen) < 0) {
      minB = b; minOff = off; minLen = len
    } else if (java.util.Arrays.compareUnsigned(b, off, off + len, maxB, maxOff, maxOff + maxLen) > 0) {
      maxB = b; maxOff = off; maxLen = len
    }
  }

  def string(rep: Int, s: String): Unit = { val b = s.getBytes(UTF_8); binary(rep, b, 0, b.length) }

  /** A FIXED_LEN_BYTE_ARRAY value. */
  def fixed(rep: Int, b: Array[Byte], off: Int, len: Int): Unit = {
    require(len == primitiveType.getTypeLength, "fixed-length value of the wrong length")
    entry(rep, maxDef, 1)
    room(len)
    System.arraycopy(b, off, buf, vpos, len)
    vpos += len
    exactStats.updateStats(Binary.fromConstantByteArray(java.util.Arrays.copyOfRange(b, off, off + len)))
  }

  def long(rep: Int, v: Long): Unit = {
    entry(rep, maxDef, 1)
    room(8)
    putLong(v)
    minMax(v)
  }

  def int(rep: Int, v: Int): Unit = {
    entry(rep, maxDef, 1)
    room(4)
    putInt(v)
    minMax(v)
  }

  def boolean(rep: Int, v: Boolean): Unit = {
    entry(rep, maxDef, 1)
    if ((bools & 7) == 0) { room(1); buf(vpos) = 0; vpos += 1 }
    if (v) buf(vpos - 1) = (buf(vpos - 1) | (1 << (bools & 7))).toByte
    bools += 1
    minMax(if (v) 1L else 0L)
  }

  def float(rep: Int, v: Float): Unit = {
    entry(rep, maxDef, 1)
    room(4)
    putInt(java.lang.Float.floatToRawIntBits(v))
    exactStats.updateStats(v)
  }

  def double(rep: Int, v: Double): Unit = {
    entry(rep, maxDef, 1)
    room(8)
    putLong(java.lang.Double.doubleToRawLongBits(v))
    exactStats.updateStats(v)
  }

  // ------------------------------------------------------------------------------ pages

  private val levels = new LittleEndianBuffer(64)

  private def encodeLevels(runs: LevelRuns, width: Int): Unit = {
    val at = levels.pos
    levels.putInt(0)
    runs.encode(width, levels)
    levels.setInt(at, levels.pos - at - 4)
  }

  private def cutPage(): Unit = {
    levels.reset()
    if (maxRep > 0) encodeLevels(reps, repWidth)
    if (maxDef > 0) encodeLevels(defs, defWidth)
    val n = levels.pos
    val valuesLen = if (buf == null) 0 else vpos - Reserve
    if (buf != null && n <= Reserve) {
      System.arraycopy(levels.bytes, 0, buf, Reserve - n, n)
      sink.page(this, buf, Reserve - n, vpos, pageValues)
      buf = null
    } else {
      val body = new Array[Byte](n + valuesLen)
      System.arraycopy(levels.bytes, 0, body, 0, n)
      if (valuesLen > 0) System.arraycopy(buf, Reserve, body, n, valuesLen)
      sink.page(this, body, 0, body.length, pageValues)
    }
    vpos = Reserve
    pageValues = 0
    bools = 0
    defs.clear()
    reps.clear()
    pagesCut += 1
  }

  /** Cuts the last page (every column chunk has at least one entry). */
  def finish(): Unit = if (pageValues > 0) cutPage()

  // ------------------------------------------------------------------------------ metadata

  /** Column chunk statistics: null count and, when a value was written, min and max. */
  def statistics: Statistics[_] = {
    val s = if (exactStats != null) exactStats else Statistics.createStats(primitiveType)
    if (exactStats == null && hasMinMax) kind match {
      case BINARY =>
        s.setMinMaxFromBytes(java.util.Arrays.copyOfRange(minB, minOff, minOff + minLen),
          java.util.Arrays.copyOfRange(maxB, maxOff, maxOff + maxLen))
      case INT64 => s.setMinMaxFromBytes(le(minL, 8), le(maxL, 8))
      case INT32 => s.setMinMaxFromBytes(le(minL, 4), le(maxL, 4))
      case BOOLEAN => s.setMinMaxFromBytes(Array(minL.toByte), Array(maxL.toByte))
      case other => throw new IllegalStateException(s"no min/max tracking for $other")
    }
    s.incrementNumNulls(nullEntries)
    s
  }

  private def le(v: Long, n: Int): Array[Byte] = Array.tabulate(n)(i => (v >>> (8 * i)).toByte)

  /** Level histograms (as parquet-mr: repetition only when levels repeat, definition above 1). */
  def sizeStatistics: SizeStatistics = {
    def list(h: Array[Long], keep: Boolean): java.util.List[java.lang.Long] = {
      val l = new java.util.ArrayList[java.lang.Long]()
      if (keep) h.foreach(x => l.add(java.lang.Long.valueOf(x)))
      l
    }
    new SizeStatistics(primitiveType, if (kind == BINARY) unencodedBytes else 0L,
      list(repHistogram, maxRep > 0), list(defHistogram, maxDef > 1))
  }
}

private[deltalog] object ColumnChunkWriter {
  /** Bytes kept free in front of the values of a page for its levels. */
  val Reserve: Int = 256
}
