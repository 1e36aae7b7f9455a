package io.deltalog.actions

/**
 * Tests on the 8 bytes of a `Long` at once (SWAR), for scans that read text a word at a time
 * (line ends of a commit, the characters of a path).
 */
private[deltalog] object WordBytes {
  /** `0x01` in every byte. */
  val Ones: Long = 0x0101010101010101L
  /** The high bit of every byte. */
  val HighBits: Long = 0x8080808080808080L

  /** `b` in every byte. */
  def repeated(b: Int): Long = (b & 0xFFL) * Ones

  /**
   * Non-zero exactly when `x` has a zero byte; the lowest set bit (one per flagged byte, the
   * high bit) marks the first zero byte of a little-endian word.
   */
  def zeroBytes(x: Long): Long = (x - Ones) & ~x & HighBits
}
