package io.deltalog.spark.read

import java.time.ZoneId
import java.util.Locale

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.sources.BaseRelation
import org.apache.spark.sql.types.{NullType, StructType}

import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.spark.schema.{ColumnMapping, DeltaSchema}

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
    val zone = ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
    if (options.get(ReadChangeFeed).exists(_.trim.toLowerCase(Locale.ROOT) == "true")) {
      return ChangeFeedReader.createRelation(spark, rawPath, options, hadoopConf(spark, parameters))
    }
    val (path, timeTravel) = TimeTravel.resolve(rawPath, options, zone)
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
    val metadata = snapshot.metadata
    val fullSchema = DeltaSchema.tableSchema(metadata, table)
    // `void` columns hold no data and cannot be read from Parquet (delta-spark drops them too)
    val tableSchema = StructType(fullSchema.fields.filterNot(_.dataType == NullType))
    TypeWidening.checkReadable(tableSchema, table)
    val partitionSchema = DeltaSchema.partitionSchema(fullSchema, metadata.partitionColumns, table)
    val mode = ColumnMapping.mode(metadata, protocol, table)
    val index = new DeltalogFileIndex(spark, snapshot, tableSchema, partitionSchema, mode)
    val format = new DeltalogParquetFileFormat(mode, hasLiveDeletionVectors(snapshot), table, tableSchema,
      TypeWidening.fallbackColumns(tableSchema))
    HadoopFsRelation(index, ColumnMapping.dropInternalMetadata(partitionSchema),
      ColumnMapping.dropInternalMetadata(tableSchema), None, format, Map.empty)(spark)
  }

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
