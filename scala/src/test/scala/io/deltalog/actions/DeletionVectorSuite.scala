package io.deltalog.actions

import java.util.UUID

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class DeletionVectorSuite {
  @Test def z85ReferenceVector(): Unit = {
    // ZeroMQ RFC 32 test vector.
    val bytes = Array(0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B).map(_.toByte)
    assertEquals("HelloWorld", Z85.encode(bytes))
    assertArrayEquals(bytes, Z85.decode("HelloWorld"))
  }

  @Test def z85RoundTripAndPadding(): Unit = {
    val rnd = new scala.util.Random(42)
    for (n <- 0 to 40) {
      val b = new Array[Byte](n); rnd.nextBytes(b)
      val text = Z85.encode(b)
      assertEquals((n + 3) / 4 * 5, text.length)
      assertArrayEquals(b, Z85.decode(text, n))
    }
    assertEquals("00000", Z85.encode(Array[Byte](0)))
    assertEquals("%nSc0", Z85.encode(Array.fill[Byte](4)(-1)))
  }

  @Test def z85RejectsBadInput(): Unit = {
    assertThrows(classOf[IllegalArgumentException], () => { Z85.decode("abcd"); () })
    assertThrows(classOf[IllegalArgumentException], () => { Z85.decode("abc\"e"); () })
    assertThrows(classOf[IllegalArgumentException], () => { Z85.decode("#####"); () }) // > 2^32-1
    assertThrows(classOf[IllegalArgumentException], () => { Z85.decodeUuid("abc"); () })
  }

  @Test def protocolExampleUuidDv(): Unit = {
    val d = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(4), 40, 6L)
    assertEquals(UUID.fromString("d2c639aa-8816-431a-aaf6-d3fe2512ff61"), Z85.decodeUuid("^-aqEH.-t@S}K{vb[*k^"))
    assertEquals("^-aqEH.-t@S}K{vb[*k^", Z85.encodeUuid(UUID.fromString("d2c639aa-8816-431a-aaf6-d3fe2512ff61")))
    assertEquals("s3://mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin",
      d.absolutePath("s3://mytable"))
    assertEquals("s3://mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin",
      d.absolutePath("s3://mytable/"))
    assertEquals("uab^-aqEH.-t@S}K{vb[*k^@4", d.uniqueId)
    assertFalse(d.isInline)
    val noPrefix = d.copy(pathOrInlineDv = "^-aqEH.-t@S}K{vb[*k^", offset = None)
    assertEquals("s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", noPrefix.absolutePath("s3://mytable"))
    assertEquals("u^-aqEH.-t@S}K{vb[*k^", noPrefix.uniqueId)
    assertEquals(0, noPrefix.offsetOrZero)
  }

  @Test def protocolExampleInlineAndAbsoluteDvs(): Unit = {
    val inline = DeletionVectorDescriptor("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", None, 40, 6L)
    assertTrue(inline.isInline)
    assertEquals("iwi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", inline.uniqueId)
    val data = inline.inlineData
    assertEquals(40, data.length)
    // The spec's example is in the legacy "native" RoaringBitmapArray format: magic 1681511376
    // and a bitmap count of 1 (big-endian), then a 32-bit roaring bitmap (cookie 12346, LE).
    val buf = java.nio.ByteBuffer.wrap(data)
    assertEquals(1681511376, buf.getInt(0))
    assertEquals(1, buf.getInt(4))
    assertEquals(12346, buf.order(java.nio.ByteOrder.LITTLE_ENDIAN).getShort(12).toInt)
    assertThrows(classOf[IllegalStateException], () => { inline.absolutePath("s3://t"); () })
    assertEquals(inline, DeletionVectorDescriptor.inline(data, 6L))

    val p = DeletionVectorDescriptor("p", "s3://mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin",
      Some(4), 40, 6L)
    assertEquals(p.pathOrInlineDv, p.absolutePath("s3://other"))
    assertEquals("p" + p.pathOrInlineDv + "@4", p.uniqueId)
  }

  @Test def onDiskFactory(): Unit = {
    val u = UUID.randomUUID()
    val d = DeletionVectorDescriptor.onDisk(u, "zz", 1, 10, 2L)
    assertEquals(s"/t/zz/deletion_vector_$u.bin", d.absolutePath("/t"))
    assertThrows(classOf[IllegalArgumentException], () => { d.copy(pathOrInlineDv = "short").absolutePath("/t"); () })
    assertThrows(classOf[IllegalArgumentException], () => { d.copy(storageType = "q").absolutePath("/t"); () })
  }
}
