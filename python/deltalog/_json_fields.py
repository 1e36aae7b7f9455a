"""Typed reading and writing of the JSON fields of log actions (internal to deltalog.actions).

A struct (an action body, ``format``, a deletion-vector descriptor) is described by a tuple of
:class:`FieldSpec` in the protocol's field order. :func:`readStruct` checks types, applies
lenient defaults, collects unknown fields and remembers which known fields were an explicit JSON
``null``; :func:`writeStruct` does the reverse so that a parsed struct re-serializes to the same
JSON value.

Errors are raised as :class:`FieldError` carrying the dotted field path; the caller converts them
into :class:`deltalog.exceptions.ActionParseError` with the file name and line number.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Optional, Sequence

from deltalog.exceptions import ActionParseError

LONG_MIN: int = -(1 << 63)
LONG_MAX: int = (1 << 63) - 1
INT_MIN: int = -(1 << 31)
INT_MAX: int = (1 << 31) - 1


class FieldError(Exception):
    """A field has the wrong type or is missing; ``field`` is the dotted path (e.g. add.size)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def jsonTypeName(value: Any) -> str:
    """The JSON type name of a decoded JSON value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _expected(path: str, what: str, value: Any) -> FieldError:
    return FieldError(path, f"expected {what}, got {jsonTypeName(value)}")


def isJsonInt(value: Any) -> bool:
    """True for a JSON integer (a Python int that is not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# Readers: (json value, dotted path) -> python value. Never called with None.

def readString(value: Any, path: str) -> str:
    """A JSON string."""
    if not isinstance(value, str):
        raise _expected(path, "a string", value)
    return value


def readLong(value: Any, path: str) -> int:
    """A JSON integer in the signed 64-bit range."""
    if not isJsonInt(value):
        raise _expected(path, "an integer (long)", value)
    if not LONG_MIN <= value <= LONG_MAX:
        raise FieldError(path, f"integer {value} is out of range for a long")
    return value


def readInt(value: Any, path: str) -> int:
    """A JSON integer in the signed 32-bit range."""
    if not isJsonInt(value):
        raise _expected(path, "an integer (int)", value)
    if not INT_MIN <= value <= INT_MAX:
        raise FieldError(path, f"integer {value} is out of range for an int")
    return value


def readBool(value: Any, path: str) -> bool:
    """A JSON boolean (``"true"`` is not accepted)."""
    if not isinstance(value, bool):
        raise _expected(path, "a boolean", value)
    return value


def readStringMap(value: Any, path: str) -> dict[str, str]:
    """A JSON object whose values are all strings."""
    if not isinstance(value, dict):
        raise _expected(path, "an object of strings", value)
    for key, item in value.items():
        if not isinstance(item, str):
            raise FieldError(path, f"value of key {key!r} must be a string, "
                                   f"got {jsonTypeName(item)}")
    return dict(value)


def readPartitionMap(value: Any, path: str) -> dict[str, Optional[str]]:
    """A JSON object whose values are strings or null (partition values)."""
    if not isinstance(value, dict):
        raise _expected(path, "an object of strings", value)
    for key, item in value.items():
        if item is not None and not isinstance(item, str):
            raise FieldError(path, f"value of key {key!r} must be a string or null, "
                                   f"got {jsonTypeName(item)}")
    return dict(value)


def readStringList(value: Any, path: str) -> list[str]:
    """A JSON array of strings."""
    if not isinstance(value, list):
        raise _expected(path, "an array of strings", value)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise FieldError(path, f"element {index} must be a string, got {jsonTypeName(item)}")
    return list(value)


# ---------------------------------------------------------------------------------------------
# Writers: python value -> json value.

def writeIdentity(value: Any) -> Any:
    """Scalars are written as they are."""
    return value


def writeCopy(value: Any) -> Any:
    """Maps and lists are copied so the caller cannot alias the action's state."""
    return dict(value) if isinstance(value, dict) else list(value)


@dataclass(frozen=True)
class FieldSpec:
    """One known field of a struct.

    ``required`` fields without a ``default`` raise when absent or null; fields with a
    ``default`` (lenient defaults for old writers) get it when absent and are always written.
    """

    name: str
    reader: Callable[[Any, str], Any]
    writer: Callable[[Any], Any] = writeIdentity
    required: bool = False
    default: Optional[Callable[[], Any]] = None


def readStruct(specs: Sequence[FieldSpec], body: Any, path: str
               ) -> tuple[dict[str, Any], dict[str, Any], frozenset[str]]:
    """Read a JSON object according to ``specs``.

    Returns ``(knownValues, extra, nullFields)``: constructor arguments keyed by field name,
    unknown fields in input order, and the names of known fields that were an explicit null.
    """
    if not isinstance(body, dict):
        raise _expected(path, "an object", body)
    specList = list(specs)
    known: dict[str, Any] = {}
    nulls: set[str] = set()
    for spec in specList:
        fieldPath = f"{path}.{spec.name}"
        if spec.name not in body:
            if spec.default is not None:
                known[spec.name] = spec.default()
            elif spec.required:
                raise FieldError(fieldPath, "required field is missing")
            continue
        value = body[spec.name]
        if value is None:
            if spec.default is not None:
                known[spec.name] = spec.default()
            elif spec.required:
                raise FieldError(fieldPath, "required field is null")
            nulls.add(spec.name)
            continue
        known[spec.name] = spec.reader(value, fieldPath)
    names = {spec.name for spec in specList}
    extra = {key: value for key, value in body.items() if key not in names}
    return known, extra, frozenset(nulls)


def writeStruct(specs: Sequence[FieldSpec], obj: Any, nullFields: frozenset[str],
                extra: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``obj``'s known fields in spec order, then ``extra``.

    A field whose value is None is written as null if it is in ``nullFields`` and left out
    otherwise; a defaulted field still holding its default is written as null when it was read
    as an explicit null.
    """
    out: dict[str, Any] = {}
    for spec in specs:
        value = getattr(obj, spec.name)
        if spec.name in nullFields and (
                value is None or (spec.default is not None and value == spec.default())):
            out[spec.name] = None
        elif value is not None:
            out[spec.name] = spec.writer(value)
    for key, value in extra.items():
        if key not in out and all(spec.name != key for spec in specs):
            out[key] = value
    return out


def spec(name: str, reader: Callable[[Any, str], Any], *, required: bool = False,
         default: Optional[Callable[[], Any]] = None,
         writer: Optional[Callable[[Any], Any]] = None) -> FieldSpec:
    """A FieldSpec whose writer copies maps and lists and passes other values through."""
    if writer is None:
        writer = writeCopy if reader in (readStringMap, readPartitionMap, readStringList) \
            else writeIdentity
    return FieldSpec(name, reader, writer, required, default)


def dumpsCompact(value: Any) -> str:
    """One compact JSON line: separators (",", ":"), non-ASCII written as is, no NaN."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class JsonStruct:
    """JSON behaviour shared by the action dataclasses: ``_SPECS`` lists the known fields,
    ``extra`` holds unknown ones and ``nullFields`` the known fields read as explicit null."""

    _SPECS: ClassVar[tuple[FieldSpec, ...]] = ()
    _JSON_PATH: ClassVar[str] = ""
    extra: dict[str, Any]
    nullFields: frozenset[str]

    def toJsonDict(self) -> dict[str, Any]:
        """The JSON object of this struct: known fields in protocol order, then unknown fields."""
        return writeStruct(self._SPECS, self, self.nullFields, self.extra)

    @classmethod
    def _fromJson(cls, body: Any, path: str) -> Any:
        known, extra, nulls = readStruct(cls._SPECS, body, path)
        return cls(**known, extra=extra, nullFields=nulls)

    @classmethod
    def fromJsonDict(cls, body: Any) -> Any:
        """Build from a decoded JSON object; raises ActionParseError (file None, line 0)."""
        try:
            return cls._fromJson(body, cls._JSON_PATH or getattr(cls, "actionName", ""))
        except FieldError as exc:
            raise ActionParseError(None, 0, exc.field, exc.reason) from None


class JsonAction(JsonStruct):
    """A struct that is a whole log action, written as ``{"<actionName>": {...}}``."""

    actionName: ClassVar[str]

    def json(self) -> str:
        """This action as one compact log line (no trailing newline)."""
        return dumpsCompact({self.actionName: self.toJsonDict()})


def writeNested(value: JsonStruct) -> dict[str, Any]:
    """Writer of a nested struct field (format, deletionVector)."""
    return value.toJsonDict()
