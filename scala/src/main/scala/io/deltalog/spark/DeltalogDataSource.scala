package io.deltalog.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode, SparkSession}
import org.apache.spark.sql.connector.catalog.{SupportsV1OverwriteWithSaveAsTable, Table}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.execution.streaming.{Sink, Source}
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister, RelationProvider,
  StreamSinkProvider, StreamSourceProvider}
import org.apache.spark.sql.streaming.OutputMode
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType, VariantType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.deltalog.commands.InvalidWriteOptionException

/**
 * `format("deltalog")`. Path reads become a file-source relation over the table's snapshot, path
 * writes one transaction (see docs/connector-design.md); neither needs the session extension.
 *
 * It is also a V2 `TableProvider` (its [[DeltalogTable]] declares no batch read or write of its
 * own, so path reads and writes keep the V1 paths above): Spark's session catalog then plans
 * `saveAsTable`, CTAS/RTAS and INSERT as V2 statements, which [[DeltalogCatalog]] stages and
 * commits. A metastore entry written by [[DeltalogCatalog]] is refused when a session without
 * it loads the table through this source: it would be treated as plain files.
 *
 * Streaming reads (`readStream.format("deltalog")`) are a V1 `StreamSourceProvider`
 * ([[io.deltalog.spark.stream.DeltalogSource]]): the V2 table declares no streaming read, so Spark
 * falls back to it. `writeStream.format("deltalog")` gets the V1 streaming sink
 * [[stream.DeltalogSink]] (the table declares no streaming write, so Spark asks this provider
 * for a `Sink`).
 */
class DeltalogDataSource extends RelationProvider with CreatableRelationProvider with DataSourceRegister
    with SupportsV1OverwriteWithSaveAsTable with StreamSourceProvider with StreamSinkProvider {
  io.deltalog.spark.read.SparkDistributedReplay.register()

  override def shortName(): String = "deltalog"

  /**
   * Spark's default refuses VARIANT for V1 writes; deltalog writes variant columns (unshredded, the
   * `variantType` feature, statistics without min/max), anywhere in the schema.
   */
  override def supportsDataType(dt: DataType): Boolean = dt match {
    case VariantType => true
    case s: StructType => s.fields.forall(f => supportsDataType(f.dataType))
    case a: ArrayType => supportsDataType(a.elementType)
    case m: MapType => supportsDataType(m.keyType) && supportsDataType(m.valueType)
    case other => super.supportsDataType(other)
  }

  override def createRelation(sqlContext: SQLContext, parameters: Map[String, String]): BaseRelation = {
    DeltalogDataSource.refuseCatalogEntry(parameters, "reading")
    io.deltalog.spark.read.DeltalogReader.createRelation(sqlContext.sparkSession, parameters)
  }

  override def createRelation(
      sqlContext: SQLContext,
      mode: SaveMode,
      parameters: Map[String, String],
      data: DataFrame): BaseRelation = {
    DeltalogDataSource.refuseCatalogEntry(parameters, "writing")
    val path = io.deltalog.commands.WriteIntoDeltalog.write(sqlContext.sparkSession, mode, parameters, data)
    // The write is committed: a relation that cannot be built must not turn it into an error.
    try createRelation(sqlContext, Map("path" -> path))
    catch {
      case scala.util.control.NonFatal(_) =>
        val ctx = sqlContext
        new BaseRelation {
          override def sqlContext: SQLContext = ctx
          override def schema: org.apache.spark.sql.types.StructType = data.schema
        }
    }
  }

  override def sourceSchema(sqlContext: SQLContext, schema: Option[StructType], providerName: String,
      parameters: Map[String, String]): (String, StructType) = {
    DeltalogDataSource.refuseCatalogEntryWithoutCatalog(sqlContext.sparkSession, parameters, "streaming from")
    // a catalog entry's schema is empty (the log holds it): not a schema the user gave
    (shortName(), io.deltalog.spark.stream.DeltalogStreamSource.sourceSchema(sqlContext.sparkSession,
      schema.filter(_.nonEmpty), parameters))
  }

  override def createSource(sqlContext: SQLContext, metadataPath: String, schema: Option[StructType],
      providerName: String, parameters: Map[String, String]): Source = {
    DeltalogDataSource.refuseCatalogEntryWithoutCatalog(sqlContext.sparkSession, parameters, "streaming from")
    io.deltalog.spark.stream.DeltalogStreamSource.createSource(sqlContext.sparkSession, parameters)
  }

  override def createSink(
      sqlContext: SQLContext,
      parameters: Map[String, String],
      partitionColumns: Seq[String],
      outputMode: OutputMode): Sink = {
    DeltalogDataSource.refuseCatalogEntry(parameters, "streaming into")
    val path = parameters.collectFirst { case (k, v) if k.equalsIgnoreCase("path") && v.nonEmpty => v }.getOrElse(
      throw new InvalidWriteOptionException("path", "", "the table path: use start(\"/path/to/table\") or toTable(name)"))
    if (outputMode != OutputMode.Append() && outputMode != OutputMode.Complete()) {
      throw stream.DeltalogSink.unsupportedOutputMode(path, outputMode)
    }
    new stream.DeltalogSink(sqlContext, path, partitionColumns, outputMode, parameters)
  }

  /** The schema comes from the log when the table is used; nothing is read here. */
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = new StructType()

  override def getTable(schema: StructType, partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val props = properties.asScala.toMap
    DeltalogDataSource.refuseCatalogEntry(props, "using")
    val path = props.collectFirst { case (k, v) if k.equalsIgnoreCase("path") && v.nonEmpty => v }.getOrElse(
      throw new InvalidWriteOptionException("path", "", "the table path: use load/save(\"/path/to/table\")"))
    val fsOptions = props.filter { case (k, _) => k.startsWith("fs.") || k.startsWith("dfs.") }
    new DeltalogTable(SparkSession.active, path, None, DeltalogCatalog.pathTableName(path), None, fsOptions)
  }
}

object DeltalogDataSource {
  /**
   * [[refuseCatalogEntry]] unless the session's `spark_catalog` is [[DeltalogCatalog]]: then the
   * entry was reached through it (Spark falls back to a catalog table's V1 entry for streaming, e.g.
   * `readStream.table(name)`), and its options name the table's location.
   */
  def refuseCatalogEntryWithoutCatalog(session: SparkSession, options: Map[String, String], what: String): Unit = {
    val configured = session.conf.getOption(DeltalogTable.CatalogConf).exists { c =>
      scala.util.Try(classOf[DeltalogCatalog].isAssignableFrom(
        Class.forName(c, false, Thread.currentThread().getContextClassLoader))).getOrElse(false)
    }
    if (!configured) refuseCatalogEntry(options, what)
  }

  /** Refuses a metastore entry of [[DeltalogCatalog]] reached without it (its marker is in the options). */
  def refuseCatalogEntry(options: Map[String, String], what: String): Unit =
    if (options.exists { case (k, _) => k.equalsIgnoreCase(DeltalogTableCreation.MarkerKey) }) {
      throw DeltalogTable.notConfigured(s"$what a deltalog catalog table")
    }
}
