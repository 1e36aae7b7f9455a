"""Delta log actions with an exact JSON round trip.

A log line is a JSON object with exactly one key naming the action (``add``, ``metaData``, ...).
:func:`parseAction` turns a line into one of the dataclasses below (or :class:`UnknownAction` for
an action type this module does not know); ``action.json()`` turns it back into one compact line.
Parsing then serializing preserves every field: unknown fields (kept in ``extra``), explicit
``null`` s of known optional fields (names kept in ``nullFields``) and unknown action types.

Names are camelCase on purpose: they mirror the protocol's JSON and the JVM engine.
Field semantics: Delta protocol §2 (actions), §2.11 (path encoding), §6.2 (deletion vectors).
"""
from __future__ import annotations

import json
import re
import string
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Optional, Union

from deltalog import _z85
from deltalog._json_fields import (
    FieldError,
    FieldSpec,
    JsonAction,
    JsonStruct,
    dumpsCompact,
    isJsonInt,
    jsonTypeName,
    readBool,
    readInt,
    readLong,
    readPartitionMap,
    readString,
    readStringList,
    readStringMap,
    spec as _spec,
    writeNested,
)
from deltalog.exceptions import ActionParseError

if TYPE_CHECKING:  # pragma: no cover
    from deltalog.protocol import Protocol

__all__ = [
    "Action", "AddCDCFile", "AddFile", "CheckpointMetadata", "CommitInfo",
    "DeletionVectorDescriptor", "DomainMetadata", "Format", "Metadata", "Protocol",
    "RemoveFile", "SetTransaction", "SidecarFile", "UnknownAction",
    "actionJson", "canonicalPathKey", "decodePath", "encodePath", "isAbsoluteUri",
    "parseAction", "parseActions", "serializeActions",
]


def __getattr__(name: str) -> Any:
    """Lazily re-export ``Protocol`` from :mod:`deltalog.protocol`."""
    if name == "Protocol":
        from deltalog.protocol import Protocol
        return Protocol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# =============================================================================================
# Path encoding (§2.11)

_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:/")
_SAFE_ASCII = frozenset(string.ascii_letters + string.digits + "-_.!~*'()" + ";@&=+$,/")
_HEX = frozenset(string.hexdigits)


def isAbsoluteUri(path: str) -> bool:
    """True when ``path`` starts with a URI scheme followed by ``:/`` (``s3://``, ``file:/``)."""
    return _SCHEME_RE.match(path) is not None


def _keepLiteral(ch: str) -> bool:
    if ch in _SAFE_ASCII:
        return True
    if ord(ch) <= 0x9F:  # other ASCII characters, and C1 control characters
        return False
    # Like java.net.URI: other non-ASCII characters stay literal unless they are space chars.
    return unicodedata.category(ch) not in ("Zs", "Zl", "Zp", "Cs") and not ch.isspace()


def _encodeRelative(path: str) -> str:
    out: list[str] = []
    for ch in path:
        if _keepLiteral(ch):
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
    return "".join(out)


def encodePath(path: str) -> str:
    """Encode a raw file path as the URI string stored in ``add.path`` & co.

    Absolute URIs (with a scheme, e.g. ``s3://b/x`` or ``file:/x``) are returned unchanged.
    Otherwise every character is percent-encoded (UTF-8, uppercase hex) except ASCII letters and
    digits, ``-_.!~*'()``, ``;@&=+$,/`` and non-ASCII characters that are neither control nor
    space characters. ``:`` is encoded so a relative path never looks like it has a scheme.
    Raises ValueError for strings that are not valid Unicode (lone surrogates).
    """
    if isAbsoluteUri(path):
        return path
    return _encodeRelative(path)


