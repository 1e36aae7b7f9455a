"""OPTIMIZE (compaction and ZORDER BY) in SQL, Python (``DeltaTable.optimize()``) and the CLI.

Each comparison runs the same statements on a deltalog copy and a delta-spark 4.4 copy of a table
and checks: the files on disk (removed ones gone from the snapshot, no DV left), the commit
(operation ``OPTIMIZE``, ``{predicate, zOrderBy, clusterBy, auto}``, the metric names,
``dataChange = false`` on every file action, ``SnapshotIsolation``), the result row's columns, the
rows (every engine reads them) and row ids under row tracking. Z-order is checked by its effect:
a point filter on each Z-order column skips most files (deltalog's file listing counters).
"""
from __future__ import annotations

import io
import json
import os

import pandas as pd
import pytest

from conftest import java_error_classes
from test_dml_delete import (ROWS, assert_all_engines_read, commit, commit_info, create, create_delta_spark,
                             expected, kinds, rows_deltalog, version_of)
from test_reorg_purge import live_files, with_dvs

DV = "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
MAX_FILE_SIZE = "spark.databricks.delta.optimize.maxFileSize"
EVERY_ROW = expected(lambda r: True)


def their(delta_spark, sql: str) -> dict:
    """delta-spark's result of `sql`: its schema (JSON) and rows."""
    return delta_spark.run("r = spark.sql(args['sql'])\nresult = {'schema': r.schema.json(), "
                           "'rows': [r2.asDict(recursive=True) for r2 in r.collect()]}", sql=sql)


def assert_same_optimize_commit(ours: list, theirs: list) -> None:
    o, t = commit_info(ours), commit_info(theirs)
    assert o["operation"] == t["operation"] == "OPTIMIZE"
    assert o["operationParameters"] == t["operationParameters"]
    assert o["operationParameters"]["auto"] is False and o["operationParameters"]["clusterBy"] == "[]"
    assert sorted(o["operationMetrics"]) == sorted(t["operationMetrics"])
    assert o["isolationLevel"] == t["isolationLevel"] == "SnapshotIsolation"
    assert o["isBlindAppend"] is False and t["isBlindAppend"] is False
    for acts in (ours, theirs):
        assert kinds(acts, "add") and kinds(acts, "remove")
        assert all(x["dataChange"] is False for x in kinds(acts, "add") + kinds(acts, "remove"))
    m = o["operationMetrics"]
    assert int(m["numRemovedFiles"]) == len(kinds(ours, "remove"))
    assert int(m["numAddedFiles"]) == len(kinds(ours, "add"))
    assert int(m["numAddedBytes"]) == sum(a["size"] for a in kinds(ours, "add"))


def per_partition(path) -> dict:
    out: dict = {}
    for a in live_files(path).values():
        key = json.dumps(a["partitionValues"], sort_keys=True)
        out[key] = out.get(key, 0) + 1
    return out


# ------------------------------------------------------------------------------------------ compaction
def test_compaction_like_delta_spark_and_readable_everywhere(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, partitioned=True)
    create_delta_spark(delta_spark, theirs, partitioned=True)
    before = set(live_files(ours))
    assert max(per_partition(ours).values()) > 1

    res = spark.sql(f"OPTIMIZE deltalog.`{ours}`")
    theirs_res = their(delta_spark, f"OPTIMIZE delta.`{theirs}`")
    a = commit(ours)
    assert_same_optimize_commit(a, commit(theirs))
    assert commit_info(a)["operationParameters"]["predicate"] == "[]"
    assert commit_info(a)["operationParameters"]["zOrderBy"] == "[]"
    # one file per partition left, every old file removed, the new files on disk
    assert per_partition(ours) == per_partition(theirs) == {'{"p": "0"}': 1, '{"p": "1"}': 1}
    assert {r["path"] for r in kinds(a, "remove")} == before
    for p in live_files(ours):
        assert os.path.exists(ours / p)
    assert_all_engines_read(spark, delta_spark, ours, EVERY_ROW)

    # the result row: delta-spark's columns and types, the key metrics
    assert json.loads(res.schema.json()) == json.loads(theirs_res["schema"])
    (row,) = res.collect()
    (trow,) = theirs_res["rows"]
    m, tm = row["metrics"], trow["metrics"]
    assert row["path"] == f"file:{ours}"
    assert m["numFilesAdded"] == tm["numFilesAdded"] == 2
    assert m["numFilesRemoved"] == len(before)
    assert m["partitionsOptimized"] == tm["partitionsOptimized"] == 2
    assert m["numBins"] == tm["numBins"] == 2
    assert m["totalConsideredFiles"] == len(before) and m["totalFilesSkipped"] == 0
    assert m["filesAdded"]["totalSize"] == sum(x["size"] for x in kinds(a, "add"))
    assert m["zOrderStats"] is None and tm["zOrderStats"] is None
    assert m["deletionVectorStats"] is None and tm["deletionVectorStats"] is None
    assert (m["numTableColumns"], m["numTableColumnsWithStats"]) == (tm["numTableColumns"], tm["numTableColumnsWithStats"])

    # nothing left to compact: no commit, a row of zeros (as delta-spark)
    v = version_of(ours)
    (again,) = spark.sql(f"OPTIMIZE deltalog.`{ours}`").collect()
    (tagain,) = their(delta_spark, f"OPTIMIZE delta.`{theirs}`")["rows"]
    assert version_of(ours) == v
    for x in (again["metrics"], tagain["metrics"]):
        assert x["numFilesRemoved"] == x["numBins"] == x["partitionsOptimized"] == 0
        assert x["totalFilesSkipped"] == x["totalConsideredFiles"] == 2
        assert x["filesAdded"]["min"] is None


