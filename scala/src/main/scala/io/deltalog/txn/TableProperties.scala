package io.deltalog.txn

import java.util.Locale

import io.deltalog.exceptions.InvalidTablePropertyException
import io.deltalog.log.IntervalProperty
import io.deltalog.protocol.{Protocol, TableFeature}

/**
 * The `delta.*` table properties deltalog knows (delta-spark's `DeltaConfigs`, plus the few
 * Databricks properties other engines write), each with its canonical spelling and the values it
 * accepts.
 *
 * What a transaction sets is checked here ([[OptimisticTransaction.updateMetadata]]): only the
 * properties that are new or changed, so a table another engine wrote with an odd value still
 * loads and takes appends. Rules, as delta-spark's `DeltaConfigs.validateConfigurations`:
 *
 *  - a known property must have a valid value (`DELTA_INVALID_TABLE_PROPERTY_VALUE`,
 *    `DELTA_INVALID_ISOLATION_LEVEL` for `delta.isolationLevel`);
 *  - an unknown `delta.*` name is refused (`DELTA_UNKNOWN_CONFIGURATION`) unless
 *    [[AllowArbitraryPropertiesKey]] is true; `delta.constraints.*` (CHECK constraints) and
 *    `delta.universalFormat.config.*` are always allowed;
 *  - the protocol properties (`delta.minReaderVersion`, `delta.minWriterVersion`,
 *    `delta.ignoreProtocolDefaults`, `delta.feature.*`) are left to the protocol rules;
 *  - other names (user properties) are always allowed.
 *
 * Values are parsed as delta-spark parses them (booleans `true`/`false` in any case, integers
 * without spaces), so a value deltalog accepts is one delta-spark can read.
 */
object TableProperties {

  /**
   * Session setting (Spark SQL conf, Hadoop conf or JVM system property) that lets unknown
   * `delta.*` names through, as in delta-spark.
   */
  val AllowArbitraryPropertiesKey = "spark.databricks.delta.allowArbitraryProperties.enabled"

  /** A known property: canonical `key`, the values it accepts (for messages) and its check. */
  final case class Property(key: String, accepted: String, isValid: String => Boolean,
      errorClass: String = InvalidValue)

  val InvalidValue = "DELTA_INVALID_TABLE_PROPERTY_VALUE"
  val UnknownConfiguration = "DELTA_UNKNOWN_CONFIGURATION"

  // ------------------------------------------------------------------------------ value checks

  private val Bool = "'true' or 'false'"
  private val IntervalText = "a calendar interval such as 'interval 2 weeks' or '7 days' (weeks, days, hours, " +
    "minutes, seconds, milliseconds, microseconds; not negative). Months and years are not accepted; " +
    "use '365 days' for a year"

  private def isBool(v: String): Boolean = v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")

  private def isInt(p: Int => Boolean)(v: String): Boolean = v.toIntOption.exists(p)
  private def isLong(p: Long => Boolean)(v: String): Boolean = v.toLongOption.exists(p)

  /** A non-negative interval that deltalog's readers can parse (their units have no months or years). */
  private def isInterval(v: String): Boolean = IntervalProperty.parseMillis(v).exists(_ >= 0)

  private def oneOf(values: String*)(v: String): Boolean = values.contains(v)
  private def oneOfIgnoreCase(values: String*)(v: String): Boolean = values.exists(_.equalsIgnoreCase(v))

  private val UniversalFormats = Seq("iceberg", "hudi")
  private def isFormatList(v: String): Boolean = {
    val parts = if (v.isEmpty) Seq.empty[String] else v.split(",", -1).toSeq
    parts.distinct.size == parts.size && parts.forall(UniversalFormats.contains)
  }

  private val ByteSize = """(?i)([0-9]+)\s*(b|k|kb|m|mb|g|gb|t|tb)?""".r
  private def isByteSize(v: String): Boolean = v.trim match {
    case ByteSize(n, _) => n.toLongOption.exists(_ > 0)
    case _ => false
  }

  private def any(v: String): Boolean = v != null

  private def bool(key: String) = Property(key, Bool, isBool)
  private def interval(key: String) = Property(key, IntervalText, isInterval)

  // ------------------------------------------------------------------------------ the properties

