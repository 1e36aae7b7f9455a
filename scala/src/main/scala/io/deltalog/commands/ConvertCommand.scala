package io.deltalog.commands

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.types.StructType

import io.deltalog.actions.{AddFile, Metadata, PathCodec}
import io.deltalog.log.DeltaLog
import io.deltalog.txn.{Operation, OptimisticTransaction}

/** What CONVERT did: the version it committed (None: the directory already was a Delta table). */
final case class ConvertResult(version: Option[Long], numFiles: Long)

/**
 * `CONVERT TO DELTALOG parquet.`/path` [NO STATISTICS] [PARTITIONED BY (col type, …)]` (and
 * `DeltaTable.convertToDelta`): makes a directory of Parquet files a Delta table in place, with one
 * commit (version 0) that adds every file, as delta-spark's `CONVERT TO DELTA`:
 *
 *  - the files are listed recursively, hidden files and directories left out ([[ConvertListing]]);
 *  - each file's partition values come from its `col=value` directories, which must be those of
 *    `partitionSchema`, in order, with values of their types ([[ConvertPartitions]]);
 *  - the footers are read in parallel (never the data, [[ConvertFooters]]); the table schema is the
 *    files' schemas merged ([[ConvertSchema]]) with the partition columns; each file's statistics
 *    come from its footer ([[FooterStats]]), unless NO STATISTICS;
 *  - the protocol is a new table's (`Protocol.forNewTable`, session defaults included).
 *
 * A directory that already is a Delta table (a `_delta_log` with a commit) is left alone and nothing
 * is committed, as delta-spark does. Nothing is written before every check passed: a refused
 * conversion leaves the directory as it was.
 */
final class ConvertCommand(
    spark: ClassicSession,
    path: String,
    partitionSchema: Option[StructType],
    collectStats: Boolean,
    hadoopOptions: Map[String, String] = Map.empty) {

  def run(): ConvertResult = {
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(hadoopOptions)
    val raw = new Path(path)
    val fs = raw.getFileSystem(hadoopConf)
    val root = fs.makeQualified(raw)
    val table = root.toString
    if (!fs.exists(root)) throw ConvertErrors.notFound(table)
    if (!fs.getFileStatus(root).isDirectory) throw ConvertErrors.notADirectory(table)

    val deltaLog = DeltaLog.uncached(root.toString, hadoopConf)
    val txn = OptimisticTransaction.start(deltaLog)
    if (txn.readVersion >= 0) return ConvertResult(None, 0L)

    val parts = partitionSchema.getOrElse(new StructType())
    checkPartitionSchema(parts, table)
    val listed = ConvertListing.list(fs, root)
    if (listed.isEmpty) throw ConvertErrors.emptyDirectory(table)
    val partitions = new ConvertPartitions(parts, spark.sessionState.conf.sessionLocalTimeZone, table)
    val values = listed.map(f => partitions.valuesOf(f.relative))

    val footers = ConvertFooters.read(spark, hadoopConf, listed, spark.sessionState.conf.ignoreCorruptFiles, table)
    val kept = listed.indices.filter(i => footers(i).isDefined)
    if (kept.isEmpty) throw ConvertErrors.inferSchema(table)
    var data = new StructType()
    kept.foreach { i =>
      val s = footers(i).get.schema
      data = try ConvertSchema.merge(data, s) catch {
        case e: ConvertSchema.Incompatible => throw ConvertErrors.mergeSchema(table, listed(i).location, s, e)
      }
    }
    val dataSchema = ConvertSchema.asNullable(data).asInstanceOf[StructType]
    val schema = ConvertSchema.withPartitionColumns(dataSchema, parts)

    txn.updateMetadataForNewTable(Metadata(schemaString = schema.json, partitionColumns = parts.fieldNames.toSeq,
      createdTime = Some(System.currentTimeMillis())))
    checkConversionAllowed(txn, table)
    val partitionKeys = parts.fieldNames.map(_.toLowerCase(java.util.Locale.ROOT)).toSet
    val statsData = StructType(schema.fields.filterNot(f => partitionKeys.contains(f.name.toLowerCase(java.util.Locale.ROOT))))
    val spec = StatsSpec.forTable(statsData, statsData, txn.metadata.configuration, table)
    val adds = kept.map { i =>
      val f = listed(i)
      AddFile(path = PathCodec.encodePath(f.relative), partitionValues = values(i), size = f.size,
        modificationTime = f.modificationTime, dataChange = true,
        stats = if (collectStats) Some(FooterStats.statsJson(footers(i).get, spec)) else None)
    }
    val op = Operation.convert(adds.size.toLong, parts.fieldNames.toSeq, collectStats)
    val version = txn.commit(adds, op)
    ConvertResult(Some(version), adds.size.toLong)
  }

  private def checkPartitionSchema(parts: StructType, table: String): Unit = {
    val seen = scala.collection.mutable.Set.empty[String]
    parts.fields.foreach { f =>
      if (!seen.add(f.name.toLowerCase(java.util.Locale.ROOT))) throw ConvertErrors.duplicatePartitionColumn(table, f.name)
      if (!WriteIntoDeltalog.isPartitionType(f.dataType)) throw ConvertErrors.partitionType(table, f.name, f.dataType.simpleString)
    }
  }

  /** delta-spark's refusals of a new table's settings CONVERT cannot honour. */
  private def checkConversionAllowed(txn: OptimisticTransaction, table: String): Unit = {
    val mode = txn.metadata.configuration.getOrElse("delta.columnMapping.mode", "none")
    if (!mode.equalsIgnoreCase("none")) throw ConvertErrors.columnMapping(table, mode)
    if (!collectStats && io.deltalog.txn.RowTracking.isSupported(txn.protocol)) throw ConvertErrors.rowTrackingWithoutStats(table)
  }
}

