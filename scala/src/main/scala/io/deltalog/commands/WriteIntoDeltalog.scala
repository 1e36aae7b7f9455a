package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.types.{BinaryType, BooleanType, ByteType, DataType, DateType, DecimalType, DoubleType,
  FloatType, IntegerType, LongType, ShortType, StringType, StructType, TimestampNTZType, TimestampType,
  ArrayType, MapType, NullType}
import org.slf4j.LoggerFactory

import io.deltalog.actions._
import io.deltalog.exceptions.AppendOnlyTableException
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{ClientCapabilities, MetadataView, Protocol}
import io.deltalog.schema.DeltaSchema
import io.deltalog.txn.{OptimisticTransaction, Operation, TableProperties}

/**
 * `df.write.format("deltalog").mode(m).save(path)`: one transaction that writes the data files
 * on the executors ([[DataFileWriter]]) and commits adds (and removes for overwrites) from the
 * driver. Nothing is committed when a task, a rule or a check fails.
 *
 *  - append / overwrite / errorIfExists / ignore (ignore and errorIfExists create a missing table);
 *  - overwrite: every file removed; `replaceWhere` only the rows matching the predicate
 *    ([[ReplaceWhere]]); `partitionOverwriteMode=dynamic` only the partitions written;
 *  - schema: enforcement, `mergeSchema`, `overwriteSchema` ([[WriteSchema]]); column mapping;
 *  - rules: NOT NULL, invariants, CHECK, generated and identity columns ([[WriteRules]]);
 *  - `txnAppId`/`txnVersion`: a version already applied is skipped (returns None);
 *  - a streaming sink's micro-batch (`statement.streamingUpdate`): append or, for complete mode,
 *    overwrite, recorded as `STREAMING UPDATE` ([[io.deltalog.spark.stream.DeltalogSink]]).
 *
 * @return the committed version, or None when nothing was written (ignore, idempotent skip)
 */
