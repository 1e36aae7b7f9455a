"""``compatibility(protocol)``: which clients can still read and write a table.

The verdict for each client version is ``Protocol.checkCanRead`` / ``checkCanWrite`` against the
row's ``ClientCapabilities`` (the same check deltalog runs before its own reads and commits),
so "missing features" are exactly the protocol rules' answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from deltalog.advisor.clients import Client, ClientVersion, load_clients
from deltalog.exceptions import UnsupportedTableFeatureError
from deltalog.protocol import Protocol, readerFeaturesNeeded

__all__ = ["Access", "ClientVersionVerdict", "ClientCompatibility", "CompatibilityReport", "compatibility",
           "verdict"]

OK, NO, UNKNOWN, NA = "\u2705", "\u274c", "\u2753", "n/a"


@dataclass(frozen=True)
class Access:
    """Read or write access of one client version: ``ok`` (True, False, or None = unknown: the
    only unsupported features are ones the row's source does not cover), the features it lacks,
    the features whose support is unknown, the version problem (if any) and caveats (features
    supported only under conditions). ``applicable`` is False for writes by a read-only client."""

    ok: Optional[bool]
    missing: Tuple[str, ...] = ()
    versionProblem: Optional[str] = None
    caveats: Tuple[str, ...] = ()
    applicable: bool = True
    unknown: Tuple[str, ...] = ()

    @property
    def mark(self) -> str:
        if not self.applicable:
            return NA
        return OK if self.ok else (UNKNOWN if self.ok is None else NO)

    def __str__(self) -> str:
        if not self.applicable:
            return f"{NA} (does not write Delta tables)"
        if self.ok:
            return OK + (f" (caveat: {'; '.join(self.caveats)})" if self.caveats else "")
        if self.ok is None:
            return f"{UNKNOWN} support unknown for {', '.join(self.unknown)}"
        parts = []
        if self.versionProblem:
            parts.append(self.versionProblem)
        if self.missing:
            parts.append("missing " + ", ".join(self.missing))
        return f"{NO} " + "; ".join(parts)

    def toJson(self) -> Dict[str, Any]:
        return {"ok": self.ok if self.applicable else None, "applicable": self.applicable,
                "missing": list(self.missing), "unknown": list(self.unknown),
                "versionProblem": self.versionProblem, "caveats": list(self.caveats)}


@dataclass(frozen=True)
class ClientVersionVerdict:
    """Read and write access of one client version."""

    row: ClientVersion
    read: Access
    write: Access

    def __str__(self) -> str:
        return f"{self.row.label}: read {self.read}, write {self.write}"

    def toJson(self) -> Dict[str, Any]:
        return {"version": self.row.version, "read": self.read.toJson(), "write": self.write.toJson(),
                "source": self.row.source, "certainty": self.row.certainty}


@dataclass(frozen=True)
class ClientCompatibility:
    """One client: the verdict for its latest version, every version (when asked), and the first
    listed version that can read / write the table."""

    client: Client
    latest: ClientVersionVerdict
    versions: Tuple[ClientVersionVerdict, ...]
    firstReadable: Optional[str]
    firstWritable: Optional[str]

    def __str__(self) -> str:
        c, v = self.client, self.latest
        line = f"{c.id:<19} {v.row.version:<14} read {v.read}  write {v.write}"
        extra = []
        if self.firstReadable and not v.read.ok:
            extra.append(f"(older {self.firstReadable} could read)")
        if v.read.ok and self.firstReadable and self.firstReadable != v.row.version:
            extra.append(f"reads from {self.firstReadable}")
        if v.write.applicable and v.write.ok and self.firstWritable and self.firstWritable != v.row.version:
            extra.append(f"writes from {self.firstWritable}")
        return line + ("  " + "; ".join(extra) if extra else "")

    def toJson(self) -> Dict[str, Any]:
        return {"client": self.client.id, "name": self.client.name, "latest": self.latest.toJson(),
                "versions": [v.toJson() for v in self.versions],
                "firstReadable": self.firstReadable, "firstWritable": self.firstWritable}


@dataclass(frozen=True)
class CompatibilityReport:
    """``compatibility``'s result: one entry per client."""

    protocol: Protocol
    clients: Tuple[ClientCompatibility, ...]
    allVersions: bool = False

    def client(self, client_id: str) -> ClientCompatibility:
        for c in self.clients:
            if c.client.id.lower() == client_id.lower():
                return c
        raise KeyError(client_id)

    def __str__(self) -> str:
        lines = [f"Client compatibility of protocol {self.protocol.simpleString} "
                 f"(latest listed version of each client; sources in deltalog/data/client_support.json):"]
        for c in self.clients:
            lines.append("  " + str(c))
            if self.allVersions:
                lines += [f"      {v.row.version:<14} read {v.read}, write {v.write}" for v in c.versions]
        return "\n".join(lines)

    def toJson(self) -> Dict[str, Any]:
        return {"protocol": self.protocol.toJsonDict(), "clients": [c.toJson() for c in self.clients]}


def _caveats(row: ClientVersion, names: Iterable[str]) -> Tuple[str, ...]:
    low = {k.lower(): (k, v) for k, v in row.caveats.items()}
    return tuple(f"{low[n.lower()][0]}: {low[n.lower()][1]}" for n in sorted(names) if n.lower() in low)


def _version_problem(p: Protocol, row: ClientVersion, write: bool) -> Optional[str]:
    if p.minReaderVersion > row.maxReaderVersion:
        return f"reader version {p.minReaderVersion} > {row.maxReaderVersion}"
    if write and p.minWriterVersion > row.maxWriterVersion:
        return f"writer version {p.minWriterVersion} > {row.maxWriterVersion}"
    return None


def _refused(p: Protocol, row: ClientVersion, e: UnsupportedTableFeatureError, write: bool) -> Access:
    problem = _version_problem(p, row, write)
    missing = tuple(n for n in e.unsupportedFeatures if row.covers(n))
    unknown = tuple(n for n in e.unsupportedFeatures if not row.covers(n))
    if problem is None and not missing and unknown:
        return Access(None, (), None, (), True, unknown)
    return Access(False, missing, problem, (), True, unknown)


def verdict(p: Protocol, row: ClientVersion) -> ClientVersionVerdict:
    """Read and write access of ``row`` to a table with protocol ``p`` (``checkCanRead`` /
    ``checkCanWrite`` with the row's capabilities)."""
    caps = row.capabilities()
    try:
        p.checkCanRead(caps)
        read = Access(True, caveats=_caveats(row, readerFeaturesNeeded(p)))
    except UnsupportedTableFeatureError as e:
        read = _refused(p, row, e, False)
    if not row.writes:
        write = Access(False, applicable=False)
    else:
        needed = {f.name for f in p.implicitlyAndExplicitlySupportedFeatures} | set(p.unknownFeatureNames)
        try:
            p.checkCanWrite(caps)
            write = Access(True, caveats=_caveats(row, needed))
        except UnsupportedTableFeatureError as e:
            write = _refused(p, row, e, True)
    return ClientVersionVerdict(row, read, write)


def _client_compat(p: Protocol, c: Client) -> ClientCompatibility:
    verdicts = tuple(verdict(p, row) for row in c.versions)
    first_read = next((v.row.version for v in verdicts if v.read.ok), None)
    first_write = next((v.row.version for v in verdicts if v.write.applicable and v.write.ok), None)
    return ClientCompatibility(c, verdicts[-1], verdicts, first_read, first_write)


def compatibility(protocol: Protocol, clients: Optional[Sequence[str]] = None, all_versions: bool = False,
                  client_table: Optional[Tuple[Client, ...]] = None) -> CompatibilityReport:
    """For each client (all, or the ids in ``clients``): can its latest version read and write a
    table with ``protocol``, and which features does it miss. ``all_versions`` also lists every
    version row in ``str()`` (the per-version verdicts are always in ``versions``)."""
    table = client_table if client_table is not None else load_clients()
    chosen: List[Client] = list(table)
    if clients:
        from deltalog.advisor.clients import client as find
        chosen = [find(cid, table) for cid in clients]
    return CompatibilityReport(protocol, tuple(_client_compat(protocol, c) for c in chosen), all_versions)
