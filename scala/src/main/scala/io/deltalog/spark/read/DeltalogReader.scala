package io.deltalog.spark.read

import java.time.ZoneId
import java.util.Locale

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.sources.BaseRelation
import org.apache.spark.sql.types.{DataType, NullType, StructType}

import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.schema.{ColumnMapping, ColumnMappingMode, DeltaSchema}

/**
 * The read side of `format("deltalog")`: resolves the path and time travel to a [[Snapshot]]
 * (protocol checked for readability on the way) and returns Spark's file-source relation over it.
 */
object DeltalogReader {
  val ReadChangeFeed = "readChangeFeed"

  /** `spark.read.format("deltalog")...load(path)`. */
  def createRelation(spark: SparkSession, parameters: Map[String, String]): BaseRelation = {
    val options = CaseInsensitiveMap(parameters)
    val rawPath = options.get("path").filter(_.nonEmpty).getOrElse {
      if (options.contains("paths")) throw new InvalidReadOptionException(options("paths"),
        "reading several tables in one load() is not supported; load each table separately")
      throw new InvalidReadOptionException(null, "no table path given; use load(\"/path/to/table\")")
    }
    lazy val zone = ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
    if (options.get(ReadChangeFeed).exists(_.trim.toLowerCase(Locale.ROOT) == "true")) {
      return ChangeFeedReader.createRelation(spark, rawPath, options, hadoopConf(spark, parameters))
    }
    val (path, timeTravel) =
      if (TimeTravel.requested(rawPath, options)) TimeTravel.resolve(rawPath, options, zone) else (rawPath, None)
    val deltaLog = DeltaLog.forTable(path, hadoopConf(spark, parameters))
    val snapshot = timeTravel match {
      case None => deltaLog.update()
      case Some(TimeTravelSpec(Some(v), _, _)) => deltaLog.snapshotAt(v)
      case Some(TimeTravelSpec(_, Some(ts), _)) => deltaLog.snapshotAtTimestamp(ts)
      case Some(other) => throw new IllegalStateException(s"empty time travel spec $other")
    }
    relation(spark, snapshot)
  }

  /**
   * The Hadoop configuration for a read: the SparkContext's shared one (so cached `DeltaLog`s are
   * reused across reads) unless the options carry file-system settings.
   */
  def hadoopConf(spark: SparkSession, parameters: Map[String, String]): Configuration =
    if (parameters.keys.exists(k => k.startsWith("fs.") || k.startsWith("dfs.") || k.startsWith("spark.hadoop.")))
      spark.sessionState.newHadoopConfWithOptions(parameters)
    else spark.sparkContext.hadoopConfiguration

  /** The file-source relation over `snapshot` (protocol checked for readability). */
  def relation(spark: SparkSession, snapshot: Snapshot): HadoopFsRelation = {
    val table = snapshot.deltaLog.tablePath.toString
    val protocol = snapshot.protocol // checks the reader protocol (UnsupportedTableFeatureException)
    var p = relationParts.get(snapshot)
    if (p == null) {
      val metadata = snapshot.metadata
      val fullSchema = DeltaSchema.tableSchema(metadata, table)
      // `void` columns hold no data and cannot be read from Parquet (delta-spark drops them too)
      val tableSchema = StructType(fullSchema.fields.filterNot(_.dataType == NullType))
      TypeWidening.checkReadable(tableSchema, table)
      val partitionSchema = DeltaSchema.partitionSchema(fullSchema, metadata.partitionColumns, table)
      val mode = ColumnMapping.mode(metadata, protocol, table)
      p = RelationParts(tableSchema, partitionSchema, mode, hasLiveDeletionVectors(snapshot),
        TypeWidening.fallbackColumns(tableSchema), ColumnMapping.dropInternalMetadata(tableSchema),
        ColumnMapping.dropInternalMetadata(partitionSchema))
      relationParts.put(snapshot, p) // only once every check passed
    }
    val index = new DeltalogFileIndex(spark, snapshot, p.tableSchema, p.partitionSchema, p.mode)
    val format = new DeltalogParquetFileFormat(p.mode, p.hasDeletionVectors, table, p.tableSchema, p.fallbackColumns)
    HadoopFsRelation(index, p.sparkPartitionSchema, p.sparkDataSchema, None, format, Map.empty)(spark)
  }

  /** The schema Spark sees for `snapshot`: [[relation]]'s schema (void columns and column-mapping metadata dropped). */
  def sparkSchema(snapshot: Snapshot): StructType = {
    val table = snapshot.deltaLog.tablePath.toString
    val full = DeltaSchema.tableSchema(snapshot.metadata, table)
    ColumnMapping.dropInternalMetadata(StructType(full.fields.filterNot(_.dataType == NullType)))
  }

  /**
   * What [[relation]] derives from a snapshot's metadata and files (immutable per snapshot).
   * `spark*Schema`: the schemas Spark sees (column-mapping metadata dropped).
   */
  private final case class RelationParts(
      tableSchema: StructType,
      partitionSchema: StructType,
      mode: ColumnMappingMode,
      hasDeletionVectors: Boolean,
      fallbackColumns: Map[String, Seq[DataType]],
      sparkDataSchema: StructType,
      sparkPartitionSchema: StructType)

  /** [[RelationParts]] of recently read snapshots (weak keys: dropped with the snapshot). */
  private val relationParts =
    java.util.Collections.synchronizedMap(new java.util.WeakHashMap[Snapshot, RelationParts]())

  /** True when a live file of `snapshot` has a deletion vector. */
  def hasLiveDeletionVectors(snapshot: Snapshot): Boolean = {
    var found = false
    snapshot.state.foreachChunk { (chunk, deleted) =>
      if (!found && !chunk.hasNoDeletionVectors) {
        var i = 0
        while (!found && i < chunk.length) {
          if ((deleted == null || !deleted.get(i)) && chunk.deletionVectorAt(i) != null) found = true
          i += 1
        }
      }
    }
    found
  }
}
