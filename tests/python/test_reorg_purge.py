"""REORG TABLE … APPLY (PURGE): data files with deletion vectors rewritten without their deleted rows.

Each test runs the same statements on a deltalog copy and, where the commit is compared, on a
delta-spark 4.4 copy of the table, and checks: the rows (every engine reads them), that no live
file keeps a deletion vector, the commit (operation ``REORG``, ``{predicate, applyPurge}``,
OPTIMIZE's metric names, ``dataChange = false`` on every file action), the result row's columns
and row ids under row tracking.
"""
from __future__ import annotations

import glob
import json
import uuid
from pathlib import Path

import pandas as pd
import pytest

from conftest import java_error_classes
from test_dml_delete import (COLS, assert_all_engines_read, commit, commit_info, create, create_delta_spark,
                             expected, insert_rows, kinds, version_of)

DV = "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"


def live_files(path: Path) -> dict:
    """path → add action of the table's latest version (log replay of its JSON commits; a file is
    its path and deletion vector, so a commit's remove of a path's old DV does not undo its add)."""
    def key(x):
        dv = x.get("deletionVector") or {}
        return x["path"], dv.get("storageType"), dv.get("pathOrInlineDv"), dv.get("offset")
    live = {}
    for f in sorted(glob.glob(str(path / "_delta_log" / "*.json"))):
        for line in Path(f).read_text().splitlines():
            a = json.loads(line)
            if "add" in a:
                live[key(a["add"])] = a["add"]
            elif "remove" in a:
                live.pop(key(a["remove"]), None)
    return {k[0]: v for k, v in live.items()}


def with_dvs(path: Path) -> list:
    return [p for p, a in live_files(path).items() if a.get("deletionVector")]


def their_reorg(delta_spark, sql: str) -> dict:
    """delta-spark's result of `sql`: its schema (JSON) and rows."""
    return delta_spark.run("r = spark.sql(args['sql'])\nresult = {'schema': r.schema.json(), "
                           "'rows': [r2.asDict(recursive=True) for r2 in r.collect()]}", sql=sql)


def assert_same_reorg_commit(ours: list, theirs: list) -> None:
    o, t = commit_info(ours), commit_info(theirs)
    assert o["operation"] == t["operation"] == "REORG"
    assert o["operationParameters"] == t["operationParameters"]
    assert o["operationParameters"]["applyPurge"] is True
    assert sorted(o["operationMetrics"]) == sorted(t["operationMetrics"])
    for k in ("numRemovedFiles", "numDeletionVectorsRemoved"):
        assert o["operationMetrics"][k] == t["operationMetrics"][k], k
    assert o["isolationLevel"] == t["isolationLevel"] == "SnapshotIsolation"
    assert o["isBlindAppend"] is False and t["isBlindAppend"] is False
    for acts in (ours, theirs):
        assert kinds(acts, "add") and kinds(acts, "remove")
        assert all(x["dataChange"] is False for x in kinds(acts, "add") + kinds(acts, "remove"))
        assert all(not x.get("deletionVector") for x in kinds(acts, "add"))


