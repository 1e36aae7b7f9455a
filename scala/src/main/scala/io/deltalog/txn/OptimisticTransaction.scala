package io.deltalog.txn

import java.nio.charset.StandardCharsets
import java.nio.file.FileAlreadyExistsException
import java.util.UUID

import scala.collection.mutable
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import org.slf4j.LoggerFactory

import io.deltalog.actions._
import io.deltalog.exceptions._
import io.deltalog.expressions.Predicate
import io.deltalog.log.{CommitReader, DeltaLog, FileNames, IctConfig, LogSegmentBuilder, LogStore, MetadataCleanup, Snapshot}
import io.deltalog.protocol.{ClientCapabilities, MetadataView, Protocol, TableFeature}

/**
 * An optimistic transaction on one table (the seed's `OptimisticTransactionImpl`): reads go
 * through [[filterFiles]] / [[readWholeTable]] / [[txnVersion]] (which record what the commit
 * depends on), changes are given to [[commit]], which writes `readVersion + 1` with put-if-absent
 * and, when a concurrent writer won that version, checks the winners for logical conflicts
 * (digest §8.3, [[ConflictChecker]]) and retries at the next version.
 *
 * Not thread-safe: one transaction is used by one thread.
 *
 * @param snapshot the table state read; [[DeltaLog.initialSnapshot]] (version -1) creates the table
 */
class OptimisticTransaction(val deltaLog: DeltaLog, val snapshot: Snapshot, val clock: Clock = Clock.system) {
  import OptimisticTransaction._

  /** Unique id of this transaction (`commitInfo.txnId`). */
  val txnId: String = UUID.randomUUID().toString

  /** Table path for messages. */
  def table: String = deltaLog.tablePath.toString

  /** Version of the snapshot read; -1 when the table does not exist yet. */
  def readVersion: Long = snapshot.version

  private def isNewTableRead: Boolean = readVersion < 0

  /** Session defaults for new tables (`spark.databricks.delta.properties.defaults.*`). */
  var sessionDefaults: Map[String, String] = TxnConf.sessionDefaults(deltaLog.hadoopConf)

  /** Unknown `delta.*` table properties are accepted (`spark.databricks.delta.allowArbitraryProperties.enabled`). */
  var allowArbitraryProperties: Boolean = TxnConf.allowArbitraryProperties(deltaLog.hadoopConf)

  /** Test hook: how a checkpoint is written after a commit at the checkpoint interval. */
  var checkpointer: (DeltaLog, Snapshot) => Unit = (dl, s) => { dl.checkpoint(s); () }

  /** Test hook: called with the version right after its commit file was written. */
  var afterCommitFileWritten: Long => Unit = _ => ()

  // --------------------------------------------------------------------------------- state

  private var newMetadata: Option[Metadata] = None
  private var newProtocol: Option[Protocol] = None
  private var downgrade: Option[ProtocolDowngrade] = None
  private var isCreatingNewTable = isNewTableRead
  private var hasWritten = false
  @volatile private var _committed = false
  private var committedVersion: Long = -1L

  /** Predicates of each read (an empty list = every file), as recorded by the reads. */
  private val readPredicates = mutable.ArrayBuffer.empty[Seq[Predicate]]
  /** Files read, by canonical path key. */
  private val readFiles = mutable.LinkedHashMap.empty[String, AddFile]
  private var readTheWholeTable = false
  private val readTxn = mutable.LinkedHashSet.empty[String]
  private val postCommitHooks = mutable.ArrayBuffer.empty[PostCommitHook]

  /** True once [[commit]] succeeded. */
  def committed: Boolean = _committed

  /** The committed version (-1 before). */
  def commitVersion: Long = committedVersion

  /** The metadata this transaction will commit with: the new one if changed, else the snapshot's. */
  def metadata: Metadata = newMetadata.getOrElse(snapshot.metadata)

  /** The protocol this transaction will commit with. */
  def protocol: Protocol = newProtocol.getOrElse(snapshot.protocol)

  /** The metadata given to [[updateMetadata]] (after processing), if any. */
  def metadataChange: Option[Metadata] = newMetadata

  /** The protocol change computed so far, if any. */
  def protocolChange: Option[Protocol] = newProtocol

  /** Predicates recorded by reads (one entry per read; their conjunction selects what it read). */
  def recordedReadPredicates: Seq[Seq[Predicate]] = readPredicates.toSeq

  /** Files recorded as read. */
  def recordedReadFiles: Seq[AddFile] = readFiles.values.toSeq

  /** True when a read covered the whole table. */
  def readsWholeTable: Boolean = readTheWholeTable

  /** App ids read through [[txnVersion]]. */
  def readAppIds: Set[String] = readTxn.toSet

  // --------------------------------------------------------------------------------- writes

