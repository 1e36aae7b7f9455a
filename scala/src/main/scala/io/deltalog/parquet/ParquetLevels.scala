package io.deltalog.parquet

/**
 * A growable byte buffer for the encoded levels of a page (little-endian lengths, varint run
 * headers); bytes `[0, pos)` are the content.
 */
private[deltalog] final class LittleEndianBuffer(initialCapacity: Int) {
  var bytes: Array[Byte] = new Array[Byte](math.max(16, initialCapacity))
  var pos: Int = 0

  private def ensure(extra: Int): Unit =
    if (bytes.length - pos < extra) bytes = java.util.Arrays.copyOf(bytes, math.max(pos + extra, bytes.length * 2))

  def putByte(b: Int): Unit = { ensure(1); bytes(pos) = b.toByte; pos += 1 }

  def putInt(v: Int): Unit = { ensure(4); pos += 4; setInt(pos - 4, v) }

  /** Unsigned LEB128 varint (the run headers of the RLE / bit-packing hybrid). */
  def putVarInt(v: Int): Unit = {
    var x = v
    while ((x & ~0x7F) != 0) { putByte((x & 0x7F) | 0x80); x >>>= 7 }
    putByte(x)
  }

  /** Overwrites 4 bytes at `at` with `v` (little-endian). */
  def setInt(at: Int, v: Int): Unit = {
    bytes(at) = v.toByte; bytes(at + 1) = (v >>> 8).toByte; bytes(at + 2) = (v >>> 16).toByte; bytes(at + 3) = (v >>> 24).toByte
  }

  def reset(): Unit = pos = 0
}

/**
 * Repetition or definition levels of one page, kept as runs (level, count): a column that is
 * null in a million rows costs one run, not a million entries. [[encode]] writes them with the
 * Parquet RLE / bit-packing hybrid encoding (runs of 8 or more equal levels as RLE runs, the
 * rest bit-packed in groups of 8), as data page V1 stores levels.
 */
private[deltalog] final class LevelRuns {
  private var levels = new Array[Int](8)
  private var counts = new Array[Int](8)
  private var n = 0

  /** Number of runs. */
  def runs: Int = n

  @inline def add(level: Int, count: Int): Unit = {
    if (n > 0 && levels(n - 1) == level) counts(n - 1) += count
    else {
      if (n == levels.length) {
        levels = java.util.Arrays.copyOf(levels, n * 2)
        counts = java.util.Arrays.copyOf(counts, n * 2)
      }
      levels(n) = level
      counts(n) = count
      n += 1
    }
  }

  def clear(): Unit = n = 0

  /** Appends the hybrid encoding of all levels (no length prefix) to `out`. */
  def encode(bitWidth: Int, out: LittleEndianBuffer): Unit = {
    val pending = new PendingBitPacked(bitWidth, out)
    var r = 0
    while (r < n) {
      val v = levels(r)
      var c = counts(r)
      if (pending.size > 0) {
        // Complete the pending groups of 8 with this level first.
        val take = math.min((8 - pending.size % 8) % 8, c)
        pending.add(v, take)
        c -= take
        if (c >= 8) pending.flush()
        else if (c > 0) { pending.add(v, c); c = 0 }
      }
      if (c >= 8) writeRle(v, c, bitWidth, out)
      else if (c > 0) pending.add(v, c)
      r += 1
    }
    if (pending.size > 0) pending.flush() // the last group is padded with zeros
  }

  private def writeRle(v: Int, count: Int, bitWidth: Int, out: LittleEndianBuffer): Unit = {
    out.putVarInt(count << 1)
    var bytes = (bitWidth + 7) / 8
    var x = v
    while (bytes > 0) { out.putByte(x & 0xFF); x >>>= 8; bytes -= 1 }
  }
}

/** Levels waiting to be written as one bit-packed run (whole groups of 8, LSB first). */
private final class PendingBitPacked(bitWidth: Int, out: LittleEndianBuffer) {
  private var values = new Array[Int](64)
  var size = 0

  def add(v: Int, count: Int): Unit = {
    if (size + count > values.length) values = java.util.Arrays.copyOf(values, math.max(size + count, values.length * 2))
    java.util.Arrays.fill(values, size, size + count, v)
    size += count
  }

  /** Writes the pending levels as one bit-packed run, padding the last group with zeros. */
  def flush(): Unit = {
    val groups = (size + 7) / 8
    out.putVarInt((groups << 1) | 1)
    val total = groups * 8
    var acc = 0L
    var bits = 0
    var i = 0
    while (i < total) {
      val v = if (i < size) values(i) else 0
      acc |= (v.toLong & ((1L << bitWidth) - 1)) << bits
      bits += bitWidth
      while (bits >= 8) { out.putByte((acc & 0xFF).toInt); acc >>>= 8; bits -= 8 }
      i += 1
    }
    size = 0
  }
}

private[deltalog] object ParquetLevels {
  /** Bits needed for levels up to `maxLevel`. */
  def bitWidth(maxLevel: Int): Int = 32 - Integer.numberOfLeadingZeros(maxLevel)
}
