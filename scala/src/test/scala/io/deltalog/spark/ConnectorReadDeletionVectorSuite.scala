package io.deltalog.spark

import java.io.{DataOutputStream, FileOutputStream}
import java.nio.file.Files
import java.util.zip.CRC32

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.actions.DeletionVectorDescriptor
import io.deltalog.dv.{DeletionVectorLoadException, DeletionVectorLoader, RoaringBitmapArray}
import io.deltalog.spark.ConnectorReadTestSupport._

/** Deletion vector loading (io.deltalog.dv): bitmap formats and the three storage types. */
class ConnectorReadDeletionVectorSuite {
  private val conf = new Configuration()

  @Test def portableBitmapRoundTripIncludingHighRowIndexes(): Unit = {
    val rows = Seq(0L, 3L, 65536L, 1L << 32, (5L << 32) + 7)
    val bitmap = RoaringBitmapArray.deserialize(RoaringBitmapArray.serializePortable(rows: _*))
    assertEquals(rows, bitmap.toArray.toSeq)
    assertEquals(5L, bitmap.cardinality)
    assertTrue(bitmap.contains(1L << 32))
    assertFalse(bitmap.contains(1L))
    assertFalse(bitmap.contains(99L << 32))
  }

  @Test def unknownMagicIsRejected(): Unit =
    assertThrows(classOf[IllegalArgumentException], () => RoaringBitmapArray.deserialize(Array[Byte](1, 2, 3, 4, 0, 0, 0, 0)))

  @Test def inlineDescriptor(): Unit = {
    val dv = DeletionVectorDescriptor.inline(RoaringBitmapArray.serializePortable(2L, 4L), 2L)
    val b = DeletionVectorLoader.load(dv, "file:/t", "f.parquet", conf)
    assertEquals(Seq(2L, 4L), b.toArray.toSeq)
    val wrongCardinality = dv.copy(cardinality = 3L)
    val e = assertThrows(classOf[DeletionVectorLoadException], () => DeletionVectorLoader.load(wrongCardinality, "file:/t", "f.parquet", conf))
    assertTrue(e.getMessage.contains("f.parquet"), e.getMessage)
  }

  @Test def inlineDescriptorWithPaddedLastGroup(): Unit = {
    // corpus cdf-table-with-dv v5: the last Z85 group is "##" + 3 digits for the last 2 bytes
    // (Rust z85 crate); delta-rs reads row 3 from it
    val dv = DeletionVectorDescriptor(DeletionVectorDescriptor.Inline,
      "^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093", None, 34, 1L)
    assertEquals(Seq(3L), DeletionVectorLoader.load(dv, "file:/t", "f.parquet", conf).toArray.toSeq)
  }

  /** Writes a DV file in delta-spark's layout (version byte, then size / bitmap / CRC) and returns the offset. */
  private def writeDvFile(file: java.nio.file.Path, bitmap: Array[Byte], corruptCrc: Boolean = false): Int = {
    val out = new DataOutputStream(new FileOutputStream(file.toFile))
    try {
      out.writeByte(1)
      out.writeInt(bitmap.length)
      out.write(bitmap)
      val crc = new CRC32(); crc.update(bitmap)
      out.writeInt(crc.getValue.toInt + (if (corruptCrc) 1 else 0))
    } finally out.close()
    1
  }

  @Test def uuidRelativeAndAbsoluteDescriptors(): Unit = {
    val root = TestDirs.create("dv-table")
    val uuid = java.util.UUID.randomUUID()
    val bitmap = RoaringBitmapArray.serializePortable(1L, 9L, 10L)
    Files.createDirectories(root.resolve("ab"))
    val file = root.resolve(s"ab/deletion_vector_$uuid.bin")
    val offset = writeDvFile(file, bitmap)
    val u = DeletionVectorDescriptor.onDisk(uuid, "ab", offset, bitmap.length, 3L)
    val tableUri = root.toUri.toString
    assertEquals(Seq(1L, 9L, 10L), DeletionVectorLoader.load(u, tableUri, "x.parquet", conf).toArray.toSeq)
    val p = DeletionVectorDescriptor(DeletionVectorDescriptor.AbsolutePath, file.toUri.toString, Some(offset), bitmap.length, 3L)
    assertEquals(Seq(1L, 9L, 10L), DeletionVectorLoader.load(p, tableUri, "x.parquet", conf).toArray.toSeq)
  }

  @Test def damagedOrMissingFilesAreTypedErrors(): Unit = {
    val root = TestDirs.create("dv-table")
    val uuid = java.util.UUID.randomUUID()
    val bitmap = RoaringBitmapArray.serializePortable(1L)
    writeDvFile(root.resolve(s"deletion_vector_$uuid.bin"), bitmap, corruptCrc = true)
    val dv = DeletionVectorDescriptor.onDisk(uuid, "", 1, bitmap.length, 1L)
    val crc = assertThrows(classOf[DeletionVectorLoadException], () => DeletionVectorLoader.load(dv, root.toUri.toString, "d.parquet", conf))
    assertTrue(crc.getMessage.contains("CRC"), crc.getMessage)
    val size = assertThrows(classOf[DeletionVectorLoadException],
      () => DeletionVectorLoader.load(dv.copy(sizeInBytes = bitmap.length + 4), root.toUri.toString, "d.parquet", conf))
    assertTrue(size.getMessage.contains("size"), size.getMessage)
    val missing = DeletionVectorDescriptor.onDisk(java.util.UUID.randomUUID(), "", 1, bitmap.length, 1L)
    val e = assertThrows(classOf[DeletionVectorLoadException], () => DeletionVectorLoader.load(missing, root.toUri.toString, "d.parquet", conf))
    assertTrue(e.getMessage.contains("does not exist") && e.getMessage.contains("d.parquet"), e.getMessage)
  }

  @Test def corpusDeletionVectorMatchesItsDescriptor(): Unit = {
    // table-with-dv-small: one file of 10 rows (values 0..9), rows 0 and 9 deleted
    val path = table("delta-kernel-rs/table-with-dv-small")
    val snapshot = io.deltalog.log.DeltaLog.forTable(path, conf).update()
    val add = snapshot.allFiles.toSeq.head
    val bitmap = DeletionVectorLoader.load(add.deletionVector.get, snapshot.deltaLog.tablePath.toString, add.path, conf)
    assertEquals(Seq(0L, 9L), bitmap.toArray.toSeq)
  }

  @Test def missingDeletionVectorFileFailsTheRead(): Unit = {
    val dir = copyTable("delta-kernel-rs/table-with-dv-small")
    Files.list(dir).filter(_.getFileName.toString.startsWith("deletion_vector_")).forEach(Files.delete(_))
    val e = assertThrows(classOf[Exception], () => read(dir.toString).collect())
    var c: Throwable = e
    while (c != null && !c.isInstanceOf[DeletionVectorLoadException]) c = c.getCause
    assertNotNull(c, s"expected a DeletionVectorLoadException cause, got $e")
  }
}
