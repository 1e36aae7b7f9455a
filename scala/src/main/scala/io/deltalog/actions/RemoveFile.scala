package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `remove` action: a logical file (path + DV) leaves the table and becomes a tombstone.
 * Null partition values are kept as Scala `null` map values (see [[AddFile]]).
 *
 * @param path                    URI-encoded path; required
 * @param deletionTimestamp       ms since the epoch (delta-spark treats absent as 0)
 * @param dataChange              lenient: absent means `true`
 * @param extendedFileMetadata    true when partitionValues and size are present
 * @param partitionValues         partition values of the removed file
 * @param size                    size in bytes of the removed file
 * @param stats                   statistics (JSON string), JSON commits only
 * @param tags                    tags, JSON commits only
 * @param deletionVector          DV identifying which logical file is removed
 * @param baseRowId               row tracking, copied from the add
 * @param defaultRowCommitVersion row tracking, copied from the add
 * @param extra                   unknown fields and explicit nulls (not part of equality)
 */
final case class RemoveFile(
    path: String,
    deletionTimestamp: Option[Long] = None,
    dataChange: Boolean = true,
    extendedFileMetadata: Option[Boolean] = None,
    partitionValues: Option[Map[String, String]] = None,
    size: Option[Long] = None,
    stats: Option[String] = None,
    tags: Option[Map[String, String]] = None,
    override val deletionVector: Option[DeletionVectorDescriptor] = None,
    baseRowId: Option[Long] = None,
    defaultRowCommitVersion: Option[Long] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends FileAction with KeepsUnknownFields {

  override def actionName: String = RemoveFile.ActionName

  /** The deletion timestamp, 0 when absent (delta-spark's `delTimestamp`). */
  def delTimestamp: Long = deletionTimestamp.getOrElse(0L)

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("path", path)
    .optLong("deletionTimestamp", deletionTimestamp)
    .boolOr("dataChange", dataChange, default = true)
    .optBool("extendedFileMetadata", extendedFileMetadata)
    .optStringMap("partitionValues", partitionValues)
    .optLong("size", size)
    .optString("stats", stats)
    .optStringMap("tags", tags)
    .optObj("deletionVector", deletionVector.map(_.toJsonNode))
    .optLong("baseRowId", baseRowId)
    .optLong("defaultRowCommitVersion", defaultRowCommitVersion)
    .result
}

/** Parsing for [[RemoveFile]]. */
object RemoveFile {
  /** Key of this action in a log line. */
  val ActionName: String = "remove"

  private[actions] def read(r: FieldReader): RemoveFile = {
    val path = r.reqString("path")
    val deletionTimestamp = r.optLong("deletionTimestamp")
    val dataChange = r.boolOr("dataChange", default = true)
    val extendedFileMetadata = r.optBool("extendedFileMetadata")
    val partitionValues = r.optStringMap("partitionValues", allowNullValues = true)
    val size = r.optLong("size")
    val stats = r.optString("stats")
    val tags = r.optStringMap("tags")
    val dv = r.optNested("deletionVector")(DeletionVectorDescriptor.read)
    val baseRowId = r.optLong("baseRowId")
    val defaultRowCommitVersion = r.optLong("defaultRowCommitVersion")
    RemoveFile(path, deletionTimestamp, dataChange, extendedFileMetadata, partitionValues, size, stats, tags,
      dv, baseRowId, defaultRowCommitVersion, r.extra)
  }
}
