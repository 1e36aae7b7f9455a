package io.deltalog.spark.stream

import java.time.ZoneId

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.deltalog.SparkCatalogInternals
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.functions.lit
import org.apache.spark.sql.sources.BaseRelation
import org.apache.spark.sql.types.{LongType, NullType, StringType, StructField, StructType, TimestampType}

import io.deltalog.actions.AddFile
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.schema.{ColumnMapping, DeltaSchema, PartitionValues}
import io.deltalog.spark.read.{ChangeFeedReader, DeltalogFileIndex, DeltalogParquetFileFormat, FloatBoundsTrust,
  TypeWidening}

/**
 * The DataFrames of the stream's micro-batches, read with the batch reader's pieces: a fixed
 * list of `add`s becomes Spark's file-source relation over [[SourceFileIndex]] (the query's
 * partition filters and, on the `add`s' stats, its data filters prune it) and [[DeltalogParquetFileFormat]] (deletion vectors, column
 * mapping, type widening), with the stream's schema (the table's when the source started).
 * Change-feed batches are [[ChangeFeedReader]] over the batch's versions. Every DataFrame is a
 * streaming one, as Spark requires of a source's batches.
 */
final class SourceBatchFrames(spark: SparkSession, deltaLog: DeltaLog, snapshot: Snapshot) {
  private val metadata = snapshot.metadata
  private val protocol = snapshot.protocol
  private val table = deltaLog.tablePath.toString
  private val fullSchema = DeltaSchema.tableSchema(metadata, table)
  private val tableSchema = StructType(fullSchema.fields.filterNot(_.dataType == NullType))
  TypeWidening.checkReadable(tableSchema, table)
  private val partitionSchema = DeltaSchema.partitionSchema(fullSchema, metadata.partitionColumns, table)
  private val mode = ColumnMapping.mode(metadata, protocol, table)
  private val fallbacks = TypeWidening.fallbackColumns(tableSchema)
  private val sparkDataSchema = ColumnMapping.dropInternalMetadata(tableSchema)
  private val sparkPartitionSchema = ColumnMapping.dropInternalMetadata(partitionSchema)
  private val partitionKeys = partitionSchema.fields.map(f => ColumnMapping.partitionValueKey(tableSchema, f.name, mode))
  private val tableUri = deltaLog.tablePath.toUri
  private lazy val floatBoundsTrusted = FloatBoundsTrust.of(spark, snapshot) == FloatBoundsTrust.Trusted

  /** The schema of [[files]] batches (the batch reader's schema of the table). */
  val schema: StructType = SourceSchemaChecks.sparkSchema(metadata, table)

  /** The schema of change-feed batches. */
  val changeFeedSchema: StructType = StructType(schema.fields ++ Seq(
    StructField(ChangeFeedReader.ChangeType, StringType), StructField(ChangeFeedReader.CommitVersion, LongType),
    StructField(ChangeFeedReader.CommitTimestamp, TimestampType)))

  /** The rows of `adds` (deletion vectors applied), in one streaming DataFrame. */
  def files(adds: Seq[AddFile]): DataFrame = {
    val zone = ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
    val byPartition = mutable.LinkedHashMap[Map[String, String], mutable.ArrayBuffer[AddFile]]()
    adds.foreach(a => byPartition.getOrElseUpdate(a.partitionValues, mutable.ArrayBuffer()) += a)
    val directories = byPartition.toSeq.map { case (pv, group) =>
      val row = if (partitionSchema.isEmpty) InternalRow.empty
        else PartitionValues.parseRow(pv, partitionSchema, partitionKeys, zone)
      row -> group.toSeq.map { a =>
        DeltalogFileIndex.fileStatus(DeltalogFileIndex.resolvePath(tableUri, a.path), a.size, a.modificationTime,
          a.deletionVector.orNull) -> a.stats.orNull
      }
    }
    val index = new SourceFileIndex(deltaLog.tablePath, partitionSchema, tableSchema, mode, floatBoundsTrusted,
      directories)
    val format = new DeltalogParquetFileFormat(mode, adds.exists(_.deletionVector.isDefined), table, tableSchema, fallbacks)
    streaming(HadoopFsRelation(index, sparkPartitionSchema, sparkDataSchema, None, format, Map.empty)(spark))
  }

  /** The initial snapshot's `adds` as change-feed inserts of `version` committed at `timestampMs`. */
  def snapshotInserts(adds: Seq[AddFile], version: Long, timestampMs: Long): DataFrame =
    files(adds)
      .withColumn(ChangeFeedReader.ChangeType, lit("insert"))
      .withColumn(ChangeFeedReader.CommitVersion, lit(version))
      .withColumn(ChangeFeedReader.CommitTimestamp, lit(new java.sql.Timestamp(timestampMs)))

  /** The change feed of versions `from` to `to` (inclusive). */
  def changes(from: Long, to: Long, conf: Configuration): DataFrame = {
    val rel = ChangeFeedReader.createRelation(spark, table, Map(
      ChangeFeedReader.StartingVersion -> from.toString, ChangeFeedReader.EndingVersion -> to.toString), conf)
    streaming(rel)
  }

  private def streaming(rel: BaseRelation): DataFrame =
    SparkCatalogInternals.dataFrame(spark,
      LogicalRelation(rel, DataTypeUtils.toAttributes(rel.schema), None, isStreaming = true, stream = None))
}
