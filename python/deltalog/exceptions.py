"""Typed errors raised by deltalog.

Every error carries ``errorClass``: a stable, language-neutral identifier. The JVM engine
(``io.deltalog.exceptions``) raises the same class for the same situation; the shared test
vectors under ``tests/vectors/`` compare these identifiers across the two languages.

Errors raised by the JVM engine (``DeltaTable``, transactions, and ``spark.read`` /
``spark.write`` / ``spark.sql`` on deltalog tables) arrive as these classes too, and are then
*also* instances of a PySpark exception (``pyspark.errors.AnalysisException`` for most, see
``_spark_base``), so both ``except DeltalogError`` and ``except AnalysisException`` catch them;
``deltalog._jvm`` does the translation. This module itself does not import pyspark.
"""
from __future__ import annotations

from typing import Optional, Sequence


class DeltalogError(Exception):
    """Base of every error a user can cause."""

    errorClass: str = "DELTALOG_ERROR"
    #: The ``pyspark.errors`` class an error of this class also derives from when it comes from the
    #: JVM (``deltalog._jvm.translate_jvm_error``).
    _spark_base: str = "AnalysisException"

    def __init__(self, errorClass: str, message: str) -> None:
        self.errorClass = errorClass
        self.message = message
        super().__init__(f"[{errorClass}] {message}")


class ActionParseError(DeltalogError, ValueError):
    """A line of a log file could not be understood (names the file, the line and the field)."""

    def __init__(self, file: Optional[str], lineNumber: int, field: str, reason: str) -> None:
        self.file = file
        self.lineNumber = lineNumber
        self.field = field
        self.reason = reason
        super().__init__(
            "DELTA_MALFORMED_LOG_LINE",
            f"{file or '<memory>'} line {lineNumber}: field '{field}': {reason}. "
            "The log file is corrupt or was written by a buggy writer; restore it from a backup "
            "or report it to the writer's maintainers.",
        )


class InvalidProtocolVersionError(DeltalogError, ValueError):
    """A protocol version pair that no Delta client can represent (e.g. reader 4, or (3,5))."""


class TableFeatureError(DeltalogError, ValueError):
    """Rules about table features were broken (unknown feature, bad status, drop refused...)."""


class DropFeatureError(TableFeatureError):
    """``ALTER TABLE ... DROP FEATURE`` / ``DeltaTable.dropFeatureSupport`` refused the drop: the name
    is not a feature of the table's protocol, the feature cannot be dropped (or not by deltalog), or
    the table still uses it (the message says what to do first). Nothing was dropped."""


class DropFeatureWaitForRetentionError(DropFeatureError):
    """``DROP FEATURE ... TRUNCATE HISTORY`` removed the feature's traces from the latest version, but
    the table's history younger than ``delta.dropFeatureTruncateHistory.retentionDuration`` still uses
    it: run the same command again once that history has expired."""


class InvalidTablePropertyError(DeltalogError, ValueError):
    """A table property has a value of the wrong type or out of range."""


class ProtocolDowngradeError(DeltalogError):
    """The new protocol would drop support for a feature the table already supports."""

    def __init__(self, message: str) -> None:
        super().__init__("DELTA_INVALID_PROTOCOL_DOWNGRADE", message)


class UnsupportedTableFeatureError(DeltalogError):
    """The table needs reader or writer features this client does not implement."""

    def __init__(self, table: Optional[str], access: str,
                 unsupportedFeatures: Sequence[str], message: str) -> None:
        self.table = table
        self.access = access
        self.unsupportedFeatures = list(unsupportedFeatures)
        super().__init__(
            "DELTA_UNSUPPORTED_FEATURES_FOR_READ" if access == "read"
            else "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE",
            message,
        )


class DeltalogAssertionError(DeltalogError, AssertionError):
    """The seed's assertions, e.g. protocol properties left in the table configuration."""

    _spark_base = "PySparkException"


class TableNotFoundError(DeltalogError):
    """The path holds no Delta table."""


class VersionNotContiguousError(DeltalogError):
    """Commits between the checkpoint and the target version are missing."""


class VersionNotFoundError(DeltalogError):
    """A requested version does not exist (cleaned up, or not written yet)."""


class TimestampOutOfRangeError(DeltalogError):
    """A requested timestamp is before the first or after the last commit."""


class StateRecoverError(DeltalogError):
    """Replay finished without a protocol or a metadata action."""


