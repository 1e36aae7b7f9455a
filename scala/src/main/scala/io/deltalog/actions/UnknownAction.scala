package io.deltalog.actions

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

/**
 * An action type this version does not know; kept verbatim so it can be written back.
 * Readers must ignore it.
 *
 * The body is usually an object, but any JSON value (array, scalar, null) is accepted and
 * preserved, since the protocol requires unknown action types to be ignored rather than rejected.
 *
 * @param name the top-level key of the log line
 * @param body the value under that key (do not mutate it; [[toJsonNode]] returns a copy)
 */
final case class UnknownAction(name: String, body: JsonNode) extends Action {
  override def actionName: String = name

  /** True when the body is a JSON object (then [[toJsonNode]] is available). */
  def hasObjectBody: Boolean = body.isObject

  /**
   * The body as an object.
   *
   * @throws UnsupportedOperationException when the body is not a JSON object (use [[body]] or
   *                                       [[json]], which handle every body)
   */
  override def toJsonNode: ObjectNode = body match {
    case o: ObjectNode => o.deepCopy()
    case other => throw new UnsupportedOperationException(
      s"unknown action '$name' has a non-object body (${FieldReader.describe(other)}); use body or json")
  }

  /** The log line, for any body. */
  override def json: String = {
    val line = JsonNodeFactory.instance.objectNode()
    line.set[JsonNode](name, if (body == null) JsonNodeFactory.instance.nullNode() else body.deepCopy[JsonNode]())
    Action.mapper.writeValueAsString(line)
  }
}
