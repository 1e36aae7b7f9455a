package io.deltalog.spark

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, Row, SaveMode}
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable, CatalogTableType, CatalogUtils}
import org.apache.spark.sql.connector.catalog.TableCatalog
import org.apache.spark.sql.connector.expressions.ClusterByTransform
import org.apache.spark.sql.types.{DataType, StructType}

import io.deltalog.commands.{InvalidWriteException, StatementContext, WriteOptions}
import io.deltalog.log.DeltaLog
import io.deltalog.spark.read.DeltalogReader

/**
 * The commit of a [[StagedDeltalogTable]]: CREATE TABLE [AS SELECT], REPLACE TABLE [AS SELECT]
 * and their DataFrame forms.
 *
 *  - A new table: its data (none for a plain CREATE TABLE) and metadata are the table's first
 *    commit, at the statement's LOCATION or the warehouse path (managed); the metastore entry is
 *    created after the commit landed. A location that already holds a Delta table is refused for
 *    CTAS; a plain `CREATE TABLE t USING deltalog LOCATION '/existing'` registers that table (a
 *    schema, partitioning or properties given in the statement must match its log).
 *  - A replaced table: one new version whose files replace all of the table's files, with the
 *    statement's schema, partitioning, properties and comment (REPLACE semantics); history is kept.
 *    `saveAsTable` in overwrite mode (Spark marks its writes) keeps `df.write...save` semantics
 *    instead: the data is replaced, the schema only with `overwriteSchema`.
 */