def test_bins_follow_max_file_size_and_min_file_size(spark, tmp_path):
    path = tmp_path / "t"
    spark.range(0, 4000, 1, 40).selectExpr("id", "cast(id % 50 as int) AS a") \
        .write.format("deltalog").save(str(path))
    sizes = sorted(a["size"] for a in live_files(path).values())
    # bins of two files each (as delta-spark: 40 files -> 20 bins), a table property wins over the conf
    spark.sql(f"ALTER TABLE deltalog.`{path}` SET TBLPROPERTIES ('delta.targetFileSize' = '{sizes[-1] * 2 + 1}')")
    spark.conf.set(MAX_FILE_SIZE, "1")
    try:
        (row,) = spark.sql(f"OPTIMIZE '{path}'").collect()
    finally:
        spark.conf.unset(MAX_FILE_SIZE)
    assert row["metrics"]["numBins"] == row["metrics"]["numFilesAdded"] == 20
    assert row["metrics"]["numFilesRemoved"] == 40
    # files at or above minFileSize are not candidates (counted as skipped)
    spark.range(0, 40000, 1, 1).selectExpr("id", "cast(id % 50 as int) AS a") \
        .write.format("deltalog").mode("append").save(str(path))
    spark.sql(f"ALTER TABLE deltalog.`{path}` UNSET TBLPROPERTIES ('delta.targetFileSize')")
    big = max(a["size"] for a in live_files(path).values())
    spark.conf.set("spark.databricks.delta.optimize.minFileSize", str(big))
    try:
        (row,) = spark.sql(f"OPTIMIZE deltalog.`{path}`").collect()
    finally:
        spark.conf.unset("spark.databricks.delta.optimize.minFileSize")
    assert row["metrics"]["totalConsideredFiles"] == 21
    assert row["metrics"]["numFilesRemoved"] == 20 and row["metrics"]["totalFilesSkipped"] == 1
    assert len(live_files(path)) == 2
    assert spark.read.format("deltalog").load(str(path)).count() == 44000


def test_where_on_partitions_through_python_and_errors(spark, tmp_path):
    from deltalog.exceptions import InvalidWriteError, TableNotFoundError
    from deltalog.tables import DeltaTable

    path = tmp_path / "t"
    create(spark, path, partitioned=True)
    counts = per_partition(path)
    dt = DeltaTable.forPath(spark, str(path))
    res = dt.optimize().where("p = 1").executeCompaction()
    (row,) = res.collect()
    assert row["metrics"]["numFilesRemoved"] == counts['{"p": "1"}']
    assert per_partition(path) == {'{"p": "0"}': counts['{"p": "0"}'], '{"p": "1"}': 1}
    info = commit_info(commit(path))
    assert info["operationParameters"]["predicate"] == json.dumps(["('p = 1)"])
    assert rows_deltalog(spark, path) == EVERY_ROW

    with pytest.raises(InvalidWriteError, match="DELTA_NON_PARTITION_COLUMN_REFERENCE"):
        dt.optimize().where("id = 1").executeCompaction()
    with pytest.raises(Exception, match="DELTA_NON_PARTITION_COLUMN_REFERENCE") as e:
        spark.sql(f"OPTIMIZE deltalog.`{path}` WHERE name = 'x'")
    assert "io.deltalog.commands.InvalidWriteException" in java_error_classes(e.value)
    with pytest.raises(TableNotFoundError):
        DeltaTable.forPath(spark, str(tmp_path / "missing")).optimize().executeCompaction()


