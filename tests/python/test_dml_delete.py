"""DELETE (issue 27): ``DELETE FROM t [WHERE cond]`` and ``DeltaTable.delete``.

Each test checks the rows left against pandas over the same rows, the statement's result, the
commit (operation, parameters and metric names as delta-spark 4.4 writes them for the same DELETE
on its own copy of the table), the file actions and deletion vectors in the log, and that
delta-spark, delta-rs and DuckDB read the table exactly as deltalog does.
"""
from __future__ import annotations

import glob
import json
import re
import struct
import sys
import zlib
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO_ROOT, java_error_classes

sys.path.insert(0, str(REPO_ROOT / "integration"))
from peers import duckdb_connection  # noqa: E402

COLS = "(id BIGINT, name STRING, p INT)"
ROWS = [(i, f"n{i}", i % 2) for i in range(20)] + [(None, "null-id", 0)]


# ------------------------------------------------------------------------------------------ helpers
def create(spark, path: Path, props: str = "", partitioned: bool = False) -> None:
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} {COLS} USING deltalog {'PARTITIONED BY (p)' if partitioned else ''} {props}")
    insert_rows(spark, t)


def insert_rows(spark, t: str) -> None:
    # three commits: several files, one holding the NULL id
    for chunk in (ROWS[:10], ROWS[10:20], ROWS[20:]):
        values = ", ".join(f"({'NULL' if i is None else i}, '{n}', {p})" for i, n, p in chunk)
        spark.sql(f"INSERT INTO {t} VALUES {values}")


def create_delta_spark(delta_spark, path: Path, props: str = "", partitioned: bool = False) -> None:
    t = f"delta.`{path}`"
    stmts = [f"CREATE TABLE {t} {COLS} USING delta {'PARTITIONED BY (p)' if partitioned else ''} {props}"]
    for chunk in (ROWS[:10], ROWS[10:20], ROWS[20:]):
        values = ", ".join(f"({'NULL' if i is None else i}, '{n}', {p})" for i, n, p in chunk)
        stmts.append(f"INSERT INTO {t} VALUES {values}")
    delta_spark.run("for s in args['stmts']:\n    spark.sql(s)", stmts=stmts)


def expected(keep) -> list:
    df = pd.DataFrame(ROWS, columns=["id", "name", "p"]).astype({"id": "Int64"})
    left = df[[bool(keep(r)) for r in df.itertuples(index=False)]]
    return srt(norm(r) for r in left.itertuples(index=False))


def srt(rows) -> list:
    """Rows sorted with NULLs last in each column."""
    return sorted(rows, key=lambda t: tuple((v is None, "" if v is None else v) for v in t))


def norm(r) -> tuple:
    return tuple(None if (v is None or (not isinstance(v, str) and pd.isna(v))) else (v if isinstance(v, str) else int(v))
                 for v in r)


def rows_deltalog(spark, path: Path) -> list:
    return srt(norm(r) for r in spark.read.format("deltalog").load(str(path)).select("id", "name", "p").collect())


def rows_delta_spark(delta_spark, path: Path) -> list:
    got = delta_spark.run("result = [list(r) for r in spark.read.format('delta').load(args['p'])"
                          ".select('id', 'name', 'p').collect()]", p=str(path))
    return srt(norm(r) for r in got)


def rows_delta_rs(path: Path) -> list:
    """delta-rs's rows: through its query engine (its pyarrow export refuses tables with the
    deletionVectors reader feature), and through ``to_pyarrow_table()`` too when the table has none."""
    import deltalake
    import pyarrow as pa
    dt = deltalake.DeltaTable(str(path))
    t = pa.table(deltalake.QueryBuilder().register("t", dt).execute("SELECT id, name, p FROM t").read_all()).to_pydict()
    got = srt(norm(r) for r in zip(t["id"], t["name"], t["p"]))
    if "deletionVectors" not in (dt.protocol().reader_features or []):
        t = dt.to_pyarrow_table().to_pydict()
        assert srt(norm(r) for r in zip(t["id"], t["name"], t["p"])) == got
    return got


def rows_duckdb(path: Path) -> list:
    con = duckdb_connection()
    return srt(norm(r) for r in con.execute(f"SELECT id, name, p FROM delta_scan('{path}')").fetchall())


