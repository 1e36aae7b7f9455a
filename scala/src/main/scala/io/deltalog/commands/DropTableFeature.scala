package io.deltalog.commands

import java.util.Locale

import io.deltalog.exceptions.{DropFeatureConflictException, TableFeatureException}
import io.deltalog.log.{DeltaLog, IntervalProperty, MetadataCleanup, Snapshot}
import io.deltalog.protocol.{ClientCapabilities, Protocol, TableFeature}
import io.deltalog.txn.{Clock, Operation, OptimisticTransaction, ProtocolDowngrade}

/**
 * `ALTER TABLE t DROP FEATURE f [TRUNCATE HISTORY]` / `DeltaTable.dropFeatureSupport` (digest §5.8),
 * for the features deltalog can remove ([[FeatureRemovers]]).
 *
 *  1. The name is checked against the latest protocol, in delta-spark's order: a table property
 *     (`DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY`), unknown to this client
 *     (`DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE`), not in the protocol
 *     (`DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT`), not removable (`..._NONREMOVABLE_FEATURE`), needed
 *     by another feature (`..._DEPENDENT_FEATURE`), TRUNCATE HISTORY for a feature that needs no
 *     history protection (`..._HISTORY_TRUNCATION_NOT_ALLOWED`).
 *  2. Pre-downgrade: the feature's traces are removed from the latest version in separate commits.
 *  3. Writer-only features: one downgrade commit (protocol without the feature, metadata without
 *     its properties; operation `DROP FEATURE`, `{featureName, truncateHistory}`).
 *  4. Reader-writer features, fast drop (default): three barrier commits (`Empty Commit`), each
 *     checkpointed; then the downgrade commit adds `checkpointProtection` and sets
 *     `delta.requireCheckpointProtectionBeforeVersion` to its own version; then a checkpoint.
 *  5. TRUNCATE HISTORY: when the pre-downgrade changed the table, an empty commit and a checkpoint
 *     are written and the drop stops with `DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD`; a later
 *     run truncates the history older than `delta.dropFeatureTruncateHistory.retentionDuration`
 *     (24 hours) and commits the downgrade only when no remaining commit uses the feature
 *     (`DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST` otherwise).
 *
 * The downgrade commit goes through [[OptimisticTransaction]]: a winner that changes the protocol
 * or the metadata fails it (it writes both), and any other winner is checked again
 * (`DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL` when the feature is in use again).
 *
 * @param table the name used in messages (the catalog name, or the path)
 */
