"""Typed errors raised by deltalog.

Every error carries ``errorClass``: a stable, language-neutral identifier. The JVM engine
(``io.deltalog.exceptions``) raises the same class for the same situation; the shared test
vectors under ``tests/vectors/`` compare these identifiers across the two languages.
"""
from __future__ import annotations

from typing import Optional, Sequence


class DeltalogError(Exception):
    """Base of every error a user can cause."""

    errorClass: str = "DELTALOG_ERROR"

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
