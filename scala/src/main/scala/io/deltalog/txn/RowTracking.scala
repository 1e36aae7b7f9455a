package io.deltalog.txn

import scala.util.control.NonFatal

import io.deltalog.actions.{Action, AddFile, DomainMetadata, Metadata}
import io.deltalog.exceptions.InvalidCommitException
import io.deltalog.protocol.{MetadataView, Protocol, TableFeature}

/**
 * Fresh row ids (digest §6.3): while `rowTracking` is supported and not suspended, every new `add`
 * gets `baseRowId` = high-water mark + 1 (the mark then advances by the file's `numRecords`) and
 * `defaultRowCommitVersion` = the commit version; the mark is kept in domain `delta.rowTracking`
 * as `{"rowIdHighWaterMark":N}` (start -1).
 */
object RowTracking {
  val Domain = "delta.rowTracking"
  val EnableKey = "delta.enableRowTracking"
  val SuspendedKey = "delta.rowTrackingSuspended"

  def isSupported(p: Protocol): Boolean = p.isFeatureSupported(TableFeature.RowTracking)

  def isSuspended(m: Metadata): Boolean = MetadataView.boolValue(SuspendedKey, m.configuration.get(SuspendedKey))

  def isEnabled(p: Protocol, m: Metadata): Boolean =
    isSupported(p) && MetadataView.boolValue(EnableKey, m.configuration.get(EnableKey))

  /** Row ids are assigned to new files. */
  def assignsIds(p: Protocol, m: Metadata): Boolean = isSupported(p) && !isSuspended(m)

  /** The high-water mark in a `delta.rowTracking` domain configuration. */
  def parseHighWaterMark(configuration: String): Option[Long] =
    try {
      val n = io.deltalog.actions.Action.mapper.readTree(configuration).get("rowIdHighWaterMark")
      if (n != null && n.canConvertToLong) Some(n.longValue()) else None
    } catch { case NonFatal(_) => None }

  /** The mark among `domains` (live `delta.rowTracking` only). */
  def highWaterMark(domains: Iterable[DomainMetadata]): Option[Long] =
    domains.find(d => d.domain == Domain && !d.removed).flatMap(d => parseHighWaterMark(d.configuration))

  def domainAction(hwm: Long): DomainMetadata = DomainMetadata(Domain, s"""{"rowIdHighWaterMark":$hwm}""")

  /** `stats.numRecords` of a file. */
  def numRecords(a: AddFile): Option[Long] = a.stats.flatMap { s =>
    try {
      val n = io.deltalog.actions.Action.mapper.readTree(s).get("numRecords")
      if (n != null && n.canConvertToLong) Some(n.longValue()) else None
    } catch { case NonFatal(_) => None }
  }

  /**
   * `actions` with row ids assigned for commit `version`, starting above `readHighWaterMark`;
   * unchanged when row ids are not assigned for this protocol / metadata.
   */
  def assign(protocol: Protocol, metadata: Metadata, actions: Seq[Action], version: Long, readHighWaterMark: Long,
      table: String): Seq[Action] = {
    if (!assignsIds(protocol, metadata)) return actions
    val own = highWaterMark(actions.collect { case d: DomainMetadata => d })
    var hwm = math.max(readHighWaterMark, own.getOrElse(-1L))
    val start = hwm
    val out = actions.flatMap {
      case a: AddFile =>
        var b = a
        if (a.baseRowId.isEmpty) {
          val n = numRecords(a).getOrElse(throw new InvalidCommitException("DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS",
            table, s"Table $table uses row tracking: file ${a.path} needs stats with numRecords to get row ids."))
          b = b.copy(baseRowId = Some(hwm + 1))
          hwm += n
        }
        if (a.defaultRowCommitVersion.isEmpty) b = b.copy(defaultRowCommitVersion = Some(version))
        Some(b)
      case d: DomainMetadata if d.domain == Domain => None
      case other => Some(other)
    }
    if (hwm != start || own.isDefined) out :+ domainAction(hwm) else out
  }
}