def decodePath(uri: str) -> str:
    """Percent-decode ``uri`` (UTF-8). Raises ValueError on a malformed escape or bad UTF-8."""
    if "%" not in uri:
        return uri
    out = bytearray()
    i = 0
    while i < len(uri):
        ch = uri[i]
        if ch == "%":
            digits = uri[i + 1:i + 3]
            if len(digits) != 2 or not all(d in _HEX for d in digits):
                raise ValueError(f"malformed percent-escape at index {i} in {uri!r}")
            out.append(int(digits, 16))
            i += 3
        else:
            out += ch.encode("utf-8")
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"percent-escapes in {uri!r} are not valid UTF-8: {exc}") from None


def canonicalPathKey(path: str) -> str:
    """A key under which differently-encoded spellings of one relative path compare equal.

    Relative paths are decoded and re-encoded (``a%20b`` and ``a b`` give the same key); a path
    whose escapes are malformed is taken literally. Absolute URIs are returned as they are.
    """
    if isAbsoluteUri(path):
        return path
    try:
        raw = decodePath(path)
    except ValueError:
        raw = path
    return _encodeRelative(raw)


# =============================================================================================
# Deletion vectors (§6.2)


@dataclass(frozen=True)
class DeletionVectorDescriptor(JsonStruct):
    """``deletionVector`` of add/remove: where the deleted-row bitmap of a data file lives."""

    storageType: str
    pathOrInlineDv: str
    sizeInBytes: int
    cardinality: int
    offset: Optional[int] = None
    maxRowIndex: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    _JSON_PATH: ClassVar[str] = "deletionVector"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("storageType", readString, required=True),
        _spec("pathOrInlineDv", readString, required=True),
        _spec("offset", readInt),
        _spec("sizeInBytes", readInt, required=True),
        _spec("cardinality", readLong, required=True),
        _spec("maxRowIndex", readLong),
    )

    @property
    def uniqueId(self) -> str:
        """``storageType + pathOrInlineDv``, plus ``"@" + offset`` when offset is present."""
        base = self.storageType + self.pathOrInlineDv
        return base if self.offset is None else f"{base}@{self.offset}"

    @property
    def isInline(self) -> bool:
        """True when the bitmap is stored in the descriptor itself (storage type ``i``)."""
        return self.storageType == "i"

    @property
    def isOnDisk(self) -> bool:
        """True when the bitmap is stored in a file (storage types ``u`` and ``p``)."""
        return self.storageType in ("u", "p")

    def absolutePath(self, tableRoot: str) -> str:
        """The DV file for table ``tableRoot``: ``<root>/<prefix>/deletion_vector_<uuid>.bin``
        for ``u``, the stored path for ``p``; ValueError for inline and unknown types."""
        if self.storageType == "u":
            encoded = self.pathOrInlineDv
            if len(encoded) < 20:
                raise ValueError(f"'u' deletion vector id {encoded!r} is shorter than 20 chars")
            prefix, uuidText = encoded[:-20], encoded[-20:]
            fileName = f"deletion_vector_{_z85.decodeUuid(uuidText)}.bin"
            root = tableRoot.rstrip("/")
            return f"{root}/{prefix}/{fileName}" if prefix else f"{root}/{fileName}"
        if self.storageType == "p":
            return self.pathOrInlineDv
        if self.storageType == "i":
            raise ValueError("an inline deletion vector has no file path")
        raise ValueError(f"unknown deletion vector storage type {self.storageType!r}")

    def inlineData(self) -> bytes:
        """The serialized bitmap of an inline (``i``) DV: Z85-decoded, cut to sizeInBytes."""
        if not self.isInline:
            raise ValueError("not an inline deletion vector")
        return _z85.decode(self.pathOrInlineDv)[:self.sizeInBytes]


_DV_SPEC_ARGS = dict(reader=DeletionVectorDescriptor._fromJson, writer=writeNested)


# =============================================================================================
# metaData


@dataclass(frozen=True)
class Format(JsonStruct):
    """``metaData.format``: the data file format (always parquet in practice)."""

    provider: str = "parquet"
    options: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    _JSON_PATH: ClassVar[str] = "format"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("provider", readString, default=lambda: "parquet"),
        _spec("options", readStringMap, default=dict),
    )


