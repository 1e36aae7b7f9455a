package io.deltalog.parquet

import java.io.{BufferedOutputStream, IOException, OutputStream}
import java.util.concurrent.{ExecutionException, ExecutorService, Future}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.apache.parquet.column.{ColumnDescriptor, Encoding, EncodingStats}
import org.apache.parquet.format.Util
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.ParquetFileWriter
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, ColumnPath, CompressionCodecName,
  FileMetaData, ParquetMetadata}
import org.apache.parquet.schema.MessageType

/**
 * A Parquet file written one column chunk at a time: `PAR1`, row groups whose column chunks are
 * data pages V1 (PLAIN values, RLE / bit-packed levels, SNAPPY), then the footer (schema, row
 * groups with column statistics and size statistics, built with parquet-mr's metadata
 * converter). No dictionary pages, page index or bloom filters.
 *
 * Usage per row group: [[startRowGroup]], then for every leaf column in schema order
 * [[column]] → fill the [[ColumnChunkWriter]] → [[endColumn]], then [[endRowGroup]]; finally
 * [[finish]]. Pages are compressed in the background by a [[PageCompressor]] (on `executor`, the
 * caller's threads; null: on the calling thread) and written to
 * `target` in file order by the calling thread, so at most [[ParquetPageFile.MaxPagesInFlight]]
 * pages are held in memory. `target` is not closed.
 */
