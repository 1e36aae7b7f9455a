package io.deltalog.parquet

import java.nio.ByteBuffer

import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.page.PageReader
import org.apache.parquet.column.values.ValuesReader

/**
 * Decodes one non-repeated BINARY leaf of a row group slot by slot, handing out each value as a
 * (buffer, offset, length) view of the page bytes: no `Binary` or `ByteBuffer` object per value.
 * PLAIN pages (a length-prefixed run of values, the bulk of a checkpoint's `path` / `stats`) are
 * parsed in place; dictionary-encoded pages map ids to the dictionary's bytes; any other
 * encoding goes through parquet-mr's own values reader.
 */
private[deltalog] final class BinaryLeafDecoder(pages: PageReader, desc: ColumnDescriptor) extends LeafDecoder(pages, desc) {

  /** The current value (valid after [[next]] returned the maximum definition level). */
  var buf: ByteBuffer = _
  var off: Int = 0
  var len: Int = 0

  private var mode = 0 // 0: plain, 1: dictionary ids, 2: parquet-mr values reader
  private var data: ByteBuffer = _
  private var pos = 0
  private var end = 0
  private var generic: ValuesReader = _

  // The dictionary's values: `dictBuf` for a PLAIN dictionary page parsed in place (lengths and
  // offsets only, no object per value), else one buffer per value from parquet-mr's dictionary.
  private var dictBuf: ByteBuffer = _
  private var dictBufs: Array[ByteBuffer] = _
  private val (dictOffs, dictLens) = plainDictionary() match {
    case (b, n) =>
      val offs = new Array[Int](n)
      val lens = new Array[Int](n)
      var p = b.position()
      var i = 0
      while (i < n) { // in short calls, compiled early (RowBlocks)
        val until = math.min(n, i + RowBlocks.Size)
        p = parseDictionary(b, p, offs, lens, i, until)
        i = until
      }
      dictBuf = b
      (offs, lens)
    case null =>
      val d = dictionary()
      if (d == null) (null, null)
      else {
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
        dictBufs = bufs
        (offs, lens)
      }
  }

  /** Offsets and lengths of PLAIN dictionary values `from until until`, the first at `pos`; returns the position after them. */
  private def parseDictionary(b: ByteBuffer, pos: Int, offs: Array[Int], lens: Array[Int], from: Int, until: Int): Int = {
    val e = b.limit()
    var p = pos
    var i = from
    while (i < until) {
      if (p + 4 > e) corrupt("corrupt PLAIN dictionary value")
      val l = b.getInt(p)
      if (l < 0 || p + 4L + l > e) corrupt("corrupt PLAIN dictionary value")
      offs(i) = p + 4; lens(i) = l
      p += 4 + l
      i += 1
    }
    p
  }

  override protected def initValues(encoding: Encoding, d: ByteBuffer, p: Int, e: Int, present: Int): Unit = encoding match {
    case Encoding.PLAIN =>
      mode = 0; data = d; pos = p; end = e
    case Encoding.PLAIN_DICTIONARY | Encoding.RLE_DICTIONARY if dictOffs != null =>
      mode = 1; readDictionaryIds(d, p, e, present)
    case other =>
      mode = 2; generic = genericReader(other, d, p, e, present)
  }

  override protected def readValue(): Unit = mode match {
    case 0 =>
      if (pos + 4 > end) corrupt("corrupt PLAIN value")
      val l = data.getInt(pos)
      if (l < 0 || pos + 4L + l > end) corrupt("corrupt PLAIN value")
      buf = data; off = pos + 4; len = l
      pos += 4 + l
    case 1 =>
      val id = nextDictionaryId(dictOffs.length)
      buf = if (dictBuf != null) dictBuf else dictBufs(id); off = dictOffs(id); len = dictLens(id)
    case _ =>
      val b = generic.readBytes().toByteBuffer
      buf = b; off = b.position(); len = b.remaining()
  }
}
