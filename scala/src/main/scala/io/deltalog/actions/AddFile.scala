package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `add` action: a data file (optionally with a deletion vector) becomes part of the table.
 *
 * `partitionValues` maps partition column (physical name) to its serialized value; a null
 * partition value is kept as a Scala `null` map value (as delta-spark does), so
 * `partitionValues.get(c)` is `Some(null)` for a null value and `None` for an unknown column.
 *
 * @param path                    URI-encoded path, relative to the table root or absolute; required
 * @param partitionValues         lenient: absent means `{}`
 * @param size                    file size in bytes; required
 * @param modificationTime        ms since the epoch; required
 * @param dataChange              lenient: absent means `true`
 * @param stats                   per-file statistics as a JSON string
 * @param tags                    free-form string tags
 * @param deletionVector          rows of the file that are deleted
 * @param baseRowId               row tracking: first row id of the file
 * @param defaultRowCommitVersion row tracking: default row commit version
 * @param clusteringProvider      e.g. "liquid"
 * @param extra                   unknown fields and explicit nulls (not part of equality)
 */
final case class AddFile(
    path: String,
    partitionValues: Map[String, String] = Map.empty,
    size: Long,
    modificationTime: Long,
    dataChange: Boolean = true,
    stats: Option[String] = None,
    tags: Option[Map[String, String]] = None,
    override val deletionVector: Option[DeletionVectorDescriptor] = None,
    baseRowId: Option[Long] = None,
    defaultRowCommitVersion: Option[Long] = None,
    clusteringProvider: Option[String] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends FileAction with KeepsUnknownFields {

  override def actionName: String = AddFile.ActionName

  /**
   * The `remove` that deletes this logical file: copies partition values, size, stats, tags, DV
   * and row-tracking fields and sets `extendedFileMetadata = true` (as delta-spark does).
   */
  def remove(deletionTimestamp: Long, dataChange: Boolean = true): RemoveFile = RemoveFile(
    path = path,
    deletionTimestamp = Some(deletionTimestamp),
    dataChange = dataChange,
    extendedFileMetadata = Some(true),
    partitionValues = Some(partitionValues),
    size = Some(size),
    stats = stats,
    tags = tags,
    deletionVector = deletionVector,
    baseRowId = baseRowId,
    defaultRowCommitVersion = defaultRowCommitVersion)

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("path", path)
    .stringMapOr("partitionValues", partitionValues)
    .long("size", size)
    .long("modificationTime", modificationTime)
    .boolOr("dataChange", dataChange, default = true)
    .optString("stats", stats)
    .optStringMap("tags", tags)
    .optObj("deletionVector", deletionVector.map(_.toJsonNode))
    .optLong("baseRowId", baseRowId)
    .optLong("defaultRowCommitVersion", defaultRowCommitVersion)
    .optString("clusteringProvider", clusteringProvider)
    .result
}

/** Parsing for [[AddFile]]. */
object AddFile {
  /** Key of this action in a log line. */
  val ActionName: String = "add"

  private[actions] def read(r: FieldReader): AddFile = {
    val path = r.reqString("path")
    val partitionValues = r.stringMapOr("partitionValues", allowNullValues = true)
    val size = r.reqLong("size")
    val modificationTime = r.reqLong("modificationTime")
    val dataChange = r.boolOr("dataChange", default = true)
    val stats = r.optString("stats")
    val tags = r.optStringMap("tags")
    val dv = r.optNested("deletionVector")(DeletionVectorDescriptor.read)
    val baseRowId = r.optLong("baseRowId")
    val defaultRowCommitVersion = r.optLong("defaultRowCommitVersion")
    val clusteringProvider = r.optString("clusteringProvider")
    AddFile(path, partitionValues, size, modificationTime, dataChange, stats, tags, dv, baseRowId,
      defaultRowCommitVersion, clusteringProvider, r.extra)
  }
}
