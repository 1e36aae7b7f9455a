package io.deltalog.dv

import java.io.{DataInputStream, EOFException}
import java.util.zip.CRC32

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.deltalog.actions.{DeletionVectorDescriptor, PathCodec}
import io.deltalog.exceptions.DeltalogException

/** A deletion vector cannot be loaded (missing file, bad size, CRC mismatch, bad bitmap). */
class DeletionVectorLoadException private (val table: String, val dataFile: String, val dvLocation: String,
    detail: String, cause: Throwable, verbatim: String)
  extends DeltalogException("DELTA_DELETION_VECTOR_INVALID", DeltalogException.messageOr(verbatim,
    s"Table $table: the deletion vector of data file $dataFile ($dvLocation) cannot be read: $detail. " +
      "The DV file was removed or damaged; restore it from a backup (rows of this file cannot be " +
      "filtered without it)."), cause) {
  def this(table: String, dataFile: String, dvLocation: String, detail: String, cause: Throwable) =
    this(table, dataFile, dvLocation, detail, cause, null)
  def this(table: String, dataFile: String, dvLocation: String, detail: String) =
    this(table, dataFile, dvLocation, detail, null, null)
  def this(message: String) = this(null, null, null, null, null, message)
}

/**
 * Loads the deleted-row bitmap of a file from its [[DeletionVectorDescriptor]] (digest §6.2):
 * inline `i` (Z85 in the log), UUID-relative `u` and absolute `p` files (big-endian framing:
 * version byte, then `[int32 size][bitmap][int32 CRC-32]` at `offset`).
 */
object DeletionVectorLoader {

  /**
   * @param tableRoot table root URI (for `u` descriptors and messages)
   * @param dataFile  the data file the DV belongs to (messages only)
   * @throws DeletionVectorLoadException when the DV cannot be read or does not match its descriptor
   */
  def load(dv: DeletionVectorDescriptor, tableRoot: String, dataFile: String, conf: Configuration): RoaringBitmapArray = {
    val location = if (dv.isInline) "inline" else try dv.absolutePath(tableRoot) catch {
      case NonFatal(e) => throw new DeletionVectorLoadException(tableRoot, dataFile, dv.pathOrInlineDv, e.getMessage, e)
    }
    def fail(detail: String, e: Throwable = null): Nothing =
      throw new DeletionVectorLoadException(tableRoot, dataFile, location, detail, e)
    val bytes = if (dv.isInline) {
      try dv.inlineData catch {
        // padded last groups and groups above 2^32-1 occur in the wild (see wrappingZ85)
        case NonFatal(e) => try wrappingZ85(dv.pathOrInlineDv, dv.sizeInBytes) catch {
          case NonFatal(_) => fail(s"invalid Z85 data: ${e.getMessage}", e)
        }
      }
    } else readFromFile(dv, location, conf, fail)
    val bitmap = try RoaringBitmapArray.deserialize(bytes) catch {
      case NonFatal(e) => fail(s"invalid bitmap: ${e.getMessage}", e)
    }
    val card = bitmap.cardinality
    if (card != dv.cardinality) fail(s"the bitmap holds $card rows but the descriptor says ${dv.cardinality}")
    bitmap
  }

  private val Z85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

  /**
   * Lenient Z85 decoding for inline DVs that strict decoding refuses:
   *  - a last group starting with `#` padding (written by the Rust `z85` crate: `k` leading `#`,
   *    then `5 - k` digits for the last `4 - k` bytes);
   *  - groups above 2^32-1, taken modulo 2^32 as delta-spark's decoder does.
   */
  private[dv] def wrappingZ85(text: String, size: Int): Array[Byte] = {
    require(text.length % 5 == 0, s"Z85 text length ${text.length} is not a multiple of 5")
    val out = new java.io.ByteArrayOutputStream(text.length / 5 * 4)
    var i = 0
    while (i < text.length) {
      val group = text.substring(i, i + 5)
      val last = i + 5 == text.length
      val pad = if (last) group.takeWhile(_ == '#').length else 0
      require(pad < 5, "a Z85 group made of padding only")
      var sum = 0L
      group.substring(pad).foreach { c =>
        val d = Z85Alphabet.indexOf(c)
        require(d >= 0, s"invalid Z85 character '$c'")
        sum = sum * 85 + d
      }
      val bytes = 4 - pad
      var b = bytes - 1
      while (b >= 0) { out.write(((sum >>> (8 * b)) & 0xFF).toInt); b -= 1 }
      i += 5
    }
    val all = out.toByteArray
    java.util.Arrays.copyOf(all, math.min(size, all.length))
  }

  private def filePath(location: String): Path =
    if (PathCodec.isAbsolute(location)) new Path(new java.net.URI(location)) else new Path(location)

  private def readFromFile(dv: DeletionVectorDescriptor, location: String, conf: Configuration,
      fail: (String, Throwable) => Nothing): Array[Byte] = {
    val path = try filePath(location) catch { case NonFatal(e) => fail(s"invalid path: ${e.getMessage}", e) }
    val in = try path.getFileSystem(conf).open(path) catch {
      case e: java.io.FileNotFoundException => fail("the file does not exist", e)
      case NonFatal(e) => fail(s"cannot open the file: ${e.getMessage}", e)
    }
    try {
      in.seek(dv.offsetOrZero.toLong)
      val data = new DataInputStream(in)
      val size = data.readInt()
      if (size != dv.sizeInBytes) fail(s"size field is $size at offset ${dv.offsetOrZero}, descriptor says ${dv.sizeInBytes}", null)
      val bytes = new Array[Byte](size)
      data.readFully(bytes)
      val expectedCrc = data.readInt()
      val crc = new CRC32()
      crc.update(bytes)
      if (crc.getValue.toInt != expectedCrc) fail("CRC-32 checksum mismatch", null)
      bytes
    } catch {
      case e: DeletionVectorLoadException => throw e
      case e: EOFException => fail("the file ends before the deletion vector", e)
      case NonFatal(e) => fail(e.getMessage, e)
    } finally in.close()
  }
}
