package io.deltalog.commands

import java.util.Locale

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.functions.{coalesce, col, lit, udf}
import org.apache.spark.sql.types.{LongType, StringType, StructField, StructType}

import io.deltalog.actions.{AddFile, PathCodec}
import io.deltalog.dv.{DeletionVectorLoader, RoaringBitmapArray}
import io.deltalog.txn.OptimisticTransaction

/**
 * Reads the rows of some data files of a table the way a DML statement needs them: the table's
 * logical columns (physical names and partition values from the log resolved), each file's
 * existing deletion vector applied, plus the file's key ([[FileColumn]], see [[fileKey]]) and the
 * row's physical index in its Parquet file ([[RowIndexColumn]], Spark's `_metadata.row_index`).
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
  private lazy val qualifiedRoot = root.getFileSystem(txn.deltaLog.hadoopConf).makeQualified(root)

  /** A file's path as Spark reports it in `_metadata.file_path`, reduced to the URI path. */
  def fileKey(f: AddFile): String = new Path(root, PathCodec.decodePath(f.path)).toUri.getPath

  /** The deleted rows of each file with a DV (loaded on the driver). */
  def existingDeletionVectors(files: Seq[AddFile]): Map[String, RoaringBitmapArray] =
    files.flatMap(f => f.deletionVector.map(dv => fileKey(f) ->
      DeletionVectorLoader.load(dv, root.toString, f.path, txn.deltaLog.hadoopConf))).toMap

  /** The rows of `files` (see the class doc); an empty DataFrame of that schema when there are none. */
  def read(files: Seq[AddFile]): DataFrame = {
    val mapped = ColumnMappingWriter.enabled(conf)
    val physical = ColumnMappingWriter.physicalSchema(schema, mapped)
    val isPart = schema.fields.map(f => partSet.contains(f.name.toLowerCase(Locale.ROOT)))
    val dataPhysical = StructType(physical.fields.zip(isPart).collect {
      case (f, false) => f.copy(metadata = org.apache.spark.sql.types.Metadata.empty)
    } ++ rowIds.toSeq.flatMap(r => Seq(StructField(r.idColumn, LongType), StructField(r.versionColumn, LongType))))
    val dvs = existingDeletionVectors(files)
    val bc = spark.sparkContext.broadcast(dvs)
    val kept = udf((file: String, index: Long) => !bc.value.get(file).exists(_.contains(index)))
    val uriPath = udf(new UriPathOf)
    val bases: Map[String, java.lang.Long] =
      files.flatMap(f => f.baseRowId.map(b => fileKey(f) -> Long.box(b))).toMap
    val versions: Map[String, java.lang.Long] =
      files.flatMap(f => f.defaultRowCommitVersion.map(v => fileKey(f) -> Long.box(v))).toMap
    val baseIds = udf((file: String) => bases.getOrElse(file, null))
    val defaultVersions = udf((file: String) => versions.getOrElse(file, null))
    val parts = files.groupBy(_.partitionValues).toSeq.map { case (pv, fs) =>
      val statuses = fs.map { f =>
        val p = qualifiedRoot.getFileSystem(txn.deltaLog.hadoopConf).makeQualified(
          new Path(qualifiedRoot, PathCodec.decodePath(f.path)))
        new FileStatus(f.size, false, 1, 0L, f.modificationTime, p)
      }
      val relation = HadoopFsRelation(new KnownFilesIndex(qualifiedRoot, statuses), new StructType(), dataPhysical,
        None, new ParquetFileFormat(), Map.empty)(spark)
      val df = spark.baseRelationToDataFrame(relation)
        .withColumn(FileColumn, uriPath(col("_metadata.file_path")))
        .withColumn(RowIndexColumn, col("_metadata.row_index"))
      val filtered = if (fs.exists(_.deletionVector.isDefined)) df.filter(kept(col(FileColumn), col(RowIndexColumn)))
        else df
      val cols: Seq[Column] = schema.fields.toSeq.zip(physical.fields.toSeq).zip(isPart.toSeq).map {
        case ((l, p), true) => lit(pv.getOrElse(p.name, null)).cast(l.dataType).as(l.name)
        case ((l, p), false) => WriteSchema.column(p.name).cast(l.dataType).as(l.name)
      }
      val tracking: Seq[Column] = rowIds.toSeq.flatMap { r =>
        Seq(coalesce(WriteSchema.column(r.idColumn), baseIds(col(FileColumn)) + col(RowIndexColumn)).as(r.idColumn),
          coalesce(WriteSchema.column(r.versionColumn), defaultVersions(col(FileColumn))).as(r.versionColumn))
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

/**
 * `_metadata.file_path` (a URI string) → its path ([[TouchedFiles.fileKey]]'s form), remembering the
 * last one: a task reads its rows file after file, so the URI is parsed once per file, not per row.
 */
private final class UriPathOf extends (String => String) with Serializable {
  @transient private var lastIn: String = _
  @transient private var lastOut: String = _

  def apply(s: String): String = {
    if (s == null) return null
    if (s != lastIn) {
      lastOut = new Path(new java.net.URI(s)).toUri.getPath
      lastIn = s
    }
    lastOut
  }
}

private[commands] object TouchedFiles {
  val FileColumn = "__deltalog_file"
  val RowIndexColumn = "__deltalog_row_index"

  /** The materialized row tracking columns of a table (names from its configuration). */
  final case class RowIds(idColumn: String, versionColumn: String)
}
