"""deltalog.txn: optimistic transactions through py4j — table creation, blind appends, each kind of
conflict (typed errors, all caught by ``except DeltaConcurrentModificationException``), idempotent
writes with ``txnVersion``, and the committed table read back by delta-rs."""
from __future__ import annotations

import dataclasses
import json
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional

import pyarrow as pa
import pytest
from deltalake import DeltaTable as RsTable

from deltalog.actions import AddFile, Metadata, SetTransaction, parseActions
from deltalog.exceptions import (
    AppendOnlyTableError,
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentTransactionException,
    ConcurrentWriteException,
    DeltaConcurrentModificationException,
    DeltalogError,
    InvalidCommitError,
    InvalidPredicateError,
    InvalidTablePropertyError,
    MaxCommitAttemptsExceededException,
    MetadataChangedException,
    ProtocolChangedException,
    TableNotFoundError,
    deltalog_class,
)
from deltalog.protocol import Protocol
from deltalog.tables import DeltaTable
from deltalog.txn import OptimisticTransaction

SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "p", "type": "string", "nullable": True, "metadata": {}},
]}, separators=(",", ":"))


def _now() -> int:
    return int(time.time() * 1000)


def _add(name: str, p: Optional[str] = "a", partitioned: bool = True) -> AddFile:
    return AddFile(path=(f"p={p}/{name}.parquet" if partitioned else f"{name}.parquet"),
                   partitionValues={"p": p} if partitioned else {}, size=100 + len(name),
                   modificationTime=_now(), dataChange=True, stats='{"numRecords":1}')


def _metadata(partitioned: bool = True, conf: Optional[Dict[str, str]] = None) -> Metadata:
    return Metadata(id=str(uuid.uuid4()), schemaString=SCHEMA,
                    partitionColumns=["p"] if partitioned else [], configuration=dict(conf or {}),
                    createdTime=_now())


def _create(spark, path: Path, adds: List[AddFile] = (), partitioned: bool = True,
            conf: Optional[Dict[str, str]] = None) -> int:
    txn = DeltaTable.createTransaction(spark, str(path))
    assert txn.readVersion() == -1
    md = _metadata(partitioned, conf)
    return txn.commit([md, Protocol.forNewTable(md), *adds], "CREATE TABLE",
                      {"isManaged": "false", "partitionBy": json.dumps(md.partitionColumns)})


def _start(spark, path: Path) -> OptimisticTransaction:
    return DeltaTable.forPath(spark, str(path)).startTransaction()


def _live(spark, path: Path) -> Dict[str, int]:
    DeltaTable.clearCache(spark)
    t = DeltaTable.forPath(spark, str(path)).filesArrow()
    return dict(zip(t.column("path").to_pylist(), t.column("size").to_pylist()))


def _rs_live(path: Path) -> Dict[str, int]:
    t = pa.table(RsTable(str(path)).get_add_actions(flatten=False))
    return dict(zip(t.column("path").to_pylist(), t.column("size_bytes").to_pylist()))


def _commit_infos(path: Path) -> List[dict]:
    out = []
    for f in sorted((path / "_delta_log").glob("*.json")):
        infos = [a for a in parseActions(f.read_text()) if a.actionName == "commitInfo"]
        assert len(infos) == 1, f"{f.name} has {len(infos)} commitInfo actions"
        out.append(infos[0].values)
    return out


# ----------------------------------------------------------------------------------- create


def test_create_table_and_append(spark, tmp_path):
    path = tmp_path / "t"
    v0 = _create(spark, path, [_add("f0", "a"), _add("f1", "b")])
    assert v0 == 0
    dt = DeltaTable.forPath(spark, str(path))
    assert dt.version() == 0
    assert dt.partitionColumns() == ["p"]
    assert dt.protocol() == Protocol.forNewTable(dt.metadata())
    assert set(_live(spark, path)) == {"p=a/f0.parquet", "p=b/f1.parquet"}

    txn = dt.startTransaction()
    assert txn.readVersion() == 0
    assert txn.metadata().partitionColumns == ["p"]
    assert txn.protocol() == dt.protocol()
    assert txn.commit([_add("f2", "c")], "WRITE", {"mode": "Append"}, userMetadata="hello") == 1
    assert txn.committed
    info = _commit_infos(path)[1]
    assert info["operation"] == "WRITE"
    assert info["operationParameters"] == {"mode": "Append"}
    assert info["userMetadata"] == "hello"
    assert info["isBlindAppend"] is True
    assert info["readVersion"] == 0
    assert set(_live(spark, path)) == {"p=a/f0.parquet", "p=b/f1.parquet", "p=c/f2.parquet"}


