package io.deltalog.schema

import io.deltalog.exceptions.DeltalogException
import io.deltalog.exceptions.DeltalogException.messageOr

/** A table's `schemaString` cannot be turned into a Spark schema (or a schema into JSON). */
class InvalidSchemaException private (val table: String, detail: String, cause: Throwable, verbatim: String)
  extends DeltalogException("DELTA_INVALID_SCHEMA", messageOr(verbatim,
    s"Table ${Option(table).getOrElse("<unknown>")}: the schema in the log cannot be used: $detail. " +
      "The metaData action is corrupt or was written by a writer using types Spark does not know."), cause) {
  def this(table: String, detail: String, cause: Throwable) = this(table, detail, cause, null)
  def this(table: String, detail: String) = this(table, detail, null, null)
  def this(message: String) = this(null, null, null, message)
}

/** A partition value string in the log does not parse as its column's type. */
class InvalidPartitionValueException private (val column: String, val value: String, val dataType: String,
    detail: String, cause: Throwable, verbatim: String)
  extends DeltalogException("DELTA_INVALID_PARTITION_VALUE", messageOr(verbatim,
    s"Partition column '$column' holds '$value', which is not a valid $dataType value ($detail). " +
      "The file's partitionValues were written by a buggy writer; rewrite the partition with a correct value."),
    cause) {
  def this(column: String, value: String, dataType: String, detail: String, cause: Throwable) =
    this(column, value, dataType, detail, cause, null)
  def this(column: String, value: String, dataType: String, detail: String) =
    this(column, value, dataType, detail, null, null)
  def this(message: String) = this(null, null, null, null, null, message)
}

/** The table configuration names an unknown column mapping mode, or a field lacks its mapping metadata. */
class ColumnMappingException private (val table: String, detail: String, verbatim: String)
  extends DeltalogException("DELTA_INVALID_COLUMN_MAPPING", messageOr(verbatim,
    s"Table ${Option(table).getOrElse("<unknown>")}: $detail. Fix the table properties / schema " +
      "(delta.columnMapping.*) with the writer that created the table.")) {
  def this(table: String, detail: String) = this(table, detail, null)
  def this(message: String) = this(null, null, message)
}