  /** Records that data files were written for this transaction (metadata may no longer change). */
  def markWritten(): Unit = hasWritten = true

  /** Records written files (see [[markWritten]]). */
  def registerWrittenFiles(files: Seq[AddFile]): Unit = if (files.nonEmpty) markWritten()

  // --------------------------------------------------------------------------------- metadata

  /**
   * Changes the table metadata in this transaction. For a new table the protocol is derived
   * with `Protocol.forNewTable` (session defaults, protocol properties); for an existing table the
   * protocol properties (`delta.minReaderVersion`, `delta.minWriterVersion`, `delta.feature.*`)
   * are applied and the protocol upgraded for features the metadata enables. Protocol properties
   * are never persisted.
   */
  def updateMetadata(m: Metadata): Unit = {
    assertion(!hasWritten, "Cannot update the metadata in a transaction that has already written data.")
    assertion(newMetadata.isEmpty, "Cannot change the metadata more than once in a transaction.")
    applyMetadata(m)
  }

  /** [[updateMetadata]] for CREATE / REPLACE: the protocol is computed as for a new table. */
  def updateMetadataForNewTable(m: Metadata): Unit = {
    isCreatingNewTable = true
    updateMetadata(m)
  }

  private def applyMetadata(m0: Metadata): Unit = {
    val m1 = if (m0.schemaString == null) m0.copy(schemaString = DeltaLog.EmptySchemaString) else m0
    val m = m1.copy(configuration = checkedTableProperties(m1.configuration))
    if (isCreatingNewTable) {
      // Session defaults of known properties only (delta-spark ignores the others), checked too.
      val defaults = TableProperties.canonicalize(Protocol.sessionDefaultTableProperties(sessionDefaults))
        .filter { case (k, _) => TableProperties.get(k).isDefined && !m.configuration.contains(k) }
      TableProperties.validate(defaults, table, allowArbitraryProperties, m.configuration)
      val conf = defaults ++ m.configuration
      val withDefaults = m.copy(configuration = conf)
      var p = Protocol.forNewTable(withDefaults, sessionDefaults)
      if (!isNewTableRead) p = p.merge(snapshot.protocol) // REPLACE never downgrades
      newProtocol = Some(p)
      newMetadata = Some(withDefaults.copy(configuration = Protocol.filterProtocolPropsFromTableProps(conf)))
    } else {
      val conf = m.configuration
      val current = protocol
      var p = current
      Protocol.protocolVersionsFromTableConf(conf) match {
        case (None, None) =>
        case (r, w) => p = Protocol.upgradeTableProtocol(p, r.getOrElse(p.minReaderVersion), w.getOrElse(p.minWriterVersion))
      }
      TableFeature.sortedByName(Protocol.supportedFeaturesFromTableConfigs(conf)).foreach { f =>
        p = Protocol.addFeatureSupport(p, f.name)
      }
      val cleaned = m.copy(configuration = Protocol.filterProtocolPropsFromTableProps(conf))
      Protocol.upgradeProtocolFromMetadataForExistingTable(cleaned, p).foreach(up => p = up)
      if (p != current) {
        Protocol.assertCanUpgradeTo(current, p)
        newProtocol = Some(p)
      }
      newMetadata = Some(cleaned)
    }
    verifyNewMetadata(newMetadata.get)
  }

  /**
   * `conf` with the new or changed table properties (all of them for a new table) in their canonical
   * spelling and checked ([[TableProperties.validate]]); unchanged ones, even odd values another
   * engine wrote, pass as they are.
   */
  private def checkedTableProperties(conf0: Map[String, String]): Map[String, String] = {
    val before = if (isNewTableRead) Map.empty[String, String] else snapshot.metadata.configuration
    val changed0 = TableProperties.changed(before, conf0)
    val renamed = changed0.keys.filter(k => TableProperties.canonicalKey(k) != k).toSet
    val conf = (conf0 -- renamed) ++ TableProperties.canonicalize(changed0.filter { case (k, _) => renamed(k) })
    TableProperties.validate(TableProperties.changed(before, conf), table, allowArbitraryProperties, conf)
    conf
  }

  /**
   * Row tracking's materialized column names ([[RowTracking.withMaterializedColumnNames]]) in the
   * metadata this commit writes, when it changes the metadata or makes the table support row
   * tracking; an existing table's names are kept.
   */
  private def assignMaterializedRowTrackingColumnNames(): Unit = {
    val supportedBefore = !isNewTableRead && RowTracking.isSupported(snapshot.protocol)
    if (newMetadata.isDefined || (RowTracking.isSupported(protocol) && !supportedBefore)) {
      val base = metadata
      val named = RowTracking.withMaterializedColumnNames(protocol,
        if (isNewTableRead) None else Some(snapshot.metadata), base, table)
      if (named ne base) newMetadata = Some(named)
    }
  }