def assert_all_engines_read(spark, delta_spark, path: Path, want: list) -> None:
    assert rows_deltalog(spark, path) == want
    assert rows_delta_spark(delta_spark, path) == want
    assert rows_delta_rs(path) == want
    assert rows_duckdb(path) == want


def commit(path: Path, version: int = -1) -> list:
    files = sorted(glob.glob(str(path / "_delta_log" / "*.json")))
    f = files[version] if version < 0 else str(path / "_delta_log" / f"{version:020d}.json")
    return [json.loads(line) for line in Path(f).read_text().splitlines()]


def version_of(path: Path) -> int:
    return len(glob.glob(str(path / "_delta_log" / "*.json"))) - 1


def commit_info(actions: list) -> dict:
    return next(a["commitInfo"] for a in actions if "commitInfo" in a)


def kinds(actions: list, kind: str) -> list:
    return [a[kind] for a in actions if kind in a]


def without_ids(predicate: str) -> list:
    return [re.sub(r"#\d+", "", p) for p in json.loads(predicate)]


def assert_commit_like_delta_spark(ours: dict, theirs: dict) -> None:
    assert ours["operation"] == theirs["operation"] == "DELETE"
    assert without_ids(ours["operationParameters"]["predicate"]) == \
        without_ids(theirs["operationParameters"]["predicate"])
    assert sorted(ours["operationMetrics"]) == sorted(theirs["operationMetrics"])
    assert ours["isBlindAppend"] is False and theirs["isBlindAppend"] is False


# ------------------------------------------------------------------------------------------ tests
def test_delete_copy_on_write_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours)
    create_delta_spark(delta_spark, theirs)
    res = spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE id > 5")
    assert res.schema.simpleString() == "struct<num_affected_rows:bigint>"
    assert [tuple(r) for r in res.collect()] == [(14,)]
    their_res = delta_spark.run(f"result = [list(r) for r in spark.sql('DELETE FROM delta.`{theirs}` WHERE id > 5').collect()]")
    assert their_res == [[14]]

    want = expected(lambda r: pd.isna(r.id) or r.id <= 5)  # a NULL id is kept
    assert_all_engines_read(spark, delta_spark, ours, want)

    a, b = commit(ours), commit(theirs)
    assert_commit_like_delta_spark(commit_info(a), commit_info(b))
    m = commit_info(a)["operationMetrics"]
    assert m["numDeletedRows"] == "14" and m["numCopiedRows"] == "1"
    removes, adds = kinds(a, "remove"), kinds(a, "add")
    assert all(r["dataChange"] and r["extendedFileMetadata"] for r in removes)
    assert int(m["numRemovedFiles"]) == len(removes) and int(m["numAddedFiles"]) == len(adds)
    assert all(x.get("deletionVector") is None for x in adds)
    # exactly the files holding an id > 5 are removed; those also holding an id <= 5 are rewritten
    before = [x for v in range(1, 4) for x in kinds(commit(ours, v), "add")]
    stats = {x["path"]: json.loads(x["stats"]) for x in before}
    assert {r["path"] for r in removes} == {p for p, st in stats.items() if (st["maxValues"].get("id") or -1) > 5}
    partial = [p for p, st in stats.items() if st["maxValues"].get("id") is not None
               and st["minValues"]["id"] <= 5 < st["maxValues"]["id"]]
    assert len(adds) == len(partial)
    assert int(m["numAddedBytes"]) == sum(x["size"] for x in adds)
    assert int(m["numRemovedBytes"]) == sum(r["size"] for r in removes)


