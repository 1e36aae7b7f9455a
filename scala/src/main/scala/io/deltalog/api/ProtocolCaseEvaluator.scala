package io.deltalog.api

import scala.collection.immutable.VectorMap
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}

import io.deltalog.actions.Action
import io.deltalog.exceptions.{DeltalogAssertionError, DeltalogException}
import io.deltalog.protocol._

/**
 * Runs one case of tests/vectors/protocol_cases.json: `{"name", "op", ...inputs, "expected"}`
 * and returns the result object (`{"protocol": ...}`, `{"features": [...]}`, ... or
 * `{"error": errorClass, "message": ...}`). See [[ProtocolApi.evaluate]].
 */
object ProtocolCaseEvaluator {
  private val nodes = JsonNodeFactory.instance

  /** Evaluates one case; errors become `{"error", "message"}`. */
  def evaluate(testCase: JsonNode): ObjectNode =
    try run(testCase)
    catch {
      case e: DeltalogException => error(e.errorClass, e.getMessage)
      case e: DeltalogAssertionError => error(e.errorClass, e.getMessage)
      case e: Exception => error("INTERNAL_ERROR", s"${e.getClass.getName}: ${e.getMessage}")
    }

  private def error(errorClass: String, message: String): ObjectNode = {
    val o = nodes.objectNode()
    o.put("error", errorClass)
    o.put("message", message)
    o
  }

  private def run(c: JsonNode): ObjectNode = {
    val op = text(c, "op")
    def protocol = Protocol.fromJsonNode(required(c, "protocol"))
    def metadata = parseMetadata(c.get("metadata"))
    def feature = text(c, "feature")
    op match {
      case "forNewTable" =>
        protocolResult(Protocol.forNewTable(metadata, stringMap(c.get("sessionDefaults"))))
      case "minProtocolComponentsFromMetadata" =>
        val (r, w, fs) = Protocol.minProtocolComponentsFromMetadata(metadata)
        val o = nodes.objectNode()
        o.put("minReaderVersion", r)
        o.put("minWriterVersion", w)
        o.set[JsonNode]("features", strings(fs.map(_.name).toSeq.sorted))
        o
      case "extractAutomaticallyEnabledFeatures" =>
        featuresResult(Protocol.extractAutomaticallyEnabledFeatures(metadata, protocol).map(_.name))
      case "requiredMinimumProtocol" =>
        val (r, w, used) = Protocol.requiredMinimumProtocol(metadata)
        val o = nodes.objectNode()
        o.put("minReaderVersion", r)
        o.put("minWriterVersion", w)
        o.set[JsonNode]("featuresUsed", strings(used))
        o
      case "checkProtocolRequirements" =>
        optionalProtocolResult(Protocol.checkProtocolRequirements(metadata, protocol))
      case "upgradeProtocolFromMetadataForExistingTable" =>
        optionalProtocolResult(Protocol.upgradeProtocolFromMetadataForExistingTable(metadata, protocol))
      case "upgradeTableProtocol" =>
        protocolResult(Protocol.upgradeTableProtocol(protocol, int(c, "readerVersion"), int(c, "writerVersion")))
      case "addFeatureSupport" => protocolResult(Protocol.addFeatureSupport(protocol, feature))
      case "dropFeatureSupport" => protocolResult(Protocol.dropFeatureSupport(protocol, feature))
      case "merge" =>
        val others = Option(c.get("others")).filter(_.isArray).map(_.elements().asScala.toSeq)
          .getOrElse(Nil).map(Protocol.fromJsonNode)
        protocolResult(protocol.merge(others: _*))
      case "normalized" => protocolResult(protocol.normalized)
      case "denormalized" => protocolResult(protocol.denormalized)
      case "denormalizedNormalized" => protocolResult(protocol.denormalizedNormalized)
      case "withFeature" => protocolResult(protocol.withFeature(feature))
      case "implicitlyAndExplicitlySupportedFeatures" =>
        featuresResult(protocol.implicitlyAndExplicitlySupportedFeatures.map(_.name))
      case "implicitlySupportedFeatures" => featuresResult(protocol.implicitlySupportedFeatures.map(_.name))
      case "canUpgradeTo" =>
        val o = nodes.objectNode()
        o.put("result", protocol.canUpgradeTo(Protocol.fromJsonNode(required(c, "to"))))
        o
      case "assertCanUpgradeTo" =>
        Protocol.assertCanUpgradeTo(protocol, Protocol.fromJsonNode(required(c, "to")))
        ok()
      case "checkCanRead" => Protocol.checkCanRead(protocol, client(c.get("client")), tableName(c)); ok()
      case "checkCanWrite" => Protocol.checkCanWrite(protocol, client(c.get("client")), tableName(c)); ok()
      case "construct" => protocolResult(protocol)
      case "sessionDefaultTableProperties" =>
        val o = nodes.objectNode()
        o.set[JsonNode]("properties", stringMapNode(
          Protocol.sessionDefaultTableProperties(stringMap(c.get("sessionDefaults")))))
        o
      case "filterProtocolPropsFromTableProps" =>
        val o = nodes.objectNode()
        o.set[JsonNode]("properties", stringMapNode(
          Protocol.filterProtocolPropsFromTableProps(stringMap(c.get("properties")))))
        o
      case other => throw new IllegalArgumentException(s"unknown op '$other'")
    }
  }

