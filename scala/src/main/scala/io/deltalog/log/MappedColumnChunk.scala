package io.deltalog.log

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.FileChannel
import java.nio.file.{Path => NioPath, StandardOpenOption}

import org.apache.parquet.bytes.{ByteBufferInputStream, BytesInput}
import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DataPageV2, DictionaryPage, PageReader}
import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.format.{PageType, Util}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}

/**
 * The pages of one uncompressed column chunk of a local Parquet file, served straight from a
 * read-only memory map of the file: no copy of the chunk into heap buffers (parquet-mr's
 * `readRowGroup` reads a whole chunk into freshly allocated buffers first). Used for a
 * checkpoint's `add.stats`, most of its bytes. Compressed chunks are not handled here.
 */
private[log] object MappedColumnChunk {
  /** Column chunks served so far (tests, diagnostics). */
  val chunksServed = new java.util.concurrent.atomic.AtomicLong()

  /** True when [[pageReader]] can serve `chunk`. */
  def applies(chunk: ColumnChunkMetaData): Boolean =
    chunk.getCodec == CompressionCodecName.UNCOMPRESSED && !chunk.isEncrypted &&
      chunk.getStartingPos >= 0 && chunk.getTotalSize > 0 && chunk.getTotalSize < Int.MaxValue

  /** The pages of `chunk` (a column chunk of `file`, see [[applies]]). */
  def pageReader(file: NioPath, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor): PageReader = {
    val ch = FileChannel.open(file, StandardOpenOption.READ)
    val map = try ch.map(FileChannel.MapMode.READ_ONLY, chunk.getStartingPos, chunk.getTotalSize)
      finally ch.close()
    chunksServed.incrementAndGet()
    new Pages(map.order(ByteOrder.LITTLE_ENDIAN), chunk, descriptor)
  }

  private final class Pages(map: ByteBuffer, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor)
    extends PageReader {
    private var pos = 0
    private var dictionary: DictionaryPage = _
    private var dictionaryRead = false
    private var pending: DataPage = _

    private def corrupt(what: String): Nothing =
      throw new IllegalStateException(s"$what in column chunk ${chunk.getPath} at ${chunk.getStartingPos + pos}")

    private def encoding(e: org.apache.parquet.format.Encoding): Encoding = Encoding.valueOf(e.name())

    private def slice(from: Int, len: Int): ByteBuffer = {
      if (len < 0 || from.toLong + len > map.limit()) corrupt("page extends past the chunk")
      map.slice(from, len).order(ByteOrder.LITTLE_ENDIAN)
    }

    /** The next dictionary or data page, or null at the end (index pages are skipped). */
    private def next(): AnyRef = {
      while (pos < map.limit()) {
        val in = ByteBufferInputStream.wrap(map.slice(pos, map.limit() - pos))
        val header = try Util.readPageHeader(in) catch { case e: java.io.IOException => corrupt(s"bad page header ($e)") }
        val start = pos + in.position().toInt
        val size = header.getCompressed_page_size
        val body = slice(start, size)
        pos = start + size
        if (header.getUncompressed_page_size != size) corrupt("compressed page in an uncompressed chunk")
        header.getType match {
          case PageType.DICTIONARY_PAGE =>
            val h = header.getDictionary_page_header
            return new DictionaryPage(BytesInput.from(body), h.getNum_values, encoding(h.getEncoding))
          case PageType.DATA_PAGE =>
            val h = header.getData_page_header
            return new DataPageV1(BytesInput.from(body), h.getNum_values, size,
              Statistics.createStats(descriptor.getPrimitiveType), encoding(h.getRepetition_level_encoding),
              encoding(h.getDefinition_level_encoding), encoding(h.getEncoding))
          case PageType.DATA_PAGE_V2 =>
            val h = header.getData_page_header_v2
            val rl = h.getRepetition_levels_byte_length
            val dl = h.getDefinition_levels_byte_length
            if (rl < 0 || dl < 0 || rl + dl > size) corrupt("bad level lengths")
            return DataPageV2.uncompressed(h.getNum_rows, h.getNum_nulls, h.getNum_values,
              BytesInput.from(slice(start, rl)), BytesInput.from(slice(start + rl, dl)), encoding(h.getEncoding),
              BytesInput.from(slice(start + rl + dl, size - rl - dl)), Statistics.createStats(descriptor.getPrimitiveType))
          case _ => // index pages: skipped
        }
      }
      null
    }

    override def readDictionaryPage(): DictionaryPage = {
      if (!dictionaryRead) {
        dictionaryRead = true
        next() match {
          case d: DictionaryPage => dictionary = d
          case p: DataPage => pending = p
          case _ =>
        }
      }
      dictionary
    }

    override def getTotalValueCount: Long = chunk.getValueCount

    override def readPage(): DataPage = {
      if (!dictionaryRead) readDictionaryPage()
      if (pending != null) { val p = pending; pending = null; return p }
      next() match {
        case p: DataPage => p
        case _: DictionaryPage => corrupt("a second dictionary page")
        case _ => null
      }
    }
  }
}
