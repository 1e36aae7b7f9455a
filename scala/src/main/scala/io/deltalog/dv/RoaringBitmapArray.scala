package io.deltalog.dv

import java.nio.{ByteBuffer, ByteOrder}

import org.roaringbitmap.RoaringBitmap

/**
 * The set of deleted row indexes of one data file: Delta's "RoaringBitmapArray" (digest §6.2),
 * one 32-bit `RoaringBitmap` per high 32-bit word of the 64-bit row index.
 *
 * `bitmaps(k)` holds the low words of the rows whose high word is `k` (null when none).
 */
final class RoaringBitmapArray private (bitmaps: Array[RoaringBitmap]) extends Serializable {

  /** True when row `rowIndex` is marked deleted. */
  def contains(rowIndex: Long): Boolean = {
    val high = rowIndex >>> 32
    if (high >= bitmaps.length) false
    else {
      val b = bitmaps(high.toInt)
      b != null && b.contains(rowIndex.toInt)
    }
  }

  /** Number of deleted rows. */
  def cardinality: Long = bitmaps.iterator.filter(_ != null).map(_.getLongCardinality).sum

  /** All deleted row indexes in ascending order (tests, diagnostics). */
  def toArray: Array[Long] = {
    val out = Array.newBuilder[Long]
    bitmaps.indices.foreach { k =>
      val b = bitmaps(k)
      if (b != null) {
        val it = b.getIntIterator
        while (it.hasNext) out += ((k.toLong << 32) | (it.next() & 0xFFFFFFFFL))
      }
    }
    out.result()
  }

  /**
   * Calls `f` with each row of this bitmap in `[from, until)`, in ascending order: work in the
   * number of those rows, not in the width of the range (a scan batch marks its deleted rows so).
   */
  def foreachInRange(from: Long, until: Long)(f: Long => Unit): Unit = {
    if (from >= until || from < 0) return
    var k = (from >>> 32).toInt
    val lastK = ((until - 1) >>> 32).toInt
    while (k <= lastK && k < bitmaps.length) {
      val b = bitmaps(k)
      if (b != null) {
        val base = k.toLong << 32
        val it = b.getIntIterator
        if (from > base) it.advanceIfNeeded((from - base).toInt) // unsigned low word
        var done = false
        while (!done && it.hasNext) {
          val row = base | (it.next() & 0xFFFFFFFFL)
          if (row >= until) done = true else f(row)
        }
      }
      k += 1
    }
  }

  /** The rows of this bitmap and of `other`. */
  def union(other: RoaringBitmapArray): RoaringBitmapArray = RoaringBitmapArray.fromIterator(
    toArray.iterator ++ other.toArray.iterator)

  /**
   * The portable serialization (magic, then the 64-bit portable Roaring format) that delta-spark
   * writes: every bucket from 0 to the highest key, empty ones included.
   */
  def serialize: Array[Byte] = {
    val all = bitmaps.map(b => if (b == null) new RoaringBitmap() else { val c = b.clone(); c.runOptimize(); c })
    val size = 4 + 8 + all.map(4 + _.serializedSizeInBytes()).sum
    val buf = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN)
    buf.putInt(RoaringBitmapArray.PortableMagic).putLong(all.length.toLong)
    all.indices.foreach { k => buf.putInt(k); all(k).serialize(buf) }
    buf.array()
  }

  /** The largest row index, None when empty. */
  def last: Option[Long] = {
    var k = bitmaps.length - 1
    while (k >= 0 && (bitmaps(k) == null || bitmaps(k).isEmpty)) k -= 1
    if (k < 0) None else Some((k.toLong << 32) | (bitmaps(k).last() & 0xFFFFFFFFL))
  }
}

object RoaringBitmapArray {
  /** Magic of the portable 64-bit format (what delta-spark writes). */
  val PortableMagic: Int = 1681511377
  /** Magic of the legacy "native" format (delta-spark can still read it). */
  val NativeMagic: Int = 1681511376