@dataclass(frozen=True)
class Metadata(JsonAction):
    """``metaData``: table id, schema, partitioning and table properties.

    Constructor order puts the required ``id`` and ``schemaString`` first; JSON order is the
    protocol's (id, name, description, format, schemaString, partitionColumns, configuration,
    createdTime).
    """

    id: str
    schemaString: str
    name: Optional[str] = None
    description: Optional[str] = None
    format: Format = field(default_factory=Format)
    partitionColumns: list[str] = field(default_factory=list)
    configuration: dict[str, str] = field(default_factory=dict)
    createdTime: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "metaData"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("id", readString, required=True),
        _spec("name", readString),
        _spec("description", readString),
        _spec("format", Format._fromJson, default=Format, writer=writeNested),
        _spec("schemaString", readString, required=True),
        _spec("partitionColumns", readStringList, default=list),
        _spec("configuration", readStringMap, default=dict),
        _spec("createdTime", readLong),
    )


# =============================================================================================
# File actions


@dataclass(frozen=True)
class AddFile(JsonAction):
    """``add``: a data file (plus optional deletion vector) becomes part of the table."""

    path: str
    partitionValues: dict[str, Optional[str]]
    size: int
    modificationTime: int
    dataChange: bool = True
    stats: Optional[str] = None
    tags: Optional[dict[str, str]] = None
    deletionVector: Optional[DeletionVectorDescriptor] = None
    baseRowId: Optional[int] = None
    defaultRowCommitVersion: Optional[int] = None
    clusteringProvider: Optional[str] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "add"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("path", readString, required=True),
        _spec("partitionValues", readPartitionMap, default=dict),
        _spec("size", readLong, required=True),
        _spec("modificationTime", readLong, required=True),
        _spec("dataChange", readBool, default=lambda: True),
        _spec("stats", readString),
        _spec("tags", readStringMap),
        _spec("deletionVector", **_DV_SPEC_ARGS),
        _spec("baseRowId", readLong),
        _spec("defaultRowCommitVersion", readLong),
        _spec("clusteringProvider", readString),
    )

    def remove(self, deletionTimestamp: Optional[int], dataChange: bool = True) -> "RemoveFile":
        """A remove of this logical file, copying what delta-spark copies from the add
        (partitionValues, size, tags, deletionVector, baseRowId, defaultRowCommitVersion,
        stats) with ``extendedFileMetadata=True``."""
        return RemoveFile(
            path=self.path,
            deletionTimestamp=deletionTimestamp,
            dataChange=dataChange,
            extendedFileMetadata=True,
            partitionValues=dict(self.partitionValues),
            size=self.size,
            stats=self.stats,
            tags=None if self.tags is None else dict(self.tags),
            deletionVector=self.deletionVector,
            baseRowId=self.baseRowId,
            defaultRowCommitVersion=self.defaultRowCommitVersion,
        )


@dataclass(frozen=True)
class RemoveFile(JsonAction):
    """``remove``: a logical file (path + deletion vector) leaves the table (a tombstone)."""

    path: str
    deletionTimestamp: Optional[int] = None
    dataChange: bool = True
    extendedFileMetadata: Optional[bool] = None
    partitionValues: Optional[dict[str, Optional[str]]] = None
    size: Optional[int] = None
    stats: Optional[str] = None
    tags: Optional[dict[str, str]] = None
    deletionVector: Optional[DeletionVectorDescriptor] = None
    baseRowId: Optional[int] = None
    defaultRowCommitVersion: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "remove"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("path", readString, required=True),
        _spec("deletionTimestamp", readLong),
        _spec("dataChange", readBool, default=lambda: True),
        _spec("extendedFileMetadata", readBool),
        _spec("partitionValues", readPartitionMap),
        _spec("size", readLong),
        _spec("stats", readString),
        _spec("tags", readStringMap),
        _spec("deletionVector", **_DV_SPEC_ARGS),
        _spec("baseRowId", readLong),
        _spec("defaultRowCommitVersion", readLong),
    )


