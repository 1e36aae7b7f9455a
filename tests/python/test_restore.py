"""RESTORE (issue 28): ``RESTORE [TABLE] t [TO] VERSION|TIMESTAMP AS OF …`` and
``DeltaTable.restoreToVersion`` / ``restoreToTimestamp``.

Each test runs the same statements on a deltalog copy and, where the commit is compared, on a
delta-spark 4.4 copy, and checks: the rows after the restore (deltalog, delta-spark, delta-rs and
DuckDB read them), the result row, the commit (operation ``RESTORE``, ``{version, timestamp}``,
delta-spark's metric names and values, the restored metadata, a protocol that never goes down,
re-added files with ``dataChange = true`` and their deletion vectors), and the refusals with
delta-spark's error classes.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import java_error_classes
from test_dml_delete import (assert_all_engines_read, commit, commit_info, create, create_delta_spark,
                             expected, kinds, rows_deltalog, version_of)

DV = "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
RESULT_COLUMNS = ["table_size_after_restore", "num_of_files_after_restore", "num_removed_files",
                  "num_restored_files", "removed_files_size", "restored_files_size"]


def history_changes(stmts_target: str) -> list:
    """The statements after `create`: a DELETE, a new column and a table property (versions 4-6)."""
    t = stmts_target
    return [f"DELETE FROM {t} WHERE id < 3",
            f"ALTER TABLE {t} ADD COLUMNS (c STRING)",
            f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"]


def java_timestamp(ms: int) -> str:
    """``new java.sql.Timestamp(ms).toString`` in the local time zone: fraction without trailing zeros, at least ``.0``."""
    local = dt.datetime.fromtimestamp(ms / 1000).replace(microsecond=0)
    frac = f"{(ms % 1000) * 1_000_000:09d}".rstrip("0") or "0"
    return local.strftime("%Y-%m-%d %H:%M:%S") + "." + frac


def error_class(e) -> str:
    return getattr(e, "errorClass", None) or (e.getCondition() if hasattr(e, "getCondition") else None)


def live_paths(path: Path) -> set:
    return _live_at(path, version_of(path))


def assert_restore_commit_like_delta_spark(ours: list, theirs: list) -> None:
    o, t = commit_info(ours), commit_info(theirs)
    assert o["operation"] == t["operation"] == "RESTORE"
    assert o["operationParameters"] == t["operationParameters"]
    assert list(o["operationMetrics"]) == list(t["operationMetrics"])
    for k in ("numRestoredFiles", "numRemovedFiles", "numOfFilesAfterRestore"):
        assert o["operationMetrics"][k] == t["operationMetrics"][k], k
    assert o["isBlindAppend"] is False and t["isBlindAppend"] is False
    # both write the restored metadata and the (never lower) protocol
    mo, mt = kinds(ours, "metaData"), kinds(theirs, "metaData")
    assert len(mo) == len(mt) == 1
    assert json.loads(mo[0]["schemaString"]) == json.loads(mt[0]["schemaString"])
    assert mo[0]["configuration"] == mt[0]["configuration"]
    norm_protocol = lambda ps: [{k: sorted(v) if isinstance(v, list) else v for k, v in p.items()} for p in ps]
    assert norm_protocol(kinds(ours, "protocol")) == norm_protocol(kinds(theirs, "protocol"))
    for acts in (ours, theirs):
        assert all(a["dataChange"] is True for a in kinds(acts, "add") + kinds(acts, "remove"))
        assert all(r["extendedFileMetadata"] is True for r in kinds(acts, "remove"))


# ------------------------------------------------------------------------------------------ tests
def test_restore_to_version_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours)
    create_delta_spark(delta_spark, theirs)
    for s in history_changes(f"deltalog.`{ours}`"):
        spark.sql(s)
    delta_spark.run("for s in args['stmts']:\n    spark.sql(s)", stmts=history_changes(f"delta.`{theirs}`"))
    assert version_of(ours) == version_of(theirs) == 6
    protocol_before = kinds(commit(ours, 6), "protocol")
    assert protocol_before and protocol_before[0]["minWriterVersion"] == 7  # CDF made it a features protocol

    res = spark.sql(f"RESTORE TABLE deltalog.`{ours}` TO VERSION AS OF 2")
    assert res.columns == RESULT_COLUMNS
    theirs_res = delta_spark.run(f"result = [r.asDict() for r in spark.sql('RESTORE TABLE delta.`{theirs}` "
                                 f"TO VERSION AS OF 2').collect()]")
    row = res.collect()[0].asDict()
    assert row["num_removed_files"] == theirs_res[0]["num_removed_files"]
    assert row["num_restored_files"] == theirs_res[0]["num_restored_files"]
    assert row["num_of_files_after_restore"] == theirs_res[0]["num_of_files_after_restore"]
    assert row["num_restored_files"] > 0 and row["num_removed_files"] > 0

    assert version_of(ours) == 7
    assert_restore_commit_like_delta_spark(commit(ours), commit(theirs))
    o = commit_info(commit(ours))
    assert o["operationParameters"] == {"version": 2, "timestamp": None}
    assert int(o["operationMetrics"]["numOfFilesAfterRestore"]) == row["num_of_files_after_restore"]
    assert int(o["operationMetrics"]["tableSizeAfterRestore"]) == row["table_size_after_restore"]
    # the files are exactly those of version 2; the schema is version 2's; the protocol stayed
    assert live_paths(ours) == {p for p in _live_at(ours, 2)}
    assert spark.read.format("deltalog").load(str(ours)).columns == ["id", "name", "p"]
    assert kinds(commit(ours), "protocol") == protocol_before
    rows_v2 = sorted(map(tuple, spark.read.format("deltalog").option("versionAsOf", 2).load(str(ours))
                         .select("id", "name", "p").collect()), key=repr)
    got = sorted(map(tuple, spark.read.format("deltalog").load(str(ours)).select("id", "name", "p").collect()),
                 key=repr)
    assert got == rows_v2
    assert_all_engines_read(spark, delta_spark, ours, rows_deltalog(spark, ours))
    # delta-spark and deltalog agree on the history row
    hist = delta_spark.run(f"result = [r.asDict() for r in spark.sql('DESCRIBE HISTORY delta.`{ours}` LIMIT 1')"
                           ".select('operation', 'operationParameters').collect()]")
    assert hist[0]["operation"] == "RESTORE" and hist[0]["operationParameters"]["version"] == "2"


def _live_at(path: Path, version: int) -> set:
    live = set()
    for v in range(version + 1):
        for a in commit(path, v):
            if "add" in a:
                live.add(a["add"]["path"])
            elif "remove" in a:
                live.discard(a["remove"]["path"])
    return live


def test_python_api_version_timestamp_and_same_version(spark, tmp_path, delta_spark):
    from deltalog.tables import DeltaTable
    ours = tmp_path / "t"
    create(spark, ours)  # versions 0 (create) .. 3 (three inserts)
    dtab = DeltaTable.forPath(spark, str(ours))
    res = dtab.restoreToVersion(1).collect()
    assert len(res) == 1 and res[0]["num_of_files_after_restore"] == len(_live_at(ours, 1))
    assert version_of(ours) == 4
    assert live_paths(ours) == _live_at(ours, 1)

    # restoring the version the table is at: no row, no commit (delta-spark 4.4)
    assert DeltaTable.forPath(spark, str(ours)).restoreToVersion(4).collect() == []
    assert version_of(ours) == 4

    # by timestamp: the commit timestamp of version 2 (its file's modification time; a string in the
    # session time zone)
    ts_ms = os.stat(ours / "_delta_log" / f"{2:020d}.json").st_mtime_ns // 1_000_000
    when = dt.datetime.fromtimestamp(ts_ms / 1000, dt.timezone.utc)
    tz = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        text = when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d}"
        res = DeltaTable.forPath(spark, str(ours)).restoreToTimestamp(text).collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", tz)
    assert len(res) == 1 and version_of(ours) == 5
    assert live_paths(ours) == _live_at(ours, 2)
    params = commit_info(commit(ours))["operationParameters"]
    assert params["version"] is None
    # java.sql.Timestamp's form in the JVM's (here: this machine's) time zone, as delta-spark writes it
    assert params["timestamp"] == java_timestamp(ts_ms)

    # epoch milliseconds are accepted too; restoring version 2 again (the table is at 5, whose files
    # are version 2's) still commits, with nothing to add or remove, as delta-spark does
    res = DeltaTable.forPath(spark, str(ours)).restoreToTimestamp(ts_ms).collect()
    assert version_of(ours) == 6 and res[0]["num_restored_files"] == res[0]["num_removed_files"] == 0
    with pytest.raises(TypeError):
        dtab.restoreToTimestamp(object())
    with pytest.raises(ValueError):
        dtab.restoreToVersion(-1)


def test_refusals_have_delta_spark_error_classes(spark, tmp_path, delta_spark):
    import deltalog.exceptions as dx
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours)
    create_delta_spark(delta_spark, theirs)
    cases = {
        "VERSION AS OF 99": "DELTA_CANNOT_RESTORE_TABLE_VERSION",
        "TIMESTAMP AS OF '2000-01-01'": "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER",
        "TIMESTAMP AS OF '2999-01-01'": "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER",
    }
    for clause, cls in cases.items():
        with pytest.raises(Exception) as e:
            spark.sql(f"RESTORE TABLE deltalog.`{ours}` TO {clause}").collect()
        assert isinstance(e.value, dx.InvalidWriteError), clause
        assert error_class(e.value) == cls, clause
        theirs_cls = delta_spark.run(f"""
