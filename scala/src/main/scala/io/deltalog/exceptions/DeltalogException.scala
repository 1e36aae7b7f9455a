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
    message)

/**
 * The seed's assertions ("Should not have the protocol version (delta.minReaderVersion) as part
 * of table properties", ...). Extends AssertionError like delta-spark, but carries an errorClass.
 */
class DeltalogAssertionError(val errorClass: String, message: String)
  extends AssertionError(message)
