package io.deltalog.commands

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.classic.{Dataset => ClassicDataset, SparkSession => ClassicSession}
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.execution.datasources.FileFormatWriter
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

import io.deltalog.exceptions.DeltalogException

/**
 * Runs one Spark job that writes `logical` (table columns, logical names, table order) as Parquet
 * files under the table root: columns renamed to their physical names (with Parquet field ids
 * under column mapping), Hive-style partition directories, per-file statistics gathered while
 * rows are written. Returns the files of the successful tasks; when the job fails, the files
 * already written are deleted and the first deltalog error among the causes is rethrown.
 *
 * Timestamps are written as INT64 `TIMESTAMP_MICROS` (UTC-adjusted), not Spark's default INT96,
 * which readers that convert INT96 to nanoseconds (delta-rs, Polars) wrap or clamp outside
 * 1677–2262; `spark.sql.parquet.outputTimestampType` set in the session (or in the Hadoop
 * configuration) or given as a writer option still decides ([[DataFileWriter.jobConf]]).
 *
 * @param cdcColumn when set, the name of a boolean column of `logical` (not a table column)
 *                  marking change-data rows: they go to `_change_data/` (see [[DeltalogCommitProtocol]])
 * @param extraColumns columns of `logical` written after the table's columns under their own names,
 *                     without statistics (row tracking's materialized row id / commit version columns)
 */
private[commands] final class DataFileWriter(
    spark: ClassicSession,
    root: String,
    hadoopConf: Configuration,
    schema: StructType,
    partitionColumns: Seq[String],
    conf: Map[String, String],
    writerOptions: Map[String, String],
    identityColumns: Seq[String],
    table: String,
    cdcColumn: Option[String] = None,
    extraColumns: Seq[String] = Nil) {

  private val mapped = ColumnMappingWriter.enabled(conf)
  private val physical: StructType = ColumnMappingWriter.physicalSchema(schema, mapped)
  private val partSet = partitionColumns.map(_.toLowerCase(java.util.Locale.ROOT)).toSet
  private def isPart(f: StructField) = partSet.contains(f.name.toLowerCase(java.util.Locale.ROOT))

  /** Logical name → physical name of each top-level column. */
  val physicalNames: Map[String, String] = schema.fields.zip(physical.fields).map { case (l, p) => l.name -> p.name }.toMap

  def write(logical: DataFrame): Seq[WrittenFile] = {
    val cols: Seq[Column] = cdcColumn.toSeq.map(c => WriteSchema.column(c).as(CdcFlag)) ++
      schema.fields.zip(physical.fields).map { case (l, p) =>
        val c = WriteSchema.column(l.name)
        val typed = if (l.dataType == p.dataType) c else c.cast(p.dataType)
        typed.as(p.name, p.metadata)
      } ++ extraColumns.map(c => WriteSchema.column(c).as(c)) ++ cdcColumn.toSeq.map(_ => WriteSchema.column(ReplaceWhere.ChangeTypeColumnName))
    val df = logical.select(cols: _*)
    val qe = df.asInstanceOf[ClassicDataset[_]].queryExecution
    val dataLogical = StructType(schema.fields.filterNot(isPart))
    val dataPhysical = StructType(physical.fields.zip(schema.fields).collect { case (p, l) if !isPart(l) => p })
    val partitionPhysical = StructType(cdcColumn.toSeq.map(_ => StructField(CdcFlag, BooleanType)) ++
      partitionColumns.map(c => physical.fields(schema.fields.indexWhere(_.name.equalsIgnoreCase(c)))))
    val spec = StatsSpec.forTable(dataLogical, dataPhysical, conf, table)
    val idOrdinals = identityColumns.flatMap { l =>
      val pn = physicalNames(l)
      val i = dataPhysical.fields.indexWhere(_.name == pn)
      if (i >= 0) Some(pn -> i) else None
    }.toMap
    val tracker = new DeltalogWriteStatsTracker(new SerializableConfiguration(hadoopConf), spec, partitionPhysical,
      idOrdinals)
    val committer = new DeltalogCommitProtocol(root, cdcColumn.map(_ => CdcFlag))
    WriteJobTasks.track(spark.sparkContext, committer.jobId) { tasks =>
      try {
        SQLExecution.withNewExecutionId(qe, Some("deltalog write")) {
          val plan = qe.executedPlan
          val partAttrs = partitionPhysical.fields.toSeq.map(f => plan.output.find(_.name == f.name).get)
          FileFormatWriter.write(
            sparkSession = spark,
            plan = plan,
            fileFormat = new ParquetFileFormat(),
            committer = committer,
            outputSpec = FileFormatWriter.OutputSpec(root, Map.empty, plan.output),
            hadoopConf = DataFileWriter.jobConf(hadoopConf, writerOptions.get(WriteOptions.OutputTimestampType),
              spark.sessionState.conf.contains(WriteOptions.OutputTimestampType)),
            partitionColumns = partAttrs,
            bucketSpec = None,
            statsTrackers = Seq(tracker),
            options = writerOptions,
            numStaticPartitionCols = 0)
        }
      } catch {
        case NonFatal(e) =>
          // Tasks of the failed stage that are still being killed may yet finish a file: wait for
          // them (bounded; only on this failure path), then delete every file of the job.
          tasks.awaitQuiet(10000L)
          committer.deleteWrittenFiles(hadoopConf)
          throw DataFileWriter.deltalogCause(e).getOrElse(e)
      }
    }
    // Spark writes a file for an empty first task (to keep the schema); it holds no rows and is
    // not added to the table, so it is deleted.
    val (files, empty) = tracker.files.partition(_.numRecords > 0)
    deleteFiles(empty)
    files
  }

  /** Deletes `files` (used when the commit is abandoned before it is attempted). */
  def deleteFiles(files: Seq[WrittenFile]): Unit = files.foreach { f =>
    try { val p = new org.apache.hadoop.fs.Path(f.path); p.getFileSystem(hadoopConf).delete(p, false) }
    catch { case NonFatal(_) => }
  }

  /** True for a change-data file (written below `_change_data/`). */
  def isChangeData(f: WrittenFile): Boolean = cdcColumn.isDefined && f.partitionValues.get(CdcFlag).contains("true")

  private def CdcFlag: String = DataFileWriter.CdcFlag
}

