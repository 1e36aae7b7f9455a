package io.deltalog.spark

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogUtils}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.connector.catalog.TableCatalogCapability
import org.apache.spark.sql.connector.catalog.{DelegatingCatalogExtension, Identifier, StagedTable, StagingTableCatalog,
  Table, TableCatalog, TableChange, TableInfo}
import org.apache.spark.sql.deltalog.SparkCatalogInternals

import io.deltalog.commands.InvalidWriteException
import io.deltalog.log.DeltaLog
import io.deltalog.spark.read.{DeltalogReader, TimeTravel, TimeTravelSpec}

/**
 * The catalog set as `spark.sql.catalog.spark_catalog`. Tables of other providers go to Spark's
 * session catalog unchanged. For deltalog tables (`USING deltalog`, and ``deltalog.`/path` ``):
 *
 *  - `loadTable` returns a [[DeltalogTable]] whose schema, partitioning and properties come from
 *    the log (time travel with `VERSION AS OF` / `TIMESTAMP AS OF`);
 *  - CREATE TABLE, CTAS, REPLACE TABLE, RTAS, `saveAsTable`, `writeTo(...).create/replace` are
 *    staged ([[StagedDeltalogTable]]): the table's first commit (or the replacing commit) is
 *    written when Spark commits the statement, and a new table's metastore entry is created only
 *    after it landed, so a failed CTAS leaves nothing behind and a replaced table keeps its history;
 *  - ALTER TABLE changes the log (properties, comment) or the entry's location ([[DeltalogAlterTable]]);
 *  - DROP TABLE of an external table removes the entry only (data and log stay), of a managed
 *    table the entry and its directory, as Spark does for every managed table.
 */
class DeltalogCatalog extends DelegatingCatalogExtension with StagingTableCatalog {

  io.deltalog.spark.read.SparkDistributedReplay.register()

  private[spark] def spark: SparkSession = SparkSession.active

  private[spark] def sessionCatalog = spark.asInstanceOf[ClassicSession].sessionState.catalog

  // ------------------------------------------------------------------ load

  override def loadTable(ident: Identifier): Table = load(ident, None)

  /** ``deltalog.`/path` `` exists when a table is at the path (CREATE TABLE IF NOT EXISTS, DROP ... IF EXISTS). */
  override def tableExists(ident: Identifier): Boolean =
    if (isPathIdentifier(ident)) {
      DeltalogCatalog.latest(DeltaLog.forTable(ident.name(), DeltalogReader.hadoopConf(spark, Map.empty))).isDefined
    } else super.tableExists(ident)

  override def loadTable(ident: Identifier, version: String): Table = {
    val v = version.trim.toLongOption.filter(_ >= 0).getOrElse(throw new InvalidWriteException(
      "DELTA_INVALID_TIME_TRAVEL_SPEC", ident.toString, s"VERSION AS OF $version: the version must be a " +
        "non-negative whole number."))
    load(ident, Some(TimeTravelSpec(Some(v), None, s"VERSION AS OF $v")))
  }

  /** `timestamp` in microseconds since the epoch, as Spark resolves TIMESTAMP AS OF. */
  override def loadTable(ident: Identifier, timestamp: Long): Table = {
    val ms = Math.floorDiv(timestamp, 1000L)
    load(ident, Some(TimeTravelSpec(None, Some(ms), s"TIMESTAMP AS OF ${java.time.Instant.ofEpochMilli(ms)}")))
  }

  private def load(ident: Identifier, timeTravel: Option[TimeTravelSpec]): Table =
    try loadAsNamed(ident, timeTravel)
    catch {
      case e: NoSuchTableException =>
        // `t@v5`, `t@20240131120000000`, ``deltalog.`/path@v5` ``: the table named without the suffix, at that version.
        val (base, fromName) = TimeTravel.resolve(ident.name(), Map.empty, java.time.ZoneOffset.UTC)
        fromName match {
          case None => throw e
          case Some(spec) =>
            timeTravel.foreach { tt =>
              throw new InvalidWriteException("DELTA_INVALID_TIME_TRAVEL_SPEC", ident.toString,
                s"time travel is given twice (${spec.source} in the name and ${tt.source}); give only one.")
            }
            loadAsNamed(Identifier.of(ident.namespace(), base), Some(spec)) match {
              case t: DeltalogTable => t
              case _ => throw e
            }
        }
    }

