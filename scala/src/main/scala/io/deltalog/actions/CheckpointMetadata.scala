package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `checkpointMetadata` action (V2 checkpoints only).
 *
 * @param version checkpoint version; required
 * @param tags    optional string tags (e.g. `sidecarNumActions`)
 * @param extra   unknown fields and explicit nulls (not part of equality)
 */
final case class CheckpointMetadata(
    version: Long,
    tags: Option[Map[String, String]] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends Action with KeepsUnknownFields {

  override def actionName: String = CheckpointMetadata.ActionName

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .long("version", version)
    .optStringMap("tags", tags)
    .result
}

/** Parsing for [[CheckpointMetadata]]. */
object CheckpointMetadata {
  /** Key of this action in a log line. */
  val ActionName: String = "checkpointMetadata"

  private[actions] def read(r: FieldReader): CheckpointMetadata = {
    val version = r.reqLong("version")
    val tags = r.optStringMap("tags")
    CheckpointMetadata(version, tags, r.extra)
  }
}
