package io.deltalog.commands

import java.io.DataOutputStream
import java.util.UUID
import java.util.zip.CRC32

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.deltalog.actions.DeletionVectorDescriptor
import io.deltalog.dv.RoaringBitmapArray

/**
 * Writes deletion vectors into a new DV file of the table (digest §6.2): the file is
 * `<table root>/deletion_vector_<uuid>.bin`, a format-version byte `1`, then for each bitmap a
 * 4-byte big-endian size, the portable serialized bitmap and the 4-byte big-endian CRC-32 of those
 * bytes. Each bitmap gets a `u` descriptor whose `offset` points at its size field.
 */
object DeletionVectorWriter {
  val FormatVersion: Int = 1

  /**
   * Writes `bitmaps` (none empty) into one new file under `tableRoot`.
   *
   * @return the file written and one descriptor per bitmap, in order
   */
  def write(tableRoot: Path, conf: Configuration, bitmaps: Seq[RoaringBitmapArray]): (Path, Seq[DeletionVectorDescriptor]) = {
    require(bitmaps.forall(_.cardinality > 0), "an empty deletion vector is never written")
    val uuid = UUID.randomUUID()
    val file = new Path(tableRoot, s"deletion_vector_$uuid.bin")
    val fs = file.getFileSystem(conf)
    val out = new DataOutputStream(fs.create(file, false))
    val descriptors = try {
      out.writeByte(FormatVersion)
      bitmaps.map { b =>
        val offset = out.size()
        val bytes = b.serialize
        val crc = new CRC32()
        crc.update(bytes)
        out.writeInt(bytes.length)
        out.write(bytes)
        out.writeInt(crc.getValue.toInt)
        DeletionVectorDescriptor.onDisk(uuid, "", offset, bytes.length, b.cardinality)
      }
    } finally out.close()
    (file, descriptors)
  }
}
