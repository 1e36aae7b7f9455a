package io.deltalog.commands

import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

import io.deltalog.actions.{AddFile, PathCodec}

/**
 * Which data files store a column with another type than the table's (digest §6.8: files written
 * before a type change keep the narrower Parquet type). Decided from each file's Parquet footer, read
 * on the executors: a leaf whose Spark type differs from the table's type at the same physical path
 * (names matched case-sensitively, through structs, array elements and map keys / values) makes the
 * file one to rewrite before `typeWidening` can be dropped. Columns a file lacks do not count.
 */
private[commands] object ParquetFileTypes {

  /** The files of `files` (under table root `root`) with a type other than `physicalSchema`'s. */
  def filesWithOtherTypes(spark: ClassicSession, root: Path, hadoopConf: org.apache.hadoop.conf.Configuration,
      files: Seq[AddFile], physicalSchema: StructType): Seq[AddFile] = {
    if (files.isEmpty) return Nil
    val conf = SparkInternals.hadoopConfForTasks(hadoopConf)
    val paths = files.map(f => new Path(root, PathCodec.decodePath(f.path)).toString).zipWithIndex
    val slices = math.max(1, math.min(paths.size, spark.sparkContext.defaultParallelism))
    val differing = spark.sparkContext.parallelize(paths, slices).mapPartitions { it =>
      val converter = new ParquetToSparkSchemaConverter(SQLConf.get)
      val c = conf()
      it.filter { case (p, _) =>
        val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(p), c))
        val fileSchema = try converter.convert(reader.getFooter.getFileMetaData.getSchema) finally reader.close()
        differs(fileSchema, physicalSchema)
      }.map(_._2)
    }.collect().toSet
    files.zipWithIndex.collect { case (f, i) if differing.contains(i) => f }
  }

  /** Whether a leaf of `file` has another atomic type than the field at the same path of `table`. */
  def differs(file: DataType, table: DataType): Boolean = (file, table) match {
    case (f: StructType, t: StructType) =>
      val byName = t.fields.map(x => x.name -> x.dataType).toMap
      f.fields.exists(x => byName.get(x.name).exists(differs(x.dataType, _)))
    case (f: ArrayType, t: ArrayType) => differs(f.elementType, t.elementType)
    case (f: MapType, t: MapType) => differs(f.keyType, t.keyType) || differs(f.valueType, t.valueType)
    case (f, t) if !nested(f) && !nested(t) => f != t
    case _ => false
  }

  private def nested(t: DataType): Boolean = t match {
    case _: StructType | _: ArrayType | _: MapType => true
    case _ => false
  }
}
