package io.deltalog.actions

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

/**
 * Builds an action body in protocol field order. An absent optional value is skipped, unless the
 * parsed input had it as an explicit `null` (then `null` is written). [[result]] appends the
 * unknown fields last.
 */
private[actions] final class FieldWriter(extra: ExtraFields) {
  private val node: ObjectNode = JsonNodeFactory.instance.objectNode()

  private def absent(name: String): Unit = if (extra.explicitNulls.contains(name)) node.putNull(name)

  def string(name: String, v: String): this.type = { node.put(name, v); this }
  def long(name: String, v: Long): this.type = { node.put(name, v); this }
  def int(name: String, v: Int): this.type = { node.put(name, v); this }
  def bool(name: String, v: Boolean): this.type = { node.put(name, v); this }

  def optString(name: String, v: Option[String]): this.type = { v match {
    case Some(s) => node.put(name, s)
    case None => absent(name)
  }; this }

  def optLong(name: String, v: Option[Long]): this.type = { v match {
    case Some(x) => node.put(name, x)
    case None => absent(name)
  }; this }

  def optInt(name: String, v: Option[Int]): this.type = { v match {
    case Some(x) => node.put(name, x)
    case None => absent(name)
  }; this }

  def optBool(name: String, v: Option[Boolean]): this.type = { v match {
    case Some(x) => node.put(name, x)
    case None => absent(name)
  }; this }

  /** A lenient boolean: written as `null` if it was an explicit null and still has the default. */
  def boolOr(name: String, v: Boolean, default: Boolean): this.type =
    if (v == default && extra.explicitNulls.contains(name)) { node.putNull(name); this } else bool(name, v)

  def stringMap(name: String, m: Map[String, String]): this.type = {
    if (m == null) node.putNull(name) else node.set[JsonNode](name, FieldWriter.mapNode(m))
    this
  }

  def optStringMap(name: String, v: Option[Map[String, String]]): this.type = { v match {
    case Some(m) => stringMap(name, m)
    case None => absent(name)
  }; this }

  /** A lenient map: written as `null` if it was an explicit null and is still empty. */
  def stringMapOr(name: String, m: Map[String, String]): this.type =
    if (m != null && m.isEmpty && extra.explicitNulls.contains(name)) { node.putNull(name); this }
    else stringMap(name, m)

  /** A lenient string array: written as `null` if it was an explicit null and is still empty. */
  def stringSeqOr(name: String, s: Seq[String]): this.type = {
    if (s == null || (s.isEmpty && extra.explicitNulls.contains(name))) node.putNull(name)
    else {
      val a = node.putArray(name)
      s.foreach(x => a.add(x))
    }
    this
  }

  def obj(name: String, o: ObjectNode): this.type = { node.set[JsonNode](name, o); this }

  /** A lenient object: written as `null` if it was an explicit null and still has the default. */
  def objOr(name: String, o: ObjectNode, isDefault: Boolean): this.type =
    if (isDefault && extra.explicitNulls.contains(name)) { node.putNull(name); this } else obj(name, o)

  def optObj(name: String, v: Option[ObjectNode]): this.type = { v match {
    case Some(o) => node.set[JsonNode](name, o)
    case None => absent(name)
  }; this }

  /** The finished body: known fields, then unknown fields (copied). */
  def result: ObjectNode = {
    extra.unknown.foreach { case (k, v) => node.set[JsonNode](k, v.deepCopy[JsonNode]()) }
    node
  }
}

private[actions] object FieldWriter {
  /** A JSON object of strings; null values are written as JSON null. */
  def mapNode(m: Map[String, String]): ObjectNode = {
    val o = JsonNodeFactory.instance.objectNode()
    m.foreach { case (k, v) => if (v == null) o.putNull(k) else o.put(k, v) }
    o
  }
}
