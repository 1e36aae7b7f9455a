// Lives with DeltalogTable but in a package below org.apache.spark.sql, where Spark's `private[sql]`
// marker trait can be extended.
package org.apache.spark.sql.deltalog

/**
 * Spark's `private[sql]` marker of a V2 table with a V1 catalog entry to fall back to, made public:
 * `DataStreamWriter.toTable` starts a table of this kind on its provider's V1 streaming sink.
 */
trait V1FallbackTable extends org.apache.spark.sql.connector.catalog.V2TableWithV1Fallback
