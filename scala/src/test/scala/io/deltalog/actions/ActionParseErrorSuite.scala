package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.ActionTestSupport._
import io.deltalog.exceptions.ActionParseException

class ActionParseErrorSuite {
  private val dvBody = """{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":40,"cardinality":6}"""

  /** A complete valid body for each action whose required fields we check. */
  private val validBodies: Seq[(String, String)] = Seq(
    "metaData" -> """{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}""",
    "add" -> s"""{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,"deletionVector":$dvBody}""",
    "remove" -> s"""{"path":"p","dataChange":true,"deletionVector":$dvBody}""",
    "cdc" -> """{"path":"p","partitionValues":{},"size":1,"dataChange":false}""",
    "txn" -> """{"appId":"a","version":1}""",
    "domainMetadata" -> """{"domain":"d","configuration":"c","removed":false}""",
    "checkpointMetadata" -> """{"version":1}""",
    "sidecar" -> """{"path":"s","sizeInBytes":1,"modificationTime":1}""")

  private val requiredFields: Map[String, Seq[String]] = Map(
    "metaData" -> Seq("id", "schemaString"),
    "add" -> Seq("path", "size", "modificationTime"),
    "remove" -> Seq("path"),
    "cdc" -> Seq("path", "size"),
    "txn" -> Seq("appId", "version"),
    "domainMetadata" -> Seq("domain", "configuration", "removed"),
    "checkpointMetadata" -> Seq("version"),
    "sidecar" -> Seq("path", "sizeInBytes", "modificationTime"))

  private def lineWith(action: String, body: ObjectNode): String = {
    val o = Action.mapper.createObjectNode()
    o.set[ObjectNode](action, body)
    Action.mapper.writeValueAsString(o)
  }

  private def body(action: String): ObjectNode =
    tree(validBodies.toMap.apply(action)).asInstanceOf[ObjectNode]

  @Test def validBodiesParse(): Unit =
    validBodies.foreach { case (name, b) => assertRoundTrip(s"""{"$name":$b}""") }

  @Test def everyMissingRequiredFieldIsNamed(): Unit = {
    var checked = 0
    for ((action, fields) <- requiredFields; f <- fields) {
      val b = body(action); b.remove(f)
      val e = assertParseError(lineWith(action, b), s"$action.$f", lineNo = 17)
      assertTrue(e.reason.contains("missing"), e.reason)
      val n = body(action); n.putNull(f)
      assertParseError(lineWith(action, n), s"$action.$f")
      checked += 1
    }
    assertEquals(17, checked)
  }

  @Test def everyMissingRequiredDvFieldIsNamed(): Unit = {
    for (action <- Seq("add", "remove"); f <- Seq("storageType", "pathOrInlineDv", "sizeInBytes", "cardinality")) {
      val b = body(action)
      b.get("deletionVector").asInstanceOf[ObjectNode].remove(f)
      assertParseError(lineWith(action, b), s"$action.deletionVector.$f")
    }
  }

  @Test def wrongTypesAreNamed(): Unit = {
    def check(action: String, field: String, json: String, expectedField: String): Unit = {
      val b = body(action)
      b.set[ObjectNode](field, tree(json))
      assertParseError(lineWith(action, b), expectedField)
    }
    check("add", "size", "\"12\"", "add.size")
    check("add", "size", "1.5", "add.size")
    check("add", "size", "1.0", "add.size")
    check("add", "size", "99999999999999999999", "add.size")
    check("add", "modificationTime", "true", "add.modificationTime")
    check("add", "path", "1", "add.path")
    check("add", "dataChange", "\"true\"", "add.dataChange")
    check("add", "dataChange", "1", "add.dataChange")
    check("add", "partitionValues", "[]", "add.partitionValues")
    check("add", "partitionValues", """{"a":1}""", "add.partitionValues")
    check("add", "tags", """{"a":null}""", "add.tags")
    check("add", "stats", """{"numRecords":1}""", "add.stats")
    check("add", "baseRowId", "\"1\"", "add.baseRowId")
    check("add", "deletionVector", "\"x\"", "add.deletionVector")
    check("metaData", "partitionColumns", """["a",1]""", "metaData.partitionColumns")
    check("metaData", "partitionColumns", "\"a\"", "metaData.partitionColumns")
    check("metaData", "configuration", """{"k":true}""", "metaData.configuration")
    check("metaData", "format", """{"provider":5}""", "metaData.format.provider")
    check("metaData", "createdTime", "\"now\"", "metaData.createdTime")
    check("txn", "version", "1e3", "txn.version")
    check("domainMetadata", "removed", "\"false\"", "domainMetadata.removed")
    check("domainMetadata", "configuration", "{}", "domainMetadata.configuration")
    check("sidecar", "sizeInBytes", "-1.5", "sidecar.sizeInBytes")
    check("checkpointMetadata", "tags", "[]", "checkpointMetadata.tags")

    def checkDv(field: String, json: String): Unit = {
      val b = body("add")
      b.get("deletionVector").asInstanceOf[ObjectNode].set[ObjectNode](field, tree(json))
      assertParseError(lineWith("add", b), s"add.deletionVector.$field")
    }
    checkDv("cardinality", "\"6\"")
    checkDv("sizeInBytes", "2147483648") // must fit in an Int
    checkDv("offset", "-2147483649")
    checkDv("storageType", "1")
  }

  @Test def intAndLongLimitsAreAccepted(): Unit = {
    val b = body("add")
    b.put("size", Long.MaxValue)
    val dv = b.get("deletionVector").asInstanceOf[ObjectNode]
    dv.put("sizeInBytes", Int.MaxValue); dv.put("offset", Int.MinValue); dv.put("cardinality", Long.MinValue)
    val a = assertRoundTrip(lineWith("add", b)).asInstanceOf[AddFile]
    assertEquals(Long.MaxValue, a.size)
    assertEquals(Int.MaxValue, a.deletionVector.get.sizeInBytes)
  }

  @Test def malformedLines(): Unit = {
    Seq(
      "{",
      "not json",
      "[]",
      "\"add\"",
      "null",
      "{}",
      """{"add":{"path":"p","size":1,"modificationTime":2},"remove":{"path":"p"}}""",
      """{"txn":{"appId":"a","version":1}} {"txn":{"appId":"a","version":1}}""",
      """{"txn":{"appId":"a","version":1}}x""",
      """{"txn":{"appId":"a","version":1},"txn":{"appId":"a","version":2}}"""
    ).foreach(l => assertParseError(l, ActionCodec.LineField))
  }

  @Test def nonObjectBodies(): Unit = {
    assertParseError("""{"add":[]}""", "add")
    assertParseError("""{"commitInfo":"x"}""", "commitInfo")
    assertParseError("""{"add":null}""", "add")
  }

  @Test def parseLinesReportsOneBasedLineNumbers(): Unit = {
    val lines = Seq("""{"txn":{"appId":"a","version":1}}""", "", """{"txn":{"appId":"a"}}""")
    val e = assertThrows(classOf[ActionParseException], () => { ActionCodec.parseLines(lines, "00000000000000000001.json"); () })
    assertEquals(3, e.lineNumber)
    assertEquals("txn.version", e.field)
    assertEquals("00000000000000000001.json", e.file)
    assertTrue(e.getMessage.contains("00000000000000000001.json line 3"), e.getMessage)
    val mem = assertThrows(classOf[ActionParseException], () => { ActionCodec.parseLine("{"); () })
    assertTrue(mem.getMessage.contains("<memory> line 1"), mem.getMessage)
  }
}
