package io.deltalog.parquet

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.parquet.bytes.{ByteBufferInputStream, BytesUtils}
import org.apache.parquet.column.{ColumnDescriptor, Dictionary, Encoding, ValuesType}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DataPageV2, DictionaryPage, PageReader}
import org.apache.parquet.column.values.ValuesReader
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

/**
 * Decodes one non-repeated leaf of a row group slot by slot without parquet-mr's column reader:
 * each page's definition levels are walked run by run ([[HybridRle.Runs]]: a run-length run, the
 * usual case for a column that is never or always null, is one step, never expanded slot by
 * slot), and a subclass turns the page's values into fields of its own (no object per value).
 * [[next]] advances one slot and returns its definition level; the value fields are valid when
 * that level is the maximum. Encodings a subclass does not parse itself go through parquet-mr's
 * values reader.
 */
private[deltalog] abstract class LeafDecoder(pages: PageReader, protected val desc: ColumnDescriptor) {
  require(desc.getMaxRepetitionLevel == 0, s"$desc is repeated")
  protected final val maxDl: Int = desc.getMaxDefinitionLevel
  private val width = BytesUtils.getWidthFromMaxInt(maxDl)
  // The current page's levels: `runs` over its RLE / bit-packed bytes (null when the page's levels
  // were all decoded at once into `packed`: old BIT_PACKED levels, or a constant 0 for a required
  // column); `pageLeft` slots not yet in a run.
  private var runs: HybridRle.Runs = _
  private var pageLeft = 0
  // The current run: `runLeft` slots left, all of level `runLevel` when `pi < 0`, else the levels
  // `packed(pi ...)`.
  private var runLeft = 0
  private var runLevel = 0
  private var packed = new Array[Int](0)
  private var pi = -1

  /** Advances to the next slot and returns its definition level. */
  final def next(): Int = {
    if (runLeft == 0) nextRun()
    runLeft -= 1
    val dl = if (pi < 0) runLevel else { val v = packed(pi); pi += 1; v }
    if (dl == maxDl) readValue()
    dl
  }

  private def nextRun(): Unit =
    while (runLeft == 0) {
      if (pageLeft == 0) readPage() // a page decoded whole sets `runLeft` itself
      else {
        val r = runs
        r.next()
        val take = math.min(r.length, pageLeft)
        if (r.rle) { pi = -1; runLevel = r.value }
        else {
          if (packed.length < take) packed = new Array[Int](math.max(take, 64))
          r.unpack(take, packed, 0)
          pi = 0
        }
        runLeft = take
        pageLeft -= take
      }
    }

  /** Reads the value of the current (non-null) slot into the subclass's fields. */
  protected def readValue(): Unit

  /**
   * Prepares the values of a new page: `data` holds them at absolute positions `[pos, end)`;
   * `present` of the page's slots have a value.
   */
  protected def initValues(encoding: Encoding, data: ByteBuffer, pos: Int, end: Int, present: Int): Unit

  protected final def corrupt(what: String): Nothing = throw new IllegalStateException(s"$what in $desc")

  /** A parquet-mr values reader over `[pos, end)` of `data`, for encodings not parsed here. */
  protected final def genericReader(encoding: Encoding, data: ByteBuffer, pos: Int, end: Int, present: Int): ValuesReader = {
    if (encoding.usesDictionary) corrupt("dictionary-encoded page without a dictionary")
    val r = encoding.getValuesReader(desc, ValuesType.VALUES)
    val slice = data.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    slice.limit(end).position(pos)
    r.initFromPage(present, ByteBufferInputStream.wrap(slice.slice()))
    r
  }

  /**
   * The chunk's dictionary page (read once; null when there is none). A page whose encoding is
   * PLAIN / PLAIN_DICTIONARY holds the values PLAIN-encoded; subclasses parse those in place
   * ([[plainDictionary]]) and leave other encodings to [[dictionary]].
   */
  private lazy val dictionaryPage: DictionaryPage = pages.readDictionaryPage()

  /** The dictionary page's values as a little-endian buffer of PLAIN values, or null (none, or another encoding). */
  protected final def plainDictionary(): (ByteBuffer, Int) = {
    val dp = dictionaryPage
    if (dp == null || !(dp.getEncoding == Encoding.PLAIN || dp.getEncoding == Encoding.PLAIN_DICTIONARY)) null
    else {
      if (dp.getDictionarySize < 0) corrupt("negative dictionary size")
      (dp.getBytes.toByteBuffer.duplicate().order(ByteOrder.LITTLE_ENDIAN), dp.getDictionarySize)
    }
  }

  /** The dictionary page of the chunk, decoded by parquet-mr (null when there is none). */
  protected final def dictionary(): Dictionary = {
    val dp = dictionaryPage
    if (dp == null) null else dp.getEncoding.initDictionary(desc, dp)
  }

  private var ids = new Array[Int](0)
  private var idPos = 0

  /**
   * Decodes the dictionary ids of a dictionary-encoded page's `present` values (bit width byte,
   * then the hybrid runs); [[nextDictionaryId]] hands them out.
   */
  protected final def readDictionaryIds(data: ByteBuffer, pos: Int, end: Int, present: Int): Unit = {
    idPos = 0
    if (pos >= end) { if (present == 0) return; corrupt("missing dictionary id width") }
    val width = data.get(pos) & 0xFF
    if (width > 32) corrupt(s"bad dictionary id width $width")
    if (ids.length < present) ids = new Array[Int](present)
    HybridRle.decode(data, pos + 1, end, width, present, ids)
  }

  /** The next dictionary id of the page, checked against the dictionary's size. */
  protected final def nextDictionaryId(dictionarySize: Int): Int = {
    val id = ids(idPos)
    idPos += 1
    if (id < 0 || id >= dictionarySize) corrupt(s"dictionary id $id out of range")
    id
  }

  /** Reads the next page: its levels become the current runs, its values are handed to [[initValues]]. */
  private def readPage(): Unit = {
    val page: DataPage = pages.readPage()
    if (page == null) corrupt("no more pages")
    val n = page.getValueCount
    if (n < 0) corrupt("negative value count")
    runs = null
    pageLeft = 0
    runLeft = n
    pi = -1
    runLevel = 0
    page match {
      case p: DataPageV1 =>
        val in = p.getBytes.toInputStream
        val data = in.slice(in.available()).order(ByteOrder.LITTLE_ENDIAN)
        var pos = data.position()
        val end = data.limit()
        // A max repetition level of 0 has no level bytes in either encoding.
        val present =
          if (maxDl == 0) n
          else if (p.getDlEncoding == Encoding.RLE) {
            if (pos + 4 > end) corrupt("page ends before its definition levels")
            val len = data.getInt(pos)
            pos += 4
            if (len < 0 || pos.toLong + len > end) corrupt("bad definition level length")
            val c = HybridRle.countEqual(data, pos, pos + len, width, n, maxDl)
            startRuns(data, pos, pos + len, n)
            pos += len
            c
          } else {
            val slice = data.duplicate()
            slice.position(pos)
            val levelIn = ByteBufferInputStream.wrap(slice.slice())
            val r = p.getDlEncoding.getValuesReader(desc, ValuesType.DEFINITION_LEVEL)
            r.initFromPage(n, levelIn)
            if (packed.length < n) packed = new Array[Int](n)
            var c = 0
            var i = 0
            while (i < n) { val l = r.readInteger(); packed(i) = l; if (l == maxDl) c += 1; i += 1 }
            pi = 0
            pos += levelIn.position().toInt
            c
          }
        initValues(p.getValueEncoding, data, pos, end, present)
      case p: DataPageV2 =>
        val present =
          if (maxDl == 0) n
          else {
            val lb = p.getDefinitionLevels.toByteBuffer
            val c = HybridRle.countEqual(lb, lb.position(), lb.limit(), width, n, maxDl)
            startRuns(lb, lb.position(), lb.limit(), n)
            c
          }
        val in = p.getData.toInputStream
        val data = in.slice(in.available()).order(ByteOrder.LITTLE_ENDIAN)
        initValues(p.getDataEncoding, data, data.position(), data.limit(), present)
    }
  }

  /** The page's `n` levels are the runs in `[pos, end)` of `buf`. */
  private def startRuns(buf: ByteBuffer, pos: Int, end: Int, n: Int): Unit = {
    runs = new HybridRle.Runs(buf, pos, end, width)
    pageLeft = n
    runLeft = 0
  }
}

