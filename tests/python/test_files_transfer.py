"""The raw live-file transfer (``FilesTransfer`` on the JVM, ``deltalog._files_transfer`` here)
gives exactly the table of the Arrow IPC path (``FilesArrow``): same schema, rows and batches, on
every readable corpus table and on partitioned tables with null and non-ASCII partition values,
in small and large batches. States the raw format leaves out (tags, deletion vectors, row
tracking) must fall back to the IPC path."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltalog._files_transfer import read_files_transfer
from deltalog.exceptions import DeltalogError
from deltalog.tables import DeltaTable

from conformance_corpus import CONFORMANCE as CORPUS

ENTRIES = [e for e in json.loads((CORPUS / "manifest.json").read_text()) if not e["must_fail"]]


def _raw(spark, dt, tmp_path, batch_size=None):
    f = str(tmp_path / "t.files")
    if batch_size is None:
        wrote = dt._handle.filesRawToFile(f)
    else:
        wrote = spark._jvm.io.deltalog.api.FilesTransfer.write(dt._handle.snapshot().state(), f, batch_size)
    return read_files_transfer(f) if wrote else None


def _ipc(dt):
    return dt._arrow("filesArrowToFile")


def _same(raw, ipc):
    for b in raw.to_batches():
        b.validate(full=True)
    assert raw.schema.equals(ipc.schema, check_metadata=False), (raw.schema, ipc.schema)
    assert raw.equals(ipc)


def test_every_corpus_table(spark, tmp_path):
    raw_used = fell_back = 0
    for entry in ENTRIES:
        try:
            dt = DeltaTable.forPath(spark, str(CORPUS / entry["table_path"]))
            ipc = _ipc(dt)
        except DeltalogError:
            continue  # reader-dependent entries: test_conformance covers them
        raw = _raw(spark, dt, tmp_path)
        if raw is None:
            fell_back += 1
            assert any(v is not None for v in ipc.column("deletionVector").to_pylist()) or \
                any(v is not None for v in ipc.column("tags").to_pylist()) or \
                any(v is not None for v in ipc.column("baseRowId").to_pylist()) or \
                any(v is not None for v in ipc.column("defaultRowCommitVersion").to_pylist()) or \
                any(v is not None for v in ipc.column("clusteringProvider").to_pylist()), entry["id"]
        else:
            raw_used += 1
            _same(raw, ipc)
            assert dt.filesArrow().equals(ipc)
    assert raw_used > 100 and fell_back > 0, (raw_used, fell_back)


@pytest.mark.parametrize("batch_size", [1, 7, 1000])
def test_partitioned_table_in_small_batches(spark, tmp_path, batch_size):
    path = str(tmp_path / "t")
    data = pa.table({"id": list(range(60)),
                     "p": [None if i % 4 == 0 else ("ü€ x/y" if i % 4 == 1 else f"v{i % 3}") for i in range(60)],
                     "q": [i % 2 for i in range(60)]})
    write_deltalake(path, data, partition_by=["p", "q"])
    write_deltalake(path, data.slice(0, 10), partition_by=["p", "q"], mode="append")
    dt = DeltaTable.forPath(spark, path)
    ipc = _ipc(dt)
    assert ipc.num_rows > 10
    raw = _raw(spark, dt, tmp_path, batch_size)
    expected_batches = -(-ipc.num_rows // batch_size)
    assert len(raw.to_batches()) == expected_batches
    _same(raw, ipc.combine_chunks())


def test_empty_table(spark, tmp_path):
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"id": pa.array([], pa.int64())}))
    dt = DeltaTable.forPath(spark, path)
    raw = _raw(spark, dt, tmp_path)
    assert raw.num_rows == 0
    _same(raw, _ipc(dt))


def test_not_a_transfer_file(tmp_path):
    f = tmp_path / "x.files"
    f.write_bytes(b"PAR1" + os.urandom(64))
    with pytest.raises(ValueError, match="not a deltalog live-file transfer"):
        read_files_transfer(str(f))


def _table(tmp_path, name, rows):
    path = str(tmp_path / name)
    write_deltalake(path, pa.table({"id": pa.array(range(rows), pa.int64()),
                                    "s": pa.array([f"v{i}" for i in range(rows)])}))
    for i in range(3):
        write_deltalake(path, pa.table({"id": pa.array([i], pa.int64()), "s": pa.array(["x"])}), mode="append")
    return path


def _pool_files(d):
    return sorted(p.name for p in Path(d).iterdir() if p.name.startswith(f"deltalog-{os.getpid()}-"))


def test_transfer_files_are_reused_only_when_unmapped(spark, tmp_path, monkeypatch):
    import gc

    from deltalog._files_transfer import TRANSFER_FILES
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setenv("DELTALOG_TRANSFER_DIR", str(shm))
    big = DeltaTable.forPath(spark, _table(tmp_path, "big", 50))
    small = DeltaTable.forPath(spark, _table(tmp_path, "small", 5))
    expected_big, expected_small = _ipc(big), _ipc(small)
    first = big.filesArrow()
    assert first.equals(expected_big)
    files = _pool_files(shm)
    assert len(files) == 1
    # The first table still maps its file: the next transfer must not overwrite it.
    second = small.filesArrow()
    assert second.equals(expected_small)
    assert first.equals(expected_big)
    assert len(_pool_files(shm)) == 2
    # Once no table maps a file, it is written again (cut to the new size) instead of a new one.
    del first
    gc.collect()
    third = small.filesArrow()
    assert third.equals(expected_small) and second.equals(expected_small)
    assert len(_pool_files(shm)) == 2
    del second, third
    gc.collect()
    again = big.filesArrow()
    assert again.equals(expected_big)
    assert _pool_files(shm) == files or len(_pool_files(shm)) == 2
    del again
    gc.collect()
    TRANSFER_FILES.close()
    assert _pool_files(shm) == []


def test_transfer_reuse_can_be_turned_off(spark, tmp_path, monkeypatch):
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setenv("DELTALOG_TRANSFER_DIR", str(shm))
    monkeypatch.setenv("DELTALOG_TRANSFER_REUSE", "0")
    dt = DeltaTable.forPath(spark, _table(tmp_path, "t", 20))
    t = dt.filesArrow()
    assert t.equals(_ipc(dt))
    assert list(shm.iterdir()) == []  # unlinked once mapped; the table still reads it
    assert t.column("path").to_pylist() == _ipc(dt).column("path").to_pylist()


def test_files_of_dead_processes_are_removed(tmp_path):
    import subprocess
    import sys

    from deltalog._files_transfer import TransferFiles
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    stale = tmp_path / f"deltalog-{dead}-abc.files"
    stale.write_bytes(b"x")
    other = tmp_path / "deltalog-notapid.files"
    other.write_bytes(b"y")
    pool = TransferFiles()
    path, pooled = pool.acquire(str(tmp_path))
    assert pooled and os.path.exists(path)
    assert not stale.exists() and other.exists()
    pool.close()
    assert not os.path.exists(path)


def test_forked_child_leaves_the_parents_transfer_files_alone(tmp_path):
    from deltalog._files_transfer import TransferFiles
    pool = TransferFiles()
    path, pooled = pool.acquire(str(tmp_path))
    assert pooled
    pool.release(path)  # free in the parent: a child must still not take or remove it
    pid = os.fork()
    if pid == 0:  # child
        try:
            child_path, _ = pool.acquire(str(tmp_path))
            pool.close()
            os._exit(0 if child_path != path and os.path.exists(path) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert os.path.exists(path)
    again, pooled = pool.acquire(str(tmp_path))
    assert pooled and again == path  # still the parent's, reused
    pool.close()
    assert not os.path.exists(path)

