package io.deltalog.actions

import java.nio.ByteBuffer
import java.util.UUID

/**
 * Z85 (ZeroMQ RFC 32) base-85 text encoding, as used by Delta deletion vectors: every 4 bytes
 * (a big-endian unsigned 32-bit number) become 5 characters of a printable alphabet.
 */
object Z85 {
  private val Alphabet: String =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

  private val Decoder: Array[Int] = {
    val d = Array.fill(128)(-1)
    Alphabet.zipWithIndex.foreach { case (c, i) => d(c.toInt) = i }
    d
  }

  /**
   * Encodes bytes. Input whose length is not a multiple of 4 is padded with zero bytes first
   * (the Delta convention for inline deletion vectors), so the output length is
   * `5 * ceil(n / 4)`.
   */
  def encode(bytes: Array[Byte]): String = {
    val padded =
      if (bytes.length % 4 == 0) bytes
      else java.util.Arrays.copyOf(bytes, (bytes.length + 3) / 4 * 4)
    val sb = new java.lang.StringBuilder(padded.length / 4 * 5)
    val chunk = new Array[Char](5)
    var i = 0
    while (i < padded.length) {
      var value = ((padded(i) & 0xffL) << 24) | ((padded(i + 1) & 0xffL) << 16) |
        ((padded(i + 2) & 0xffL) << 8) | (padded(i + 3) & 0xffL)
      var j = 4
      while (j >= 0) { chunk(j) = Alphabet.charAt((value % 85).toInt); value /= 85; j -= 1 }
      sb.append(chunk)
      i += 4
    }
    sb.toString
  }

  /**
   * Decodes Z85 text (length a multiple of 5) into `4 * length / 5` bytes.
   *
   * @throws IllegalArgumentException on a bad length, a character outside the alphabet, or a
   *                                  5-character group above 2^32 - 1
   */
  def decode(text: String): Array[Byte] = {
    if (text.length % 5 != 0) {
      throw new IllegalArgumentException(s"Z85 text length ${text.length} is not a multiple of 5")
    }
    val out = new Array[Byte](text.length / 5 * 4)
    var i = 0
    var o = 0
    while (i < text.length) {
      var value = 0L
      var j = 0
      while (j < 5) {
        val c = text.charAt(i + j)
        val d = if (c < 128) Decoder(c) else -1
        if (d < 0) throw new IllegalArgumentException(s"invalid Z85 character '$c' at index ${i + j}")
        value = value * 85 + d
        j += 1
      }
      if (value > 0xffffffffL) {
        throw new IllegalArgumentException(s"Z85 group at index $i exceeds 32 bits")
      }
      out(o) = (value >>> 24).toByte
      out(o + 1) = (value >>> 16).toByte
      out(o + 2) = (value >>> 8).toByte
      out(o + 3) = value.toByte
      i += 5
      o += 4
    }
    out
  }

  /** Decodes Z85 text and keeps the first `size` bytes (inline DVs store padded data). */
  def decode(text: String, size: Int): Array[Byte] = {
    val all = decode(text)
    if (size > all.length || size < 0) {
      throw new IllegalArgumentException(s"requested $size bytes but the Z85 text holds ${all.length}")
    }
    if (size == all.length) all else java.util.Arrays.copyOf(all, size)
  }

  /** The 20-character Z85 form of a UUID (16 bytes: most then least significant bits, big-endian). */
  def encodeUuid(uuid: UUID): String = {
    val b = ByteBuffer.allocate(16)
    b.putLong(uuid.getMostSignificantBits).putLong(uuid.getLeastSignificantBits)
    encode(b.array())
  }

  /** Inverse of [[encodeUuid]]; the text must be exactly 20 characters. */
  def decodeUuid(text: String): UUID = {
    if (text.length != 20) {
      throw new IllegalArgumentException(s"a Z85-encoded UUID has 20 characters, got ${text.length}")
    }
    val b = ByteBuffer.wrap(decode(text))
    new UUID(b.getLong, b.getLong)
  }
}
