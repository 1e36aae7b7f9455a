package io.deltalog.spark

import java.util
import java.util.OptionalLong

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode, SparkSession}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, Table, TableCapability, TableCatalog,
  TruncatableTable}
import org.apache.spark.sql.deltalog.V1FallbackTable
import org.apache.spark.sql.connector.expressions.{Expressions, Transform}
import org.apache.spark.sql.connector.read.{Batch, Scan, ScanBuilder, Statistics, SupportsReportStatistics}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.deltalog.commands.{InvalidWriteException, StatementContext, WriteIntoDeltalog, WriteOptions}
import io.deltalog.exceptions.TableNotFoundException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.{ClientCapabilities, Protocol}
import io.deltalog.spark.read.{DeltalogReader, TimeTravelSpec}
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * A deltalog table as a DataSource V2 `Table`: what the catalog returns for a table named in SQL
 * or `spark.table(...)`, and for `deltalog.`/path``. Its schema, partitioning and properties come
 * from the log (the snapshot is loaded on first use), never from the catalog's copy.
 *
 * Reads are planned by [[DeltalogAnalysis]] as the connector's file-source relation over the same
 * snapshot (pruning, skipping, deletion vectors, column mapping). Writes (`INSERT INTO`,
 * `INSERT OVERWRITE` with static or dynamic partitions, `insertInto`, `saveAsTable` append,
 * `writeTo(...).append/overwrite/overwritePartitions`) are V1 writes ([[DeltalogWriteBuilder]]):
 * one deltalog transaction each. `TRUNCATE TABLE` is one commit removing every file.
 *
 * @param name        the name shown to users (`spark_catalog.db.t` or ``deltalog.`/path` ``)
 * @param timeTravel  a version or timestamp the table is read at (writes are then refused)
 * @param options     file-system options for the table's Hadoop configuration
 */
class DeltalogTable(
    val spark: SparkSession,
    val path: String,
    val catalogTable: Option[CatalogTable],
    tableName: String,
    val timeTravel: Option[TimeTravelSpec] = None,
    val options: Map[String, String] = Map.empty)
  extends Table with SupportsWrite with SupportsRead with TruncatableTable with V1FallbackTable {

  override def name(): String = tableName

  private def hadoopConf = DeltalogReader.hadoopConf(spark, options)

  /** The snapshot this table object reads (the latest one when it was first needed, or the time-travel one). */
  lazy val snapshot: Snapshot = {
    val log = DeltaLog.forTable(path, hadoopConf)
    val s = timeTravel match {
      case None => DeltalogCatalog.latest(log).getOrElse(throw new TableNotFoundException(tableName,
        s"its location $path has no Delta log (_delta_log is missing or empty); the table was deleted outside the " +
          "catalog. DROP TABLE it, or restore the log"))
      case Some(TimeTravelSpec(Some(v), _, _)) => log.snapshotAt(v)
      case Some(TimeTravelSpec(_, Some(ts), _)) => log.snapshotAtTimestamp(ts)
      case Some(other) => throw new IllegalStateException(s"empty time travel spec $other")
    }
    s
  }

  /** The Spark schema of the table (the same the read relation has; column-mapping metadata dropped). */
  override lazy val schema: StructType = DeltalogReader.sparkSchema(snapshot)

  override def partitioning(): Array[Transform] = {
    val names = schema.fieldNames
    snapshot.metadata.partitionColumns.map { c =>
      Expressions.identity(names.find(_.equalsIgnoreCase(c)).getOrElse(c))
    }.toArray
  }

  override def properties(): util.Map[String, String] = {
    val m = snapshot.metadata
    val props = m.configuration ++ Map(
      TableCatalog.PROP_PROVIDER -> DeltalogTable.Provider,
      TableCatalog.PROP_LOCATION -> path) ++
      m.description.map(TableCatalog.PROP_COMMENT -> _) ++
      catalogTable.map { t =>
        if (t.tableType == CatalogTableType.EXTERNAL) TableCatalog.PROP_EXTERNAL -> "true"
        else TableCatalog.PROP_IS_MANAGED_LOCATION -> "true"
      } ++ DeltalogTable.protocolProperties(snapshot.protocol) ++ DeltalogTable.clusteringProperty(snapshot)
    props.asJava
  }

  override def capabilities(): util.Set[TableCapability] = DeltalogTable.Capabilities

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = {
    assertWritable()
    new DeltalogWriteBuilder(this, info.options().asCaseSensitiveMap().asScala.toMap)
  }

  /**
   * Reads are turned into the connector's relation by the session extension's analysis rule; this
   * scan only reports the table's size (DESCRIBE EXTENDED) and says what is missing when the rule
   * is not installed.
   */
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = () => new Scan
      with SupportsReportStatistics {
    override def readSchema(): StructType = schema
    override def estimateStatistics(): Statistics = new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(snapshot.sizeInBytes)
      override def numRows(): OptionalLong = OptionalLong.empty()
    }
    override def toBatch: Batch = throw DeltalogTable.notConfigured(s"reading table $tableName")
  }

  /**
   * The catalog entry Spark falls back to for streaming: `writeStream.format("deltalog").toTable(name)`
   * then starts the query on `format("deltalog")` at the table's location, i.e. deltalog's streaming
   * sink (never Spark's file sink). A path table (``deltalog.`/path` ``) gets an external entry
   * naming its location.
   */
  override def v1Table: CatalogTable = {
    catalogTable.getOrElse(CatalogTable(
      identifier = TableIdentifier(path, Some(DeltalogTable.Provider)),
      tableType = CatalogTableType.EXTERNAL,
      storage = CatalogStorageFormat.empty.copy(locationUri = Some(new org.apache.hadoop.fs.Path(path).toUri)),
      schema = new StructType(),
      provider = Some(DeltalogTable.Provider)))
  }

  private[spark] def assertWritable(): Unit = timeTravel.foreach { tt =>
    throw new InvalidWriteException("DELTA_CANNOT_WRITE_TIME_TRAVEL", tableName,
      s"Table $tableName is read at ${tt.source} (time travel); a write goes to the latest version: name the " +
        "table without VERSION AS OF / TIMESTAMP AS OF.")
  }

  /**
   * One write into this table: `mode` Append, or Overwrite with `params` saying what is replaced
   * (everything, `replaceWhere`, or the written partitions with `partitionOverwriteMode=dynamic`).
   */
  def write(data: DataFrame, mode: SaveMode, params: Map[String, String],
      statement: StatementContext = StatementContext.Default): Option[Long] = {
    assertWritable()
    val all = options ++ params + ("path" -> path)
    val session = spark.asInstanceOf[ClassicSession]
    val result = new WriteIntoDeltalog(session, path, mode, new WriteOptions(all, k => spark.conf.getOption(k)),
      Nil, data, statement).run()
    DeltalogTable.refreshCaches(spark, path)
    result
  }

  /** `TRUNCATE TABLE`: one commit removing every live file (refused on append-only tables). */
  override def truncateTable(): Boolean = {
    assertWritable()
    val log = DeltaLog.uncached(path, hadoopConf)
    val txn = OptimisticTransaction.start(log)
    if (txn.readVersion < 0) throw new TableNotFoundException(tableName, s"$path has no Delta log")
    Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, tableName)
    WriteIntoDeltalog.assertNotAppendOnly(txn.metadata.configuration, tableName, "(all files: TRUNCATE TABLE)")
    val now = System.currentTimeMillis()
    val removed = txn.filterFiles()
    val metrics = Map("numRemovedFiles" -> removed.size.toString,
      "numRemovedBytes" -> removed.map(_.size).sum.toString)
    txn.commit(removed.map(_.remove(now, dataChange = true)), Operation("TRUNCATE").withMetrics(metrics))
    DeltalogTable.refreshCaches(spark, path)
    true
  }

  override def toString: String = s"DeltalogTable($tableName)"
}

