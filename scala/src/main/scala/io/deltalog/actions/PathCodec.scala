package io.deltalog.actions

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}

/**
 * URI encoding of file paths stored in actions (`add.path`, `remove.path`, `cdc.path`,
 * `sidecar.path`, DV `p` paths), matching what delta-spark writes.
 *
 * A string starting with a URI scheme (`^[A-Za-z][A-Za-z0-9+.-]*:/`) is an absolute URI and is
 * left unchanged by [[encodePath]]. A relative path is percent-encoded (UTF-8, uppercase hex)
 * except ASCII letters and digits, `-_.!~*'()` and `;@&=+$,/`. `:` is encoded (`%3A`). Non-ASCII
 * characters stay literal, as `java.net.URI` leaves them, unless they are whitespace or control
 * characters.
 */
object PathCodec {
  import WordBytes.{HighBits, Ones}

  private val Hex = "0123456789ABCDEF"

  private val AsciiAllowed: Array[Boolean] = {
    val a = new Array[Boolean](128)
    ('a' to 'z').foreach(c => a(c) = true)
    ('A' to 'Z').foreach(c => a(c) = true)
    ('0' to '9').foreach(c => a(c) = true)
    "-_.!~*'();@&=+$,/".foreach(c => a(c) = true)
    a
  }

  /**
   * True when `path` starts with a URI scheme followed by `:/` (same as matching `^[A-Za-z][A-Za-z0-9+.-]*:/`
   * at the start, without a regex: the scheme run is maximal since `:` is not a scheme character).
   */
  def isAbsolute(path: String): Boolean = {
    val n = path.length
    if (n == 0 || !isAsciiLetter(path.charAt(0))) return false
    var i = 1
    while (i < n && isSchemeChar(path.charAt(i))) i += 1
    i + 1 < n && path.charAt(i) == ':' && path.charAt(i + 1) == '/'
  }

  private def isAsciiLetter(c: Char): Boolean = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
  private def isSchemeChar(c: Char): Boolean =
    isAsciiLetter(c) || (c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-'

  /**
   * A 64-bit hash of the path held as UTF-8 bytes `[off, off + len)` of `buf` when those bytes
   * make a plain path ([[isPlain]]: all ASCII, so the bytes are the chars), else the marker
   * `Long.MinValue` (never a hash). Equals [[plainPathHash(path:String)*]] of the same path, so a
   * caller can test raw bytes against a set of plain keys without decoding them. Mixes eight
   * bytes at a time: a byte-at-a-time polynomial hash is one long dependency chain per path,
   * which showed in replays that check a million checkpoint paths.
   */
  def plainPathHash(buf: java.nio.ByteBuffer, off: Int, len: Int): Long = {
    val swap = buf.order() != java.nio.ByteOrder.LITTLE_ENDIAN
    var h = PathSeed ^ len.toLong
    var i = off
    val end = off + len
    while (i + 8 <= end) {
      var w = buf.getLong(i)
      if (swap) w = java.lang.Long.reverseBytes(w)
      if ((w & HighBits) != 0 || !(commonWord(w) || allowedWord(w, 8))) return Long.MinValue
      h = mixWord(h, w)
      i += 8
    }
    val n = end - i
    if (n > 0) {
      var w = 0L
      if (len >= 8) {
        // the path's last eight bytes (the first 8 - n of them checked already) shifted down to
        // the n bytes of the tail: one read and one word check instead of n bytes one by one
        w = buf.getLong(end - 8)
        if (swap) w = java.lang.Long.reverseBytes(w)
        if ((w & HighBits) != 0 || !(commonWord(w) || allowedWord(w, 8))) return Long.MinValue
        w >>>= 8 * (8 - n)
      } else {
        var k = 0
        while (k < n) { w |= (buf.get(i + k) & 0xFFL) << (8 * k); k += 1 }
        if ((w & HighBits) != 0 || !allowedWord(w, n)) return Long.MinValue
      }
      h = mixWord(h, w)
    }
    finishHash(h)
  }

  /** [[plainPathHash(buf:java\.nio\.ByteBuffer,off:Int,len:Int)*]] of a path String (Long.MinValue: not plain). */
  def plainPathHash(path: String): Long = {
    val len = path.length
    var h = PathSeed ^ len.toLong
    var i = 0
    while (i < len) {
      val n = math.min(8, len - i)
      var w = 0L
      var k = 0
      while (k < n) {
        val c = path.charAt(i + k)
        if (c >= 128) return Long.MinValue
        w |= c.toLong << (8 * k)
        k += 1
      }
      if (!allowedWord(w, n)) return Long.MinValue
      h = mixWord(h, w)
      i += n
    }
    finishHash(h)
  }

  private val PathSeed = 0x2545F4914F6CDD1DL

  /** True when the `n` low bytes of `w` (all ASCII) are characters [[encodePath]] keeps literal. */
  private def allowedWord(w: Long, n: Int): Boolean = {
    var k = 0
    var ok = true
    while (k < n) { ok &= AsciiAllowed(((w >>> (8 * k)) & 0x7F).toInt); k += 1 }
    ok
  }

  private val CaseBit = WordBytes.repeated(0x20)

  /** Per byte of `x` (all bytes ASCII): the high bit set when `lo <= byte <= hi` (no carries). */
  private def inRange(x: Long, lo: Int, hi: Int): Long =
    (x + (0x80 - lo) * Ones) & ~(x + (0x7F - hi) * Ones) & HighBits

  /**
   * True when the eight ASCII bytes of `w` are all in `[A-Za-z0-9._/-]`, the characters of nearly
   * every data file path, tested a word at a time (a subset of [[AsciiAllowed]]: false only sends
   * the word to the exact byte-wise [[allowedWord]]).
   */
  private[actions] def commonWord(w: Long): Boolean =
    (inRange(w | CaseBit, 'a', 'z') | inRange(w, '0', '9') | inRange(w, '-', '/') | inRange(w, '_', '_')) == HighBits

  private def mixWord(h: Long, w: Long): Long = {
    val x = (h ^ w) * 0x9E3779B97F4A7C15L
    x ^ (x >>> 29)
  }

  private def finishHash(h: Long): Long = {
    val x = (h ^ (h >>> 32)) * 0xD6E8FEB86659FD93L
    val r = x ^ (x >>> 32)
    if (r == Long.MinValue) 0L else r
  }

  /**
   * True when every character of `path` is an ASCII character that [[encodePath]] keeps literal
   * (so no `%` and no `:`): such a path is relative, and `decodePath`, `encodePath` and
   * [[canonicalPathKey]] all return it unchanged.
   */
  def isPlain(path: String): Boolean = {
    var i = 0
    val n = path.length
    while (i < n) {
      val c = path.charAt(i)
      if (c >= 128 || !AsciiAllowed(c)) return false
      i += 1
    }
    true
  }

  private def keepLiteral(cp: Int): Boolean =
    if (cp < 128) AsciiAllowed(cp)
    else !(Character.isISOControl(cp) || Character.isSpaceChar(cp) || Character.isWhitespace(cp) ||
      Character.getType(cp) == Character.SURROGATE)

  /** Encodes a raw (decoded) relative path; absolute URIs are returned unchanged. */
  def encodePath(path: String): String = {
    if (isAbsolute(path)) return path
    var i = 0
    // Fast path: nothing to encode.
    while (i < path.length && path.charAt(i) < 128 && AsciiAllowed(path.charAt(i))) i += 1
    if (i == path.length) return path
    val sb = new java.lang.StringBuilder(path.length + 16)
    sb.append(path, 0, i)
    while (i < path.length) {
      val cp = path.codePointAt(i)
      val n = Character.charCount(cp)
      if (keepLiteral(cp)) sb.appendCodePoint(cp)
      else {
        val bytes = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)
        bytes.foreach { b =>
          sb.append('%').append(Hex.charAt((b >> 4) & 0xf)).append(Hex.charAt(b & 0xf))
        }
      }
      i += n
    }
    sb.toString
  }

