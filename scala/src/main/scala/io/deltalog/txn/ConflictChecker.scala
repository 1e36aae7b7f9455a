package io.deltalog.txn

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import io.deltalog.actions._
import io.deltalog.exceptions._
import io.deltalog.log.{IctConfig, MalformedAction, ParsedCommit}
import io.deltalog.protocol.{ClientCapabilities, Protocol}

/**
 * Checks one losing transaction against the commits that won the versions it tried, in version
 * order (digest §8.3): protocol, metadata (allow-list of enablements), domain metadata,
 * application transactions, row-id high-water mark, concurrent appends (per isolation level and
 * the recorded read predicates: partition values and data skipping over the added file's stats), deletes of read files, double deletes, and the in-commit
 * timestamp. A winner that passes every check is adopted: later attempts are made as if the
 * transaction had read it (protocol, metadata, row-id mark, previous commit timestamp).
 */
private[txn] final class ConflictChecker(
    txn: OptimisticTransaction,
    prepared: Prepared,
    isolationLevel: IsolationLevel,
    isBlindAppend: Boolean) {

  private val table = txn.table
  private val readSnapshot = txn.snapshot
  private val readMetadata = readSnapshot.metadata
  private val readVersion = txn.readVersion

  /** Protocol of the latest version seen (read, then adopted winners). */
  var currentProtocol: Protocol = readSnapshot.protocol
  /** Metadata of the latest version seen. */
  var currentMetadata: Metadata = readMetadata
  /** Row-id high-water mark of the latest version seen (-1: none). */
  var rowIdHighWaterMark: Long =
    if (readVersion < 0) -1L else RowTracking.highWaterMark(readSnapshot.domainMetadata).getOrElse(-1L)
  /** Commit timestamp of the latest version seen (ICT, else file modification time). */
  var lastCommitTimestamp: Option[Long] = if (readVersion < 0) None else Some(readSnapshot.timestamp)

  private lazy val partitionColumns = readMetadata.partitionColumns
  private lazy val physicalPartitionColumns = SchemaInfo.physicalPartitionColumns(readMetadata)

  private lazy val dataFilter = new DataFilter(readMetadata)
  private lazy val readFilesByKey: Map[String, AddFile] =
    txn.recordedReadFiles.map(f => PathCodec.canonicalPathKey(f.path) -> f).toMap
  private lazy val ownRemoves: Map[String, RemoveFile] =
    prepared.others.collect { case r: RemoveFile => PathCodec.canonicalPathKey(r.path) -> r }.toMap
  private lazy val ownDomains: Set[String] =
    prepared.others.collect { case d: DomainMetadata if d.domain != RowTracking.Domain => d.domain }.toSet

  private def logical(pv: Map[String, String]): Map[String, String] =
    SchemaInfo.logicalPartitionValues(readMetadata, physicalPartitionColumns, pv)

  /** `col=value, ...` of a partition, None for an unpartitioned table. */
  private def prettyPartition(pv: Map[String, String]): Option[String] =
    if (partitionColumns.isEmpty) None
    else {
      val l = logical(Option(pv).getOrElse(Map.empty))
      Some(partitionColumns.map(c => s"$c=${Option(l.getOrElse(c, null)).getOrElse("null")}").mkString(", "))
    }

  /** Checks `winner`; throws the conflict's exception, else adopts the winner. */
  def check(winner: ParsedCommit): Unit = {
    val v = winner.version
    val actions = winner.actions.toSeq
    actions.collectFirst { case m: MalformedAction => m }.foreach(m => throw m.error)
    val commitInfo = winner.commitInfo
    val protocols = actions.collect { case p: Protocol => p }
    val metadatas = actions.collect { case m: Metadata => m }
    val domains = actions.collect { case d: DomainMetadata => d }
    val txns = actions.collect { case t: SetTransaction => t }
    val adds = actions.collect { case a: AddFile => a }
    val removes = actions.collect { case r: RemoveFile => r }

    // 1. Protocol.
    protocols.lastOption.foreach { p =>
      Protocol.checkCanRead(p, ClientCapabilities.deltalog, table)
      Protocol.checkCanWrite(p, ClientCapabilities.deltalog, table)
      if (prepared.protocolAction.isDefined) {
        throw new ProtocolChangedException(table, v,
          if (readVersion < 0) "the table was created concurrently (both transactions create it)"
          else "this transaction changes the protocol too")
      }
      if (!currentProtocol.canUpgradeTo(p)) {
        val dropped = (currentProtocol.implicitlyAndExplicitlySupportedFeatures --
          p.implicitlyAndExplicitlySupportedFeatures).map(_.name).toSeq.sorted
        throw new ProtocolChangedException(table, v, s"table feature(s) ${dropped.mkString(", ")} were dropped")
      }
      currentProtocol = p
    }

    // 2. Metadata.
    metadatas.lastOption.foreach { m =>
      if (prepared.metadataAction.isDefined) {
        throw new MetadataChangedException(table, v,
          if (readVersion < 0) "the table was created concurrently" else "this transaction changes the metadata too")
      }
      ConflictChecker.disallowedMetadataChange(currentMetadata, m).foreach { why =>
        throw new MetadataChangedException(table, v, why)
      }
      currentMetadata = m
    }

    // 3. Domain metadata.
    domains.find(d => ownDomains.contains(d.domain)).foreach { d =>
      throw new ConcurrentTransactionException(table, v,
        s"changed metadata domain '${d.domain}', which this transaction changes too (conflicting metadata domain)")
    }

    // 4. Application transactions.
    val readApps = txn.readAppIds
    txns.find(t => readApps.contains(t.appId)).foreach { t =>
      throw new ConcurrentTransactionException(table, v,
        s"committed application transaction '${t.appId}' (version ${t.version}), whose version this " +
          "transaction read; another instance of the same job (e.g. a streaming query with the same " +
          "checkpoint) is writing concurrently")
    }

    // 5. Row ids: new files get ids above the winner's mark.
    RowTracking.highWaterMark(domains).foreach(h => rowIdHighWaterMark = math.max(rowIdHighWaterMark, h))

    // 7. Concurrent appends.
    val winnerBlindAppend = commitInfo.flatMap(_.isBlindAppend).getOrElse(false)
    val candidates: Seq[AddFile] = isolationLevel match {
      case WriteSerializable if prepared.metadataAction.isEmpty => if (winnerBlindAppend) Nil else adds
      case Serializable | WriteSerializable => adds
      case SnapshotIsolation => Nil
    }
    if (!isBlindAppend && candidates.nonEmpty) {
      val preds = txn.recordedReadPredicates
      candidates.find { a =>
        preds.exists(ps => ps.isEmpty || dataFilter.mayMatchAll(ps, a))
      }.foreach { a =>
        throw new ConcurrentAppendException(table, v, prettyPartition(a.partitionValues), a.path)
      }
    }

    // 8. Deletes of files this transaction read.
    removes.find(r => readFilesByKey.contains(PathCodec.canonicalPathKey(r.path))).foreach { r =>
      val read = readFilesByKey(PathCodec.canonicalPathKey(r.path))
      throw new ConcurrentDeleteReadException(table, v, prettyPartition(read.partitionValues), Some(r.path))
    }
    if (removes.nonEmpty && txn.readsWholeTable) {
      throw new ConcurrentDeleteReadException(table, v, None, None)
    }

    // 9. Double deletes.
    removes.find(r => ownRemoves.contains(PathCodec.canonicalPathKey(r.path))).foreach { r =>
      val own = ownRemoves(PathCodec.canonicalPathKey(r.path))
      throw new ConcurrentDeleteDeleteException(table, v,
        prettyPartition(own.partitionValues.orElse(r.partitionValues).getOrElse(Map.empty)), r.path)
    }

    // 10. Commit timestamp ordering.
    lastCommitTimestamp = Some(commitInfo.flatMap(_.inCommitTimestamp).getOrElse(winner.file.getModificationTime))

    // 11. DROP FEATURE: the feature must still be droppable at the winner's version. (A winner that
    // changed the protocol or the metadata already failed this transaction above: it writes both.)
    txn.protocolDowngrade.foreach { d =>
      d.revalidate(v).foreach(why => throw new DropFeatureConflictException(table, v, d.featureName, why))
    }
  }
}

