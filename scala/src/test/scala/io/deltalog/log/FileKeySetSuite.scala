package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.PathCodec

/** [[FileKeySet]] against a `java.util.HashSet[String]`, through its byte and string methods. */
class FileKeySetSuite {

  private val samples = Seq("", "a", "part-00000-c000.snappy.parquet", "x=1/part-1.parquet", "é", "日本/😀",
    "a%20b", "file:/tmp/x", "s3://bucket/key", "12345678", "123456789", "\u0000", "\u007f", "\u0080")

  private def bytesAdd(s: FileKeySet, key: String): Boolean = {
    val b = ("xy" + key + "z").getBytes(UTF_8) // the key inside a larger array
    s.add(b, 2, b.length - 3, FileKeySet.hash(b, 2, b.length - 3))
  }

  private def bytesContains(s: FileKeySet, key: String): Boolean = {
    val b = key.getBytes(UTF_8)
    s.contains(b, 0, b.length, FileKeySet.hash(b, 0, b.length))
  }

  @Test def byteAndStringMethodsSeeTheSameKeys(): Unit = {
    for (k <- samples) {
      val viaBytes = new FileKeySet()
      assertTrue(bytesAdd(viaBytes, k), k)
      assertFalse(bytesAdd(viaBytes, k), k)
      assertFalse(viaBytes.add(k), k)
      assertTrue(viaBytes.contains(k), k)
      val viaString = new FileKeySet()
      assertTrue(viaString.add(k), k)
      assertFalse(viaString.add(k), k)
      assertFalse(bytesAdd(viaString, k), k)
      assertTrue(bytesContains(viaString, k), k)
      assertEquals(Seq(k), viaString.iterator.toSeq)
      assertEquals(1, viaString.size)
    }
  }

  @Test def hashOfAnAsciiKeyIsItsStringHashCode(): Unit = {
    (0 to 40).foreach { n =>
      val k = ("part-0123456789abcdefghijklmnopqrstuvwxyz/=.".take(n) + "~" * 40).take(n)
      val b = k.getBytes(UTF_8)
      assertEquals(k.hashCode, FileKeySet.hash(b, 0, b.length), k)
    }
  }

  @Test def unpairedSurrogatesAreKeptApart(): Unit = {
    val s = new FileKeySet()
    val lone = Seq("a\ud800", "a\udc00", "\udc00\ud800", "a?")
    lone.foreach(k => assertTrue(s.add(k), k))
    lone.foreach(k => assertFalse(s.add(k), k))
    lone.foreach(k => assertTrue(s.contains(k), k))
    assertFalse(s.contains("a\ud801"))
    assertEquals(lone.toSet, s.iterator.toSet)
    assertEquals(4, s.size)
  }

  @Test def agreesWithAHashSetWhileGrowing(): Unit = {
    val r = new Random(11)
    val alphabet = "abcxyz0123456789-_./=%é日😀".codePoints.toArray.map(cp => new String(Character.toChars(cp)))
    def key(): String = (0 until r.nextInt(40)).map(_ => alphabet(r.nextInt(alphabet.length))).mkString
    val s = new FileKeySet(4)
    val ref = new java.util.HashSet[String]()
    val keys = (0 until 20000).map(_ => key())
    keys.zipWithIndex.foreach { case (k, i) =>
      val expected = ref.add(k)
      val got = if (i % 2 == 0) s.add(k) else bytesAdd(s, k)
      assertEquals(expected, got, k)
      assertEquals(ref.size, s.size)
    }
    (0 until 5000).foreach { _ =>
      val k = key()
      assertEquals(ref.contains(k), s.contains(k), k)
      assertEquals(ref.contains(k), bytesContains(s, k), k)
    }
    assertEquals(ref.size, s.iterator.size)
    assertEquals(ref, new java.util.HashSet[String](scala.jdk.CollectionConverters.SeqHasAsJava(s.iterator.toSeq).asJava))
  }

  @Test def plainPathBytesMeanAPathCodecPlainPath(): Unit = {
    val r = new Random(5)
    val chars = (0 until 130).map(_.toChar.toString) ++ Seq("é", "😀")
    val paths = samples ++ (0 until 2000).map(_ => (0 until r.nextInt(6)).map(_ => chars(r.nextInt(chars.length))).mkString)
    paths.foreach { p =>
      assertEquals(PathCodec.isPlain(p), p.getBytes(UTF_8).forall(b => PlainAdds.PlainPathByte(b & 0xff)), p)
    }
  }
}