private[spark] final class DeltalogTableCreation(
    catalog: DeltalogCatalog,
    staged: StagedDeltalogTable,
    pending: Option[(DataFrame, SaveMode, Map[String, String])]) {

  import DeltalogTableCreation._

  private val spark = catalog.spark
  private val ident = staged.ident
  private val info = staged.info
  private val props: Map[String, String] = info.properties().asScala.toMap
  private val isPath = catalog.isPathIdentifier(ident)
  private val existing: Option[CatalogTable] = if (isPath) None else catalog.deltalogEntry(ident)
  private val tableName = if (isPath) DeltalogCatalog.pathTableName(ident.name()) else
    catalog.v1Identifier(ident).unquotedString

  def run(): Unit = {
    val location = props.get(TableCatalog.PROP_LOCATION).filter(_.nonEmpty)
    val path = if (isPath) ident.name() else existing.flatMap(_.storage.locationUri.map(CatalogUtils.URIToString))
      .getOrElse(location.getOrElse(CatalogUtils.URIToString(catalog.sessionCatalog.defaultTablePath(
        catalog.v1Identifier(ident)))))
    val isManaged = !isPath && existing.map(_.tableType == CatalogTableType.MANAGED)
      .getOrElse(location.isEmpty && !props.contains(TableCatalog.PROP_EXTERNAL))
    val log = DeltaLog.uncached(path, DeltalogReader.hadoopConf(spark, Map.empty))
    val latest = DeltalogCatalog.latest(log)
    val logExists = latest.isDefined

    val replacing = staged.kind != StageKind.Create && (existing.isDefined || (isPath && logExists))
    if (staged.kind == StageKind.Create && existing.isDefined) {
      throw new TableAlreadyExistsException(ident)
    }
    if (!replacing && logExists) {
      if (pending.isEmpty && !isManaged) return register(path, latest.get)
      throw new InvalidWriteException("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", tableName,
        s"Cannot create table $tableName: its location $path already holds a Delta table (version " +
          s"${latest.get.version}). Use CREATE TABLE $tableName USING deltalog LOCATION '$path' (no AS SELECT) " +
          "to register it, INSERT INTO to add rows, or choose another location.")
    }
    if (!replacing && isManaged) refuseNonEmptyManagedLocation(path, log)

    val partitionBy = partitionColumns()
    val clustering = clusterBy()
    val declared = if (pending.isEmpty) Some(schemaOf(info, tableName)) else None
    val tableProperties = userProperties(props)
    val description = props.get(TableCatalog.PROP_COMMENT)
    val (data, writeParams) = pending match {
      case Some((df, _, params)) => (df, params)
      case None =>
        // no rows: the data leaves out the identity columns the writer must not be given values for
        val columns = StructType(declared.get.fields.filterNot(f => f.metadata.contains(ColumnDefinitions.IdentityStartKey)))
        (spark.createDataFrame(java.util.Collections.emptyList[Row](), columns), Map.empty[String, String])
    }
    val v1Overwrite = writeParams.get(V1OverwriteOption).exists(_.equalsIgnoreCase("true"))
    val asSelect = if (pending.isDefined) " AS SELECT" else ""
    val (mode, params, statement) =
      if (!replacing) {
        (SaveMode.ErrorIfExists, writeParams - V1OverwriteOption,
          StatementContext(Some(s"CREATE TABLE$asSelect"), tableProperties, description, isManaged,
          tableSchema = declared, clusterBy = clustering))
      } else if (v1Overwrite) {
        (SaveMode.Overwrite, writeParams - V1OverwriteOption + (WriteOptions.PartitionOverwriteMode -> "static"),
          StatementContext(Some(s"CREATE OR REPLACE TABLE$asSelect"), Map.empty, None, isManaged))
      } else {
        (SaveMode.Overwrite, writeParams - WriteOptions.ReplaceWhere + (WriteOptions.PartitionOverwriteMode -> "static"),
          StatementContext(Some(staged.kind.sql + asSelect), tableProperties, description, isManaged, replaceTable = true,
          tableSchema = declared, clusterBy = clustering))
      }
    val root = new Path(path)
    val existedBefore = try log.fs.exists(root) catch { case NonFatal(_) => true }
    try {
      new io.deltalog.commands.WriteIntoDeltalog(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession], path,
        mode, new WriteOptions(params + ("path" -> path), k => spark.conf.getOption(k)),
        partitionBy, data, statement).run()
    } catch {
      case NonFatal(e) =>
        // A new table's folder that this statement created (empty directories, a log folder) goes too.
        if (!replacing && !existedBefore && DeltalogCatalog.latest(DeltaLog.uncached(path,
            DeltalogReader.hadoopConf(spark, Map.empty))).isEmpty) {
          try log.fs.delete(root, true) catch { case NonFatal(_) => () }
        }
        throw e
    }
    DeltalogTable.refreshCaches(spark, path)

    if (!isPath && existing.isEmpty) {
      try createEntry(path, isManaged, description)
      catch {
        case NonFatal(e) =>
          // The entry could not be created: a managed table's directory was ours, remove it.
          if (isManaged) try log.fs.delete(new Path(path), true) catch { case NonFatal(_) => () }
          throw e
      }
    } else if (existing.isDefined) {
      catalog.sessionCatalog.refreshTable(catalog.v1Identifier(ident))
    }
  }

  /** `CREATE TABLE t USING deltalog LOCATION '/existing'`: the entry for a table that exists. */
  private def register(path: String, snapshot: io.deltalog.log.Snapshot): Unit = {
    val tableSchema = DeltalogReader.sparkSchema(snapshot)
    val given = schemaOf(info, tableName)
    if (given.nonEmpty && !sameSchema(given, tableSchema)) {
      throw new InvalidWriteException("DELTA_CREATE_TABLE_SCHEMA_MISMATCH", tableName,
        s"Cannot register $tableName: the schema in the statement (${given.toDDL}) differs from the schema of the " +
          s"table at $path (${tableSchema.toDDL}). Leave the column list out to take the table's schema.")
    }
    val givenParts = partitionColumns()
    val parts = snapshot.metadata.partitionColumns
    if (givenParts.nonEmpty && givenParts.map(_.toLowerCase(Locale.ROOT)) != parts.map(_.toLowerCase(Locale.ROOT))) {
      throw new InvalidWriteException("DELTA_CREATE_TABLE_PARTITION_MISMATCH", tableName,
        s"Cannot register $tableName: PARTITIONED BY (${givenParts.mkString(", ")}) differs from the partitioning of " +
          s"the table at $path (${parts.mkString(", ")}). Leave PARTITIONED BY out.")
    }
    clusterBy().foreach { given =>
      val existing = io.deltalog.commands.ClusteredTable.logicalColumns(snapshot)
      val specified = given.map(io.deltalog.commands.ClusteredTable.displayName)
      if (specified.map(_.toLowerCase(Locale.ROOT)) != existing.map(_.toLowerCase(Locale.ROOT))) {
        throw new InvalidWriteException("DELTA_CREATE_TABLE_WITH_DIFFERENT_CLUSTERING", tableName,
          s"Cannot register $tableName: The specified clustering columns do not match the existing clustering " +
            s"columns at $path. Specified: [${specified.mkString(", ")}]; existing: [${existing.mkString(", ")}]. " +
            "Leave CLUSTER BY out, or change it with ALTER TABLE ... CLUSTER BY after registering.")
      }
    }
    val conf = snapshot.metadata.configuration
    userProperties(props).find { case (k, v) => !conf.get(k).contains(v) }.foreach { case (k, v) =>
      throw new InvalidWriteException("DELTA_CREATE_TABLE_WITH_DIFFERENT_PROPERTY", tableName,
        s"Cannot register $tableName: property $k = '$v' differs from the table at $path " +
          s"(${conf.get(k).map(x => s"'$x'").getOrElse("not set")}). Leave TBLPROPERTIES out, or change them " +
          "with ALTER TABLE after registering.")
    }
    createEntry(path, isManaged = false, props.get(TableCatalog.PROP_COMMENT))
  }

  private def refuseNonEmptyManagedLocation(path: String, log: DeltaLog): Unit = {
    val p = new Path(path)
    val nonEmpty = try log.fs.exists(p) && log.fs.listStatus(p).nonEmpty catch { case NonFatal(_) => false }
    if (nonEmpty) {
      throw new InvalidWriteException("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", tableName,
        s"Cannot create managed table $tableName: its location $path exists and is not empty. Remove the " +
          "directory, or give the table another name or a LOCATION.")
    }
  }

  private def createEntry(path: String, isManaged: Boolean, comment: Option[String]): Unit = {
    val entry = CatalogTable(
      identifier = catalog.v1Identifier(ident),
      tableType = if (isManaged) CatalogTableType.MANAGED else CatalogTableType.EXTERNAL,
      storage = CatalogStorageFormat.empty.copy(locationUri = Some(CatalogUtils.stringToURI(path)),
        properties = MarkerProperties),
      schema = new StructType(),
      provider = Some(DeltalogTable.Provider),
      properties = MarkerProperties,
      comment = comment)
    catalog.sessionCatalog.createTable(entry, ignoreIfExists = false, validateLocation = false)
  }

  /** CLUSTER BY (Spark's `cluster_by` transform) as column paths, None without it. */
  private def clusterBy(): Option[Seq[Seq[String]]] = info.partitions().toSeq.collectFirst {
    case ClusterByTransform(cols) => cols.map(_.fieldNames().toSeq)
  }

  /** Identity partition transforms as column names; other transforms are refused (CLUSTER BY: [[clusterBy]]). */
  private def partitionColumns(): Seq[String] = info.partitions().toSeq.filter {
    case ClusterByTransform(_) => false
    case _ => true
  }.map {
    case t if t.name() == "identity" && t.references().length == 1 && t.references()(0).fieldNames().length == 1 =>
      t.references()(0).fieldNames()(0)
    case other => throw new InvalidWriteException("DELTA_UNSUPPORTED_PARTITION_TRANSFORM", tableName,
      s"Table $tableName: ${other.describe()} is not supported; partition by columns (PARTITIONED BY (col, ...)).")
  }
}