def test_delete_with_deletion_vectors_like_delta_spark(spark, tmp_path, delta_spark):
    props = "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, props)
    create_delta_spark(delta_spark, theirs, props)
    before = {x["path"]: x for v in range(1, 4) for x in kinds(commit(ours, v), "add")}
    res = spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE id % 3 = 0")
    assert [tuple(r) for r in res.collect()] == [(7,)]
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}` WHERE id % 3 = 0')")
    a = commit(ours)
    assert_commit_like_delta_spark(commit_info(a), commit_info(commit(theirs)))
    adds, removes = kinds(a, "add"), kinds(a, "remove")
    # same files, new DVs; files whose rows all match are removed whole
    assert adds and {x["path"] for x in adds} <= set(before)
    for x in adds:
        dv = x["deletionVector"]
        old = before[x["path"]]
        assert x["stats"] != old["stats"] and json.loads(x["stats"])["tightBounds"] is False
        assert json.loads(x["stats"])["numRecords"] == json.loads(old["stats"])["numRecords"]
        assert dv["storageType"] == "u" and len(dv["pathOrInlineDv"]) == 20
        check_dv_file(ours, dv)
        assert any(r["path"] == x["path"] and r.get("deletionVector") is None for r in removes)
    whole = [r for r in removes if r["path"] not in {x["path"] for x in adds}]
    assert sum(x["deletionVector"]["cardinality"] for x in adds) + \
        sum(json.loads(before[r["path"]]["stats"])["numRecords"] for r in whole) == 7
    assert commit_info(a)["operationMetrics"]["numDeletionVectorsAdded"] == str(len(adds))
    want = expected(lambda r: not (not pd.isna(r.id) and r.id % 3 == 0))
    assert_all_engines_read(spark, delta_spark, ours, want)

    # a second DELETE merges the new rows into the existing DVs
    res = spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE id IN (1, 3, 4, 19)")
    assert [tuple(r) for r in res.collect()] == [(3,)]  # 3 was deleted already
    a2 = commit(ours)
    m = commit_info(a2)["operationMetrics"]
    assert m["numDeletedRows"] == "3"
    updated = [x for x in kinds(a2, "add") if x["path"] in {y["path"] for y in adds}]
    assert m["numDeletionVectorsUpdated"] == str(len(updated))
    for x in updated:
        old = next(y for y in adds if y["path"] == x["path"])
        assert x["deletionVector"]["cardinality"] > old["deletionVector"]["cardinality"]
        assert any(r["path"] == x["path"] and r["deletionVector"] == old["deletionVector"] for r in kinds(a2, "remove"))
    want = expected(lambda r: pd.isna(r.id) or (r.id % 3 != 0 and r.id not in (1, 4, 19)))
    assert_all_engines_read(spark, delta_spark, ours, want)


def check_dv_file(table: Path, dv: dict) -> None:
    """The DV file framing of the protocol: version byte 1, big-endian size, portable magic, CRC-32."""
    from deltalog._z85 import decodeUuid
    u = decodeUuid(dv["pathOrInlineDv"][-20:])
    data = (table / f"deletion_vector_{u}.bin").read_bytes()
    assert data[0] == 1
    off = dv["offset"]
    (size,) = struct.unpack(">i", data[off:off + 4])
    assert size == dv["sizeInBytes"]
    bitmap = data[off + 4:off + 4 + size]
    assert struct.unpack("<i", bitmap[:4])[0] == 1681511377
    (crc,) = struct.unpack(">i", data[off + 4 + size:off + 8 + size])
    assert crc & 0xFFFFFFFF == zlib.crc32(bitmap)


def test_delete_merges_the_dvs_of_a_table_delta_spark_wrote(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    create_delta_spark(delta_spark, path, "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{path}` WHERE id % 4 = 1')")  # delta-spark's DVs
    olds = {x["path"]: x["deletionVector"] for x in kinds(commit(path), "add")}
    assert olds and all(olds.values())
    res = spark.sql(f"DELETE FROM deltalog.`{path}` WHERE id % 4 = 2 OR id = 5")
    assert [tuple(r) for r in res.collect()] == [(5,)]  # 5 is gone already
    a = commit(path)
    for x in kinds(a, "add"):
        if x["path"] in olds:
            assert x["deletionVector"]["cardinality"] > olds[x["path"]]["cardinality"]
            assert any(r["deletionVector"] == olds[x["path"]] for r in kinds(a, "remove") if r["path"] == x["path"])
    want = expected(lambda r: pd.isna(r.id) or r.id % 4 not in (1, 2))
    assert_all_engines_read(spark, delta_spark, path, want)