  /**
   * Row tracking made supported by this commit on a table with files: each live file without row
   * ids is re-added (`dataChange = false`) so that it gets `baseRowId` / `defaultRowCommitVersion`
   * in this commit (the protocol's backfill). The whole table counts as read, so a concurrent
   * change of files conflicts. Files this commit adds or removes itself are left to it.
   */
  private def rowTrackingBackfill(given: Seq[Action]): Seq[AddFile] = {
    if (isNewTableRead || RowTracking.isSupported(snapshot.protocol) || !RowTracking.assignsIds(protocol, metadata)) {
      return Nil
    }
    val touched = given.collect { case f: FileAction => PathCodec.canonicalPathKey(f.path) }.toSet
    val files = snapshot.allFiles
      .filter(f => f.baseRowId.isEmpty && !touched.contains(PathCodec.canonicalPathKey(f.path))).toVector
    readWholeTable() // also when there are no files yet: a concurrent append would lack row ids
    files.map(_.copy(dataChange = false))
  }

  /**
   * Checks a metadata about to be committed: valid schema JSON, partition columns in the schema,
   * no protocol properties left, consistent column-mapping metadata, valid isolation level,
   * materialized row tracking column names that name no column.
   */
  def verifyNewMetadata(m: Metadata): Unit = {
    SchemaInfo.verify(m, table)
    Protocol.assertMetadataContainsNoProtocolProps(m.configuration)
    IsolationLevel.fromTableProperties(m.configuration)
    MetadataView.boolValue(AppendOnlyKey, m.configuration.get(AppendOnlyKey))
    RowTracking.checkMaterializedColumnNames(m, table)
    GenerateSymlinkManifest.checkTableProperties(m, snapshot, table)
  }

  // --------------------------------------------------------------------------------- DROP FEATURE

  /**
   * Makes this transaction the downgrade commit of DROP FEATURE: it writes `d.newProtocol`, which
   * supports fewer features than the protocol read (every other commit must keep them all). The
   * caller has checked that the table no longer uses the feature; a concurrent winner is checked
   * again with `d.revalidate` ([[ConflictChecker]]). Call [[updateMetadata]] first when the
   * metadata changes too (else the read metadata is written again, as delta-spark does); with `d.protectCheckpoints` the metadata gets
   * `delta.requireCheckpointProtectionBeforeVersion` = the version written.
   */
  def downgradeProtocol(d: ProtocolDowngrade): Unit = {
    assertion(!isNewTableRead, "Cannot drop a feature from a table that does not exist.")
    assertion(!hasWritten, "Cannot change the protocol in a transaction that has already written data.")
    assertion(downgrade.isEmpty, "Cannot drop more than one feature in a transaction.")
    Protocol.checkCanWrite(d.newProtocol, ClientCapabilities.deltalog, table)
    downgrade = Some(d)
    newProtocol = Some(d.newProtocol)
    // delta-spark writes the metadata in every downgrade commit (so that a concurrent metadata change conflicts).
    if (newMetadata.isEmpty) newMetadata = Some(snapshot.metadata)
  }

  private var writeUnchangedProtocol = false

  /**
   * Writes a `protocol` action given to [[commit]] even when it equals the table's (RESTORE writes the
   * protocol it restores to in every commit, as delta-spark does); it is still merged with the read one.
   */
  def writeProtocolEvenIfUnchanged(): Unit = writeUnchangedProtocol = true

  /** The DROP FEATURE downgrade this transaction commits, if any. */
  def protocolDowngrade: Option[ProtocolDowngrade] = downgrade

  // --------------------------------------------------------------------------------- reads

  /** All live files; the transaction depends on the whole table. */
  def filterFiles(): Seq[AddFile] = {
    readWholeTable()
    val files = snapshot.allFiles.toVector
    files.foreach(trackRead)
    files
  }

  /**
   * Live files whose partition values satisfy the partition-only predicates among `predicates`
   * (data predicates do not prune here). All `predicates` (partition and data) and the returned
   * files are recorded for conflict detection: a concurrently added file conflicts only when its
   * partition values and stats may satisfy every predicate (see [[ConflictChecker]]).
   */
  def filterFiles(predicates: Seq[Predicate]): Seq[AddFile] = {
    val md = snapshot.metadata
    val partCols = md.partitionColumns
    val partitionPreds = predicates.filter(p => PartitionFilter.isPartitionOnly(p, partCols))
    readPredicates += predicates
    val files =
      if (partitionPreds.isEmpty) snapshot.allFiles.toVector
      else {
        val types = PartitionFilter.partitionTypes(md.schemaString, partCols)
        val physical = SchemaInfo.physicalPartitionColumns(md)
        snapshot.allFiles.filter { f =>
          PartitionFilter.matchesAll(partitionPreds, SchemaInfo.logicalPartitionValues(md, physical, f.partitionValues),
            types)
        }.toVector
      }
    files.foreach(trackRead)
    files
  }

