"""A table's history and details, read from its ``_delta_log`` in pure Python (no JVM).

The pure-Python counterparts of the engine's ``DESCRIBE HISTORY`` and ``DESCRIBE DETAIL``
(``io.deltalog.log.TableHistory``, ``CommitTimestamps``, ``DescribeDetailCommand``), used by the
``deltalog history`` / ``deltalog describe`` commands:

* :func:`table_history` lists ``_delta_log`` once and reads only the commit files of the versions
  it returns (for ``limit=n`` the n newest), never the table's state. Commit timestamps are the
  ones time travel uses: ``commitInfo.inCommitTimestamp`` for versions at or after the in-commit
  timestamp enablement version when ``delta.enableInCommitTimestamps`` is true in the latest
  metadata, else the commit files' modification times, *monotonized* (walking versions upwards,
  a time at or before the previous adjusted one becomes that one + 1 ms). The latest metadata is
  only read when the newest commit starts with a ``commitInfo`` carrying ``inCommitTimestamp``
  (while in-commit timestamps are enabled every commit does).
* :func:`table_detail` replays the newest complete checkpoint (only the file actions' path, size
  and deletion vector id, from the checkpoint or its sidecars) and the commits after it.

No readability check is made: like ``deltalog protocol``, these describe tables this client could
not read. Errors are the engine's (``deltalog.exceptions``): ``TableNotFoundError`` (no log, no
commit), ``VersionNotContiguousError``, ``StateRecoverError``, ``ActionParseError`` /
``CorruptLogFileError`` (unreadable files, or in-commit timestamps enabled but missing).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from deltalog._log_reader import (
    _KNOWN_ACTIONS,
    _Checkpoint,
    _damaged_checkpoint,
    _list_log,
    _latest_segment,
    _metadata_from_body,
    _protocol_from_body,
    _read_checkpoint,
    local_table_path,
    read_protocol_and_metadata,
)
from deltalog.actions import Metadata, canonicalPathKey, decodePath, isAbsoluteUri
from deltalog.exceptions import ActionParseError, CorruptLogFileError, StateRecoverError, TableNotFoundError
from deltalog.protocol import Protocol

__all__ = ["HistoryEntry", "table_history", "table_detail", "history_row", "feature_names",
           "HISTORY_COLUMNS", "DETAIL_COLUMNS", "ICT_ENABLE_KEY", "ICT_ENABLEMENT_VERSION_KEY"]

ICT_ENABLE_KEY = "delta.enableInCommitTimestamps"
ICT_ENABLEMENT_VERSION_KEY = "delta.inCommitTimestampEnablementVersion"

#: delta-spark's ``DESCRIBE HISTORY`` columns, in its order.
HISTORY_COLUMNS = ("version", "timestamp", "userId", "userName", "operation", "operationParameters", "job",
                   "notebook", "clusterId", "readVersion", "isolationLevel", "isBlindAppend", "operationMetrics",
                   "userMetadata", "engineInfo")
#: delta-spark's ``DESCRIBE DETAIL`` columns, in its order.
DETAIL_COLUMNS = ("format", "id", "name", "description", "location", "createdAt", "lastModified",
                  "partitionColumns", "clusteringColumns", "numFiles", "sizeInBytes", "properties",
                  "minReaderVersion", "minWriterVersion", "tableFeatures", "statistics")
_JOB_FIELDS = ("jobId", "jobName", "jobRunId", "runId", "jobOwnerId", "triggerType")
_NOTEBOOK_FIELDS = ("notebookId",)
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


@dataclass(frozen=True)
class HistoryEntry:
    """One commit: its version, commit timestamp (ms since the epoch) and ``commitInfo`` (None: none)."""

    version: int
    timestamp_ms: int
    commit_info: Optional[Dict[str, Any]]

    def row(self) -> Dict[str, Any]:
        """The ``DESCRIBE HISTORY`` row of this commit (see :func:`history_row`)."""
        return history_row(self)


# ------------------------------------------------------------------------------- history
def table_history(path: "str | os.PathLike[str]", limit: Optional[int] = None) -> List[HistoryEntry]:
    """The commits of the table at ``path``, newest first (at most ``limit``: the newest ones)."""
    if limit is not None:
        if isinstance(limit, bool) or int(limit) != limit or limit < 0:
            raise ValueError(f"history limit must be >= 0, got {limit}")
        limit = int(limit)
    root, log_dir, commits, mtimes, _ = _list_log(path)
    if not commits:
        raise TableNotFoundError("DELTA_TABLE_NOT_FOUND",
                                 f"{root} is not a Delta table: {log_dir} contains no commits. "
                                 f"Check the path, or create the table first.")
    versions = sorted(commits)
    first_ict = _first_ict_version(root, commits[versions[-1]])
    chosen = versions[::-1] if limit is None else versions[::-1][:limit]
    # Monotonized modification times of the versions before the first ICT version (stat data only).
    adjusted: Dict[int, int] = {}
    if chosen and (first_ict is None or chosen[-1] < first_ict):
        prev: Optional[int] = None
        for v in versions:
            if first_ict is not None and v >= first_ict:
                break
            m = mtimes[v]
            adj = prev + 1 if prev is not None and m <= prev else m
            adjusted[v] = adj
            prev = adj
    out: List[HistoryEntry] = []
    for v in chosen:
        info = commit_info_of(commits[v], root)
        if first_ict is not None and v >= first_ict:
            ts = _long(info.get("inCommitTimestamp")) if info is not None else None
            if ts is None:
                raise CorruptLogFileError(
                    "DELTA_CORRUPT_LOG_FILE",
                    f"Log file {commits[v]} is corrupt: in-commit timestamps are enabled from version "
                    f"{first_ict} but commit {v} has no commitInfo.inCommitTimestamp. Restore it from a backup "
                    f"or remove the damaged checkpoint.")
        else:
            ts = adjusted[v]
        out.append(HistoryEntry(v, ts, info))
    return out


def _first_ict_version(root: str, newest_commit: str) -> Optional[int]:
    """First version whose commit timestamp is its in-commit timestamp (None: not used)."""
    if not _starts_with_ict(newest_commit):
        return None
    conf = read_protocol_and_metadata(root).metadata.configuration or {}
    return _ict_first_version(conf)


def _ict_first_version(conf: Dict[str, str]) -> Optional[int]:
    enabled = str(conf.get(ICT_ENABLE_KEY, "")).strip().lower() == "true"
    if not enabled:
        return None
    try:
        return int(str(conf.get(ICT_ENABLEMENT_VERSION_KEY)).strip())
    except ValueError:
        return 0  # absent or not a number: ICT since the table's creation


def _starts_with_ict(commit: str) -> bool:
    """True when the commit's first line is a ``commitInfo`` with ``inCommitTimestamp``, or when
    that cannot be told (empty or unreadable file: the metadata decides), as the engine checks."""
    try:
        with open(commit, "rb") as f:
            first = f.readline()
    except OSError:
        return True
    if not first:
        return True
    if b"inCommitTimestamp" not in first:
        return False
    try:
        obj = json.loads(first.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    body = obj.get("commitInfo") if isinstance(obj, dict) else None
    return isinstance(body, dict) and _long(body.get("inCommitTimestamp")) is not None


def commit_info_of(file: str, table: str = "") -> Optional[Dict[str, Any]]:
    """The ``commitInfo`` of one commit file (usually its first line; None when it has none)."""
    if not os.path.exists(file):
        raise TableNotFoundError("DELTA_TABLE_NOT_FOUND",
                                 f"{table or file} is not a Delta table: commit file {file} is gone. "
                                 f"Check the path, or create the table first.")
    for _, obj in _read_commit(file):
        body = obj.get("commitInfo")
        if isinstance(body, dict):
            return body
    return None


def _parse_line(raw: bytes, file: str, number: int) -> Optional[Dict[str, Any]]:
    """One log line as a dict holding exactly one known action (None for an unknown action)."""
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ActionParseError(file, number, "<line>", f"invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ActionParseError(file, number, "<line>", "a log line must be a JSON object")
    known = [k for k in obj if k in _KNOWN_ACTIONS]
    if len(known) > 1:
        raise ActionParseError(file, number, "<line>", "a log line must have exactly one top-level "
                               f"key (the action type), found {len(obj)}")
    if not known:
        return None
    return {known[0]: obj[known[0]]}


def _long(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) and _LONG_MIN <= v <= _LONG_MAX else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


def _string_map(v: Any) -> Optional[Dict[str, Optional[str]]]:
    """An object as a string map: strings as they are, null as None, other values as compact JSON."""
    if not isinstance(v, dict):
        return None
    return {k: (x if isinstance(x, str) or x is None else json.dumps(x, separators=(",", ":"), ensure_ascii=False))
            for k, x in v.items()}


def history_row(entry: HistoryEntry) -> Dict[str, Any]:
    """The ``DESCRIBE HISTORY`` row of a commit: :data:`HISTORY_COLUMNS` in order, ``timestamp``
    in ms since the epoch, fields of the wrong type in ``commitInfo`` as None (as the engine reads them)."""
    c = entry.commit_info or {}

    def struct(v: Any, fields: Tuple[str, ...]) -> Optional[Dict[str, Optional[str]]]:
        m = _string_map(v)
        return None if m is None else {f: m.get(f) for f in fields}

    blind = c.get("isBlindAppend")
    return {
        "version": entry.version,
        "timestamp": entry.timestamp_ms,
        "userId": _str(c.get("userId")),
        "userName": _str(c.get("userName")),
        "operation": _str(c.get("operation")),
        "operationParameters": _string_map(c.get("operationParameters")),
        "job": struct(c.get("job"), _JOB_FIELDS),
        "notebook": struct(c.get("notebook"), _NOTEBOOK_FIELDS),
        "clusterId": _str(c.get("clusterId")),
        "readVersion": _long(c.get("readVersion")),
        "isolationLevel": _str(c.get("isolationLevel")),
        "isBlindAppend": blind if isinstance(blind, bool) else None,
        "operationMetrics": _string_map(c.get("operationMetrics")),
        "userMetadata": _str(c.get("userMetadata")),
        "engineInfo": _str(c.get("engineInfo")),
    }


# ------------------------------------------------------------------------------- detail
def feature_names(p: Protocol) -> List[str]:
    """Implied and listed feature names (case-insensitively distinct), sorted, as ``DESCRIBE DETAIL``."""
    implied = sorted(f.name for f in p.implicitlySupportedFeatures)
    listed = sorted(p.readerAndWriterFeatureNames, key=str.lower)
    out: List[str] = []
    for n in implied + listed:
        if not any(n.lower() == o.lower() for o in out):
            out.append(n)
    return sorted(out)


def table_detail(path: "str | os.PathLike[str]") -> Dict[str, Any]:
    """The ``DESCRIBE DETAIL`` row of the table's latest version: :data:`DETAIL_COLUMNS` in order,
    ``createdAt`` / ``lastModified`` in ms since the epoch (``createdAt`` None when unknown)."""
    seg = _latest_segment(path)
    live: Dict[str, Tuple[int, Optional[int]]] = {}
    domains: Dict[str, Dict[str, Any]] = {}
    if seg.checkpoint is not None:
        _replay_checkpoint(seg.log_dir, seg.checkpoint, live, domains)
    protocol_body: Optional[Tuple[Any, str, int]] = None
    metadata_body: Optional[Tuple[Any, str, int]] = None
    latest_info: Optional[Dict[str, Any]] = None
    for v in range(seg.base, seg.latest + 1):
        file = seg.commits[v]
        for number, action in _read_commit(file):
            name, body = next(iter(action.items()))
            if name == "add" or name == "remove":
                if not isinstance(body, dict) or not isinstance(body.get("path"), str):
                    raise ActionParseError(file, number, f"{name}.path", "missing or not a string")
                k = _file_key(body)
                if name == "add":
                    live[k] = _live_entry(body)
                else:
                    live.pop(k, None)
            elif name == "domainMetadata" and isinstance(body, dict) and isinstance(body.get("domain"), str):
                domains.pop(body["domain"], None)
                if body.get("removed") is not True:
                    domains[body["domain"]] = body
            elif name == "metaData":
                metadata_body = (body, file, number)
            elif name == "protocol":
                protocol_body = (body, file, number)
            elif name == "commitInfo" and v == seg.latest and latest_info is None and isinstance(body, dict):
                latest_info = body
    protocol = _protocol_from_body(*protocol_body) if protocol_body else None
    metadata = _metadata_from_body(*metadata_body) if metadata_body else None
    if (protocol is None or metadata is None) and seg.checkpoint is not None:
        p, m = _read_checkpoint(seg.checkpoint, protocol is None, metadata is None)
        protocol = protocol or p
        metadata = metadata or m
    if protocol is None or metadata is None:
        what = "protocol" if protocol is None else "metaData"
        raise StateRecoverError(
            "DELTA_STATE_RECOVER_ERROR",
            f"Table {seg.root} at version {seg.latest}: the log has no {what} action; the log is corrupt. "
            f"Restore the missing log files from a backup.")
    return {
        "format": "delta",
        "id": metadata.id,
        "name": None,
        "description": metadata.description,
        "location": "file:" + seg.root,
        "createdAt": metadata.createdTime,
        "lastModified": _snapshot_timestamp(seg, metadata, latest_info),
        "partitionColumns": list(metadata.partitionColumns or []),
        "clusteringColumns": _clustering_columns(domains.get("delta.clustering")),
        "numFiles": len(live),
        "sizeInBytes": sum(size for size, _ in live.values()),
        "properties": dict(metadata.configuration or {}),
        "minReaderVersion": protocol.minReaderVersion,
        "minWriterVersion": protocol.minWriterVersion,
        "tableFeatures": feature_names(protocol),
        "statistics": {"numDeletionVectors": sum(1 for _, dv in live.values() if dv is not None),
                       "numRowsDeletedByDeletionVectors": sum(dv or 0 for _, dv in live.values())},
    }


def _live_entry(add: Dict[str, Any]) -> Tuple[int, Optional[int]]:
    """(size, deletion-vector cardinality or None) of a live file's add action."""
    size = add.get("size")
    dv = add.get("deletionVector")
    card = dv.get("cardinality") if isinstance(dv, dict) else None
    return (size if isinstance(size, int) and not isinstance(size, bool) else 0,
            (card if isinstance(card, int) and not isinstance(card, bool) else 0) if isinstance(dv, dict) else None)