final class DropTableFeature(
    log: DeltaLog,
    featureName: String,
    truncateHistory: Boolean,
    table: String,
    clock: Clock = Clock.system) {

  import DropTableFeature._

  /** Test hook: runs after the downgrade transaction read and validated the table, before it commits. */
  var beforeDowngradeCommit: OptimisticTransaction => Unit = _ => ()

  /** Number of barrier commits (each checkpointed) of a fast drop. */
  var barrierCommits: Int = 3

  /** Runs the drop; returns the version of the downgrade commit. */
  def run(): Long = {
    val snapshot = log.update()
    val feature = resolve(snapshot.protocol)
    val remover = FeatureRemovers.forFeature(feature).getOrElse(throw notByDeltalog(feature))
    ClientCapabilities.writingAlso(remover.writerFeaturesForDrop)(run(snapshot, feature, remover))
  }

  private def run(snapshot: Snapshot, feature: TableFeature, remover: FeatureRemover): Long = {
    Protocol.checkCanWrite(snapshot.protocol, ClientCapabilities.deltalog, table)
    if (feature == TableFeature.CheckpointProtection) return dropCheckpointProtection(snapshot)
    remover.checkCanRemove(snapshot, table)
    val changed = remover.preDowngrade(log, table)
    val historyProtection = feature.requiresHistoryProtection
    if (!historyProtection) downgrade(feature, remover, protect = false)
    else if (!truncateHistory) {
      (1 to barrierCommits).foreach { _ => checkpointAt(emptyCommit()) }
      val v = downgrade(feature, remover, protect = true)
      checkpointAt(v)
      v
    } else {
      val retentionMs = truncateRetentionMs(log.update())
      // Every run ends the cleaned-up history with a checkpoint of a version without the feature.
      checkpointAt(emptyCommit())
      if (changed) throw waitForRetention(feature, retentionMs)
      val kept = MetadataCleanup.truncate(log, MetadataCleanup.cutoff(clock.nowMillis(), retentionMs))
      historyUse(remover, kept).foreach { v =>
        throw new TableFeatureException("DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST",
          s"Cannot drop ${feature.name} from table $table yet: version $v of its history (kept because it is " +
            s"younger than $TruncateRetentionKey = ${retentionText(retentionMs)}) still uses the feature. Wait " +
            s"until that version is older than the retention period, then run ALTER TABLE $table DROP FEATURE " +
            s"${feature.name} TRUNCATE HISTORY again (or drop it without TRUNCATE HISTORY, which keeps the " +
            "history and protects it with checkpointProtection).")
      }
      val v = downgrade(feature, remover, protect = false)
      checkpointAt(v)
      v
    }
  }

  // ------------------------------------------------------------------------------ step 1

  private def resolve(protocol: Protocol): TableFeature = {
    if (featureName.toLowerCase(Locale.ROOT).startsWith("delta.")) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY",
        s"Cannot drop `$featureName` from table $table: it is a table property, not a table feature. Use ALTER " +
          s"TABLE $table UNSET TBLPROPERTIES ('$featureName'), or DROP FEATURE <feature name>.")
    }
    val f = TableFeature.byName(featureName).getOrElse {
      throw new TableFeatureException("DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE",
        s"Cannot drop $featureName from table $table: deltalog does not know this table feature. Check the " +
          "name, or use a Delta client that supports the feature.")
    }
    if (!protocol.isFeatureSupported(f)) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT",
        s"Cannot drop ${f.name} from table $table: it is not in the table's protocol (${protocol.simpleString}); " +
          "there is nothing to drop.")
    }
    if (!f.isRemovable) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE",
        s"Cannot drop ${f.name} from table $table: this feature cannot be removed from a table's protocol once " +
          "supported (turning its property off keeps the table readable by the same clients).")
    }
    val dependents = TableFeature.dependentsOf(f).filter(protocol.isFeatureSupported).map(_.name).toSeq.sorted
    if (dependents.nonEmpty) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_DEPENDENT_FEATURE",
        s"Cannot drop table feature `${f.name}` from table $table: feature(s) ${dependents.mkString(", ")} of the " +
          s"table depend on it. Drop them first.")
    }
    if (f == TableFeature.CheckpointProtection && !truncateHistory) {
      throw new TableFeatureException("DELTA_FEATURE_CAN_ONLY_DROP_CHECKPOINT_PROTECTION_WITH_HISTORY_TRUNCATION",
        s"Cannot drop checkpointProtection from table $table without truncating its history: run ALTER TABLE " +
          s"$table DROP FEATURE checkpointProtection TRUNCATE HISTORY.")
    }
    if (truncateHistory && !f.requiresHistoryProtection && f != TableFeature.CheckpointProtection) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED",
        s"Cannot drop ${f.name} from table $table with TRUNCATE HISTORY: this feature does not need history " +
          s"truncation. Run ALTER TABLE $table DROP FEATURE ${f.name} without it.")
    }
    f
  }

  private def notByDeltalog(f: TableFeature): TableFeatureException =
    new TableFeatureException("DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE",
      s"Cannot drop ${f.name} from table $table: deltalog cannot remove this feature's traces yet. Drop it " +
        "with a client that can (e.g. delta-spark).")

  // ------------------------------------------------------------------------------ commits

  private def emptyCommit(): Long = OptimisticTransaction.start(log, clock).commit(Nil, Operation.emptyCommit)

  private def checkpointAt(version: Long): Unit = log.checkpoint(log.snapshotAt(version))

  /** Why the drop of `remover.feature` is not allowed at `snapshot` (protocol or traces), None when it is. */
  private def invalidAt(remover: FeatureRemover, snapshot: Snapshot): Option[String] =
    if (!snapshot.protocol.isFeatureSupported(remover.feature)) Some(s"${remover.feature.name} is no longer in the protocol")
    else remover.traces(snapshot)

  /** The downgrade commit; returns its version. */
  private def downgrade(feature: TableFeature, remover: FeatureRemover, protect: Boolean): Long = {
    val txn = OptimisticTransaction.start(log, clock)
    val snapshot = txn.snapshot
    // A commit between the pre-downgrade and now may have used the feature again.
    invalidAt(remover, snapshot).foreach { why =>
      throw new DropFeatureConflictException(table, snapshot.version, feature.name, why)
    }
    var p = Protocol.dropFeatureSupport(snapshot.protocol, feature.name)
    if (protect) p = Protocol.addFeatureSupport(p, TableFeature.CheckpointProtection.name).normalized
    val m = snapshot.metadata
    val removed = remover.propertiesRemovedAtDowngrade(m.configuration)
    if (removed.exists(m.configuration.contains)) txn.updateMetadata(m.copy(configuration = m.configuration -- removed))
    txn.downgradeProtocol(ProtocolDowngrade(feature.name, p, protect,
      v => invalidAt(remover, log.snapshotAt(v))))
    beforeDowngradeCommit(txn)
    txn.commit(remover.actionsAtDowngrade(snapshot), Operation.dropFeature(featureName, truncateHistory))
  }

  // ------------------------------------------------------------------------------ TRUNCATE HISTORY

  private def truncateRetentionMs(s: Snapshot): Long =
    s.metadata.configuration.get(TruncateRetentionKey).flatMap(IntervalProperty.parseMillis)
      .getOrElse(DefaultTruncateRetentionMs)

  private def waitForRetention(f: TableFeature, retentionMs: Long): TableFeatureException =
    new TableFeatureException("DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD",
      s"Dropping ${f.name} from table $table was partially successful: the latest version no longer uses the " +
        "feature, but older versions of the table still do, so the protocol still lists it. Wait until those " +
        s"versions are older than $TruncateRetentionKey (${retentionText(retentionMs)}), then run ALTER TABLE " +
        s"$table DROP FEATURE ${f.name} TRUNCATE HISTORY again.")

  /** The first version from `from` on (its checkpoint state, then the commits) that uses the feature. */
  private def historyUse(remover: FeatureRemover, from: Long): Option[Long] = {
    val latest = log.update()
    val base = log.snapshotAt(from)
    if (base.allFiles.exists(a => remover.actionUsesFeature(a)) || invalidAt(remover, base).isDefined) {
      return Some(from)
    }
    val reader = new io.deltalog.log.CommitReader(log.fs)
    io.deltalog.log.LogSegmentBuilder.listCommits(log.fs, log.logPath, from + 1)
      .filter(s => io.deltalog.log.FileNames.deltaVersion(s) > from && io.deltalog.log.FileNames.deltaVersion(s) <= latest.version)
      .find(s => reader.read(s).actions.exists(remover.actionUsesFeature))
      .map(io.deltalog.log.FileNames.deltaVersion)
  }

  /**
   * `checkpointProtection TRUNCATE HISTORY`: the history before
   * `delta.requireCheckpointProtectionBeforeVersion` must be gone (truncated with the drop's retention).
   */
  private def dropCheckpointProtection(snapshot: Snapshot): Long = {
    val retentionMs = truncateRetentionMs(snapshot)
    val protectedBefore = snapshot.metadata.configuration.get(ProtocolDowngrade.RequireCheckpointProtectionBeforeVersionKey)
      .flatMap(_.trim.toLongOption).getOrElse(0L)
    // As delta-spark 4.4, each attempt first ends the history with a checkpointed empty commit.
    checkpointAt(emptyCommit())
    val kept = MetadataCleanup.truncate(log, MetadataCleanup.cutoff(clock.nowMillis(), retentionMs))
    if (kept < protectedBefore) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD",
        s"Cannot drop checkpointProtection from table $table yet: versions before $protectedBefore (history of " +
          s"dropped features) are younger than $TruncateRetentionKey (${retentionText(retentionMs)}). Wait until " +
          s"they have expired, then run ALTER TABLE $table DROP FEATURE checkpointProtection TRUNCATE HISTORY again.")
    }
    val remover = FeatureRemovers.NoTraces(TableFeature.CheckpointProtection)
    val txn = OptimisticTransaction.start(log, clock)
    val m = txn.metadata
    val key = ProtocolDowngrade.RequireCheckpointProtectionBeforeVersionKey
    if (m.configuration.contains(key)) txn.updateMetadata(m.copy(configuration = m.configuration - key))
    txn.downgradeProtocol(ProtocolDowngrade(remover.feature.name,
      Protocol.dropFeatureSupport(txn.snapshot.protocol, remover.feature.name), protectCheckpoints = false,
      v => invalidAt(remover, log.snapshotAt(v))))
    beforeDowngradeCommit(txn)
    txn.commit(Nil, Operation.dropFeature(featureName, truncateHistory))
  }
}

object DropTableFeature {
  val TruncateRetentionKey = "delta.dropFeatureTruncateHistory.retentionDuration"
  val DefaultTruncateRetentionMs: Long = 24L * 3600 * 1000

  private def retentionText(ms: Long): String =
    if (ms % 3600000L == 0) s"${ms / 3600000L} hours"
    else if (ms % 60000L == 0) s"${ms / 60000L} minutes"
    else s"${ms / 1000.0} seconds"

  /** Drops `featureName` from the table at `path` (Hadoop `conf`); returns the downgrade commit's version. */
  def run(log: DeltaLog, featureName: String, truncateHistory: Boolean, table: String): Long =
    new DropTableFeature(log, featureName, truncateHistory, table).run()
}
