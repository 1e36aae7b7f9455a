package io.deltalog.spark.schema

import io.deltalog.exceptions.DeltalogException

/** A table's `schemaString` cannot be turned into a Spark schema (or a schema into JSON). */
class InvalidSchemaException(val table: String, detail: String, cause: Throwable = null)
  extends DeltalogException("DELTA_INVALID_SCHEMA",
    s"Table ${Option(table).getOrElse("<unknown>")}: the schema in the log cannot be used: $detail. " +
      "The metaData action is corrupt or was written by a writer using types Spark does not know.", cause)

/** A partition value string in the log does not parse as its column's type. */
class InvalidPartitionValueException(val column: String, val value: String, val dataType: String,
    detail: String, cause: Throwable = null)
  extends DeltalogException("DELTA_INVALID_PARTITION_VALUE",
    s"Partition column '$column' holds '$value', which is not a valid $dataType value ($detail). " +
      "The file's partitionValues were written by a buggy writer; rewrite the partition with a correct value.",
    cause)

/** The table configuration names an unknown column mapping mode, or a field lacks its mapping metadata. */
class ColumnMappingException(val table: String, detail: String)
  extends DeltalogException("DELTA_INVALID_COLUMN_MAPPING",
    s"Table ${Option(table).getOrElse("<unknown>")}: $detail. Fix the table properties / schema " +
      "(delta.columnMapping.*) with the writer that created the table.")