/** An INT64 or INT32 leaf; [[value]] is the current value (INT32 widened). */
private[deltalog] final class LongLeafDecoder(pages: PageReader, desc: ColumnDescriptor) extends LeafDecoder(pages, desc) {
  private val isInt32 = desc.getPrimitiveType.getPrimitiveTypeName == PrimitiveTypeName.INT32
  require(isInt32 || desc.getPrimitiveType.getPrimitiveTypeName == PrimitiveTypeName.INT64, s"$desc is not an integer")
  private val width = if (isInt32) 4 else 8
  var value: Long = 0L

  private val dict: Array[Long] = plainDictionary() match {
    case (b, n) =>
      val start = b.position()
      if (start.toLong + n.toLong * width > b.limit()) corrupt("dictionary page shorter than its values")
      val values = b.slice().order(ByteOrder.LITTLE_ENDIAN) // bulk copies, no call per value
      val out = new Array[Long](n)
      if (isInt32) {
        val ints = new Array[Int](n)
        values.asIntBuffer().get(ints)
        var i = 0
        while (i < n) { out(i) = ints(i).toLong; i += 1 }
      } else values.asLongBuffer().get(out)
      out
    case null =>
      val d = dictionary()
      if (d == null) null
      else Array.tabulate(d.getMaxId + 1)(i => if (isInt32) d.decodeToInt(i).toLong else d.decodeToLong(i))
  }
  private var mode = 0 // 0: plain, 1: dictionary ids, 2: parquet-mr values reader
  private var data: ByteBuffer = _
  private var pos = 0
  private var generic: ValuesReader = _

  override protected def initValues(encoding: Encoding, d: ByteBuffer, p: Int, e: Int, present: Int): Unit = encoding match {
    case Encoding.PLAIN =>
      mode = 0; data = d; pos = p
      if (p.toLong + present.toLong * width > e) corrupt("PLAIN page shorter than its values")
    case Encoding.PLAIN_DICTIONARY | Encoding.RLE_DICTIONARY if dict != null =>
      mode = 1; readDictionaryIds(d, p, e, present)
    case other =>
      mode = 2; generic = genericReader(other, d, p, e, present)
  }

  override protected def readValue(): Unit = mode match {
    case 0 =>
      value = if (isInt32) data.getInt(pos).toLong else data.getLong(pos)
      pos += width
    case 1 =>
      value = dict(nextDictionaryId(dict.length))
    case _ =>
      value = if (isInt32) generic.readInteger().toLong else generic.readLong()
  }
}

