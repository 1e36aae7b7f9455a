package io.deltalog.commands

import java.util.Locale

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.functions.{coalesce, col, lit}
import org.apache.spark.sql.types.{ByteType, LongType, StringType, StructField, StructType}

import io.deltalog.actions.{AddFile, DeletionVectorDescriptor, PathCodec}
import io.deltalog.dv.{DeletionVectorLoader, RoaringBitmapArray}
import io.deltalog.txn.OptimisticTransaction

/**
 * Reads the rows of some data files of a table the way a DML statement needs them: the table's
 * logical columns (physical names and partition values from the log resolved), each file's
 * existing deletion vector applied ([[DeletedRowsParquetFormat]] marks the rows it deletes, which
 * are filtered out), plus the file's key ([[FileColumn]], Spark's `_metadata.file_path`, see
 * [[fileKey]]) and the row's physical index in its Parquet file ([[RowIndexColumn]], from Spark's
 * row-index column, requested as a plain column rather than through the `_metadata` struct,
 * which Spark would build for every row).
 *
 * With row tracking ([[RowIds]]), also each row's stable row id and row commit version: the value
 * materialized in the file when there is one, else the default (`baseRowId + row index`, the
 * file's `defaultRowCommitVersion`), under the materialized column names of the table.
 *
 * Files are read by Spark's Parquet reader directly (not deltalog's relation) so that the
 * row-index metadata column is the physical index whether or not the file has a DV, from the log's
 * list of files ([[KnownFilesIndex]], no file-system listing).
 */
private[commands] final class TouchedFiles(
    spark: ClassicSession,
    txn: OptimisticTransaction,
    schema: StructType,
    partitionColumns: Seq[String],
    conf: Map[String, String],
    rowIds: Option[TouchedFiles.RowIds]) {
  import TouchedFiles._

  private val partSet = partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
  private val root = txn.deltaLog.tablePath
  private lazy val fs = root.getFileSystem(txn.deltaLog.hadoopConf)
  private lazy val qualifiedRoot = fs.makeQualified(root)

  /** A file's fully qualified path, as the scan is given it. */
  private def qualifiedPath(f: AddFile): Path = fs.makeQualified(new Path(qualifiedRoot, PathCodec.decodePath(f.path)))

  /**
   * A file's key: its path exactly as Spark reports it in `_metadata.file_path` for the scan of
   * [[read]] (the URI string of [[qualifiedPath]]), so that rows carry it without a per-row conversion.
   */
  def fileKey(f: AddFile): String = qualifiedPath(f).toUri.toString

  /** DVs loaded so far (file key, descriptor): the scan and the statement's bitmap merge read each once. */
  private val loaded = scala.collection.mutable.Map[(String, DeletionVectorDescriptor), RoaringBitmapArray]()

  /** The deleted rows of each file with a DV (loaded on the driver, once per file and DV). */
  def existingDeletionVectors(files: Seq[AddFile]): Map[String, RoaringBitmapArray] =
    files.flatMap(f => f.deletionVector.map { dv =>
      val key = fileKey(f)
      key -> loaded.getOrElseUpdate((key, dv), DeletionVectorLoader.load(dv, root.toString, f.path, txn.deltaLog.hadoopConf))
    }).toMap

  /** The rows of `files` (see the class doc); an empty DataFrame of that schema when there are none. */
  def read(files: Seq[AddFile]): DataFrame = {
    val mapped = ColumnMappingWriter.enabled(conf)
    val physical = ColumnMappingWriter.physicalSchema(schema, mapped)
    val isPart = schema.fields.map(f => partSet.contains(f.name.toLowerCase(Locale.ROOT)))
    val hasDvs = files.exists(_.deletionVector.isDefined)
    // Spark's reader fills the row-index column; DeletedRowsParquetFormat the marker of rows a DV deletes
    val dataPhysical = StructType(physical.fields.zip(isPart).collect {
      case (f, false) => f.copy(metadata = org.apache.spark.sql.types.Metadata.empty)
    } ++ rowIds.toSeq.flatMap(r => Seq(StructField(r.idColumn, LongType), StructField(r.versionColumn, LongType))) ++
      Seq(StructField(SparkRowIndex, LongType)) ++
      (if (hasDvs) Seq(StructField(DeletedRowsParquetFormat.DeletedColumn, ByteType)) else Nil))
    val sc = spark.sparkContext
    val format = if (hasDvs) new DeletedRowsParquetFormat(sc.broadcast(existingDeletionVectors(files)))
      else new ParquetFileFormat()
    // row ids: the file's values looked up once per file by `_metadata.file_path` (PerFileExpressions)
    def perFile[V <: AnyRef](values: Map[String, V]): PerFile[V] = new PerFile(sc.broadcast(values))
    lazy val bases = perFile(files.flatMap(f => f.baseRowId.map(b => fileKey(f) -> Long.box(b))).toMap)
    lazy val versions = perFile(files.flatMap(f => f.defaultRowCommitVersion.map(v => fileKey(f) -> Long.box(v))).toMap)
    def expr(name: String) = SparkInternals.expression(col(name))
    val parts = files.groupBy(_.partitionValues).toSeq.map { case (pv, fs) =>
      val statuses = fs.map(f => new FileStatus(f.size, false, 1, 0L, f.modificationTime, qualifiedPath(f)))
      val relation = HadoopFsRelation(new KnownFilesIndex(qualifiedRoot, statuses), new StructType(), dataPhysical,
        None, format, Map.empty)(spark)
      val df = spark.baseRelationToDataFrame(relation)
        .withColumn(FileColumn, col("_metadata.file_path"))
        .withColumn(RowIndexColumn, col(SparkRowIndex))
      val filtered = if (!fs.exists(_.deletionVector.isDefined)) df
        else df.filter(col(DeletedRowsParquetFormat.DeletedColumn) === lit(0.toByte))
      val cols: Seq[Column] = schema.fields.toSeq.zip(physical.fields.toSeq).zip(isPart.toSeq).map {
        case ((l, p), true) => lit(pv.getOrElse(p.name, null)).cast(l.dataType).as(l.name)
        case ((l, p), false) => WriteSchema.column(p.name).cast(l.dataType).as(l.name)
      }
      val tracking: Seq[Column] = rowIds.toSeq.flatMap { r =>
        Seq(coalesce(WriteSchema.column(r.idColumn),
            SparkInternals.column(PerFileLong(expr(FileColumn), bases)) + col(RowIndexColumn)).as(r.idColumn),
          coalesce(WriteSchema.column(r.versionColumn),
            SparkInternals.column(PerFileLong(expr(FileColumn), versions))).as(r.versionColumn))
      }
      filtered.select((cols ++ tracking ++ Seq(col(FileColumn), col(RowIndexColumn))): _*)
    }
    parts.reduceOption(_ unionByName _).getOrElse {
      val empty = StructType(schema.fields ++ rowIds.toSeq.flatMap(r =>
        Seq(StructField(r.idColumn, LongType), StructField(r.versionColumn, LongType))) ++
        Seq(StructField(FileColumn, StringType), StructField(RowIndexColumn, LongType)))
      spark.createDataFrame(spark.sparkContext.emptyRDD[Row], empty)
    }
  }
}

private[commands] object TouchedFiles {
  /** Spark's Parquet row-index column (filled by its reader when requested under this name). */
  private val SparkRowIndex = ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME
  val FileColumn = "__deltalog_file"
  val RowIndexColumn = "__deltalog_row_index"

  /** The materialized row tracking columns of a table (names from its configuration). */
  final case class RowIds(idColumn: String, versionColumn: String)
}