def test_files_with_deletion_vectors_are_purged(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, DV)
    create_delta_spark(delta_spark, theirs, DV)
    for stmt in (f"DELETE FROM deltalog.`{ours}` WHERE id % 3 = 0",):
        spark.sql(stmt)
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}` WHERE id % 3 = 0')")
    dv_files = with_dvs(ours)
    assert dv_files
    want = expected(lambda r: pd.isna(r.id) or r.id % 3 != 0)

    (row,) = spark.sql(f"OPTIMIZE deltalog.`{ours}`").collect()
    (trow,) = their(delta_spark, f"OPTIMIZE delta.`{theirs}`")["rows"]
    a = commit(ours)
    assert_same_optimize_commit(a, commit(theirs))
    assert with_dvs(ours) == [] and with_dvs(theirs) == []
    assert set(dv_files) <= {r["path"] for r in kinds(a, "remove")}
    assert int(commit_info(a)["operationMetrics"]["numDeletionVectorsRemoved"]) == len(dv_files)
    dvs, tdvs = row["metrics"]["deletionVectorStats"], trow["metrics"]["deletionVectorStats"]
    assert dvs["numDeletionVectorsRemoved"] == len(dv_files)
    assert dvs["numDeletionVectorRowsRemoved"] == tdvs["numDeletionVectorRowsRemoved"] == 7
    assert_all_engines_read(spark, delta_spark, ours, want)


def test_null_and_escaped_partition_values_with_dvs_and_cdf(spark, tmp_path, delta_spark):
    """Bins of a NULL partition and of non-null ones are written together: the NULL partition's
    rows must not meet a schema that took the other bins' non-null partition literal as its own."""
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING, p STRING) USING deltalog PARTITIONED BY (p) "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true')")
    parts = [None, "é x", "z", "a/b=c"]
    for k in range(3):
        spark.sql(f"INSERT INTO {t} VALUES " + ", ".join(
            f"({100 * k + 10 * j + r}, 's{k}', {'NULL' if p is None else repr(p)})"
            for j, p in enumerate(parts) for r in (0, 1)))
    spark.sql(f"DELETE FROM {t} WHERE id % 10 = 0 AND id < 200")
    assert len(with_dvs(path)) == 8
    before = version_of(path)
    want = sorted(r for r in ((100 * k + 10 * j + r, f"s{k}", p) for k in range(3) for j, p in enumerate(parts)
                              for r in (0, 1)) if not (r[0] % 10 == 0 and r[0] < 200))

    (row,) = spark.sql(f"OPTIMIZE {t}").collect()
    assert row["metrics"]["numFilesRemoved"] == 12 and row["metrics"]["numFilesAdded"] == 4
    assert version_of(path) == before + 1 and with_dvs(path) == []
    assert sorted(per_partition(path).items()) == sorted((json.dumps({"p": p}), 1) for p in parts)
    got = sorted(tuple(r) for r in spark.read.format("deltalog").load(str(path)).select("id", "s", "p").collect())
    assert got == want
    theirs = delta_spark.run("result = sorted(tuple(r) for r in spark.read.format('delta').load(args['p'])"
                             ".select('id', 's', 'p').collect())", p=str(path))
    assert [tuple(r) for r in theirs] == want
    # OPTIMIZE changes no data: the change feed of its version is empty
    assert spark.read.format("deltalog").option("readChangeFeed", "true").option(
        "startingVersion", before + 1).load(str(path)).count() == 0


def test_row_ids_are_kept_under_row_tracking(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    create(spark, path, "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    read = ("from pyspark.sql import functions as F\n"
            "result = sorted([[r.id, r.row_id, r.v] for r in spark.read.format('delta').load(args['p'])"
            ".select('id', '_metadata.row_id', F.col('_metadata.row_commit_version').alias('v')).collect()],"
            " key=lambda x: x[1])")
    before = delta_spark.run(read, p=str(path))
    spark.sql(f"OPTIMIZE deltalog.`{path}`")
    a = commit(path)
    assert commit_info(a)["tags"]["delta.rowTracking.preserved"] == "true"
    assert all(x.get("baseRowId") is not None for x in kinds(a, "add"))
    assert delta_spark.run(read, p=str(path)) == before


# ------------------------------------------------------------------------------------------ Z-order
def _listing(spark, path):
    stats = spark._jvm.io.deltalog.spark.read.DeltalogFileIndex.lastListingFor(str(path))
    return stats.totalFiles(), stats.filesAfterDataSkipping()


def test_zorder_makes_skipping_effective_on_each_column(spark, tmp_path, delta_spark):
    path = tmp_path / "z"
    spark.range(0, 20000, 1, 32).selectExpr("id", "cast((id * 7919) % 1000 AS INT) AS a",
                                            "cast((id * 104729) % 997 AS INT) AS b") \
        .write.format("deltalog").save(str(path))
    total = sum(a["size"] for a in live_files(path).values())
    for q in ("a = 123", "b = 456"):
        assert spark.read.format("deltalog").load(str(path)).where(q).count() > 0
        assert _listing(spark, path) == (32, 32)  # random layout: nothing skipped

    spark.conf.set(MAX_FILE_SIZE, str(total // 16))
    try:
        (row,) = spark.sql(f"OPTIMIZE deltalog.`{path}` ZORDER BY (a, b)").collect()
    finally:
        spark.conf.unset(MAX_FILE_SIZE)
    a = commit(path)
    info = commit_info(a)
    assert info["operationParameters"] == {"predicate": "[]", "zOrderBy": '["a","b"]', "clusterBy": "[]",
                                           "auto": False}
    n = len(live_files(path))
    assert n == row["metrics"]["numFilesAdded"] and n >= 8
    z = row["metrics"]["zOrderStats"]
    assert z["strategyName"] == "all" and z["mergedFiles"]["num"] == 32 and z["numOutputCubes"] == 1
    for q in ("a = 123", "b = 456"):
        assert spark.read.format("deltalog").load(str(path)).where(q).count() == \
            spark.range(0, 20000).selectExpr("cast((id * 7919) % 1000 AS INT) AS a",
                                              "cast((id * 104729) % 997 AS INT) AS b").where(q).count()
        listed, read = _listing(spark, path)
        assert listed == n and read <= n // 2, (q, read, n)
    assert spark.read.format("deltalog").load(str(path)).count() == 20000
    # delta-spark reads the z-ordered table identically and z-orders it again
    theirs = delta_spark.run("r = spark.sql(f\"OPTIMIZE delta.`{args['p']}` ZORDER BY (b)\").collect()\n"
                             "result = [spark.read.format('delta').load(args['p']).selectExpr('sum(id)', 'sum(a)', "
                             "'sum(b)').collect()[0].asDict(), r[0]['metrics']['numFilesRemoved']]", p=str(path))
    want = spark.read.format("deltalog").load(str(path)).selectExpr("sum(id)", "sum(a)", "sum(b)").collect()[0].asDict()
    assert theirs[0] == want and theirs[1] == n
    assert commit_info(commit(path))["operationParameters"]["zOrderBy"] == '["b"]'


def test_zorder_refusals(spark, tmp_path):
    from deltalog.exceptions import InvalidWriteError

    path = tmp_path / "t"
    create(spark, path, "TBLPROPERTIES ('delta.dataSkippingNumIndexedCols' = '1')", partitioned=True)
    v = version_of(path)
    for sql, cls in ((f"OPTIMIZE deltalog.`{path}` ZORDER BY (p)", "DELTA_ZORDERING_ON_PARTITION_COLUMN"),
                     (f"OPTIMIZE deltalog.`{path}` ZORDER BY (nope)", "DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST"),
                     (f"OPTIMIZE deltalog.`{path}` ZORDER BY (id, name)", "DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS")):
        with pytest.raises(InvalidWriteError, match=cls):
            spark.sql(sql)
    assert version_of(path) == v
    spark.conf.set("spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled", "false")
    try:
        spark.sql(f"OPTIMIZE deltalog.`{path}` ZORDER BY (id, name)").collect()
    finally:
        spark.conf.unset("spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled")
    assert version_of(path) == v + 1
    assert rows_deltalog(spark, path) == EVERY_ROW
    # the Python builder, single-file partitions included (Z-order rewrites them, as delta-spark)
    from deltalog.tables import DeltaTable
    (row,) = DeltaTable.forPath(spark, str(path)).optimize().where("p = 0").executeZOrderBy("id").collect()
    assert row["metrics"]["numFilesRemoved"] == row["metrics"]["numFilesAdded"] == 1
    assert commit_info(commit(path))["operationParameters"]["zOrderBy"] == '["id"]'
    # ZORDER BY without parentheses, and a catalog-style quoted path
    spark.conf.set("spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled", "false")
    try:
        spark.sql(f"OPTIMIZE '{path}' WHERE p = 1 ZORDER BY id, `name`")
    finally:
        spark.conf.unset("spark.databricks.delta.optimize.zorder.checkStatsCollection.enabled")
    info = commit_info(commit(path))
    assert info["operationParameters"]["zOrderBy"] == '["id","name"]'
    assert info["operationParameters"]["predicate"] == json.dumps(["('p = 1)"])
    assert rows_deltalog(spark, path) == EVERY_ROW


# ------------------------------------------------------------------------------------------ interop
def test_delta_spark_optimizes_deltalog_table_and_back(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, partitioned=True)
    create_delta_spark(delta_spark, theirs, partitioned=True)
    their(delta_spark, f"OPTIMIZE delta.`{ours}` ZORDER BY (id)")
    assert commit_info(commit(ours))["operation"] == "OPTIMIZE"
    assert per_partition(ours) == {'{"p": "0"}': 1, '{"p": "1"}': 1}
    spark.sql(f"OPTIMIZE deltalog.`{theirs}` ZORDER BY (id)")
    assert commit_info(commit(theirs))["engineInfo"].startswith("deltalog") or \
        "Delta-Lake" not in commit_info(commit(theirs)).get("engineInfo", "")
    for p in (ours, theirs):
        assert_all_engines_read(spark, delta_spark, p, EVERY_ROW)


# ------------------------------------------------------------------------------------------ concurrency
def test_concurrent_append_does_not_fail_optimize(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path, partitioned=True)
    v = version_of(path)
    api = spark._jvm.io.deltalog.api.DmlApi
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"INSERT INTO deltalog.`{path}` VALUES (100, 'late', 0)")
    (row,) = spark.sql(f"OPTIMIZE deltalog.`{path}`").collect()
    assert commit_info(commit(path, v + 1))["operation"] == "WRITE"
    assert commit_info(commit(path, v + 2))["operation"] == "OPTIMIZE"
    assert version_of(path) == v + 2
    assert row["metrics"]["numFilesAdded"] == 2
    assert rows_deltalog(spark, path) == sorted(EVERY_ROW + [(100, "late", 0)],
                                                key=lambda t: tuple((x is None, "" if x is None else x) for x in t))


def test_concurrent_delete_of_a_rewritten_file_fails_optimize(spark, tmp_path):
    from deltalog.exceptions import ConcurrentDeleteReadException

    path = tmp_path / "t"
    create(spark, path)
    v = version_of(path)
    api = spark._jvm.io.deltalog.api.DmlApi
    api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, f"DELETE FROM deltalog.`{path}` WHERE id = 3")
    with pytest.raises(ConcurrentDeleteReadException):
        spark.sql(f"OPTIMIZE deltalog.`{path}`").collect()
    assert version_of(path) == v + 1
    assert commit_info(commit(path))["operation"] == "DELETE"
    assert rows_deltalog(spark, path) == expected(lambda r: pd.isna(r.id) or r.id != 3)


# ------------------------------------------------------------------------------------------ CLI
def test_cli_optimize(spark, tmp_path):
    from deltalog.cli import main

    path = tmp_path / "t"
    create(spark, path, partitioned=True)
    out, err = io.StringIO(), io.StringIO()
    assert main(["optimize", str(path), "--where", "p = 0"], out=out, err=err) == 0, err.getvalue()
    text = out.getvalue()
    assert text.startswith(f"OPTIMIZE file:{path}\n")
    assert "removed" in text and "added" in text and "partitions optimized: 1" in text
    assert per_partition(path)['{"p": "0"}'] == 1
    assert main(["optimize", str(path), "--zorder-by", "id,name"], out=out, err=err) == 0, err.getvalue()
    assert commit_info(commit(path))["operationParameters"]["zOrderBy"] == '["id","name"]'
    assert rows_deltalog(spark, path) == EVERY_ROW

    for argv, needle in ((["optimize", str(tmp_path / "none")], "DELTA_MISSING_DELTA_TABLE"),
                         (["optimize", str(path), "--zorder-by", "p"], "DELTA_ZORDERING_ON_PARTITION_COLUMN"),
                         (["optimize", str(path), "--where", "id = 1"], "DELTA_NON_PARTITION_COLUMN_REFERENCE")):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, out=out, err=err) == 1
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("deltalog: error:") and needle in lines[0], lines
