package io.deltalog.exceptions

/**
 * Base of every error a user can cause. `errorClass` is a stable, language-neutral
 * identifier (the same string is raised by the Python package for the same situation),
 * used by the shared test vectors under tests/vectors/.
 */
class DeltalogException(val errorClass: String, message: String, cause: Throwable = null)
  extends RuntimeException(s"[$errorClass] $message", cause) {
  /** One-message constructor (py4j, tests; delta-spark's exceptions have one too): `DELTALOG_ERROR`. */
  def this(message: String) = this(DeltalogException.GenericErrorClass, message)
}

/**
 * Every deltalog exception class has a one-`String` constructor, `new X(message)`, as delta-spark's
 * exceptions do: the message is used as given and the error class is the class's own (fixed-class
 * exceptions) or its usual / a generic one ([[GenericErrorClass]]) when the class takes it as a
 * parameter. Fields the message is normally rendered from are `null` / `-1` / empty then. Python's
 * translation of JVM errors is tested through these constructors (tests/python/test_typed_errors.py).
 */
object DeltalogException {
  /** Error class of the one-message constructors of classes whose error class is a parameter. */
  val GenericErrorClass: String = "DELTALOG_ERROR"

  /** `verbatim` when given (the one-message constructors), else the message rendered from fields. */
  private[deltalog] def messageOr(verbatim: String, rendered: => String): String =
    if (verbatim != null) verbatim else rendered
}

import DeltalogException.{GenericErrorClass, messageOr}

/** A line of a log file could not be understood: names the file, the line and the field. */
class ActionParseException private (
    val file: String,
    val lineNumber: Int,
    val field: String,
    val reason: String,
    cause: Throwable,
    verbatim: String)
  extends DeltalogException(
    "DELTA_MALFORMED_LOG_LINE",
    messageOr(verbatim,
      s"${Option(file).getOrElse("<memory>")} line $lineNumber: field '$field': $reason. " +
        "The log file is corrupt or was written by a buggy writer; restore it from a backup or " +
        "report it to the writer's maintainers."),
    cause) {
  def this(file: String, lineNumber: Int, field: String, reason: String, cause: Throwable) =
    this(file, lineNumber, field, reason, cause, null)
  def this(file: String, lineNumber: Int, field: String, reason: String) =
    this(file, lineNumber, field, reason, null, null)
  def this(message: String) = this(null, -1, null, null, null, message)
}

/** A protocol version pair that no Delta client can represent (e.g. reader 4, or (3,5)). */
class InvalidProtocolVersionException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this("DELTA_INVALID_PROTOCOL_VERSION", message)
}

/** Rules about table features were broken (unknown feature, bad status, drop refused, ...). */
class TableFeatureException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this(GenericErrorClass, message)
}

/** A table property has a value of the wrong type or out of range. */
class InvalidTablePropertyException(errorClass: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this(GenericErrorClass, message)
}

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
  /** A read refusal (`DELTA_UNSUPPORTED_FEATURES_FOR_READ`) with no table or feature names. */
  def this(message: String) = this(null, "read", Seq.empty, message)

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
  extends AssertionError(message) {
  def this(message: String) = this("DELTA_ASSERTION_FAILED", message)
}

/** The path holds no Delta table (no `_delta_log`, or no commit / checkpoint in it). */
class TableNotFoundException private (val table: String, detail: String, verbatim: String)
  extends DeltalogException("DELTA_TABLE_NOT_FOUND", messageOr(verbatim,
    s"$table is not a Delta table: $detail. Check the path, or create the table first.")) {
  def this(table: String, detail: String) = this(table, detail, null)
  def this(message: String) = this(null, null, message)
}

/** Commits between the checkpoint and the target version are missing. */
class VersionNotContiguousException private (val table: String, val missingVersions: Seq[Long], verbatim: String)
  extends DeltalogException("DELTA_VERSIONS_NOT_CONTIGUOUS", messageOr(verbatim,
    s"Table $table: the log is missing commit file(s) for version(s) " +
      s"${missingVersions.take(20).mkString(", ")}${if (missingVersions.size > 20) ", ..." else ""}. " +
      "The log is damaged (files deleted by hand or a failed copy); restore them from a backup.")) {
  def this(table: String, missingVersions: Seq[Long]) = this(table, missingVersions, null)
  def this(message: String) = this(null, Seq.empty, message)
}

/** A requested version does not exist (cleaned up, or not written yet). */
class VersionNotFoundException private (val table: String, val requested: Long, val earliest: Long,
    val latest: Long, verbatim: String)
  extends DeltalogException("DELTA_VERSION_NOT_FOUND", messageOr(verbatim,
    s"Table $table has no version $requested: available versions are $earliest to $latest.")) {
  def this(table: String, requested: Long, earliest: Long, latest: Long) = this(table, requested, earliest, latest, null)
  def this(message: String) = this(null, -1L, -1L, -1L, message)
}

/** A requested timestamp is before the first or after the last commit. */
class TimestampOutOfRangeException private (val table: String, val requestedMs: Long, val earliestMs: Long,
    val latestMs: Long, verbatim: String)
  extends DeltalogException("DELTA_TIMESTAMP_OUT_OF_RANGE", messageOr(verbatim,
    s"Table $table has no version at timestamp ${java.time.Instant.ofEpochMilli(requestedMs)}: commits " +
      s"span ${java.time.Instant.ofEpochMilli(earliestMs)} to ${java.time.Instant.ofEpochMilli(latestMs)}.")) {
  def this(table: String, requestedMs: Long, earliestMs: Long, latestMs: Long) =
    this(table, requestedMs, earliestMs, latestMs, null)
  def this(message: String) = this(null, -1L, -1L, -1L, message)
}

/** Replay finished without a protocol or a metadata action. */
class StateRecoverException private (val table: String, val version: Long, detail: String, verbatim: String)
  extends DeltalogException("DELTA_STATE_RECOVER_ERROR", messageOr(verbatim,
    s"Table $table at version $version cannot be reconstructed: $detail.")) {
  def this(table: String, version: Long, detail: String) = this(table, version, detail, null)
  def this(message: String) = this(null, -1L, null, message)
}

/** A log file exists but cannot be read (truncated Parquet, bad UTF-8, missing sidecar, ...). */
class CorruptLogFileException private (val file: String, detail: String, cause: Throwable, verbatim: String)
  extends DeltalogException("DELTA_CORRUPT_LOG_FILE", messageOr(verbatim,
    s"Log file $file is corrupt: $detail. Restore it from a backup or remove the damaged checkpoint."), cause) {
  def this(file: String, detail: String, cause: Throwable) = this(file, detail, cause, null)
  def this(file: String, detail: String) = this(file, detail, null, null)
  def this(message: String) = this(null, null, null, message)
}
