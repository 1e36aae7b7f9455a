package io.deltalog.api

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.Action
import io.deltalog.exceptions.DeltalogException
import io.deltalog.protocol.TableFeature

class ProtocolApiSuite {
  private def read(s: String): JsonNode = Action.mapper.readTree(s)

  /** Evaluates one case written as JSON and checks `expected` the way the vectors suite does. */
  private def check(caseJson: String, expectedJson: String): Unit = {
    val result = read(ProtocolApi.evaluate(s"[$caseJson]")).get(0)
    VectorCompare.mismatch(read(expectedJson), result).foreach(m => fail(s"$caseJson: $m"))
  }

  private val dvTable = """{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}"""

  @Test def evaluateKeepsOrderAndAcceptsTheFileShape(): Unit = {
    val out = read(ProtocolApi.evaluate(
      """{"cases":[{"name":"a","op":"normalized","protocol":{"minReaderVersion":2,"minWriterVersion":3}},
        |{"name":"b","op":"construct","protocol":{"minReaderVersion":4,"minWriterVersion":7}}]}""".stripMargin))
    assertEquals(2, out.size())
    assertEquals("""{"minReaderVersion":2,"minWriterVersion":3}""", out.get(0).get("protocol").toString)
    assertEquals("DELTA_MALFORMED_LOG_LINE", out.get(1).get("error").asText())
    assertEquals(0, read(ProtocolApi.evaluate("[]")).size())
  }

  @Test def everyOp(): Unit = {
    check("""{"op":"forNewTable","metadata":{"configuration":{"delta.enableDeletionVectors":"true"}}}""",
      """{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],
        |"writerFeatures":["invariants","deletionVectors","appendOnly"]}}""".stripMargin)
    check("""{"op":"forNewTable","metadata":{"configuration":{}},"sessionDefaults":{"spark.databricks.delta.properties.defaults.minWriterVersion":"4"}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":4}}""")
    check("""{"op":"forNewTable","metadata":{"configuration":{},"schema":{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]}}}""",
      """{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["appendOnly","invariants","timestampNtz"]}}""")
    check("""{"op":"forNewTable","metadata":{"configuration":{},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"v\",\"type\":\"variant\",\"nullable\":true,\"metadata\":{}}]}"}}""",
      """{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType"],"writerFeatures":["appendOnly","invariants","variantType"]}}""")
    check("""{"op":"minProtocolComponentsFromMetadata","metadata":{"configuration":{"delta.enableRowTracking":"true"}}}""",
      """{"minReaderVersion":1,"minWriterVersion":7,"features":["domainMetadata","rowTracking"]}""")
    check(s"""{"op":"extractAutomaticallyEnabledFeatures","metadata":{"configuration":{"delta.appendOnly":"true"}},"protocol":$dvTable}""",
      """{"features":["appendOnly","deletionVectors"]}""")
    check("""{"op":"requiredMinimumProtocol","metadata":{"configuration":{"delta.appendOnly":"true","delta.enableDeletionVectors":"true"}}}""",
      """{"minReaderVersion":3,"minWriterVersion":7,"featuresUsed":["appendOnly","deletionVectors"]}""")
    check("""{"op":"checkProtocolRequirements","metadata":{"configuration":{}},"protocol":{"minReaderVersion":1,"minWriterVersion":2}}""",
      """{"protocol":null}""")
    check("""{"op":"checkProtocolRequirements","metadata":{"configuration":{"delta.minReaderVersion":"1"}},"protocol":{"minReaderVersion":1,"minWriterVersion":2}}""",
      """{"error":"DELTA_PROTOCOL_PROPERTY_IN_METADATA","message":"delta.minReaderVersion"}""")
    check("""{"op":"upgradeProtocolFromMetadataForExistingTable","metadata":{"configuration":{"delta.enableChangeDataFeed":"true"}},"protocol":{"minReaderVersion":1,"minWriterVersion":3}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","changeDataFeed","checkConstraints","invariants"]}}""")
    check("""{"op":"upgradeTableProtocol","protocol":{"minReaderVersion":1,"minWriterVersion":2},"readerVersion":2,"writerVersion":5}""",
      """{"protocol":{"minReaderVersion":2,"minWriterVersion":5}}""")
    check("""{"op":"addFeatureSupport","protocol":{"minReaderVersion":1,"minWriterVersion":2},"feature":"domainMetadata"}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","domainMetadata","invariants"]}}""")
    check(s"""{"op":"dropFeatureSupport","protocol":$dvTable,"feature":"deletionVectors"}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":1}}""")
    check(s"""{"op":"merge","protocol":{"minReaderVersion":1,"minWriterVersion":3},"others":[$dvTable]}""",
      """{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["appendOnly","checkConstraints","deletionVectors","invariants"]}}""")
    check("""{"op":"normalized","protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","invariants"]}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}""")
    check("""{"op":"denormalized","protocol":{"minReaderVersion":1,"minWriterVersion":2}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","invariants"]}}""")
    check("""{"op":"denormalizedNormalized","protocol":{"minReaderVersion":2,"minWriterVersion":3}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":3}}""")
    check("""{"op":"withFeature","protocol":{"minReaderVersion":1,"minWriterVersion":2},"feature":"changeDataFeed"}""",
      """{"error":"DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION","message":"changeDataFeed"}""")
    check("""{"op":"implicitlyAndExplicitlySupportedFeatures","protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["x","rowTracking"]}}""",
      """{"features":["rowTracking"]}""")
    check("""{"op":"implicitlySupportedFeatures","protocol":{"minReaderVersion":1,"minWriterVersion":3}}""",
      """{"features":["appendOnly","checkConstraints","invariants"]}""")
    check(s"""{"op":"canUpgradeTo","protocol":{"minReaderVersion":1,"minWriterVersion":2},"to":$dvTable}""", """{"result":false}""")
    check("""{"op":"assertCanUpgradeTo","protocol":{"minReaderVersion":1,"minWriterVersion":2},"to":{"minReaderVersion":1,"minWriterVersion":1}}""",
      """{"error":"DELTA_INVALID_PROTOCOL_DOWNGRADE"}""")
    check(s"""{"op":"checkCanRead","protocol":$dvTable,"client":"deltalog"}""", """{"ok":true}""")
    check(s"""{"op":"checkCanWrite","protocol":$dvTable,"client":{"maxReaderVersion":3,"maxWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}}""",
      """{"error":"DELTA_UNSUPPORTED_FEATURES_FOR_WRITE","message":"deletionVectors"}""")
    check("""{"op":"construct","protocol":{"minReaderVersion":1,"minWriterVersion":2,"extraField":[1]}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":2,"extraField":[1]}}""")
    check("""{"op":"construct","protocol":{"minReaderVersion":3,"minWriterVersion":7,"writerFeatures":[]}}""",
      """{"error":"DELTA_MALFORMED_LOG_LINE","message":"protocol.readerFeatures"}""")
    check("""{"op":"sessionDefaultTableProperties","sessionDefaults":{"spark.databricks.delta.properties.defaults.appendOnly":"true","spark.databricks.delta.properties.defaults.minWriterVersion":"3"}}""",
      """{"properties":{"delta.appendOnly":"true"}}""")
    check("""{"op":"filterProtocolPropsFromTableProps","properties":{"delta.appendOnly":"true","delta.feature.x":"supported"}}""",
      """{"properties":{"delta.appendOnly":"true"}}""")
  }

