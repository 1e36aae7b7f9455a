package io.deltalog.parquet

import java.io.EOFException
import java.nio.ByteBuffer
import java.nio.file.Files

import scala.util.Random

import org.apache.parquet.io.LocalInputFile
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs

/** [[MappedInputFile]] reads what parquet-mr's `LocalInputFile` reads, and fails the same way at the end. */
class MappedInputFileSuite {

  @Test def readsLikeLocalInputFile(): Unit = {
    val rnd = new Random(5)
    val bytes = Array.fill[Byte](100000)(rnd.nextInt().toByte)
    val file = TestDirs.createFile("mapped", ".bin")
    try {
      Files.write(file, bytes)
      val mapped = MappedInputFile(file).newStream()
      val local = new LocalInputFile(file).newStream()
      assertEquals(bytes.length.toLong, MappedInputFile(file).getLength)
      for (_ <- 0 until 200) {
        val at = rnd.nextInt(bytes.length)
        val len = rnd.nextInt(math.min(5000, bytes.length - at) + 1)
        mapped.seek(at); local.seek(at)
        rnd.nextInt(4) match {
          case 0 =>
            val a = new Array[Byte](len); val b = new Array[Byte](len)
            mapped.readFully(a); local.readFully(b)
            assertArrayEquals(b, a)
          case 1 =>
            val a = ByteBuffer.allocate(len); val b = ByteBuffer.allocate(len)
            mapped.readFully(a); local.readFully(b)
            assertEquals(b.flip(), a.flip())
          case 2 =>
            val a = ByteBuffer.allocateDirect(len); val b = ByteBuffer.allocate(len)
            mapped.readFully(a); local.readFully(b)
            assertEquals(b.flip(), a.flip())
            assertEquals(ByteBuffer.wrap(bytes, at, len), a)
          case _ =>
            assertEquals(local.read(), mapped.read())
        }
        assertEquals(local.getPos, mapped.getPos)
      }
      mapped.seek(bytes.length - 3)
      assertThrows(classOf[EOFException], () => mapped.readFully(new Array[Byte](4)))
      assertThrows(classOf[EOFException], () => mapped.readFully(ByteBuffer.allocate(4)))
      mapped.seek(bytes.length)
      assertEquals(-1, mapped.read())
      assertEquals(-1, mapped.read(ByteBuffer.allocate(4)))
      assertThrows(classOf[EOFException], () => mapped.seek(bytes.length + 1L))
      mapped.close(); local.close()
    } finally Files.deleteIfExists(file)
  }

  @Test def emptyFile(): Unit = {
    val file = TestDirs.createFile("mapped-empty", ".bin")
    try {
      val s = MappedInputFile(file).newStream()
      assertEquals(-1, s.read())
      assertThrows(classOf[EOFException], () => s.readFully(new Array[Byte](1)))
    } finally Files.deleteIfExists(file)
  }
}