object DeltalogTable {
  val Provider = "deltalog"

  val Capabilities: util.Set[TableCapability] = util.EnumSet.of(
    TableCapability.V1_BATCH_WRITE, TableCapability.OVERWRITE_BY_FILTER, TableCapability.TRUNCATE,
    TableCapability.OVERWRITE_DYNAMIC)

  /**
   * The protocol as delta-spark shows it among a table's properties (SHOW TBLPROPERTIES, DESCRIBE
   * EXTENDED): `delta.minReaderVersion`, `delta.minWriterVersion` and, with table features,
   * `delta.feature.<name> = supported` for every listed feature.
   */
  def protocolProperties(p: Protocol): Map[String, String] =
    Map(Protocol.MIN_READER_VERSION_PROP -> p.minReaderVersion.toString,
      Protocol.MIN_WRITER_VERSION_PROP -> p.minWriterVersion.toString) ++
      (if (!p.supportsWriterFeatures) Nil
       else p.readerAndWriterFeatureNames.map(f => (Protocol.FEATURE_PROP_PREFIX + f) -> Protocol.FEATURE_PROP_SUPPORTED))

  /** delta-spark's catalog property of a clustered table: `clusteringColumns` = JSON list of logical paths. */
  val ClusteringColumnsProperty = "clusteringColumns"

  def clusteringProperty(snapshot: io.deltalog.log.Snapshot): Map[String, String] =
    io.deltalog.commands.ClusteredTable.domain(snapshot).map { d =>
      val schema = io.deltalog.commands.ClusteredTable.schemaOf(snapshot.metadata)
      val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
      ClusteringColumnsProperty -> io.deltalog.commands.ClusteredTable.physicalColumns(d).map { p =>
        io.deltalog.commands.ClusteredTable.logicalPath(schema, p).map(mapper.writeValueAsString).mkString("[", ",", "]")
      }.mkString("[", ",", "]")
    }.toMap

  def isDeltalogProvider(provider: String): Boolean =
    provider != null && (provider.equalsIgnoreCase(Provider) ||
      provider.equalsIgnoreCase(classOf[DeltalogDataSource].getName))

  val ExtensionConf = "spark.sql.extensions"
  val CatalogConf = "spark.sql.catalog.spark_catalog"

  /** The error for a statement that needs the session extension and `DeltalogCatalog`. */
  def notConfigured(what: String): InvalidWriteException = new InvalidWriteException(
    "DELTA_CONFIGURE_SPARK_SESSION_WITH_EXTENSION_AND_CATALOG", null,
    s"$what needs the SparkSession to be configured with deltalog's session extension and catalog: set " +
      s"$ExtensionConf=${classOf[DeltalogSparkSessionExtension].getName} and " +
      s"$CatalogConf=${classOf[DeltalogCatalog].getName} when the session is built (from Python: " +
      "configure_spark_with_deltalog(builder)).")

  /** Drops Spark's cached plans and data of the table at `path` after a commit. */
  def refreshCaches(spark: SparkSession, path: String): Unit =
    try spark.asInstanceOf[ClassicSession].sharedState.cacheManager
      .recacheByPath(spark.asInstanceOf[ClassicSession], path)
    catch { case scala.util.control.NonFatal(_) => () }
}