  private def loadAsNamed(ident: Identifier, timeTravel: Option[TimeTravelSpec]): Table = {
    pathTable(ident, timeTravel).getOrElse {
      val t = super.loadTable(ident)
      deltalogEntry(t) match {
        case Some(ct) => tableFor(ct, timeTravel)
        case None => timeTravel match {
          case None => t
          case Some(TimeTravelSpec(Some(v), _, _)) => super.loadTable(ident, v.toString)
          case Some(TimeTravelSpec(_, Some(ms), _)) => super.loadTable(ident, ms * 1000L)
          case Some(_) => t
        }
      }
    }
  }

  /** The metastore entry of `t` when it is a deltalog table. */
  private def deltalogEntry(t: Table): Option[CatalogTable] =
    SparkCatalogInternals.v1CatalogTable(t).filter(ct => ct.provider.exists(DeltalogTable.isDeltalogProvider))

  /** The metastore entry of `ident` when it names a deltalog table in the session catalog. */
  private[spark] def deltalogEntry(ident: Identifier): Option[CatalogTable] =
    if (isPathIdentifier(ident) || ident.namespace().length > 1) None
    else try deltalogEntry(super.loadTable(ident)) catch { case _: NoSuchTableException => None }

  private[spark] def tableFor(ct: CatalogTable, timeTravel: Option[TimeTravelSpec]): DeltalogTable = {
    val location = ct.storage.locationUri.map(CatalogUtils.URIToString).getOrElse(
      throw new InvalidWriteException("DELTA_TABLE_NOT_FOUND", ct.identifier.unquotedString,
        s"Table ${ct.identifier.unquotedString} has no location in the catalog; drop and re-create it."))
    new DeltalogTable(spark, location, Some(ct), ct.identifier.unquotedString, timeTravel)
  }

  /** ``deltalog.`/path` ``: the table at a path, when `ident` names one. */
  private def pathTable(ident: Identifier, timeTravel: Option[TimeTravelSpec]): Option[DeltalogTable] =
    if (!isPathIdentifier(ident)) None
    else {
      val path = ident.name()
      val log = DeltaLog.forTable(path, DeltalogReader.hadoopConf(spark, Map.empty))
      if (DeltalogCatalog.latest(log).isEmpty) throw new NoSuchTableException(ident.namespace().mkString("."), path)
      Some(new DeltalogTable(spark, path, None, DeltalogCatalog.pathTableName(path), timeTravel))
    }

  /** True for ``deltalog.`/path` `` (and ``delta.`/path` ``): a namespace naming the format and a path. */
  def isPathIdentifier(ident: Identifier): Boolean =
    ident.namespace().length == 1 &&
      DeltalogCatalog.PathNamespaces.contains(ident.namespace()(0).toLowerCase(Locale.ROOT)) &&
      DeltalogCatalog.looksLikePath(ident.name()) &&
      !sessionCatalog.databaseExists(ident.namespace()(0))

  // ------------------------------------------------------------------ create / replace

  private def isDeltalog(ident: Identifier, info: TableInfo): Boolean =
    isPathIdentifier(ident) || DeltalogTable.isDeltalogProvider(info.properties().get(TableCatalog.PROP_PROVIDER))

  /**
   * Column definitions Spark checks the catalog for: generated and identity columns (kept for
   * deltalog tables only: other providers' are refused in [[createInSessionCatalog]]) and DEFAULT.
   */
  override def capabilities(): java.util.Set[TableCatalogCapability] = {
    val all = new java.util.HashSet[TableCatalogCapability](super.capabilities())
    all.add(TableCatalogCapability.SUPPORTS_CREATE_TABLE_WITH_GENERATED_COLUMNS)
    all.add(TableCatalogCapability.SUPPORTS_CREATE_TABLE_WITH_IDENTITY_COLUMNS)
    all.add(TableCatalogCapability.SUPPORT_COLUMN_DEFAULT_VALUE)
    all
  }

