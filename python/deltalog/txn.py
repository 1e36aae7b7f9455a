"""Optimistic transactions on a Delta table, committed by the deltalog engine (JVM, via py4j).

Mirrors the JVM's ``io.deltalog.txn.OptimisticTransaction`` (and delta-spark's)::

    from deltalog.tables import DeltaTable
    from deltalog.exceptions import DeltaConcurrentModificationException

    txn = DeltaTable.forPath(spark, path).startTransaction()
    files = txn.filterFiles(["date = '2024-01-01'"])      # records what this transaction read
    version = txn.commit([f.remove(now_ms) for f in files] + new_adds, "DELETE",
                         {"predicate": "date = '2024-01-01'"})

    # a table that does not exist yet
    txn = DeltaTable.createTransaction(spark, path)
    txn.updateMetadata(metadata)                         # protocol: Protocol.forNewTable(metadata)
    txn.commit([Protocol.forNewTable(metadata), *adds], "CREATE TABLE")

A commit that loses against a concurrent one raises a subclass of
:class:`deltalog.exceptions.DeltaConcurrentModificationException` (which one says why); the
transaction is then finished and a new one must be started to retry. Every action crosses to the
JVM as one newline-delimited JSON string (one py4j call per commit).
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from deltalog._jvm import call as _call
from deltalog._jvm import JvmRef, api_class
from deltalog.actions import Action, AddFile, Metadata, serializeActions
from deltalog.protocol import Protocol

__all__ = ["OptimisticTransaction"]


def _txn_api(spark: Any) -> Any:
    return api_class(spark, "TxnApi")


class OptimisticTransaction:
    """One transaction: reads a snapshot, records what it read, commits actions atomically.

    Names mirror the JVM class (``readVersion``, ``filterFiles``, ``txnVersion``, ``commit``).
    Not thread-safe; use one transaction per thread.
    """

    def __init__(self, spark: Any, handle: Any, path: str) -> None:
        self._spark = spark
        self._handle = JvmRef(handle)
        self._path = path
        self._committedVersion: Optional[int] = None

    # ------------------------------------------------------------------ creation
    @classmethod
    def forPath(cls, spark: Any, path: Union[str, "os.PathLike[str]"]) -> "OptimisticTransaction":
        """A transaction on the latest version of the existing table at ``path``."""
        p = os.fspath(path)
        return cls(spark, _call(_txn_api(spark).start, p), p)

    @classmethod
    def forNewTable(cls, spark: Any, path: Union[str, "os.PathLike[str]"]) -> "OptimisticTransaction":
        """A transaction on ``path`` whether or not a table exists there (``readVersion() == -1``
        when it does not; the commit must then carry metadata and protocol)."""
        p = os.fspath(path)
        return cls(spark, _call(_txn_api(spark).startNew, p), p)

    # ------------------------------------------------------------------ read state
    @property
    def path(self) -> str:
        return self._path

    def readVersion(self) -> int:
        """The version this transaction read; -1 for a table that does not exist yet."""
        return int(self._handle.readVersion())

    def metadata(self) -> Metadata:
        """The metadata this transaction will commit against (including ``updateMetadata``)."""
        return Metadata.fromJsonDict(json.loads(_call(self._handle.metadataJson)))

    def protocol(self) -> Protocol:
        return Protocol.fromJsonDict(json.loads(_call(self._handle.protocolJson)))

    def updateMetadata(self, metadata: Metadata) -> None:
        """Replace the table metadata in this transaction (seed rules apply; for a new table the
        commit must also carry ``Protocol.forNewTable(metadata)`` or the engine derives it)."""
        if not isinstance(metadata, Metadata):
            raise TypeError(f"updateMetadata expects a deltalog.actions.Metadata, got {type(metadata).__name__}")
        body = json.dumps(metadata.toJsonDict(), separators=(",", ":"), ensure_ascii=False)
        _call(self._handle.updateMetadata, body)

    def filterFiles(self, predicates: Sequence[str] = ()) -> List[AddFile]:
        """Live files matching every partition predicate (SQL text, e.g. ``"p = 'a'"``); all files
        when none are given. The predicates are recorded: a concurrent commit adding files that
        match them makes this transaction fail with ConcurrentAppendException."""
        if isinstance(predicates, str):
            predicates = [predicates]
        preds = [str(p) for p in predicates]
        if not preds:
            rows = json.loads(_call(self._handle.filterAllFiles))
        else:
            rows = json.loads(_call(self._handle.filterFiles, json.dumps(preds)))
        return [AddFile.fromJsonDict(r) for r in rows]

    def readWholeTable(self) -> None:
        """Record that this transaction depends on the whole table (any concurrent add conflicts)."""
        _call(self._handle.readWholeTable)

    def txnVersion(self, appId: str) -> int:
        """The latest ``txn.version`` committed by ``appId``, or -1. Reading it makes a concurrent
        commit by the same ``appId`` a conflict (ConcurrentTransactionException)."""
        return int(_call(self._handle.txnVersion, str(appId)))

    # ------------------------------------------------------------------ commit
    def commit(self, actions: Iterable[Action], operation: str = "MANUAL UPDATE",
               operationParameters: Optional[Mapping[str, Any]] = None,
               userMetadata: Optional[str] = None) -> int:
        """Atomically commit ``actions``; returns the committed version.

        ``operationParameters`` values that are not strings are written as JSON (delta-spark's
        convention for commitInfo). Raises a DeltaConcurrentModificationException subclass when a
        concurrent commit conflicts.
        """
        ndjson = serializeActions(list(actions))
        params = {str(k): v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
                  for k, v in (operationParameters or {}).items()}
        version = int(_call(self._handle.commit, ndjson, str(operation),
                            json.dumps(params, separators=(",", ":")),
                            None if userMetadata is None else str(userMetadata)))
        self._committedVersion = version
        return version

    @property
    def committed(self) -> bool:
        if self._committedVersion is not None:
            return True
        try:
            return bool(self._handle.committed())
        except Exception:
            return False

    def __repr__(self) -> str:
        return f"OptimisticTransaction({self._path!r}, readVersion={self.readVersion()})"
