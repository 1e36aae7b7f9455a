package io.deltalog.log

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.control.NonFatal

import org.apache.parquet.column.{Encoding, EncodingStats}
import org.apache.parquet.column.statistics.{SizeStatistics, Statistics}
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, ColumnPath, CompressionCodecName,
  FileMetaData, ParquetMetadata}
import org.apache.parquet.internal.hadoop.metadata.IndexReference
import org.apache.parquet.schema.{ColumnOrder, LogicalTypeAnnotation, MessageType, OriginalType, PrimitiveType, Type, Types}
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

/**
 * The footer of a plain (unencrypted) Parquet file decoded straight from its Thrift compact bytes
 * into parquet-mr's `ParquetMetadata`, for the checkpoint reader. parquet-mr decodes a footer
 * through generated Thrift classes, an event-based field reader and a converter that hashes every
 * row group deeply; in a fresh driver, where all of it runs interpreted, a 100k-file checkpoint's
 * 9 KB footer took 14-28 ms there. This reads the same fields in one pass with a few small loops.
 *
 * The result is the converter's for everything the checkpoint reader and parquet-mr's row-group
 * reading use: the schema (built with the same builder calls, so logical types, field ids and
 * column orders are the converter's), row counts, row index offsets, ordinals, and per column
 * chunk its path, type, codec, encodings, encoding statistics, page offsets, value count, sizes,
 * size statistics, column / offset index references and bloom filter location. One difference:
 * chunk statistics keep only their null count, not min / max (deltalog reads checkpoints whole and
 * skips row groups on null counts only; parquet-mr's statistics filter decides `notEq(null)` from
 * the null count alone).
 *
 * Anything else -- an encrypted file, an unknown logical type, encoding or codec, a field of an
 * unexpected Thrift type, bytes that do not decode -- makes [[decode]] answer None, and the caller
 * takes parquet-mr's way, which reads the file or reports what is wrong with it.
 */
