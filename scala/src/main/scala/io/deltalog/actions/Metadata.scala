package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `metaData` action: table identity, schema, partitioning and properties. A new one replaces
 * the previous one entirely.
 *
 * @param id               table id (a GUID); required
 * @param name             user-visible name
 * @param description      user-visible description
 * @param format           data-file format (lenient: absent means `Format()`)
 * @param schemaString     JSON-serialized Spark StructType; required
 * @param partitionColumns logical partition column names (lenient: absent means empty)
 * @param configuration    table properties (lenient: absent means empty)
 * @param createdTime      creation time in ms since the epoch
 * @param extra            unknown fields and explicit nulls (not part of equality)
 */
final case class Metadata(
    id: String = java.util.UUID.randomUUID().toString,
    name: Option[String] = None,
    description: Option[String] = None,
    format: Format = Format(),
    schemaString: String,
    partitionColumns: Seq[String] = Nil,
    configuration: Map[String, String] = Map.empty,
    createdTime: Option[Long] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends Action with io.deltalog.protocol.MetadataLike with KeepsUnknownFields {

  override def actionName: String = Metadata.ActionName

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("id", id)
    .optString("name", name)
    .optString("description", description)
    .objOr("format", format.toJsonNode, format == Format())
    .string("schemaString", schemaString)
    .stringSeqOr("partitionColumns", partitionColumns)
    .stringMapOr("configuration", configuration)
    .optLong("createdTime", createdTime)
    .result
}

/** Parsing for [[Metadata]]. */
object Metadata {
  /** Key of this action in a log line. */
  val ActionName: String = "metaData"

  private[actions] def read(r: FieldReader): Metadata = {
    val id = r.reqString("id")
    val name = r.optString("name")
    val description = r.optString("description")
    val format = r.optNested("format")(Format.read).getOrElse(Format())
    val schemaString = r.reqString("schemaString")
    val partitionColumns = r.stringSeqOr("partitionColumns")
    val configuration = r.stringMapOr("configuration")
    val createdTime = r.optLong("createdTime")
    Metadata(id, name, description, format, schemaString, partitionColumns, configuration, createdTime, r.extra)
  }
}
