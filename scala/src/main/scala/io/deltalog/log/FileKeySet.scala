package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8

/**
 * A set of reconciliation keys ([[FileKeys]] strings) held as UTF-8 bytes: one open-addressing
 * table of longs (hash and key number) and one byte array of keys, no object per key. Replay
 * records every file key it met here; keys already at hand as bytes (the path of a plain `add`,
 * see [[PlainAdds]]) go in without a `String`.
 *
 * The byte methods take the key's UTF-8 bytes and [[FileKeySet.hash]] of them; the `String`
 * methods accept any key (one with unpaired surrogates, which has no UTF-8 form, is kept aside
 * as a `String`). The hash of an ASCII key is its `String.hashCode`, so looking up a `String`
 * costs about what it costs in a `java.util.HashSet`. Single-threaded.
 *
 * @param expectedKeys initial capacity
 */
final class FileKeySet(expectedKeys: Int = 16) {
  private var bits = {
    var b = 4
    while ((1L << b) < 2L * math.max(expectedKeys, 8)) b += 1
    b
  }
  /**
   * Slot: 0 = empty, else (hash << 32) | (key number + 1). Load factor at most 1/4 up to
   * [[FileKeySet.SmallTable]] slots (short probes for lookups that miss, e.g. checkpoint rows
   * against the keys of a few commits), at most 1/2 beyond (large sets stay compact).
   */
  private var table = new Array[Long](1 << bits)
  /** Key k is `data(starts(k) until starts(k + 1))`. */
  private var starts = new Array[Int](math.max(expectedKeys, 8) + 1)
  private var data = new Array[Byte](math.max(expectedKeys, 8) * 64)
  private var n = 0
  /** True once a key with a non-ASCII byte was added. */
  private var nonAscii = false
  private var unencodable: java.util.HashSet[String] = _

  /** Number of keys. */
  def size: Int = n + (if (unencodable == null) 0 else unencodable.size)

  def isEmpty: Boolean = size == 0

  /** Adds the key `b(off until off + len)` with `hash == FileKeySet.hash(b, off, len)`; false if present. */
  def add(b: Array[Byte], off: Int, len: Int, hash: Int): Boolean = {
    val slot = find(b, off, len, hash)
    if (table(slot) != 0) return false
    insert(slot, hash, len)
    System.arraycopy(b, off, data, starts(n - 1), len)
    if (!nonAscii) {
      var i = off
      while (i < off + len && b(i) >= 0) i += 1
      nonAscii = i < off + len
    }
    true
  }

  /** True when the key `b(off until off + len)` (with its [[FileKeySet.hash]]) is in the set. */
  def contains(b: Array[Byte], off: Int, len: Int, hash: Int): Boolean = table(find(b, off, len, hash)) != 0

  /** Adds `key`; false if present. */
  def add(key: String): Boolean =
    if (FileKeySet.isAscii(key)) {
      val slot = findChars(key, key.hashCode)
      if (table(slot) != 0) false
      else {
        insert(slot, key.hashCode, key.length)
        val at = starts(n - 1)
        var i = 0
        while (i < key.length) { data(at + i) = key.charAt(i).toByte; i += 1 } // ASCII: chars are the bytes
        true
      }
    } else {
      val b = FileKeySet.utf8(key)
      if (b != null) add(b, 0, b.length, FileKeySet.hash(b, 0, b.length))
      else {
        if (unencodable == null) unencodable = new java.util.HashSet[String]()
        unencodable.add(key)
      }
    }

  def contains(key: String): Boolean =
    if (table(findChars(key, key.hashCode)) != 0) true // an ASCII key of the set (only those match chars)
    else if (!nonAscii && unencodable == null) false // nothing else could match
    else if (FileKeySet.isAscii(key)) false
    else {
      val b = FileKeySet.utf8(key)
      if (b != null) contains(b, 0, b.length, FileKeySet.hash(b, 0, b.length))
      else unencodable != null && unencodable.contains(key)
    }

  /** The keys as strings (in no particular order). */
  def iterator: Iterator[String] = {
    val encoded = Iterator.range(0, n).map(k => new String(data, starts(k), starts(k + 1) - starts(k), UTF_8))
    if (unencodable == null) encoded
    else encoded ++ scala.jdk.CollectionConverters.SetHasAsScala(unencodable).asScala.iterator
  }

  /** Sum of the slots last touched by [[warm]] (kept so the reads are not optimised away). */
  private var warmed = 0L