  override def createTable(ident: Identifier, info: TableInfo): Table =
    if (!isDeltalog(ident, info)) createInSessionCatalog(ident, info)
    else {
      new StagedDeltalogTable(this, ident, info, StageKind.Create).commitStagedChanges()
      loadTable(ident)
    }

  override def stageCreate(ident: Identifier, info: TableInfo): StagedTable =
    if (isDeltalog(ident, info)) new StagedDeltalogTable(this, ident, info, StageKind.Create)
    else BestEffortStagedTable.create(this, ident, info, replace = false)

  override def stageReplace(ident: Identifier, info: TableInfo): StagedTable =
    if (isDeltalog(ident, info) || deltalogEntry(ident).isDefined) {
      if (!tableExists(ident)) throw new NoSuchTableException(ident.namespace().mkString("."), ident.name())
      new StagedDeltalogTable(this, ident, info, StageKind.Replace)
    } else BestEffortStagedTable.create(this, ident, info, replace = true)

  override def stageCreateOrReplace(ident: Identifier, info: TableInfo): StagedTable =
    if (isDeltalog(ident, info) || deltalogEntry(ident).isDefined) {
      new StagedDeltalogTable(this, ident, info, StageKind.CreateOrReplace)
    } else BestEffortStagedTable.create(this, ident, info, replace = true)

  /** Spark's own create, for the staged tables of other providers. */
  private[spark] def createInSessionCatalog(ident: Identifier, info: TableInfo): Table = {
    if (ColumnDefinitions.hasDeltaOnlyDefinitions(info.columns())) {
      val provider = Option(info.properties().get(TableCatalog.PROP_PROVIDER)).getOrElse("the default provider")
      throw new InvalidWriteException("UNSUPPORTED_FEATURE.TABLE_OPERATION", ident.toString,
        s"Table $ident: generated and identity columns need a deltalog table (USING deltalog); $provider " +
          "tables cannot keep them.")
    }
    super.createTable(ident, info.columns(), info.partitions(), info.properties())
  }

  // ------------------------------------------------------------------ alter / drop / rename

  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    deltalogEntry(ident) match {
      case Some(ct) => new DeltalogAlterTable(this, ident, ct, tableFor(ct, None)).apply(changes)
      case None if isPathIdentifier(ident) =>
        val t = pathTable(ident, None).get
        new DeltalogAlterTable(this, ident, null, t).apply(changes)
      case None => super.alterTable(ident, changes: _*)
    }

  override def dropTable(ident: Identifier): Boolean = {
    refusePathTable(ident, "DROP TABLE")
    super.dropTable(ident)
  }

  override def purgeTable(ident: Identifier): Boolean = {
    refusePathTable(ident, "DROP TABLE ... PURGE")
    super.purgeTable(ident)
  }

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit = {
    refusePathTable(oldIdent, "ALTER TABLE ... RENAME TO")
    super.renameTable(oldIdent, newIdent)
  }

  private def refusePathTable(ident: Identifier, statement: String): Unit =
    if (isPathIdentifier(ident)) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_PATH_TABLE_STATEMENT", ident.name(),
        s"$statement works on catalog tables; ${DeltalogCatalog.pathTableName(ident.name())} is a path. " +
          "Delete or move its directory instead.")
    }

  /** The `TableIdentifier` of a session-catalog identifier (one namespace part: the database). */
  private[spark] def v1Identifier(ident: Identifier): TableIdentifier =
    TableIdentifier(ident.name(), ident.namespace().headOption, Some(name()))
}

object DeltalogCatalog {
  val PathNamespaces: Set[String] = Set("deltalog", "delta")

  def pathTableName(path: String): String = s"deltalog.`$path`"

  /** The latest snapshot of `log`, None when no table is there (yet). */
  def latest(log: DeltaLog): Option[io.deltalog.log.Snapshot] =
    try Some(log.update()).filter(_.version >= 0)
    catch { case _: io.deltalog.exceptions.TableNotFoundException => None }

  def looksLikePath(name: String): Boolean =
    try new Path(name).isAbsolute || name.contains("/") catch { case NonFatal(_) => false }
}