class CorruptLogFileError(DeltalogError):
    """A log file exists but cannot be read."""


def deltalog_class(err: BaseException) -> type:
    """The ``deltalog.exceptions`` class of ``err``.

    An error raised by the JVM engine is an instance of a subclass of its deltalog class that also
    derives from a PySpark exception (same name, made by ``deltalog._jvm``), so ``type(err)`` is
    not the deltalog class itself: compare with ``isinstance``, or with this function's answer when
    the exact class matters.
    """
    return getattr(type(err), "_deltalog_class", type(err))


# errorClass -> Python class, used to re-raise JVM errors with the same type.
ERROR_CLASSES = {
    "DELTA_MALFORMED_LOG_LINE": ActionParseError,
    "DELTA_TABLE_NOT_FOUND": TableNotFoundError,
    "DELTA_VERSIONS_NOT_CONTIGUOUS": VersionNotContiguousError,
    "DELTA_VERSION_NOT_FOUND": VersionNotFoundError,
    "DELTA_TIMESTAMP_OUT_OF_RANGE": TimestampOutOfRangeError,
    "DELTA_STATE_RECOVER_ERROR": StateRecoverError,
    "DELTA_CORRUPT_LOG_FILE": CorruptLogFileError,
    "DELTA_UNSUPPORTED_FEATURES_FOR_READ": UnsupportedTableFeatureError,
    "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE": UnsupportedTableFeatureError,
}


# =============================================================================================
# Transactions (io.deltalog.txn). A real hierarchy: ``except DeltaConcurrentModificationException``
# catches every conflict a commit can lose with (delta-spark's Python classes do not all share a
# base, so a generic handler there misses some).


class DeltaConcurrentModificationException(DeltalogError):
    """A concurrent commit conflicts with this transaction; the commit was not written.

    The transaction is finished: start a new one (it reads the winning commits) and retry.
    """

    errorClass = "DELTA_CONCURRENT_MODIFICATION"
    _spark_base = "PySparkException"
    #: Table path, the winning commit's version (-1 when unknown), and where known the partition
    #: and file the conflict is about (set when raised by the engine).
    table: Optional[str] = None
    winningVersion: int = -1
    partition: Optional[str] = None
    file: Optional[str] = None

    def __init__(self, errorClass: str, message: str) -> None:
        super().__init__(errorClass, message)


class ConcurrentWriteException(DeltaConcurrentModificationException):
    """A concurrent transaction wrote to a table this one read (generic conflict)."""


class MetadataChangedException(DeltaConcurrentModificationException):
    """A concurrent transaction changed the table metadata (schema, properties, partitioning)."""


class ProtocolChangedException(DeltaConcurrentModificationException):
    """A concurrent transaction changed the table protocol (or created the table first)."""


class ConcurrentAppendException(DeltaConcurrentModificationException):
    """A concurrent transaction added files into data (a partition) this transaction read."""


class ConcurrentDeleteReadException(DeltaConcurrentModificationException):
    """A concurrent transaction deleted a file this transaction read."""


class ConcurrentDeleteDeleteException(DeltaConcurrentModificationException):
    """A concurrent transaction deleted a file this transaction also deletes."""


class ConcurrentTransactionException(DeltaConcurrentModificationException):
    """A concurrent transaction committed with the same application id (``txn`` action)."""


class MaxCommitAttemptsExceededException(ConcurrentWriteException):
    """The commit was retried ``deltalog.maxCommitAttempts`` times; concurrent writers kept winning."""


class DropFeatureConflictException(DeltaConcurrentModificationException):
    """The downgrade commit of ``DROP FEATURE`` lost to a concurrent commit that used the feature again
    (``DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL``); the feature was not dropped: run the drop again."""


class InvalidCommitError(DeltalogError, ValueError):
    """A commit breaks a rule of the table or the protocol before it is written (partition values
    not matching the partition columns, duplicate txn app ids, ...). Nothing was written."""


class AppendOnlyTableError(InvalidCommitError):
    """``delta.appendOnly = true`` and the commit removes data."""


class InvalidPredicateError(DeltalogError, ValueError):
    """A predicate (e.g. of ``filterFiles``) cannot be parsed, references a column that is not a
    partition column, or compares values of incompatible types."""


class InvalidPartitionValueError(DeltalogError, ValueError):
    """A stored partition value does not parse as its column's type."""


