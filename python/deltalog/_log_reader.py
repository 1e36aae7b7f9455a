"""The latest protocol and metadata of a table, read from its ``_delta_log`` in pure Python.

No JVM: used by the ``deltalog protocol`` command and the protocol advisor. Only the two actions
the advisor needs are read:

1. list ``_delta_log/`` once (``_last_checkpoint`` is only a hint and may be stale, empty or
   point at a deleted checkpoint);
2. take the newest *complete* checkpoint (classic, multi-part with every part present, or
   UUID-named V2) and the commits after it, which must be contiguous;
3. scan those commits newest-first for ``protocol`` and ``metaData`` (the last one of each wins);
4. whatever is still missing comes from the checkpoint's top-level ``protocol`` / ``metaData``
   rows (Parquet through pyarrow, or JSON lines for a JSON V2 checkpoint; sidecars hold file
   actions only, so they are never opened).

Errors are the engine's: ``TableNotFoundError`` (no log, or a log with no commit/checkpoint),
``VersionNotContiguousError`` (commits missing after the checkpoint), ``StateRecoverError``
(no protocol or no metadata), ``ActionParseError`` / ``CorruptLogFileError`` (unreadable files).
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import unquote, urlparse

from deltalog.actions import Metadata
from deltalog.exceptions import (
    ActionParseError,
    CorruptLogFileError,
    DeltalogError,
    StateRecoverError,
    TableNotFoundError,
    VersionNotContiguousError,
)
from deltalog.protocol import Protocol

__all__ = ["TableProtocolState", "read_protocol_and_metadata", "local_table_path"]

_COMMIT = re.compile(r"^(\d+)\.json$")
_CLASSIC = re.compile(r"^(\d+)\.checkpoint\.parquet$")
_MULTI = re.compile(r"^(\d+)\.checkpoint\.(\d+)\.(\d+)\.parquet$")
_UUID = re.compile(r"^(\d+)\.checkpoint\.([^.]+)\.(json|parquet)$")
# The action names of the protocol: a line's keys outside them are unknown actions, which readers
# ignore (io.deltalog.log.CommitReader's KnownActions).
_KNOWN_ACTIONS = frozenset({"add", "remove", "metaData", "protocol", "commitInfo", "cdc", "txn",
                            "domainMetadata", "checkpointMetadata", "sidecar"})


@dataclass(frozen=True)
class TableProtocolState:
    """The protocol and metadata of a table at ``version`` (its latest version)."""

    path: str
    version: int
    protocol: Protocol
    metadata: Metadata
    protocolSource: str
    metadataSource: str


@dataclass(frozen=True)
class _Checkpoint:
    version: int
    files: Tuple[str, ...]
    rank: Tuple[int, int, str]  # (format: 0 classic / 1 multi-part / 2 uuid, parts, first name)


def local_table_path(path: "str | os.PathLike[str]") -> str:
    """A local file-system path for ``path`` (a plain path or a ``file:`` URI).

    Raises DeltalogError(``DELTALOG_UNSUPPORTED_PATH``) for other schemes: the pure-Python reader
    only reads local tables; open remote ones with ``DeltaTable.forPath(spark, ...)``.
    """
    text = os.fspath(path)
    parsed = urlparse(text)
    if parsed.scheme in ("", "file") or (len(parsed.scheme) == 1 and os.name == "nt"):
        local = unquote(parsed.path) if parsed.scheme == "file" else text
        return os.path.abspath(os.path.expanduser(local))
    raise DeltalogError(
        "DELTALOG_UNSUPPORTED_PATH",
        f"{text}: the pure-Python log reader only reads local tables (plain paths or file: URIs); "
        f"open {parsed.scheme}:// tables with DeltaTable.forPath(spark, path).explainProtocol().")


@dataclass(frozen=True)
class _Segment:
    """The files that reconstruct a table's latest version, from one listing of ``_delta_log``."""

    root: str
    log_dir: str
    commits: Dict[int, str]            # every listed commit file, by version
    mtimes: Dict[int, int]             # modification time (ms) of each listed commit file
    checkpoint: Optional[_Checkpoint]  # the newest complete checkpoint at or below ``latest``
    latest: int

    @property
    def base(self) -> int:
        """First commit version replayed after the checkpoint."""
        return self.checkpoint.version + 1 if self.checkpoint else 0