@dataclass(frozen=True)
class AddCDCFile(JsonAction):
    """``cdc``: a change-data file written by this commit (not part of the table state)."""

    path: str
    partitionValues: dict[str, Optional[str]]
    size: int
    dataChange: bool = False
    tags: Optional[dict[str, str]] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "cdc"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("path", readString, required=True),
        _spec("partitionValues", readPartitionMap, default=dict),
        _spec("size", readLong, required=True),
        _spec("dataChange", readBool, default=lambda: False),
        _spec("tags", readStringMap),
    )


# =============================================================================================
# Other actions


@dataclass(frozen=True)
class SetTransaction(JsonAction):
    """``txn``: the latest version an application (streaming query...) committed."""

    appId: str
    version: int
    lastUpdated: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "txn"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("appId", readString, required=True),
        _spec("version", readLong, required=True),
        _spec("lastUpdated", readLong),
    )


@dataclass(frozen=True)
class DomainMetadata(JsonAction):
    """``domainMetadata``: an opaque configuration string per named domain."""

    domain: str
    configuration: str
    removed: bool
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "domainMetadata"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("domain", readString, required=True),
        _spec("configuration", readString, required=True),
        _spec("removed", readBool, required=True),
    )


@dataclass(frozen=True)
class CheckpointMetadata(JsonAction):
    """``checkpointMetadata`` (V2 checkpoints only): the version the checkpoint describes."""

    version: int
    tags: Optional[dict[str, str]] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "checkpointMetadata"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("version", readLong, required=True),
        _spec("tags", readStringMap),
    )


@dataclass(frozen=True)
class SidecarFile(JsonAction):
    """``sidecar`` (V2 checkpoints only): a file in ``_delta_log/_sidecars/`` holding actions."""

    path: str
    sizeInBytes: int
    modificationTime: int
    tags: Optional[dict[str, str]] = None
    extra: dict[str, Any] = field(default_factory=dict)
    nullFields: frozenset[str] = frozenset()

    actionName: ClassVar[str] = "sidecar"
    _SPECS: ClassVar[tuple[FieldSpec, ...]] = (
        _spec("path", readString, required=True),
        _spec("sizeInBytes", readLong, required=True),
        _spec("modificationTime", readLong, required=True),
        _spec("tags", readStringMap),
    )


_COMMIT_INFO_FIELDS: tuple[str, ...] = (
    "timestamp", "inCommitTimestamp", "userId", "userName", "operation", "operationParameters",
    "job", "notebook", "clusterId", "readVersion", "isolationLevel", "isBlindAppend",
    "dataChange", "operationMetrics", "userMetadata", "tags", "engineInfo", "txnId",
)


def _stringMapView(value: Any) -> Optional[dict[str, Optional[str]]]:
    if not isinstance(value, dict):
        return None
    return {key: item if item is None or isinstance(item, str) else dumpsCompact(item)
            for key, item in value.items()}