class PostCommitHookFailedError(DeltalogError):
    """The commit succeeded but a post-commit hook (e.g. the symlink manifest) failed."""

    _spark_base = "PySparkException"


class DeletionVectorLoadError(DeltalogError):
    """A deletion vector of a data file cannot be loaded (missing file, bad size or checksum)."""


# =============================================================================================
# The Spark connector (``format("deltalog")``: io.deltalog.commands, io.deltalog.spark.*).


class VacuumError(DeltalogError, ValueError):
    """VACUUM refused (delta-spark's error classes): a retention below the table's while the check is
    on (``DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT``), a negative one, or LITE on a log that no longer
    covers the commits it needs (``DELTA_CANNOT_VACUUM_LITE``). Nothing was deleted."""
    _spark_base = "IllegalArgumentException"


class SchemaMismatchError(DeltalogError):
    """The written data's schema does not match the table's (``mergeSchema`` / ``overwriteSchema``)."""


class InvalidWriteOptionError(DeltalogError, ValueError):
    """A writer option has a value that cannot be used."""


class InvalidWriteError(DeltalogError):
    """A write the table or the options do not allow (save mode, ``replaceWhere``, ...)."""


class ConstraintViolationError(DeltalogError):
    """A written row breaks a rule of the table (NOT NULL, invariant, CHECK constraint, generated or
    identity column, ``replaceWhere``). Raised while Spark tasks write; nothing was committed."""

    _spark_base = "SparkRuntimeException"


class InvalidReadOptionError(DeltalogError, ValueError):
    """Read options that contradict each other or cannot be parsed (time travel, CDF ranges, path)."""


class InvalidSchemaError(DeltalogError):
    """A table's schema in the log cannot be turned into a Spark schema."""


class ColumnMappingError(DeltalogError):
    """The table names an unknown column-mapping mode, or a field lacks its mapping metadata."""


class UnsupportedTypeChangeError(DeltalogError):
    """A column's recorded type change cannot be applied when reading older data files."""


ERROR_CLASSES.update({
    "DELTA_CONCURRENT_WRITE": ConcurrentWriteException,
    "DELTA_METADATA_CHANGED": MetadataChangedException,
    "DELTA_PROTOCOL_CHANGED": ProtocolChangedException,
    "DELTA_CONCURRENT_APPEND": ConcurrentAppendException,
    "DELTA_CONCURRENT_DELETE_READ": ConcurrentDeleteReadException,
    "DELTA_CONCURRENT_DELETE_DELETE": ConcurrentDeleteDeleteException,
    "DELTA_CONCURRENT_TRANSACTION": ConcurrentTransactionException,
    "DELTA_MAX_COMMIT_RETRIES_EXCEEDED": MaxCommitAttemptsExceededException,
    "DELTA_APPEND_ONLY_TABLE": AppendOnlyTableError,
    "DELTA_CANNOT_MODIFY_APPEND_ONLY": AppendOnlyTableError,
    "DELTA_METADATA_ABSENT": InvalidCommitError,
    "DELTA_MULTIPLE_PROTOCOL_ACTIONS": InvalidCommitError,
    "DELTA_DUPLICATE_TXN_APP_ID": InvalidCommitError,
    "DELTA_INVALID_PARTITIONING_SCHEMA": InvalidCommitError,
    "DELTA_DUPLICATE_ACTIONS_FOUND": InvalidCommitError,
    "DELTA_DOMAIN_METADATA_NOT_SUPPORTED": InvalidCommitError,
    "DELTA_DUPLICATE_DOMAIN_METADATA": InvalidCommitError,
    "DELTA_INVALID_PREDICATE": InvalidPredicateError,
    "DELTA_PREDICATE_TYPE_MISMATCH": InvalidPredicateError,
    "DELTA_INVALID_PARTITION_VALUE": InvalidPartitionValueError,
    "DELTA_POST_COMMIT_HOOK_FAILED": PostCommitHookFailedError,
    "DELTA_DELETION_VECTOR_INVALID": DeletionVectorLoadError,
    "DELTA_SCHEMA_MISMATCH": SchemaMismatchError,
    "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT": VacuumError,
    "DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE": VacuumError,
    "DELTA_CANNOT_VACUUM_LITE": VacuumError,
    "DELTA_INVALID_WRITE_OPTION": InvalidWriteOptionError,
    "DELTA_INVALID_READ_OPTION": InvalidReadOptionError,
    "DELTA_INVALID_COLUMN_MAPPING": ColumnMappingError,
    "DELTA_UNSUPPORTED_TYPE_CHANGE_FOR_READ": UnsupportedTypeChangeError,
    # DROP FEATURE (delta-spark's error classes; DELTALOG_FEATURE_DROP_NEEDS_REWRITE is deltalog's own:
    # the drop needs traces removed that deltalog cannot remove here, e.g. DVs without a Spark session).
    "DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE": DropFeatureError,
    "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT": DropFeatureError,
    "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE": DropFeatureError,
    "DELTA_FEATURE_DROP_DEPENDENT_FEATURE": DropFeatureError,
    "DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY": DropFeatureError,
    "DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED": DropFeatureError,
    "DELTA_FEATURE_CAN_ONLY_DROP_CHECKPOINT_PROTECTION_WITH_HISTORY_TRUNCATION": DropFeatureError,
    "DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE": DropFeatureError,
    "DELTA_INVALID_COLUMN_NAMES_WHEN_REMOVING_COLUMN_MAPPING": DropFeatureError,
    "DELTALOG_FEATURE_DROP_NEEDS_REWRITE": DropFeatureError,
    "DELTALOG_FEATURE_DROP_STILL_ENABLED": DropFeatureError,
    "DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD": DropFeatureWaitForRetentionError,
    "DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST": DropFeatureWaitForRetentionError,
    "DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD": DropFeatureWaitForRetentionError,
    "DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL": DropFeatureConflictException,
})

