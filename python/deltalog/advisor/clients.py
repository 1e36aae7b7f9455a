"""The client-support table (``deltalog/data/client_support.json``) as typed objects.

Each client (delta-spark, Databricks Runtime, delta-rs, Delta Kernel Java / Rust, DuckDB, Polars,
Trino) has version rows; a row holds from its version until the next row. Every row names its
``source`` and a ``certainty`` (see the JSON's ``semantics``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

from deltalog.exceptions import DeltalogError
from deltalog.protocol import ClientCapabilities

__all__ = ["ClientVersion", "Client", "load_clients", "client", "DATA_FILE"]

DATA_FILE = "client_support.json"


@dataclass(frozen=True)
class ClientVersion:
    """One row: what a client version supports. ``writerFeatures`` None = the client does not write."""

    client: str
    version: str
    maxReaderVersion: int
    maxWriterVersion: int
    readerFeatures: FrozenSet[str]
    writerFeatures: Optional[FrozenSet[str]]
    source: str
    certainty: str
    released: Optional[str] = None
    notes: str = ""
    caveats: Mapping[str, str] = field(default_factory=dict)
    coverage: Optional[FrozenSet[str]] = None

    def covers(self, feature: str) -> bool:
        """Whether the row's source says anything about ``feature`` (False = support unknown)."""
        return self.coverage is None or feature.lower() in {c.lower() for c in self.coverage}

    @property
    def writes(self) -> bool:
        return self.writerFeatures is not None

    def capabilities(self) -> ClientCapabilities:
        """The row as the ``ClientCapabilities`` the protocol rules check against."""
        return ClientCapabilities(self.maxReaderVersion, self.maxWriterVersion, self.readerFeatures,
                                  self.writerFeatures if self.writerFeatures is not None else frozenset())

    @property
    def label(self) -> str:
        return f"{self.client} {self.version}"


@dataclass(frozen=True)
class Client:
    """A client and its version rows, oldest first (``latest`` is the last one)."""

    id: str
    name: str
    notes: str
    versions: Tuple[ClientVersion, ...]

    @property
    def latest(self) -> ClientVersion:
        return self.versions[-1]


def _row(client_id: str, d: Mapping[str, Any]) -> ClientVersion:
    w = d.get("writerFeatures")
    return ClientVersion(client_id, str(d["version"]), int(d["maxReaderVersion"]), int(d["maxWriterVersion"]),
                         frozenset(d.get("readerFeatures") or ()), None if w is None else frozenset(w),
                         str(d["source"]), str(d.get("certainty", "medium")), d.get("released"),
                         str(d.get("notes", "")), dict(d.get("caveats") or {}),
                         None if d.get("coverage") is None else frozenset(d["coverage"]))


def parse_clients(doc: Mapping[str, Any]) -> Tuple[Client, ...]:
    """Clients from the JSON document (``{"clients": [...]}``); every row must have a source."""
    out: List[Client] = []
    for c in doc.get("clients", []):
        rows = []
        for d in c.get("versions", []):
            if not d.get("source"):
                raise DeltalogError("DELTALOG_INVALID_CLIENT_DATA",
                                    f"client {c.get('id')} version {d.get('version')} has no source")
            rows.append(_row(c["id"], d))
        if not rows:
            raise DeltalogError("DELTALOG_INVALID_CLIENT_DATA", f"client {c.get('id')} has no version rows")
        out.append(Client(str(c["id"]), str(c.get("name", c["id"])), str(c.get("notes", "")), tuple(rows)))
    return tuple(out)


@lru_cache(maxsize=1)
def _packaged() -> Tuple[Client, ...]:
    text = resources.files("deltalog").joinpath("data").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_clients(json.loads(text))


def deltalog_client() -> Client:
    """deltalog itself, from ``ClientCapabilities.deltalog()`` (what its engine checks before it
    reads a table or commits to it)."""
    from deltalog import __version__
    caps = ClientCapabilities.deltalog()
    row = ClientVersion("deltalog", __version__, caps.maxReaderVersion, caps.maxWriterVersion,
                        frozenset(caps.readerFeatures), frozenset(caps.writerFeatures),
                        "deltalog.protocol.ClientCapabilities.deltalog() (io.deltalog.protocol.ClientCapabilities)",
                        "high", None, "The engine refuses to read or commit to a table needing more.")
    return Client("deltalog", "deltalog (this library)", "Computed from the running library, not from the data file.",
                  (row,))


def load_clients(path: Optional[str] = None, include_deltalog: bool = True) -> Tuple[Client, ...]:
    """The packaged client table (or the one at ``path``, same format), followed by deltalog
    itself unless ``include_deltalog`` is False."""
    if path is None:
        clients = _packaged()
    else:
        with open(path, encoding="utf-8") as f:
            clients = parse_clients(json.load(f))
    return clients + ((deltalog_client(),) if include_deltalog else ())


def client(client_id: str, clients: Optional[Tuple[Client, ...]] = None) -> Client:
    """One client by id (case-insensitive); DeltalogError naming the known ids otherwise."""
    cs = clients if clients is not None else load_clients()
    for c in cs:
        if c.id.lower() == client_id.lower():
            return c
    raise DeltalogError("DELTALOG_UNKNOWN_CLIENT",
                        f"unknown client '{client_id}'; known clients: {', '.join(c.id for c in cs)}")


def raw_document() -> Dict[str, Any]:
    """The packaged JSON document itself (descriptions, semantics, rows)."""
    return json.loads(resources.files("deltalog").joinpath("data").joinpath(DATA_FILE).read_text(encoding="utf-8"))
