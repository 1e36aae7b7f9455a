package io.deltalog.parquet

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.parquet.bytes.{BytesInput, BytesUtils}
import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DictionaryPage, PageReadStore, PageReader}

/**
 * The pages of a row group read for a few rows (`ParquetFileReader.readFilteredRowGroup` with row
 * ranges), with each V1 data page cut so that it starts at `firstRow`: parquet-mr would otherwise
 * step through every earlier slot of the page, one level at a time, before the wanted rows. A
 * checkpoint's protocol and metaData rows sit at the end of columns that are null everywhere else
 * (delta-rs writes them last), in pages of up to 20,000 rows, for each of their ~20 leaves.
 *
 * A page is cut only when none of the slots before `firstRow` holds a value (so its values section
 * is unchanged) and its levels are RLE-encoded; the levels of the remaining slots are decoded
 * ([[HybridRle]]) and written again as RLE runs. Any other page is handed on as read. Pages are
 * read when a column's reader is requested (a filtered row group keeps one or two per column).
 */
private[deltalog] final class RowTrimmedPages(underlying: PageReadStore, firstRow: Long) extends PageReadStore {
  override def getPageReader(d: ColumnDescriptor): PageReader = {
    val r = underlying.getPageReader(d)
    val pages = Iterator.continually(r.readPage()).takeWhile(_ != null).map(RowTrimmedPages.cut(_, d, firstRow)).toVector
    new PageReader {
      private var i = 0
      override def readDictionaryPage(): DictionaryPage = r.readDictionaryPage()
      // Left as it was: the reader of a filtered row group (SynchronizingColumnReader) stops on its
      // row indexes, not on this count.
      override def getTotalValueCount: Long = r.getTotalValueCount
      override def readPage(): DataPage = if (i < pages.size) { i += 1; pages(i - 1) } else null
    }
  }

  override def getRowCount: Long = underlying.getRowCount
  override def getRowIndexes: java.util.Optional[java.util.PrimitiveIterator.OfLong] = underlying.getRowIndexes
}

private[deltalog] object RowTrimmedPages {
  /** Pages cut so far (tests, diagnostics). */
  val pagesCut = new java.util.concurrent.atomic.AtomicLong()

  /** `page` starting at row `firstRow`, or an equivalent of `page` (its bytes may be read only once). */
  def cut(page: DataPage, d: ColumnDescriptor, firstRow: Long): DataPage = page match {
    case p: DataPageV1 if p.getFirstRowIndex.isPresent && p.getIndexRowCount.isPresent &&
        firstRow > p.getFirstRowIndex.get && firstRow - p.getFirstRowIndex.get < p.getIndexRowCount.get &&
        (d.getMaxRepetitionLevel == 0 || p.getRlEncoding == Encoding.RLE) &&
        (d.getMaxDefinitionLevel == 0 || p.getDlEncoding == Encoding.RLE) =>
      val bytes = p.getBytes.toByteBuffer.order(ByteOrder.LITTLE_ENDIAN)
      try trimmed(p, bytes, d, firstRow).getOrElse(copy(p, bytes))
      catch { case _: IllegalStateException | _: IndexOutOfBoundsException => copy(p, bytes) }
    case other => other
  }

  /** `p` over its already-read `bytes`. */
  private def copy(p: DataPageV1, bytes: ByteBuffer): DataPage =
    new DataPageV1(BytesInput.from(bytes.duplicate()), p.getValueCount, p.getUncompressedSize,
      p.getFirstRowIndex.get, p.getIndexRowCount.get, p.getStatistics, p.getRlEncoding, p.getDlEncoding,
      p.getValueEncoding)

  private def trimmed(p: DataPageV1, bytes: ByteBuffer, d: ColumnDescriptor, firstRow: Long): Option[DataPage] = {
    val n = p.getValueCount
    var pos = bytes.position()
    val end = bytes.limit()
    /** The (start, end) of a level section (4-byte length, then runs), or null for max level 0. */
    def section(max: Int): (Int, Int) =
      if (max == 0) null
      else {
        val len = bytes.getInt(pos)
        if (len < 0 || pos + 4L + len > end) throw new IllegalStateException("bad level length")
        val sec = (pos + 4, pos + 4 + len)
        pos += 4 + len
        sec
      }
    val maxRl = d.getMaxRepetitionLevel
    val maxDl = d.getMaxDefinitionLevel
    val rlWidth = BytesUtils.getWidthFromMaxInt(maxRl)
    val dlWidth = BytesUtils.getWidthFromMaxInt(maxDl)
    val rl = section(maxRl)
    val dl = section(maxDl)
    // The levels are walked run by run: the slots before the wanted row are usually one long run
    // of nulls (tens of thousands of rows), which is never expanded.
    // The first slot of the wanted row: row k of the page starts at its k-th slot with level 0.
    val skipRows = firstRow - p.getFirstRowIndex.get
    val s =
      if (rl == null) (if (skipRows < n) skipRows.toInt else -1)
      else HybridRle.indexOfNth(bytes, rl._1, rl._2, rlWidth, n, 0, skipRows)
    if (s < 0) return None
    if (s > 0) {
      // a value before the wanted row: the values section would change
      if (dl == null) return None
      val firstValue = HybridRle.indexOfNth(bytes, dl._1, dl._2, dlWidth, n, maxDl, 0)
      if (firstValue >= 0 && firstValue < s) return None
    }
    val out = ByteBuffer.allocate(2 * (4 + 9 * (n - s)) + (end - pos)).order(ByteOrder.LITTLE_ENDIAN) // runs: 5-byte header, 4-byte value at most
    if (rl != null) rleFrom(out, bytes, rl, rlWidth, n, s)
    if (dl != null) rleFrom(out, bytes, dl, dlWidth, n, s)
    val values = bytes.duplicate()
    values.position(pos).limit(end)
    out.put(values)
    out.flip()
    pagesCut.incrementAndGet()
    Some(new DataPageV1(BytesInput.from(out), n - s, out.remaining(), firstRow,
      (p.getIndexRowCount.get - skipRows).toInt, p.getStatistics, Encoding.RLE, Encoding.RLE, p.getValueEncoding))
  }

  /** Levels `from until n` of a level section as a 4-byte length and RLE runs (equal neighbours merged). */
  private def rleFrom(out: ByteBuffer, bytes: ByteBuffer, section: (Int, Int), width: Int, n: Int, from: Int): Unit = {
    val lengthAt = out.position()
    out.putInt(0)
    val valueBytes = (width + 7) / 8
    def put(count: Int, value: Int): Unit = if (count > 0) {
      var header = count.toLong << 1 // an RLE run: ULEB128 of (count << 1)
      while (header >= 0x80) { out.put(((header & 0x7F) | 0x80).toByte); header >>>= 7 }
      out.put(header.toByte)
      var k = 0
      while (k < valueBytes) { out.put(((value >>> (8 * k)) & 0xFF).toByte); k += 1 }
    }
    var current = 0
    var length = 0
    HybridRle.foreachRun(bytes, section._1, section._2, width, n, new HybridRle.RunVisitor {
      def run(start: Int, len: Int, value: Int): Boolean = {
        val a = math.max(start, from)
        val b = start + len
        if (b > a) {
          if (length > 0 && value == current) length += b - a
          else { put(length, current); current = value; length = b - a }
        }
        true
      }
    })
    put(length, current)
    out.putInt(lengthAt, out.position() - lengthAt - 4)
  }
}
