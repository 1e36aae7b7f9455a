package io.deltalog.commands

import java.util.Locale

import io.deltalog.exceptions.DeltalogException
import io.deltalog.txn.TableProperties

/**
 * The writer options of `df.write.format("deltalog")` (names as delta-spark's `DeltaOptions`).
 * Keys are matched case-insensitively, as Spark's `CaseInsensitiveMap` does.
 *
 * @param sessionConf the session configuration, for the options that also have a session default
 *                    (`partitionOverwriteMode`, `userMetadata`, `mergeSchema`)
 */
final class WriteOptions(parameters: Map[String, String], sessionConf: String => Option[String] = _ => None) {
  import WriteOptions._

  private val lower: Map[String, String] = parameters.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }

  def get(key: String): Option[String] = lower.get(key.toLowerCase(Locale.ROOT))

  def path: Option[String] = get("path")

  private def bool(key: String, default: Boolean): Boolean = get(key) match {
    case None => default
    case Some(v) => v.trim.toLowerCase(Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => throw new InvalidWriteOptionException(key, v, "'true' or 'false'")
    }
  }

  /** `mergeSchema` (or session `spark.databricks.delta.schema.autoMerge.enabled`). */
  def mergeSchema: Boolean =
    bool(MergeSchema, sessionConf(AutoMergeConf).exists(_.trim.equalsIgnoreCase("true")))

  def overwriteSchema: Boolean = bool(OverwriteSchema, default = false)

  def replaceWhere: Option[String] = get(ReplaceWhere).map(_.trim).filter(_.nonEmpty)

  /** `dynamic` when the option (or the session's `spark.sql.sources.partitionOverwriteMode`) says so. */
  def dynamicPartitionOverwrite: Boolean = {
    val (key, raw) = get(PartitionOverwriteMode).map(PartitionOverwriteMode -> _)
      .orElse(sessionConf(SessionPartitionOverwriteMode).map(SessionPartitionOverwriteMode -> _))
      .getOrElse(PartitionOverwriteMode -> "static")
    raw.trim.toLowerCase(Locale.ROOT) match {
      case "dynamic" => true
      case "static" => false
      case _ => throw new InvalidWriteOptionException(key, raw, "'static' or 'dynamic'")
    }
  }

  /** True when `partitionOverwriteMode=dynamic` was given as a writer option (not from the session). */
  def dynamicPartitionOverwriteFromOption: Boolean =
    get(PartitionOverwriteMode).exists(_.trim.equalsIgnoreCase("dynamic"))

  def userMetadata: Option[String] = get(UserMetadata).orElse(sessionConf(UserMetadataConf))

  def dataChange: Boolean = bool(DataChange, default = true)

  def maxRecordsPerFile: Option[Long] = get(MaxRecordsPerFile).map { v =>
    v.trim.toLongOption.getOrElse(throw new InvalidWriteOptionException(MaxRecordsPerFile, v, "a whole number"))
  }

  /** (`txnAppId`, `txnVersion`) when both are given; an error when only one is. */
  def idempotentTxn: Option[(String, Long)] = (get(TxnAppId), get(TxnVersion)) match {
    case (None, None) => None
    case (Some(app), Some(v)) =>
      val version = v.trim.toLongOption.filter(_ >= 0)
        .getOrElse(throw new InvalidWriteOptionException(TxnVersion, v, "a non-negative whole number"))
      if (app.trim.isEmpty) throw new InvalidWriteOptionException(TxnAppId, app, "a non-empty application id")
      Some(app -> version)
    case (a, _) =>
      val (given, missing) = if (a.isDefined) (TxnAppId, TxnVersion) else (TxnVersion, TxnAppId)
      throw new DeltalogException("DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS",
        s"Writer option '$given' was given without '$missing': idempotent writes need both txnAppId and txnVersion.")
  }

  /**
   * Writer options `delta.*`: table properties of a table created by this write. Spark hands
   * option keys to a V1 source lower-cased, so known keys get their canonical spelling back
   * (`delta.appendonly` → `delta.appendOnly`, `delta.feature.deletionvectors` →
   * `delta.feature.deletionVectors`); unknown `delta.*` keys are kept as given.
   */
  def tableProperties: Map[String, String] =
    parameters.collect { case (k, v) if k.toLowerCase(Locale.ROOT).startsWith("delta.") => canonicalKey(k) -> v }

  /** Parses every typed option once, so a bad value fails before anything is written. */
  def validate(): Unit = {
    mergeSchema; overwriteSchema; dynamicPartitionOverwrite; dataChange; maxRecordsPerFile; idempotentTxn
    outputTimestampType
    ()
  }

  /** Hadoop file-system options (`fs.*`) given as writer options. */
  def fsOptions: Map[String, String] = parameters.filter { case (k, _) => k.startsWith("fs.") }

  /**
   * `spark.sql.parquet.outputTimestampType` given as a writer option, upper-cased: how this write
   * stores timestamps in Parquet (the default is [[DataFileWriter]]'s, INT64 `TIMESTAMP_MICROS`).
   */
  def outputTimestampType: Option[String] = get(OutputTimestampType).map { v =>
    val t = v.trim.toUpperCase(Locale.ROOT)
    if (OutputTimestampTypes.contains(t)) t
    else throw new InvalidWriteOptionException(OutputTimestampType, v, "INT96, TIMESTAMP_MICROS or TIMESTAMP_MILLIS")
  }

  /** Options passed to the Parquet writer (compression, maxRecordsPerFile, outputTimestampType, ...). */
  def parquetWriterOptions: Map[String, String] = {
    val keep = Set("compression", "maxrecordsperfile", "parquet.compression")
    parameters.filter { case (k, _) => keep.contains(k.toLowerCase(Locale.ROOT)) } ++
      outputTimestampType.map(OutputTimestampType -> _)
  }
}

object WriteOptions {
  /** Table property keys in their canonical spelling ([[io.deltalog.txn.TableProperties]]). */
  def KnownTableProperties: Seq[String] = TableProperties.knownKeys

  /** A known property's or feature's canonical spelling, else `key` as given. */
  def canonicalKey(key: String): String = TableProperties.canonicalKey(key)

  val MergeSchema = "mergeSchema"
  val OverwriteSchema = "overwriteSchema"
  val ReplaceWhere = "replaceWhere"
  val PartitionOverwriteMode = "partitionOverwriteMode"
  val UserMetadata = "userMetadata"
  val DataChange = "dataChange"
  val MaxRecordsPerFile = "maxRecordsPerFile"
  val TxnAppId = "txnAppId"
  val TxnVersion = "txnVersion"
  /** The session conf's key, also accepted as a writer option. */
  val OutputTimestampType = "spark.sql.parquet.outputTimestampType"
  val OutputTimestampTypes: Seq[String] = Seq("INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS")

  val AutoMergeConf = "spark.databricks.delta.schema.autoMerge.enabled"
  val UserMetadataConf = "spark.databricks.delta.commitInfo.userMetadata"
  val SessionPartitionOverwriteMode = "spark.sql.sources.partitionOverwriteMode"
}
