package io.deltalog.commands

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.{HadoopReadOptions, ParquetReadOptions}
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.{Footer, ParquetFileReader}
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.execution.datasources.parquet.{ParquetFileFormat, ParquetToSparkSchemaConverter}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/**
 * Reads the Parquet footers of the files to convert on the executors (a Spark job; several footers
 * at a time in each task) and returns each file's [[FooterSummary]]: its schema as Spark reads it
 * (Spark's own schema from the footer's metadata when Spark wrote the file) and its statistics.
 * Only footers are read, never data.
 */
private[commands] object ConvertFooters {
  private val ThreadsPerTask = 8

  /** One file's outcome: its summary (its schema by index into the task's schemas), or why its footer is unreadable. */
  private final case class Outcome(index: Int, schemaId: Int, numRecords: Long,
      leaves: Map[Seq[String], FooterLeafStats], error: String)

  /**
   * The summaries of `files`, in order; None for a file whose footer cannot be read when
   * `ignoreCorruptFiles` (else [[ConvertErrors.footer]] names the first such file).
   */
  def read(spark: ClassicSession, hadoopConf: Configuration, files: IndexedSeq[ConvertFile],
      ignoreCorruptFiles: Boolean, table: String): IndexedSeq[Option[FooterSummary]] = {
    val sql = spark.sessionState.conf
    val conf = new Configuration(hadoopConf)
    // ParquetToSparkSchemaConverter(Configuration) reads these SQL settings from the Hadoop conf.
    conf.setBoolean(SQLConf.PARQUET_BINARY_AS_STRING.key, sql.isParquetBinaryAsString)
    conf.setBoolean(SQLConf.PARQUET_INT96_AS_TIMESTAMP.key, sql.isParquetINT96AsTimestamp)
    conf.setBoolean(SQLConf.CASE_SENSITIVE.key, sql.caseSensitiveAnalysis)
    conf.setBoolean(SQLConf.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED.key, sql.parquetInferTimestampNTZEnabled)
    conf.setBoolean(SQLConf.LEGACY_PARQUET_NANOS_AS_LONG.key, sql.legacyParquetNanosAsLong)
    val taskConf = SparkInternals.hadoopConfForTasks(conf)
    val inputs = files.zipWithIndex.map { case (f, i) => (i, f.location, f.size, f.modificationTime) }
    val perTask = 256
    val slices = math.max(1, math.min((inputs.size + perTask - 1) / perTask,
      math.max(spark.sparkContext.defaultParallelism * 4, 1)))
    val parts = spark.sparkContext.parallelize(inputs, slices).mapPartitions { it =>
      Iterator.single(readAll(it.toVector, taskConf()))
    }.collect()
    val out = new Array[Option[FooterSummary]](files.size)
    parts.foreach { case (schemas, outcomes) =>
      outcomes.foreach { o =>
        if (o.error != null) {
          if (!ignoreCorruptFiles) throw ConvertErrors.footer(table, files(o.index).location, o.error)
          out(o.index) = None
        } else out(o.index) = Some(FooterSummary(schemas(o.schemaId), o.numRecords, o.leaves))
      }
    }
    out.toIndexedSeq
  }

  /** The footers of `batch` (index, location, size, modification time), a few at a time. */
  private def readAll(batch: Vector[(Int, String, Long, Long)], conf: Configuration): (Array[StructType], Array[Outcome]) = {
    val converter = new ParquetToSparkSchemaConverter(conf)
    // Built once: ParquetFileReader.open(InputFile) would build read options from a new Configuration
    // (parsing the default resources) for every file.
    val options = HadoopReadOptions.builder(conf).withMetadataFilter(ParquetMetadataConverter.NO_FILTER).build()
    val pool = Executors.newFixedThreadPool(math.max(1, math.min(ThreadsPerTask, batch.size)))
    val read = try {
      batch.map { case (i, location, size, mtime) =>
        pool.submit(new Callable[(Int, Either[String, (StructType, FooterSummary)])] {
          def call() = (i, readOne(location, size, mtime, conf, options, converter))
        })
      }.map(_.get())
    } finally {
      pool.shutdownNow()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
    val schemas = scala.collection.mutable.LinkedHashMap.empty[StructType, Int]
    val outcomes = read.map {
      case (i, Left(error)) => Outcome(i, -1, 0L, Map.empty, error)
      case (i, Right((schema, s))) =>
        Outcome(i, schemas.getOrElseUpdate(schema, schemas.size), s.numRecords, s.leaves, null)
    }
    (schemas.keys.toArray, outcomes.toArray)
  }

  private def readOne(location: String, size: Long, mtime: Long, conf: Configuration, options: ParquetReadOptions,
      converter: ParquetToSparkSchemaConverter): Either[String, (StructType, FooterSummary)] =
    try {
      val path = new Path(location)
      val status = new FileStatus(size, false, 1, 0L, mtime, path)
      val file = HadoopInputFile.fromStatus(status, conf)
      val in = file.newStream()
      val footer = try ParquetFileReader.readFooter(file, options, in) finally in.close()
      val schema = ParquetFileFormat.readSchemaFromFooter(new Footer(path, footer), converter)
      Right((schema, FooterStats.summarize(footer, schema)))
    } catch {
      case NonFatal(e) => Left(s"${e.getClass.getSimpleName}: ${e.getMessage}")
    }
}