private[log] object ParquetFooter {
  /** The footer of `file` (a whole Parquet file, from position 0 to its limit), or None (see above). */
  def decode(file: ByteBuffer): Option[ParquetMetadata] = {
    val length = file.limit()
    if (length < 12) return None
    val lengthIndex = length - 8
    val footerLength = (file.get(lengthIndex) & 0xFF) | (file.get(lengthIndex + 1) & 0xFF) << 8 |
      (file.get(lengthIndex + 2) & 0xFF) << 16 | (file.get(lengthIndex + 3) & 0xFF) << 24
    if (file.get(length - 4) != 'P' || file.get(length - 3) != 'A' || file.get(length - 2) != 'R' ||
      file.get(length - 1) != '1') return None
    val start = lengthIndex - footerLength
    if (footerLength <= 0 || start < 4) return None
    val bytes = new Array[Byte](footerLength)
    file.get(start, bytes)
    try Some(toParquetMetadata(new Reader(bytes).fileMetaData()))
    catch { case NonFatal(_) => None }
  }

  /** Something this decoder leaves to parquet-mr. */
  private final class Unsupported(what: String) extends RuntimeException(what, null, false, false)

  // Thrift compact protocol type ids.
  private final val True = 1
  private final val False = 2
  private final val I8 = 3
  private final val I16 = 4
  private final val I32 = 5
  private final val I64 = 6
  private final val Double = 7
  private final val Binary = 8
  private final val ListT = 9
  private final val SetT = 10
  private final val MapT = 11
  private final val Struct = 12

  // parquet.thrift enums by their values.
  private val PrimitiveTypes = Array(PrimitiveTypeName.BOOLEAN, PrimitiveTypeName.INT32, PrimitiveTypeName.INT64,
    PrimitiveTypeName.INT96, PrimitiveTypeName.FLOAT, PrimitiveTypeName.DOUBLE, PrimitiveTypeName.BINARY,
    PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY)
  private val Repetitions = Array(Type.Repetition.REQUIRED, Type.Repetition.OPTIONAL, Type.Repetition.REPEATED)
  private val Encodings = Array(Encoding.PLAIN, null /* GROUP_VAR_INT */, Encoding.valueOf("PLAIN_DICTIONARY"),
    Encoding.RLE, Encoding.valueOf("BIT_PACKED"), Encoding.DELTA_BINARY_PACKED, Encoding.DELTA_LENGTH_BYTE_ARRAY, Encoding.DELTA_BYTE_ARRAY,
    Encoding.RLE_DICTIONARY, Encoding.BYTE_STREAM_SPLIT)
  private val Codecs = Array(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY, CompressionCodecName.GZIP,
    CompressionCodecName.LZO, CompressionCodecName.BROTLI, CompressionCodecName.LZ4, CompressionCodecName.ZSTD,
    CompressionCodecName.LZ4_RAW)
  private val ConvertedTypes = Array(OriginalType.UTF8, OriginalType.MAP, OriginalType.MAP_KEY_VALUE, OriginalType.LIST,
    OriginalType.ENUM, OriginalType.DECIMAL, OriginalType.DATE, OriginalType.TIME_MILLIS, OriginalType.TIME_MICROS,
    OriginalType.TIMESTAMP_MILLIS, OriginalType.TIMESTAMP_MICROS, OriginalType.UINT_8, OriginalType.UINT_16,
    OriginalType.UINT_32, OriginalType.UINT_64, OriginalType.INT_8, OriginalType.INT_16, OriginalType.INT_32,
    OriginalType.INT_64, OriginalType.JSON, OriginalType.BSON, OriginalType.INTERVAL)

  private def enumValue[T <: AnyRef](values: Array[T], v: Int, what: String): T = {
    val out = if (v >= 0 && v < values.length) values(v) else null.asInstanceOf[T]
    if (out == null) throw new Unsupported(s"$what $v")
    out
  }

  // ------------------------------------------------------------------ decoded structs

  private final class SchemaElement {
    var primitive: Int = -1
    var typeLength: Int = -1
    var hasTypeLength = false
    var repetition: Int = -1
    var name: String = _
    var numChildren: Int = 0
    var converted: Int = -1
    var scale: Int = 0
    var hasScale = false
    var precision: Int = 0
    var hasPrecision = false
    var fieldId: Int = 0
    var hasFieldId = false
    var logical: LogicalTypeAnnotation = _
  }

  private final class Chunk {
    var filePath: String = _
    var hasMeta = false
    var primitive: Int = -1
    var encodings: Array[Int] = Array.emptyIntArray
    var path: Array[String] = _
    var codec: Int = -1
    var numValues: Long = 0L
    var uncompressed: Long = 0L
    var compressed: Long = 0L
    var dataPageOffset: Long = 0L
    var dictionaryPageOffset: Long = 0L
    var nullCount: Long = -1L
    var hasNullCount = false // no statistics, or no null count in them
    var minMaxLengths: Long = 0L // byte lengths of the statistics' max, min, max_value, min_value (+1; 0: absent), 16 bits each
    var pageEncodingStats: Array[Long] = _ // (page type, encoding, count) triples, null when absent
    var bloomOffset: Long = -1L
    var bloomLength: Int = -1
    var hasSizeStats = false
    var unencodedBytes: Long = 0L
    var repetitionHistogram: java.util.List[java.lang.Long] = _
    var definitionHistogram: java.util.List[java.lang.Long] = _
    var offsetIndexOffset: Long = 0L
    var offsetIndexLength: Int = 0
    var hasOffsetIndex = 0 // bit 0: offset, bit 1: length
    var columnIndexOffset: Long = 0L
    var columnIndexLength: Int = 0
    var hasColumnIndex = 0
  }

  private final class RowGroup {
    val columns = new java.util.ArrayList[Chunk]()
    var totalByteSize: Long = 0L
    var numRows: Long = 0L
    var ordinal: Int = 0
    var hasOrdinal = false
  }

  private final class FileMeta {
    val schema = new java.util.ArrayList[SchemaElement]()
    val rowGroups = new java.util.ArrayList[RowGroup]()
    var keyValues: java.util.HashMap[String, String] = new java.util.HashMap[String, String]()
    var createdBy: String = _
    var columnOrders: Array[Boolean] = _ // per leaf: type-defined order; null when the file has none
  }

  // ------------------------------------------------------------------ Thrift compact reader

  /** Reads the Thrift compact encoding of a `FileMetaData` from `buf`. */
  private final class Reader(buf: Array[Byte]) {
    private var pos = 0
    private var listType = 0 // element type of the last list header

    private def byte(): Int = { val b = buf(pos); pos += 1; b }

    private def varint(): Long = {
      var shift = 0
      var out = 0L
      var b = 0
      do {
        b = buf(pos)
        pos += 1
        out |= (b & 0x7FL) << shift
        shift += 7
        if (shift > 63) throw new Unsupported("varint")
      } while ((b & 0x80) != 0)
      out
    }

    private def zigzag(): Long = { val v = varint(); (v >>> 1) ^ -(v & 1) }
    private def i32(t: Int): Int = { expect(t, I32); zigzag().toInt }
    private def i64(t: Int): Long = { expect(t, I64); zigzag() }
    private def bool(t: Int): Boolean = t match {
      case True => true
      case False => false
      case _ => throw new Unsupported(s"bool of type $t")
    }

    private def binaryLength(t: Int): Int = {
      expect(t, Binary)
      val n = varint()
      if (n < 0 || n > buf.length - pos) throw new Unsupported("binary length")
      n.toInt
    }
    private def string(t: Int): String = {
      val n = binaryLength(t)
      val s = new String(buf, pos, n, UTF_8)
      pos += n
      s
    }

    private def expect(t: Int, want: Int): Unit = if (t != want) throw new Unsupported(s"type $t, expected $want")

    /** Thrift rejects a struct without one of its required fields; so does this decoder. */
    private def required(seen: Long, mask: Long, what: String): Unit =
      if ((seen & mask) != mask) throw new Unsupported(s"$what without a required field")
    @inline private def bit(h: Int): Long = if ((h >>> 8) < 64) 1L << (h >>> 8) else 0L

    /** The next field header of a struct whose last field id was `last`: `id << 8 | type`, or -1 at its end. */
    private def field(last: Int): Int = {
      val b = byte() & 0xFF
      if (b == 0) -1
      else {
        val delta = b >>> 4
        val id = if (delta != 0) last + delta else zigzag().toShort.toInt
        if ((b & 0x0F) > Struct) throw new Unsupported(s"type ${b & 0x0F}") // Thrift fails here too
        (id << 8) | (b & 0x0F)
      }
    }

    /**
     * The one field header of a union (an empty one is left to parquet-mr). After its value, Thrift
     * reads one more field header and takes it as the union's end whatever it is: [[unionEnd]].
     */
    private def unionField(): Int = {
      val h = field(0)
      if (h < 0) throw new Unsupported("empty union")
      h
    }
    private def unionEnd(h: Int): Unit = field(h >>> 8)

    /** A list header of element type `elem`: its size. */
    private def list(t: Int, elem: Int): Int = {
      expect(t, ListT)
      val n = listHeader()
      if (n > 0 && listType != elem) throw new Unsupported(s"list of $listType, expected $elem")
      n
    }

    private def listHeader(): Int = {
      val b = byte() & 0xFF
      listType = b & 0x0F
      val n = if ((b >>> 4) == 15) varint() else (b >>> 4).toLong
      if (n < 0 || n > buf.length - pos) throw new Unsupported("list size")
      n.toInt
    }

    /** Skips a value of type `t` (`inList`: booleans take a byte there). */
    private def skip(t: Int, inList: Boolean = false): Unit = t match {
      case True | False => if (inList) pos += 1
      case I8 => pos += 1
      case I16 | I32 | I64 => varint()
      case Double => pos += 8
      case Binary => val n = binaryLength(Binary); pos += n // (not `pos += binaryLength(..)`: it reads pos first)
      case ListT | SetT =>
        val n = listHeader()
        val e = listType
        var i = 0
        while (i < n) { skip(e, inList = true); i += 1 }
      case MapT =>
        val n = varint().toInt
        if (n > 0) {
          val kv = byte() & 0xFF
          var i = 0
          while (i < n) { skip(kv >>> 4, inList = true); skip(kv & 0x0F, inList = true); i += 1 }
        }
      case Struct => skipStruct()
      case _ => throw new Unsupported(s"type $t")
    }

    private def skipStruct(): Unit = {
      var last = 0
      var h = field(last)
      while (h >= 0) { skip(h & 0xFF); last = h >>> 8; h = field(last) }
    }

    def fileMetaData(): FileMeta = {
      val m = new FileMeta
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 2 => m.schema.clear(); var n = list(t, Struct); while (n > 0) { m.schema.add(schemaElement()); n -= 1 }
          case 4 => m.rowGroups.clear(); var n = list(t, Struct); while (n > 0) { m.rowGroups.add(rowGroup()); n -= 1 }
          case 5 => m.keyValues.clear(); var n = list(t, Struct); while (n > 0) { keyValue(m.keyValues); n -= 1 }
          case 6 => m.createdBy = string(t)
          case 7 =>
            val n = list(t, Struct)
            m.columnOrders = new Array[Boolean](n)
            var i = 0
            while (i < n) { m.columnOrders(i) = columnOrder(); i += 1 }
          case 8 | 9 => throw new Unsupported("encrypted file")
          case 1 => i32(t) // version
          case 3 => i64(t) // num_rows (the row groups count their own)
          case _ => skip(t)
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0x1EL, "FileMetaData")
      m
    }

    private def keyValue(into: java.util.HashMap[String, String]): Unit = {
      var key: String = null
      var value: String = null
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => key = string(t)
          case 2 => value = string(t)
          case _ => skip(t)
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0x2L, "KeyValue")
      if (key == null) throw new Unsupported("key-value without key")
      into.put(key, value)
    }

    /** A `ColumnOrder` union: true for `TYPE_ORDER`. */
    private def columnOrder(): Boolean = {
      val h = unionField()
      val typeOrder = (h >>> 8) == 1 && (h & 0xFF) == Struct
      skip(h & 0xFF)
      unionEnd(h)
      typeOrder
    }

    private def schemaElement(): SchemaElement = {
      val e = new SchemaElement
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => e.primitive = i32(t)
          case 2 => e.typeLength = i32(t); e.hasTypeLength = true
          case 3 => e.repetition = i32(t)
          case 4 => e.name = string(t)
          case 5 => e.numChildren = i32(t)
          case 6 => e.converted = i32(t)
          case 7 => e.scale = i32(t); e.hasScale = true
          case 8 => e.precision = i32(t); e.hasPrecision = true
          case 9 => e.fieldId = i32(t); e.hasFieldId = true
          case 10 => expect(t, Struct); e.logical = logicalType()
          case _ => skip(t)
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0x10L, "SchemaElement")
      if (e.name == null) throw new Unsupported("schema element without name")
      e
    }

    /** A `LogicalType` union, as the converter maps it. */
    private def logicalType(): LogicalTypeAnnotation = {
      val h = unionField()
      expect(h & 0xFF, Struct)
      val out = (h >>> 8) match {
          case 1 => skipStruct(); LogicalTypeAnnotation.stringType()
          case 2 => skipStruct(); LogicalTypeAnnotation.mapType()
          case 3 => skipStruct(); LogicalTypeAnnotation.listType()
          case 4 => skipStruct(); LogicalTypeAnnotation.enumType()
          case 5 =>
            var scale = 0
            var precision = 0
            var seen = 0L
            var l = 0
            var f = field(l)
            while (f >= 0) {
              (f >>> 8) match {
                case 1 => scale = i32(f & 0xFF)
                case 2 => precision = i32(f & 0xFF)
                case _ => skip(f & 0xFF)
              }
              seen |= bit(f)
              l = f >>> 8
              f = field(l)
            }
            required(seen, 0x6L, "DecimalType")
            LogicalTypeAnnotation.decimalType(scale, precision)
          case 6 => skipStruct(); LogicalTypeAnnotation.dateType()
          case 7 => val (utc, unit) = timeType(); LogicalTypeAnnotation.timeType(utc, unit)
          case 8 => val (utc, unit) = timeType(); LogicalTypeAnnotation.timestampType(utc, unit)
          case 10 =>
            var bits = 0
            var signed = false
            var seen = 0L
            var l = 0
            var f = field(l)
            while (f >= 0) {
              (f >>> 8) match {
                case 1 => expect(f & 0xFF, I8); bits = byte()
                case 2 => signed = bool(f & 0xFF)
                case _ => skip(f & 0xFF)
              }
              seen |= bit(f)
              l = f >>> 8
              f = field(l)
            }
            required(seen, 0x6L, "IntType")
            LogicalTypeAnnotation.intType(bits, signed)
          case 11 => skipStruct(); LogicalTypeAnnotation.unknownType()
          case 12 => skipStruct(); LogicalTypeAnnotation.jsonType()
          case 13 => skipStruct(); LogicalTypeAnnotation.bsonType()
          case 14 => skipStruct(); LogicalTypeAnnotation.uuidType()
          case other => throw new Unsupported(s"logical type $other")
        }
      unionEnd(h)
      out
    }

    /** `TimeType` / `TimestampType`: isAdjustedToUTC and unit. */
    private def timeType(): (Boolean, TimeUnit) = {
      var utc = false
      var unit: TimeUnit = null
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => utc = bool(t)
          case 2 =>
            expect(t, Struct)
            val f = unionField()
            expect(f & 0xFF, Struct)
            unit = (f >>> 8) match {
              case 1 => TimeUnit.MILLIS
              case 2 => TimeUnit.MICROS
              case 3 => TimeUnit.NANOS
              case other => throw new Unsupported(s"time unit $other")
            }
            skipStruct()
            unionEnd(f)
          case _ => skip(t)
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0x6L, "TimeType")
      if (unit == null) throw new Unsupported("time without unit")
      (utc, unit)
    }

    private def rowGroup(): RowGroup = {
      val g = new RowGroup
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => g.columns.clear(); var n = list(t, Struct); while (n > 0) { g.columns.add(columnChunk()); n -= 1 }
          case 2 => g.totalByteSize = i64(t)
          case 3 => g.numRows = i64(t)
          case 7 => expect(t, I16); g.ordinal = zigzag().toShort; g.hasOrdinal = true
          case _ => skip(t) // 4: sorting_columns, 5: file_offset, 6: total_compressed_size
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0xEL, "RowGroup")
      g
    }

    private def columnChunk(): Chunk = {
      val c = new Chunk
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => c.filePath = string(t)
          case 3 => expect(t, Struct); columnMetaData(c)
          case 4 => c.offsetIndexOffset = i64(t); c.hasOffsetIndex |= 1
          case 5 => c.offsetIndexLength = i32(t); c.hasOffsetIndex |= 2
          case 6 => c.columnIndexOffset = i64(t); c.hasColumnIndex |= 1
          case 7 => c.columnIndexLength = i32(t); c.hasColumnIndex |= 2
          case 8 | 9 => throw new Unsupported("encrypted column")
          case 2 => i64(t) // file_offset
          case _ => skip(t)
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0x4L, "ColumnChunk")
      if (!c.hasMeta) throw new Unsupported("column chunk without metadata")
      c
    }

    private def columnMetaData(c: Chunk): Unit = {
      // a repeated field replaces the earlier value, as in Thrift: start from nothing
      c.hasMeta = true
      c.encodings = Array.emptyIntArray
      c.dictionaryPageOffset = 0L
      c.hasNullCount = false
      c.minMaxLengths = 0L
      c.pageEncodingStats = null
      c.bloomOffset = -1L
      c.bloomLength = -1
      c.hasSizeStats = false
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => c.primitive = i32(t)
          case 2 =>
            val n = list(t, I32)
            c.encodings = new Array[Int](n)
            var i = 0
            while (i < n) { c.encodings(i) = zigzag().toInt; i += 1 }
          case 3 =>
            val n = list(t, Binary)
            c.path = new Array[String](n)
            var i = 0
            while (i < n) { c.path(i) = string(Binary); i += 1 }
          case 4 => c.codec = i32(t)
          case 5 => c.numValues = i64(t)
          case 6 => c.uncompressed = i64(t)
          case 7 => c.compressed = i64(t)
          case 9 => c.dataPageOffset = i64(t)
          case 11 => c.dictionaryPageOffset = i64(t)
          case 12 => expect(t, Struct); statistics(c)
          case 13 =>
            val n = list(t, Struct)
            c.pageEncodingStats = new Array[Long](n * 3)
            var i = 0
            while (i < n) { pageEncodingStats(c.pageEncodingStats, i * 3); i += 1 }
          case 14 => c.bloomOffset = i64(t)
          case 15 => c.bloomLength = i32(t)
          case 16 => expect(t, Struct); sizeStatistics(c)
          case _ => skip(t) // 8: key_value_metadata, 10: index_page_offset, 17: geospatial statistics
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0x2FEL, "ColumnMetaData")
      if (c.path == null || c.primitive < 0 || c.primitive >= PrimitiveTypes.length || c.codec < 0)
        throw new Unsupported("incomplete column metadata")
    }

    private def statistics(c: Chunk): Unit = {
      c.hasNullCount = false
      c.minMaxLengths = 0L
      var last = 0
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 3 => c.nullCount = i64(t); c.hasNullCount = true
          case id @ (1 | 2 | 5 | 6) =>
            val n = binaryLength(t)
            pos += n
            val shift = (if (id < 3) id - 1 else id - 3) * 16
            c.minMaxLengths = (c.minMaxLengths & ~(0xFFFFL << shift)) | (math.min(n + 1, 0xFFFF).toLong << shift)
          case _ => skip(t)
        }
        last = h >>> 8
        h = field(last)
      }
    }

    private def pageEncodingStats(into: Array[Long], at: Int): Unit = {
      var pageType = -1L
      var encoding = -1L
      var count = 0L
      var last = 0
      var seen = 0L
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => pageType = i32(t)
          case 2 => encoding = i32(t)
          case 3 => count = i32(t)
          case _ => skip(t)
        }
        seen |= bit(h)
        last = h >>> 8
        h = field(last)
      }
      required(seen, 0xEL, "PageEncodingStats")
      if (pageType < 0 || encoding < 0) throw new Unsupported("page encoding stats")
      into(at) = pageType
      into(at + 1) = encoding
      into(at + 2) = count
    }

    private def sizeStatistics(c: Chunk): Unit = {
      c.hasSizeStats = true
      c.unencodedBytes = 0L
      c.repetitionHistogram = null
      c.definitionHistogram = null
      var last = 0
      var h = field(last)
      while (h >= 0) {
        val t = h & 0xFF
        (h >>> 8) match {
          case 1 => c.unencodedBytes = i64(t)
          case 2 => c.repetitionHistogram = longList(t)
          case 3 => c.definitionHistogram = longList(t)
          case _ => skip(t)
        }
        last = h >>> 8
        h = field(last)
      }
    }

    private def longList(t: Int): java.util.List[java.lang.Long] = {
      val n = list(t, I64)
      val out = new java.util.ArrayList[java.lang.Long](n)
      var i = 0
      while (i < n) { out.add(java.lang.Long.valueOf(zigzag())); i += 1 }
      out
    }
  }

  // ------------------------------------------------------------------ to parquet-mr's objects

  private def toParquetMetadata(m: FileMeta): ParquetMetadata = {
    if (m.schema.isEmpty) throw new Unsupported("no schema")
    val schema = messageType(m)
    val blocks = new java.util.ArrayList[BlockMetaData](m.rowGroups.size)
    var rowIndex = 0L
    var g = 0
    while (g < m.rowGroups.size) {
      val rg = m.rowGroups.get(g)
      val block = new BlockMetaData
      block.setRowCount(rg.numRows)
      block.setTotalByteSize(rg.totalByteSize)
      block.setRowIndexOffset(rowIndex)
      rowIndex += rg.numRows
      if (rg.hasOrdinal) block.setOrdinal(rg.ordinal)
      if (rg.columns.isEmpty) throw new Unsupported("row group without columns")
      val filePath = rg.columns.get(0).filePath
      var i = 0
      while (i < rg.columns.size) {
        val c = rg.columns.get(i)
        if (filePath != c.filePath) throw new Unsupported("column chunks in several files")
        block.addColumn(columnChunk(c, schema, rg.ordinal))
        i += 1
      }
      block.setPath(filePath)
      blocks.add(block)
      g += 1
    }
    new ParquetMetadata(new FileMetaData(schema, m.keyValues, m.createdBy, FileMetaData.EncryptionType.UNENCRYPTED, null),
      blocks)
  }

  private def columnChunk(c: Chunk, schema: MessageType, rowGroupOrdinal: Int): ColumnChunkMetaData = {
    val path = ColumnPath.get(c.path: _*)
    val tpe = schema.getType(c.path: _*).asPrimitiveType()
    val encodings = new java.util.HashSet[Encoding]()
    var i = 0
    while (i < c.encodings.length) { encodings.add(enumValue(Encodings, c.encodings(i), "encoding")); i += 1 }
    // min / max are not kept, but parquet-mr fails on a fixed-width value of the wrong size: leave those to it
    val width = tpe.getPrimitiveTypeName match {
      case PrimitiveTypeName.BOOLEAN => 1
      case PrimitiveTypeName.INT32 | PrimitiveTypeName.FLOAT => 4
      case PrimitiveTypeName.INT64 | PrimitiveTypeName.DOUBLE => 8
      case PrimitiveTypeName.INT96 => 12
      case _ => -1
    }
    if (width > 0) {
      var k = 0
      while (k < 4) {
        val n = ((c.minMaxLengths >>> (k * 16)) & 0xFFFF).toInt
        if (n != 0 && n - 1 != width) throw new Unsupported(s"statistics value of ${n - 1} bytes for $tpe")
        k += 1
      }
    }
    val stats: Statistics[_] = {
      val b = Statistics.getBuilderForReading(tpe)
      if (c.hasNullCount) b.withNumNulls(c.nullCount)
      b.build()
    }
    val size = if (!c.hasSizeStats) null
      else new SizeStatistics(tpe, c.unencodedBytes, c.repetitionHistogram, c.definitionHistogram)
    val chunk = ColumnChunkMetaData.get(path, tpe, enumValue(Codecs, c.codec, "codec"), encodingStats(c.pageEncodingStats),
      java.util.Collections.unmodifiableSet(encodings), stats, c.dataPageOffset, c.dictionaryPageOffset, c.numValues,
      c.compressed, c.uncompressed, size)
    chunk.setRowGroupOrdinal(rowGroupOrdinal)
    if (c.bloomOffset >= 0) chunk.setBloomFilterOffset(c.bloomOffset)
    if (c.bloomLength >= 0) chunk.setBloomFilterLength(c.bloomLength)
    if (c.hasColumnIndex == 3) chunk.setColumnIndexReference(new IndexReference(c.columnIndexOffset, c.columnIndexLength))
    if (c.hasOffsetIndex == 3) chunk.setOffsetIndexReference(new IndexReference(c.offsetIndexOffset, c.offsetIndexLength))
    chunk
  }

  private def encodingStats(triples: Array[Long]): EncodingStats =
    if (triples == null) null
    else {
      val b = new EncodingStats.Builder()
      var i = 0
      while (i < triples.length) {
        val encoding = enumValue(Encodings, triples(i + 1).toInt, "encoding")
        triples(i).toInt match {
          case 3 => b.withV2Pages(); b.addDataEncoding(encoding, triples(i + 2).toInt) // DATA_PAGE_V2
          case 0 => b.addDataEncoding(encoding, triples(i + 2).toInt) // DATA_PAGE
          case 2 => b.addDictEncoding(encoding, triples(i + 2).toInt) // DICTIONARY_PAGE
          case 1 => // INDEX_PAGE
          case other => throw new Unsupported(s"page type $other")
        }
        i += 3
      }
      b.build()
    }

  // The schema: the depth-first list of elements, built with the converter's builder calls.

  private def messageType(m: FileMeta): MessageType = {
    val root = m.schema.get(0)
    val next = new Array[Int](1)
    next(0) = 1
    val fields = children(m, root.numChildren, next, 0)
    val b = Types.buildMessage()
    (if (root.hasFieldId) b.id(root.fieldId) else b).addFields(fields: _*).named(root.name)
  }

  /**
   * `count` elements from `next(0)` on (and their descendants). `columnCount` is the index into
   * the file's column orders the converter uses for the first of them (it counts one per child at
   * each level, which is what matters: the result must be the converter's).
   */
  private def children(m: FileMeta, count: Int, next: Array[Int], columnCount: Int): Array[Type] = {
    val out = new Array[Type](count)
    var columns = columnCount
    var i = 0
    while (i < count) {
      if (next(0) >= m.schema.size) throw new Unsupported("schema ends early")
      val e = m.schema.get(next(0))
      next(0) += 1
      if (e.repetition < 0) throw new Unsupported(s"no repetition for ${e.name}")
      val repetition = enumValue(Repetitions, e.repetition, "repetition")
      val original = if (e.converted >= 0) enumValue(ConvertedTypes, e.converted, "converted type") else null
      // the converter applies the converted type when it differs from the logical type's
      val asOriginal = original != null && (e.logical == null || e.logical.toOriginalType != original)
      out(i) =
        if (e.primitive >= 0) {
          var b = Types.primitive(enumValue(PrimitiveTypes, e.primitive, "type"), repetition)
          if (e.hasTypeLength) b = b.length(e.typeLength)
          if (e.hasPrecision) b = b.precision(e.precision)
          if (e.hasScale) b = b.scale(e.scale)
          if (m.columnOrders != null) {
            if (columns >= m.columnOrders.length) throw new Unsupported("column orders")
            val typeDefined = m.columnOrders(columns) &&
              !(e.primitive == 3 /* INT96 */ || original == OriginalType.INTERVAL)
            b = b.columnOrder(if (typeDefined) ColumnOrder.typeDefined() else ColumnOrder.undefined())
          }
          if (e.logical != null) b = b.as(e.logical)
          if (asOriginal) b = b.as(original)
          if (e.hasFieldId) b = b.id(e.fieldId)
          b.named(e.name)
        } else {
          val fields = children(m, e.numChildren, next, columns)
          var b = Types.buildGroup(repetition)
          b = b.addFields(fields: _*)
          if (e.logical != null) b = b.as(e.logical)
          if (asOriginal) b = b.as(original)
          if (e.hasFieldId) b = b.id(e.fieldId)
          b.named(e.name)
        }
      columns += 1
      i += 1
    }
    out
  }
}
