package io.deltalog.api

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{AfterEach, BeforeEach, Test}

import io.deltalog.TestDirs
import io.deltalog.actions.Action
import io.deltalog.exceptions._
import io.deltalog.expressions.PredicateParseException

/** The py4j surface of transactions: JSON / NDJSON in and out, typed errors, the CLI tool. */
class TxnApiSuite {
  private var dir: Path = _

  @BeforeEach def setUp(): Unit = {
    dir = TestDirs.create("txnapi-")
    TableApi.clearCache()
  }

  @AfterEach def tearDown(): Unit = {
    TableApi.clearCache()
    val files = Files.walk(dir)
    try files.sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.deleteIfExists(p))
    finally files.close()
  }

  private def table(name: String = "t"): String = dir.resolve(name).toString
  private def json(s: String): JsonNode = Action.mapper.readTree(s)

  private val schema =
    """{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},""" +
      """{"name":"p","type":"string","nullable":true,"metadata":{}}]}"""

  private def metadataBody(id: String = "11111111-2222-3333-4444-555555555555",
      conf: String = "{}"): String =
    s"""{"id":"$id","format":{"provider":"parquet","options":{}},"schemaString":${Action.mapper.writeValueAsString(schema)},""" +
      s""""partitionColumns":["p"],"configuration":$conf,"createdTime":1}"""

  private def add(path: String, p: String): String =
    s"""{"add":{"path":"$path","partitionValues":{"p":"$p"},"size":10,"modificationTime":1,"dataChange":true}}"""

  private def remove(path: String, p: String): String =
    s"""{"remove":{"path":"$path","deletionTimestamp":2,"dataChange":true,"partitionValues":{"p":"$p"}}}"""

  private def create(t: String, files: String*): Long = {
    val h = TxnApi.startNew(t)
    assertEquals(-1L, h.readVersion)
    val ndjson = (s"""{"metaData":${metadataBody()}}""" +: files).mkString("", "\n", "\n")
    h.commit(ndjson, "CREATE TABLE", """{"isManaged":"false","partitionBy":["p"]}""", null)
  }

  @Test def createThenAppendAndReadBack(): Unit = {
    val t = table()
    assertEquals(0L, create(t, add("p=a/1.parquet", "a")))
    val h = TxnApi.start(t)
    assertEquals(0L, h.readVersion)
    assertEquals("11111111-2222-3333-4444-555555555555", json(h.metadataJson).get("id").asText())
    assertEquals(1, json(h.protocolJson).get("minReaderVersion").asInt())
    assertEquals(1L, h.commit(add("p=b/2.parquet", "b") + "\n", "WRITE", """{"mode":"Append"}""", "meta"))
    assertTrue(h.committed)
    assertEquals(1L, h.commitVersion)
    // the shared DeltaLog already knows version 1
    val snap = TableApi.forPath(t)
    assertEquals(1L, snap.version)
    assertEquals(2L, snap.numFiles)
    val ci = json(new String(Files.readAllBytes(dir.resolve("t/_delta_log/00000000000000000001.json")),
      StandardCharsets.UTF_8).linesIterator.next()).get("commitInfo")
    assertEquals("WRITE", ci.get("operation").asText())
    assertEquals("Append", ci.get("operationParameters").get("mode").asText())
    assertEquals("meta", ci.get("userMetadata").asText())
    assertEquals(h.txnId, ci.get("txnId").asText())
  }

  @Test def operationParametersKeepJsonTextOfNonStrings(): Unit = {
    val m = TxnApi.stringMap("""{"a":"x","b":["p"],"c":1,"d":null}""", "p")
    assertEquals(Map("a" -> "x", "b" -> """["p"]""", "c" -> "1", "d" -> null), m)
    assertEquals(Map.empty, TxnApi.stringMap(null, "p"))
    assertThrows(classOf[IllegalArgumentException], () => TxnApi.stringMap("[1]", "p"))
  }

  @Test def filterFilesByPredicates(): Unit = {
    val t = table()
    create(t, add("p=a/1.parquet", "a"), add("p=b/2.parquet", "b"), add("p=c/3.parquet", "c"))
    val h = TxnApi.start(t)
    val a = json(h.filterFiles("""["p = 'a'"]"""))
    assertEquals(Seq("p=a/1.parquet"), a.elements().asScala.map(_.get("path").asText()).toSeq)
    val bc = json(h.filterFiles("""["p IN ('b', 'c')", "p <> 'c'"]"""))
    assertEquals(Seq("p=b/2.parquet"), bc.elements().asScala.map(_.get("path").asText()).toSeq)
    assertEquals(3, json(h.filterAllFiles()).size())
    assertThrows(classOf[PredicateParseException], () => h.filterFiles("""["p = = 1"]"""))
    assertThrows(classOf[IllegalArgumentException], () => h.filterFiles("""{"p":1}"""))
  }

  @Test def conflictsAreTyped(): Unit = {
    val t = table()
    create(t, add("p=a/1.parquet", "a"), add("p=b/2.parquet", "b"))
    // delete vs delete
    val (d1, d2) = (TxnApi.start(t), TxnApi.start(t))
    d1.commit(remove("p=a/1.parquet", "a"), "DELETE", "{}", null)
    val dd = assertThrows(classOf[ConcurrentDeleteDeleteException],
      () => d2.commit(remove("p=a/1.parquet", "a"), "DELETE", "{}", null))
    assertEquals("DELTA_CONCURRENT_DELETE_DELETE", dd.errorClass)
    assertEquals(1L, dd.winningVersion)
    // read then delete-read
    val (r, d) = (TxnApi.start(t), TxnApi.start(t))
    r.filterFiles("""["p = 'b'"]""")
    d.commit(remove("p=b/2.parquet", "b"), "DELETE", "{}", null)
    val dr = assertThrows(classOf[DeltaConcurrentModificationException],
      () => r.commit(add("p=b/3.parquet", "b"), "WRITE", "{}", null))
    assertEquals("DELTA_CONCURRENT_DELETE_READ", dr.errorClass)
    // same appId
    val (x, y) = (TxnApi.start(t), TxnApi.start(t))
    assertEquals(-1L, x.txnVersion("app"))
    assertEquals(-1L, y.txnVersion("app"))
    val txn = """{"txn":{"appId":"app","version":1,"lastUpdated":5}}"""
    x.commit(txn, "STREAMING UPDATE", "{}", null)
    assertThrows(classOf[ConcurrentTransactionException], () => y.commit(txn, "STREAMING UPDATE", "{}", null))
    assertEquals(1L, TxnApi.start(t).txnVersion("app"))
  }

  @Test def metadataUpdateThroughJson(): Unit = {
    val t = table()
    create(t)
    val (h1, h2) = (TxnApi.start(t), TxnApi.start(t))
    h1.updateMetadata(metadataBody(conf = """{"k":"1"}"""))
    assertEquals("1", json(h1.metadataJson).get("configuration").get("k").asText())
    h2.updateMetadata(metadataBody(conf = """{"k":"2"}"""))
    h1.commit("", "SET TBLPROPERTIES", "{}", null)
    assertThrows(classOf[MetadataChangedException], () => h2.commit("", "SET TBLPROPERTIES", "{}", null))
    assertThrows(classOf[ActionParseException], () => TxnApi.start(t).updateMetadata("""{"id":"x"}"""))
  }

  @Test def startNeedsAnExistingTable(): Unit = {
    assertThrows(classOf[TableNotFoundException], () => TxnApi.start(table("missing")))
    val h = TxnApi.startNew(table("missing"))
    val e = assertThrows(classOf[InvalidCommitException], () => h.commit(add("p=a/1.parquet", "a"), "WRITE", "{}", null))
    assertEquals("DELTA_METADATA_ABSENT", e.errorClass)
  }

  @Test def toolReadsAndRaces(): Unit = {
    val t = table()
    create(t, add("p=a/1.parquet", "a"))
    val out = new java.io.ByteArrayOutputStream()
    val err = new java.io.ByteArrayOutputStream()
    assertEquals(0, TxnTool.run(Seq("read", t), new java.io.PrintStream(out, true), new java.io.PrintStream(err, true)))
    val r = json(out.toString(StandardCharsets.UTF_8).trim)
    assertEquals(0L, r.get("version").asLong())
    assertEquals("p=a/1.parquet", r.get("paths").get(0).asText())
    assertTrue(r.get("checkpointVersion").isNull)
    assertEquals(2, TxnTool.run(Seq("bogus"), new java.io.PrintStream(out), new java.io.PrintStream(err)))
    assertEquals(1, TxnTool.run(Seq("read", table("none")), new java.io.PrintStream(out), new java.io.PrintStream(err)))
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("DELTA_TABLE_NOT_FOUND"))
  }
}
