package io.deltalog

import io.deltalog.log.DeltaLog

/**
 * Optimistic transactions (`OptimisticTransaction`): put-if-absent commits, conflict detection
 * (`ConflictChecker`) with delta-spark's exceptions, isolation levels, retries, row tracking, table
 * property validation (`TableProperties`) and post-commit hooks. Imports `actions`, `protocol`, `log`,
 * `expressions` and `exceptions`; never `commands`, `spark` or `api`.
 */
package object txn {

  /** `deltaLog.startTransaction()` (the log package does not depend on txn). */
  implicit class DeltaLogTxn(val deltaLog: DeltaLog) extends AnyVal {
    /** A transaction on the latest version (version -1 when the table does not exist). */
    def startTransaction(): OptimisticTransaction = OptimisticTransaction.start(deltaLog)

    /** As [[startTransaction]] with a custom clock. */
    def startTransaction(clock: Clock): OptimisticTransaction = OptimisticTransaction.start(deltaLog, clock)
  }
}