def _missing_log(root: str, log_dir: str) -> TableNotFoundError:
    return TableNotFoundError(
        "DELTA_TABLE_NOT_FOUND",
        f"{root} is not a Delta table: {log_dir} does not exist. Check the path.")


def _list_log(path: "str | os.PathLike[str]") -> Tuple[str, str, Dict[int, str], Dict[int, int], List[_Checkpoint]]:
    """``(root, log_dir, commits, commit mtimes, complete checkpoints)`` from one listing."""
    root = local_table_path(path)
    log_dir = os.path.join(root, "_delta_log")
    if not os.path.isdir(log_dir):
        raise _missing_log(root, log_dir)
    mtimes: Dict[int, int] = {}
    try:
        commits, checkpoints = _list(log_dir, mtimes)
    except FileNotFoundError:
        raise _missing_log(root, log_dir) from None
    return root, log_dir, commits, mtimes, checkpoints


def _latest_segment(path: "str | os.PathLike[str]") -> _Segment:
    """The newest complete checkpoint and the contiguous commits after it (one listing)."""
    root, log_dir, commits, mtimes, checkpoints = _list_log(path)
    if not commits and not checkpoints:
        raise TableNotFoundError(
            "DELTA_TABLE_NOT_FOUND",
            f"{root} is not a Delta table: {log_dir} contains no commit or checkpoint files.")
    latest = max(list(commits) + [c.version for c in checkpoints])
    checkpoint = _choose_checkpoint(checkpoints, latest, _last_checkpoint_hint(log_dir))
    base = checkpoint.version + 1 if checkpoint else 0
    missing = [v for v in range(base, latest + 1) if v not in commits]
    if missing:
        shown = ", ".join(str(v) for v in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise VersionNotContiguousError(
            "DELTA_VERSIONS_NOT_CONTIGUOUS",
            f"Table {root}: commit files are missing for versions {shown} (the log is corrupt or "
            f"was partly deleted); restore them or the checkpoint that covers them.")
    return _Segment(root, log_dir, commits, mtimes, checkpoint, latest)


def read_protocol_and_metadata(path: "str | os.PathLike[str]") -> TableProtocolState:
    """Latest protocol and metadata of the table at ``path`` (see the module docstring)."""
    seg = _latest_segment(path)
    root, commits, checkpoint, latest, base = seg.root, seg.commits, seg.checkpoint, seg.latest, seg.base

    protocol: Optional[Protocol] = None
    metadata: Optional[Metadata] = None
    p_src = m_src = ""
    for v in range(latest, base - 1, -1):
        file = commits[v]
        p, m = _scan_json_lines(file, protocol is None, metadata is None)
        if protocol is None and p is not None:
            protocol, p_src = p, os.path.basename(file)
        if metadata is None and m is not None:
            metadata, m_src = m, os.path.basename(file)
        if protocol is not None and metadata is not None:
            break
    if (protocol is None or metadata is None) and checkpoint is not None:
        p, m = _read_checkpoint(checkpoint, protocol is None, metadata is None)
        name = os.path.basename(checkpoint.files[0])
        if protocol is None and p is not None:
            protocol, p_src = p, name
        if metadata is None and m is not None:
            metadata, m_src = m, name
    if protocol is None or metadata is None:
        what = "protocol" if protocol is None else "metaData"
        raise StateRecoverError(
            "DELTA_STATE_RECOVER_ERROR",
            f"Table {root} at version {latest}: the log has no {what} action"
            + (f" (checkpoint {os.path.basename(checkpoint.files[0])} and the commits after it)"
               if checkpoint else " (commits 0.." + str(latest) + ")")
            + "; the log is corrupt. Restore the missing log files from a backup.")
    return TableProtocolState(root, latest, protocol, metadata, p_src, m_src)


# ------------------------------------------------------------------------------- listing
def _list(log_dir: str, mtimes: Optional[Dict[int, int]] = None) -> Tuple[Dict[int, str], List[_Checkpoint]]:
    """Commit files by version and complete checkpoints; fills ``mtimes`` (when given) with the
    modification time in ms of each commit file kept."""
    commits: Dict[int, str] = {}
    multi: Dict[Tuple[int, int], Dict[int, str]] = {}
    found: List[_Checkpoint] = []
    with os.scandir(log_dir) as it:
        entries = [(e.name, e.path, e.stat()) for e in it if e.is_file()]
    for name, full, st in entries:
        size = st.st_size
        m = _COMMIT.match(name)
        if m:
            v = int(m.group(1))
            # Duplicate names for one version ("1.json" and "000...01.json"): keep the padded one.
            if v not in commits or len(name) > len(os.path.basename(commits[v])):
                commits[v] = full
                if mtimes is not None:
                    mtimes[v] = st.st_mtime_ns // 1_000_000
            continue
        if size == 0:
            continue  # a zero-length checkpoint is an interrupted write
        m = _CLASSIC.match(name)
        if m:
            found.append(_Checkpoint(int(m.group(1)), (full,), (0, 1, name)))
            continue
        m = _MULTI.match(name)
        if m:
            v, part, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if 1 <= part <= n:
                multi.setdefault((v, n), {})[part] = full
            continue
        m = _UUID.match(name)
        if m:
            found.append(_Checkpoint(int(m.group(1)), (full,), (2, 1, name)))
    for (v, n), parts in multi.items():
        if len(parts) == n:
            files = tuple(parts[i] for i in range(1, n + 1))
            found.append(_Checkpoint(v, files, (1, n, os.path.basename(files[0]))))
    return commits, found


def _last_checkpoint_hint(log_dir: str) -> Optional[int]:
    try:
        with open(os.path.join(log_dir, "_last_checkpoint"), "rb") as f:
            body = json.loads(f.read().decode("utf-8"))
        v = body.get("version") if isinstance(body, dict) else None
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    except (OSError, ValueError):
        return None  # absent, empty or corrupt: fall back to the listing


def _choose_checkpoint(found: List[_Checkpoint], latest: int, hint: Optional[int]) -> Optional[_Checkpoint]:
    """The newest complete checkpoint at or below ``latest`` (one per version: the greatest by
    format, parts and name, as the engine picks). The ``_last_checkpoint`` hint is only used when
    it names a complete checkpoint; a newer complete checkpoint found by listing wins."""
    best: Dict[int, _Checkpoint] = {}
    for c in found:
        if c.version <= latest and (c.version not in best or c.rank > best[c.version].rank):
            best[c.version] = c
    if not best:
        return None
    newest = max(best)
    if hint is not None and hint in best and hint >= newest:
        return best[hint]
    return best[newest]


# ------------------------------------------------------------------------------- parsing
def _metadata_from_body(body: Any, file: str, line: int) -> Metadata:
    if isinstance(body, dict) and body.get("schemaString") is None:
        # Some old writers left schemaString out; the engine still opens such tables.
        m = Metadata.fromJsonDict(_drop_nulls({**body, "schemaString": ""}))
        return dataclasses.replace(m, schemaString=None)  # type: ignore[arg-type]
    try:
        return Metadata.fromJsonDict(_drop_nulls(body) if isinstance(body, dict) else body)
    except ActionParseError as e:
        raise ActionParseError(file, line, e.field, e.reason) from None


def _protocol_from_body(body: Any, file: str, line: int) -> Protocol:
    try:
        return Protocol.fromJsonDict(_drop_nulls(body) if isinstance(body, dict) else body)
    except ActionParseError as e:
        raise ActionParseError(file, line, e.field, e.reason) from None


def _drop_nulls(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _scan_json_lines(file: str, want_p: bool, want_m: bool) -> Tuple[Optional[Protocol], Optional[Metadata]]:
    """The protocol and metaData actions of one JSON log file (only candidate lines are parsed)."""
    p: Optional[Protocol] = None
    m: Optional[Metadata] = None
    try:
        with open(file, "rb") as f:
            for number, raw in enumerate(f, start=1):
                if raw.startswith((b'{"add":{', b'{"remove":{')):
                    continue  # a file action whatever follows (the engine's metadata scan skips it too)
                # A key can only appear literally or spelled with escapes (quotes inside strings
                # are escaped), as the engine's line filter assumes.
                if not ((want_p and b'"protocol"' in raw) or (want_m and b'"metaData"' in raw) or b"\\u" in raw):
                    continue
                try:
                    obj = json.loads(raw.decode("utf-8"))
                except (ValueError, UnicodeDecodeError) as e:
                    raise ActionParseError(file, number, "<line>", f"invalid JSON: {e}") from None
                if not isinstance(obj, dict):
                    continue
                # As the engine reads a line: several keys of which one is a known action mean
                # that action (the others are unknown actions); two known actions are an error.
                known = [k for k in obj if k in _KNOWN_ACTIONS]
                if len(known) > 1:
                    raise ActionParseError(file, number, "<line>", "a log line must have exactly one top-level "
                                           f"key (the action type), found {len(obj)}")
                if not known:
                    continue
                name, body = known[0], obj[known[0]]
                if name == "protocol" and want_p:
                    p = _protocol_from_body(body, file, number)
                elif name == "metaData" and want_m:
                    m = _metadata_from_body(body, file, number)
    except OSError as e:
        raise CorruptLogFileError("DELTA_CORRUPT_LOG_FILE", f"{file} cannot be read: {e}") from None
    return p, m


def _read_checkpoint(cp: _Checkpoint, want_p: bool, want_m: bool) -> Tuple[Optional[Protocol], Optional[Metadata]]:
    p: Optional[Protocol] = None
    m: Optional[Metadata] = None
    for file in cp.files:
        if file.endswith(".json"):
            fp, fm = _scan_json_lines(file, want_p and p is None, want_m and m is None)
        else:
            fp, fm = _read_parquet_checkpoint(file, want_p and p is None, want_m and m is None)
        p = p or fp
        m = m or fm
        if (p is not None or not want_p) and (m is not None or not want_m):
            break
    return p, m


def _damaged_checkpoint(file: str, detail: str) -> CorruptLogFileError:
    return CorruptLogFileError("DELTA_CORRUPT_LOG_FILE",
                               f"checkpoint {file} {detail}. Delete it (and fix _last_checkpoint) so "
                               f"readers fall back to an older checkpoint.")


def _read_parquet_checkpoint(file: str, want_p: bool, want_m: bool) -> Tuple[Optional[Protocol], Optional[Metadata]]:
    import pyarrow.parquet as pq
    try:
        pf = pq.ParquetFile(file)
        names = set(pf.schema_arrow.names)
        cols = [c for c, want in (("protocol", want_p), ("metaData", want_m)) if want and c in names]
        if not cols:
            return None, None
        table = pf.read(columns=cols)
    except (OSError, ValueError) as e:  # pyarrow.ArrowInvalid is a ValueError
        raise _damaged_checkpoint(file, f"cannot be read: {e}") from None
    p: Optional[Protocol] = None
    m: Optional[Metadata] = None
    try:
        protocols = table.column("protocol").to_pylist() if "protocol" in cols else []
        metadatas = table.column("metaData").to_pylist() if "metaData" in cols else []
    except UnicodeDecodeError as e:  # pyarrow does not validate UTF-8 when it reads, only here
        raise _damaged_checkpoint(file, f"holds a string that is not UTF-8 ({e})") from None
    for row, body in enumerate(protocols, start=1):
        if body is not None:
            p = _protocol_from_body(body, file, row)
            break
    for row, body in enumerate(metadatas, start=1):
        if body is not None:
            m = _metadata_from_body(_arrow_metadata(body), file, row)
            break
    return p, m


def _arrow_map(value: Any) -> Any:
    """pyarrow renders Parquet maps as lists of (key, value) pairs; the log uses JSON objects."""
    if isinstance(value, list):
        return {k: v for k, v in value}
    return value


def _arrow_metadata(body: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(body)
    if "configuration" in out:
        out["configuration"] = _arrow_map(out["configuration"])
    fmt = out.get("format")
    if isinstance(fmt, dict):
        fmt = _drop_nulls({**fmt, "options": _arrow_map(fmt.get("options"))})
        out["format"] = fmt
    return out
