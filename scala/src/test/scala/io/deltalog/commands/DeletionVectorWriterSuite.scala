package io.deltalog.commands

import java.io.DataInputStream
import java.nio.file.Files
import java.util.zip.CRC32

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.{LongType, StringType}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.actions.{AddFile, DeletionVectorDescriptor}
import io.deltalog.dv.{DeletionVectorLoader, RoaringBitmapArray}

/** DV files written by DELETE (protocol framing, read back by the loader) and the stats proof. */
class DeletionVectorWriterSuite {
  private val conf = new Configuration()

  @Test def writtenDeletionVectorsReadBackThroughTheirDescriptors(): Unit = {
    val root = TestDirs.create("dv-writer")
    val bitmaps = Seq(RoaringBitmapArray.of(0L, 5L, 70000L), RoaringBitmapArray.of(3L, (2L << 32) + 9),
      RoaringBitmapArray.fromIterator(Iterator(1L, 1L, 2L)))
    val (file, descriptors) = DeletionVectorWriter.write(new Path(root.toUri), conf, bitmaps)
    assertTrue(file.getName.startsWith("deletion_vector_") && file.getName.endsWith(".bin"), file.getName)
    assertEquals(3, descriptors.size)
    assertEquals(Some(1), descriptors.head.offset) // right after the version byte
    descriptors.zip(bitmaps).foreach { case (d, b) =>
      assertEquals(DeletionVectorDescriptor.UuidFile, d.storageType)
      assertEquals(20, d.pathOrInlineDv.length)
      assertEquals(b.cardinality, d.cardinality)
      assertEquals(file.toUri.getPath, new Path(d.absolutePath(root.toUri.toString)).toUri.getPath)
      assertEquals(b.toArray.toSeq, DeletionVectorLoader.load(d, root.toUri.toString, "f.parquet", conf).toArray.toSeq)
    }
    // the framing itself: version 1, big-endian size, portable magic (little-endian), big-endian CRC-32
    val in = new DataInputStream(Files.newInputStream(java.nio.file.Paths.get(file.toUri)))
    try {
      assertEquals(1, in.readByte())
      val size = in.readInt()
      assertEquals(descriptors.head.sizeInBytes, size)
      val bytes = new Array[Byte](size); in.readFully(bytes)
      assertEquals(RoaringBitmapArray.PortableMagic,
        java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt)
      val crc = new CRC32(); crc.update(bytes)
      assertEquals(crc.getValue.toInt, in.readInt())
    } finally in.close()
  }

  @Test def serializeEmitsEveryBucketAndUnionMerges(): Unit = {
    val a = RoaringBitmapArray.of((2L << 32) + 1)
    val bytes = a.serialize
    // magic, bucket count 3 (0, 1, 2: empty ones included, as delta-spark writes them)
    assertEquals(3L, java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(4))
    assertEquals(Seq((2L << 32) + 1), RoaringBitmapArray.deserialize(bytes).toArray.toSeq)
    val u = a.union(RoaringBitmapArray.of(4L, (2L << 32) + 1))
    assertEquals(Seq(4L, (2L << 32) + 1), u.toArray.toSeq)
    assertEquals(Some((2L << 32) + 1), u.last)
    assertEquals(None, RoaringBitmapArray.empty.last)
  }

  @Test def emptyBitmapsAreNeverWritten(): Unit =
    assertThrows(classOf[IllegalArgumentException],
      () => DeletionVectorWriter.write(new Path(TestDirs.create("dv-empty").toUri), conf, Seq(RoaringBitmapArray.empty)))

  private val id = AttributeReference("id", LongType)()
  private val name = AttributeReference("name", StringType)()
  private val part = AttributeReference("p", LongType)()

  private def file(stats: String, pv: Map[String, String] = Map("p" -> "1")): AddFile =
    AddFile("f.parquet", pv, 1L, 0L, stats = Some(stats))

  private val proof = (e: Expression) => new StatsProof(e, Set("p"), Map("id" -> "id", "name" -> "name", "p" -> "p"), "UTC")

  @Test def statsProveEveryRowOrNoRow(): Unit = {
    val f = file("""{"numRecords":3,"minValues":{"id":10,"name":"b"},"maxValues":{"id":20,"name":"d"},"nullCount":{"id":0,"name":1}}""")
    assertEquals((true, false), proof(GreaterThanOrEqual(id, Literal(10L))).prove(f))
    assertEquals((false, true), proof(GreaterThan(id, Literal(20L))).prove(f))
    assertEquals((false, false), proof(GreaterThan(id, Literal(15L))).prove(f))
    assertEquals((true, false), proof(LessThan(Literal(5L), id)).prove(f)) // literal on the left
    assertEquals((true, false), proof(GreaterThan(Cast(AttributeReference("id", org.apache.spark.sql.types.IntegerType)(), LongType), Literal(1L))).prove(
      file("""{"numRecords":1,"minValues":{"id":3},"maxValues":{"id":3},"nullCount":{"id":0}}""")))
    // a NULL never matches: name has a null, so "name >= a" holds for the other rows only
    assertEquals((false, false), proof(GreaterThanOrEqual(name, Literal("a"))).prove(f))
    assertEquals((false, true), proof(EqualTo(name, Literal("z"))).prove(f))
    // partition columns are evaluated exactly; AND / OR combine
    assertEquals((true, false), proof(And(EqualTo(part, Literal(1L)), GreaterThan(id, Literal(1L)))).prove(f))
    assertEquals((false, true), proof(And(EqualTo(part, Literal(2L)), GreaterThan(id, Literal(1L)))).prove(f))
    assertEquals((true, false), proof(Or(EqualTo(part, Literal(2L)), GreaterThan(id, Literal(1L)))).prove(f))
    // without stats nothing is proven (except by partition values)
    assertEquals((false, false), proof(GreaterThan(id, Literal(1L))).prove(AddFile("g", Map("p" -> "1"), 1L, 0L)))
    assertEquals((false, false), proof(GreaterThan(id, Literal(1L))).prove(file("""{"numRecords":3}""")))
  }
}