private[spark] object DeltalogTableCreation {
  /** Spark's marker on the writes of `saveAsTable` in overwrite mode (see SupportsV1OverwriteWithSaveAsTable). */
  val V1OverwriteOption = "__v1_save_as_table_overwrite"

  /**
   * Marks a metastore entry as a deltalog table whose metadata lives in its log; a session
   * without [[DeltalogCatalog]] that loads it through the data source is refused (it would
   * treat the table as plain files).
   */
  val MarkerKey = "deltalog.catalog"
  val MarkerProperties: Map[String, String] = Map(MarkerKey -> classOf[DeltalogCatalog].getName)

  private val ReservedProperties = Set(TableCatalog.PROP_PROVIDER, TableCatalog.PROP_LOCATION,
    TableCatalog.PROP_COMMENT, TableCatalog.PROP_OWNER, TableCatalog.PROP_EXTERNAL,
    TableCatalog.PROP_IS_MANAGED_LOCATION, TableCatalog.PROP_COLLATION, TableCatalog.PROP_TABLE_TYPE, MarkerKey,
    DeltalogTable.ClusteringColumnsProperty)

  /**
   * The table properties of a statement: TBLPROPERTIES (every key, as delta-spark keeps them in
   * `metaData.configuration`) and `delta.*` entries of OPTIONS / writer options; Spark's reserved
   * keys (provider, location, comment, owner, ...) and other options are not properties.
   */
  def userProperties(props: Map[String, String]): Map[String, String] = props.collect {
    case (k, v) if k.startsWith(TableCatalog.OPTION_PREFIX) &&
        k.substring(TableCatalog.OPTION_PREFIX.length).toLowerCase(Locale.ROOT).startsWith("delta.") =>
      WriteOptions.canonicalKey(k.substring(TableCatalog.OPTION_PREFIX.length)) -> v
    case (k, v) if !k.startsWith(TableCatalog.OPTION_PREFIX) && !ReservedProperties.contains(k) =>
      WriteOptions.canonicalKey(k) -> v
  }

  /** The statement's column list as the log stores it ([[ColumnDefinitions]]). */
  def schemaOf(info: org.apache.spark.sql.connector.catalog.TableInfo, table: String): StructType =
    ColumnDefinitions.schema(info.columns(), userProperties(info.properties().asScala.toMap), table)

  private def sameSchema(a: StructType, b: StructType): Boolean =
    a.length == b.length && a.fields.zip(b.fields).forall { case (x, y) =>
      x.name.equalsIgnoreCase(y.name) && DataType.equalsIgnoreCaseAndNullability(x.dataType, y.dataType)
    }
}