  /**
   * Records `files` as read and nothing else (no predicate, not the whole table): for a commit that
   * rewrites exactly these files without changing data (OPTIMIZE), which conflicts only with a
   * concurrent removal of one of them, never with concurrent appends.
   */
  def readFilesOnly(files: Seq[AddFile]): Unit = files.foreach(trackRead)

  /** Marks the whole table as read (any concurrent change of data conflicts). */
  def readWholeTable(): Unit = {
    readPredicates += Nil
    readTheWholeTable = true
  }

  private def trackRead(f: AddFile): Unit = readFiles(PathCodec.canonicalPathKey(f.path)) = f

  /** Version of application transaction `appId` in the snapshot, -1 if unknown; recorded as read. */
  def txnVersion(appId: String): Long = {
    readTxn += appId
    if (isNewTableRead) -1L
    else snapshot.setTransactions.find(_.appId == appId).map(_.version).getOrElse(-1L)
  }

  // --------------------------------------------------------------------------------- hooks

  def registerPostCommitHook(hook: PostCommitHook): Unit =
    if (!postCommitHooks.exists(_ eq hook)) postCommitHooks += hook

  /** Registered hooks, in registration order. */
  def registeredPostCommitHooks: Seq[PostCommitHook] = postCommitHooks.toSeq

  // --------------------------------------------------------------------------------- commit

  /**
   * Commits `actions` as operation `op` and returns the committed version.
   *
   * @throws DeltaConcurrentModificationException when a concurrent commit conflicts
   */
  def commit(actions: Seq[Action], op: Operation): Long = {
    val prepared = prepareCommit(actions, op)
    val isolationLevel = isolationLevelToUse(prepared.all, op)
    val onlyAddFiles = prepared.all.collect { case f: FileAction => f }.forall(_.isInstanceOf[AddFile])
    val dependsOnFiles = readPredicates.nonEmpty || readFiles.nonEmpty
    val isBlindAppend = onlyAddFiles && !dependsOnFiles
    if (GenerateSymlinkManifest.isEnabled(prepared.metadataForCommit(snapshot.metadata).configuration) &&
        prepared.all.exists(_.isInstanceOf[FileAction])) {
      registerPostCommitHook(GenerateSymlinkManifest)
    }
    val (version, written, postSnapshot) = doCommitRetryIteratively(readVersion + 1, prepared, op, isolationLevel,
      isBlindAppend)
    log.info(s"Committed delta #$version to ${deltaLog.logPath}")
    postCommit(version, written, postSnapshot)
    runPostCommitHooks(version, written, postSnapshot)
    version
  }