try:
    spark.sql("RESTORE TABLE delta.`{theirs}` TO {clause}").collect()
    result = None
except Exception as e:
    result = e.getCondition()
""")
        assert theirs_cls == cls
    with pytest.raises(Exception) as e:
        spark.sql(f"RESTORE TABLE deltalog.`{ours}` TO VERSION AS OF 99").collect()
    assert "Available versions: [0, 3]" in str(e.value)
    with pytest.raises(Exception) as e:
        spark.sql(f"RESTORE TABLE deltalog.`{ours}` TO TIMESTAMP AS OF 'not a time'").collect()
    assert error_class(e.value) == "DELTA_TIMESTAMP_INVALID"
    assert version_of(ours) == 3  # nothing was committed


def test_missing_files_are_named_unless_ignored(spark, tmp_path):
    t = tmp_path / "t"
    create(spark, t)
    spark.sql(f"DELETE FROM deltalog.`{t}`")  # version 4: every file removed
    gone = sorted(_live_at(t, 1))[0]
    os.remove(t / gone)
    with pytest.raises(Exception) as e:
        spark.sql(f"RESTORE deltalog.`{t}` TO VERSION AS OF 3").collect()
    assert error_class(e.value) == "DELTALOG_RESTORE_MISSING_FILES"
    assert gone in str(e.value) and "ignoreMissingFiles" in str(e.value)
    assert "io.deltalog.commands.InvalidWriteException" in java_error_classes(e.value)
    assert version_of(t) == 4
    spark.conf.set("spark.sql.files.ignoreMissingFiles", "true")
    try:
        res = spark.sql(f"RESTORE deltalog.`{t}` TO VERSION AS OF 3").collect()
    finally:
        spark.conf.unset("spark.sql.files.ignoreMissingFiles")
    assert res[0]["num_restored_files"] == len(_live_at(t, 3))
    assert version_of(t) == 5


def test_versions_beyond_the_deleted_file_retention_are_refused_like_delta_spark(spark, tmp_path, delta_spark):
    import shutil
    key = "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration"
    src = tmp_path / "src"
    create(spark, src)  # versions 0..3
    old = time.time() - 10 * 24 * 3600  # older than the default retention (7 days)
    for v in range(3):
        os.utime(src / "_delta_log" / f"{v:020d}.json", (old + v, old + v))
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(src, ours)
    shutil.copytree(src, theirs)
    with pytest.raises(Exception) as e:
        spark.sql(f"RESTORE deltalog.`{ours}` TO VERSION AS OF 1").collect()
    assert error_class(e.value) == "DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION"
    assert "168 HOURS" in str(e.value)
    theirs_cls = delta_spark.run(f"""
