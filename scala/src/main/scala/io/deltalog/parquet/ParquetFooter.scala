package io.deltalog.parquet

import java.nio.ByteBuffer

import scala.util.control.NonFatal

import org.apache.parquet.column.{Encoding, EncodingStats}
import org.apache.parquet.column.statistics.{SizeStatistics, Statistics}
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, ColumnPath, CompressionCodecName,
  FileMetaData, ParquetMetadata}
import org.apache.parquet.internal.hadoop.metadata.IndexReference
import org.apache.parquet.schema.{ColumnOrder, MessageType, OriginalType, Type, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import io.deltalog.parquet.ParquetFooterThrift.{Chunk, FileMeta, Reader, Unsupported}


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
 * takes parquet-mr's way, which reads the file or reports what is wrong with it. The Thrift
 * decoding itself is [[ParquetFooterThrift]].
 */
private[deltalog] object ParquetFooter {
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

  /** parquet-mr's encoding of a Thrift `Encoding` id (of a page header); IllegalStateException when unknown. */
  def encoding(id: Int): Encoding =
    if (id >= 0 && id < Encodings.length && Encodings(id) != null) Encodings(id)
    else throw new IllegalStateException(s"unknown encoding $id")

  private def enumValue[T <: AnyRef](values: Array[T], v: Int, what: String): T = {
    val out = if (v >= 0 && v < values.length) values(v) else null.asInstanceOf[T]
    if (out == null) throw new Unsupported(s"$what $v")
    out
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
