package io.deltalog.actions

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

/**
 * One action of the Delta log. A log line is `{"<actionName>": <body>}`; every action keeps the
 * fields it does not know so that parse-then-serialize loses nothing.
 */
trait Action {
  /** The single top-level key naming this action in a log line, e.g. "add" or "metaData". */
  def actionName: String

  /** The action body (the value under `actionName`), unknown fields included. */
  def toJsonNode: ObjectNode

  /** This action as one log line (no trailing newline). */
  def json: String = {
    val line = JsonNodeFactory.instance.objectNode()
    line.set[ObjectNode](actionName, toJsonNode)
    Action.mapper.writeValueAsString(line)
  }
}

object Action {
  /** Shared, thread-safe mapper for log lines. */
  val mapper: ObjectMapper = new ObjectMapper()
}
