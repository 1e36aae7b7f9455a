package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `cdc` action: a change-data file written by a commit (not part of the table state).
 * Null partition values are kept as Scala `null` map values (see [[AddFile]]).
 *
 * @param path            URI-encoded path, usually under `_change_data/`; required
 * @param partitionValues lenient: absent means `{}`
 * @param size            size in bytes; required
 * @param dataChange      lenient: absent means `false`
 * @param tags            free-form string tags
 * @param extra           unknown fields and explicit nulls (not part of equality)
 */
final case class AddCDCFile(
    path: String,
    partitionValues: Map[String, String] = Map.empty,
    size: Long,
    dataChange: Boolean = false,
    tags: Option[Map[String, String]] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends FileAction with KeepsUnknownFields {

  override def actionName: String = AddCDCFile.ActionName

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("path", path)
    .stringMapOr("partitionValues", partitionValues)
    .long("size", size)
    .boolOr("dataChange", dataChange, default = false)
    .optStringMap("tags", tags)
    .result
}

/** Parsing for [[AddCDCFile]]. */
object AddCDCFile {
  /** Key of this action in a log line. */
  val ActionName: String = "cdc"

  private[actions] def read(r: FieldReader): AddCDCFile = {
    val path = r.reqString("path")
    val partitionValues = r.stringMapOr("partitionValues", allowNullValues = true)
    val size = r.reqLong("size")
    val dataChange = r.boolOr("dataChange", default = false)
    val tags = r.optStringMap("tags")
    AddCDCFile(path, partitionValues, size, dataChange, tags, r.extra)
  }
}
