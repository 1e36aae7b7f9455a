package io.deltalog

/**
 * The Delta log as the protocol defines it: file names, `LogStore` (put-if-absent), listing and
 * `LogSegment`, replay (`LogReplay`, `InMemoryLogReplay`) into `SnapshotState` / `Snapshot`,
 * checkpoint content (which actions and columns a checkpoint holds, read and written), and
 * `_last_checkpoint`. The bytes of Parquet checkpoints (footers, pages, encodings) are
 * `io.deltalog.parquet`'s. May import `actions`, `protocol`, `parquet`, `expressions`, `dv` and
 * `exceptions`; never `txn`, `commands`, `spark` or `api`. See docs/log-design.md.
 */
package object log
