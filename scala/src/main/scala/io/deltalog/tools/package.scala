package io.deltalog

/**
 * Command-line tools run in their own JVM (`TxnStress`: concurrent-writer stress runs for the
 * integration tests). May import every layer below `spark`.
 */
package object tools
