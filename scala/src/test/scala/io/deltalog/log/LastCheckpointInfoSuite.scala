package io.deltalog.log

import com.fasterxml.jackson.databind.ObjectMapper
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class LastCheckpointInfoSuite {
  import LastCheckpointInfo.Checksum
  import LogTestFiles._

  private val mapper = new ObjectMapper()

  /** The example of PROTOCOL.md, section "JSON checksum". */
  private val specExample =
    """{"k0":"'v 0'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}"""

  @Test def specTestVector(): Unit = {
    val canonical =
      """"k0"="%27v%200%27","k1"+"k2"=2,"k1"+"k3"+0="v3","k1"+"k3"+1+0=1,"k1"+"k3"+1+1=2,"k1"+"k3"+2+"k4"="v4","k1"+"k3"+2+"k5"+0="v5","k1"+"k3"+2+"k5"+1="v6","k1"+"k3"+2+"k5"+2="v7""""
    assertEquals(canonical, Checksum.canonicalize(specExample, Checksum.SpecOrder))
    assertEquals(canonical, Checksum.canonicalize(specExample, Checksum.SparkOrder))
    assertEquals("6a92d155a59bf2eecbd4b4ec7fd1f875", Checksum.compute(specExample, Checksum.SpecOrder))
    assertEquals("6a92d155a59bf2eecbd4b4ec7fd1f875", Checksum.compute(specExample, Checksum.SparkOrder))
  }

  @Test def urlEncoding(): Unit = {
    assertEquals("\"aZ09-._~\"", Checksum.encode("aZ09-._~"))
    assertEquals("\"%20%2B%3D%2C%22%25%3E%2F\"", Checksum.encode(" +=,\"%>/"))
    assertEquals("\"%C3%A9%F0%9F%98%80\"", Checksum.encode("é😀"))
    assertEquals("\"https%3A%2F%2Fdelta.io\"", Checksum.encode("https://delta.io"))
  }

  @Test def canonicalFormRules(): Unit = {
    val json = """{"a": 10, "b": {"y": null, "x": "https://delta.io"}, "t": true, "f": false, "d": 3.14, "e": [], "o": {}}"""
    assertEquals(""""a"=10,"b"+"x"="https%3A%2F%2Fdelta.io","b"+"y"=null,"d"=3.14,"f"=false,"t"=true""",
      Checksum.canonicalize(json, Checksum.SpecOrder))
    assertEquals(""""k1"="v1","k3"=23""", Checksum.canonicalize("""{"k1": "v1", "checksum": "<anything>", "k3": 23}""", Checksum.SpecOrder))
    // Only the top-level checksum is dropped.
    assertEquals(""""a"+"checksum"=1""", Checksum.canonicalize("""{"a": {"checksum": 1}}""", Checksum.SpecOrder))
  }

  @Test def ordersDifferForLongArraysAndBothAreAccepted(): Unit = {
    val json = """{"version":1,"size":2,"a":[0,1,2,3,4,5,6,7,8,9,10,11]}"""
    val spark = Checksum.canonicalize(json, Checksum.SparkOrder)
    val spec = Checksum.canonicalize(json, Checksum.SpecOrder)
    assertNotEquals(spark, spec)
    assertTrue(spark.startsWith(""""a"+0=0,"a"+10=10,"a"+11=11,"a"+1=1,"""), spark)
    assertTrue(spec.startsWith(""""a"+0=0,"a"+1=1,"a"+10=10,"a"+11=11,"a"+2=2,"""), spec)
    val sparkSum = Checksum.compute(json, Checksum.SparkOrder)
    val specSum = Checksum.compute(json, Checksum.SpecOrder)
    assertNotEquals(sparkSum, specSum)
    def withSum(s: String) = json.dropRight(1) + s""","checksum":"$s"}"""
    assertEquals(Right(1L), LastCheckpointInfo.fromJson(withSum(sparkSum)).map(_.version))
    assertEquals(Right(1L), LastCheckpointInfo.fromJson(withSum(specSum)).map(_.version))
    assertTrue(LastCheckpointInfo.fromJson(withSum("0" * 32)).isLeft)
  }

  @Test def acceptsDeltaSparkWrittenFile(): Unit = {
    // Written by delta-spark (conformance corpus, delta-rs/data_err_logs_table_g).
    val text = scala.io.Source.fromFile(
      io.deltalog.ConformanceCorpus.resolve("delta-rs/data_err_logs_table_g/_delta_log/_last_checkpoint").toFile,
      "UTF-8").mkString
    val info = LastCheckpointInfo.fromJson(text)
    assertTrue(info.isRight, info.toString)
    val i = info.toOption.get
    assertEquals(10L, i.version)
    assertEquals(102L, i.size)
    assertEquals(Some(21615L), i.sizeInBytes)
    assertEquals(Some(100L), i.numOfAddFiles)
    assertEquals(Some("94a578f92841fa7ba9cdee96b5905fdb"), i.checksum)
    assertEquals("struct", i.checkpointSchema.get.get("type").asText())
    // Re-serialising reproduces the same checksum (same content, delta-spark order).
    assertEquals(mapper.readTree(text), mapper.readTree(LastCheckpointInfo.toJson(i)))
  }

  @Test def writeFieldOrderAndChecksum(): Unit = {
    val schema = mapper.readTree("""{"type":"struct","fields":[]}""")
    val info = LastCheckpointInfo(7, 12, parts = Some(3), sizeInBytes = Some(100), numOfAddFiles = Some(9),
      checkpointSchema = Some(schema), checksum = Some("stale"))
    val json = LastCheckpointInfo.toJson(info)
    val keys = {
      val it = mapper.readTree(json).fieldNames()
      Iterator.continually(it).takeWhile(_.hasNext).map(_.next()).toList
    }
    assertEquals(List("version", "size", "parts", "sizeInBytes", "numOfAddFiles", "checkpointSchema", "checksum"), keys)
    assertTrue(json.startsWith("""{"version":7,"size":12,"parts":3,"""), json)
    val stored = mapper.readTree(json).get("checksum").asText()
    assertEquals(Checksum.compute(json, Checksum.SparkOrder), stored)
    assertFalse(json.contains("\n"))
    val back = LastCheckpointInfo.fromJson(json).toOption.get
    assertEquals(info.copy(checksum = Some(stored)), back)
    // Minimal info: only version and size.
    assertEquals("""{"version":0,"size":-1""", LastCheckpointInfo.toJson(LastCheckpointInfo(0, -1)).split(",\"checksum\"")(0))
  }

  @Test def writeAndReadThroughLogStore(): Unit = {
    val (_, log) = newTable()
    val store = LogStore(fs)
    val info = LastCheckpointInfo(5, 10, sizeInBytes = Some(1234), v2Checkpoint =
      Some(mapper.readTree("""{"path":"00000000000000000005.checkpoint.u.json","sizeInBytes":1,"modificationTime":2}""")))
    LastCheckpointInfo.write(store, log, info)
    val read = LastCheckpointInfo.read(fs, log).get
    assertEquals(5L, read.version)
    assertEquals(Some("00000000000000000005.checkpoint.u.json"), read.v2CheckpointFileName)
    LastCheckpointInfo.write(store, log, info.copy(version = 6))
    assertEquals(6L, LastCheckpointInfo.read(fs, log).get.version)
    assertEquals(Seq("_last_checkpoint"), listNames(log))
  }

  @Test def unusableFilesReadAsNone(): Unit = {
    val (_, log) = newTable()
    assertEquals(None, LastCheckpointInfo.read(fs, log)) // missing
    Seq(
      "", "   \n", "not json", "{\"version\":1,", "[1,2]", "{\"size\":1}", "{\"version\":1}",
      "{\"version\":\"1\",\"size\":1}", "{\"version\":1.5,\"size\":1}", "{\"version\":-1,\"size\":1}",
      "{\"version\":1,\"size\":1,\"version\":2}", // duplicate key
      "{\"version\":1,\"size\":1,\"checksum\":\"00000000000000000000000000000000\"}",
      "{\"version\":1,\"size\":1,\"checksum\":5}",
      "{\"version\":1,\"size\":1} {\"version\":2,\"size\":1}",
      "{\"version\":1,\"size\":1,\"parts\":0}",
      "{\"version\":1,\"size\":{\"n\":1}}", "{\"version\":[1],\"size\":1}", "{\"version\":true,\"size\":1}",
      "{\"version\":123456789012345678901234567890,\"size\":1}", // past a long
      "{\"version\":1,\"size\":1,\"x\":{\"a\":1,\"a\":2}}", // duplicate key in a skipped object
      "5", "null", "[1] 2"
    ).foreach { text =>
      put(log, "_last_checkpoint", text)
      assertEquals(None, LastCheckpointInfo.read(fs, log), s"content: $text")
    }
    // Torn write: a valid-looking prefix of a longer file with a checksum.
    val full = LastCheckpointInfo.toJson(LastCheckpointInfo(12, 40, sizeInBytes = Some(999)))
    put(log, "_last_checkpoint", full.replace("999", "99"))
    assertEquals(None, LastCheckpointInfo.read(fs, log))
  }

  @Test def noChecksumIsAccepted(): Unit = {
    val (_, log) = newTable()
    put(log, "_last_checkpoint", """{"version":10,"size":13}""")
    assertEquals(Some(LastCheckpointInfo(10, 13)), LastCheckpointInfo.read(fs, log))
    put(log, "_last_checkpoint", """{"version":10,"size":13,"parts":2,"tags":{"k":"v"},"unknownField":[1]}""" + "\n")
    val i = LastCheckpointInfo.read(fs, log).get
    assertEquals(Some(2), i.parts)
    assertEquals(Some(Map("k" -> "v")), i.tags)
    // nested fields kept as trees, null ones as absent; a null checksum is no checksum
    put(log, "_last_checkpoint", """{"version":3,"size":null,"checkpointSchema":{"type":"struct","fields":[]},""" +
      """"v2Checkpoint":null,"checksum":null,"numOfAddFiles":7,"sizeInBytes":null}""")
    assertEquals(None, LastCheckpointInfo.read(fs, log), "size must not be null")
    put(log, "_last_checkpoint", """{"version":3,"size":4,"checkpointSchema":{"type":"struct","fields":[]},""" +
      """"v2Checkpoint":null,"checksum":null,"numOfAddFiles":7,"sizeInBytes":null}""")
    val n = LastCheckpointInfo.read(fs, log).get
    assertEquals((3L, 4L, Some(7L), None, None, None), (n.version, n.size, n.numOfAddFiles, n.sizeInBytes, n.v2Checkpoint, n.checksum))
    assertEquals("struct", n.checkpointSchema.get.get("type").asText())
  }

  @Test def numbersAreCheckedVerbatimOrAsDeltaSparkRendersThem(): Unit = {
    // delta-spark renders doubles via Jackson's tree (1.0E10); the spec says verbatim (1e10).
    val json = """{"version":1,"size":1,"x":1e10}"""
    val verbatim = Checksum.compute(json, Checksum.SparkOrder, Checksum.Verbatim)
    val tree = Checksum.compute(json, Checksum.SparkOrder, Checksum.JacksonTree)
    assertNotEquals(verbatim, tree)
    Seq(verbatim, tree).foreach { s =>
      assertTrue(LastCheckpointInfo.fromJson(json.dropRight(1) + s""","checksum":"$s"}""").isRight)
    }
  }
}