  /** Every known property (protocol properties included, for their canonical spelling). */
  val all: Seq[Property] = Seq(
    // booleans
    bool("delta.appendOnly"), bool("delta.autoOptimize"), bool("delta.autoOptimize.autoCompact"),
    bool("delta.autoOptimize.optimizeWrite"), bool("delta.castIcebergTimeType"),
    bool("delta.checkpoint.writeStatsAsJson"), bool("delta.checkpoint.writeStatsAsStruct"),
    bool("delta.compatibility.symlinkFormatManifest.enabled"), bool("delta.enableChangeDataCapture"),
    bool("delta.enableChangeDataFeed"), bool("delta.enableDeletionVectors"), bool("delta.enableExpiredLogCleanup"),
    bool("delta.enableFullRetentionRollback"), bool("delta.enableIcebergCompatV1"),
    bool("delta.enableIcebergCompatV2"), bool("delta.enableIcebergCompatV3"),
    bool("delta.enableIcebergWriterCompatV1"), bool("delta.enableIcebergWriterCompatV3"),
    bool("delta.enableInCommitTimestamps"), bool("delta.enableMaterializePartitionColumnsFeature"),
    bool("delta.enableRowTracking"), bool("delta.enableTypeWidening"), bool("delta.enableVariantShredding"),
    bool("delta.ignoreIcebergBucketPartition"), bool("delta.ignoreProtocolDefaults"),
    bool("delta.randomizeFilePrefixes"), bool("delta.rowTrackingSuspended"), bool("delta.tuneFileSizesForRewrites"),
    bool("delta.universalFormat.iceberg.atomicConversion.supported"), bool("delta.writePartitionColumnsToParquet"),
    // numbers
    Property("delta.checkpointInterval", "a positive integer (e.g. '10')", isInt(_ > 0)),
    Property("delta.randomPrefixLength", "an integer greater than 0", isInt(_ > 0)),
    Property("delta.dataSkippingNumIndexedCols", "an integer >= -1 (-1: every column)", isInt(_ >= -1)),
    Property("delta.dataSkippingStringPrefixLength", "an integer >= 0", isInt(_ >= 0)),
    Property("delta.requireCheckpointProtectionBeforeVersion", "a version >= 0", isLong(_ >= 0)),
    Property("delta.columnMapping.maxColumnId", "a column id >= 0", isLong(_ >= 0)),
    Property("delta.inCommitTimestampEnablementVersion", "a version >= 0", isLong(_ >= 0)),
    Property("delta.inCommitTimestampEnablementTimestamp", "a timestamp in milliseconds", isLong(_ => true)),
    Property("delta.targetFileSize", "a positive size in bytes (e.g. '134217728' or '128mb')", isByteSize),
    Property("delta.minReaderVersion", "a protocol reader version", any),
    Property("delta.minWriterVersion", "a protocol writer version", any),
    // durations
    interval("delta.logRetentionDuration"), interval("delta.deletedFileRetentionDuration"),
    interval("delta.checkpointRetentionDuration"), interval("delta.sampleRetentionDuration"),
    interval("delta.setTransactionRetentionDuration"), interval("delta.dropFeatureTruncateHistory.retentionDuration"),
    // enumerations
    Property("delta.columnMapping.mode", "'none', 'id' or 'name'", oneOfIgnoreCase("none", "id", "name")),
    Property("delta.checkpointPolicy", "'classic' or 'v2'", oneOf("classic", "v2")),
    Property("delta.isolationLevel", "'Serializable' or 'WriteSerializable'",
      oneOfIgnoreCase("Serializable", "WriteSerializable"), "DELTA_INVALID_ISOLATION_LEVEL"),
    Property("delta.universalFormat.enabledFormats",
      "a comma-separated list of distinct formats from: " + UniversalFormats.mkString(", "), isFormatList),
    Property("delta.parquet.compression.codec",
      "one of: uncompressed, snappy, gzip, lzo, brotli, lz4, lz4_raw, zstd",
      oneOfIgnoreCase("uncompressed", "none", "snappy", "gzip", "lzo", "brotli", "lz4", "lz4_raw", "zstd")),
    Property("delta.parquet.format.version", "'1.0.0' or '2.12.0'", oneOf("1.0.0", "2.12.0")),
    // free text (checked where used)
    Property("delta.dataSkippingStatsColumns", "a comma-separated list of column names", any),
    Property("delta.coordinatedCommits.commitCoordinator-preview", "a commit coordinator name", any),
    Property("delta.coordinatedCommits.commitCoordinatorConf-preview", "a JSON object", any),
    Property("delta.coordinatedCommits.tableConf-preview", "a JSON object", any),
    Property("delta.redirectReaderWriter-preview", "a JSON redirect specification", any),
    Property("delta.redirectWriterOnly-preview", "a JSON redirect specification", any),
    // deltalog's own (read side): whether float/double max stats are trusted (spark.read.FloatBoundsTrust)
    Property("deltalog.skipping.trustFloatMaxStats", "'auto', 'true' or 'false'", oneOfIgnoreCase("auto", "true", "false")),
    // written by writers for row tracking
    Property("delta.rowTracking.materializedRowIdColumnName", "a column name", v => v != null && v.nonEmpty),
    Property("delta.rowTracking.materializedRowCommitVersionColumnName", "a column name", v => v != null && v.nonEmpty))

  private val byLowerKey: Map[String, Property] = all.map(p => p.key.toLowerCase(Locale.ROOT) -> p).toMap

  /** Prefixes of `delta.*` names that are always allowed (lower case). */
  private val AllowedPrefixes = Seq("delta.constraints.", "delta.universalformat.config.")

