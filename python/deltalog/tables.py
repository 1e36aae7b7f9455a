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
    from deltalog.builder import DeltaTableBuilder
    from deltalog.merge import DeltaMergeBuilder
    from deltalog.optimize import DeltaOptimizeBuilder

TimestampLike = Union[int, float, str, _dt.datetime, _dt.date]


def _column(value: Any, what: str) -> Any:
    """A SQL string or a pyspark Column as a Column (``expr`` parses strings)."""
    if isinstance(value, str):
        from pyspark.sql import functions as F
        return F.expr(value)
    if hasattr(value, "_jc"):
        return value
    raise TypeError(f"{what} must be a SQL string or a pyspark Column, got {type(value).__name__}")


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
        self._pinned = False  # opened with version= / timestamp=: toDF() reads that version
        self._alias: Optional[str] = None

    @classmethod
    def forPath(cls, sparkSession: Any, path: Union[str, "os.PathLike[str]"],
                hadoopConf: Optional[Dict[str, str]] = None, *, version: Optional[int] = None,
                timestamp: Optional[TimestampLike] = None) -> "DeltaTable":
        """Open the table at ``path``, with delta-spark's arguments in delta-spark's positions:
        ``hadoopConf`` (Hadoop options for this table's file system, e.g. credentials) third; time
        travel (``version`` / ``timestamp``) keyword-only::

            DeltaTable.forPath(spark, "/data/events")
            DeltaTable.forPath(spark, "s3a://b/events", {"fs.s3a.endpoint": "http://127.0.0.1:9000"})
            DeltaTable.forPath(spark, "/data/events", version=3)
        """
        if version is not None and timestamp is not None:
            raise ValueError("give either version or timestamp, not both")
        if hadoopConf is not None and not isinstance(hadoopConf, dict):
            raise TypeError(f"hadoopConf must be a dict of Hadoop options, got {type(hadoopConf).__name__}; "
                            "time travel is keyword-only: forPath(spark, path, version=3)")
        p = os.fspath(path)
        api = api_class(sparkSession, "TableApi")
        if hadoopConf:
            conf = {str(k): str(v) for k, v in hadoopConf.items()}
            handle = _call(api.forPathWithConf, p, conf, -1 if version is None else int(version),
                           _timestamp_ms(timestamp) if timestamp is not None else -(2 ** 63))
        elif version is not None:
            handle = _call(api.forPathAtVersion, p, int(version))
        elif timestamp is not None:
            handle = _call(api.forPathAtTimestamp, p, _timestamp_ms(timestamp))
        else:
            handle = _call(api.forPath, p)
        table = cls(sparkSession, handle, p)
        table._pinned = version is not None or timestamp is not None
        return table

    @staticmethod
    def isDeltaTable(sparkSession: Any, identifier: Union[str, "os.PathLike[str]"]) -> bool:
        """True when ``identifier`` is the root of a Delta table (a ``_delta_log`` with a commit or
        checkpoint), as delta-spark's ``isDeltaTable``; False for any other path, a sub-directory of a
        table, or a path that does not exist."""
        from deltalog.exceptions import TableNotFoundError
        try:
            _call(api_class(sparkSession, "TableApi").forPath, os.fspath(identifier))
            return True
        except TableNotFoundError:
            return False

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

    @classmethod
    def convertToDelta(cls, sparkSession: Any, identifier: str,
                       partitionSchema: Optional[Union[str, Any]] = None) -> "DeltaTable":
        """Make a directory of Parquet files a Delta table in place (one commit adding every file,
        with statistics from the Parquet footers), as delta-spark's ``convertToDelta``::

            DeltaTable.convertToDelta(spark, "parquet.`/data/events`")
            DeltaTable.convertToDelta(spark, "parquet.`/data/events`", "day DATE, country STRING")

        ``partitionSchema`` (a DDL string or a ``StructType``) names the ``col=value`` directory
        levels, in order; every file must sit under directories of exactly those columns. Returns the
        table. A directory that already is a Delta table is left as it is (no commit), as delta-spark
        does. Refusals raise ``InvalidWriteError`` with delta-spark's error classes, naming the file:
        ``DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME`` / ``..._PARTITION_COLUMN_FROM_FILE_NAME``
        / ``DELTA_FAILED_CAST_PARTITION_VALUE`` (directories that do not match ``partitionSchema``),
        ``DELTA_FAILED_MERGE_SCHEMA_FILE`` (incompatible file schemas), ``DELTA_FAILED_READ_FILE_FOOTER``
        (a file that is not Parquet), ``DELTA_EMPTY_DIRECTORY``; nothing is written then."""
        if not isinstance(identifier, str) or not identifier.strip():
            raise ValueError(f"identifier must be a string such as \"parquet.`/path`\", got {identifier!r}")
        schema: Optional[str] = None
        if partitionSchema is not None:
            if isinstance(partitionSchema, str):
                schema = partitionSchema
            elif hasattr(partitionSchema, "json") and hasattr(partitionSchema, "fields"):
                schema = partitionSchema.json()
            else:
                raise TypeError("partitionSchema must be a DDL string ('p INT, q STRING') or a StructType, "
                                f"got {type(partitionSchema).__name__}")
        api = api_class(sparkSession, "ConvertApi")
        path = _call(api.convertToDelta, sparkSession._jsparkSession, identifier, schema)
        return cls.forPath(sparkSession, path)

    @staticmethod
    def clearCache(spark: Any) -> None:
        """Forget every cached table state in the driver (the next open re-reads the log)."""
        api_class(spark, "TableApi").clearCache()

    # ------------------------------------------------------------------ data
    def toDF(self) -> Any:
        """The table's rows as a DataFrame: the latest version, or the version this object was
        opened at with ``version=`` / ``timestamp=``; aliased when :meth:`alias` named it."""
        reader = self._spark.read.format("deltalog")
        if self._pinned:
            reader = reader.option("versionAsOf", self.version())
        df = reader.load(self._path)
        return df.alias(self._alias) if self._alias else df

    def alias(self, aliasName: str) -> "DeltaTable":
        """This table under ``aliasName`` (its :meth:`toDF` is aliased), as delta-spark's ``alias``."""
        other = DeltaTable(self._spark, self._handle._obj, self._path)
        other._name, other._pinned, other._alias = self._name, self._pinned, aliasName
        return other

    # ------------------------------------------------------------------ row-level changes
    def delete(self, condition: Optional[Union[str, Any]] = None) -> Any:
        """Delete the rows matching ``condition`` (every row when None) in one commit, as
        delta-spark's ``DeltaTable.delete``: ``condition`` is a SQL string or a pyspark ``Column``;
        rows where it is NULL are kept::

            dt.delete("id > 5")
            dt.delete(F.col("date") < "2024-01-01")
            dt.delete()                               # every row

        Difference from delta-spark (whose ``delete`` returns None): returns a one-row DataFrame
        with the statement's result, ``num_affected_rows`` (bigint), as ``DELETE FROM`` in SQL
        returns it (-1 when whole files without ``numRecords`` statistics were removed, so the
        count is unknown). Always deletes from the latest version (a time-travelled handle is
        refused). Errors are typed: ``AppendOnlyTableError`` (``DELTA_CANNOT_MODIFY_APPEND_ONLY``, as
        delta-spark) on an append-only table, ``InvalidWriteError`` for a condition that does not
        resolve against the table, ``DeltaConcurrentModificationException`` subclasses on conflicts
        with concurrent commits.
        """
        from pyspark.sql import DataFrame
        self._check_latest("DELETE")
        api = api_class(self._spark, "DmlApi")
        if condition is None or isinstance(condition, str):
            jdf = _call(api.delete, self._spark._jsparkSession, self._path, condition)
        elif hasattr(condition, "_jc"):
            jdf = _call(api.deleteWhere, self._spark._jsparkSession, self._path, condition._jc)
        else:
            raise TypeError(f"condition must be a SQL string or a pyspark Column, got {type(condition).__name__}")
        return DataFrame(jdf, self._spark)

    def update(self, condition: Optional[Union[str, Any]] = None,
               set: Optional[Dict[str, Union[str, Any]]] = None) -> Any:
        """Give the rows matching ``condition`` (every row when None; rows where it is NULL are
        kept) new values in one commit, as delta-spark's ``DeltaTable.update``: ``set`` maps target
        column names (``"a"``, nested ``"s.x"``) to SQL strings or ``Column`` values evaluated
        over the row before the update; ``condition`` is a SQL string or a ``Column``::

            dt.update("id > 5", {"v": "v + 1"})
            dt.update(F.col("id") > 5, {"name": F.lit("x")})
            dt.update(set={"flag": "true"})              # every row

        Generated columns follow their inputs; identity columns cannot be assigned. Returns a
        one-row DataFrame ``num_affected_rows`` (delta-spark returns None). Errors are typed as
        for :meth:`delete`; a row breaking a NOT NULL / CHECK constraint fails the update and
        nothing is written.
        """
        from pyspark.sql import Column, DataFrame
        if set is None and isinstance(condition, dict):  # update({"v": ...}) positional, as delta-spark allows
            condition, set = None, condition
        if not set:
            raise ValueError("update needs set: a non-empty dict of column name -> value (SQL string or Column)")
        self._check_latest("UPDATE")
        cond = None if condition is None else _column(condition, "condition")
        keys = list(set.keys())
        values = [_column(v, f"value of {k}")._jc for k, v in set.items()]
        api = api_class(self._spark, "DmlApi")
        jdf = _call(api.update, self._spark._jsparkSession, self._path, None if cond is None else cond._jc,
                    keys, values)
        return DataFrame(jdf, self._spark)

    def merge(self, source: Any, condition: Union[str, Any]) -> "DeltaMergeBuilder":
        """Start a MERGE of the DataFrame ``source`` into this table on ``condition`` (SQL string
        or ``Column``), as delta-spark's ``DeltaTable.merge``; add clauses to the returned
        :class:`~deltalog.merge.DeltaMergeBuilder` and ``execute()`` it::

            (dt.alias("t").merge(updates.alias("s"), "t.id = s.id")
               .whenMatchedUpdate(set={"v": "s.v"})
               .whenNotMatchedInsertAll()
               .execute())

        Columns of the target are qualified by the name given to :meth:`alias` (or unqualified
        when unambiguous), those of the source by the source DataFrame's alias.
        """
        from deltalog.merge import DeltaMergeBuilder
        self._check_latest("MERGE")
        return DeltaMergeBuilder(self, source, _column(condition, "merge condition"))

    # ------------------------------------------------------------------ maintenance
    def vacuum(self, retentionHours: Optional[float] = None, dryRun: bool = False) -> Any:
        """Delete the files under the table's root that no version within the retention references
        and that are older than it, as delta-spark's ``DeltaTable.vacuum`` (``VACUUM`` in SQL)::

            dt.vacuum()                    # the table's delta.deletedFileRetentionDuration (default 7 days)
            dt.vacuum(200)                 # keep what versions of the last 200 hours need
            dt.vacuum(dryRun=True).show()  # what it would delete (column ``path``), nothing deleted

        A real run returns an empty DataFrame (as delta-spark) after committing ``VACUUM START`` and
        ``VACUUM END``; ``dryRun=True`` (deltalog's addition; SQL ``DRY RUN``) returns the qualified
        paths it would delete. ``retentionHours`` below the table's retention raises ``VacuumError``
        (``DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT``) unless the Spark conf
        ``spark.deltalog.retentionDurationCheck.enabled`` (or delta-spark's
        ``spark.databricks.delta.retentionDurationCheck.enabled``) is ``false``. Always vacuums the
        latest version (a time-travelled handle is refused).
        """
        from pyspark.sql import DataFrame
        self._check_latest("VACUUM")
        hours = float("nan") if retentionHours is None else float(retentionHours)
        api = api_class(self._spark, "VacuumApi")
        jdf = _call(api.vacuum, self._spark._jsparkSession, self._path, hours, bool(dryRun), False)
        return DataFrame(jdf, self._spark)

    def optimize(self) -> "DeltaOptimizeBuilder":
        """Start an OPTIMIZE of this table, as delta-spark's ``DeltaTable.optimize``: restrict it with
        ``where(partitionFilter)`` and run ``executeCompaction()`` or ``executeZOrderBy(*cols)`` on the
        returned :class:`~deltalog.optimize.DeltaOptimizeBuilder`::

            dt.optimize().where("date = '2024-01-01'").executeCompaction()
        """
        from deltalog.optimize import DeltaOptimizeBuilder
        return DeltaOptimizeBuilder(self)

    def _check_latest(self, statement: str) -> None:
        if self._pinned:
            from deltalog.exceptions import InvalidWriteError
            raise InvalidWriteError("DELTA_CANNOT_WRITE_TIME_TRAVEL",
                                    f"Table {self._path} was opened at version {self.version()} (time travel); "
                                    f"{statement} changes the latest version: open it with "
                                    "DeltaTable.forPath(spark, path).")

    # ------------------------------------------------------------------ protocol changes
    def _sql_name(self) -> str:
        return "deltalog.`" + self._path.replace("`", "``") + "`"

    def upgradeTableProtocol(self, readerVersion: int, writerVersion: int) -> None:
        """Raise the table's protocol to at least ``(readerVersion, writerVersion)`` in one commit
        (the protocol never goes down; features follow the protocol rules), as delta-spark's."""
        self._spark.sql(f"ALTER TABLE {self._sql_name()} SET TBLPROPERTIES "
                        f"('delta.minReaderVersion' = '{int(readerVersion)}', "
                        f"'delta.minWriterVersion' = '{int(writerVersion)}')")

    def addFeatureSupport(self, featureName: str) -> None:
        """Add support for table feature ``featureName`` (and the features it requires) in one
        commit: ``ALTER TABLE ... SET TBLPROPERTIES ('delta.feature.<name>' = 'supported')``."""
        if not featureName or "'" in featureName or "`" in featureName:
            raise ValueError(f"invalid feature name {featureName!r}")
        self._spark.sql(f"ALTER TABLE {self._sql_name()} SET TBLPROPERTIES "
                        f"('delta.feature.{featureName}' = 'supported')")

    def dropFeatureSupport(self, featureName: str, truncateHistory: Optional[bool] = None) -> None:
        """Drop table feature ``featureName`` from the table's protocol, as delta-spark's
        ``dropFeatureSupport`` and ``ALTER TABLE ... DROP FEATURE <name> [TRUNCATE HISTORY]``.

        The feature's traces are first removed from the latest version in separate commits (e.g. for
        ``deletionVectors``: ``delta.enableDeletionVectors`` is unset). A writer-only feature (e.g.
        ``checkConstraints``) is then dropped in one commit. A reader-writer feature (e.g.
        ``deletionVectors``, ``v2Checkpoint``, ``vacuumProtocolCheck``) is by default dropped at once
        with history protection: three checkpointed empty commits, then one commit that removes the
        feature and adds ``checkpointProtection`` (older readers never replay the history that used
        the feature), then a checkpoint. With ``truncateHistory=True`` the protocol keeps no
        ``checkpointProtection``; instead the history younger than
        ``delta.dropFeatureTruncateHistory.retentionDuration`` (24 hours) must not use the feature:
        the first run removes the traces and raises ``DropFeatureWaitForRetentionError``; run it
        again after that period (it truncates the older history, then drops the feature).

        As delta-spark 4.4, some drops rewrite data files first (``dataChange = false``, the rows
        unchanged): ``typeWidening`` rewrites the files still storing a column's older type (``REORG``)
        and removes ``delta.typeChanges`` from the schema; ``columnMapping`` rewrites every file under
        the logical column names (``REMOVE COLUMN MAPPING``); ``rowTracking`` suspends row ids and
        re-adds the files without them (``ROW TRACKING UNBACKFILL``), then drops the feature in one
        commit (no history protection). ``typeWidening-preview`` is dropped like ``typeWidening``
        (deltalog writes tables that support it only for the drop's own commits).

        Raises ``DropFeatureError`` (a ``TableFeatureError``) when the drop is refused, with
        delta-spark's error classes: ``DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE`` (unknown name,
        or a feature deltalog cannot remove yet), ``DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT``,
        ``DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE``, ``DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE``...;
        ``DropFeatureConflictException`` when a concurrent commit used the feature again. This
        object keeps showing the version it was opened at: open the table again to see the new
        protocol::

            dt = DeltaTable.forPath(spark, "/data/events")
            dt.dropFeatureSupport("deletionVectors")
            DeltaTable.forPath(spark, "/data/events").protocol().simpleString
            # '1,7,None,[appendOnly,checkpointProtection,invariants]'
            dt.dropFeatureSupport("checkConstraints")        # after ALTER TABLE ... DROP CONSTRAINT
        """
        if not isinstance(featureName, str) or not featureName:
            raise ValueError(f"featureName needs to be a non-empty string but got {featureName!r}")
        if truncateHistory is not None and not isinstance(truncateHistory, bool):
            raise ValueError(f"truncateHistory needs to be a boolean but got {type(truncateHistory).__name__}")
        _call(api_class(self._spark, "TableApi").dropFeatureSupport, self._path, featureName,
              bool(truncateHistory), self._name)

    # ------------------------------------------------------------------ builders
    @classmethod
    def create(cls, sparkSession: Optional[Any] = None) -> "DeltaTableBuilder":
        """A builder for ``CREATE TABLE`` (fails when the table exists)::

            DeltaTable.create(spark).tableName("events").addColumn("id", "BIGINT", nullable=False) \\
                .addColumn("day", "DATE", generatedAlwaysAs="CAST(ts AS DATE)").partitionedBy("day").execute()
        """
        from deltalog.builder import DeltaTableBuilder
        return DeltaTableBuilder(sparkSession, "CREATE TABLE")

    @classmethod
    def createIfNotExists(cls, sparkSession: Optional[Any] = None) -> "DeltaTableBuilder":
        """A builder for ``CREATE TABLE IF NOT EXISTS``."""
        from deltalog.builder import DeltaTableBuilder
        return DeltaTableBuilder(sparkSession, "CREATE TABLE IF NOT EXISTS")

    @classmethod
    def replace(cls, sparkSession: Optional[Any] = None) -> "DeltaTableBuilder":
        """A builder for ``REPLACE TABLE`` (the table must exist; its history is kept)."""
        from deltalog.builder import DeltaTableBuilder
        return DeltaTableBuilder(sparkSession, "REPLACE TABLE")

    @classmethod
    def createOrReplace(cls, sparkSession: Optional[Any] = None) -> "DeltaTableBuilder":
        """A builder for ``CREATE OR REPLACE TABLE``."""
        from deltalog.builder import DeltaTableBuilder
        return DeltaTableBuilder(sparkSession, "CREATE OR REPLACE TABLE")

    # ------------------------------------------------------------------ restore
    def restoreToVersion(self, version: int) -> Any:
        """Make the table's files and metadata those of ``version`` again, in one ``RESTORE`` commit
        (history is kept: the restore is a new version), as delta-spark's ``restoreToVersion``::

            DeltaTable.forPath(spark, "/data/events").restoreToVersion(3).show()

        Returns delta-spark's one-row DataFrame (``table_size_after_restore``,
        ``num_of_files_after_restore``, ``num_removed_files``, ``num_restored_files``,
        ``removed_files_size``, ``restored_files_size``); no row when the table is already at
        ``version``. The protocol never goes down. Raises ``InvalidWriteError`` with delta-spark's
        error class ``DELTA_CANNOT_RESTORE_TABLE_VERSION`` for a version outside the table's history,
        and ``DELTALOG_RESTORE_MISSING_FILES`` (naming them) when files of that version were deleted
        (e.g. by VACUUM) — set ``spark.sql.files.ignoreMissingFiles=true`` to restore without them.
        """
        from pyspark.sql import DataFrame
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ValueError(f"version must be a non-negative int, got {version!r}")
        api = api_class(self._spark, "RestoreApi")
        return DataFrame(_call(api.restoreToVersion, self._spark._jsparkSession, self._path, int(version)),
                         self._spark)

    def restoreToTimestamp(self, timestamp: TimestampLike) -> Any:
        """Restore the version that was current at ``timestamp`` (the latest commit at or before it),
        as delta-spark's ``restoreToTimestamp``: a ``yyyy-MM-dd[ HH:mm:ss[.SSS]]`` string read in the
        session time zone (as delta-spark reads it), a ``datetime``/``date`` (naive ones in the session
        time zone too) or epoch milliseconds. A timestamp before the first or after the last
        commit raises ``InvalidWriteError`` (``DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER`` /
        ``..._GREATER``). Returns the same row as :meth:`restoreToVersion`."""
        from pyspark.sql import DataFrame
        import datetime as _dt
        if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):  # epoch milliseconds
            text = _dt.datetime.fromtimestamp(timestamp / 1000, _dt.timezone.utc).isoformat(sep=" ")
        elif isinstance(timestamp, _dt.datetime):
            text = timestamp.isoformat(sep=" ")
        elif isinstance(timestamp, _dt.date):
            text = timestamp.isoformat()
        elif isinstance(timestamp, str):
            text = timestamp
        else:
            raise TypeError(f"timestamp must be a string, datetime or date, got {type(timestamp).__name__}")
        api = api_class(self._spark, "RestoreApi")
        return DataFrame(_call(api.restoreToTimestamp, self._spark._jsparkSession, self._path, text), self._spark)

    # ------------------------------------------------------------------ generate
    def generate(self, mode: str) -> None:
        """Generate the manifest ``mode`` names for this table, as delta-spark's ``generate`` and
        ``GENERATE symlink_format_manifest FOR TABLE t``: ``symlink_format_manifest`` (the one mode, any
        case) writes ``_symlink_format_manifest/[<col=value/…>/]manifest`` listing the absolute paths of the
        live data files (per partition), for Presto / Athena / Hive, and deletes the manifests of
        partitions without files. Refused (``DeltalogError``) on tables with column mapping
        (``DELTA_UNSUPPORTED_MANIFEST_GENERATION_WITH_COLUMN_MAPPING``) or live deletion vectors
        (``DELTA_UNSUPPORTED_GENERATE_WITH_DELETION_VECTORS``), and for another mode
        (``DELTA_MODE_NOT_SUPPORTED``). With ``delta.compatibility.symlinkFormatManifest.enabled = true``
        every commit keeps the manifests of the partitions it touches up to date."""
        if not isinstance(mode, str):
            raise ValueError(f"mode needs to be a string but got '{type(mode)}'.")
        _call(api_class(self._spark, "GenerateApi").generate, self._spark._jsparkSession, self._path, self._name,
              mode)

    # ------------------------------------------------------------------ clone
    def clone(self, target: str, isShallow: bool = False, replace: bool = False,
              properties: Optional[Dict[str, str]] = None) -> "DeltaTable":
        """Clone this table's latest version to ``target`` (an absolute path, else a table name), as
        delta-spark's ``DeltaTable.clone`` and ``CREATE [OR REPLACE] TABLE target [SHALLOW | DEEP] CLONE``:
        the target's first commit (operation ``CLONE``) holds the source's schema, partitioning,
        properties (``properties`` over them), protocol and live files. A deep clone (the default)
        copies the data and deletion-vector files into the target first; a shallow clone names the
        source's files by absolute path (VACUUM on the source can then break the clone). ``replace``
        replaces an existing target table in a new version (else an existing table is refused with
        ``DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION`` / ``DELTA_TABLE_ALREADY_EXISTS``). Returns the
        target as a ``DeltaTable``::

            DeltaTable.forPath(spark, "/data/events").clone("/backup/events", isShallow=False)
        """
        return self._clone(target, isShallow, replace, properties, -1, None)

    def cloneAtVersion(self, version: int, target: str, isShallow: bool = False, replace: bool = False,
                       properties: Optional[Dict[str, str]] = None) -> "DeltaTable":
        """:meth:`clone` of the table at ``version`` (its files and metadata then)."""
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ValueError(f"version needs to be a non-negative int but got {version!r}")
        return self._clone(target, isShallow, replace, properties, int(version), None)

    def cloneAtTimestamp(self, timestamp: str, target: str, isShallow: bool = False, replace: bool = False,
                         properties: Optional[Dict[str, str]] = None) -> "DeltaTable":
        """:meth:`clone` of the version current at ``timestamp`` (``yyyy-MM-dd[ HH:mm:ss]``, the session
        time zone, as delta-spark reads it)."""
        if not isinstance(timestamp, str):
            raise ValueError(f"timestamp needs to be a string but got {type(timestamp).__name__}")
        return self._clone(target, isShallow, replace, properties, -1, timestamp)

    def _clone(self, target: str, isShallow: bool, replace: bool, properties: Optional[Dict[str, str]],
               version: int, timestamp: Optional[str]) -> "DeltaTable":
        # delta-spark's argument checks (ValueError) and messages
        if not isinstance(target, str):
            raise ValueError(f"target needs to be a string but got '{type(target)}'.")
        for value, name in ((isShallow, "isShallow"), (replace, "replace")):
            if not isinstance(value, bool):
                raise ValueError(f"{name} needs to be a boolean but got '{type(value)}'.")
        if properties is not None:
            if not isinstance(properties, dict):
                raise ValueError(f"properties needs to be a dict but got '{type(properties)}'.")
            for k, v in properties.items():
                if not isinstance(k, str) or not isinstance(v, str):
                    raise ValueError(f"All property keys and values need to be strings but got {k!r}: {v!r}.")
        if self._pinned and version < 0 and timestamp is None:
            version = self.version()  # opened with version= / timestamp=: that version is cloned
        api = api_class(self._spark, "CloneApi")
        _call(api.clone, self._spark._jsparkSession, self._path, self._name, int(version), timestamp, target,
              bool(isShallow), bool(replace), dict(properties or {}))
        if os.path.isabs(target) or "://" in target or target.startswith("file:"):
            return DeltaTable.forPath(self._spark, target)
        return DeltaTable.forName(self._spark, target)

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
        properties, minReaderVersion, minWriterVersion, tableFeatures), then ``statistics``
        (``numDeletionVectors``, ``numRowsDeletedByDeletionVectors``) for this object's version::

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
