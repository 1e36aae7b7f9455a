package io.deltalog

/**
 * Spark's faces of the engine: `format("deltalog")` (V1 relation and V2 `TableProvider`), the
 * `DeltalogTable` V2 table, `DeltalogCatalog`, the session extension (parser, analysis and check
 * rules) and the read path (`spark.read`: file index, pruning, skipping, Parquet format with
 * deletion vectors and column mapping, change data feed). The top layer with `api`: may import every
 * layer below (it starts `api.ClassPreload` when a session is created).
 */
package object spark
