package io.deltalog.api

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory}

import io.deltalog.actions.Action
import io.deltalog.protocol.{Protocol, TableFeature, TableMetadata}

/**
 * Entry points for Python (py4j): strings in, JSON strings out.
 *
 * {{{
 *   jvm.io.deltalog.api.ProtocolApi.forNewTable('{"delta.enableDeletionVectors":"true"}', "", "{}")
 *   // {"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],...}
 * }}}
 */
object ProtocolApi {
  private val nodes = JsonNodeFactory.instance

  /**
   * Runs a JSON array of protocol cases (the format of tests/vectors/protocol_cases.json) and
   * returns a JSON array with one result object per case, in the same order. Errors are results
   * (`{"error": errorClass, "message": ...}`), never exceptions.
   */
  def evaluate(casesJson: String): String = {
    val parsed = Action.mapper.readTree(casesJson)
    val cases: JsonNode =
      if (parsed != null && parsed.isObject && parsed.has("cases")) parsed.get("cases") else parsed
    if (cases == null || !cases.isArray) throw new IllegalArgumentException("expected a JSON array of cases")
    val out = nodes.arrayNode()
    cases.elements().forEachRemaining(c => out.add(ProtocolCaseEvaluator.evaluate(c)))
    Action.mapper.writeValueAsString(out)
  }

  /**
   * The protocol body (JSON) for a new table with this configuration (JSON object of strings),
   * schema (Spark StructType JSON, may be empty) and session defaults (JSON object of strings).
   * Errors are thrown as `DeltalogException`s.
   */
  def forNewTable(configurationJson: String, schemaString: String, sessionDefaultsJson: String): String = {
    val conf = ProtocolCaseEvaluator.stringMap(readOrNull(configurationJson))
    val defaults = ProtocolCaseEvaluator.stringMap(readOrNull(sessionDefaultsJson))
    val p = Protocol.forNewTable(TableMetadata(conf, Option(schemaString).getOrElse("")), defaults)
    Action.mapper.writeValueAsString(p.toJsonNode)
  }

  /** Every known feature with its properties, in registry order. */
  def featureRegistryJson(): String = {
    val out: ArrayNode = nodes.arrayNode()
    TableFeature.all.foreach { f =>
      val o = out.addObject()
      o.put("name", f.name)
      o.put("readerWriter", f.isReaderWriterFeature)
      o.put("legacy", f.isLegacyFeature)
      o.put("minReaderVersion", f.minReaderVersion)
      o.put("minWriterVersion", f.minWriterVersion)
      val req = o.putArray("requiredFeatures")
      f.requiredFeatureNames.sorted.foreach(req.add)
      o.put("removable", f.isRemovable)
      o.put("requiresHistoryProtection", f.requiresHistoryProtection)
      o.put("autoUpdateExisting", f.automaticallyUpdateProtocolOfExistingTables)
      o.put("enabledBy", f.enabledBy)
    }
    Action.mapper.writeValueAsString(out)
  }

  private def readOrNull(json: String): JsonNode =
    if (json == null || json.strip().isEmpty) null else Action.mapper.readTree(json)
}
