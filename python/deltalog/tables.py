"""``DeltaTable``: a Delta table read through the deltalog engine (JVM, via py4j).

Mirrors delta-spark's ``DeltaTable.forPath`` and the JVM's ``io.deltalog.api.TableApi``::

    from deltalog.tables import DeltaTable
    dt = DeltaTable.forPath(spark, "/data/events")
    dt.version(), dt.protocol().simpleString, dt.schema()
    dt.files()                                   # live files as a Spark DataFrame
    DeltaTable.forPath(spark, "/data/events", version=3)            # time travel
    DeltaTable.forPath(spark, "/data/events", timestamp="2024-05-01 12:00:00")
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from deltalog._files_transfer import TRANSFER_FILES, read_mapped
from deltalog._jvm import call as _call
from deltalog._jvm import JvmRef, api_class
from deltalog.actions import DomainMetadata, Metadata, SetTransaction
from deltalog.exceptions import StateRecoverError
from deltalog.protocol import Protocol

if TYPE_CHECKING:
    from deltalog.advisor import CompatibilityReport, ProtocolExplanation

TimestampLike = Union[int, float, str, _dt.datetime, _dt.date]


def _timestamp_ms(ts: TimestampLike) -> int:
    """Milliseconds since the epoch. Naive datetimes and strings are read as UTC."""
    if isinstance(ts, bool):
        raise TypeError("timestamp must be a datetime, a date, an ISO string or epoch milliseconds")
    if isinstance(ts, (int, float)):
        return int(ts)
    if isinstance(ts, str):
        text = ts.strip().replace("Z", "+00:00")
        try:
            ts = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"cannot parse timestamp {ts!r}; use ISO-8601, e.g. '2024-05-01 12:00:00'") from None
    if isinstance(ts, _dt.date) and not isinstance(ts, _dt.datetime):
        ts = _dt.datetime(ts.year, ts.month, ts.day)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.timezone.utc)
    return int(ts.timestamp() * 1000)


@dataclass(frozen=True)
class Snapshot:
    """The state of a table at one version (summary; files via ``DeltaTable.files``)."""

    version: int
    timestamp: int
    protocol: Protocol
    metadata: Metadata
    numFiles: int
    sizeInBytes: int


def _transfer_dir() -> Optional[str]:
    """Where Arrow transfers from the JVM are written: shared memory (``/dev/shm``) when the
    machine has it, so hundreds of MB of live files never go through a disk-backed page cache;
    ``DELTALOG_TRANSFER_DIR`` overrides; otherwise the default temp directory."""
    explicit = os.environ.get("DELTALOG_TRANSFER_DIR")
    if explicit:
        return explicit
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        # Containers often mount a small /dev/shm (Docker: 64 MB): use it only with room to spare.
        if os.access(shm, os.W_OK) and st.f_bavail * st.f_frsize >= (1 << 30):
            return shm
    except OSError:
        pass
    return None


class DeltaTable:
    """A Delta table at one version (the latest unless time travel was asked for)."""

    def __init__(self, spark: Any, handle: Any, path: str) -> None:
        self._spark = spark
        self._handle = JvmRef(handle)
        self._path = path
        self._protocol: Optional[Protocol] = None
        self._metadata: Optional[Metadata] = None
        self._name: Optional[str] = None  # the catalog name when opened with forName

    @classmethod
    def forPath(cls, spark: Any, path: Union[str, "os.PathLike[str]"], version: Optional[int] = None,
                timestamp: Optional[TimestampLike] = None) -> "DeltaTable":
        """Open the table at ``path``: latest version, or ``version`` / ``timestamp`` (time travel)."""
        if version is not None and timestamp is not None:
            raise ValueError("give either version or timestamp, not both")
        p = os.fspath(path)
        api = api_class(spark, "TableApi")
        if version is not None:
            handle = _call(api.forPathAtVersion, p, int(version))
        elif timestamp is not None:
            handle = _call(api.forPathAtTimestamp, p, _timestamp_ms(timestamp))
        else:
            handle = _call(api.forPath, p)
        return cls(spark, handle, p)

    @classmethod
    def forName(cls, spark: Any, tableOrViewName: str, version: Optional[int] = None,
                timestamp: Optional[TimestampLike] = None) -> "DeltaTable":
        """Open a deltalog table by its catalog name (``db.t``, or ``deltalog.`/path` ``), as
        delta-spark's ``DeltaTable.forName``: the table's location comes from the catalog, everything
        else from its log. Raises ``TableNotFoundError`` (``DELTA_MISSING_DELTA_TABLE``) when the name
        is a table of another provider."""
        from deltalog.exceptions import TableNotFoundError
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {tableOrViewName}").collect()
        info = {r[0]: r[1] for r in rows}
        provider = (info.get("Provider") or "").strip().lower()
        location = info.get("Location")
        if provider not in ("deltalog", "io.deltalog.spark.deltalogdatasource") or not location:
            raise TableNotFoundError(
                "DELTA_MISSING_DELTA_TABLE",
                f"{tableOrViewName} is not a deltalog table (provider: {provider or 'none'}); create it "
                "USING deltalog, or open a path with DeltaTable.forPath.")
        table = cls.forPath(spark, location, version=version, timestamp=timestamp)
        parts = [info.get(k) for k in ("Catalog", "Database", "Table")]
        table._name = ".".join(p for p in parts if p) or tableOrViewName
        return table

    @staticmethod
    def clearCache(spark: Any) -> None:
        """Forget every cached table state in the driver (the next open re-reads the log)."""
        api_class(spark, "TableApi").clearCache()

    # ------------------------------------------------------------------ history and detail
    def history(self, limit: Optional[int] = None) -> Any:
        """The table's commits, newest first, as a DataFrame with delta-spark's ``DESCRIBE HISTORY``
        columns (version, timestamp, userId, userName, operation, operationParameters, job, notebook,
        clusterId, readVersion, isolationLevel, isBlindAppend, operationMetrics, userMetadata,
        engineInfo). Like delta-spark's, it shows the latest commits, also those written after this
        object was opened; only the ``limit`` newest commit files are read::

            DeltaTable.forPath(spark, "/data/events").history(10).select("version", "operation").show()
        """
        from pyspark.sql import DataFrame
        if limit is not None and int(limit) < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        jdf = _call(self._handle.history, self._spark._jsparkSession, -1 if limit is None else int(limit))
        return DataFrame(jdf, self._spark)

    def detail(self) -> Any:
        """One row with delta-spark's ``DESCRIBE DETAIL`` columns (format, id, name, description,
        location, createdAt, lastModified, partitionColumns, clusteringColumns, numFiles, sizeInBytes,
        properties, minReaderVersion, minWriterVersion, tableFeatures) for this object's version::

            DeltaTable.forPath(spark, "/data/events").detail().select("numFiles", "sizeInBytes").show()
        """
        from pyspark.sql import DataFrame
        return DataFrame(_call(self._handle.detail, self._spark._jsparkSession, self._name), self._spark)

    # ------------------------------------------------------------------ table state
    def version(self) -> int:
        return int(self._handle.version())

    def timestamp(self) -> int:
        """Commit timestamp of this version, ms since the epoch (in-commit timestamp when enabled)."""
        return int(_call(self._handle.timestamp))

    def protocol(self) -> Protocol:
        if self._protocol is None:
            self._protocol = Protocol.fromJsonDict(json.loads(_call(self._handle.protocolJson)))
        return self._protocol

    def metadata(self) -> Metadata:
        if self._metadata is None:
            body = json.loads(_call(self._handle.metadataJson))
            if body.get("schemaString") is None:
                # Some old writers left schemaString out; like Spark-era readers we still open the
                # table (its files and versions are readable) and fail only when the schema is used.
                m = Metadata.fromJsonDict({**body, "schemaString": ""})
                self._metadata = dataclasses.replace(m, schemaString=None)
            else:
                self._metadata = Metadata.fromJsonDict(body)
        return self._metadata

    def schema(self) -> Any:
        """The table schema as a pyspark ``StructType``."""
        from pyspark.sql.types import StructType
        schema = self.metadata().schemaString
        if schema is None:
            raise StateRecoverError(
                "DELTA_STATE_RECOVER_ERROR",
                f"Table {self._path} at version {self.version()} has no schema (metaData.schemaString is "
                f"missing); it was written by a buggy writer. Rewrite the metadata with a valid schema.")
        return StructType.fromJson(json.loads(schema))

    def partitionColumns(self) -> List[str]:
        return list(self.metadata().partitionColumns)

    def snapshot(self) -> Snapshot:
        return Snapshot(self.version(), self.timestamp(), self.protocol(), self.metadata(),
                        int(_call(self._handle.numFiles)), int(_call(self._handle.sizeInBytes)))

    def _arrow(self, method: str) -> Any:
        # Large states do not fit through py4j as one byte[] (it is base64-encoded on the socket):
        # the JVM writes an Arrow IPC stream into a private temp file that is memory-mapped here.
        import tempfile

        import pyarrow as pa
        fd, path = tempfile.mkstemp(prefix="deltalog-", suffix=".arrows", dir=_transfer_dir())
        os.close(fd)
        try:
            _call(getattr(self._handle, method), path)
            # The mapping stays alive as long as the table's buffers reference it; unlinking the
            # file below only removes its name.
            return pa.ipc.open_stream(pa.memory_map(path)).read_all()
        finally:
            os.unlink(path)

    def filesArrow(self) -> Any:
        """The live files (``add`` actions) as a pyarrow Table."""
        # Plain states (no tags / DVs / row tracking) come as raw Arrow buffers built over a memory
        # map, without Arrow Java or an IPC stream; others take the Arrow IPC path. Transfer files
        # are reused once no table maps them (see TransferFiles).
        path, pooled = TRANSFER_FILES.acquire(_transfer_dir())
        mapped = None
        try:
            if _call(self._handle.filesRawToFile, path):
                table, mapped = read_mapped(path)
                return table
        finally:
            if not pooled:
                os.unlink(path)
            elif mapped is not None:
                TRANSFER_FILES.attach(path, mapped)
            else:
                TRANSFER_FILES.release(path)
        return self._arrow("filesArrowToFile")

    def files(self) -> Any:
        """The live files as a Spark DataFrame (path, partitionValues, size, ..., stats, deletionVector)."""
        return self._spark.createDataFrame(self.filesArrow())

    def tombstonesArrow(self) -> Any:
        """The unexpired ``remove`` tombstones as a pyarrow Table."""
        return self._arrow("tombstonesArrowToFile")

    def tombstones(self) -> Any:
        return self._spark.createDataFrame(self.tombstonesArrow())

    def setTransactions(self) -> Dict[str, SetTransaction]:
        """Latest ``txn`` per application id."""
        rows = json.loads(_call(self._handle.setTransactionsJson))
        return {r["appId"]: SetTransaction.fromJsonDict(r) for r in rows}

    def domainMetadata(self) -> Dict[str, DomainMetadata]:
        """Live domain metadata per domain."""
        rows = json.loads(_call(self._handle.domainMetadataJson))
        return {r["domain"]: DomainMetadata.fromJsonDict(r) for r in rows}

    def checkpoint(self) -> None:
        """Write a checkpoint for this version (and update ``_last_checkpoint``)."""
        _call(self._handle.checkpoint)

    # ------------------------------------------------------------------ protocol advisor
    def explainProtocol(self) -> "ProtocolExplanation":
        """Why each feature of this table's protocol is there, whether it can be dropped, and the
        lowest protocol with the same features (:func:`deltalog.advisor.explain`)."""
        from deltalog.advisor import explain
        return explain(self.protocol(), self.metadata(), table=self._path, version=self.version())

    def compatibility(self, clients: Optional[List[str]] = None, all_versions: bool = False) -> "CompatibilityReport":
        """Which Delta clients can read and write this table, naming the features each one lacks
        (:func:`deltalog.advisor.compatibility`; ``clients`` restricts to some client ids)."""
        from deltalog.advisor import compatibility
        return compatibility(self.protocol(), clients=clients, all_versions=all_versions)

    # ------------------------------------------------------------------ transactions
    def startTransaction(self) -> Any:
        """A new :class:`deltalog.txn.OptimisticTransaction` on the latest version of this table
        (not on the version this DeltaTable was opened at: commits always go on top of the log)."""
        from deltalog.txn import OptimisticTransaction
        return OptimisticTransaction.forPath(self._spark, self._path)

    @classmethod
    def createTransaction(cls, spark: Any, path: Union[str, "os.PathLike[str]"]) -> Any:
        """A transaction for a table that may not exist yet at ``path`` (``readVersion() == -1``):
        call ``updateMetadata`` and commit with a protocol (``Protocol.forNewTable``)."""
        from deltalog.txn import OptimisticTransaction
        return OptimisticTransaction.forNewTable(spark, path)

    def __repr__(self) -> str:
        return f"DeltaTable({self._path!r}, version={self.version()})"