/** A BOOLEAN leaf; [[value]] is the current value. */
private[deltalog] final class BooleanLeafDecoder(pages: PageReader, desc: ColumnDescriptor) extends LeafDecoder(pages, desc) {
  require(desc.getPrimitiveType.getPrimitiveTypeName == PrimitiveTypeName.BOOLEAN, s"$desc is not a boolean")
  var value: Boolean = false

  private var mode = 0 // 0: plain (bit-packed), 1: RLE (decoded in bulk), 2: parquet-mr values reader
  private var data: ByteBuffer = _
  private var base = 0
  private var bit = 0
  private var bits = new Array[Int](0)
  private var generic: ValuesReader = _

  override protected def initValues(encoding: Encoding, d: ByteBuffer, p: Int, e: Int, present: Int): Unit = encoding match {
    case Encoding.PLAIN =>
      mode = 0; data = d; base = p; bit = 0
      if (p.toLong + (present + 7) / 8 > e) corrupt("PLAIN page shorter than its values")
    case Encoding.RLE =>
      // Booleans in RLE: a 4-byte length, then hybrid runs of 1-bit values.
      if (p + 4 > e) corrupt("RLE boolean page without a length")
      val len = d.getInt(p)
      if (len < 0 || p + 4L + len > e) corrupt("bad RLE boolean length")
      if (bits.length < present) bits = new Array[Int](present)
      HybridRle.decode(d, p + 4, p + 4 + len, 1, present, bits)
      mode = 1; bit = 0
    case other =>
      mode = 2; generic = genericReader(other, d, p, e, present)
  }

  override protected def readValue(): Unit = mode match {
    case 0 =>
      value = ((data.get(base + (bit >>> 3)) >>> (bit & 7)) & 1) != 0
      bit += 1
    case 1 =>
      value = bits(bit) != 0
      bit += 1
    case _ =>
      value = generic.readBoolean()
  }
}
