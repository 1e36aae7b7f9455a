package io.deltalog.log

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.parquet.bytes.{ByteBufferInputStream, BytesUtils}
import org.apache.parquet.column.{ColumnDescriptor, Dictionary, Encoding, ValuesType}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DataPageV2, PageReader}
import org.apache.parquet.column.values.ValuesReader
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridDecoder

/**
 * Decodes one non-repeated BINARY leaf of a row group slot by slot, handing out each value as a
 * (buffer, offset, length) view of the page bytes: no `Binary` or `ByteBuffer` object per value.
 * PLAIN pages (a length-prefixed run of values, the bulk of a checkpoint's `path` / `stats`) are
 * parsed in place; dictionary-encoded pages map ids to the dictionary's bytes; any other
 * encoding goes through parquet-mr's own values reader. Definition levels are read with
 * parquet-mr's level readers, exactly as its column reader does.
 */
private[log] final class BinaryLeafDecoder(pages: PageReader, desc: ColumnDescriptor) {
  require(desc.getMaxRepetitionLevel == 0, s"${desc} is repeated")
  private val maxDl = desc.getMaxDefinitionLevel

  /** The current value (valid after [[next]] returned the maximum definition level). */
  var buf: ByteBuffer = _
  var off: Int = 0
  var len: Int = 0

  private var remaining = 0
  private var levels: () => Int = () => 0
  private var mode = 0 // 0: plain, 1: dictionary ids, 2: parquet-mr values reader
  private var data: ByteBuffer = _
  private var pos = 0
  private var ids: RunLengthBitPackingHybridDecoder = _
  private var generic: ValuesReader = _

  private val (dictBufs, dictOffs, dictLens) = {
    val dp = pages.readDictionaryPage()
    if (dp == null) (null, null, null)
    else {
      val d: Dictionary = dp.getEncoding.initDictionary(desc, dp)
      val n = d.getMaxId + 1
      val bufs = new Array[ByteBuffer](n)
      val offs = new Array[Int](n)
      val lens = new Array[Int](n)
      var i = 0
      while (i < n) {
        val b = d.decodeToBinary(i).toByteBuffer
        bufs(i) = b; offs(i) = b.position(); lens(i) = b.remaining()
        i += 1
      }
      (bufs, offs, lens)
    }
  }

  /** Advances to the next slot and returns its definition level. */
  def next(): Int = {
    while (remaining == 0) readPage()
    remaining -= 1
    val dl = levels()
    if (dl == maxDl) mode match {
      case 0 =>
        val l = data.getInt(pos)
        if (l < 0 || pos + 4L + l > data.limit()) throw new IllegalStateException(s"corrupt PLAIN value in $desc")
        buf = data; off = pos + 4; len = l
        pos += 4 + l
      case 1 =>
        val id = ids.readInt()
        buf = dictBufs(id); off = dictOffs(id); len = dictLens(id)
      case _ =>
        val b = generic.readBytes().toByteBuffer
        buf = b; off = b.position(); len = b.remaining()
    }
    dl
  }

  private def readPage(): Unit = {
    val page: DataPage = pages.readPage()
    if (page == null) throw new IllegalStateException(s"no more pages in $desc")
    remaining = page.getValueCount
    page match {
      case p: DataPageV1 =>
        val in = p.getBytes.toInputStream
        val rl = p.getRlEncoding.getValuesReader(desc, ValuesType.REPETITION_LEVEL)
        rl.initFromPage(remaining, in)
        val dl = p.getDlEncoding.getValuesReader(desc, ValuesType.DEFINITION_LEVEL)
        dl.initFromPage(remaining, in)
        levels = () => dl.readInteger()
        initValues(p.getValueEncoding, in)
      case p: DataPageV2 =>
        if (maxDl == 0) levels = () => 0
        else {
          val dl = new RunLengthBitPackingHybridDecoder(BytesUtils.getWidthFromMaxInt(maxDl),
            p.getDefinitionLevels.toInputStream)
          levels = () => dl.readInt()
        }
        initValues(p.getDataEncoding, p.getData.toInputStream)
    }
  }

  private def initValues(encoding: Encoding, in: ByteBufferInputStream): Unit = encoding match {
    case Encoding.PLAIN =>
      mode = 0
      data = in.slice(in.available()).order(ByteOrder.LITTLE_ENDIAN)
      pos = data.position()
    case Encoding.PLAIN_DICTIONARY | Encoding.RLE_DICTIONARY if dictBufs != null =>
      mode = 1
      val width = in.read()
      if (width < 0 || width > 32) throw new IllegalStateException(s"bad dictionary id width $width in $desc")
      ids = new RunLengthBitPackingHybridDecoder(width, in)
    case other =>
      mode = 2
      generic = if (other.usesDictionary) {
        throw new IllegalStateException(s"dictionary-encoded page without a dictionary in $desc")
      } else other.getValuesReader(desc, ValuesType.VALUES)
      generic.initFromPage(remaining, in)
  }
}