/** CONVERT's refusals, with delta-spark 4.4's error classes (and the table, file and column named). */
private[commands] object ConvertErrors {
  private def err(cls: String, table: String, msg: String) = new InvalidWriteException(cls, table, msg)

  def notFound(table: String): InvalidWriteException = err("DELTA_PATH_DOES_NOT_EXIST", table,
    s"$table doesn't exist: CONVERT TO DELTALOG needs an existing directory of Parquet files.")

  def notADirectory(table: String): InvalidWriteException = err("DELTA_EMPTY_DIRECTORY", table,
    s"$table is a file, not a directory: CONVERT TO DELTALOG converts a directory of Parquet files; name the directory.")

  def emptyDirectory(table: String): InvalidWriteException = err("DELTA_EMPTY_DIRECTORY", table,
    s"No file found in the directory: $table (hidden files, whose names start with '_' or '.', are not converted). " +
      "Nothing was written.")

  def inferSchema(table: String): InvalidWriteException = err("DELTA_FAILED_INFER_SCHEMA", table,
    s"Failed to infer schema from the given list of files: no file under $table has a readable Parquet footer " +
      "(spark.sql.files.ignoreCorruptFiles=true left them all out). Nothing was written.")

  def footer(table: String, file: String, detail: String): InvalidWriteException = err("DELTA_FAILED_READ_FILE_FOOTER",
    table, s"Could not read footer for file: $file ($detail). CONVERT TO DELTALOG converts Parquet files only: move " +
      s"other files out of $table (or prefix their names with '_' or '.'), or set spark.sql.files.ignoreCorruptFiles=true " +
      "to leave unreadable files out of the table. Nothing was written.")

  def mergeSchema(table: String, file: String, schema: StructType, e: ConvertSchema.Incompatible): InvalidWriteException =
    err("DELTA_FAILED_MERGE_SCHEMA_FILE", table,
      s"Failed to merge schema of file $file: column ${e.column}: ${e.detail}. The file's schema: ${schema.toDDL}. " +
        s"The files of $table must have compatible schemas; nothing was written.")

  def partitionCount(table: String, file: String, expected: Seq[String], parsed: Seq[String]): InvalidWriteException =
    err("DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME", table,
      s"Expecting ${expected.size} partition column(s): ${cols(expected)}, but found ${parsed.size} partition " +
        s"column(s): ${cols(parsed)} from parsing the file name: $file (table $table). Give PARTITIONED BY the " +
        "columns of the directories (col=value/...), in order; nothing was written.")

  def partitionColumn(table: String, file: String, expected: String, parsed: String): InvalidWriteException =
    err("DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME", table,
      s"Expecting partition column `$expected`, but found partition column `$parsed` from parsing the file name: " +
        s"$file (table $table). Nothing was written.")

  def partitionValue(table: String, file: String, column: String, value: String, dataType: String): InvalidWriteException =
    err("DELTA_FAILED_CAST_PARTITION_VALUE", table,
      s"Failed to cast partition value `$value` to $dataType (column `$column`, file $file, table $table). Give " +
        "PARTITIONED BY a type every directory's value has; nothing was written.")

  def emptyPartitionName(table: String, dir: String, file: String): InvalidWriteException =
    err("DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME", table,
      s"Empty partition column name or value in '$dir' (file $file, table $table). Nothing was written.")

  def duplicatePartitionColumn(table: String, column: String): InvalidWriteException =
    err("DELTA_DUPLICATE_COLUMNS_FOUND", table, s"Found duplicate column(s) in the partition schema: `$column` " +
      s"(table $table).")

  def partitionType(table: String, column: String, dataType: String): InvalidWriteException =
    err("DELTA_INVALID_PARTITION_COLUMN_TYPE", table,
      s"Table $table: column $column of type $dataType cannot be a partition column; partition by columns of primitive types.")

  def columnMapping(table: String, mode: String): InvalidWriteException =
    err("DELTA_CONVERSION_UNSUPPORTED_COLUMN_MAPPING", table,
      s"The configuration 'delta.columnMapping.mode' cannot be set to `$mode` when using CONVERT TO DELTALOG " +
        s"(table $table): convert first, then enable column mapping with ALTER TABLE.")

  def rowTrackingWithoutStats(table: String): InvalidWriteException =
    err("DELTA_CONVERT_TO_DELTA_ROW_TRACKING_WITHOUT_STATS", table,
      s"Cannot enable row tracking without collecting statistics (table $table): run CONVERT TO DELTALOG without " +
        "NO STATISTICS, or do not enable row tracking by default.")

  def missingProvider(path: String): InvalidWriteException = err("DELTA_MISSING_PROVIDER_FOR_CONVERT", path,
    s"CONVERT TO DELTALOG only supports parquet tables. Please rewrite your target as parquet.`$path` if it's a " +
      "parquet directory.")

  def nonParquet(target: String, provider: String): InvalidWriteException = err("DELTA_CONVERT_NON_PARQUET_TABLE",
    target, s"CONVERT TO DELTALOG only supports parquet tables, but you are trying to convert a $provider source: $target")

  private def cols(c: Seq[String]): String = c.map(x => s"`$x`").mkString("[", ", ", "]")
}
