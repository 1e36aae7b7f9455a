package io.deltalog.parquet

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Path => NioPath}

import org.apache.parquet.bytes.BytesInput
import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.page.{DataPage, DataPageV1, DataPageV2, DictionaryPage, PageReadStore, PageReader}
import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.schema.MessageType

import io.deltalog.parquet.ParquetFooterThrift.PageHeader

/**
 * The pages of one uncompressed column chunk of a local Parquet file, served straight from a
 * read-only memory map of the file ([[MappedFiles]]): no copy of the chunk into heap buffers (parquet-mr's
 * `readRowGroup` reads a whole chunk into freshly allocated buffers first). Used for a
 * checkpoint's `add.stats`, most of its bytes. Compressed chunks are not handled here.
 */
private[deltalog] object MappedColumnChunk {
  /** Column chunks served so far (tests, diagnostics). */
  val chunksServed = new java.util.concurrent.atomic.AtomicLong()
  /** Row groups served whole by [[rowGroup]] so far (tests, diagnostics). */
  val rowGroupsServed = new java.util.concurrent.atomic.AtomicLong()

  /** True when [[pageReader]] can serve `chunk`. */
  def applies(chunk: ColumnChunkMetaData): Boolean =
    chunk.getCodec == CompressionCodecName.UNCOMPRESSED && !chunk.isEncrypted &&
      chunk.getStartingPos >= 0 && chunk.getTotalSize > 0 && chunk.getTotalSize < Int.MaxValue

  /**
   * The pages of `chunk` (a column chunk of `file`, see [[applies]]), or None when its page
   * headers do not add up (sizes past the chunk, value counts that differ from the footer's): the
   * caller then reads it with parquet-mr, which knows the quirks of old writers.
   */
  def pageReader(file: NioPath, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor): Option[PageReader] = {
    val map = MappedFiles(file) match {
      case Some(m) if chunk.getStartingPos + chunk.getTotalSize <= m.map.capacity() =>
        m.map.slice(chunk.getStartingPos.toInt, chunk.getTotalSize.toInt)
      case _ => // past the end of the file: an empty map (the scan below rejects the chunk)
        java.nio.ByteBuffer.allocate(0)
    }
    val pages = try Some(scan(map.order(ByteOrder.LITTLE_ENDIAN), chunk, descriptor))
      catch { case _: IllegalStateException | _: IllegalArgumentException | _: java.io.IOException => None }
    pages.filter(p => p.values == chunk.getValueCount).map { p => chunksServed.incrementAndGet(); p }
  }

  /**
   * The pages of every column of `schema` in row group `block` of `file`, or None when one of its
   * chunks cannot be served from the map ([[applies]], [[pageReader]]): then parquet-mr reads the
   * row group (which copies each chunk into heap buffers first).
   */
  def rowGroup(file: NioPath, block: BlockMetaData, schema: MessageType): Option[PageReadStore] = {
    val chunks = new java.util.HashMap[java.util.List[String], ColumnChunkMetaData]()
    block.getColumns.forEach(c => chunks.put(java.util.Arrays.asList(c.getPath.toArray: _*), c))
    val readers = new java.util.HashMap[java.util.List[String], PageReader]()
    val it = schema.getColumns.iterator()
    while (it.hasNext) {
      val d = it.next()
      val key = java.util.Arrays.asList(d.getPath: _*)
      val chunk = chunks.get(key)
      if (chunk == null || !applies(chunk)) return None
      pageReader(file, chunk, d) match {
        case Some(r) => readers.put(key, r)
        case None => return None
      }
    }
    val rows = block.getRowCount
    rowGroupsServed.incrementAndGet()
    Some(new PageReadStore {
      override def getPageReader(d: ColumnDescriptor): PageReader = {
        val r = readers.get(java.util.Arrays.asList(d.getPath: _*))
        if (r == null) throw new IllegalArgumentException(s"column ${d.getPath.mkString(".")} was not requested")
        r
      }
      override def getRowCount: Long = rows
    })
  }

  /** Every page header of the chunk, checked against its bounds. */
  private def scan(map: ByteBuffer, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor): Pages = {
    val out = scala.collection.mutable.ArrayBuffer.empty[AnyRef]
    var values = 0L
    var pos = 0
    def corrupt(what: String): Nothing = throw new IllegalStateException(s"$what at ${chunk.getStartingPos + pos}")
    def slice(from: Int, len: Int): ByteBuffer = {
      if (len < 0 || from.toLong + len > map.limit()) corrupt("page extends past the chunk")
      map.slice(from, len).order(ByteOrder.LITTLE_ENDIAN)
    }
    while (pos < map.limit()) {
      val (header, headerLength) = ParquetFooterThrift.readPageHeader(map, pos, map.limit())
      val start = pos + headerLength
      val size = header.compressedSize
      val body = slice(start, size)
      if (header.uncompressedSize != size) corrupt("compressed page in an uncompressed chunk")
      header.pageType match {
        case PageHeader.DictionaryPage =>
          if (out.nonEmpty) corrupt("dictionary page after data pages")
          if (!header.hasDictionaryHeader) corrupt("page header without its type's header")
          out += new DictionaryPage(BytesInput.from(body), header.numValues, ParquetFooter.encoding(header.encoding))
        case PageHeader.DataPage =>
          if (!header.hasDataHeader) corrupt("page header without its type's header")
          values += header.numValues
          out += new DataPageV1(BytesInput.from(body), header.numValues, size,
            Statistics.createStats(descriptor.getPrimitiveType), ParquetFooter.encoding(header.repetitionEncoding),
            ParquetFooter.encoding(header.definitionEncoding), ParquetFooter.encoding(header.encoding))
        case PageHeader.DataPageV2 =>
          if (!header.hasDataV2Header) corrupt("page header without its type's header")
          val rl = header.repetitionLength
          val dl = header.definitionLength
          if (rl < 0 || dl < 0 || rl + dl > size) corrupt("bad level lengths")
          values += header.numValues
          out += DataPageV2.uncompressed(header.numRows, header.numNulls, header.numValues,
            BytesInput.from(slice(start, rl)), BytesInput.from(slice(start + rl, dl)), ParquetFooter.encoding(header.encoding),
            BytesInput.from(slice(start + rl + dl, size - rl - dl)), Statistics.createStats(descriptor.getPrimitiveType))
        case _ => // index pages: skipped
      }
      pos = start + size
    }
    new Pages(out.toIndexedSeq, values, chunk.getValueCount)
  }

  private final class Pages(pages: IndexedSeq[AnyRef], val values: Long, total: Long) extends PageReader {
    private var i = pages.headOption match { case Some(_: DictionaryPage) => 1; case _ => 0 }

    override def readDictionaryPage(): DictionaryPage = pages.headOption match {
      case Some(d: DictionaryPage) => d
      case _ => null
    }

    override def getTotalValueCount: Long = total

    override def readPage(): DataPage =
      if (i >= pages.size) null else { val p = pages(i).asInstanceOf[DataPage]; i += 1; p }
  }
}