  /**
   * Folds the metadata / protocol changes into the actions and validates the commit (seed's
   * `prepareCommit`).
   */
  private def prepareCommit(actions: Seq[Action], op: Operation): Prepared = {
    assertion(!committed, "Transaction already committed.")
    val metadatas = actions.collect { case m: Metadata => m }
    assertion(metadatas.size + newMetadata.size <= 1, "Cannot change the metadata more than once in a transaction.")
    metadatas.headOption.foreach(applyMetadata)

    val protocols = actions.collect { case p: Protocol => p }
    if (protocols.size > 1) {
      throw new InvalidCommitException("DELTA_MULTIPLE_PROTOCOL_ACTIONS", table,
        s"Table $table: a commit can contain at most one protocol action, found ${protocols.size}.")
    }
    if (protocols.nonEmpty && downgrade.isDefined) {
      throw new InvalidCommitException("DELTA_MULTIPLE_PROTOCOL_ACTIONS", table,
        s"Table $table: a DROP FEATURE commit writes its own protocol; it cannot contain another protocol action.")
    }
    protocols.headOption.foreach { p =>
      val base = if (isNewTableRead) newProtocol.getOrElse(p) else protocol
      val merged = newProtocol.map(_.merge(p)).getOrElse(if (isNewTableRead) p else base.merge(p))
      if (!isNewTableRead) Protocol.assertCanUpgradeTo(snapshot.protocol, merged)
      newProtocol = Some(merged)
    }

    if (isNewTableRead && newMetadata.isEmpty) {
      throw new InvalidCommitException("DELTA_METADATA_ABSENT", table,
        s"Table $table does not exist yet: the first commit (version 0) must contain the table metadata " +
          "(call updateMetadata or include a metaData action).")
    }
    if (isNewTableRead && newProtocol.isEmpty) {
      newProtocol = Some(Protocol.forNewTable(newMetadata.get, sessionDefaults))
    }
    // The protocol must cover what the metadata enables.
    newMetadata.foreach { m =>
      Protocol.upgradeProtocolFromMetadataForExistingTable(m, protocol).foreach(p => newProtocol = Some(p))
    }
    downgrade.foreach { d =>
      if (protocol != d.newProtocol) {
        throw new TableFeatureException("DELTALOG_FEATURE_DROP_STILL_ENABLED",
          s"Table $table: cannot drop feature '${d.featureName}': the table metadata still enables it " +
            s"(the protocol would have to be ${protocol.simpleString}). Unset the property that enables it first.")
      }
    }
    assignMaterializedRowTrackingColumnNames()
    newMetadata.foreach(verifyNewMetadata)

    val finalProtocol = protocol
    val finalMetadata = metadata
    Protocol.checkCanWrite(finalProtocol, ClientCapabilities.deltalog, table)

    val userCommitInfo = actions.collectFirst { case c: CommitInfo => c }
    val given = actions.filter {
      case _: Metadata | _: Protocol | _: CommitInfo => false
      case _ => true
    }
    val others = given ++ rowTrackingBackfill(given)

    // appendOnly: no data-changing removes.
    val appendOnly = MetadataView.boolValue(AppendOnlyKey, finalMetadata.configuration.get(AppendOnlyKey))
    if (appendOnly) {
      others.collectFirst { case r: RemoveFile if r.dataChange => r }.foreach { r =>
        throw new AppendOnlyTableException(table, r.path)
      }
    }

    // txn: at most one version per appId.
    others.collect { case t: SetTransaction => t }.groupBy(_.appId).foreach { case (appId, ts) =>
      val versions = ts.map(_.version).distinct
      if (versions.size > 1) {
        throw new InvalidCommitException("DELTA_DUPLICATE_TXN_APP_ID", table,
          s"Table $table: the commit sets application transaction '$appId' to several versions " +
            s"(${versions.sorted.mkString(", ")}); give one txn action per appId.")
      }
    }
    val dedupedOthers = {
      val seenTxn = mutable.HashSet.empty[String]
      others.filter {
        case t: SetTransaction => seenTxn.add(t.appId)
        case _ => true
      }
    }

    // partitionValues keys = partition columns (physical names).
    val expectedKeys = SchemaInfo.physicalPartitionColumns(finalMetadata).toSet
    dedupedOthers.collectFirst { case a: AddFile if a.partitionValues.keySet != expectedKeys => a }.foreach { a =>
      throw new InvalidCommitException("DELTA_INVALID_PARTITIONING_SCHEMA", table,
        s"Table $table: file ${a.path} has partition values for [${a.partitionValues.keys.toSeq.sorted.mkString(", ")}] " +
          s"but the table is partitioned by [${finalMetadata.partitionColumns.mkString(", ")}]" +
          (if (expectedKeys != finalMetadata.partitionColumns.toSet)
            s" (physical names ${expectedKeys.toSeq.sorted.mkString(", ")})" else "") + ".")
    }

    // At most one add / remove per logical file.
    def checkDuplicates(kind: String, files: Seq[FileAction]): Unit = {
      val seen = mutable.HashSet.empty[(String, Option[String])]
      files.foreach { f =>
        if (!seen.add(f.logicalFileKey)) {
          throw new InvalidCommitException("DELTA_DUPLICATE_ACTIONS_FOUND", table,
            s"Table $table: the commit contains more than one $kind for file ${f.path}" +
              f.deletionVectorUniqueId.map(d => s" (deletion vector $d)").getOrElse("") + ".")
        }
      }
    }
    checkDuplicates("add", dedupedOthers.collect { case a: AddFile => a })
    checkDuplicates("remove", dedupedOthers.collect { case r: RemoveFile => r })

    // Domain metadata needs the feature; one action per domain.
    val domains = dedupedOthers.collect { case d: DomainMetadata => d }
    if (domains.nonEmpty && !finalProtocol.isFeatureSupported(TableFeature.DomainMetadata)) {
      throw new InvalidCommitException("DELTA_DOMAIN_METADATA_NOT_SUPPORTED", table,
        s"Table $table: the commit contains domainMetadata actions (${domains.map(_.domain).distinct.mkString(", ")}) " +
          s"but the protocol (${finalProtocol.simpleString}) does not support the domainMetadata feature; enable " +
          "it first with delta.feature.domainMetadata = 'supported'.")
    }
    domains.groupBy(_.domain).foreach { case (d, ds) =>
      if (ds.size > 1) {
        throw new InvalidCommitException("DELTA_DUPLICATE_DOMAIN_METADATA", table,
          s"Table $table: the commit contains ${ds.size} domainMetadata actions for domain '$d'; give at most one.")
      }
    }

    Prepared(newProtocol.filter(p => isNewTableRead || writeUnchangedProtocol || p != snapshot.protocol), newMetadata,
      userCommitInfo,
      dedupedOthers)
  }