final class WriteIntoDeltalog(
    spark: ClassicSession,
    path: String,
    mode: SaveMode,
    options: WriteOptions,
    partitionBy: Seq[String],
    data: DataFrame,
    statement: StatementContext = StatementContext.Default) {
  import WriteIntoDeltalog._

  def run(): Option[Long] = {
    options.validate()
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(options.fsOptions)
    val deltaLog = DeltaLog.uncached(path, hadoopConf)
    val txn = OptimisticTransaction.start(deltaLog)
    val table = deltaLog.tablePath.toString
    val exists = txn.readVersion >= 0
    val version = txn.readVersion
    // The properties of a new table are checked again by the commit; here before any file is written.
    if (!exists) TableProperties.validate(options.tableProperties, table, txn.allowArbitraryProperties)

    if (exists) mode match {
      case SaveMode.ErrorIfExists => throw new InvalidWriteException("DELTA_PATH_EXISTS", table,
        s"Table $table already exists (version $version) and the save mode is ErrorIfExists; use mode " +
          "'append' or 'overwrite', or write to another path.")
      case SaveMode.Ignore =>
        log.info(s"Table $table exists; save mode Ignore: nothing written.")
        return None
      case _ =>
    }
    val txnId = options.idempotentTxn
    txnId.foreach { case (app, v) =>
      val applied = txn.txnVersion(app)
      if (applied >= v) {
        log.info(s"Table $table: txnAppId $app version $v already applied (latest $applied); skipping the write.")
        return None
      }
    }
    if (exists) Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, table)

    val overwrite = mode == SaveMode.Overwrite
    val old = if (exists) Some(txn.metadata) else None
    val oldConf = old.map(_.configuration).getOrElse(Map.empty)
    // refused before any file is written; an overwrite of a table without live files removes nothing (as delta-spark)
    if (overwrite && exists && txn.snapshot.numFiles > 0) {
      assertNotAppendOnly(oldConf, table, "(all files: the write is an overwrite)")
    }
    val replaceWhere = if (overwrite && exists) options.replaceWhere else None
    val dynamic = overwrite && exists && replaceWhere.isEmpty && options.dynamicPartitionOverwrite
    validateOptionCombinations(table, overwrite, exists, replaceWhere)

    // ------------------------------------------------------------ metadata
    val partitionColsRequested = partitionBy.map(c => resolveName(statement.tableSchema.getOrElse(data.schema), c, table))
    val replacingSchema = !exists || (overwrite && (options.overwriteSchema || statement.replaceTable))
    val newMetadata: Option[Metadata] =
      if (replacingSchema) Some(tableMetadata(old, partitionColsRequested, table))
      else {
        val m = old.get
        if (partitionBy.nonEmpty && partitionBy.map(_.toLowerCase(Locale.ROOT)) !=
            m.partitionColumns.map(_.toLowerCase(Locale.ROOT))) {
          throw new InvalidWriteException("DELTA_PARTITION_COLUMNS_MISMATCH", table,
            s"Table $table (version $version) is partitioned by [${m.partitionColumns.mkString(", ")}] but the write " +
              s"asks for [${partitionBy.mkString(", ")}]. Drop partitionBy, or overwrite with overwriteSchema=true " +
              "to change the partitioning.")
        }
        val current = parseSchema(m.schemaString)
        val merged = WriteSchema.mergedSchema(current, data.schema, options.mergeSchema, table, version)
        if (merged == current) None
        else Some(WriteIntoDeltalog.withColumnMapping(m.copy(schemaString = merged.json)))
      }
    val meta = newMetadata.getOrElse(old.get)
    val schema = parseSchema(meta.schemaString)
    val conf = meta.configuration
    // liquid clustering of a created / replaced table, checked before any file is written
    val (clusterDomain, clusteringColumns) =
      if (!replacingSchema) (Nil, Nil)
      else ClusteredTable.forNewMetadata(statement.clusterBy, schema, meta, txn.snapshot, exists,
        statement.replaceTable || !exists, k => spark.conf.getOption(k), table)

    // ------------------------------------------------------------ data
    val prepared = WriteRules.checkAll(WriteRules.complete(data, schema, table), schema, conf, table, replaceWhere)
    val rewrite = replaceWhere.map(p => new ReplaceWhere(spark, txn, schema, meta, p, table))
    val cdfOn = MetadataView.boolValue(CdfKey, conf.get(CdfKey))
    val (toWrite, cdcColumn, rewritten) = rewrite.filter(_.isDataPredicate) match {
      case Some(rw) => rw.combine(prepared, withChangeData = cdfOn && options.dataChange)
      case None => (prepared, None, Nil)
    }
    val generatedIdentity = schema.fields.filter(f => WriteRules.isIdentity(f) &&
      WriteSchema.findColumn(data.schema, f.name).isEmpty).map(_.name).toSeq
    val writer = new DataFileWriter(spark, deltaLog.tablePath.toString, hadoopConf, schema, meta.partitionColumns,
      conf, options.parquetWriterOptions, generatedIdentity, table, cdcColumn)
    val written = writer.write(toWrite)

    // ------------------------------------------------------------ actions
    try {
      val now = System.currentTimeMillis()
      val dataChange = options.dataChange
      val rootPrefix = deltaLog.tablePath.toString.stripSuffix("/") + "/"
      def rel(p: String) = PathCodec.encodePath(if (p.startsWith(rootPrefix)) p.substring(rootPrefix.length) else p)
      def pv(f: WrittenFile) = f.partitionValues - DataFileWriter.CdcFlag
      val adds = written.filterNot(writer.isChangeData).map { f =>
        AddFile(path = rel(f.path), partitionValues = pv(f), size = f.size, modificationTime = f.modificationTime,
          dataChange = dataChange, stats = Some(f.stats))
      }
      val cdcs = written.filter(writer.isChangeData).map { f =>
        AddCDCFile(path = rel(f.path), partitionValues = pv(f), size = f.size)
      }
      val removed: Seq[AddFile] =
        if (!overwrite || !exists) Nil
        else if (rewrite.exists(_.isDataPredicate)) rewritten
        else if (rewrite.isDefined) rewrite.get.candidates
        else if (dynamic && meta.partitionColumns.nonEmpty) {
          DynamicPartitions.filesToRemove(txn, meta, adds.map(_.partitionValues).toSet, writer.physicalNames)
        } else txn.filterFiles()
      val removes = removed.map(_.remove(now, dataChange))

      val withHwm = IdentityHighWaterMarks.update(meta, schema, written, writer.physicalNames)
      val finalMeta = if (withHwm ne meta) Some(withHwm) else newMetadata
      finalMeta.foreach { m =>
        if (!exists) txn.updateMetadataForNewTable(m)
        else txn.updateMetadata(m)
      }

      val setTxn = txnId.map { case (app, v) => SetTransaction(app, v, Some(now)) }
      val numOutputRows = written.filterNot(writer.isChangeData).map(_.numRecords).sum
      val metrics = if (statement.streamingUpdate.isDefined) Map(
        "numAddedFiles" -> adds.size.toString,
        "numRemovedFiles" -> removes.size.toString,
        "numOutputRows" -> numOutputRows.toString,
        "numOutputBytes" -> adds.map(_.size).sum.toString) else Map(
        "numFiles" -> adds.size.toString,
        "numOutputRows" -> numOutputRows.toString,
        "numOutputBytes" -> adds.map(_.size).sum.toString) ++
        (if (overwrite && exists) Map("numRemovedFiles" -> removes.size.toString,
          "numRemovedBytes" -> removed.map(_.size).sum.toString) else Map.empty) ++
        (if (cdcs.nonEmpty) Map("numAddedChangeFiles" -> cdcs.size.toString) else Map.empty)
      val op = WriteIntoDeltalog.withSchemaFlags(
        statement.operation(meta, modeName(mode), replaceWhere, partitionColsRequested, clusteringColumns),
        statement, options.mergeSchema)
        .withMetrics(metrics).copy(userMetadata = options.userMetadata, changesData = dataChange)
      Some(txn.commit(setTxn.toSeq ++ clusterDomain ++ removes ++ adds ++ cdcs, op))
    } catch {
      case NonFatal(e) =>
        if (!txn.committed && !inLog(deltaLog, txn)) writer.deleteFiles(written)
        throw e
    }
  }


  private def validateOptionCombinations(table: String, overwrite: Boolean, exists: Boolean,
      replaceWhere: Option[String]): Unit = {
    if (replaceWhere.isDefined && options.overwriteSchema) {
      throw new InvalidWriteException("DELTA_REPLACE_WHERE_WITH_OVERWRITE_SCHEMA", table,
        s"Table $table: replaceWhere cannot be combined with overwriteSchema=true; write the new schema with a " +
          "plain overwrite first.")
    }
    if (replaceWhere.isDefined && options.dynamicPartitionOverwriteFromOption) {
      throw new InvalidWriteException("DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE", table,
        s"Table $table: replaceWhere cannot be combined with partitionOverwriteMode=dynamic; use one of them.")
    }
    if (overwrite && exists && options.overwriteSchema && options.dynamicPartitionOverwriteFromOption) {
      throw new InvalidWriteException("DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE", table,
        s"Table $table: overwriteSchema=true cannot be combined with partitionOverwriteMode=dynamic.")
    }
  }

  /** Metadata of a new table, or of an existing one whose schema is replaced (overwriteSchema). */
  private def tableMetadata(old: Option[Metadata], partitionCols: Seq[String], table: String): Metadata = {
    val schema = statement.tableSchema.getOrElse(WriteSchema.nullableDeep(data.schema).asInstanceOf[StructType])
    partitionCols.foreach { c =>
      val dt = schema(c).dataType
      if (!isPartitionType(dt)) {
        throw new InvalidWriteException("DELTA_INVALID_PARTITION_COLUMN_TYPE", table,
          s"Table $table: column $c of type ${dt.simpleString} cannot be a partition column; partition by " +
            "columns of primitive types.")
      }
    }
    if (partitionCols.nonEmpty && partitionCols.size == schema.size) {
      throw new InvalidWriteException("DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION", table,
        s"Table $table: every column (${partitionCols.mkString(", ")}) is a partition column; leave at least one " +
          "data column.")
    }
    val dups = schema.fieldNames.groupBy(_.toLowerCase(Locale.ROOT)).collect { case (_, v) if v.length > 1 => v.head }
    if (dups.nonEmpty) {
      throw new InvalidWriteException("DELTA_DUPLICATE_COLUMNS_FOUND", table,
        s"Table $table: the data has duplicate column(s) ${dups.toSeq.sorted.mkString(", ")} (names are " +
          "case-insensitive); rename or drop them.")
    }
    voidColumns(schema).headOption.foreach { c =>
      throw new InvalidWriteException("DELTA_VOID_COLUMN", table,
        s"Table $table: column $c has type void (an untyped NULL); cast it to a concrete type, e.g. " +
          s"lit(null).cast(\"string\").")
    }
    if (schema.isEmpty) {
      throw new InvalidWriteException("DELTA_EMPTY_DATA", table,
        s"Table $table: the data has no columns; a table needs at least one column.")
    }
    val base = old match {
      case Some(m) => m.copy(schemaString = schema.json, partitionColumns = partitionCols,
        configuration = m.configuration ++ statement.tableProperties,
        description = statement.description.orElse(m.description))
      case None => Metadata(schemaString = schema.json, partitionColumns = partitionCols,
        configuration = options.tableProperties ++ statement.tableProperties, description = statement.description,
        createdTime = Some(System.currentTimeMillis()))
    }
    // CLUSTER BY: the clustering feature (the transaction turns the property into protocol support)
    val clustered = if (statement.clusterBy.isEmpty) base else
      base.copy(configuration = base.configuration + (ClusteredTable.FeatureProperty -> "supported"))
    WriteIntoDeltalog.withColumnMapping(clustered)
  }

  private def resolveName(schema: StructType, name: String, table: String): String =
    WriteSchema.findColumn(schema, name).map(_.name).getOrElse(throw new InvalidWriteException(
      "DELTA_PARTITION_COLUMN_NOT_FOUND", table,
      s"Table $table: partition column '$name' is not a column of the data (columns: ${schema.fieldNames.mkString(", ")})."))
}

