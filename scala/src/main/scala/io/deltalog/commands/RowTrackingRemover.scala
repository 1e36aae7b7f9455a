package io.deltalog.commands

import io.deltalog.actions.{Action, AddFile}
import io.deltalog.exceptions.TableFeatureException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.TableFeature
import io.deltalog.txn.{Operation, OptimisticTransaction, RowTracking}

/**
 * DROP FEATURE `rowTracking` (digest §6.3), as delta-spark 4.4 (a writer feature without history
 * protection, so no barrier and no TRUNCATE HISTORY):
 *  1. `delta.enableRowTracking` = false and `delta.rowTrackingSuspended` = true (`SET TBLPROPERTIES`):
 *     from then on no writer assigns row ids;
 *  2. every file with `baseRowId` / `defaultRowCommitVersion` is re-added without them
 *     (`ROW TRACKING UNBACKFILL`, `dataChange = false`, at most [[BatchSize]] files a commit; the
 *     data files are not touched, materialized row id columns stay in them unread);
 *  3. the downgrade commit removes the two properties and both materialized column names, and
 *     the `delta.rowTracking` domain (high-water mark). `domainMetadata` stays in the protocol.
 */
private[commands] object RowTrackingRemover extends FeatureRemover {
  /** delta-spark's `backfill.maxNumFiles` default. */
  val BatchSize = 22000

  def feature: TableFeature = TableFeature.RowTracking

  private def withRowIds(s: Snapshot): Seq[AddFile] =
    s.allFiles.filter(a => a.baseRowId.isDefined || a.defaultRowCommitVersion.isDefined).toVector

  def traces(snapshot: Snapshot): Option[String] = {
    val m = snapshot.metadata
    if (FeatureRemovers.isTrue(m.configuration, RowTracking.EnableKey)) Some(s"${RowTracking.EnableKey} is true")
    else if (!RowTracking.isSuspended(m)) Some(s"${RowTracking.SuspendedKey} is not true")
    else {
      val n = withRowIds(snapshot).size
      if (n > 0) Some(s"$n data file(s) have row ids (baseRowId / defaultRowCommitVersion)") else None
    }
  }

  override def preDowngrade(log: DeltaLog, table: String): Boolean = {
    if (traces(log.update()).isEmpty) return false
    val suspend = Map(RowTracking.EnableKey -> "false", RowTracking.SuspendedKey -> "true")
    val txn = OptimisticTransaction.start(log)
    txn.updateMetadata(txn.metadata.copy(configuration = txn.metadata.configuration ++ suspend))
    txn.commit(Nil, Operation.setTableProperties(suspend))
    unbackfill(log, table)
    true
  }

  /** Step 2, batch by batch, each on the latest version (files a concurrent commit removed are skipped). */
  private def unbackfill(log: DeltaLog, table: String): Unit = {
    val batches = withRowIds(log.update()).map(_.path).grouped(BatchSize).toVector
    batches.zipWithIndex.foreach { case (paths, batchId) =>
      val txn = OptimisticTransaction.start(log)
      val m = txn.metadata
      if (FeatureRemovers.isTrue(m.configuration, RowTracking.EnableKey) || !RowTracking.isSuspended(m)) {
        throw new TableFeatureException("DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL",
          s"Cannot drop rowTracking from table $table: a concurrent commit enabled row tracking again (or " +
            s"resumed row id generation) while its row ids were being removed (version ${txn.readVersion}). " +
            s"Nothing more was changed; run ALTER TABLE $table DROP FEATURE rowTracking again.")
      }
      val wanted = paths.toSet
      val files = txn.filterFiles().filter(f => wanted.contains(f.path))
      if (files.nonEmpty) {
        txn.commit(files.map(_.copy(baseRowId = None, defaultRowCommitVersion = None, dataChange = false)),
          Operation.rowTrackingUnBackfill(batchId))
      }
    }
  }

  override def propertiesRemovedAtDowngrade(conf: Map[String, String]): Set[String] =
    Set(RowTracking.EnableKey, RowTracking.SuspendedKey, RowTracking.MaterializedRowIdColumnNameKey,
      RowTracking.MaterializedRowCommitVersionColumnNameKey)

  override def actionsAtDowngrade(snapshot: Snapshot): Seq[Action] =
    snapshot.domainMetadata.filter(d => d.domain == RowTracking.Domain && !d.removed).map(_.copy(removed = true))
}
