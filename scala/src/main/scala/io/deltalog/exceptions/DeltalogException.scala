package io.deltalog.exceptions

/**
 * Base of every error a user can cause. `errorClass` is a stable, language-neutral
 * identifier (the same string is raised by the Python package for the same situation),
 * used by the shared test vectors under tests/vectors/.
 */
class DeltalogException(val errorClass: String, message: String, cause: Throwable = null)
  extends RuntimeException(s"[$errorClass] $message", cause)

/** A line of a log file could not be understood: names the file, the line and the field. */
class ActionParseException(
    val file: String,
    val lineNumber: Int,
    val field: String,
    val reason: String,
    cause: Throwable = null)
  extends DeltalogException(
    "DELTA_MALFORMED_LOG_LINE",
    s"${Option(file).getOrElse("<memory>")} line $lineNumber: field '$field': $reason. " +
      "The log file is corrupt or was written by a buggy writer; restore it from a backup or " +
      "report it to the writer's maintainers.",
    cause)

/** A protocol version pair that no Delta client can represent (e.g. reader 4, or (3,5)). */
class InvalidProtocolVersionException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message)

/** Rules about table features were broken (unknown feature, bad status, drop refused, ...). */
class TableFeatureException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message)

/** A table property has a value of the wrong type or out of range. */
class InvalidTablePropertyException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message)

/** The new protocol would drop support for a feature the table already supports. */
class ProtocolDowngradeException(message: String)
  extends DeltalogException("DELTA_INVALID_PROTOCOL_DOWNGRADE", message)

/** The table needs reader or writer features this client does not implement. */
class UnsupportedTableFeatureException(
    val table: String,
    val access: String,            // "read" or "write"
    val unsupportedFeatures: Seq[String],
    message: String)
  extends DeltalogException(
    if (access == "read") "DELTA_UNSUPPORTED_FEATURES_FOR_READ"
    else "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE",
    message) {
  /** For py4j callers. */
  def unsupportedFeaturesJava: java.util.List[String] = {
    val l = new java.util.ArrayList[String]()
    unsupportedFeatures.foreach(l.add)
    l
  }
}

/**
 * The seed's assertions ("Should not have the protocol version (delta.minReaderVersion) as part
 * of table properties", ...). Extends AssertionError like delta-spark, but carries an errorClass.
 */
class DeltalogAssertionError(val errorClass: String, message: String)
  extends AssertionError(message)

/** The path holds no Delta table (no `_delta_log`, or no commit / checkpoint in it). */
class TableNotFoundException(val table: String, detail: String)
  extends DeltalogException("DELTA_TABLE_NOT_FOUND",
    s"$table is not a Delta table: $detail. Check the path, or create the table first.")

/** Commits between the checkpoint and the target version are missing. */
class VersionNotContiguousException(val table: String, val missingVersions: Seq[Long])
  extends DeltalogException("DELTA_VERSIONS_NOT_CONTIGUOUS",
    s"Table $table: the log is missing commit file(s) for version(s) " +
      s"${missingVersions.take(20).mkString(", ")}${if (missingVersions.size > 20) ", ..." else ""}. " +
      "The log is damaged (files deleted by hand or a failed copy); restore them from a backup.")

/** A requested version does not exist (cleaned up, or not written yet). */
class VersionNotFoundException(val table: String, val requested: Long, val earliest: Long, val latest: Long)
  extends DeltalogException("DELTA_VERSION_NOT_FOUND",
    s"Table $table has no version $requested: available versions are $earliest to $latest.")

/** A requested timestamp is before the first or after the last commit. */
class TimestampOutOfRangeException(val table: String, val requestedMs: Long, val earliestMs: Long, val latestMs: Long)
  extends DeltalogException("DELTA_TIMESTAMP_OUT_OF_RANGE",
    s"Table $table has no version at timestamp ${java.time.Instant.ofEpochMilli(requestedMs)}: commits " +
      s"span ${java.time.Instant.ofEpochMilli(earliestMs)} to ${java.time.Instant.ofEpochMilli(latestMs)}.")

/** Replay finished without a protocol or a metadata action. */
class StateRecoverException(val table: String, val version: Long, detail: String)
  extends DeltalogException("DELTA_STATE_RECOVER_ERROR",
    s"Table $table at version $version cannot be reconstructed: $detail.")

/** A log file exists but cannot be read (truncated Parquet, bad UTF-8, missing sidecar, ...). */
class CorruptLogFileException(val file: String, detail: String, cause: Throwable = null)
  extends DeltalogException("DELTA_CORRUPT_LOG_FILE",
    s"Log file $file is corrupt: $detail. Restore it from a backup or remove the damaged checkpoint.", cause)