def test_create_with_update_metadata(spark, tmp_path):
    path = tmp_path / "t"
    txn = OptimisticTransaction.forNewTable(spark, str(path))
    assert txn.readVersion() == -1
    md = _metadata(partitioned=False, conf={"delta.appendOnly": "true"})
    txn.updateMetadata(md)
    assert txn.metadata().configuration["delta.appendOnly"] == "true"
    assert txn.commit([_add("f0", partitioned=False)], "CREATE TABLE") == 0
    dt = DeltaTable.forPath(spark, str(path))
    assert dt.metadata().id == md.id
    assert dt.protocol() == Protocol.forNewTable(md)
    # append-only: removing data is refused before anything is written
    t2 = dt.startTransaction()
    f0 = t2.filterFiles()[0]
    with pytest.raises(AppendOnlyTableError) as ei:
        t2.commit([f0.remove(_now())], "DELETE")
    assert ei.value.errorClass == "DELTA_APPEND_ONLY_TABLE"
    assert isinstance(ei.value, InvalidCommitError)
    assert DeltaTable.forPath(spark, str(path)).version() == 0


def test_table_properties_are_validated_when_set(spark, tmp_path):
    path = tmp_path / "t"
    with pytest.raises(InvalidTablePropertyError) as ei:
        _create(spark, path, conf={"delta.checkpointInterval": "0"})
    assert ei.value.errorClass == "DELTA_INVALID_TABLE_PROPERTY_VALUE"
    assert "invalid value '0' for table property delta.checkpointInterval; it accepts a positive integer" \
        in ei.value.message
    assert not (path / "_delta_log").exists()
    with pytest.raises(InvalidTablePropertyError) as ei:
        _create(spark, path, conf={"delta.fooBar": "1"})
    assert ei.value.errorClass == "DELTA_UNKNOWN_CONFIGURATION" and "delta.fooBar" in ei.value.message
    assert not (path / "_delta_log").exists()

    # valid values, canonical spelling of known names, user properties kept
    _create(spark, path, conf={"delta.checkpointinterval": "5", "owner": "me"})
    assert DeltaTable.forPath(spark, str(path)).metadata().configuration == \
        {"delta.checkpointInterval": "5", "owner": "me"}

    # an existing table: what updateMetadata changes is checked
    txn = _start(spark, path)
    md = txn.metadata()
    with pytest.raises(InvalidTablePropertyError) as ei:
        txn.updateMetadata(dataclasses.replace(md, configuration={**md.configuration,
                                                                    "delta.isolationLevel": "Snapshot"}))
    assert ei.value.errorClass == "DELTA_INVALID_ISOLATION_LEVEL"
    assert "'Serializable' or 'WriteSerializable'" in ei.value.message
    assert DeltaTable.forPath(spark, str(path)).version() == 0


def test_start_on_missing_table(spark, tmp_path):
    with pytest.raises(TableNotFoundError):
        OptimisticTransaction.forPath(spark, str(tmp_path / "nope"))
    txn = DeltaTable.createTransaction(spark, str(tmp_path / "nope"))
    with pytest.raises(InvalidCommitError) as ei:  # first commit must carry metadata
        txn.commit([_add("f0")], "WRITE")
    assert ei.value.errorClass == "DELTA_METADATA_ABSENT"


