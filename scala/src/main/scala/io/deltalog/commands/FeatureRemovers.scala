package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.actions.{Action, AddFile, CheckpointMetadata, DeletionVectorDescriptor, DomainMetadata, Metadata,
  RemoveFile, SidecarFile}
import io.deltalog.exceptions.TableFeatureException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.TableFeature
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * What DROP FEATURE must know about one feature deltalog can drop (digest §5.8): the traces the
 * feature leaves in a table, how to remove them (the pre-downgrade commits) and how to recognise
 * its use in a commit of the history.
 */
private[deltalog] trait FeatureRemover {
  def feature: TableFeature

  /**
   * Refuses, before anything is written, a drop whose traces deltalog cannot remove (files it
   * would have to rewrite, constraints the user must drop).
   */
  def checkCanRemove(snapshot: Snapshot, table: String): Unit = ()

  /**
   * The pre-downgrade commits: removes the feature's traces from the latest version. Returns true
   * when something was committed.
   */
  def preDowngrade(log: DeltaLog, table: String): Boolean = false

  /** Why `snapshot` still uses the feature (None: the protocol may lose it). */
  def traces(snapshot: Snapshot): Option[String]

  /** Table properties removed by the downgrade commit itself. */
  def propertiesRemovedAtDowngrade(conf: Map[String, String]): Set[String] = Set.empty

  /** Actions the downgrade commit writes besides protocol and metadata (e.g. a domain removed). */
  def actionsAtDowngrade(snapshot: Snapshot): Seq[Action] = Nil

  /** Whether `action` (of a commit or a checkpoint) uses the feature (TRUNCATE HISTORY's history scan). */
  def actionUsesFeature(action: Action): Boolean = false

  /**
   * Features deltalog does not otherwise write that the drop's own commits may write (the
   * feature itself when deltalog only reads it, e.g. `typeWidening-preview`).
   */
  def writerFeaturesForDrop: Set[String] = Set.empty
}