  @Test def badCasesBecomeInternalErrors(): Unit = {
    check("""{"op":"noSuchOp"}""", """{"error":"INTERNAL_ERROR","message":"noSuchOp"}""")
    check("""{"op":"normalized"}""", """{"error":"INTERNAL_ERROR","message":"protocol"}""")
  }

  @Test def forNewTableEntryPoint(): Unit = {
    assertEquals("""{"minReaderVersion":1,"minWriterVersion":2}""", ProtocolApi.forNewTable("{}", "", "{}"))
    assertEquals("""{"minReaderVersion":1,"minWriterVersion":2}""", ProtocolApi.forNewTable(null, null, null))
    assertEquals("""{"minReaderVersion":2,"minWriterVersion":7,"writerFeatures":["appendOnly","columnMapping","invariants"]}""",
      ProtocolApi.forNewTable("""{"delta.columnMapping.mode":"name"}""", "", ""))
    assertEquals("""{"minReaderVersion":1,"minWriterVersion":1}""", ProtocolApi.forNewTable("{}", "",
      """{"spark.databricks.delta.properties.defaults.ignoreProtocolDefaults":"true"}"""))
    val e = assertThrows(classOf[DeltalogException], () => ProtocolApi.forNewTable("""{"delta.feature.x":"supported"}""", "", "{}"))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG", e.errorClass)
  }

  @Test def featureRegistryJson(): Unit = {
    val reg = read(ProtocolApi.featureRegistryJson())
    assertEquals(TableFeature.all.size, reg.size())
    assertEquals(TableFeature.all.map(_.name), reg.elements().asScala.map(_.get("name").asText()).toSeq)
    val cm = reg.elements().asScala.find(_.get("name").asText() == "columnMapping").get
    assertEquals("""{"name":"columnMapping","readerWriter":true,"legacy":true,"minReaderVersion":2,"minWriterVersion":5,""" +
      """"requiredFeatures":[],"removable":true,"requiresHistoryProtection":true,"autoUpdateExisting":true,""" +
      """"enabledBy":"delta.columnMapping.mode = name | id"}""", cm.toString)
    val ice = reg.elements().asScala.find(_.get("name").asText() == "icebergCompatV3").get
    assertEquals("""["columnMapping","rowTracking"]""", ice.get("requiredFeatures").toString)
    val ntz = reg.elements().asScala.find(_.get("name").asText() == "timestampNtz").get
    assertFalse(ntz.get("autoUpdateExisting").booleanValue())
    assertFalse(ntz.get("requiresHistoryProtection").booleanValue())
  }
}