def test_second_create_loses(spark, tmp_path):
    path = tmp_path / "t"
    t1 = DeltaTable.createTransaction(spark, str(path))
    t2 = DeltaTable.createTransaction(spark, str(path))
    md1, md2 = _metadata(), _metadata()
    t1.commit([md1, Protocol.forNewTable(md1)], "CREATE TABLE")
    with pytest.raises(DeltaConcurrentModificationException):
        t2.commit([md2, Protocol.forNewTable(md2)], "CREATE TABLE")
    assert DeltaTable.forPath(spark, str(path)).metadata().id == md1.id


# ----------------------------------------------------------------------------------- blind appends


def test_blind_appends_do_not_conflict(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path)
    txns = [_start(spark, path) for _ in range(4)]
    assert {t.readVersion() for t in txns} == {0}
    versions = [t.commit([_add(f"f{i}", "a")], "WRITE", {"mode": "Append"}) for i, t in enumerate(txns)]
    assert versions == [1, 2, 3, 4]
    assert set(_live(spark, path)) == {f"p=a/f{i}.parquet" for i in range(4)}
    infos = _commit_infos(path)
    assert len({i["txnId"] for i in infos}) == 5


def test_filter_files_by_partition(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, [_add("a1", "a"), _add("a2", "a"), _add("b1", "b"), _add("n1", None)])
    txn = _start(spark, path)
    assert sorted(f.path for f in txn.filterFiles(["p = 'a'"])) == ["p=a/a1.parquet", "p=a/a2.parquet"]
    assert [f.path for f in txn.filterFiles(["p IS NULL"])] == ["p=None/n1.parquet"]
    assert sorted(f.path for f in txn.filterFiles(["p IN ('a', 'b')", "p <> 'a'"])) == ["p=b/b1.parquet"]
    assert len(txn.filterFiles()) == 4
    with pytest.raises(DeltalogError) as ei:
        txn.filterFiles(["p = = 'a'"])
    assert ei.value.errorClass == "DELTA_INVALID_PREDICATE"
    assert isinstance(ei.value, InvalidPredicateError)


# ----------------------------------------------------------------------------------- conflicts


def _two(spark, path):
    return _start(spark, path), _start(spark, path)


def test_delete_delete_conflict(spark, tmp_path):
    path = tmp_path / "t"
    f0 = _add("f0", "a")
    _create(spark, path, [f0, _add("f1", "b")])
    t1, t2 = _two(spark, path)
    t1.commit([f0.remove(_now())], "DELETE")
    with pytest.raises(DeltaConcurrentModificationException) as ei:
        t2.commit([f0.remove(_now())], "DELETE")
    err = ei.value
    assert deltalog_class(err) is ConcurrentDeleteDeleteException
    assert err.errorClass == "DELTA_CONCURRENT_DELETE_DELETE"
    assert err.winningVersion == 1
    assert "f0.parquet" in str(err)
    assert set(_live(spark, path)) == {"p=b/f1.parquet"}


def test_concurrent_append_into_read_partition(spark, tmp_path):
    path = tmp_path / "t"
    # Serializable: even a blind append into the partition read is a conflict
    _create(spark, path, [_add("a1", "a"), _add("b1", "b")], conf={"delta.isolationLevel": "Serializable"})
    reader, writer = _two(spark, path)
    read = reader.filterFiles(["p = 'a'"])
    assert [f.path for f in read] == ["p=a/a1.parquet"]
    writer.commit([_add("a2", "a")], "WRITE", {"mode": "Append"})
    with pytest.raises(DeltaConcurrentModificationException) as ei:
        reader.commit([read[0].remove(_now()), _add("a1-rewritten", "a")], "UPDATE")
    assert deltalog_class(ei.value) is ConcurrentAppendException
    assert ei.value.errorClass == "DELTA_CONCURRENT_APPEND"
    assert "a2.parquet" in str(ei.value)


def test_append_into_other_partition_is_not_a_conflict(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, [_add("a1", "a"), _add("b1", "b")], conf={"delta.isolationLevel": "Serializable"})
    reader, writer = _two(spark, path)
    read = reader.filterFiles(["p = 'a'"])
    writer.commit([_add("b2", "b")], "WRITE")
    assert reader.commit([read[0].remove(_now()), _add("a1-rewritten", "a")], "UPDATE") == 2
    assert set(_live(spark, path)) == {"p=a/a1-rewritten.parquet", "p=b/b1.parquet", "p=b/b2.parquet"}