def test_delete_partition_only_and_without_condition_read_nothing(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, partitioned=True)
    create_delta_spark(delta_spark, theirs, partitioned=True)
    # every file of partition p=1 made unreadable: a partition-only delete must not read them
    p1 = [x for v in range(1, 4) for x in kinds(commit(ours, v), "add") if x["partitionValues"]["p"] == "1"]
    res = spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE p = 1")
    assert [tuple(r) for r in res.collect()] == [(10,)]
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}` WHERE p = 1')")
    a = commit(ours)
    assert_commit_like_delta_spark(commit_info(a), commit_info(commit(theirs)))
    assert not kinds(a, "add") and {r["path"] for r in kinds(a, "remove")} == {x["path"] for x in p1}
    assert_all_engines_read(spark, delta_spark, ours, expected(lambda r: r.p != 1))

    # no condition: every file removed, the count from the stats
    from deltalog.tables import DeltaTable
    out = DeltaTable.forPath(spark, str(ours)).delete()
    assert [tuple(r) for r in out.collect()] == [(11,)]
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}`')")
    a = commit(ours)
    assert_commit_like_delta_spark(commit_info(a), commit_info(commit(theirs)))
    assert json.loads(commit_info(a)["operationParameters"]["predicate"]) == ["true"]
    assert not kinds(a, "add") and commit_info(a)["operationMetrics"]["numDeletedRows"] == "11"
    assert_all_engines_read(spark, delta_spark, ours, [])


def test_whole_file_proven_by_stats_is_removed_unread(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)
    # the file of ids 10-19 (second insert): its stats prove `id >= 10` holds for every row
    f = kinds(commit(path, 2), "add")
    assert len(f) >= 1
    for x in f:
        (path / x["path"]).write_bytes(b"not parquet any more")
    from pyspark.sql import functions as F
    from deltalog.tables import DeltaTable
    out = DeltaTable.forPath(spark, str(path)).delete(F.col("id") >= 10)
    assert [tuple(r) for r in out.collect()] == [(10,)]
    a = commit(path)
    assert {r["path"] for r in kinds(a, "remove")} == {x["path"] for x in f} and not kinds(a, "add")
    assert rows_deltalog(spark, path) == expected(lambda r: pd.isna(r.id) or r.id < 10)


def test_delete_change_data_feed(spark, tmp_path, delta_spark):
    for dv in ("false", "true"):
        path = tmp_path / f"cdf-dv-{dv}"
        create(spark, path, f"TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = '{dv}')",
               partitioned=True)
        v_partial = version_of(path) + 1
        spark.sql(f"DELETE FROM deltalog.`{path}` WHERE id > 13 OR (p = 0 AND id < 4)")
        assert kinds(commit(path), "cdc"), "a partial delete writes change data files"
        v_whole = version_of(path) + 1
        spark.sql(f"DELETE FROM deltalog.`{path}` WHERE p = 1")  # whole files: no cdc, the removes tell
        assert not kinds(commit(path), "cdc")
        want_partial = srt(norm(r) for r in ROWS if r[0] is not None and (r[0] > 13 or (r[2] == 0 and r[0] < 4)))
        left = [r for r in ROWS if not (r[0] is not None and (r[0] > 13 or (r[2] == 0 and r[0] < 4)))]
        want_whole = srt(norm(r) for r in left if r[2] == 1)
        ours = spark.read.format("deltalog").option("readChangeFeed", "true").option("startingVersion", v_partial) \
            .load(str(path)).select("id", "name", "p", "_change_type", "_commit_version").collect()
        theirs = delta_spark.run(
            "result = [list(r) for r in spark.sql(\"SELECT id, name, p, _change_type, _commit_version FROM "
            "table_changes_by_path('%s', %d)\").collect()]" % (path, v_partial))
        for got in (ours, theirs):
            got = [tuple(r) for r in got]
            assert all(r[3] == "delete" for r in got)
            assert srt(norm(r[:3]) for r in got if r[4] == v_partial) == want_partial
            assert srt(norm(r[:3]) for r in got if r[4] == v_whole) == want_whole


def test_delete_on_append_only_table_is_refused(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path, "TBLPROPERTIES ('delta.appendOnly' = 'true')")
    v = version_of(path)
    for stmt in (f"DELETE FROM deltalog.`{path}` WHERE id = 1", f"DELETE FROM deltalog.`{path}` WHERE false"):
        with pytest.raises(Exception, match="DELTA_CANNOT_MODIFY_APPEND_ONLY") as e:
            spark.sql(stmt)
        assert "io.deltalog.commands.InvalidWriteException" in java_error_classes(e.value)
    from deltalog.exceptions import AppendOnlyTableError
    from deltalog.tables import DeltaTable
    with pytest.raises(AppendOnlyTableError):
        DeltaTable.forPath(spark, str(path)).delete("id = 1")
    assert version_of(path) == v
    assert len(rows_deltalog(spark, path)) == len(ROWS)