try:
    spark.sql("RESTORE delta.`{theirs}` TO VERSION AS OF 1").collect()
    result = None
except Exception as e:
    result = e.getCondition()
""")
    assert theirs_cls == error_class(e.value)
    assert version_of(ours) == version_of(theirs) == 3
    spark.conf.set(key, "false")
    try:
        spark.sql(f"RESTORE deltalog.`{ours}` TO VERSION AS OF 1").collect()
    finally:
        spark.conf.unset(key)
    delta_spark.run(f"spark.conf.set('{key}', 'false')\nspark.sql('RESTORE delta.`{theirs}` TO VERSION AS OF 1')\n"
                    f"spark.conf.unset('{key}')")
    assert live_paths(ours) == live_paths(theirs) == _live_at(ours, 1)


def test_deletion_vectors_restored_with_their_files(spark, tmp_path, delta_spark):
    t = tmp_path / "dv"
    create(spark, t, DV)
    before = rows_deltalog(spark, t)
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id % 3 = 0")  # DVs on existing files (same paths)
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id % 3 = 1")  # the DVs grow: removes + re-adds of the paths
    dv_version = version_of(t)
    assert any(a.get("deletionVector") for a in kinds(commit(t), "add"))
    res = spark.sql(f"RESTORE TABLE deltalog.`{t}` TO VERSION AS OF 4").collect()[0]
    acts = commit(t)
    # every file of version 5 had a DV: each is removed (with its DV) and re-added as at version 4
    assert res["num_removed_files"] == len(kinds(acts, "remove")) > 0
    assert {r["path"] for r in kinds(acts, "remove")} <= {a["path"] for a in kinds(acts, "add")}
    assert all(r.get("deletionVector") for r in kinds(acts, "remove"))
    assert_all_engines_read(spark, delta_spark, t, expected(lambda r: pd.isna(r.id) or r.id % 3 != 0))
    spark.sql(f"RESTORE TABLE deltalog.`{t}` TO VERSION AS OF 3")
    assert rows_deltalog(spark, t) == before
    # deltalog's restore of a DV table reads the same in delta-spark; delta-spark restores ours too
    delta_spark.run(f"spark.sql('RESTORE TABLE delta.`{t}` TO VERSION AS OF {dv_version}')")
    assert_all_engines_read(spark, delta_spark, t, expected(lambda r: pd.isna(r.id) or r.id % 3 == 2))


def test_deltalog_restores_a_delta_spark_table_and_catalog_tables(spark, tmp_path, delta_spark):
    theirs = tmp_path / "theirs"
    create_delta_spark(delta_spark, theirs, partitioned=True)
    delta_spark.run(f"spark.sql('DELETE FROM delta.`{theirs}` WHERE p = 1')")
    spark.sql(f"RESTORE deltalog.`{theirs}` TO VERSION AS OF 3")
    assert_all_engines_read(spark, delta_spark, theirs, expected(lambda r: True))

    spark.sql("DROP TABLE IF EXISTS restore_catalog_t")
    spark.sql("CREATE TABLE restore_catalog_t (id BIGINT) USING deltalog")
    spark.sql("INSERT INTO restore_catalog_t VALUES (1), (2)")
    spark.sql("INSERT INTO restore_catalog_t VALUES (3)")
    spark.sql("RESTORE restore_catalog_t TO SYSTEM_VERSION AS OF 1")
    assert sorted(r.id for r in spark.table("restore_catalog_t").collect()) == [1, 2]
    spark.sql("DROP TABLE restore_catalog_t")


def test_identity_high_water_mark_never_goes_back(spark, tmp_path):
    t = tmp_path / "ident"
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{t}` (v) VALUES ('a'), ('b')")
    spark.sql(f"INSERT INTO deltalog.`{t}` (v) VALUES ('c'), ('d')")
    spark.sql(f"RESTORE deltalog.`{t}` TO VERSION AS OF 1")
    spark.sql(f"INSERT INTO deltalog.`{t}` (v) VALUES ('e')")
    ids = [r.id for r in spark.read.format("deltalog").load(str(t)).collect()]
    assert len(ids) == len(set(ids)) == 3
    schema = json.loads(kinds(commit(t, 3), "metaData")[0]["schemaString"])
    assert schema["fields"][0]["metadata"]["delta.identity.highWaterMark"] >= 4


def test_row_tracking_keeps_row_ids_of_restored_files(spark, tmp_path, delta_spark):
    t = tmp_path / "rt"
    create(spark, t, "TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    base_ids = {a["path"]: a["baseRowId"] for a in kinds(commit(t, 1), "add")}
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id < 5")
    spark.sql(f"RESTORE deltalog.`{t}` TO VERSION AS OF 3")
    readded = {a["path"]: a["baseRowId"] for a in kinds(commit(t), "add")}
    assert readded and all(base_ids[p] == b for p, b in readded.items() if p in base_ids)
    got = delta_spark.run("result = [list(r) for r in spark.read.format('delta').load(args['p'])"
                          ".selectExpr('id', '_metadata.row_id').collect()]", p=str(t))
    assert len({r[1] for r in got}) == len(got) == 21
