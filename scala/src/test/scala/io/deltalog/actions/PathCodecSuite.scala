package io.deltalog.actions

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class PathCodecSuite {
  private def check(raw: String, encoded: String): Unit = {
    assertEquals(encoded, PathCodec.encodePath(raw), s"encode($raw)")
    assertEquals(raw, PathCodec.decodePath(encoded), s"decode($encoded)")
  }

  @Test def relativePaths(): Unit = {
    check("part-00000-abc.c000.snappy.parquet", "part-00000-abc.c000.snappy.parquet")
    check("city=New York/f.parquet", "city=New%20York/f.parquet")
    check("a%b", "a%25b")
    check("t=17%3A01%3A00/f", "t=17%253A01%253A00/f")
    check("t=17:01:00/f", "t=17%3A01%3A00/f")
    check("x-_.!~*'();@&=+$,/y", "x-_.!~*'();@&=+$,/y")
    check("a#b?c[d]e{f}g\"h<i>j\\k^l`m|n", "a%23b%3Fc%5Bd%5De%7Bf%7Dg%22h%3Ci%3Ej%5Ck%5El%60m%7Cn")
    check("ünïcødé/日本/😀", "ünïcødé/日本/😀")
    check("tab\there\nnl", "tab%09here%0Anl")
    check("nbsp\u00a0x\u2003y\u0085z", "nbsp%C2%A0x%E2%80%83y%C2%85z")
    check("", "")
  }

  @Test def absoluteUrisAreUnchangedByEncode(): Unit = {
    Seq("s3://bucket/a b/c", "file:/tmp/x y", "abfss://c@acct.dfs.core.windows.net/p", "hdfs://nn:8020/p%20q")
      .foreach(p => assertEquals(p, PathCodec.encodePath(p)))
    assertTrue(PathCodec.isAbsolute("s3a://b/k"))
    assertFalse(PathCodec.isAbsolute("c:d"))
    assertFalse(PathCodec.isAbsolute("1s://x"))
    assertEquals("s3://b/a b", PathCodec.decodePath("s3://b/a%20b"))
  }

  @Test def decodeIsLenientOnLowercaseAndKeepsPlus(): Unit = {
    assertEquals("a:b", PathCodec.decodePath("a%3ab"))
    assertEquals("a+b", PathCodec.decodePath("a+b"))
    assertEquals("é", PathCodec.decodePath("%C3%A9"))
  }

  @Test def malformedEscapes(): Unit = {
    Seq("a%", "a%2", "a%zz", "%C3", "%FF%FE").foreach { p =>
      val e = assertThrows(classOf[IllegalArgumentException], () => { PathCodec.decodePath(p); () }, p)
      assertTrue(e.getMessage.contains(s"'$p'"), e.getMessage)
    }
  }

  @Test def canonicalKeys(): Unit = {
    assertEquals("a%20b", PathCodec.canonicalPathKey("a%20b"))
    assertEquals("a%20b", PathCodec.canonicalPathKey("a b"))
    assertEquals("a%3Ab", PathCodec.canonicalPathKey("a%3ab"))
    assertEquals("a%3Ab", PathCodec.canonicalPathKey("a:b"))
    assertEquals("s3://b/a b", PathCodec.canonicalPathKey("s3://b/a b"))
    assertEquals(AddFile("a b", Map.empty, 1L, 1L).logicalFileKey, RemoveFile("a%20b").logicalFileKey)
  }

  @Test def isAbsoluteMatchesTheSchemeRegex(): Unit = {
    val regex = java.util.regex.Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:/")
    val cases = Seq("", "s", "s:", "s:/", "s://", "S3a+b.c-d:/x", "a:b", ":/x", "/a:/b", "1a:/x", "a b:/x",
      "part-00000-abc.c000.snappy.parquet", "x=1/y:/z", "é:/x", "a\u0000:/", "file:/tmp", "file:///tmp",
      "hdfs://nn:8020/p", "abc-def.ghi", "ab:c:/d", "a+:/", "a_b:/c")
    cases.foreach(p => assertEquals(regex.matcher(p).lookingAt(), PathCodec.isAbsolute(p), s"isAbsolute($p)"))
  }

  @Test def plainPathsAreTheirOwnCanonicalKey(): Unit = {
    Seq("part-00000-abc.c000.snappy.parquet", "x=1/y=2/f.parquet", "/abs/path", "x-_.!~*'();@&=+$,/y", "")
      .foreach { p =>
        assertTrue(PathCodec.isPlain(p), p)
        assertEquals(PathCodec.canonicalPathKey(p), p)
        assertEquals(io.deltalog.log.FileKeys.Local.pathKey(p), p)
      }
    Seq("a%20b", "a b", "a:b", "s3://b/k", "file:/x", "ü", "a#b").foreach(p => assertFalse(PathCodec.isPlain(p), p))
  }

  @Test def wordTestAcceptsExactlyLettersDigitsAndDotDashSlashUnderscore(): Unit = {
    // every ASCII byte in every position, the others a letter: the word-at-a-time test must agree
    // with the per-character definition of the subset
    val common = (('a' to 'z') ++ ('A' to 'Z') ++ ('0' to '9') ++ "._/-").toSet
    for (pos <- 0 until 8; b <- 0 until 128) {
      val bytes = Array.fill[Byte](8)('k'.toByte)
      bytes(pos) = b.toByte
      val w = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong
      assertEquals(common(b.toChar), PathCodec.commonWord(w), s"byte $b at $pos")
    }
    val rnd = new scala.util.Random(5)
    for (_ <- 0 until 20000) {
      val bytes = Array.fill[Byte](8)(rnd.nextInt(128).toByte)
      val w = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong
      assertEquals(bytes.forall(b => common(b.toChar)), PathCodec.commonWord(w), bytes.mkString(","))
    }
  }

  @Test def plainPathHashOfBytesEqualsHashOfTheString(): Unit = {
    val rnd = new scala.util.Random(3)
    val chars = ('a' to 'z') ++ ('0' to '9') ++ "-_.!~*'();@&=+$,/=".toSeq
    val plain = Seq("", "a", "part-00000-abc.c000.snappy.parquet", "x=1/y=2/f.parquet", "/abs/path") ++
      (1 to 300).map(_ => Seq.fill(rnd.nextInt(90))(chars(rnd.nextInt(chars.size))).mkString)
    val notPlain = Seq("a%20b", "a b", "a:b", "s3://b/k", "file:/x", "ü", "a#b", "part-0000000000:1", "abcdefgh\u0000",
      "abcdefghijk%", "abcdefghijklmno ", "abcdefghü")
    def bytesHash(p: String, order: java.nio.ByteOrder): Long = {
      val b = ("xyz" + p + "q").getBytes(java.nio.charset.StandardCharsets.UTF_8) // inside a larger buffer
      PathCodec.plainPathHash(java.nio.ByteBuffer.wrap(b).order(order), 3, b.length - 4)
    }
    for (p <- plain) {
      val h = PathCodec.plainPathHash(p)
      assertNotEquals(Long.MinValue, h, p)
      assertEquals(h, bytesHash(p, java.nio.ByteOrder.LITTLE_ENDIAN), p)
      assertEquals(h, bytesHash(p, java.nio.ByteOrder.BIG_ENDIAN), p)
    }
    for (p <- notPlain) {
      assertFalse(PathCodec.isPlain(p), p)
      assertEquals(Long.MinValue, PathCodec.plainPathHash(p), p)
      assertEquals(Long.MinValue, bytesHash(p, java.nio.ByteOrder.LITTLE_ENDIAN), p)
    }
    // distinct paths rarely collide (a Bloom filter over these hashes must stay selective)
    assertEquals(plain.distinct.size, plain.distinct.map(PathCodec.plainPathHash).distinct.size)
    assertNotEquals(PathCodec.plainPathHash("ab"), PathCodec.plainPathHash("ab\u0000".take(2) + "c"))
  }
}
