package io.deltalog.spark

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable, CatalogTableType, CatalogUtils}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, StructType}

import io.deltalog.commands.{CloneCommand, CloneResult, CloneSource, CloneTarget, InvalidWriteException}

/**
 * `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] <target> [SHALLOW | DEEP] CLONE <source> [VERSION AS OF n |
 * TIMESTAMP AS OF ts] [TBLPROPERTIES (...)] [LOCATION '...']` and `REPLACE TABLE <target> ... CLONE ...`:
 * [[CloneCommand]] (DEEP when neither is written). `<source>` and `<target>` are catalog names or path
 * tables (``deltalog.`/path` ``). A catalog target that does not exist yet is created at LOCATION (an
 * external table) or in the warehouse (a managed table) and registered after the clone's commit landed.
 * Returns delta-spark 4.4's row (`source_table_size`, `source_num_of_files`, `num_removed_files`,
 * `num_copied_files`, `removed_files_size`, `copied_files_size`); no row when IF NOT EXISTS found the table.
 */
case class CloneTableCommand(
    target: TableTarget,
    source: TableTarget,
    isShallow: Boolean,
    create: Boolean,
    replace: Boolean,
    ifNotExists: Boolean,
    version: Option[Long],
    timestamp: Option[Expression],
    properties: Map[String, String],
    location: Option[String]) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = CloneTableCommand.columns.map(AttributeReference(_, LongType)())

  override def run(spark: SparkSession): Seq[Row] = {
    val (sourcePath, sourceName) = source.resolve(spark, "CLONE")
    val zone = spark.sessionState.conf.sessionLocalTimeZone
    val ms = timestamp.map(e => RestoreTableCommand.timestampMs(e, zone, sourceName.getOrElse(sourcePath)))
    val src = CloneSource(sourcePath, sourceName, version, ms)
    CloneTableCommand.run(spark, src, target, location, isShallow, create, replace, ifNotExists, properties)
      .map(CloneTableCommand.row).toSeq
  }
}

object CloneTableCommand {
  val columns: Seq[String] = Seq("source_table_size", "source_num_of_files", "num_removed_files",
    "num_copied_files", "removed_files_size", "copied_files_size")

  val Schema: StructType = StructType(columns.map(org.apache.spark.sql.types.StructField(_, LongType)))

  def row(r: CloneResult): Row = Row(r.sourceTableSize, r.sourceNumOfFiles, r.numRemovedFiles, r.numCopiedFiles,
    r.removedFilesSize, r.copiedFilesSize)

  /**
   * Clones `src` to `target` (a path or a catalog name, with an optional LOCATION): resolves where the
   * target lives, runs [[CloneCommand]], then registers a new catalog table.
   */
  def run(spark: SparkSession, src: CloneSource, target: TableTarget, location: Option[String], isShallow: Boolean,
      create: Boolean, replace: Boolean, ifNotExists: Boolean, properties: Map[String, String]): Option[CloneResult] = {
    val session = spark.asInstanceOf[ClassicSession]
    target match {
      case TableTarget(Some(path), _) =>
        val name = DeltalogCatalog.pathTableName(path)
        if (!new Path(path).isAbsolute) {
          throw new InvalidWriteException("DELTA_INVALID_CLONE_PATH", name,
            s"The target location for CLONE needs to be an absolute path or table name. Use an absolute path " +
              s"instead of $path.")
        }
        location.filter(l => new Path(l).toString != new Path(path).toString).foreach { l =>
          throw new InvalidWriteException("DELTA_CLONE_AMBIGUOUS_TARGET", name,
            s"Two paths were provided as the CLONE target so it is ambiguous which to use. An external location " +
              s"for CLONE was provided at $l at the same time as the path $name. Give only one.")
        }
        try new CloneCommand(session, src, CloneTarget(path, None, create, replace, ifNotExists), isShallow,
          properties).run()
        finally DeltalogTable.refreshCaches(spark, path)
      case TableTarget(None, Some(ident0)) =>
        val catalog = session.sessionState.catalog
        val ident = ident0.copy(database = ident0.database.orElse(Some(catalog.getCurrentDatabase)))
        val entry = if (catalog.tableExists(ident)) Some(catalog.getTableMetadata(ident)) else None
        val qualified = ident.copy(catalog = Some("spark_catalog")).unquotedString
        entry.foreach { e =>
          val provider = e.provider.getOrElse("")
          if (!DeltalogTable.isDeltalogProvider(provider) && !provider.equalsIgnoreCase("delta")) {
            throw new InvalidWriteException(if (replace) "DELTA_NOT_A_DELTA_TABLE" else "DELTA_TABLE_ALREADY_EXISTS",
              qualified, s"Table $qualified already exists as a '$provider' table; CLONE can only " +
                (if (replace) "replace a deltalog table." else "create a new table: choose another name."))
          }
          if (ifNotExists) return None
          if (!replace) {
            throw new InvalidWriteException("DELTA_TABLE_ALREADY_EXISTS", qualified,
              s"Table $qualified already exists. Use CREATE OR REPLACE TABLE ... CLONE to replace it, or " +
                "CREATE TABLE IF NOT EXISTS ... CLONE to leave it as it is.")
          }
        }
        val path = entry.flatMap(_.storage.locationUri).map(CatalogUtils.URIToString)
          .orElse(location)
          .getOrElse(CatalogUtils.URIToString(catalog.defaultTablePath(ident)))
        val result = try new CloneCommand(session, src, CloneTarget(path, Some(qualified), create, replace,
          ifNotExists), isShallow, properties).run()
        finally DeltalogTable.refreshCaches(spark, path)
        if (entry.isEmpty && result.isDefined) {
          catalog.createTable(CatalogTable(
            identifier = ident.copy(catalog = Some("spark_catalog")),
            tableType = if (location.isDefined) CatalogTableType.EXTERNAL else CatalogTableType.MANAGED,
            storage = CatalogStorageFormat.empty.copy(locationUri = Some(CatalogUtils.stringToURI(path)),
              properties = DeltalogTableCreation.MarkerProperties),
            schema = new StructType(),
            provider = Some(DeltalogTable.Provider),
            properties = DeltalogTableCreation.MarkerProperties), ignoreIfExists = false, validateLocation = false)
        } else if (entry.isDefined) {
          catalog.refreshTable(ident)
        }
        result
      case _ => throw new IllegalArgumentException(s"CLONE target $target names no table")
    }
  }

  /** `target` as given to `DeltaTable.clone`: an absolute path is a path table, anything else a table name. */
  def targetOf(spark: SparkSession, target: String): TableTarget =
    if (new Path(target).isAbsolute) TableTarget(Some(target), None)
    else TableTarget(None, Some(spark.sessionState.sqlParser.parseTableIdentifier(target)))
}
