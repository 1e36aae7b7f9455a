package io.deltalog.spark.read

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, LongType, StructField, StructType}
import org.apache.spark.util.SerializableConfiguration

import io.deltalog.dv.DeletionVectorLoader
import io.deltalog.schema.{ColumnMapping, ColumnMappingMode}

/**
 * Spark's Parquet reader for the data files of a Delta table.
 *
 *  - Column mapping `name` / `id`: the requested (logical) schema is rewritten to physical names,
 *    nested fields included; in `id` mode fields carry Parquet field ids and Spark matches columns
 *    by id. Pushed filters are renamed to physical names.
 *  - Deletion vectors (when the scanned snapshot has any): the reader also requests Spark's
 *    temporary row-index column, drops the rows whose index is in the file's DV bitmap (and, for
 *    the change data feed, keeps only the rows of an "only rows" bitmap) and projects the column
 *    away. Batch output is turned off for such tables (rows still come from
 *    the vectorized reader when the schema allows it); tables without DVs keep Spark's columnar
 *    batch scan unchanged.
 *  - Type widening: the requested types are the table's (widened) types; Spark's Parquet readers
 *    up-cast the narrower physical types of older files. Changes Spark cannot up-cast
 *    (`typeFallbacks`, see [[TypeWidening.fallbackColumns]]) are read with the older type and cast
 *    ([[TypeChangeFallback]]); such tables are read row-wise without filter push-down.
 *
 * @param tablePath       table root URI (for `u` deletion vectors)
 * @param referenceSchema the table schema with its column-mapping metadata (the relation exposes
 *                        it without; requested columns get their metadata back from it by name)
 */
class DeltalogParquetFileFormat(
    val columnMappingMode: ColumnMappingMode,
    val hasDeletionVectors: Boolean,
    val tablePath: String,
    val referenceSchema: StructType,
    val typeFallbacks: Map[String, Seq[DataType]] = Map.empty) extends ParquetFileFormat {

  /** Rows (not columnar batches) are needed to filter by DV or to cast old column types. */
  private def rowsOnly: Boolean = hasDeletionVectors || typeFallbacks.nonEmpty

  override def toString: String = "DeltalogParquet"

  override def supportBatch(sparkSession: SparkSession, schema: StructType): Boolean =
    !rowsOnly && super.supportBatch(sparkSession, schema)

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    def physical(s: StructType) =
      ColumnMapping.toPhysical(ColumnMapping.withMetadataFrom(s, referenceSchema), columnMappingMode)
    val physicalRequired = physical(requiredSchema)
    val physicalData = physical(dataSchema)
    def pushable(fs: Seq[Filter]): Seq[Filter] =
      if (rowsOnly) Nil // row-group pruning is kept away from row-index based deletes and cast columns
      else if (columnMappingMode == ColumnMappingMode.NoMapping) SignedZeroFilters.rewrite(fs)
      else PhysicalFilters.rename(SignedZeroFilters.rewrite(fs), ColumnMapping.physicalNames(
        ColumnMapping.withMetadataFrom(requiredSchema, referenceSchema), columnMappingMode))
    val physicalFilters = pushable(filters)
    // for files flagged by the index (FloatBoundsTrust): no filter on a float/double column
    val nanSafeFilters =
      if (physicalFilters.isEmpty || !NanSafeFilters.referencesFloating(filters, dataSchema)) null
      else pushable(NanSafeFilters.withoutFloating(filters, dataSchema))
    if (columnMappingMode == ColumnMappingMode.IdMapping) {
      hadoopConf.setBoolean(SQLConf.PARQUET_FIELD_ID_READ_ENABLED.key, true)
    }
    val rowIndexField = StructField(ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME, LongType, nullable = true)
    /** Spark's reader for `required` (logical), with the row-index column when DVs are applied. */
    def build(required: StructType, pushed: Seq[Filter]): PartitionedFile => Iterator[InternalRow] = {
      val p = physical(required)
      // each reader gets its own conf: Spark stores the requested schema in it and broadcasts it
      super.buildReaderWithPartitionValues(sparkSession, physicalData, partitionSchema,
        if (hasDeletionVectors) p.add(rowIndexField) else p, pushed, options, new Configuration(hadoopConf))
    }
    val fallbacks = requiredSchema.fields.flatMap(f => typeFallbacks.get(f.name.toLowerCase(java.util.Locale.ROOT))
      .map(f.name -> _)).toMap
    val reader: PartitionedFile => Iterator[InternalRow] =
      if (fallbacks.isEmpty && nanSafeFilters != null) {
        val all = build(requiredSchema, physicalFilters)
        val safe = build(requiredSchema, nanSafeFilters)
        (file: PartitionedFile) => if (FloatBoundsTrust.isFlagged(file)) safe(file) else all(file)
      } else if (fallbacks.isEmpty) build(requiredSchema, physicalFilters)
      else {
        def rowTypes(s: StructType) =
          s.fields.map(_.dataType).toSeq ++ (if (hasDeletionVectors) Seq(LongType) else Nil) ++ partitionSchema.map(_.dataType)
        val alternates = (0 until fallbacks.values.map(_.size).max).map { k =>
          val older = StructType(requiredSchema.fields.map { f =>
            fallbacks.get(f.name).map(ts => f.copy(dataType = ts(math.min(k, ts.size - 1)))).getOrElse(f)
          })
          TypeChangeFallback.Alternate(build(older, Nil), rowTypes(older))
        }
        TypeChangeFallback.wrap(build(requiredSchema, Nil), rowTypes(requiredSchema), alternates,
          sparkSession.sessionState.conf.sessionLocalTimeZone)
      }
    if (!hasDeletionVectors) return reader

    val conf = sparkSession.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
    val rowIndexOrdinal = physicalRequired.length
    // output = required columns ++ partition columns, i.e. the reader's row without the row index
    val outputFields = (requiredSchema.fields ++ partitionSchema.fields).zipWithIndex.map { case (f, i) =>
      val ordinal = if (i < rowIndexOrdinal) i else i + 1
      (ordinal, f)
    }
    val root = tablePath

    (file: PartitionedFile) => {
      val rows = reader(file)
      val project = UnsafeProjection.create(
        outputFields.toSeq.map { case (ordinal, f) => BoundReference(ordinal, f.dataType, nullable = true) })
      val meta = file.otherConstantMetadataColumnValues
      def load(prefix: String) = DeltalogFileIndex.dvFromMetadata(meta, prefix)
        .map(dv => DeletionVectorLoader.load(dv, root, file.filePath.toString, conf.value.value))
      (load(DeltalogFileIndex.DeletedRows), load(DeltalogFileIndex.OnlyRows)) match {
        case (None, None) => rows.map(project)
        case (Some(deleted), None) => rows.filter(r => !deleted.contains(r.getLong(rowIndexOrdinal))).map(project)
        case (deleted, Some(only)) =>
          rows.filter { r =>
            val i = r.getLong(rowIndexOrdinal)
            only.contains(i) && !deleted.exists(_.contains(i))
          }.map(project)
      }
    }
  }

  override def equals(other: Any): Boolean = other match {
    case o: DeltalogParquetFileFormat =>
      o.columnMappingMode == columnMappingMode && o.hasDeletionVectors == hasDeletionVectors &&
        o.tablePath == tablePath && o.referenceSchema == referenceSchema && o.typeFallbacks == typeFallbacks
    case _ => false
  }

  override def hashCode(): Int = (columnMappingMode, hasDeletionVectors, tablePath).hashCode()
}
