package io.deltalog

/**
 * Every action of the protocol (`metaData`, `add`, `remove`, `cdc`, `txn`, `commitInfo`,
 * `domainMetadata`, `checkpointMetadata`, `sidecar`, deletion-vector descriptors) with its exact JSON
 * codec; unknown fields and actions are kept. The bottom layer: imports only `exceptions`, and
 * `protocol` for the `protocol` action itself and the metadata view the rules read (the two are
 * one concept split in two packages). No file system, no Spark.
 */
package object actions