def _snapshot_timestamp(seg: Any, metadata: Metadata, latest_info: Optional[Dict[str, Any]]) -> int:
    """The latest version's commit timestamp as the engine's snapshot has it: its in-commit
    timestamp when enabled, else the modification time of the newest commit file replayed (of the
    checkpoint's files when no commit follows the checkpoint)."""
    if seg.latest >= seg.base:
        last_modified = seg.mtimes[seg.latest]
    else:
        last_modified = max(os.stat(f).st_mtime_ns // 1_000_000 for f in seg.checkpoint.files)
    if _ict_first_version(metadata.configuration or {}) is None:
        return last_modified
    if latest_info is None and seg.latest in seg.commits:
        latest_info = commit_info_of(seg.commits[seg.latest], seg.root)
    ict = _long((latest_info or {}).get("inCommitTimestamp"))
    return ict if ict is not None else last_modified


def _clustering_columns(domain: Optional[Dict[str, Any]]) -> List[str]:
    if domain is None:
        return []
    try:
        cols = json.loads(domain.get("configuration"))["clusteringColumns"]
    except (TypeError, ValueError, KeyError):
        return []
    if not isinstance(cols, list):
        return []
    return [".".join(_text(p) for p in c) if isinstance(c, list) else _text(c) for c in cols]


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _read_commit(file: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    try:
        with open(file, "rb") as f:
            for number, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                obj = _parse_line(raw, file, number)
                if obj is not None:
                    yield number, obj
    except OSError as e:
        raise CorruptLogFileError("DELTA_CORRUPT_LOG_FILE", f"{file} cannot be read: {e}") from None


def _path_key(path: str) -> str:
    """The engine's reconciliation key of a stored path on the local file system: relative paths
    decoded and re-encoded; ``file:`` URIs without authority and plain absolute paths compare equal."""
    if not path:
        return path
    if path[0] == "/" or not isAbsoluteUri(path):
        return canonicalPathKey(path)
    colon = path.index(":")
    scheme, rest = path[:colon].lower(), path[colon + 1:]
    auth: Optional[str] = None
    if rest.startswith("//"):
        slash = rest.find("/", 2)
        auth = rest[2:] if slash < 0 else rest[2:slash]
        rest = "/" if slash < 0 else rest[slash:]
    auth = auth or None
    canon = canonicalPathKey(rest)
    if scheme == "file" and auth is None:
        return canon
    return f"{scheme}:{canon}" if auth is None else f"{scheme}://{auth}{canon}"


def _dv_id(dv: Any) -> Optional[str]:
    if not isinstance(dv, dict):
        return None
    st, p = dv.get("storageType"), dv.get("pathOrInlineDv")
    if st is None and p is None:
        return None
    base = f"{st or ''}{p or ''}"
    off = dv.get("offset")
    return base if off is None else f"{base}@{off}"


def _file_key(body: Dict[str, Any]) -> str:
    k = _path_key(body["path"])
    dv = _dv_id(body.get("deletionVector"))
    return k if dv is None else k + "\u0000" + dv


# ------------------------------------------------------------------------------- checkpoints
def _replay_checkpoint(log_dir: str, cp: _Checkpoint, live: Dict[str, Tuple[int, Optional[int]]],
                       domains: Dict[str, Dict[str, Any]]) -> None:
    """The live files (key -> (size, DV cardinality)) and domains of a checkpoint; sidecars are followed."""
    sidecars: List[str] = []
    for file in cp.files:
        if file.endswith(".json"):
            for _, action in _read_commit(file):
                name, body = next(iter(action.items()))
                if name == "add" and isinstance(body, dict) and isinstance(body.get("path"), str):
                    live[_file_key(body)] = _live_entry(body)
                elif name == "domainMetadata" and isinstance(body, dict) and isinstance(body.get("domain"), str):
                    if body.get("removed") is not True:
                        domains[body["domain"]] = body
                elif name == "sidecar" and isinstance(body, dict) and isinstance(body.get("path"), str):
                    sidecars.append(body["path"])
        else:
            sidecars += _parquet_checkpoint_part(file, live, domains, top_level=True)
    for s in sidecars:
        _parquet_checkpoint_part(_sidecar_file(log_dir, s), live, domains, top_level=False)


def _sidecar_file(log_dir: str, path: str) -> str:
    """A sidecar's file: ``sidecar.path`` is relative to ``_delta_log/_sidecars`` (URI-encoded) or absolute."""
    if isAbsoluteUri(path):
        return local_table_path(path)
    try:
        raw = decodePath(path)
    except ValueError:
        raw = path
    return os.path.join(log_dir, "_sidecars", raw)


def _parquet_checkpoint_part(file: str, live: Dict[str, Tuple[int, Optional[int]]], domains: Dict[str, Dict[str, Any]],
                             top_level: bool) -> List[str]:
    """Reads the add (path, size, deletion vector id), domainMetadata and sidecar columns of one
    Parquet checkpoint file or sidecar; returns the sidecar paths it names."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        pf = pq.ParquetFile(file)
        schema = pf.schema_arrow
        cols: List[str] = []
        add_type = schema.field("add").type if "add" in schema.names else None
        if isinstance(add_type, pa.StructType):
            add_fields = {add_type.field(i).name: add_type.field(i).type for i in range(add_type.num_fields)}
            cols += [f"add.{c}" for c in ("path", "size") if c in add_fields]
            dv_type = add_fields.get("deletionVector")
            if isinstance(dv_type, pa.StructType):
                dv_names = {dv_type.field(i).name for i in range(dv_type.num_fields)}
                cols += [f"add.deletionVector.{c}" for c in ("storageType", "pathOrInlineDv", "offset", "cardinality")
                         if c in dv_names]
        if top_level:
            cols += [c for c in ("domainMetadata", "sidecar") if c in schema.names]
        if not cols:
            return []
        table = pf.read(columns=cols)
        rows = table.to_pylist()
    except FileNotFoundError as e:
        raise _damaged_checkpoint(file, f"is missing ({e})") from None
    except (OSError, ValueError) as e:  # pyarrow.ArrowInvalid is a ValueError
        raise _damaged_checkpoint(file, f"cannot be read: {e}") from None
    sidecars: List[str] = []
    for row in rows:
        add = row.get("add")
        if isinstance(add, dict) and isinstance(add.get("path"), str):
            live[_file_key(add)] = _live_entry(add)
        d = row.get("domainMetadata")
        if isinstance(d, dict) and isinstance(d.get("domain"), str) and d.get("removed") is not True:
            domains[d["domain"]] = d
        s = row.get("sidecar")
        if isinstance(s, dict) and isinstance(s.get("path"), str):
            sidecars.append(s["path"])
    return sidecars