private[deltalog] final class ParquetPageFile(
    target: OutputStream,
    schema: MessageType,
    keyValueMetadata: Map[String, String],
    executor: ExecutorService,
    pageSize: Int = ParquetPageFile.PageSize) extends PageSink {
  import ParquetPageFile._

  private val compressor = new PageCompressor(pageSize + ColumnChunkWriter.Reserve + 4096, executor)
  private val out = new BufferedOutputStream(target, 1 << 16)
  private var pos = 0L
  private val converter = new ParquetMetadataConverter()
  private val blocks = ArrayBuffer.empty[BlockMetaData]
  private var block: BlockMetaData = _
  private var blockRows = 0L
  /** Where a column chunk's pages went in the file. */
  private final class Placement { var firstPage = -1L; var compressedSize = 0L; var uncompressedSize = 0L }
  private val placements = new java.util.IdentityHashMap[ColumnChunkWriter, Placement]()

  private sealed trait Pending
  private final case class PendingPage(column: ColumnChunkWriter, compressed: Future[CompressedPage], numValues: Int)
    extends Pending
  private final case class PendingEnd(column: ColumnChunkWriter) extends Pending
  private val queue = new java.util.ArrayDeque[Pending]()
  private var pagesInFlight = 0

  private def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); pos += len }

  write(ParquetFileWriter.MAGIC, 0, ParquetFileWriter.MAGIC.length)

  def startRowGroup(rows: Long): Unit = {
    require(block == null, "row group already started")
    block = new BlockMetaData()
    blockRows = rows
  }

  /** The writer of the next column chunk of the current row group. */
  def column(descriptor: ColumnDescriptor): ColumnChunkWriter = {
    require(block != null, "no row group started")
    val w = new ColumnChunkWriter(descriptor, this, pageSize)
    placements.put(w, new Placement)
    w
  }

  def endColumn(w: ColumnChunkWriter): Unit = {
    w.finish()
    require(w.valueCount >= blockRows, s"column ${w.descriptor} has ${w.valueCount} values for $blockRows rows")
    queue.add(PendingEnd(w))
    drain(MaxPagesInFlight)
  }

  def endRowGroup(): Unit = {
    drain(0)
    val cols = block.getColumns.asScala
    require(cols.size == schema.getColumns.size, "a column chunk is missing")
    block.setRowCount(blockRows)
    block.setTotalByteSize(cols.map(_.getTotalUncompressedSize).sum)
    block.setOrdinal(blocks.size)
    blocks += block
    block = null
  }

  override def valuesBuffer(): Array[Byte] = compressor.valuesBuffer()

  override def page(column: ColumnChunkWriter, body: Array[Byte], from: Int, until: Int, numValues: Int): Unit = {
    queue.add(PendingPage(column, compressor.submit(body, from, until), numValues))
    pagesInFlight += 1
    drain(MaxPagesInFlight)
  }

  /** Writes finished pages in order, waiting for the oldest while more than `maxInFlight` are pending. */
  private def drain(maxInFlight: Int): Unit = {
    var go = true
    while (go && !queue.isEmpty) queue.peek() match {
      case p: PendingPage =>
        if (pagesInFlight > maxInFlight || p.compressed.isDone) {
          queue.poll()
          pagesInFlight -= 1
          writePage(p.column, await(p.compressed), p.numValues)
        } else go = false
      case PendingEnd(w) =>
        queue.poll()
        endChunk(w)
    }
  }

  private def await(f: Future[CompressedPage]): CompressedPage =
    try f.get()
    catch {
      case e: ExecutionException => throw new IOException("compressing a checkpoint page failed", e.getCause)
      case e: InterruptedException =>
        Thread.currentThread().interrupt()
        throw new java.io.InterruptedIOException("interrupted while compressing a checkpoint page")
    }

  private val header = new java.io.ByteArrayOutputStream(64)

  private def writePage(w: ColumnChunkWriter, c: CompressedPage, numValues: Int): Unit = {
    header.reset()
    converter.writeDataPageV1Header(c.rawLength, c.length, numValues, Encoding.RLE, Encoding.RLE, Encoding.PLAIN, header)
    val p = placements.get(w)
    if (p.firstPage < 0) p.firstPage = pos
    p.compressedSize += header.size() + c.length
    p.uncompressedSize += header.size() + c.rawLength
    write(header.toByteArray, 0, header.size())
    write(c.bytes, 0, c.length)
    compressor.release(c)
  }

  private def endChunk(w: ColumnChunkWriter): Unit = {
    val p = placements.remove(w)
    val d = w.descriptor
    block.addColumn(ColumnChunkMetaData.get(ColumnPath.get(d.getPath: _*), w.primitiveType, CompressionCodecName.SNAPPY,
      new EncodingStats.Builder().addDataEncoding(Encoding.PLAIN, w.pages).build(),
      new java.util.LinkedHashSet[Encoding](java.util.Arrays.asList(Encoding.RLE, Encoding.PLAIN)),
      w.statistics, p.firstPage, 0L, w.valueCount, p.compressedSize, p.uncompressedSize, w.sizeStatistics))
  }

  /** Writes the footer; returns the file length. */
  def finish(): Long = {
    require(block == null, "row group not ended")
    drain(0)
    val meta = new ParquetMetadata(new FileMetaData(schema, keyValueMetadata.asJava, CreatedBy), blocks.asJava)
    val footerStart = pos
    val counting = new OutputStream {
      override def write(b: Int): Unit = { out.write(b); pos += 1 }
      override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); pos += len }
    }
    Util.writeFileMetaData(converter.toParquetMetadata(ParquetFileWriter.CURRENT_VERSION, meta), counting)
    val len = (pos - footerStart).toInt
    write(Array(len.toByte, (len >>> 8).toByte, (len >>> 16).toByte, (len >>> 24).toByte), 0, 4)
    write(ParquetFileWriter.MAGIC, 0, ParquetFileWriter.MAGIC.length)
    out.flush()
    pos
  }
}

private[deltalog] object ParquetPageFile {
  /** Target uncompressed size of a data page (parquet-mr's default). */
  val PageSize: Int = 1 << 20
  /** Compressed pages waiting to be written before the encoder waits for the oldest. */
  val MaxPagesInFlight: Int = 8
  /** `created_by` in the footer (parquet-mr's "<application> version <version>" form). */
  val CreatedBy: String = s"deltalog version ${io.deltalog.VERSION}"
}
