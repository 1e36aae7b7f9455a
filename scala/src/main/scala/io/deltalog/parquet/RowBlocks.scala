package io.deltalog.parquet

/**
 * Long per-row loops (decoding a checkpoint's rows, copying them out) are cut into calls that
 * handle [[Size]] rows each. HotSpot compiles a method after ~200 calls (or ~100 calls plus
 * ~2,000 loop iterations), but a loop that stays inside one call is only replaced on the stack
 * after ~60,000 iterations: in a fresh driver the first 100k-row checkpoint read ran interpreted
 * for most of its rows that way. A block method is compiled after ~2,000 rows, and once the
 * caller is compiled too the JIT inlines the block back into it, so warm speed is unchanged.
 */
private[deltalog] object RowBlocks {
  final val Size = 16
}
