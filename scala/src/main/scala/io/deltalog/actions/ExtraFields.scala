package io.deltalog.actions

import com.fasterxml.jackson.databind.JsonNode

/**
 * The part of a parsed action body that its case class does not model, kept so that
 * parse-then-serialize loses nothing.
 *
 * Actions carry it as their last field `extra` (default [[ExtraFields.empty]]), so `copy(...)`
 * keeps it; it takes no part in `equals`/`hashCode` (see [[KeepsUnknownFields]]): two actions
 * that differ only in unknown fields are semantically equal. Pass `extra = ExtraFields.empty`
 * to drop what was read.
 *
 * @param unknown       fields not known to this version, in the order they were read; re-emitted
 *                      after the known fields.
 * @param explicitNulls names of known optional fields that were present as JSON `null`; they are
 *                      re-emitted as `null` as long as the field still has no value.
 */
final class ExtraFields private (
    val unknown: Vector[(String, JsonNode)],
    val explicitNulls: Set[String]) {

  /** True when there is nothing to preserve. */
  def isEmpty: Boolean = unknown.isEmpty && explicitNulls.isEmpty

  /** The unknown field named `name`, if any. */
  def get(name: String): Option[JsonNode] = unknown.collectFirst { case (`name`, v) => v.deepCopy[JsonNode]() }

  override def equals(other: Any): Boolean = other match {
    case o: ExtraFields => unknown == o.unknown && explicitNulls == o.explicitNulls
    case _ => false
  }

  override def hashCode(): Int = (unknown, explicitNulls).hashCode()

  override def toString: String =
    s"ExtraFields(${unknown.map { case (k, v) => s"$k=$v" }.mkString(", ")}; nulls=${explicitNulls.mkString(",")})"
}

/** Factory for [[ExtraFields]]. */
object ExtraFields {
  /** No unknown fields and no explicit nulls. */
  val empty: ExtraFields = new ExtraFields(Vector.empty, Set.empty)

  /** Builds a bag; the nodes are copied so later mutation of the arguments has no effect. */
  def apply(unknown: Seq[(String, JsonNode)], explicitNulls: Set[String] = Set.empty): ExtraFields =
    if (unknown.isEmpty && explicitNulls.isEmpty) empty
    else new ExtraFields(unknown.map { case (k, v) => k -> v.deepCopy[JsonNode]() }.toVector, explicitNulls)

  /** Builds a bag from nodes that nobody else holds (no copy). */
  private[actions] def owned(unknown: Vector[(String, JsonNode)], explicitNulls: Set[String]): ExtraFields =
    if (unknown.isEmpty && explicitNulls.isEmpty) empty else new ExtraFields(unknown, explicitNulls)
}
