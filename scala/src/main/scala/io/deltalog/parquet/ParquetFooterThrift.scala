package io.deltalog.parquet

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.parquet.schema.LogicalTypeAnnotation
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit

/**
 * The Thrift compact encoding of a Parquet `FileMetaData` (parquet.thrift), decoded for
 * [[ParquetFooter]] into plain records of the fields it uses ([[ParquetFooterThrift.FileMeta]]).
 *
 * It follows Thrift's generated readers where they are lenient -- unknown fields are skipped, a
 * repeated field replaces the earlier value, a union reads one field and then one more field
 * header whatever it is -- and where they are strict: a struct without one of its required fields
 * is rejected, and so is a field header of an unknown type. Whatever it does not handle (an
 * encrypted file, an unknown logical type, a known field of an unexpected type, an empty union,
 * bytes that run out) throws [[ParquetFooterThrift.Unsupported]], and parquet-mr decodes the footer.
 */
private[deltalog] object ParquetFooterThrift {
  /** Something this decoder leaves to parquet-mr. */
  final class Unsupported(what: String) extends RuntimeException(what, null, false, false)


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
  /** [[Reader]]'s field header at a struct's end (no real header encodes to it). */
  private final val End = Int.MinValue

  // ------------------------------------------------------------------ decoded structs

  final class SchemaElement {
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

  final class Chunk {
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

  final class RowGroup {
    val columns = new java.util.ArrayList[Chunk]()
    var totalByteSize: Long = 0L
    var numRows: Long = 0L
    var ordinal: Int = 0
    var hasOrdinal = false
  }

  final class FileMeta {
    val schema = new java.util.ArrayList[SchemaElement]()
    val rowGroups = new java.util.ArrayList[RowGroup]()
    var keyValues: java.util.HashMap[String, String] = new java.util.HashMap[String, String]()
    var createdBy: String = _
    var columnOrders: Array[Boolean] = _ // per leaf: type-defined order; null when the file has none
  }

  /**
   * A data, dictionary or index page's `PageHeader`: the fields deltalog's page readers use (the
   * header of the page's type, when present, sets its flag; statistics and CRC are skipped).
   */
  final class PageHeader {
    var pageType: Int = -1 // 0 data, 1 index, 2 dictionary, 3 data V2
    var uncompressedSize: Int = 0
    var compressedSize: Int = 0
    var hasDataHeader = false
    var hasDictionaryHeader = false
    var hasDataV2Header = false
    var numValues: Int = 0
    var encoding: Int = -1
    var definitionEncoding: Int = -1
    var repetitionEncoding: Int = -1
    var numNulls: Int = 0
    var numRows: Int = 0
    var definitionLength: Int = 0
    var repetitionLength: Int = 0
    var isCompressed = true
  }

  object PageHeader {
    final val DataPage = 0
    final val DictionaryPage = 2
    final val DataPageV2 = 3
  }

  /**
   * The page header at absolute position `pos` of `buf` and its length in bytes; the header must
   * end before `end`. A header deltalog cannot read (truncated, a type it does not know, a required
   * field missing) is an IllegalStateException naming the position.
   */
  def readPageHeader(buf: java.nio.ByteBuffer, pos: Int, end: Int): (PageHeader, Int) = {
    val available = end - pos
    var window = math.min(available, 256)
    while (true) {
      val bytes = new Array[Byte](math.max(window, 0))
      buf.get(pos, bytes)
      val r = new Reader(bytes)
      try return (r.pageHeader(), r.position)
      catch {
        // (a length or size past the window's end reads as Unsupported: retry with more bytes)
        case _: ArrayIndexOutOfBoundsException | _: Unsupported if window < available => window = math.min(available, window * 8)
        case e @ (_: ArrayIndexOutOfBoundsException | _: Unsupported) =>
          throw new IllegalStateException(s"unreadable page header at $pos (${e.getMessage})")
      }
    }
    throw new IllegalStateException("unreachable")
  }

  // ------------------------------------------------------------------ Thrift compact reader

  /** Reads the Thrift compact encoding of a `FileMetaData` from `buf`. */
  final class Reader(buf: Array[Byte]) {
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

    /**
     * The next field header of a struct whose last field id was `last`: `id << 8 | type` (the id is
     * `h >> 8`, an i16 that may be negative), or [[End]] at the struct's end.
     */
    private def field(last: Int): Int = {
      val b = byte() & 0xFF
      if (b == 0) End
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
      if (h == End) throw new Unsupported("empty union")
      h
    }
    private def unionEnd(h: Int): Unit = field(h >> 8)

    /** What a struct does with each of its fields: reads the value of field `id` (of type `t`) or skips it. */
    private abstract class Fields { def apply(id: Int, t: Int): Unit }

    /**
     * Reads one struct, handing each field to `fields`; Thrift rejects a struct without one of its
     * required fields (`required`: a bit per field id), and so does this decoder.
     */
    private def struct(required: Long, what: String, fields: Fields): Unit = {
      var seen = 0L
      var h = field(0)
      while (h != End) {
        val id = h >> 8
        fields(id, h & 0xFF)
        if (id >= 0 && id < 64) seen |= 1L << id
        h = field(id)
      }
      if ((seen & required) != required) throw new Unsupported(s"$what without a required field")
    }

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

    private def skipStruct(): Unit = struct(0L, "struct", Skip)
    private object Skip extends Fields { def apply(id: Int, t: Int): Unit = skip(t) }

    /** Bytes read so far. */
    def position: Int = pos

    def pageHeader(): PageHeader = {
      val h = new PageHeader
      struct(0xEL, "PageHeader", new Fields { // required: 1 type, 2 uncompressed_page_size, 3 compressed_page_size
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => h.pageType = i32(t)
          case 2 => h.uncompressedSize = i32(t)
          case 3 => h.compressedSize = i32(t)
          case 5 =>
            expect(t, Struct)
            struct(0x1EL, "DataPageHeader", new Fields { // required: 1 num_values, 2-4 encodings
              def apply(id: Int, t: Int): Unit = id match {
                case 1 => h.numValues = i32(t)
                case 2 => h.encoding = i32(t)
                case 3 => h.definitionEncoding = i32(t)
                case 4 => h.repetitionEncoding = i32(t)
                case _ => skip(t) // 5: statistics
              }
            })
            h.hasDataHeader = true
          case 7 =>
            expect(t, Struct)
            struct(0x6L, "DictionaryPageHeader", new Fields { // required: 1 num_values, 2 encoding
              def apply(id: Int, t: Int): Unit = id match {
                case 1 => h.numValues = i32(t)
                case 2 => h.encoding = i32(t)
                case _ => skip(t) // 3: is_sorted
              }
            })
            h.hasDictionaryHeader = true
          case 8 =>
            expect(t, Struct)
            struct(0x7EL, "DataPageHeaderV2", new Fields { // required: 1-6
              def apply(id: Int, t: Int): Unit = id match {
                case 1 => h.numValues = i32(t)
                case 2 => h.numNulls = i32(t)
                case 3 => h.numRows = i32(t)
                case 4 => h.encoding = i32(t)
                case 5 => h.definitionLength = i32(t)
                case 6 => h.repetitionLength = i32(t)
                case 7 => h.isCompressed = bool(t)
                case _ => skip(t) // 8: statistics
              }
            })
            h.hasDataV2Header = true
          case _ => skip(t) // 4: crc, 6: index page header
        }
      })
      h
    }

    def fileMetaData(): FileMeta = {
      val m = new FileMeta
      struct(0x1EL, "FileMetaData", new Fields { // required: 1 version, 2 schema, 3 num_rows, 4 row_groups
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => i32(t)
          case 2 => m.schema.clear(); var n = list(t, Struct); while (n > 0) { m.schema.add(schemaElement()); n -= 1 }
          case 3 => i64(t) // (the row groups count their own rows)
          case 4 => m.rowGroups.clear(); var n = list(t, Struct); while (n > 0) { m.rowGroups.add(rowGroup()); n -= 1 }
          case 5 => m.keyValues.clear(); var n = list(t, Struct); while (n > 0) { keyValue(m.keyValues); n -= 1 }
          case 6 => m.createdBy = string(t)
          case 7 =>
            val n = list(t, Struct)
            m.columnOrders = new Array[Boolean](n)
            var i = 0
            while (i < n) { m.columnOrders(i) = columnOrder(); i += 1 }
          case 8 | 9 => throw new Unsupported("encrypted file")
          case _ => skip(t)
        }
      })
      m
    }

    private def keyValue(into: java.util.HashMap[String, String]): Unit = {
      var key: String = null
      var value: String = null
      struct(0x2L, "KeyValue", new Fields { // required: 1 key
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => key = string(t)
          case 2 => value = string(t)
          case _ => skip(t)
        }
      })
      into.put(key, value)
    }

    /** A `ColumnOrder` union: true for `TYPE_ORDER`. */
    private def columnOrder(): Boolean = {
      val h = unionField()
      val typeOrder = (h >> 8) == 1 && (h & 0xFF) == Struct
      skip(h & 0xFF)
      unionEnd(h)
      typeOrder
    }

    private def schemaElement(): SchemaElement = {
      val e = new SchemaElement
      struct(0x10L, "SchemaElement", new Fields { // required: 4 name
        def apply(id: Int, t: Int): Unit = id match {
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
      })
      e
    }

    /** A `LogicalType` union, as the converter maps it. */
    private def logicalType(): LogicalTypeAnnotation = {
      val h = unionField()
      expect(h & 0xFF, Struct)
      val out = (h >> 8) match {
        case 1 => skipStruct(); LogicalTypeAnnotation.stringType()
        case 2 => skipStruct(); LogicalTypeAnnotation.mapType()
        case 3 => skipStruct(); LogicalTypeAnnotation.listType()
        case 4 => skipStruct(); LogicalTypeAnnotation.enumType()
        case 5 =>
          var scale = 0
          var precision = 0
          struct(0x6L, "DecimalType", new Fields { // required: 1 scale, 2 precision
            def apply(id: Int, t: Int): Unit = id match {
              case 1 => scale = i32(t)
              case 2 => precision = i32(t)
              case _ => skip(t)
            }
          })
          LogicalTypeAnnotation.decimalType(scale, precision)
        case 6 => skipStruct(); LogicalTypeAnnotation.dateType()
        case 7 => val (utc, unit) = timeType(); LogicalTypeAnnotation.timeType(utc, unit)
        case 8 => val (utc, unit) = timeType(); LogicalTypeAnnotation.timestampType(utc, unit)
        case 10 =>
          var bits = 0
          var signed = false
          struct(0x6L, "IntType", new Fields { // required: 1 bitWidth, 2 isSigned
            def apply(id: Int, t: Int): Unit = id match {
              case 1 => expect(t, I8); bits = byte()
              case 2 => signed = bool(t)
              case _ => skip(t)
            }
          })
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
      struct(0x6L, "TimeType", new Fields { // required: 1 isAdjustedToUTC, 2 unit
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => utc = bool(t)
          case 2 =>
            expect(t, Struct)
            val f = unionField()
            expect(f & 0xFF, Struct)
            unit = (f >> 8) match {
              case 1 => TimeUnit.MILLIS
              case 2 => TimeUnit.MICROS
              case 3 => TimeUnit.NANOS
              case other => throw new Unsupported(s"time unit $other")
            }
            skipStruct()
            unionEnd(f)
          case _ => skip(t)
        }
      })
      (utc, unit)
    }

    private def rowGroup(): RowGroup = {
      val g = new RowGroup
      struct(0xEL, "RowGroup", new Fields { // required: 1 columns, 2 total_byte_size, 3 num_rows
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => g.columns.clear(); var n = list(t, Struct); while (n > 0) { g.columns.add(columnChunk()); n -= 1 }
          case 2 => g.totalByteSize = i64(t)
          case 3 => g.numRows = i64(t)
          case 7 => expect(t, I16); g.ordinal = zigzag().toShort; g.hasOrdinal = true
          case _ => skip(t) // 4: sorting_columns, 5: file_offset, 6: total_compressed_size
        }
      })
      g
    }

    private def columnChunk(): Chunk = {
      val c = new Chunk
      struct(0x4L, "ColumnChunk", new Fields { // required: 2 file_offset
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => c.filePath = string(t)
          case 2 => i64(t)
          case 3 => expect(t, Struct); columnMetaData(c)
          case 4 => c.offsetIndexOffset = i64(t); c.hasOffsetIndex |= 1
          case 5 => c.offsetIndexLength = i32(t); c.hasOffsetIndex |= 2
          case 6 => c.columnIndexOffset = i64(t); c.hasColumnIndex |= 1
          case 7 => c.columnIndexLength = i32(t); c.hasColumnIndex |= 2
          case 8 | 9 => throw new Unsupported("encrypted column")
          case _ => skip(t)
        }
      })
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
      // required: 1 type, 2 encodings, 3 path_in_schema, 4 codec, 5 num_values, 6/7 sizes, 9 data_page_offset
      struct(0x2FEL, "ColumnMetaData", new Fields {
        def apply(id: Int, t: Int): Unit = id match {
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
      })
      if (c.primitive < 0 || c.primitive > 7 /* FIXED_LEN_BYTE_ARRAY */ || c.codec < 0)
        throw new Unsupported("unknown type or codec")
    }

    private def statistics(c: Chunk): Unit = {
      c.hasNullCount = false
      c.minMaxLengths = 0L
      struct(0L, "Statistics", new Fields {
        def apply(id: Int, t: Int): Unit = id match {
          case 3 => c.nullCount = i64(t); c.hasNullCount = true
          case 1 | 2 | 5 | 6 => // max, min, max_value, min_value: only their sizes are kept
            val n = binaryLength(t)
            pos += n
            val shift = (if (id < 3) id - 1 else id - 3) * 16
            c.minMaxLengths = (c.minMaxLengths & ~(0xFFFFL << shift)) | (math.min(n + 1, 0xFFFF).toLong << shift)
          case _ => skip(t)
        }
      })
    }

    private def pageEncodingStats(into: Array[Long], at: Int): Unit = {
      into(at) = -1L
      into(at + 1) = -1L
      into(at + 2) = 0L
      struct(0xEL, "PageEncodingStats", new Fields { // required: 1 page_type, 2 encoding, 3 count
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => into(at) = i32(t)
          case 2 => into(at + 1) = i32(t)
          case 3 => into(at + 2) = i32(t)
          case _ => skip(t)
        }
      })
      if (into(at) < 0 || into(at + 1) < 0) throw new Unsupported("page encoding stats")
    }

    private def sizeStatistics(c: Chunk): Unit = {
      c.hasSizeStats = true
      c.unencodedBytes = 0L
      c.repetitionHistogram = null
      c.definitionHistogram = null
      struct(0L, "SizeStatistics", new Fields {
        def apply(id: Int, t: Int): Unit = id match {
          case 1 => c.unencodedBytes = i64(t)
          case 2 => c.repetitionHistogram = longList(t)
          case 3 => c.definitionHistogram = longList(t)
          case _ => skip(t)
        }
      })
    }

    private def longList(t: Int): java.util.List[java.lang.Long] = {
      val n = list(t, I64)
      val out = new java.util.ArrayList[java.lang.Long](n)
      var i = 0
      while (i < n) { out.add(java.lang.Long.valueOf(zigzag())); i += 1 }
      out
    }
  }
}