@dataclass(frozen=True)
class CommitInfo(JsonAction):
    """``commitInfo``: free-form provenance of a commit, kept verbatim in ``values``.

    Typed accessors return None when a field is absent *or has an unexpected type* (commitInfo
    never makes a line malformed); the raw value is always available in ``values``. Map
    accessors (operationParameters, operationMetrics, tags) render non-string values as JSON.
    """

    values: dict[str, Any] = field(default_factory=dict)

    actionName: ClassVar[str] = "commitInfo"

    @classmethod
    def of(cls, **fields: Any) -> "CommitInfo":
        """Build from keyword fields (None values dropped), known fields in protocol order."""
        ordered = {name: fields[name] for name in _COMMIT_INFO_FIELDS
                   if fields.get(name) is not None}
        ordered.update((k, v) for k, v in fields.items() if k not in ordered and v is not None)
        return cls(ordered)

    @classmethod
    def _fromJson(cls, body: Any, path: str) -> "CommitInfo":
        if not isinstance(body, dict):
            raise FieldError(path, "expected an object")
        return cls(dict(body))

    def toJsonDict(self) -> dict[str, Any]:
        """The commitInfo object exactly as read (or built)."""
        return dict(self.values)

    @property
    def extra(self) -> dict[str, Any]:  # type: ignore[override]
        """Fields other than the ones delta-spark writes."""
        return {k: v for k, v in self.values.items() if k not in _COMMIT_INFO_FIELDS}

    def _typed(self, name: str, kind: type) -> Any:
        value = self.values.get(name)
        if kind is int:
            return value if isJsonInt(value) else None
        return value if isinstance(value, kind) else None

    timestamp = property(lambda self: self._typed("timestamp", int),
                         doc="Commit wall-clock time (ms) or None.")
    inCommitTimestamp = property(lambda self: self._typed("inCommitTimestamp", int),
                                 doc="In-commit timestamp (ms) or None.")
    userId = property(lambda self: self._typed("userId", str), doc="User id or None.")
    userName = property(lambda self: self._typed("userName", str), doc="User name or None.")
    operation = property(lambda self: self._typed("operation", str),
                         doc="Operation name, e.g. WRITE, or None.")
    operationParameters = property(lambda self: _stringMapView(self.values.get(
        "operationParameters")), doc="Operation parameters as strings, or None.")
    job = property(lambda self: self._typed("job", dict), doc="Job context object or None.")
    notebook = property(lambda self: self._typed("notebook", dict),
                        doc="Notebook context object or None.")
    clusterId = property(lambda self: self._typed("clusterId", str), doc="Cluster id or None.")
    readVersion = property(lambda self: self._typed("readVersion", int),
                           doc="Snapshot version the transaction read, or None.")
    isolationLevel = property(lambda self: self._typed("isolationLevel", str),
                              doc="Isolation level or None.")
    isBlindAppend = property(lambda self: self._typed("isBlindAppend", bool),
                             doc="Blind-append flag or None.")
    dataChange = property(lambda self: self._typed("dataChange", bool),
                          doc="Data-change flag or None.")
    operationMetrics = property(lambda self: _stringMapView(self.values.get(
        "operationMetrics")), doc="Operation metrics as strings, or None.")
    userMetadata = property(lambda self: self._typed("userMetadata", str),
                            doc="User metadata or None.")
    tags = property(lambda self: _stringMapView(self.values.get("tags")),
                    doc="Commit tags as strings, or None.")
    engineInfo = property(lambda self: self._typed("engineInfo", str),
                          doc="Engine info or None.")
    txnId = property(lambda self: self._typed("txnId", str), doc="Transaction UUID or None.")


@dataclass(frozen=True)
class UnknownAction:
    """An action type this module does not know: kept verbatim and ignored by log replay."""

    name: str
    body: Any

    @property
    def actionName(self) -> str:
        """The top-level key of the line."""
        return self.name

    def toJsonDict(self) -> Any:
        """The body exactly as read (any JSON value)."""
        return self.body

    def json(self) -> str:
        """This action as one compact log line."""
        return dumpsCompact({self.name: self.body})


Action = Union[Metadata, "Protocol", AddFile, RemoveFile, AddCDCFile, SetTransaction,
               CommitInfo, DomainMetadata, CheckpointMetadata, SidecarFile, UnknownAction]
"""Any log action."""

_ACTION_CLASSES: dict[str, type] = {
    cls.actionName: cls for cls in (Metadata, AddFile, RemoveFile, AddCDCFile, SetTransaction,
                                    CommitInfo, DomainMetadata, CheckpointMetadata, SidecarFile)
}


# =============================================================================================
# Lines