# ------------------------------------------------------------------------------------------ tests
def test_reorg_purges_deltalog_dvs_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, DV)
    create_delta_spark(delta_spark, theirs, DV)
    spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE id % 3 = 0")
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}` WHERE id % 3 = 0')")
    dv_files = with_dvs(ours)
    assert dv_files and with_dvs(theirs)
    want = expected(lambda r: pd.isna(r.id) or r.id % 3 != 0)

    res = spark.sql(f"REORG TABLE deltalog.`{ours}` APPLY (PURGE)")
    got = res.collect()
    theirs_res = their_reorg(delta_spark, f"REORG TABLE delta.`{theirs}` APPLY (PURGE)")
    a = commit(ours)
    assert_same_reorg_commit(a, commit(theirs))
    assert commit_info(a)["operationParameters"]["predicate"] == "[]"
    assert {r["path"] for r in kinds(a, "remove")} == set(dv_files)
    assert with_dvs(ours) == [] and with_dvs(theirs) == []
    assert_all_engines_read(spark, delta_spark, ours, want)

    # the result row: delta-spark's columns and types, the key metrics
    assert json.loads(res.schema.json()) == json.loads(theirs_res["schema"])
    (row,) = got
    (trow,) = theirs_res["rows"]
    m, tm = row["metrics"], trow["metrics"]
    assert row["path"] == f"file:{ours}" and trow["path"] == f"file:{theirs}"
    assert m["numFilesRemoved"] == tm["numFilesRemoved"] == len(dv_files)
    assert m["numFilesAdded"] == len(kinds(a, "add"))
    assert m["filesRemoved"]["totalSize"] == sum(r["size"] for r in kinds(a, "remove"))
    assert m["filesAdded"]["totalSize"] == sum(x["size"] for x in kinds(a, "add"))
    assert m["deletionVectorStats"]["numDeletionVectorsRemoved"] == len(dv_files)
    assert m["deletionVectorStats"]["numDeletionVectorRowsRemoved"] == \
        tm["deletionVectorStats"]["numDeletionVectorRowsRemoved"] == 7
    assert m["totalConsideredFiles"] == tm["totalConsideredFiles"]
    assert m["totalFilesSkipped"] == tm["totalFilesSkipped"]
    assert (m["numTableColumns"], m["numTableColumnsWithStats"]) == (tm["numTableColumns"], tm["numTableColumnsWithStats"])

    # nothing left to purge: no commit, a row of zeros (as delta-spark)
    v = version_of(ours)
    (again,) = spark.sql(f"REORG TABLE deltalog.`{ours}` APPLY (PURGE)").collect()
    (tagain,) = their_reorg(delta_spark, f"REORG TABLE delta.`{theirs}` APPLY (PURGE)")["rows"]
    assert version_of(ours) == v
    assert again["metrics"]["numFilesRemoved"] == tagain["metrics"]["numFilesRemoved"] == 0
    assert again["metrics"]["deletionVectorStats"] is None and tagain["metrics"]["deletionVectorStats"] is None
    for x in (again, tagain):  # every file considered is skipped (the file counts differ between engines)
        assert x["metrics"]["totalFilesSkipped"] == x["metrics"]["totalConsideredFiles"] > 0


def test_reorg_purges_dvs_delta_spark_wrote_on_a_catalog_table(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    create_delta_spark(delta_spark, path, DV)
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{path}` WHERE id % 4 = 1')")
    dv_files = with_dvs(path)
    assert dv_files
    db = "reorg_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'wh'}'")
    try:
        spark.sql(f"CREATE TABLE {db}.t USING deltalog LOCATION '{path}'")
        spark.table(f"{db}.t").cache().count()
        (row,) = spark.sql(f"REORG TABLE {db}.t APPLY (PURGE)").collect()
        assert row["metrics"]["numFilesRemoved"] == len(dv_files)
        a = commit(path)
        assert commit_info(a)["operation"] == "REORG"
        assert all(x["dataChange"] is False for x in kinds(a, "add") + kinds(a, "remove"))
        assert with_dvs(path) == []
        want = expected(lambda r: pd.isna(r.id) or r.id % 4 != 1)
        assert sorted(r["id"] for r in spark.table(f"{db}.t").collect() if r["id"] is not None) == \
            sorted(r[0] for r in want if r[0] is not None)
        assert_all_engines_read(spark, delta_spark, path, want)
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def test_reorg_where_limits_it_to_those_partitions(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, DV, partitioned=True)
    create_delta_spark(delta_spark, theirs, DV, partitioned=True)
    spark.sql(f"DELETE FROM deltalog.`{ours}` WHERE id % 5 = 0")
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}` WHERE id % 5 = 0')")
    before = {p: live_files(ours)[p]["partitionValues"]["p"] for p in with_dvs(ours)}
    assert set(before.values()) == {"0", "1"}

    # only partition columns may be referenced
    v = version_of(ours)
    with pytest.raises(Exception, match="DELTA_NON_PARTITION_COLUMN_REFERENCE") as e:
        spark.sql(f"REORG TABLE deltalog.`{ours}` WHERE id = 3 APPLY (PURGE)")
    assert "io.deltalog.commands.InvalidWriteException" in java_error_classes(e.value)
    assert version_of(ours) == v

    spark.sql(f"REORG TABLE deltalog.`{ours}` WHERE p = 1 APPLY (PURGE)")
    their_reorg(delta_spark, f"REORG TABLE delta.`{theirs}` WHERE p = 1 APPLY (PURGE)")
    a = commit(ours)
    assert_same_reorg_commit(a, commit(theirs))
    assert commit_info(a)["operationParameters"]["predicate"] == json.dumps(["('p = 1)"])
    assert {r["path"] for r in kinds(a, "remove")} == {p for p, part in before.items() if part == "1"}
    left = with_dvs(ours)
    assert left and {live_files(ours)[p]["partitionValues"]["p"] for p in left} == {"0"}
    assert_all_engines_read(spark, delta_spark, ours, expected(lambda r: pd.isna(r.id) or r.id % 5 != 0))


def test_reorg_keeps_row_ids_under_row_tracking(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    create(spark, path, "TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'true')")
    code = ("from pyspark.sql import functions as F\n"
            "result = [[r.id, r.row_id, r.v] for r in spark.read.format('delta').load(args['p'])"
            ".select('id', '_metadata.row_id', F.col('_metadata.row_commit_version').alias('v')).collect()]")
    spark.sql(f"DELETE FROM deltalog.`{path}` WHERE id > 5 AND id < 15")
    before = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
    spark.sql(f"REORG TABLE deltalog.`{path}` APPLY (PURGE)")
    a = commit(path)
    assert commit_info(a).get("tags", {}).get("delta.rowTracking.preserved") == "true"
    assert all(x.get("baseRowId") is not None and not x.get("deletionVector") for x in kinds(a, "add"))
    after = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
    assert after == before  # same rows, ids and commit versions
    # delta-spark can go on writing the table: new ids above all old ones
    delta_spark.run(f"spark.sql(\"INSERT INTO delta.`{path}` VALUES (50, 'n50', 0)\")")
    again = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
    assert again[50][0] > max(v[0] for v in before.values())


def test_reorg_without_dvs_commits_nothing_and_runs_on_append_only_tables(spark, tmp_path, delta_spark):
    path = tmp_path / "plain"
    create(spark, path)
    v = version_of(path)
    (row,) = spark.sql(f"REORG TABLE deltalog.`{path}` APPLY (PURGE)").collect()
    assert version_of(path) == v
    m = row["metrics"]
    assert (m["numFilesAdded"], m["numFilesRemoved"], m["partitionsOptimized"]) == (0, 0, 0)
    assert m["totalConsideredFiles"] == m["totalFilesSkipped"] == len(live_files(path))
    assert m["filesAdded"]["min"] is None and m["filesAdded"]["avg"] == 0.0

    # delta-spark purges append-only tables too (nothing is deleted)
    ao = tmp_path / "ao"
    create(spark, ao, DV)
    spark.sql(f"DELETE FROM deltalog.`{ao}` WHERE id = 3")
    spark.sql(f"ALTER TABLE deltalog.`{ao}` SET TBLPROPERTIES ('delta.appendOnly' = 'true')")
    spark.sql(f"REORG TABLE deltalog.`{ao}` APPLY (PURGE)")
    assert commit_info(commit(ao))["operation"] == "REORG" and with_dvs(ao) == []
    assert_all_engines_read(spark, delta_spark, ao, expected(lambda r: pd.isna(r.id) or r.id != 3))
