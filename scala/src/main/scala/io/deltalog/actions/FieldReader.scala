package io.deltalog.actions

import scala.collection.immutable.VectorMap

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import io.deltalog.exceptions.ActionParseException

/**
 * Typed, checked access to the fields of one JSON object of an action body. Errors are raised
 * as [[ActionParseException]] with file = null and line = 0 and the dotted field path
 * (`prefix.name`; an error inside a map or array names the map or array field itself);
 * [[ActionCodec]] re-raises them with the real file and line.
 *
 * Remembers which fields were read and which known optional fields were explicit nulls, so that
 * [[extra]] can hand back exactly what the action did not model.
 */
private[actions] final class FieldReader(node: ObjectNode, val prefix: String) {
  private val consumed = new java.util.HashSet[String]()
  private var nulls: Set[String] = Set.empty

  /** Dotted path of a field of this object. */
  def path(name: String): String = s"$prefix.$name"

  private def fail(field: String, reason: String): Nothing =
    throw new ActionParseException(null, 0, field, reason)

  private def typeError(field: String, expected: String, v: JsonNode): Nothing =
    fail(field, s"expected $expected but found ${FieldReader.describe(v)}")

  /** The raw node (null when absent), marking the field as known. */
  private def raw(name: String): JsonNode = { consumed.add(name); node.get(name) }

  private def required[T](name: String)(conv: (String, JsonNode) => T): T = {
    val v = raw(name)
    if (v == null) fail(path(name), "required field is missing")
    if (v.isNull) fail(path(name), "required field is null")
    conv(path(name), v)
  }

  private def optional[T](name: String)(conv: (String, JsonNode) => T): Option[T] = {
    val v = raw(name)
    if (v == null) None
    else if (v.isNull) { nulls += name; None }
    else Some(conv(path(name), v))
  }

  private def asString(field: String, v: JsonNode): String =
    if (v.isTextual) v.textValue() else typeError(field, "a string", v)

  private def asLong(field: String, v: JsonNode): Long =
    if (v.isIntegralNumber && v.canConvertToLong) v.longValue()
    else if (v.isIntegralNumber) fail(field, s"integer ${v.asText()} does not fit in a 64-bit long")
    else typeError(field, "an integer", v)

  private def asInt(field: String, v: JsonNode): Int =
    if (v.isIntegralNumber && v.canConvertToInt) v.intValue()
    else if (v.isIntegralNumber) fail(field, s"integer ${v.asText()} does not fit in a 32-bit int")
    else typeError(field, "an integer", v)

  private def asBool(field: String, v: JsonNode): Boolean =
    if (v.isBoolean) v.booleanValue() else typeError(field, "a boolean", v)

  private def asObject(field: String, v: JsonNode): ObjectNode = v match {
    case o: ObjectNode => o
    case _ => typeError(field, "an object", v)
  }

  private def asMap(allowNullValues: Boolean)(field: String, v: JsonNode): Map[String, String] = {
    val o = asObject(field, v)
    val b = VectorMap.newBuilder[String, String]
    val it = o.properties().iterator()
    while (it.hasNext) {
      val e = it.next()
      val value = e.getValue
      if (value.isTextual) b += e.getKey -> value.textValue()
      else if (value.isNull && allowNullValues) b += e.getKey -> null
      else fail(field, s"value of key '${e.getKey}' must be ${if (allowNullValues) "a string or null" else "a string"}" +
        s" but is ${FieldReader.describe(value)}")
    }
    b.result()
  }

  private def asStringSeq(field: String, v: JsonNode): Seq[String] = {
    if (!v.isArray) typeError(field, "an array", v)
    val b = Vector.newBuilder[String]
    var i = 0
    while (i < v.size()) {
      val e = v.get(i)
      if (!e.isTextual) fail(field, s"element $i must be a string but is ${FieldReader.describe(e)}")
      b += e.textValue()
      i += 1
    }
    b.result()
  }

  def reqString(name: String): String = required(name)(asString)
  def optString(name: String): Option[String] = optional(name)(asString)
  def reqLong(name: String): Long = required(name)(asLong)
  def optLong(name: String): Option[Long] = optional(name)(asLong)
  def reqInt(name: String): Int = required(name)(asInt)
  def optInt(name: String): Option[Int] = optional(name)(asInt)
  def reqBool(name: String): Boolean = required(name)(asBool)
  def optBool(name: String): Option[Boolean] = optional(name)(asBool)
  def optStringMap(name: String, allowNullValues: Boolean = false): Option[Map[String, String]] =
    optional(name)(asMap(allowNullValues))

  /** A lenient field: absent or null gives `default` (a null is remembered for re-emission). */
  def boolOr(name: String, default: Boolean): Boolean = optBool(name).getOrElse(default)
  def stringMapOr(name: String, allowNullValues: Boolean = false): Map[String, String] =
    optStringMap(name, allowNullValues).getOrElse(Map.empty)
  def stringSeqOr(name: String): Seq[String] = optional(name)(asStringSeq).getOrElse(Nil)

  /** A nested object field parsed by `parse` with a reader rooted at this field's path. */
  def optNested[T](name: String)(parse: FieldReader => T): Option[T] =
    optional(name)((field, v) => parse(new FieldReader(asObject(field, v), field)))

  /** What was not read, plus the names of known fields that were explicit nulls. */
  def extra: ExtraFields = {
    var unknown = Vector.empty[(String, JsonNode)]
    val it = node.properties().iterator()
    while (it.hasNext) {
      val e = it.next()
      if (!consumed.contains(e.getKey)) unknown :+= (e.getKey -> e.getValue)
    }
    ExtraFields.owned(unknown, nulls)
  }
}

private[actions] object FieldReader {
  /** Short description of a JSON node's type for error messages. */
  def describe(v: JsonNode): String =
    if (v.isNull) "null"
    else if (v.isTextual) "a string"
    else if (v.isBoolean) "a boolean"
    else if (v.isIntegralNumber) s"the integer ${v.asText()}"
    else if (v.isNumber) s"the number ${v.asText()}"
    else if (v.isArray) "an array"
    else if (v.isObject) "an object"
    else v.getNodeType.toString.toLowerCase

  /** Body of an action: must be a JSON object. */
  def body(actionName: String, v: JsonNode): FieldReader = v match {
    case o: ObjectNode => new FieldReader(o, actionName)
    case _ => throw new ActionParseException(null, 0, actionName,
      s"action body must be a JSON object but found ${describe(v)}")
  }
}