def test_non_blind_append_into_read_partition_conflicts_under_write_serializable(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, [_add("a1", "a"), _add("b1", "b")])
    reader, writer = _two(spark, path)
    read = reader.filterFiles(["p = 'a'"])
    writer.filterFiles(["p = 'b'"])  # the winner read something: not a blind append
    writer.commit([_add("a2", "a")], "MERGE")
    with pytest.raises(ConcurrentAppendException):
        reader.commit([read[0].remove(_now())], "DELETE")


def test_metadata_changed(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, [_add("f0")])
    t1, t2 = _two(spark, path)
    base = t1.metadata()
    import dataclasses
    t1.updateMetadata(dataclasses.replace(base, configuration={**base.configuration, "k1": "v1"}))
    t2.updateMetadata(dataclasses.replace(base, configuration={**base.configuration, "k2": "v2"}))
    t1.commit([], "SET TBLPROPERTIES")
    with pytest.raises(DeltaConcurrentModificationException) as ei:
        t2.commit([], "SET TBLPROPERTIES")
    assert deltalog_class(ei.value) is MetadataChangedException
    assert ei.value.errorClass == "DELTA_METADATA_CHANGED"
    assert DeltaTable.forPath(spark, str(path)).metadata().configuration.get("k1") == "v1"


def test_protocol_changed(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path, [_add("f0")])
    t1, t2 = _two(spark, path)
    assert t1.protocol() == Protocol.of(1, 2)
    t1.commit([Protocol.of(1, 3)], "UPGRADE PROTOCOL")
    with pytest.raises(DeltaConcurrentModificationException) as ei:
        t2.commit([Protocol.of(1, 4)], "UPGRADE PROTOCOL")
    assert deltalog_class(ei.value) is ProtocolChangedException
    assert ei.value.errorClass == "DELTA_PROTOCOL_CHANGED"
    assert DeltaTable.forPath(spark, str(path)).protocol() == Protocol.of(1, 3)


def test_delete_read_conflict(spark, tmp_path):
    path = tmp_path / "t"
    a1 = _add("a1", "a")
    _create(spark, path, [a1, _add("b1", "b")])
    reader, deleter = _two(spark, path)
    assert [f.path for f in reader.filterFiles(["p = 'a'"])] == [a1.path]
    deleter.commit([a1.remove(_now())], "DELETE")
    with pytest.raises(DeltaConcurrentModificationException) as ei:
        reader.commit([_add("a-derived", "c")], "WRITE")
    assert deltalog_class(ei.value) is ConcurrentDeleteReadException
    assert ei.value.errorClass == "DELTA_CONCURRENT_DELETE_READ"
    assert "a1.parquet" in str(ei.value)


def test_concurrent_transaction_same_app_id(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path)
    t1, t2 = _two(spark, path)
    assert t1.txnVersion("stream-1") == -1 and t2.txnVersion("stream-1") == -1
    t1.commit([_add("x1"), SetTransaction("stream-1", 0, _now())], "STREAMING UPDATE")
    with pytest.raises(DeltaConcurrentModificationException) as ei:
        t2.commit([_add("x2"), SetTransaction("stream-1", 0, _now())], "STREAMING UPDATE")
    assert deltalog_class(ei.value) is ConcurrentTransactionException
    assert ei.value.errorClass == "DELTA_CONCURRENT_TRANSACTION"
    assert set(_live(spark, path)) == {"p=a/x1.parquet"}