  /**
   * Reads the home slots of `hashes(0 until n)` before they are probed one by one: the reads do not
   * depend on each other, so their cache misses overlap instead of being paid in turn.
   */
  def warm(hashes: Array[Int], n: Int): Unit = {
    var acc = 0L
    var i = 0
    while (i < n) { acc += table(slotOf(hashes(i))); i += 1 }
    warmed += acc
  }

  @inline private def slotOf(hash: Int): Int = (hash * 0x9e3779b9) >>> (32 - bits)

  /** The slot holding this key, or the empty slot where it would go. */
  private def find(b: Array[Byte], off: Int, len: Int, hash: Int): Int = {
    val mask = table.length - 1
    var slot = slotOf(hash)
    var e = table(slot)
    while (e != 0) {
      if ((e >>> 32).toInt == hash) {
        val k = e.toInt - 1
        val s = starts(k)
        if (starts(k + 1) - s == len && java.util.Arrays.equals(data, s, s + len, b, off, off + len)) return slot
      }
      slot = (slot + 1) & mask
      e = table(slot)
    }
    slot
  }

  /**
   * [[find]] comparing `key`'s chars with the stored bytes: finds an ASCII key (whose chars are its
   * bytes and whose [[FileKeySet.hash]] is `key.hashCode`); a non-ASCII `key` matches nothing.
   */
  private def findChars(key: String, hash: Int): Int = {
    val len = key.length
    val mask = table.length - 1
    var slot = slotOf(hash)
    var e = table(slot)
    while (e != 0) {
      if ((e >>> 32).toInt == hash) {
        val k = e.toInt - 1
        val s = starts(k)
        if (starts(k + 1) - s == len) {
          var i = 0
          while (i < len && data(s + i) == key.charAt(i)) i += 1
          if (i == len) return slot
        }
      }
      slot = (slot + 1) & mask
      e = table(slot)
    }
    slot
  }

  /** Takes `slot` (from find) for a new key of `len` bytes; the caller writes them at `starts(n - 1)`. */
  private def insert(slot: Int, hash: Int, len: Int): Unit = {
    if (n + 2 > starts.length) starts = java.util.Arrays.copyOf(starts, starts.length * 2)
    val at = starts(n)
    if (at.toLong + len > data.length) {
      val want = math.max(at.toLong + len, data.length * 2L)
      if (want > Int.MaxValue - 16) throw new IllegalStateException(s"file key set over 2 GB ($want bytes)")
      data = java.util.Arrays.copyOf(data, want.toInt)
    }
    starts(n + 1) = at + len
    table(slot) = (hash.toLong << 32) | (n + 1).toLong
    n += 1
    if ((if (table.length <= FileKeySet.SmallTable) 4L else 2L) * n > table.length) rehash()
  }

  private def rehash(): Unit = {
    val old = table
    bits += 1
    table = new Array[Long](1 << bits)
    val mask = table.length - 1
    var i = 0
    while (i < old.length) {
      val e = old(i)
      if (e != 0) {
        var slot = slotOf((e >>> 32).toInt)
        while (table(slot) != 0) slot = (slot + 1) & mask
        table(slot) = e
      }
      i += 1
    }
  }
}

object FileKeySet {
  private val SmallTable = 1 << 16

  /**
   * Hash of a key's UTF-8 bytes: `31 * h + b` over the unsigned bytes, i.e. the `String.hashCode`
   * of an ASCII key (four bytes a step, so the multiplications do not wait on each other).
   */
  def hash(b: Array[Byte], off: Int, len: Int): Int = {
    var h = 0
    var i = off
    val end = off + len
    while (i + 4 <= end) {
      h = 923521 * h + 29791 * (b(i) & 0xff) + 961 * (b(i + 1) & 0xff) + 31 * (b(i + 2) & 0xff) + (b(i + 3) & 0xff)
      i += 4
    }
    while (i < end) { h = 31 * h + (b(i) & 0xff); i += 1 }
    h
  }

  private def isAscii(s: String): Boolean = {
    var i = 0
    while (i < s.length) { if (s.charAt(i) >= 0x80) return false; i += 1 }
    true
  }

  /** UTF-8 of `s`, or null when it has an unpaired surrogate (no UTF-8 form). */
  private def utf8(s: String): Array[Byte] = {
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      if (Character.isHighSurrogate(c) && i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))) i += 2
      else if (Character.isSurrogate(c)) return null
      else i += 1
    }
    s.getBytes(UTF_8)
  }
}