def test_delete_on_catalog_table_and_typed_errors(spark, tmp_path):
    import uuid
    db = "dml_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'wh'}'")
    try:
        spark.sql(f"CREATE TABLE {db}.t {COLS} USING deltalog")
        insert_rows(spark, f"{db}.t")
        spark.table(f"{db}.t").cache().count()
        res = spark.sql(f"DELETE FROM {db}.t AS x WHERE x.id < 3 AND x.name <> 'n1'")
        assert [tuple(r) for r in res.collect()] == [(2,)]
        got = srt(norm(r) for r in spark.table(f"{db}.t").select("id", "name", "p").collect())
        assert got == expected(lambda r: pd.isna(r.id) or not (r.id < 3 and r.name != "n1"))
        with pytest.raises(Exception, match="UNRESOLVED_COLUMN|cannot be resolved"):
            spark.sql(f"DELETE FROM {db}.t WHERE nope = 1")
        from deltalog.exceptions import InvalidWriteError
        from deltalog.tables import DeltaTable
        loc = spark.sql(f"DESCRIBE DETAIL {db}.t").collect()[0]["location"]
        with pytest.raises(InvalidWriteError, match="DELTA_INVALID_DELETE_CONDITION"):
            DeltaTable.forPath(spark, loc).delete("nope = 1")
        with pytest.raises(TypeError):
            DeltaTable.forPath(spark, loc).delete(42)
        # the latest version only: a time-travelled table is refused, nothing committed
        v = version_of(Path(loc.replace("file:", "")))
        with pytest.raises(InvalidWriteError, match="DELTA_CANNOT_WRITE_TIME_TRAVEL"):
            DeltaTable.forPath(spark, loc, version=1).delete("id = 4")
        with pytest.raises(Exception, match="DELTA_CANNOT_WRITE_TIME_TRAVEL"):
            spark.sql(f"DELETE FROM deltalog.`{loc.replace('file:', '')}@v1` WHERE id = 4")
        with pytest.raises(Exception, match="DELTA_UNSUPPORTED_SUBQUERY|subquer"):
            spark.sql(f"DELETE FROM {db}.t WHERE id IN (SELECT 4)")
        assert version_of(Path(loc.replace("file:", ""))) == v
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def test_delete_conflicts_with_concurrent_commits(spark, tmp_path):
    """A competing commit lands between the DELETE's read and its commit (the engine's one-shot
    test hook): an append of a matching row conflicts under Serializable, not WriteSerializable;
    a concurrent delete of the same file conflicts whatever the isolation level."""
    from deltalog._jvm import api_class
    from deltalog.exceptions import (ConcurrentAppendException, ConcurrentDeleteReadException,
                                     DeltaConcurrentModificationException)
    from deltalog.tables import DeltaTable
    api = api_class(spark, "DmlApi")

    ser = tmp_path / "ser"
    create(spark, ser)
    v = version_of(ser)
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"INSERT INTO deltalog.`{ser}` VALUES (100, 'late', 0)")
    with pytest.raises(ConcurrentAppendException):
        DeltaTable.forPath(spark, str(ser)).delete("id > 5")
    assert version_of(ser) == v + 1  # only the append
    assert (100, "late", 0) in rows_deltalog(spark, ser)

    ws = tmp_path / "ws"
    create(spark, ws, "TBLPROPERTIES ('delta.isolationLevel' = 'WriteSerializable')")
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"INSERT INTO deltalog.`{ws}` VALUES (100, 'late', 0)")
    out = DeltaTable.forPath(spark, str(ws)).delete("id > 5")
    assert [tuple(r) for r in out.collect()] == [(14,)]
    # the blind append is ordered after the delete: its row stays
    assert rows_deltalog(spark, ws) == srt(expected(lambda r: pd.isna(r.id) or r.id <= 5) + [(100, "late", 0)])
    assert commit_info(commit(ws))["readVersion"] == version_of(ws) - 2

    # two deletes of the same files: the winner removes files the DELETE read. Like delta-spark, the
    # read-file check (ConcurrentDeleteReadException) comes before the double-delete check, and a
    # winner that adds files (a rewrite) is already a ConcurrentAppendException
    dd = tmp_path / "dd"
    create(spark, dd, "TBLPROPERTIES ('delta.isolationLevel' = 'WriteSerializable')", partitioned=True)
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"DELETE FROM deltalog.`{dd}` WHERE p = 1")
    with pytest.raises(ConcurrentDeleteReadException):
        DeltaTable.forPath(spark, str(dd)).delete("p = 1 AND id > 3")
    assert rows_deltalog(spark, dd) == expected(lambda r: r.p != 1)
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"DELETE FROM deltalog.`{dd}` WHERE id = 8")
    with pytest.raises(ConcurrentAppendException):
        DeltaTable.forPath(spark, str(dd)).delete("id = 6")  # same file as id 8, rewritten by the winner
    # disjoint partitions: a DELETE on p = 1 reads only p = 1's files; a winner deleting in p = 0
    # (a rewrite there) does not conflict with it
    spark.sql(f"INSERT INTO deltalog.`{dd}` VALUES (31, 'n31', 1)")
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"DELETE FROM deltalog.`{dd}` WHERE p = 0 AND id = 2")
    out = DeltaTable.forPath(spark, str(dd)).delete("p = 1")
    assert [tuple(r) for r in out.collect()] == [(1,)]
    assert rows_deltalog(spark, dd) == expected(lambda r: r.p != 1 and (pd.isna(r.id) or r.id not in (8, 2)))


