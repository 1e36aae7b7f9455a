package io.deltalog.commands

import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{ByteType, LongType, StructType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import io.deltalog.dv.RoaringBitmapArray

/**
 * Spark's Parquet reader for the files a DML statement reads, which marks each row its file's
 * deletion vector deletes: the column [[DeletedRowsParquetFormat.DeletedColumn]] (a byte, 1 =
 * deleted; not in the files) is set from the row's physical index (Spark's row-index column
 * `_tmp_metadata_row_index`, read along even when not requested) and the file's bitmap, batch by
 * batch: a batch of consecutive rows marks just the bitmap's rows in its range. The scan stays
 * columnar, and the statement's own filter and the DV test are cheap column tests in whatever
 * order Spark evaluates them (a per-row expression over `_metadata` would make Spark build the
 * metadata struct for every row).
 *
 * @param dvs each file's DV bitmap under its path as Spark gives it (`PartitionedFile.filePath`)
 */
private[commands] final class DeletedRowsParquetFormat(val dvs: Broadcast[Map[String, RoaringBitmapArray]])
    extends ParquetFileFormat {
  import DeletedRowsParquetFormat._

  override def toString: String = "DeletedRowsParquet"

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    // the marker column is in no file: a filter on it must not reach Parquet (it would read as all NULL)
    val pushed = filters.filterNot(_.references.contains(DeletedColumn))
    if (!requiredSchema.fieldNames.contains(DeletedColumn)) {
      return super.buildReaderWithPartitionValues(sparkSession, dataSchema, partitionSchema, requiredSchema,
        pushed, options, hadoopConf)
    }
    // the row index is read too when the query does not ask for it (then left out of the output)
    val indexRequested = requiredSchema.fieldNames.contains(RowIndexColumn)
    val withIndex = if (indexRequested) requiredSchema else requiredSchema.add(RowIndexColumn, LongType)
    val read = super.buildReaderWithPartitionValues(sparkSession, dataSchema, partitionSchema, withIndex,
      pushed, options, hadoopConf)
    val marker = requiredSchema.fieldIndex(DeletedColumn)
    val rowIndex = withIndex.fieldIndex(RowIndexColumn)
    // the reader's columns (required ++ [row index] ++ partition columns) that make the output
    val readFields = (withIndex.fields ++ partitionSchema.fields).toSeq
    val outputColumns = readFields.indices.filter(i => indexRequested || i != rowIndex).toArray
    (file: PartitionedFile) => {
      val dv = dvs.value.getOrElse(file.filePath.toString, null)
      def deleted(index: Long): Byte = if (dv != null && dv.contains(index)) 1.toByte else 0.toByte
      var marks: OnHeapColumnVector = null
      var capacity = 0
      lazy val toUnsafe = UnsafeProjection.create(outputColumns.toSeq.map(i =>
        BoundReference(i, readFields(i).dataType, nullable = true)))
      // Spark's readers return columnar batches typed as rows
      read(file).asInstanceOf[Iterator[AnyRef]].map {
        case batch: ColumnarBatch =>
          val n = batch.numRows()
          if (capacity < n) {
            capacity = math.max(n, 4096)
            marks = new OnHeapColumnVector(capacity, ByteType)
          }
          val indexes = batch.column(rowIndex)
          if (n > 0) {
            val first = indexes.getLong(0)
            if (dv == null) marks.putBytes(0, n, 0.toByte)
            else if (indexes.getLong(n - 1) - first == n - 1) {
              // consecutive rows (no page skipped inside the batch): mark just the DV's rows among them
              marks.putBytes(0, n, 0.toByte)
              dv.foreachInRange(first, first + n)(row => marks.putByte((row - first).toInt, 1.toByte))
            } else {
              var i = 0
              while (i < n) { marks.putByte(i, deleted(indexes.getLong(i))); i += 1 }
            }
          }
          new ColumnarBatch(outputColumns.map(c => if (c == marker) marks else batch.column(c)): Array[ColumnVector], n)
        case row: InternalRow =>
          // rows of a columnar batch are read-only: copied into an UnsafeRow (the output's columns) to set the marker
          val out = toUnsafe(row)
          out.setByte(marker, deleted(row.getLong(rowIndex)))
          out
      }.asInstanceOf[Iterator[InternalRow]]
    }
  }

  override def equals(other: Any): Boolean = other match {
    case o: DeletedRowsParquetFormat => o.dvs.id == dvs.id
    case _ => false
  }

  override def hashCode(): Int = dvs.id.hashCode()
}

private[commands] object DeletedRowsParquetFormat {
  /** The marker column: 1 for a row the file's deletion vector deletes, 0 for the others. */
  val DeletedColumn = "__deltalog_row_deleted"

  /** Spark's Parquet row-index column (its reader fills it when the requested schema has it). */
  val RowIndexColumn: String = ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME
}
