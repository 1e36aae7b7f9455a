"""DeltaTable.forPath against tables written by another engine (delta-rs), checkpoints both ways,
time travel, and the typed errors of the read path."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable as RsTable
from deltalake import write_deltalake

from deltalog.exceptions import (
    ActionParseError,
    CorruptLogFileError,
    TableNotFoundError,
    TimestampOutOfRangeError,
    UnsupportedTableFeatureError,
    VersionNotContiguousError,
    VersionNotFoundError,
)
from deltalog.tables import DeltaTable

CITIES = ["New York", "a:b", "100%", "x=y", "Zürich", None]


def _rs_adds(path) -> dict:
    t = pa.table(RsTable(str(path)).get_add_actions(flatten=False))
    return {p: s for p, s in zip(t.column("path").to_pylist(), t.column("size_bytes").to_pylist())}


def _commit_mtimes(path: Path, base_ms: int, step_ms: int) -> None:
    log = path / "_delta_log"
    for f in sorted(log.glob("*.json")):
        v = int(f.name.split(".")[0])
        t = (base_ms + v * step_ms) / 1000
        os.utime(f, (t, t))


@pytest.fixture()
def rs_table(tmp_path):
    path = tmp_path / "rs"
    for i, city in enumerate(CITIES):
        write_deltalake(str(path), pa.table({"id": pa.array([i, i + 100], pa.int64()),
                                             "city": pa.array([city, city], pa.string())}),
                        mode="append", partition_by=["city"])
    return path


def test_reads_a_delta_rs_table(spark, rs_table):
    DeltaTable.clearCache(spark)
    dt = DeltaTable.forPath(spark, str(rs_table))
    assert dt.version() == len(CITIES) - 1
    files = dt.filesArrow()
    assert dict(zip(files.column("path").to_pylist(), files.column("size").to_pylist())) == _rs_adds(rs_table)
    pvs = {dict(pv)["city"] for pv in files.column("partitionValues").to_pylist()}
    assert pvs == set(CITIES)
    assert dt.protocol().simpleString == "1,2"
    assert dt.partitionColumns() == ["city"]
    assert [f.name for f in dt.schema().fields] == ["id", "city"]
    snap = dt.snapshot()
    assert snap.numFiles == len(CITIES) and snap.sizeInBytes == sum(_rs_adds(rs_table).values())
    df = dt.files()
    assert df.count() == len(CITIES)


def test_time_travel_by_version_and_timestamp(spark, rs_table):
    _commit_mtimes(rs_table, 1_700_000_000_000, 60_000)
    DeltaTable.clearCache(spark)
    assert DeltaTable.forPath(spark, str(rs_table), version=0).filesArrow().num_rows == 1
    assert DeltaTable.forPath(spark, str(rs_table), version=2).snapshot().numFiles == 3
    at = DeltaTable.forPath(spark, str(rs_table), timestamp=1_700_000_000_000 + 2 * 60_000 + 30_000)
    assert at.version() == 2
    assert DeltaTable.forPath(spark, str(rs_table), timestamp="2023-11-14 22:15:00").version() == 1
    with pytest.raises(VersionNotFoundError) as info:
        DeltaTable.forPath(spark, str(rs_table), version=99)
    assert "99" in str(info.value) and str(len(CITIES) - 1) in str(info.value)
    with pytest.raises(TimestampOutOfRangeError):
        DeltaTable.forPath(spark, str(rs_table), timestamp=1_600_000_000_000)


def test_removes_become_tombstones(spark, tmp_path):
    path = tmp_path / "del"
    write_deltalake(str(path), pa.table({"id": pa.array(range(10), pa.int64())}))
    write_deltalake(str(path), pa.table({"id": pa.array(range(10, 20), pa.int64())}), mode="append")
    RsTable(str(path)).delete("id >= 10")
    DeltaTable.clearCache(spark)
    dt = DeltaTable.forPath(spark, str(path))
    assert dt.version() == 2
    assert dt.filesArrow().num_rows == len(_rs_adds(path))
    assert dt.tombstonesArrow().num_rows >= 1


def test_delta_rs_checkpoint_is_read(spark, rs_table):
    RsTable(str(rs_table)).create_checkpoint()
    write_deltalake(str(rs_table), pa.table({"id": pa.array([7], pa.int64()), "city": ["after"]}),
                    mode="append", partition_by=["city"])
    DeltaTable.clearCache(spark)
    dt = DeltaTable.forPath(spark, str(rs_table))
    assert dt.version() == len(CITIES)
    assert set(dt.filesArrow().column("path").to_pylist()) == set(_rs_adds(rs_table))


def test_deltalog_checkpoint_is_read_by_delta_rs(spark, rs_table):
    DeltaTable.clearCache(spark)
    DeltaTable.forPath(spark, str(rs_table)).checkpoint()
    log = rs_table / "_delta_log"
    cp = log / f"{len(CITIES) - 1:020d}.checkpoint.parquet"
    assert cp.exists()
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == len(CITIES) - 1
    # delta-rs must see the same table from our checkpoint alone.
    for f in log.glob("*.json"):
        if int(f.name.split(".")[0]) < len(CITIES) - 1:
            f.unlink()
    rs = RsTable(str(rs_table))
    assert rs.version() == len(CITIES) - 1
    DeltaTable.clearCache(spark)
    ours = DeltaTable.forPath(spark, str(rs_table)).filesArrow()
    assert set(ours.column("path").to_pylist()) == set(_rs_adds(rs_table))


def test_incremental_update_sees_new_commits(spark, rs_table):
    DeltaTable.clearCache(spark)
    first = DeltaTable.forPath(spark, str(rs_table))
    write_deltalake(str(rs_table), pa.table({"id": pa.array([1], pa.int64()), "city": ["new"]}),
                    mode="append", partition_by=["city"])
    second = DeltaTable.forPath(spark, str(rs_table))
    assert second.version() == first.version() + 1
    assert second.filesArrow().num_rows == first.filesArrow().num_rows + 1


def test_not_a_table(spark, tmp_path):
    with pytest.raises(TableNotFoundError) as info:
        DeltaTable.forPath(spark, str(tmp_path / "nothing"))
    assert "nothing" in str(info.value)


def test_unsupported_reader_feature_is_named(spark, rs_table):
    log = rs_table / "_delta_log"
    v = len(CITIES)
    (log / f"{v:020d}.json").write_text(json.dumps({"protocol": {
        "minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["futureFeature"], "writerFeatures": ["futureFeature"]}}) + "\n")
    DeltaTable.clearCache(spark)
    with pytest.raises(UnsupportedTableFeatureError) as info:
        DeltaTable.forPath(spark, str(rs_table)).filesArrow()
    assert info.value.unsupportedFeatures == ["futureFeature"]


def test_malformed_commit_names_file_and_line(spark, rs_table):
    log = rs_table / "_delta_log"
    bad = log / f"{len(CITIES):020d}.json"
    bad.write_text('{"commitInfo":{}}\n{"add":{"path":"x.parquet","size":"big"}}\n')
    DeltaTable.clearCache(spark)
    with pytest.raises(ActionParseError) as info:
        DeltaTable.forPath(spark, str(rs_table)).filesArrow()
    assert bad.name in str(info.value) and "line 2" in str(info.value) and "add.size" in str(info.value)


def test_missing_commit_is_named(spark, rs_table):
    (rs_table / "_delta_log" / f"{2:020d}.json").unlink()
    DeltaTable.clearCache(spark)
    with pytest.raises(VersionNotContiguousError) as info:
        DeltaTable.forPath(spark, str(rs_table))
    assert "2" in str(info.value)


@pytest.mark.parametrize("damage", ["cut", "pages"])
def test_damaged_checkpoint_names_the_file(spark, rs_table, damage):
    # delta-rs writes uncompressed checkpoints, which the engine reads from a memory map with its
    # own page decoders: a damaged one must still surface as CorruptLogFileError naming the file,
    # from the lazy file state (filesArrow) as from the open (the footer)
    RsTable(str(rs_table)).create_checkpoint()
    cp = rs_table / "_delta_log" / f"{len(CITIES) - 1:020d}.checkpoint.parquet"
    data = bytearray(cp.read_bytes())
    if damage == "cut":
        data = data[: len(data) // 2]
    else:  # every page header and value of the first half, footer intact
        data[4: len(data) // 2] = b"\xff" * (len(data) // 2 - 4)
    cp.write_bytes(bytes(data))
    DeltaTable.clearCache(spark)
    with pytest.raises(CorruptLogFileError) as info:
        DeltaTable.forPath(spark, str(rs_table)).filesArrow()
    assert cp.name in str(info.value)


def _with_protocol_versions(table: pa.Table, reader: int, writer: int) -> pa.Table:
    """`table` (a checkpoint's rows) with the protocol row's versions replaced."""
    prot = table.column("protocol").combine_chunks()
    rows = [None if r is None else dict(r, minReaderVersion=reader, minWriterVersion=writer)
            for r in prot.to_pylist()]
    i = table.schema.get_field_index("protocol")
    return table.set_column(i, table.schema.field(i), pa.array(rows, prot.type))


def _set_protocol_in_checkpoint(spark, table: Path, reader: int, writer: int) -> Path:
    import pyarrow.parquet as pq
    RsTable(str(table)).create_checkpoint()
    cp = table / "_delta_log" / f"{len(CITIES) - 1:020d}.checkpoint.parquet"
    pq.write_table(_with_protocol_versions(pq.read_table(cp), reader, writer), cp, compression="none")
    DeltaTable.clearCache(spark)
    return cp


def _set_protocol_in_first_commit(spark, table: Path, **fields) -> Path:
    commit = table / "_delta_log" / f"{0:020d}.json"
    lines = commit.read_text().splitlines()
    lines = [json.dumps({"protocol": dict(json.loads(x)["protocol"], **fields)})
             if x.startswith('{"protocol"') else x for x in lines]
    commit.write_text("\n".join(lines) + "\n")
    DeltaTable.clearCache(spark)
    return commit


def test_newer_protocol_version_is_unsupported_not_corrupt(spark, rs_table):
    # (5,7) is a protocol from a newer Delta client, not a damaged line: reads fail with the typed
    # unsupported-protocol error naming the table and the versions (delta-spark: "upgrade"), whether
    # the protocol comes from a Parquet checkpoint or from a JSON commit
    _set_protocol_in_checkpoint(spark, rs_table, 5, 7)
    with pytest.raises(UnsupportedTableFeatureError) as info:
        DeltaTable.forPath(spark, str(rs_table))
    e = info.value
    assert e.errorClass == "DELTA_UNSUPPORTED_FEATURES_FOR_READ" and e.access == "read"
    assert str(rs_table) in e.table and "needs protocol versions (5,7) above" in str(e)

    cp = rs_table / "_delta_log" / f"{len(CITIES) - 1:020d}.checkpoint.parquet"
    cp.unlink()
    (rs_table / "_delta_log" / "_last_checkpoint").unlink()
    _set_protocol_in_first_commit(spark, rs_table, minReaderVersion=5, minWriterVersion=7,
                                  readerFeatures=[], writerFeatures=[])
    with pytest.raises(UnsupportedTableFeatureError) as info:
        DeltaTable.forPath(spark, str(rs_table)).filesArrow()
    assert str(rs_table) in info.value.table and "(5,7)" in str(info.value)


def test_newer_writer_version_reads_but_does_not_write(spark, rs_table):
    # Readers check reader versions only: a writer version 8 table reads as before; writes refuse
    before = DeltaTable.forPath(spark, str(rs_table)).filesArrow().num_rows
    _set_protocol_in_first_commit(spark, rs_table, minWriterVersion=8, writerFeatures=[])
    dt = DeltaTable.forPath(spark, str(rs_table))
    assert dt.protocol().minWriterVersion == 8 and dt.filesArrow().num_rows == before
    with pytest.raises(UnsupportedTableFeatureError) as info:
        dt.startTransaction().commit([], "WRITE")
    assert info.value.access == "write" and "(1,8)" in str(info.value)
    with pytest.raises(UnsupportedTableFeatureError):  # a checkpoint is a write to the log too
        dt.checkpoint()
    assert not list((rs_table / "_delta_log").glob("*.checkpoint*"))
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"):
        spark.createDataFrame([(9, "q")], "id long, city string").write.format("deltalog") \
            .mode("append").save(str(rs_table))
    assert DeltaTable.forPath(spark, str(rs_table)).version() == len(CITIES) - 1


def test_invalid_protocol_version_names_the_log_file(spark, rs_table):
    # minReaderVersion 0 is no protocol version at all: a typed error naming the file that holds
    # it, whether that is a Parquet checkpoint (read column-wise and assembled) or a JSON commit
    cp = _set_protocol_in_checkpoint(spark, rs_table, 0, 2)
    with pytest.raises(CorruptLogFileError) as info:
        DeltaTable.forPath(spark, str(rs_table))
    assert cp.name in str(info.value) and "Protocol (0,2)" in str(info.value)

    cp.unlink()
    (rs_table / "_delta_log" / "_last_checkpoint").unlink()
    commit = _set_protocol_in_first_commit(spark, rs_table, minReaderVersion=0)
    with pytest.raises(ActionParseError) as info:
        DeltaTable.forPath(spark, str(rs_table))
    assert commit.name in str(info.value) and "Protocol (0," in str(info.value)


def test_copy_of_table_is_independent(spark, rs_table, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(rs_table, copy)
    DeltaTable.clearCache(spark)
    assert DeltaTable.forPath(spark, str(copy)).version() == DeltaTable.forPath(spark, str(rs_table)).version()


def test_arrow_transfer_uses_the_configured_directory(spark, rs_table, tmp_path, monkeypatch):
    import tempfile

    import deltalog.tables as tables
    used = []
    real = tempfile.mkstemp

    def recording(*args, **kwargs):
        used.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    transfer = tmp_path / "transfer"
    transfer.mkdir()
    monkeypatch.setenv("DELTALOG_TRANSFER_DIR", str(transfer))
    monkeypatch.setattr(tempfile, "mkstemp", recording)
    files = tables.DeltaTable.forPath(spark, str(rs_table)).filesArrow()
    assert used == [str(transfer)]
    assert set(files.column("path").to_pylist()) == set(_rs_adds(rs_table))
    # the transfer file stays for reuse (see TransferFiles) and goes when the pool is closed
    assert [p.name.startswith(f"deltalog-{os.getpid()}-") for p in transfer.iterdir()] == [True]
    from deltalog._files_transfer import TRANSFER_FILES
    TRANSFER_FILES.close()
    assert list(transfer.iterdir()) == []


def test_small_shared_memory_is_not_used_for_transfers(monkeypatch):
    import os as _os

    import deltalog.tables as tables
    monkeypatch.delenv("DELTALOG_TRANSFER_DIR", raising=False)

    class Small:
        f_bavail = 16
        f_frsize = 4096

    monkeypatch.setattr(_os, "statvfs", lambda p: Small())
    assert tables._transfer_dir() is None