  // ---------------------------------------------------------------------------- inputs

  private def required(c: JsonNode, name: String): JsonNode = {
    val v = c.get(name)
    if (v == null) throw new IllegalArgumentException(s"case is missing '$name'")
    v
  }

  private def text(c: JsonNode, name: String): String = required(c, name).asText()

  private def int(c: JsonNode, name: String): Int = {
    val v = required(c, name)
    if (!v.canConvertToInt) throw new IllegalArgumentException(s"'$name' must be an integer")
    v.intValue()
  }

  private def tableName(c: JsonNode): String = Option(c.get("table")).map(_.asText()).orNull

  /** A JSON object of strings (insertion order kept); non-string scalars use their text. */
  def stringMap(n: JsonNode): Map[String, String] =
    if (n == null || n.isNull) Map.empty
    else {
      if (!n.isObject) throw new IllegalArgumentException(s"expected a JSON object but found $n")
      VectorMap.from(n.properties().asScala.map { e =>
        e.getKey -> (if (e.getValue.isNull) null else if (e.getValue.isTextual) e.getValue.textValue()
          else e.getValue.toString)
      })
    }

  /** `{"configuration", "schemaString"}` or `{"configuration", "schema": <StructType JSON>}`. */
  def parseMetadata(n: JsonNode): TableMetadata =
    if (n == null || n.isNull) TableMetadata()
    else {
      val conf = stringMap(n.get("configuration"))
      val schemaString = Option(n.get("schemaString")).filterNot(_.isNull).map(_.asText())
        .orElse(Option(n.get("schema")).filterNot(_.isNull).map(s => Action.mapper.writeValueAsString(s)))
        .getOrElse("")
      TableMetadata(conf, schemaString)
    }

  private def client(n: JsonNode): ClientCapabilities =
    if (n == null || n.isNull || (n.isTextual && n.textValue() == "deltalog")) ClientCapabilities.deltalog
    else if (n.isObject) ClientCapabilities.fromJsonNode(n)
    else throw new IllegalArgumentException(s"unknown client $n")

  // ---------------------------------------------------------------------------- results

  private def ok(): ObjectNode = { val o = nodes.objectNode(); o.put("ok", true); o }

  private def strings(xs: Iterable[String]): ArrayNode = {
    val a = nodes.arrayNode()
    xs.foreach(a.add)
    a
  }

  private def stringMapNode(m: Map[String, String]): ObjectNode = {
    val o = nodes.objectNode()
    m.foreach { case (k, v) => if (v == null) o.putNull(k) else o.put(k, v) }
    o
  }

  private def protocolResult(p: Protocol): ObjectNode = {
    val o = nodes.objectNode()
    o.set[JsonNode]("protocol", p.toJsonNode)
    o
  }

  private def optionalProtocolResult(p: Option[Protocol]): ObjectNode = p match {
    case Some(x) => protocolResult(x)
    case None => val o = nodes.objectNode(); o.putNull("protocol"); o
  }

  private def featuresResult(names: Set[String]): ObjectNode = {
    val o = nodes.objectNode()
    o.set[JsonNode]("features", strings(names.toSeq.sorted))
    o
  }
}
