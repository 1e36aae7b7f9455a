package io.deltalog.exceptions

/**
 * A streaming read of a deltalog table (`readStream.format("deltalog")`) cannot go on: a commit
 * changed or deleted data the stream already delivered (`DELTA_SOURCE_TABLE_IGNORE_CHANGES`,
 * `DELTA_SOURCE_IGNORE_DELETE`), the schema changed (`DELTA_SCHEMA_CHANGED_WITH_VERSION`, ...),
 * the checkpoint belongs to another table or its offset cannot be read. The error classes are
 * delta-spark's; the message names the table, the version and what to do.
 */
class StreamingSourceException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this(DeltalogException.GenericErrorClass, message)
}
