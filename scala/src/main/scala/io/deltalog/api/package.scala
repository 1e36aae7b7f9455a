package io.deltalog

/**
 * Thin entry points for py4j (`TableApi`, `TxnApi`, `ProtocolApi`, `ScanApi`, `ErrorsApi`): simple
 * types in and out, live files in bulk through Arrow-layout transfer files; plus the driver start-up
 * helpers (`ClassPreload`, `ReplayWarmup`, `SessionHadoopConf`). The top layer with `spark`: may
 * import every layer below.
 */
package object api