def _rejectConstant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_JSON_WS = " \t\r\n"


def _noDuplicateKeys(pairs: list) -> dict:
    # A repeated key makes a log line ambiguous (readers disagree on which value wins); the JVM
    # codec rejects it too, so both languages read a line the same way or not at all.
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def parseAction(line: Union[str, bytes], file: Optional[str] = None,
                lineNumber: int = 1) -> Optional[Action]:
    """Parse one log line; None for an empty or whitespace-only line.

    Raises ActionParseError naming ``file``, ``lineNumber`` and the dotted field (``<line>``
    when the line itself is not a one-key JSON object).
    """
    if isinstance(line, (bytes, bytearray)):
        try:
            line = bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ActionParseError(file, lineNumber, "<line>", f"not valid UTF-8: {exc}") from None
    text = line.strip(_JSON_WS)
    if not text:
        return None
    try:
        parsed = json.loads(text, parse_constant=_rejectConstant, object_pairs_hook=_noDuplicateKeys)
    except (ValueError, RecursionError) as exc:
        raise ActionParseError(file, lineNumber, "<line>", f"invalid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ActionParseError(file, lineNumber, "<line>",
                               f"a log line must be a JSON object, got {jsonTypeName(parsed)}")
    if len(parsed) != 1:
        raise ActionParseError(file, lineNumber, "<line>",
                               f"a log line must have exactly one top-level key, "
                               f"got {len(parsed)}: {sorted(parsed)}")
    (name, body), = parsed.items()
    if name == "protocol":
        return _parseProtocol(body, file, lineNumber)
    cls = _ACTION_CLASSES.get(name)
    if cls is None:
        return UnknownAction(name, body)
    if not isinstance(body, dict):
        raise ActionParseError(file, lineNumber, name,
                               f"an action must be a JSON object, got {jsonTypeName(body)}")
    try:
        return cls._fromJson(body, name)
    except FieldError as exc:
        raise ActionParseError(file, lineNumber, exc.field, exc.reason) from None


def _parseProtocol(body: Any, file: Optional[str], lineNumber: int) -> "Protocol":
    from deltalog.protocol import Protocol
    if not isinstance(body, dict):
        raise ActionParseError(file, lineNumber, "protocol",
                               f"an action must be a JSON object, got {jsonTypeName(body)}")
    try:
        return Protocol.fromJsonDict(body)
    except ActionParseError as exc:
        raise ActionParseError(file, lineNumber, exc.field, exc.reason) from None


def _splitLines(textOrLines: Union[str, bytes, Iterable[Union[str, bytes]]]
                ) -> Iterable[Union[str, bytes]]:
    if isinstance(textOrLines, (bytes, bytearray)):
        return bytes(textOrLines).split(b"\n")
    if isinstance(textOrLines, str):
        # Only "\n" separates lines: U+2028, U+0085 ... may appear raw inside JSON strings.
        return textOrLines.split("\n")
    return textOrLines


def parseActions(textOrLines: Union[str, bytes, Iterable[Union[str, bytes]]],
                 file: Optional[str] = None) -> list[Action]:
    """Parse a whole log file (text, bytes, or an iterable of lines), skipping empty lines.

    Line numbers in errors are 1-based and count empty lines too.
    """
    actions: list[Action] = []
    for index, line in enumerate(_splitLines(textOrLines), start=1):
        action = parseAction(line, file, index)
        if action is not None:
            actions.append(action)
    return actions


def actionJson(action: Action) -> str:
    """One compact log line for any action, including a ``Protocol``."""
    if isinstance(action, (JsonAction, UnknownAction)):
        return action.json()
    # A Protocol from deltalog.protocol: written with the same compact settings.
    return dumpsCompact({"protocol": action.toJsonDict()})


def serializeActions(actions: Iterable[Action]) -> str:
    """Log file text: one line per action, each terminated by a newline."""
    return "".join(actionJson(action) + "\n" for action in actions)