  /** The known property `key` names (any case), if any. */
  def get(key: String): Option[Property] = Option(key).flatMap(k => byLowerKey.get(k.toLowerCase(Locale.ROOT)))

  /**
   * `key` in its canonical spelling: a known property's (`delta.appendonly` → `delta.appendOnly`),
   * a known feature's (`delta.feature.deletionvectors` → `delta.feature.deletionVectors`), else as given.
   */
  def canonicalKey(key: String): String = get(key).map(_.key).getOrElse {
    val prefix = Protocol.FEATURE_PROP_PREFIX
    if (key != null && key.regionMatches(true, 0, prefix, 0, prefix.length)) {
      TableFeature.byName(key.substring(prefix.length)).map(f => prefix + f.name).getOrElse(key)
    } else key
  }

  /** Known properties in canonical spelling (for listings and messages). */
  def knownKeys: Seq[String] = all.map(_.key).sorted

  /** True for a `delta.*` name this module knows or always allows (protocol properties included). */
  def isKnown(key: String): Boolean = {
    val lower = Option(key).map(_.toLowerCase(Locale.ROOT)).getOrElse("")
    byLowerKey.contains(lower) || lower.startsWith(Protocol.FEATURE_PROP_PREFIX.toLowerCase(Locale.ROOT)) ||
      AllowedPrefixes.exists(lower.startsWith)
  }

  private def isDeltaKey(key: String): Boolean = key != null && key.regionMatches(true, 0, "delta.", 0, 6)

  /** `conf` with the keys of known properties and features in canonical spelling. */
  def canonicalize(conf: Map[String, String]): Map[String, String] =
    if (conf.keys.forall(k => canonicalKey(k) == k)) conf
    else conf.map { case (k, v) => canonicalKey(k) -> v }

  /**
   * Checks each entry of `properties` (see the object comment).
   *
   * @param table the table's path or name for messages (null when unknown)
   * @param allowArbitrary [[AllowArbitraryPropertiesKey]]: unknown `delta.*` names are allowed
   * @param fullConf the whole configuration the table will have (for the retention cross-check)
   * @throws InvalidTablePropertyException for an invalid value or an unknown `delta.*` name
   */
  def validate(properties: Map[String, String], table: String, allowArbitrary: Boolean,
      fullConf: Map[String, String] = Map.empty): Unit = {
    val where = Option(table).map(t => s"Table $t: ").getOrElse("")
    properties.toSeq.sortBy(_._1).foreach { case (key, value) =>
      get(key) match {
        case Some(p) if Protocol.isTableProtocolProperty(p.key) => // the protocol rules check these
        case Some(p) =>
          if (value == null || !p.isValid(value)) {
            throw new InvalidTablePropertyException(p.errorClass,
              s"${where}invalid value ${Option(value).map(v => s"'$v'").getOrElse("null")} for table property " +
                s"${p.key}; it accepts ${p.accepted}.")
          }
        case None if isDeltaKey(key) && !isKnown(key) && !allowArbitrary =>
          throw new InvalidTablePropertyException(UnknownConfiguration,
            s"${where}unknown configuration was specified: $key. Table properties starting with 'delta.' must " +
              "be ones Delta defines (a user property needs another prefix). To disable this check, set " +
              s"$AllowArbitraryPropertiesKey=true in the Spark session configuration.")
        case None =>
      }
    }
    val retentionKeys = Seq(LogRetentionKey, DeletedFileRetentionKey)
    if (retentionKeys.exists(properties.contains)) checkRetentions(fullConf ++ properties, where)
  }

  val LogRetentionKey = "delta.logRetentionDuration"
  val DeletedFileRetentionKey = "delta.deletedFileRetentionDuration"
  private val DefaultLogRetentionMs = 30L * 24 * 3600 * 1000
  private val DefaultDeletedFileRetentionMs = 7L * 24 * 3600 * 1000

  /** delta-spark: the log must be kept at least as long as removed files (time travel to vacuum). */
  private def checkRetentions(conf: Map[String, String], where: String): Unit = {
    val log = conf.get(LogRetentionKey).flatMap(IntervalProperty.parseMillis).getOrElse(DefaultLogRetentionMs)
    val files = conf.get(DeletedFileRetentionKey).flatMap(IntervalProperty.parseMillis)
      .getOrElse(DefaultDeletedFileRetentionMs)
    if (log < files) {
      def shown(k: String, default: String) = s"$k (${conf.getOrElse(k, default)})"
      throw new InvalidTablePropertyException(InvalidValue,
        s"${where}table property ${shown(LogRetentionKey, "interval 30 days")} needs to be greater than or equal " +
          s"to ${shown(DeletedFileRetentionKey, "interval 1 week")}.")
    }
  }

  /** The entries of `after` that are new or have another value than in `before`. */
  def changed(before: Map[String, String], after: Map[String, String]): Map[String, String] =
    after.filter { case (k, v) => !before.get(k).contains(v) }
}
