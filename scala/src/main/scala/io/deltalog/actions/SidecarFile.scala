package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `sidecar` action (V2 checkpoints only): a file in `_delta_log/_sidecars/` holding part of
 * the checkpoint's file actions.
 *
 * @param path             URI-encoded path, preferably just the file name; required
 * @param sizeInBytes      required
 * @param modificationTime ms since the epoch; required
 * @param tags             optional string tags
 * @param extra            unknown fields and explicit nulls (not part of equality)
 */
final case class SidecarFile(
    path: String,
    sizeInBytes: Long,
    modificationTime: Long,
    tags: Option[Map[String, String]] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends Action with KeepsUnknownFields {

  override def actionName: String = SidecarFile.ActionName

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("path", path)
    .long("sizeInBytes", sizeInBytes)
    .long("modificationTime", modificationTime)
    .optStringMap("tags", tags)
    .result
}

/** Parsing for [[SidecarFile]]. */
object SidecarFile {
  /** Key of this action in a log line. */
  val ActionName: String = "sidecar"

  private[actions] def read(r: FieldReader): SidecarFile = {
    val path = r.reqString("path")
    val sizeInBytes = r.reqLong("sizeInBytes")
    val modificationTime = r.reqLong("modificationTime")
    val tags = r.optStringMap("tags")
    SidecarFile(path, sizeInBytes, modificationTime, tags, r.extra)
  }
}