  /** SnapshotIsolation for commits that change no data (digest §8.2), else the table's level. */
  private def isolationLevelToUse(prepared: Seq[Action], op: Operation): IsolationLevel = {
    val tableLevel = IsolationLevel.fromTableProperties(metadata.configuration)
    var dataChanged = false
    var incompatible = false
    prepared.foreach {
      case f: FileAction => if (OptimisticTransaction.dataChange(f)) dataChanged = true
      case d: DomainMetadata if d.domain == RowTracking.Domain =>
      case _ => incompatible = true
    }
    val downgrade = !incompatible && !dataChanged && (tableLevel match {
      case Serializable => true
      case WriteSerializable => !op.changesData
      case SnapshotIsolation => false
    })
    if (downgrade) SnapshotIsolation else tableLevel
  }

  // --------------------------------------------------------------------------------- commit loop

  /**
   * Writes the commit at `firstVersion`, checking conflicts and retrying at the next version
   * while concurrent writers win. Returns (version, actions written, post-commit snapshot).
   */
  private def doCommitRetryIteratively(
      firstVersion: Long,
      prepared: Prepared,
      op: Operation,
      isolationLevel: IsolationLevel,
      isBlindAppend: Boolean): (Long, Seq[Action], Snapshot) = {
    val maxAttempts = TxnConf.maxCommitAttempts(deltaLog.hadoopConf)
    val durable = TxnConf.durable(deltaLog.hadoopConf)
    val store = LogStore(deltaLog.fs)
    val checker = new ConflictChecker(this, prepared, isolationLevel, isBlindAppend)
    val commitTimestamp = clock.nowMillis()
    var attemptVersion = firstVersion
    var attemptNumber = 0
    val staging = new StagedCommit(store, durable)
    try {
      while (true) {
        if (attemptNumber >= maxAttempts) {
          throw new MaxCommitAttemptsExceededException(table, attemptNumber, attemptVersion)
        }
        val finalActions = finalizeActions(attemptVersion, prepared, op, isolationLevel, isBlindAppend, checker,
          commitTimestamp)
        val committed = doCommit(staging, attemptVersion, finalActions, isolationLevel)
        if (committed) {
          afterCommitFileWritten(attemptVersion)
          val post = deltaLog.update()
          if (post.version < attemptVersion) {
            throw new IllegalStateException(
              s"The committed version is $attemptVersion but the current version is ${post.version}.")
          }
          return (attemptVersion, finalActions, post)
        }
        attemptNumber += 1
        attemptVersion = checkForConflicts(attemptVersion, checker, attemptNumber, isolationLevel)
      }
      throw new IllegalStateException("unreachable")
    } finally staging.close()
  }

  /**
   * The commit file of the current attempt. On the local file system its bytes are written (and
   * forced, when durable) once and re-offered to the next version after a lost race as long as the
   * actions serialise identically (a blind append without in-commit timestamps or row tracking), so a
   * retry costs a hard link instead of another write + fsync.
   */
  private final class StagedCommit(store: LogStore, durable: Boolean) {
    private var staged: Option[LogStore.Staged] = None

    def put(attemptVersion: Long, bytes: Array[Byte]): Boolean = {
      val target = FileNames.deltaFile(deltaLog.logPath, attemptVersion)
      // Taken already: skip writing (and forcing) a file that cannot win this version.
      if (store.isLocalStore && java.nio.file.Files.exists(store.localPath(target))) return false
      if (!staged.exists(s => java.util.Arrays.equals(s.bytes, bytes))) {
        close()
        staged = store.stage(deltaLog.logPath, bytes, durable)
      }
      staged match {
        case Some(s) => store.publish(s, target)
        case None =>
          try {
            store.writeAtomically(target, overwrite = false, durable = durable)(_.write(bytes))
            true
          } catch {
            case _: FileAlreadyExistsException => false
          }
      }
    }

    def close(): Unit = { staged.foreach(store.discard); staged = None }
  }

  /** One attempt: put-if-absent of the commit file. False when the version is taken. */
  private def doCommit(staging: StagedCommit, attemptVersion: Long, actions: Seq[Action],
      isolationLevel: IsolationLevel): Boolean = {
    if (log.isDebugEnabled) {
      log.debug(s"Attempting to commit version $attemptVersion with ${actions.size} actions with " +
        s"$isolationLevel isolation level")
    }
    staging.put(attemptVersion, ActionCodec.serialize(actions).getBytes(StandardCharsets.UTF_8))
  }

