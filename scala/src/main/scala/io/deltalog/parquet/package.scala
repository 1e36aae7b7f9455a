package io.deltalog

/**
 * Parquet's physical format, where deltalog reads or writes it itself instead of through
 * parquet-mr's record layer: the Thrift compact footer and page headers ([[ParquetFooterThrift]],
 * [[ParquetFooter]]), RLE / bit-packing hybrid runs ([[HybridRle]], [[PageLevelRuns]],
 * [[ParquetLevels]]), leaf decoders that turn pages into a caller's fields ([[LeafDecoder]],
 * [[BinaryLeafDecoder]], [[SparseColumnChunk]]), page stores over memory-mapped files
 * ([[MappedFiles]], [[MappedInputFile]], [[MappedColumnChunk]], [[RowTrimmedPages]],
 * [[LevelFixingPageStore]]) and the column-chunk writer with its file and page compression
 * ([[ColumnChunkWriter]], [[ParquetPageFile]], [[PageCompressor]], [[ShreddedRows]]). Nothing here
 * knows what a Delta action is: `log` decides which columns a checkpoint has and what their rows
 * mean, and calls in here for the bytes. May import parquet-mr, snappy and `io.deltalog.exceptions`;
 * never `log`, `txn`, `commands`, `spark` or `api`.
 */
package object parquet
