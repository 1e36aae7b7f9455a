package io.deltalog.parquet

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.parquet.bytes.BytesUtils
import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import io.deltalog.parquet.ParquetFooterThrift.PageHeader

/**
 * The non-null slots of a mostly-null leaf column chunk, decoded straight from the file's memory
 * map ([[MappedFiles]]): page headers read with [[ParquetFooterThrift]], definition and
 * repetition levels walked run by run ([[HybridRle.Runs]]; runs of level 0 skipped in one step),
 * values looked at only in the slots that hold one. Used where a column is null in every row but
 * a handful (a checkpoint's `protocol` and `metaData` columns).
 *
 * Handles uncompressed and snappy chunks of V1 data pages, PLAIN and dictionary-encoded BINARY
 * (as UTF-8 strings) / INT32 / INT64 leaves of max repetition level 0 or 1. Anything else
 * (another codec, V2 pages, another encoding, BIT_PACKED levels, another type, more than
 * [[MaxSlots]] non-null slots) gives None, and damaged bytes throw.
 */
private[deltalog] object SparseColumnChunk {
  /** Non-null slots kept per leaf; beyond that the column is not sparse: None. */
  val MaxSlots = 4096

  /** One non-null slot of a leaf: its row (in the row group), levels and value (null unless defined). */
  final class Slot(val row: Long, val rep: Int, val dl: Int, val value: AnyRef)

  /** The non-null slots of one leaf by row, in slot order. */
  type LeafSlots = java.util.HashMap[java.lang.Long, java.util.ArrayList[Slot]]

  // ------------------------------------------------------------------------------ one leaf

  def decodeLeaf(map: ByteBuffer, chunk: ColumnChunkMetaData, d: ColumnDescriptor): Option[LeafSlots] = {
    val codec = chunk.getCodec
    if (codec != CompressionCodecName.UNCOMPRESSED && codec != CompressionCodecName.SNAPPY) return None
    if (chunk.isEncrypted || chunk.getStartingPos < 0 || chunk.getTotalSize <= 0 ||
      chunk.getStartingPos + chunk.getTotalSize > map.capacity()) return None
    val kind = d.getPrimitiveType.getPrimitiveTypeName
    if (kind != PrimitiveTypeName.BINARY && kind != PrimitiveTypeName.INT32 && kind != PrimitiveTypeName.INT64) return None
    val maxRl = d.getMaxRepetitionLevel
    val maxDl = d.getMaxDefinitionLevel
    if (maxRl > 1 || maxDl < 1) return None
    val bytes = map.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    val start = chunk.getStartingPos.toInt
    val end = start + chunk.getTotalSize.toInt
    val out: LeafSlots = new java.util.HashMap()
    var slots = 0
    var dictionary: Array[AnyRef] = null
    var row = -1L
    var values = 0L
    var pos = start
    while (pos < end) {
      val (header, headerLength) = ParquetFooterThrift.readPageHeader(bytes, pos, end)
      val bodyAt = pos + headerLength
      val size = header.compressedSize
      if (size < 0 || bodyAt.toLong + size > end) return None
      pos = bodyAt + size
      header.pageType match {
        case PageHeader.DictionaryPage =>
          if (!header.hasDictionaryHeader || dictionary != null || values > 0) return None
          if (header.encoding != Plain && header.encoding != PlainDictionary) return None
          val body = uncompress(bytes, bodyAt, size, header.uncompressedSize, codec)
          val reader = new PlainValues(body, 0, body.limit(), kind)
          dictionary = Array.fill[AnyRef](header.numValues)(reader.next())
        case PageHeader.DataPage =>
          if (!header.hasDataHeader) return None
          if (maxRl > 0 && header.repetitionEncoding != Rle) return None
          if (header.definitionEncoding != Rle) return None
          val body = uncompress(bytes, bodyAt, size, header.uncompressedSize, codec)
          var p = 0
          def levels(max: Int): LevelCursor = {
            val len = body.getInt(p)
            if (len < 0 || p + 4L + len > body.limit()) throw new IllegalStateException("bad level length")
            val c = new LevelCursor(body, p + 4, p + 4 + len, BytesUtils.getWidthFromMaxInt(max))
            p += 4 + len
            c
          }
          val reps = if (maxRl > 0) levels(maxRl) else null
          val defs = levels(maxDl)
          val vals = valuesOf(header.encoding, body, p, body.limit(), kind, dictionary)
          if (vals == null) return None
          val n = walk(header.numValues, reps, defs, vals, maxDl, row, out, slots)
          if (n == null) return None
          row = n._1; slots = n._2
          values += header.numValues
        case PageHeader.DataPageV2 => return None // (checkpoint writers use V1 pages)
        case _ => // index pages
      }
    }
    if (values != chunk.getValueCount) None else Some(out)
  }

  /**
   * Walks `count` slots of a page: runs of level 0 (a null top-level struct, one row per slot) in
   * one step, every other slot one by one. Returns the last row index and the slots kept so far,
   * or null past [[MaxSlots]].
   */
  private def walk(count: Int, reps: LevelCursor, defs: LevelCursor, vals: ValueReader, maxDl: Int,
      startRow: Long, out: LeafSlots, startSlots: Int): (Long, Int) = {
    var row = startRow
    var slots = startSlots
    var left = count
    while (left > 0) {
      val run = defs.runOfZeros(left)
      if (run > 0) {
        // level 0 slots: no repetition possible, each one a new row
        if (reps != null) reps.skip(run)
        row += run
        left -= run
      } else {
        val dl = defs.next()
        val rl = if (reps == null) 0 else reps.next()
        if (rl == 0) row += 1
        if (row < 0 || (dl == 0 && rl != 0)) throw new IllegalStateException("repeated slot without a row")
        if (dl > 0) { // (a null row inside a bit-packed run holds nothing)
          val value = if (dl == maxDl) vals.next() else null
          slots += 1
          if (slots > MaxSlots) return null
          var list = out.get(row)
          if (list == null) { list = new java.util.ArrayList[Slot](2); out.put(row, list) }
          list.add(new Slot(row, rl, dl, value))
        }
        left -= 1
      }
    }
    (row, slots)
  }

  private def uncompress(bytes: ByteBuffer, at: Int, size: Int, rawSize: Int, codec: CompressionCodecName): ByteBuffer = {
    val src = bytes.duplicate().position(at).limit(at + size).asInstanceOf[ByteBuffer].slice()
    if (codec == CompressionCodecName.UNCOMPRESSED) {
      if (rawSize != size) throw new IllegalStateException("compressed page in an uncompressed chunk")
      src.order(ByteOrder.LITTLE_ENDIAN)
    } else {
      val in = new Array[Byte](size)
      src.get(in)
      if (rawSize < 0 || org.xerial.snappy.Snappy.uncompressedLength(in, 0, size) != rawSize)
        throw new IllegalStateException("page size does not match its snappy data")
      val out = new Array[Byte](rawSize)
      org.xerial.snappy.Snappy.uncompress(in, 0, size, out, 0)
      ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN)
    }
  }

  // ------------------------------------------------------------------------------ levels and values

  /** Levels of one page read from the RLE / bit-packing hybrid runs (`bitWidth` 1..32). */
  private final class LevelCursor(buf: ByteBuffer, pos: Int, end: Int, bitWidth: Int) {
    private val runs = new HybridRle.Runs(buf, pos, end, bitWidth)
    private var left = 0
    private var rle = true
    private var value = 0
    private var packed: Array[Int] = _
    private var at = 0

    private def load(): Unit = {
      runs.next()
      rle = runs.rle
      left = runs.length
      if (rle) value = runs.value
      else {
        packed = new Array[Int](runs.length)
        runs.unpack(runs.length, packed, 0)
        at = 0
      }
    }

    def next(): Int = {
      while (left == 0) load()
      left -= 1
      if (rle) value else { at += 1; packed(at - 1) }
    }

    /** The number (at most `max`) of level-0 slots starting here, when they start an RLE run of 0s; else 0. */
    def runOfZeros(max: Int): Int = {
      while (left == 0) load()
      if (!rle || value != 0) 0
      else { val n = math.min(left, max); left -= n; n }
    }

    def skip(n: Int): Unit = {
      var k = n
      while (k > 0) {
        while (left == 0) load()
        val take = math.min(left, k)
        left -= take
        if (!rle) at += take
        k -= take
      }
    }
  }

  private abstract class ValueReader { def next(): AnyRef }

  /** PLAIN values of `kind` in `[pos, end)` of `buf`. */
  private final class PlainValues(buf: ByteBuffer, pos: Int, end: Int, kind: PrimitiveTypeName) extends ValueReader {
    private val b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    private var p = pos
    private def need(n: Long): Unit = if (n < 0 || p + n > end) throw new IllegalStateException("values end early")
    def next(): AnyRef = kind match {
      case PrimitiveTypeName.BINARY =>
        need(4)
        val len = b.getInt(p)
        p += 4
        need(len)
        val a = new Array[Byte](len)
        b.get(p, a)
        p += len
        new String(a, UTF_8)
      case PrimitiveTypeName.INT32 => need(4); p += 4; Integer.valueOf(b.getInt(p - 4))
      case _ => need(8); p += 8; java.lang.Long.valueOf(b.getLong(p - 8))
    }
  }

  /** Dictionary ids (bit width byte, then hybrid runs) mapped through `dictionary`. */
  private final class DictionaryValues(buf: ByteBuffer, pos: Int, end: Int, dictionary: Array[AnyRef]) extends ValueReader {
    private lazy val ids = {
      if (pos >= end) throw new IllegalStateException("missing dictionary id width")
      val width = buf.get(pos) & 0xFF
      if (width > 32) throw new IllegalStateException("bad dictionary id width")
      if (width == 0) null else new LevelCursor(buf, pos + 1, end, width)
    }
    def next(): AnyRef = {
      val id = if (ids == null) 0 else ids.next()
      if (id < 0 || id >= dictionary.length) throw new IllegalStateException("dictionary id out of range")
      dictionary(id)
    }
  }

  // Thrift `Encoding` ids
  private final val Plain = 0
  private final val PlainDictionary = 2
  private final val Rle = 3
  private final val RleDictionary = 8

  private def valuesOf(encoding: Int, buf: ByteBuffer, pos: Int, end: Int, kind: PrimitiveTypeName,
      dictionary: Array[AnyRef]): ValueReader = encoding match {
    case Plain => new PlainValues(buf, pos, end, kind)
    case PlainDictionary | RleDictionary if dictionary != null => new DictionaryValues(buf, pos, end, dictionary)
    case _ => null
  }
}