  /**
   * Checks every commit from `checkVersion` on against this transaction; returns the next version
   * to attempt.
   */
  private def checkForConflicts(checkVersion: Long, checker: ConflictChecker, attemptNumber: Int,
      isolationLevel: IsolationLevel): Long = {
    val start = System.nanoTime()
    val winners = LogSegmentBuilder.listCommits(deltaLog.fs, deltaLog.logPath, checkVersion)
      .filter(s => FileNames.deltaVersion(s) >= checkVersion)
    var next = checkVersion
    winners.foreach { w =>
      val v = FileNames.deltaVersion(w)
      if (v == next) {
        val parsed = commitReader.read(w)
        checker.check(parsed)
        next = v + 1
        val ms = (System.nanoTime() - start) / 1000000L
        log.info(s"Completed checking for conflicts Version: $v Attempt: $attemptNumber Time: $ms ms")
      }
    }
    log.info(s"No logical conflicts with deltas [$checkVersion, $next), retrying.")
    next
  }

  private lazy val commitReader = new CommitReader(deltaLog.fs)

  /** The actions of one attempt: commitInfo first, row tracking and ICT for `attemptVersion`. */
  private def finalizeActions(
      attemptVersion: Long,
      prepared: Prepared,
      op: Operation,
      isolationLevel: IsolationLevel,
      isBlindAppend: Boolean,
      checker: ConflictChecker,
      commitTimestamp: Long): Seq[Action] = {
    val effProtocol = prepared.protocolAction.getOrElse(checker.currentProtocol)
    val effMetadata0 = prepared.metadataAction.getOrElse(checker.currentMetadata)

    // In-commit timestamp.
    val ictEnabled = IctConfig.fromProperties(effMetadata0.configuration).enabled &&
      effProtocol.isFeatureSupported(TableFeature.InCommitTimestamp)
    val ict: Option[Long] =
      if (!ictEnabled) None
      else Some(checker.lastCommitTimestamp.map(prev => math.max(commitTimestamp, prev + 1)).getOrElse(commitTimestamp))

    // ICT enabled by this commit on a table with history: stamp the enablement properties.
    // A fast DROP FEATURE protects the checkpoints before the version it is written at.
    val metadataAction = prepared.metadataAction.map { m0 =>
      val m = if (!downgrade.exists(_.protectCheckpoints)) m0 else m0.copy(configuration = m0.configuration +
        (ProtocolDowngrade.RequireCheckpointProtectionBeforeVersionKey -> attemptVersion.toString))
      val wasEnabled = !isNewTableRead && IctConfig.fromProperties(checker.currentMetadata.configuration).enabled
      if (ict.isDefined && !wasEnabled && attemptVersion > 0) {
        m.copy(configuration = m.configuration ++ Map(
          IctConfig.EnablementVersionKey -> attemptVersion.toString,
          IctConfig.EnablementTimestampKey -> ict.get.toString))
      } else m
    }

    // Row tracking.
    val others = RowTracking.assign(effProtocol, effMetadata0, prepared.others, attemptVersion,
      checker.rowIdHighWaterMark, table)

    val ci = buildCommitInfo(prepared.userCommitInfo, op, commitTimestamp, ict, isolationLevel, isBlindAppend,
      attemptVersion)
    Seq(ci) ++ prepared.protocolAction.toSeq ++ metadataAction.toSeq ++ others
  }

  private def buildCommitInfo(
      user: Option[CommitInfo],
      op: Operation,
      timestamp: Long,
      ict: Option[Long],
      isolationLevel: IsolationLevel,
      isBlindAppend: Boolean,
      attemptVersion: Long): CommitInfo = {
    val f = JsonNodeFactory.instance
    val body: ObjectNode = f.objectNode()
    ict.foreach(v => body.put("inCommitTimestamp", v))
    body.put("timestamp", timestamp)
    body.put("operation", op.name)
    body.set[JsonNode]("operationParameters", mapNode(op.parameters, op.jsonValuedParameters))
    if (readVersion >= 0 && attemptVersion > 0) body.put("readVersion", readVersion)
    body.put("isolationLevel", isolationLevel.name)
    body.put("isBlindAppend", isBlindAppend)
    if (op.metrics.nonEmpty) body.set[JsonNode]("operationMetrics", mapNode(op.metrics))
    op.userMetadata.foreach(u => body.put("userMetadata", u))
    body.put("engineInfo", engineInfo)
    body.put("txnId", txnId)
    // Fields the caller put in its own commitInfo and we do not set.
    user.foreach { u =>
      val it = u.body.properties().iterator()
      while (it.hasNext) {
        val e = it.next()
        if (!body.has(e.getKey)) body.set[JsonNode](e.getKey, e.getValue.deepCopy[JsonNode]())
      }
    }
    CommitInfo(body)
  }