def test_copy_on_write_keeps_row_ids_under_row_tracking(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    create(spark, path, "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    read = ("result = [[r.id, r.row_id, r.v] for r in spark.read.format('delta').load(args['p'])"
            ".select('id', '_metadata.row_id', F.col('_metadata.row_commit_version').alias('v')).collect()]")
    code = "from pyspark.sql import functions as F\n" + read
    before = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
    assert len({v[0] for v in before.values()}) == len(ROWS)  # unique row ids
    spark.sql(f"DELETE FROM deltalog.`{path}` WHERE id > 5 AND id < 15")
    a = commit(path)
    assert kinds(a, "add") and all(x.get("deletionVector") is None for x in kinds(a, "add"))
    assert commit_info(a).get("tags", {}).get("delta.rowTracking.preserved") == "true"
    after = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
    assert set(after) == {k for k in before if k is None or not (5 < k < 15)}
    assert after == {k: before[k] for k in after}  # ids and commit versions of the copied rows kept
    # with deletion vectors the files keep their baseRowId: the remaining rows keep their ids too
    dvt = tmp_path / "dv"
    create(spark, dvt, "TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'true')")
    dv_before = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(dvt))}
    spark.sql(f"DELETE FROM deltalog.`{dvt}` WHERE id > 5 AND id < 15")
    assert all(x.get("deletionVector") and x.get("baseRowId") is not None for x in kinds(commit(dvt), "add"))
    dv_after = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(dvt))}
    assert set(dv_after) == {k for k in dv_before if k is None or not (5 < k < 15)}
    assert dv_after == {k: dv_before[k] for k in dv_after}
    # delta-spark can go on writing the table: new ids above all old ones
    delta_spark.run(f"spark.sql(\"INSERT INTO delta.`{path}` VALUES (50, 'n50', 0)\")")
    again = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
    assert again[50][0] > max(v[0] for v in before.values())


def test_delete_with_column_mapping_and_no_matching_row(spark, tmp_path, delta_spark):
    props = "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, props, partitioned=True)
    create_delta_spark(delta_spark, theirs, props, partitioned=True)
    # physical names (col-<uuid>) in the files, the stats and the partition values
    assert "col-" in json.dumps(kinds(commit(ours, 1), "add")[0]["partitionValues"])
    res = spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE name LIKE 'n1%' AND p = 1")
    assert [tuple(r) for r in res.collect()] == [(6,)]  # n1, n11, n13, ..., n19
    got = srt(norm(r) for r in spark.read.format("deltalog").load(str(ours)).select("id", "name", "p").collect())
    assert got == expected(lambda r: not (r.name.startswith("n1") and r.p == 1))
    theirs_rows = delta_spark.run("result = [list(r) for r in spark.read.format('delta').load(args['p'])"
                                  ".select('id', 'name', 'p').collect()]", p=str(ours))
    assert srt(norm(r) for r in theirs_rows) == got
    # a DELETE that matches nothing: delta-spark commits nothing either
    v_ours, v_theirs = version_of(ours), version_of(theirs)
    assert [tuple(r) for r in spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE id > 1000").collect()] == [(0,)]
    their = delta_spark.run(f"result = [list(r) for r in spark.sql('DELETE FROM delta.`{theirs}` WHERE id > 1000').collect()]")
    assert their == [[0]]
    assert version_of(ours) - v_ours == version_of(theirs) - v_theirs