private[deltalog] object FeatureRemovers {
  /** The remover of `feature`, None when deltalog cannot drop it (yet). */
  def forFeature(feature: TableFeature): Option[FeatureRemover] = feature match {
    case TableFeature.DeletionVectors => Some(DeletionVectorsRemover)
    case TableFeature.CheckConstraints => Some(CheckConstraintsRemover)
    case TableFeature.V2Checkpoint => Some(V2CheckpointRemover)
    case TableFeature.VacuumProtocolCheck => Some(NoTraces(TableFeature.VacuumProtocolCheck))
    case TableFeature.InCommitTimestamp => Some(InCommitTimestampRemover)
    case TableFeature.DomainMetadata => Some(DomainMetadataRemover)
    case TableFeature.CheckpointProtection => Some(NoTraces(TableFeature.CheckpointProtection))
    case TableFeature.TypeWidening => Some(TypeWideningRemover)
    case TableFeature.TypeWideningPreview => Some(TypeWideningRemover.Preview)
    case TableFeature.ColumnMapping => Some(ColumnMappingRemover)
    case TableFeature.RowTracking => Some(RowTrackingRemover)
    case _ => None
  }

  /**
   * The Spark session a pre-downgrade that rewrites data files runs in: the active one (DROP
   * FEATURE runs inside one). `why` says what must be rewritten.
   */
  private[commands] def rewriteSession(feature: TableFeature, table: String, why: String): ClassicSession =
    SparkSession.getActiveSession.collect { case c: ClassicSession => c }.getOrElse {
      throw new TableFeatureException("DELTALOG_FEATURE_DROP_NEEDS_REWRITE",
        s"Cannot drop ${feature.name} from table $table yet: $why, which needs an active Spark session. Run " +
          s"ALTER TABLE $table DROP FEATURE ${feature.name} in a Spark session with deltalog.")
    }

  private[commands] def isTrue(conf: Map[String, String], key: String): Boolean =
    conf.get(key).exists(_.trim.equalsIgnoreCase("true"))

  /** One `UNSET TBLPROPERTIES` commit of `keys` that are set (as delta-spark's pre-downgrade does). */
  private[commands] def unsetProperties(log: DeltaLog, keys: Seq[String]): Boolean = {
    val txn = OptimisticTransaction.start(log)
    val m = txn.metadata
    val present = keys.filter(m.configuration.contains)
    if (present.isEmpty) return false
    txn.updateMetadata(m.copy(configuration = m.configuration -- present))
    txn.commit(Nil, Operation.unsetTableProperties(present, ifExists = true))
    true
  }

  /** A feature with nothing to remove but its name in the protocol. */
  final case class NoTraces(feature: TableFeature) extends FeatureRemover {
    def traces(snapshot: Snapshot): Option[String] = None
  }

  // ------------------------------------------------------------------------------ deletionVectors

  object DeletionVectorsRemover extends FeatureRemover {
    val EnableKey = "delta.enableDeletionVectors"
    def feature: TableFeature = TableFeature.DeletionVectors

    private def filesWithDvs(snapshot: Snapshot): Seq[AddFile] =
      snapshot.allFiles.filter(_.deletionVector.isDefined).toVector

    /** The session REORG PURGE runs in: the active Spark session (DROP FEATURE runs inside one). */
    private def session(table: String, withDvs: Seq[AddFile]): ClassicSession =
      SparkSession.getActiveSession.collect { case c: ClassicSession => c }.getOrElse {
        throw new TableFeatureException("DELTALOG_FEATURE_DROP_NEEDS_REWRITE",
          s"Cannot drop deletionVectors from table $table yet: ${withDvs.size} data file(s) still have deletion " +
            s"vectors (e.g. ${withDvs.head.path}), and purging them needs an active Spark session. Run REORG TABLE " +
            s"$table APPLY (PURGE) in a Spark session with deltalog, then run ALTER TABLE $table DROP FEATURE " +
            "deletionVectors again.")
      }

    /**
     * As delta-spark 4.4: `delta.enableDeletionVectors` removed (`UNSET TBLPROPERTIES`), then the
     * files with deletion vectors rewritten without them (`REORG … APPLY (PURGE)`, [[ReorgPurgeCommand]]),
     * then a `Deletion Vector Tombstones` commit; the downgrade then requires the DV-free state.
     */
    override def preDowngrade(log: DeltaLog, table: String): Boolean = {
      val unset = unsetProperties(log, Seq(EnableKey))
      val withDvs = filesWithDvs(log.update())
      val purged = withDvs.nonEmpty &&
        new ReorgPurgeCommand(session(table, withDvs), log.tablePath.toString, None, Some(table)).run().version >= 0
      // Deletion vector files only tombstones reference get their own tombstones, so that a
      // VACUUM that does not know deletion vectors removes them too (delta-spark writes this commit
      // also when it is empty).
      val txn = OptimisticTransaction.start(log)
      val root = log.tablePath.toString.stripSuffix("/")
      val live = txn.snapshot.allFiles.flatMap(_.deletionVector).map(_.uniqueId).toSet
      val now = txn.clock.nowMillis()
      val dvFiles = txn.snapshot.tombstones.flatMap(_.deletionVector)
        .filter(d => d.storageType == DeletionVectorDescriptor.UuidFile && !live.contains(d.uniqueId))
        .map(d => d.absolutePath(root).stripPrefix(root + "/")).toVector.distinct.sorted
      txn.commit(dvFiles.map(p => RemoveFile(p, deletionTimestamp = Some(now), dataChange = false)),
        Operation.deletionVectorTombstones)
      unset || purged || dvFiles.nonEmpty
    }

    def traces(snapshot: Snapshot): Option[String] =
      if (isTrue(snapshot.metadata.configuration, EnableKey)) Some(s"$EnableKey is true")
      else {
        val n = filesWithDvs(snapshot).size
        if (n > 0) Some(s"$n data file(s) have deletion vectors") else None
      }

    override def propertiesRemovedAtDowngrade(conf: Map[String, String]): Set[String] = Set(EnableKey)

    override def actionUsesFeature(action: Action): Boolean = action match {
      case a: AddFile => a.deletionVector.isDefined
      case r: RemoveFile => r.deletionVector.isDefined
      case m: Metadata => isTrue(m.configuration, EnableKey)
      case _ => false
    }
  }

  // ------------------------------------------------------------------------------ checkConstraints

  object CheckConstraintsRemover extends FeatureRemover {
    private val Prefix = "delta.constraints."
    def feature: TableFeature = TableFeature.CheckConstraints

    private def constraints(m: Metadata): Seq[String] =
      m.configuration.keys.filter(_.toLowerCase(Locale.ROOT).startsWith(Prefix)).map(_.substring(Prefix.length))
        .toSeq.sorted

    override def checkCanRemove(snapshot: Snapshot, table: String): Unit = {
      val names = constraints(snapshot.metadata)
      if (names.nonEmpty) {
        throw new TableFeatureException("DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE",
          s"Cannot drop the CHECK constraints table feature from table $table: drop its constraints first " +
            s"(${names.map(n => s"`$n`").mkString(", ")}) with ALTER TABLE $table DROP CONSTRAINT <name>.")
      }
    }

    def traces(snapshot: Snapshot): Option[String] = {
      val names = constraints(snapshot.metadata)
      if (names.isEmpty) None else Some(s"CHECK constraint(s) ${names.mkString(", ")} are defined")
    }
  }

  // ------------------------------------------------------------------------------ v2Checkpoint

  object V2CheckpointRemover extends FeatureRemover {
    val PolicyKey = "delta.checkpointPolicy"
    def feature: TableFeature = TableFeature.V2Checkpoint

    private def isV2(conf: Map[String, String]) = conf.get(PolicyKey).exists(_.trim.equalsIgnoreCase("v2"))

    override def preDowngrade(log: DeltaLog, table: String): Boolean = {
      val txn = OptimisticTransaction.start(log)
      val m = txn.metadata
      if (!isV2(m.configuration)) return false
      val props = Map(PolicyKey -> "classic")
      txn.updateMetadata(m.copy(configuration = m.configuration ++ props))
      // The next checkpoints (the barrier's) are classic; delta-spark 4.4 writes none here.
      txn.commit(Nil, Operation.setTableProperties(props))
      true
    }

    def traces(snapshot: Snapshot): Option[String] =
      if (isV2(snapshot.metadata.configuration)) Some(s"$PolicyKey is v2") else None

    override def actionUsesFeature(action: Action): Boolean = action match {
      case _: CheckpointMetadata | _: SidecarFile => true
      case m: Metadata => isV2(m.configuration)
      case _ => false
    }
  }

  // ------------------------------------------------------------------------------ inCommitTimestamp

  object InCommitTimestampRemover extends FeatureRemover {
    val Keys: Seq[String] = Seq("delta.enableInCommitTimestamps", "delta.inCommitTimestampEnablementVersion",
      "delta.inCommitTimestampEnablementTimestamp")
    def feature: TableFeature = TableFeature.InCommitTimestamp

    /**
     * As delta-spark 4.4: `delta.enableInCommitTimestamps` is set to false (not removed) and the
     * enablement version / timestamp are removed, recorded as `UNSET TBLPROPERTIES` of the first.
     */
    override def preDowngrade(log: DeltaLog, table: String): Boolean = {
      val txn = OptimisticTransaction.start(log)
      val m = txn.metadata
      if (!isTrue(m.configuration, Keys.head) && !Keys.tail.exists(m.configuration.contains)) return false
      txn.updateMetadata(m.copy(configuration = m.configuration -- Keys.tail + (Keys.head -> "false")))
      txn.commit(Nil, Operation.unsetTableProperties(Seq(Keys.head), ifExists = true))
      true
    }

    def traces(snapshot: Snapshot): Option[String] =
      if (isTrue(snapshot.metadata.configuration, Keys.head)) Some(s"${Keys.head} is true") else None
  }

  // ------------------------------------------------------------------------------ domainMetadata

  /**
   * DROP FEATURE `domainMetadata` (only once no feature that needs it is supported, which the
   * protocol rules check): as delta-spark 4.4, domains left in the table (leaked by features
   * dropped earlier or written by applications) are removed by one `DOMAIN METADATA CLEANUP`
   * commit before the downgrade.
   */
  object DomainMetadataRemover extends FeatureRemover {
    def feature: TableFeature = TableFeature.DomainMetadata

    private def domains(s: Snapshot): Seq[DomainMetadata] = s.domainMetadata.filterNot(_.removed)

    def traces(snapshot: Snapshot): Option[String] = {
      val ds = domains(snapshot)
      if (ds.isEmpty) None else Some(s"the table has metadata domain(s) ${ds.map(_.domain).sorted.mkString(", ")}")
    }

    override def preDowngrade(log: DeltaLog, table: String): Boolean = {
      val txn = OptimisticTransaction.start(log)
      val removed = domains(txn.snapshot).map(_.copy(removed = true))
      if (removed.isEmpty) return false
      txn.commit(removed, Operation.domainMetadataCleanup(removed.size))
      true
    }
  }
}
