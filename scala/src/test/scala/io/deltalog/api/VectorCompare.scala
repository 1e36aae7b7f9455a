package io.deltalog.api

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}

/** How a vector case's `expected` is matched against an evaluator result. */
object VectorCompare {
  private val nodes = JsonNodeFactory.instance

  /** Protocol bodies with their feature arrays sorted; other nodes unchanged. */
  def normalizeProtocol(n: JsonNode): JsonNode = n match {
    case o: ObjectNode =>
      val c = o.deepCopy()
      Seq("readerFeatures", "writerFeatures").foreach { k =>
        c.get(k) match {
          case a: ArrayNode =>
            val sorted = nodes.arrayNode()
            a.elements().asScala.map(_.asText()).toSeq.sorted.foreach(sorted.add)
            c.set[JsonNode](k, sorted)
          case _ =>
        }
      }
      c
    case other => other
  }

  /** Structural equality with numbers compared by value (1 == 1L == 1.0). */
  def sameJson(a: JsonNode, b: JsonNode): Boolean = (a, b) match {
    case (null, null) => true
    case (null, _) | (_, null) => false
    case _ if a.isNumber && b.isNumber => a.decimalValue().compareTo(b.decimalValue()) == 0
    case (x: ObjectNode, y: ObjectNode) =>
      x.size() == y.size() && x.properties().asScala.forall(e => sameJson(e.getValue, y.get(e.getKey)))
    case (x: ArrayNode, y: ArrayNode) =>
      x.size() == y.size() && (0 until x.size()).forall(i => sameJson(x.get(i), y.get(i)))
    case _ => a.equals(b)
  }

  /** None when every key of `expected` matches `actual`, else a description of the mismatch. */
  def mismatch(expected: JsonNode, actual: JsonNode): Option[String] = {
    val problems = expected.properties().asScala.toSeq.flatMap { e =>
      val key = e.getKey
      val want = e.getValue
      val got = actual.get(key)
      val ok = key match {
        case "message" => got != null && got.isTextual && got.textValue().contains(want.asText())
        case "protocol" => sameJson(normalizeProtocol(want), Option(got).map(normalizeProtocol).orNull)
        case _ => sameJson(want, got)
      }
      if (ok) None else Some(s"$key: expected $want but got $got")
    }
    if (problems.isEmpty) None else Some(problems.mkString("; ") + s" (full result: $actual)")
  }
}
