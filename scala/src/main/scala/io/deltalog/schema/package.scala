package io.deltalog

/**
 * The table schema as the protocol defines it, shared by the read path, the writers and the
 * commands: `metaData.schemaString` to and from a Spark `StructType` ([[DeltaSchema]]), column
 * mapping's logical and physical names and field ids ([[ColumnMapping]]), and the string encoding
 * of partition values ([[PartitionValues]]). A leaf below `commands`: it may import `actions`,
 * `protocol` and `exceptions` (and Spark's type classes), never `log`, `txn`, `commands`, `spark`
 * or `api`.
 */
package object schema