object WriteIntoDeltalog {
  /** delta-spark's `WRITE` logs `canMergeSchema: true` (a JSON boolean) when the write may merge the schema. */
  def withSchemaFlags(op: Operation, statement: StatementContext, mergeSchema: Boolean): Operation =
    if (!mergeSchema || op.name != "WRITE" || statement.operationName.isDefined || statement.streamingUpdate.isDefined) op
    else op.copy(parameters = op.parameters + ("canMergeSchema" -> "true"),
      jsonValuedParameters = op.jsonValuedParameters + "canMergeSchema")

  /** Ids and physical names for fields that have none, when column mapping is on. */
  def withColumnMapping(m: Metadata): Metadata = {
    if (!ColumnMappingWriter.enabled(m.configuration)) m
    else {
      val (s, maxId) = ColumnMappingWriter.assignIds(parseSchema(m.schemaString), m.configuration)
      m.copy(schemaString = s.json, configuration = m.configuration + (ColumnMappingWriter.MaxIdKey -> maxId.toString))
    }
  }

  /**
   * True when a commit of `txn` is in the log (a failure after its commit file was written, e.g.
   * while reading the new snapshot): its data files must then stay.
   */
  private[commands] def inLog(deltaLog: DeltaLog, txn: OptimisticTransaction): Boolean =
    try {
      val commit = """(\d{20})\.json""".r
      deltaLog.fs.listStatus(deltaLog.logPath).exists { st =>
        st.getPath.getName match {
          case commit(v) if v.toLong > txn.readVersion =>
            val in = deltaLog.fs.open(st.getPath)
            val text = try new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8) finally in.close()
            text.contains(txn.txnId)
          case _ => false
        }
      }
    } catch { case NonFatal(_) => true }

  private val log = LoggerFactory.getLogger(classOf[WriteIntoDeltalog])
  val AppendOnlyKey = "delta.appendOnly"
  val CdfKey = "delta.enableChangeDataFeed"

  def parseSchema(json: String): StructType = DeltaSchema.fromJson(json)

  /** Refuses removing files of a `delta.appendOnly` table (`what`: the files, for the message). */
  def assertNotAppendOnly(conf: Map[String, String], table: String, what: String): Unit =
    if (MetadataView.boolValue(AppendOnlyKey, conf.get(AppendOnlyKey))) throw new AppendOnlyTableException(table, what)

  /** Types a partition column may have (primitive types). */
  def isPartitionType(dt: DataType): Boolean = dt match {
    case _: StringType | ByteType | ShortType | IntegerType | LongType | BooleanType | FloatType | DoubleType => true
    case _: DecimalType | DateType | TimestampType | TimestampNTZType | BinaryType => true
    case _ => false
  }

  /**
   * The write of `DeltalogDataSource.createRelation(sqlContext, mode, parameters, data)`: options
   * from `parameters` (session defaults from the session configuration), `path` required.
   *
   * @return the table path
   */
  def write(session: org.apache.spark.sql.SparkSession, mode: SaveMode, parameters: Map[String, String],
      data: DataFrame): String = {
    val options = new WriteOptions(parameters, k => session.conf.getOption(k))
    val path = options.path.filter(_.nonEmpty).getOrElse(throw new InvalidWriteOptionException(
      "path", "", "the table path: use save(\"/path/to/table\")"))
    new WriteIntoDeltalog(session.asInstanceOf[ClassicSession], path, mode, options,
      partitionColumnsOption(parameters), data).run()
    path
  }

  /** The `partitionBy` columns Spark passes to a V1 source (`__partition_columns`, a JSON array). */
  def partitionColumnsOption(parameters: Map[String, String]): Seq[String] =
    parameters.get("__partition_columns").map { json =>
      val node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json)
      (0 until node.size()).map(i => node.get(i).asText())
    }.getOrElse(Nil)

  /** Paths of the columns of type void (NullType), anywhere in the schema. */
  def voidColumns(dt: DataType, path: String = ""): Seq[String] = dt match {
    case NullType => Seq(if (path.isEmpty) "<value>" else path)
    case s: StructType => s.fields.toSeq.flatMap(f => voidColumns(f.dataType, if (path.isEmpty) f.name else s"$path.${f.name}"))
    case a: ArrayType => voidColumns(a.elementType, s"$path.element")
    case m: MapType => voidColumns(m.keyType, s"$path.key") ++ voidColumns(m.valueType, s"$path.value")
    case _ => Nil
  }

  /** delta-spark's spelling of the save mode in `operationParameters.mode`. */
  def modeName(m: SaveMode): String = m match {
    case SaveMode.Append => "Append"
    case SaveMode.Overwrite => "Overwrite"
    case SaveMode.ErrorIfExists => "ErrorIfExists"
    case SaveMode.Ignore => "Ignore"
  }
}
