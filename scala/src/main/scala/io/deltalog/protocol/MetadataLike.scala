package io.deltalog.protocol

/**
 * The two parts of a table's metadata that decide its protocol: the table properties
 * (`configuration`) and the Spark StructType JSON of the schema (`schemaString`).
 * `io.deltalog.actions.Metadata` implements it; callers without a metadata action use
 * [[TableMetadata]].
 */
trait MetadataLike {
  def configuration: Map[String, String]
  def schemaString: String
}

/** A bare [[MetadataLike]] (no id, name, format, ...), e.g. for `Protocol.forNewTable`. */
case class TableMetadata(
    configuration: Map[String, String] = Map.empty,
    schemaString: String = "")
  extends MetadataLike