  private def mapNode(m: Map[String, String], jsonValued: Set[String] = Set.empty): ObjectNode = {
    val o = JsonNodeFactory.instance.objectNode()
    m.toSeq.foreach { case (k, v) =>
      if (v == null) o.putNull(k)
      else if (jsonValued.contains(k)) o.set[JsonNode](k, Action.mapper.readTree(v))
      else o.put(k, v)
    }
    o
  }

  // --------------------------------------------------------------------------------- post commit

  private def postCommit(version: Long, committedActions: Seq[Action], postSnapshot: Snapshot): Unit = {
    _committed = true
    committedVersion = version
    val interval = checkpointInterval(postSnapshot.metadata)
    if (version != 0 && version % interval == 0) {
      try {
        val snap = if (postSnapshot.version == version) postSnapshot else deltaLog.snapshotAt(version)
        checkpointer(deltaLog, snap)
        // log retention runs after a checkpoint (delta-spark's order): it keeps the newest
        // checkpoint before the cut-off, so the one just written is never needed for it
        try MetadataCleanup.cleanUpExpiredLogs(deltaLog, snap, clock.nowMillis())
        catch { case NonFatal(e) => log.warn(s"Table ${deltaLog.tablePath}: expired log cleanup failed.", e) }
      } catch {
        case NonFatal(e) => log.warn("Failed to checkpoint table state.", e)
      }
    }
  }

  /** Runs the registered hooks; errors are logged and given to the hook's `handleError`. */
  def runPostCommitHooks(version: Long, committedActions: Seq[Action]): Unit =
    runPostCommitHooks(version, committedActions, null)

  private def runPostCommitHooks(version: Long, committedActions: Seq[Action], postSnapshot: Snapshot): Unit = {
    assertion(committed, "Can't call post commit hooks before committing")
    lazy val snap =
      if (postSnapshot != null && postSnapshot.version == version) postSnapshot else deltaLog.snapshotAt(version)
    postCommitHooks.foreach { hook =>
      try hook.run(this, version, snap, committedActions)
      catch {
        case NonFatal(e) =>
          log.error(s"Error when executing post-commit hook ${hook.name} for commit $version", e)
          hook.handleError(e, version)
      }
    }
  }

  override def toString: String = s"OptimisticTransaction($table, readVersion=$readVersion, txnId=$txnId)"
}

/** The actions of a commit after [[prepareCommit]], before the per-attempt parts are added. */
private[txn] final case class Prepared(
    protocolAction: Option[Protocol],
    metadataAction: Option[Metadata],
    userCommitInfo: Option[CommitInfo],
    others: Seq[Action]) {
  /** protocol, metaData, then the other actions (no commitInfo). */
  def all: Seq[Action] = protocolAction.toSeq ++ metadataAction.toSeq ++ others
  def metadataForCommit(base: Metadata): Metadata = metadataAction.getOrElse(base)
}


object OptimisticTransaction {
  private val log = LoggerFactory.getLogger(classOf[OptimisticTransaction])

  val AppendOnlyKey = "delta.appendOnly"
  val CheckpointIntervalKey = "delta.checkpointInterval"
  val DefaultCheckpointInterval = 10

  /** `Apache-Spark/<version> deltalog/<version>`. */
  lazy val engineInfo: String = {
    val spark = try org.apache.spark.SPARK_VERSION catch { case NonFatal(_) | _: LinkageError => "unknown" }
    s"Apache-Spark/$spark deltalog/${io.deltalog.VERSION}"
  }

  /** A transaction on the latest version; version -1 (table creation) when the table does not exist. */
  def start(deltaLog: DeltaLog, clock: Clock = Clock.system): OptimisticTransaction = {
    val snapshot =
      try deltaLog.update()
      catch { case _: TableNotFoundException => deltaLog.initialSnapshot }
    new OptimisticTransaction(deltaLog, snapshot, clock)
  }

  /** `dataChange` of a file action (`cdc` files never change data). */
  def dataChange(f: FileAction): Boolean = f match {
    case a: AddFile => a.dataChange
    case r: RemoveFile => r.dataChange
    case c: AddCDCFile => c.dataChange
    case _ => true
  }

  /**
   * `delta.checkpointInterval` (default 10; non-positive or unparsable values, which deltalog refuses
   * to set but other engines may have written, give the default).
   */
  def checkpointInterval(m: Metadata): Int =
    m.configuration.get(CheckpointIntervalKey).flatMap(_.trim.toIntOption).filter(_ > 0)
      .getOrElse(DefaultCheckpointInterval)

  /** The seed's assertions: an `AssertionError` with exactly `message`. */
  private[txn] def assertion(cond: Boolean, message: => String): Unit =
    if (!cond) throw new AssertionError(message)
}
