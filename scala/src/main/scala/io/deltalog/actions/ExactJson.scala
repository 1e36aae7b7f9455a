package io.deltalog.actions

import com.fasterxml.jackson.core.{JsonParser, JsonToken}
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{DecimalNode, DoubleNode, JsonNodeFactory}

/**
 * JSON trees for `add.stats`: a number with a fraction or an exponent is kept exact (a
 * `BigDecimal`, digits as written), not read as a double. A decimal(38, s) bound has up to 38
 * digits; read as a double it rounds, and a max rounded down (a min rounded up) skipped files or
 * proved "no row matches" for files holding the value (issue 25, interop seeds 34 and 50). A
 * negative zero stays the double `-0.0` (a `BigDecimal` has no sign of zero), so stats written
 * back (checkpoint `stats_parsed`, bounds loosened by a deletion vector) keep it.
 */
object ExactJson {
  /** Writes trees (numbers as parsed); its factory reads with the log's settings. */
  val mapper: ObjectMapper = new ObjectMapper().setNodeFactory(JsonNodeFactory.withExactBigDecimals(true))

  private val nodes = mapper.getNodeFactory

  /** The tree of the first value in `json`; a malformed or truncated value throws. What follows
   * the value is not read (as `ObjectMapper.readTree`, whose place this takes for stats). */
  def readTree(json: String): JsonNode = {
    val p = mapper.getFactory.createParser(json)
    try {
      val t = p.nextToken()
      if (t == null) throw new IllegalArgumentException("empty JSON")
      value(p, t)
    } finally p.close()
  }

  /** The number at the current VALUE_NUMBER_FLOAT token, exact. */
  def floatNode(p: JsonParser): JsonNode = {
    val d = p.getDecimalValue
    if (d.signum == 0 && p.getText.trim.startsWith("-")) DoubleNode.valueOf(-0.0) else DecimalNode.valueOf(d)
  }

  private def value(p: JsonParser, t: JsonToken): JsonNode = t match {
    case JsonToken.START_OBJECT =>
      val o = nodes.objectNode()
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        val name = p.currentName()
        o.set[JsonNode](name, value(p, p.nextToken()))
      }
      o
    case JsonToken.START_ARRAY =>
      val a = nodes.arrayNode()
      var n = p.nextToken()
      while (n != JsonToken.END_ARRAY) { a.add(value(p, n)); n = p.nextToken() }
      a
    case JsonToken.VALUE_NUMBER_FLOAT => floatNode(p)
    case JsonToken.VALUE_NUMBER_INT => p.getNumberType match {
      case JsonParser.NumberType.INT => nodes.numberNode(p.getIntValue)
      case JsonParser.NumberType.LONG => nodes.numberNode(p.getLongValue)
      case _ => nodes.numberNode(p.getBigIntegerValue)
    }
    case JsonToken.VALUE_STRING => nodes.textNode(p.getText)
    case JsonToken.VALUE_TRUE => nodes.booleanNode(true)
    case JsonToken.VALUE_FALSE => nodes.booleanNode(false)
    case JsonToken.VALUE_NULL => nodes.nullNode()
    case other => throw new IllegalArgumentException(s"unexpected JSON token $other")
  }
}
