package io.deltalog.protocol

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{DeserializationFeature, JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}

import io.deltalog.exceptions.InvalidTablePropertyException

/**
 * What the feature predicates look at: the table configuration with typed accessors, and a
 * small walker over the schema (Spark StructType JSON). The schema is parsed once, on first use.
 *
 * Schema shape: a type is a string (`"integer"`, `"timestamp_ntz"`, `"decimal(10,2)"`, ...) or an
 * object whose `type` is `struct` (`fields`), `array` (`elementType`) or `map` (`keyType`,
 * `valueType`); other object types are leaves. An empty or blank `schemaString` has no fields.
 * Invalid JSON, a root that is not an object, or a root `fields` that is not an array raise
 * `InvalidTablePropertyException("DELTA_INVALID_SCHEMA")`. Inside the tree the walker is lenient:
 * non-object fields and non-array `fields` are skipped.
 */
final class MetadataView(val configuration: Map[String, String], val schemaString: String) {

  /** `key` as a boolean: absent = false; `true`/`false` compared case-insensitively, trimmed. */
  def boolProp(key: String): Boolean = MetadataView.boolValue(key, configuration.get(key))

  /** `key` as one of `allowed` (lower-case), trimmed and compared case-insensitively. */
  def enumProp(key: String, allowed: Seq[String], default: String): String =
    configuration.get(key) match {
      case None => default
      case Some(raw) =>
        val v = MetadataView.lower(raw)
        if (!allowed.contains(v)) {
          throw new InvalidTablePropertyException(
            "DELTA_INVALID_TABLE_PROPERTY_VALUE",
            s"Table property $key='$raw' is invalid; allowed values: ${allowed.mkString(", ")}.")
        }
        v
    }

  private lazy val root: ObjectNode = {
    val parsed: JsonNode =
      if (schemaString == null || schemaString.strip().isEmpty) MetadataView.emptyStruct
      else {
        try MetadataView.strictMapper.readTree(schemaString)
        catch {
          case e: Exception =>
            throw new InvalidTablePropertyException(
              "DELTA_INVALID_SCHEMA",
              s"schemaString is not valid JSON (${e.getMessage.linesIterator.nextOption().getOrElse("")}); " +
                "it must be a Spark StructType JSON object.")
        }
      }
    parsed match {
      case o: ObjectNode if o.get("fields") == null || o.get("fields").isArray => o
      case _ =>
        throw new InvalidTablePropertyException(
          "DELTA_INVALID_SCHEMA",
          "schemaString must be a Spark StructType JSON object with a 'fields' array.")
    }
  }

  /** The top-level fields (objects only). */
  def topLevelFields: Seq[ObjectNode] = MetadataView.objects(root.get("fields"))

  /** Every field reachable from the top level through nested structs (not arrays or maps). */
  def fieldsThroughStructs: Seq[ObjectNode] = {
    val out = Vector.newBuilder[ObjectNode]
    val queue = mutable.Queue[ObjectNode](topLevelFields: _*)
    while (queue.nonEmpty) {
      val f = queue.dequeue()
      out += f
      val t = f.get("type")
      if (MetadataView.kind(t) == "struct") queue ++= MetadataView.objects(t.get("fields"))
    }
    out.result()
  }

  /** Every field anywhere: in structs, array elements, map keys and map values. */
  def allFields: Seq[ObjectNode] = {
    topLevelFields // validates the root
    val out = Vector.newBuilder[ObjectNode]
    def walk(t: JsonNode): Unit = MetadataView.kind(t) match {
      case "struct" => MetadataView.objects(t.get("fields")).foreach { f => out += f; walk(f.get("type")) }
      case "array" => walk(t.get("elementType"))
      case "map" => walk(t.get("keyType")); walk(t.get("valueType"))
      case _ =>
    }
    walk(root)
    out.result()
  }

  /** Every primitive type name anywhere in the schema (as written). */
  def allTypeNames: Seq[String] = {
    topLevelFields // validates the root
    val out = Vector.newBuilder[String]
    def walk(t: JsonNode): Unit =
      if (t != null && t.isTextual) out += t.textValue()
      else MetadataView.kind(t) match {
        case "struct" => MetadataView.objects(t.get("fields")).foreach(f => walk(f.get("type")))
        case "array" => walk(t.get("elementType"))
        case "map" => walk(t.get("keyType")); walk(t.get("valueType"))
        case _ =>
      }
    walk(root)
    out.result()
  }

  /** True when some type name (trimmed, lower-cased) satisfies `p`. */
  def anyType(p: String => Boolean): Boolean = allTypeNames.exists(t => p(MetadataView.lower(t)))

  /** Keys of a field's `metadata` object (empty when absent or not an object). */
  def metadataHas(field: ObjectNode, key: String): Boolean = {
    val m = field.get("metadata")
    m != null && m.isObject && m.has(key)
  }

  /** True when the field says `"nullable": false`. */
  def isNotNullable(field: ObjectNode): Boolean = {
    val n = field.get("nullable")
    n != null && n.isBoolean && !n.booleanValue()
  }

  /** A view over the same schema with another configuration. */
  def withConfiguration(conf: Map[String, String]): MetadataView = new MetadataView(conf, schemaString)
}

object MetadataView {
  def apply(m: MetadataLike): MetadataView = m match {
    case null => new MetadataView(Map.empty, "")
    case v: ViewWrapper => v.view
    case _ => new MetadataView(Option(m.configuration).getOrElse(Map.empty), m.schemaString)
  }

  /** Lets an existing view pass through APIs taking a [[MetadataLike]] without re-parsing. */
  final class ViewWrapper(val view: MetadataView) extends MetadataLike {
    override def configuration: Map[String, String] = view.configuration
    override def schemaString: String = view.schemaString
  }

  private[protocol] def lower(s: String): String = s.strip().toLowerCase(java.util.Locale.ROOT)

  /** A boolean property value: absent = false, else `true`/`false` (case-insensitive, trimmed). */
  def boolValue(key: String, value: Option[String]): Boolean = value match {
    case None => false
    case Some(raw) =>
      val v = if (raw == null) "" else lower(raw)
      if (v == "true") true
      else if (v == "false") false
      else throw new InvalidTablePropertyException(
        "DELTA_INVALID_TABLE_PROPERTY_VALUE",
        s"Property $key='$raw' is not a boolean; set it to 'true' or 'false'.")
  }

  private val strictMapper: ObjectMapper =
    new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)

  private def emptyStruct: ObjectNode = {
    val o = JsonNodeFactory.instance.objectNode()
    o.put("type", "struct")
    o.putArray("fields")
    o
  }

  private def kind(t: JsonNode): String =
    if (t != null && t.isObject && t.get("type") != null && t.get("type").isTextual) t.get("type").textValue()
    else ""

  private def objects(n: JsonNode): Seq[ObjectNode] = n match {
    case a: ArrayNode => a.elements().asScala.collect { case o: ObjectNode => o }.toVector
    case _ => Vector.empty
  }
}
