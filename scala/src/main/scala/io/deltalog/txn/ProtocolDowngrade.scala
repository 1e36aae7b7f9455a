package io.deltalog.txn

import io.deltalog.protocol.Protocol

/**
 * What makes a transaction the downgrade commit of `ALTER TABLE ... DROP FEATURE` (digest §5.8):
 * the only kind of commit allowed to write a protocol that supports fewer features than the one
 * it read ([[OptimisticTransaction.downgradeProtocol]]).
 *
 * @param featureName          the feature dropped (canonical name)
 * @param newProtocol          the protocol written: the read protocol without the feature (plus
 *                             `checkpointProtection` for a fast drop), normalized
 * @param protectCheckpoints   true for a fast drop: `delta.requireCheckpointProtectionBeforeVersion`
 *                             is set to the version this commit is written at (again at each retry)
 * @param revalidate           the drop's invariants checked at a concurrent winner's version: why the
 *                             feature may no longer be dropped there (None: still droppable). A
 *                             winner that fails it makes the commit fail with
 *                             `DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL`
 */
final case class ProtocolDowngrade(
    featureName: String,
    newProtocol: Protocol,
    protectCheckpoints: Boolean,
    revalidate: Long => Option[String])

object ProtocolDowngrade {
  val RequireCheckpointProtectionBeforeVersionKey = "delta.requireCheckpointProtectionBeforeVersion"
}