class StreamingSourceError(DeltalogError):
    """A streaming read (``readStream.format("deltalog")``) cannot go on: a commit changed or
    deleted data the stream delivered, the schema changed, the checkpoint belongs to another table
    or a commit the stream needs is gone (delta-spark's error classes)."""


ERROR_CLASSES.update({
    "DELTA_SOURCE_TABLE_IGNORE_CHANGES": StreamingSourceError,
    "DELTA_SOURCE_IGNORE_DELETE": StreamingSourceError,
    "DELTA_SCHEMA_CHANGED_WITH_VERSION": StreamingSourceError,
    "DELTA_SCHEMA_CHANGED_WITH_STARTING_OPTIONS": StreamingSourceError,
    "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG": StreamingSourceError,
    "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE": StreamingSourceError,
    "DELTA_INVALID_SOURCE_OFFSET_FORMAT": StreamingSourceError,
    "DELTA_INVALID_SOURCE_VERSION": StreamingSourceError,
    "DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION": StreamingSourceError,
    "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE": StreamingSourceError,
    "DELTA_TIMESTAMP_GREATER_THAN_COMMIT": StreamingSourceError,
})


# JVM exception class -> Python class, for error classes not listed above (so that a new conflict
# error class of the engine is still caught by ``except DeltaConcurrentModificationException``).
# Most specific JVM class first. Also maps the classes whose error class is a parameter (a write
# refusal, a constraint, a table property...) and the one-message constructors' DELTALOG_ERROR.
JVM_CLASS_FALLBACKS = (
    ("io.deltalog.commands.ConstraintViolationException", ConstraintViolationError),
    ("io.deltalog.commands.InvalidWriteException", InvalidWriteError),
    ("io.deltalog.commands.VacuumException", VacuumError),
    ("io.deltalog.schema.InvalidSchemaException", InvalidSchemaError),
    ("io.deltalog.exceptions.TableFeatureException", TableFeatureError),
    ("io.deltalog.exceptions.InvalidTablePropertyException", InvalidTablePropertyError),
    ("io.deltalog.exceptions.InvalidProtocolVersionException", InvalidProtocolVersionError),
    ("io.deltalog.expressions.PredicateEvaluationException", InvalidPredicateError),
    ("io.deltalog.exceptions.DropFeatureConflictException", DropFeatureConflictException),
    ("io.deltalog.exceptions.ConcurrentWriteException", ConcurrentWriteException),
    ("io.deltalog.exceptions.DeltaConcurrentModificationException", DeltaConcurrentModificationException),
    ("io.deltalog.exceptions.InvalidCommitException", InvalidCommitError),
    ("io.deltalog.exceptions.DeltalogAssertionError", DeltalogAssertionError),
    ("io.deltalog.exceptions.StreamingSourceException", StreamingSourceError),
    ("io.deltalog.exceptions.DeltalogException", DeltalogError),
)