private[txn] object ConflictChecker {
  /** Property changes a concurrent winner may make without failing other transactions. */
  private def allowedChange(key: String, value: String, old: Map[String, String]): Boolean = {
    def isTrue = Option(value).exists(_.trim.equalsIgnoreCase("true"))
    key match {
      case RowTracking.EnableKey => isTrue
      case "delta.rowTracking.materializedRowIdColumnName" |
           "delta.rowTracking.materializedRowCommitVersionColumnName" => !old.contains(key)
      case SchemaInfo.ColumnMappingModeKey =>
        Option(value).exists(_.trim.equalsIgnoreCase("name")) && SchemaInfo.columnMappingMode(old) == "none"
      case SchemaInfo.MaxColumnIdKey => true
      case "delta.enableDeletionVectors" => isTrue
      case "delta.checkpointPolicy" => Option(value).exists(_.trim.equalsIgnoreCase("v2"))
      case IctConfig.EnableKey => isTrue
      case IctConfig.EnablementVersionKey | IctConfig.EnablementTimestampKey => true
      case "io.unitycatalog.tableId" => !old.contains(key)
      case _ => false
    }
  }

  /** Why `winner` may not be adopted by a transaction that read `read`; None when it may. */
  def disallowedMetadataChange(read: Metadata, winner: Metadata): Option[String] = {
    if (read.id != winner.id) return Some(s"the table id changed (${read.id} -> ${winner.id}); the table was replaced")
    if (read.partitionColumns != winner.partitionColumns) {
      return Some(s"the partition columns changed ([${read.partitionColumns.mkString(", ")}] -> " +
        s"[${winner.partitionColumns.mkString(", ")}])")
    }
    if (read.name != winner.name || read.description != winner.description || read.format != winner.format ||
        read.createdTime != winner.createdTime) {
      return Some("the table name, description or format changed")
    }
    val removed = read.configuration.keySet -- winner.configuration.keySet
    if (removed.nonEmpty) return Some(s"table properties were removed: ${removed.toSeq.sorted.mkString(", ")}")
    val changed = winner.configuration.filter { case (k, v) => !read.configuration.get(k).contains(v) }
    val bad = changed.filterNot { case (k, v) => allowedChange(k, v, read.configuration) }
    if (bad.nonEmpty) return Some(s"table properties changed: ${bad.keys.toSeq.sorted.mkString(", ")}")
    if (read.schemaString != winner.schemaString) {
      val cmToName = changed.get(SchemaInfo.ColumnMappingModeKey).isDefined
      if (!cmToName || !sameIgnoringColumnMapping(read.schemaString, winner.schemaString)) {
        return Some("the schema changed")
      }
    }
    None
  }

  private def sameIgnoringColumnMapping(a: String, b: String): Boolean =
    try {
      val x = io.deltalog.actions.Action.mapper.readTree(a).deepCopy[JsonNode]()
      val y = io.deltalog.actions.Action.mapper.readTree(b).deepCopy[JsonNode]()
      strip(x); strip(y)
      x == y
    } catch { case NonFatal(_) => false }

  private def strip(n: JsonNode): Unit = n match {
    case o: ObjectNode =>
      Option(o.get("metadata")).collect { case m: ObjectNode => m }.foreach { m =>
        m.fieldNames().asScala.toList.filter(_.startsWith("delta.columnMapping.")).foreach(m.remove)
      }
      o.elements().asScala.foreach(strip)
    case other if other != null && other.isArray => other.elements().asScala.foreach(strip)
    case _ =>
  }
}