  private def hexValue(c: Char): Int =
    if (c >= '0' && c <= '9') c - '0'
    else if (c >= 'a' && c <= 'f') c - 'a' + 10
    else if (c >= 'A' && c <= 'F') c - 'A' + 10
    else -1

  /**
   * Percent-decodes (UTF-8) a stored path or URI. `+` is left as is.
   *
   * @throws IllegalArgumentException on a malformed `%` escape or escapes that are not valid UTF-8
   */
  def decodePath(uri: String): String = {
    val first = uri.indexOf('%')
    if (first < 0) return uri
    val sb = new java.lang.StringBuilder(uri.length)
    sb.append(uri, 0, first)
    var i = first
    while (i < uri.length) {
      val c = uri.charAt(i)
      if (c != '%') { sb.append(c); i += 1 }
      else {
        // Collect a run of consecutive escapes and decode them together as UTF-8.
        val buf = ByteBuffer.allocate((uri.length - i) / 3 + 1)
        while (i < uri.length && uri.charAt(i) == '%') {
          if (i + 2 >= uri.length) {
            throw new IllegalArgumentException(s"malformed percent-escape at index $i in path '$uri'")
          }
          val hi = hexValue(uri.charAt(i + 1))
          val lo = hexValue(uri.charAt(i + 2))
          if (hi < 0 || lo < 0) {
            throw new IllegalArgumentException(s"malformed percent-escape at index $i in path '$uri'")
          }
          buf.put(((hi << 4) | lo).toByte)
          i += 3
        }
        buf.flip()
        try {
          sb.append(StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(buf))
        } catch {
          case e: CharacterCodingException =>
            throw new IllegalArgumentException(s"percent-escapes are not valid UTF-8 in path '$uri'", e)
        }
      }
    }
    sb.toString
  }

  /**
   * A key under which equal paths compare equal regardless of how they were escaped: for a
   * relative path `encodePath(decodePath(path))`, an absolute URI unchanged.
   */
  def canonicalPathKey(path: String): String =
    if (isAbsolute(path)) path else encodePath(decodePath(path))
}