private[commands] object DataFileWriter {
  /** Partition column that routes change-data rows to `_change_data/`. */
  val CdcFlag = "__is_cdc"

  /** Parquet's physical timestamp type when the user chose none. */
  val DefaultTimestampType = "TIMESTAMP_MICROS"

  /**
   * The Hadoop configuration of the write job: `base` with `spark.sql.parquet.outputTimestampType`
   * set to `option` (a writer option wins), else left as the user set it (the session conf, which
   * Spark copies into `base`, or `base` itself: Spark's Parquet writer only fills the key in when
   * absent), else [[DefaultTimestampType]]. `base` itself is never changed.
   */
  def jobConf(base: Configuration, option: Option[String], inSession: Boolean): Configuration = {
    val key = WriteOptions.OutputTimestampType
    val current = base.get(key)
    // upper-cased: Spark's Parquet writer looks the value up by its exact enum name
    val value = option.orElse(Option(current).map(_.trim.toUpperCase(java.util.Locale.ROOT)))
      .orElse(if (inSession) None else Some(DefaultTimestampType))
    val shredding = base.get(VariantShreddingKey)
    if (value.forall(_ == current) && (shredding == null || shredding == "false")) base
    else {
      val c = new Configuration(base)
      value.foreach(c.set(key, _))
      // variants are written unshredded: shredded ones need the variantShredding feature
      c.set(VariantShreddingKey, "false")
      c
    }
  }

  private val VariantShreddingKey = "spark.sql.variant.writeShredding.enabled"

  /** The first deltalog error among the causes of `e` (task failures arrive wrapped). */
  def deltalogCause(e: Throwable): Option[DeltalogException] = {
    var t = e
    var depth = 0
    while (t != null && depth < 20) {
      t match {
        case d: DeltalogException => return Some(d)
        case _ =>
      }
      t = t.getCause
      depth += 1
    }
    None
  }
}