def test_each_conflict_is_a_delta_concurrent_modification_exception():
    for cls in (ConcurrentWriteException, MetadataChangedException, ProtocolChangedException,
                ConcurrentAppendException, ConcurrentDeleteReadException,
                ConcurrentDeleteDeleteException, ConcurrentTransactionException,
                MaxCommitAttemptsExceededException):
        assert issubclass(cls, DeltaConcurrentModificationException)
        assert issubclass(cls, DeltalogError)
    from deltalog.exceptions import ERROR_CLASSES
    assert {k for k, v in ERROR_CLASSES.items() if issubclass(v, DeltaConcurrentModificationException)} >= {
        "DELTA_CONCURRENT_WRITE", "DELTA_METADATA_CHANGED", "DELTA_PROTOCOL_CHANGED", "DELTA_CONCURRENT_APPEND",
        "DELTA_CONCURRENT_DELETE_READ", "DELTA_CONCURRENT_DELETE_DELETE", "DELTA_CONCURRENT_TRANSACTION"}


# ----------------------------------------------------------------------------------- idempotent writes


def _idempotent_write(spark, path: Path, appId: str, batch: int, adds: List[AddFile]) -> Optional[int]:
    """Write `adds` as batch `batch` of `appId` unless it was written already (retrying conflicts)."""
    for _ in range(5):
        txn = _start(spark, path)
        if txn.txnVersion(appId) >= batch:
            return None
        try:
            return txn.commit([*adds, SetTransaction(appId, batch, _now())], "WRITE", {"mode": "Append"})
        except ConcurrentTransactionException:
            continue
    raise AssertionError("no progress")


def test_idempotent_write_applied_once(spark, tmp_path):
    path = tmp_path / "t"
    _create(spark, path)
    assert _idempotent_write(spark, path, "job", 7, [_add("b7")]) == 1
    assert _idempotent_write(spark, path, "job", 7, [_add("b7-retry")]) is None
    assert _idempotent_write(spark, path, "job", 6, [_add("b6")]) is None
    assert _idempotent_write(spark, path, "job", 8, [_add("b8")]) == 2
    assert set(_live(spark, path)) == {"p=a/b7.parquet", "p=a/b8.parquet"}
    assert DeltaTable.forPath(spark, str(path)).setTransactions()["job"].version == 8

    # a retry racing the original: the loser sees the winner's txn and does nothing
    t1, t2 = _two(spark, path)
    assert t1.txnVersion("job") == t2.txnVersion("job") == 8
    t1.commit([_add("b9"), SetTransaction("job", 9, _now())], "WRITE")
    with pytest.raises(ConcurrentTransactionException):
        t2.commit([_add("b9-dup"), SetTransaction("job", 9, _now())], "WRITE")
    assert _idempotent_write(spark, path, "job", 9, [_add("b9-dup")]) is None
    assert "p=a/b9-dup.parquet" not in _live(spark, path)


# ----------------------------------------------------------------------------------- cross-engine


def test_delta_rs_reads_committed_table(spark, tmp_path):
    path = tmp_path / "t"
    files = [_add(f"f{i}", p) for i, p in enumerate(["a", "b", "a", None])]
    _create(spark, path, files[:2])
    _start(spark, path).commit(files[2:], "WRITE", {"mode": "Append"})
    t = _start(spark, path)
    t.commit([files[0].remove(_now()), _add("f9", "b")], "DELETE", {"predicate": ["id = 0"]})
    ours = _live(spark, path)
    assert ours == _rs_live(path)
    assert set(ours) == {files[1].path, files[2].path, files[3].path, "p=b/f9.parquet"}
    rs = RsTable(str(path))
    assert rs.version() == 2
    assert rs.metadata().partition_columns == ["p"]
    assert rs.history()[0]["operation"] == "DELETE"


def test_seed_assertions_are_typed(spark, tmp_path):
    from deltalog.exceptions import DeltalogAssertionError
    path = tmp_path / "t"
    _create(spark, path)
    txn = _start(spark, path)
    md = txn.metadata()
    txn.updateMetadata(md)
    with pytest.raises(DeltalogAssertionError) as ei:  # a second metadata change
        txn.updateMetadata(md)
    assert isinstance(ei.value, AssertionError) and isinstance(ei.value, DeltalogError)
    assert "more than once" in str(ei.value)
    t2 = _start(spark, path)
    t2.commit([_add("x")], "WRITE")
    with pytest.raises(DeltalogAssertionError, match="already committed"):
        t2.commit([_add("y")], "WRITE")
