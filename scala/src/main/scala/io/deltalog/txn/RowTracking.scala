package io.deltalog.txn

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import io.deltalog.actions.{Action, AddFile, DomainMetadata, Metadata}
import io.deltalog.exceptions.InvalidCommitException
import io.deltalog.protocol.{MetadataView, Protocol, TableFeature}

/**
 * Fresh row ids (digest §6.3): while `rowTracking` is supported and not suspended, every new `add`
 * gets `baseRowId` = high-water mark + 1 (the mark then advances by the file's `numRecords`) and
 * `defaultRowCommitVersion` = the commit version; the mark is kept in domain `delta.rowTracking`
 * as `{"rowIdHighWaterMark":N}` (start -1).
 *
 * Materialized columns: while the table supports row tracking its configuration names the two
 * hidden Parquet columns in which writers that rewrite rows (UPDATE / MERGE / OPTIMIZE) keep the
 * rows' ids and commit versions: `delta.rowTracking.materializedRowIdColumnName` =
 * `_row-id-col-<uuid>` and `delta.rowTracking.materializedRowCommitVersionColumnName` =
 * `_row-commit-version-col-<uuid>` (delta-spark's naming). Assigned once, never changed.
 */
object RowTracking {
  val Domain = "delta.rowTracking"
  val EnableKey = "delta.enableRowTracking"
  val SuspendedKey = "delta.rowTrackingSuspended"
  val MaterializedRowIdColumnNameKey = "delta.rowTracking.materializedRowIdColumnName"
  val MaterializedRowCommitVersionColumnNameKey = "delta.rowTracking.materializedRowCommitVersionColumnName"

  /** The two configuration keys with the prefixes of the names deltalog generates for them. */
  val MaterializedColumnNamePrefixes: Seq[(String, String)] = Seq(
    MaterializedRowIdColumnNameKey -> "_row-id-col-",
    MaterializedRowCommitVersionColumnNameKey -> "_row-commit-version-col-")

  def isSupported(p: Protocol): Boolean = p.isFeatureSupported(TableFeature.RowTracking)

  def isSuspended(m: Metadata): Boolean = MetadataView.boolValue(SuspendedKey, m.configuration.get(SuspendedKey))

  def isEnabled(p: Protocol, m: Metadata): Boolean =
    isSupported(p) && MetadataView.boolValue(EnableKey, m.configuration.get(EnableKey))

  /** Row ids are assigned to new files. */
  def assignsIds(p: Protocol, m: Metadata): Boolean = isSupported(p) && !isSuspended(m)

  /** Top-level column names of `m`'s schema, logical and physical (column mapping), lower case. */
  private def columnNames(m: Metadata, table: String): Set[String] =
    SchemaInfo.topLevelFields(SchemaInfo.parse(m.schemaString, table)).flatMap { f =>
      Option(f.name).toSeq ++ f.metaString(SchemaInfo.PhysicalNameKey).toSeq
    }.map(_.toLowerCase(Locale.ROOT)).toSet

  /**
   * `m` with both materialized column names when `protocol` supports row tracking (`m` unchanged
   * otherwise): the names of the table's current metadata `old` are kept, else names already in
   * `m`, else new `<prefix><random uuid>` names that collide with no column of the schema.
   */
  def withMaterializedColumnNames(protocol: Protocol, old: Option[Metadata], m: Metadata, table: String): Metadata = {
    if (!isSupported(protocol)) return m
    lazy val taken = columnNames(m, table)
    val conf = MaterializedColumnNamePrefixes.foldLeft(m.configuration) { case (c, (key, prefix)) =>
      old.flatMap(_.configuration.get(key)).orElse(c.get(key)) match {
        case Some(name) => c.updated(key, name)
        case None =>
          var name = prefix + UUID.randomUUID().toString
          while (taken.contains(name.toLowerCase(Locale.ROOT)) || c.valuesIterator.contains(name)) {
            name = prefix + UUID.randomUUID().toString
          }
          c.updated(key, name)
      }
    }
    if (conf == m.configuration) m else m.copy(configuration = conf)
  }

  /**
   * `DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED` when a materialized column name of `m` is empty,
   * names a column of the schema (logical or physical, case-insensitive), or both keys give one name.
   */
  def checkMaterializedColumnNames(m: Metadata, table: String): Unit = {
    val names = MaterializedColumnNamePrefixes.flatMap { case (key, _) => m.configuration.get(key).map(key -> _) }
    if (names.isEmpty) return
    def fail(key: String, name: String, why: String): Nothing =
      throw new InvalidCommitException("DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED", table,
        s"Table $table: $key = '$name' $why; the materialized row tracking columns need names of their own.")
    val taken = columnNames(m, table)
    names.foreach { case (key, name) =>
      if (name == null || name.trim.isEmpty) fail(key, String.valueOf(name), "is empty")
      if (taken.contains(name.toLowerCase(Locale.ROOT))) fail(key, name, "is the name of a column of the table")
    }
    if (names.size == 2 && names.head._2 == names(1)._2) fail(names(1)._1, names(1)._2, s"equals ${names.head._1}")
  }

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