  val empty: RoaringBitmapArray = new RoaringBitmapArray(Array.empty)

  /**
   * Deserializes a bitmap (magic included, little-endian).
   *
   * @throws IllegalArgumentException on an unknown magic number or a malformed layout
   */
  def deserialize(bytes: Array[Byte]): RoaringBitmapArray = {
    val buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    require(bytes.length >= 4, s"deletion vector bitmap of ${bytes.length} bytes has no magic number")
    buf.getInt() match {
      case PortableMagic =>
        val n = buf.getLong()
        require(n >= 0 && n <= Int.MaxValue, s"invalid bucket count $n")
        val keyed = (0 until n.toInt).map { _ =>
          val key = buf.getInt()
          require(key >= 0, s"negative bucket key $key")
          key -> readBitmap(buf)
        }
        val size = if (keyed.isEmpty) 0 else keyed.map(_._1).max + 1
        val arr = new Array[RoaringBitmap](size)
        keyed.foreach { case (k, b) => arr(k) = b }
        new RoaringBitmapArray(arr)
      case NativeMagic =>
        val n = buf.getInt()
        require(n >= 0, s"invalid bitmap count $n")
        val arr = Array.fill(n) {
          val len = buf.getInt()
          val slice = buf.slice().order(ByteOrder.LITTLE_ENDIAN)
          slice.limit(len)
          val b = new RoaringBitmap()
          b.deserialize(slice)
          buf.position(buf.position() + len)
          b
        }
        new RoaringBitmapArray(arr)
      case other =>
        throw new IllegalArgumentException(s"unknown deletion vector bitmap magic number $other")
    }
  }

  private def readBitmap(buf: ByteBuffer): RoaringBitmap = {
    val b = new RoaringBitmap()
    val slice = buf.slice().order(ByteOrder.LITTLE_ENDIAN)
    b.deserialize(slice)
    buf.position(buf.position() + b.serializedSizeInBytes())
    b
  }

  /** A bitmap of `rows` (tests; row indexes must be non-negative). */
  def of(rows: Long*): RoaringBitmapArray = {
    if (rows.isEmpty) return empty
    val maxHigh = (rows.max >>> 32).toInt
    val arr = new Array[RoaringBitmap](maxHigh + 1)
    rows.foreach { r =>
      val h = (r >>> 32).toInt
      if (arr(h) == null) arr(h) = new RoaringBitmap()
      arr(h).add(r.toInt)
    }
    new RoaringBitmapArray(arr)
  }

  /** A bitmap of the row indexes of `rows` (any order, duplicates allowed; indexes must be non-negative). */
  def fromIterator(rows: Iterator[Long]): RoaringBitmapArray = {
    val byHigh = scala.collection.mutable.HashMap.empty[Int, RoaringBitmap]
    rows.foreach { r =>
      require(r >= 0, s"negative row index $r")
      byHigh.getOrElseUpdate((r >>> 32).toInt, new RoaringBitmap()).add(r.toInt)
    }
    if (byHigh.isEmpty) return empty
    val arr = new Array[RoaringBitmap](byHigh.keys.max + 1)
    byHigh.foreach { case (k, b) => arr(k) = b }
    new RoaringBitmapArray(arr)
  }

  /** Portable serialization of `rows` (magic + 64-bit portable Roaring); tests build inline DVs with it. */
  def serializePortable(rows: Long*): Array[Byte] = {
    val bitmaps = rows.groupBy(r => (r >>> 32).toInt).toSeq.sortBy(_._1).map { case (k, rs) =>
      val b = new RoaringBitmap(); rs.foreach(r => b.add(r.toInt)); b.runOptimize(); k -> b
    }
    val size = 4 + 8 + bitmaps.map(4 + _._2.serializedSizeInBytes()).sum
    val buf = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN)
    buf.putInt(PortableMagic).putLong(bitmaps.size.toLong)
    bitmaps.foreach { case (k, b) => buf.putInt(k); b.serialize(buf) }
    buf.array()
  }
}
