"""CLONE (issue 28): ``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [SHALLOW | DEEP] CLONE s [VERSION AS OF n |
TIMESTAMP AS OF ts] [TBLPROPERTIES (...)] [LOCATION '...']`` and ``DeltaTable.clone`` / ``cloneAtVersion`` /
``cloneAtTimestamp``.

Each test clones a table with partitions and deletion vectors and checks: the files on disk (a deep
clone's copies, a shallow clone's absolute paths into the source), the commit (operation ``CLONE``,
delta-spark's parameters and metric names, and, for shallow clones, the very actions delta-spark 4.4
writes when it clones the same source), the result row, the rows every engine reads from the clone,
and the refusals with delta-spark's error classes.
"""
from __future__ import annotations

import datetime as dt
import glob
import json
import os
import shutil
from pathlib import Path

import pytest

from test_dml_delete import (assert_all_engines_read, commit, commit_info, create, create_delta_spark, kinds,
                             rows_deltalog, rows_delta_rs, rows_delta_spark, version_of)

DV = "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
RESULT_COLUMNS = ["source_table_size", "source_num_of_files", "num_removed_files", "num_copied_files",
                  "removed_files_size", "copied_files_size"]


def error_class(e) -> str:
    return getattr(e, "errorClass", None) or (e.getCondition() if hasattr(e, "getCondition") else None)


def make_source(spark, path: Path) -> None:
    """Versions 0-3 (create, three inserts) and 4: a DELETE that writes deletion vectors."""
    create(spark, path, DV, partitioned=True)
    spark.sql(f"DELETE FROM deltalog.`{path}` WHERE id IN (3, 4, 12)")
    assert any("deletionVector" in a["add"] for a in kinds_all(path, "add"))


def kinds_all(path: Path, kind: str) -> list:
    return [{kind: x} for v in range(version_of(path) + 1) for x in kinds(commit(path, v), kind)]


def live_adds(path: Path) -> dict:
    """The live ``add`` actions by path (replaying every commit file)."""
    live = {}
    for v in range(version_of(path) + 1):
        for a in commit(path, v):
            if "add" in a:
                live[a["add"]["path"]] = a["add"]
            elif "remove" in a:
                live.pop(a["remove"]["path"], None)
    return live


def source_uri(path: Path) -> str:
    return "file:" + str(path)


def assert_engines_read_shallow(spark, delta_spark, path: Path, want: list) -> None:
    """deltalog, delta-spark and delta-rs read a shallow clone (absolute ``file:`` paths); DuckDB's
    delta extension cannot (it prefixes them with the table root: integration/KNOWN_DIFFERENCES.md,
    ``duckdb-absolute-file-paths``), also on delta-spark's own shallow clones."""
    assert rows_deltalog(spark, path) == want
    assert rows_delta_spark(delta_spark, path) == want
    assert rows_delta_rs(path) == want


def strip_add(a: dict) -> dict:
    return {k: v for k, v in a.items() if k not in ("baseRowId", "defaultRowCommitVersion")}


# ------------------------------------------------------------------------------------------ tests
def test_shallow_clone_writes_the_actions_delta_spark_writes(spark, tmp_path, delta_spark):
    src = tmp_path / "src"
    make_source(spark, src)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    res = spark.sql(f"CREATE TABLE deltalog.`{ours}` SHALLOW CLONE deltalog.`{src}`")
    assert res.columns == RESULT_COLUMNS
    row = res.collect()[0].asDict()
    theirs_row = delta_spark.run(f"result = [r.asDict() for r in spark.sql('CREATE TABLE delta.`{theirs}` "
                                 f"SHALLOW CLONE delta.`{src}`').collect()]")[0]
    assert row == theirs_row
    live = live_adds(src)
    assert row["source_num_of_files"] == len(live) and row["source_table_size"] == sum(a["size"] for a in live.values())
    assert row["num_copied_files"] == row["copied_files_size"] == row["num_removed_files"] == 0

    o, t = commit(ours, 0), commit(theirs, 0)
    oi, ti = commit_info(o), commit_info(t)
    assert oi["operation"] == ti["operation"] == "CLONE"
    assert oi["operationParameters"]["sourceVersion"] == ti["operationParameters"]["sourceVersion"] == 4
    assert oi["operationParameters"]["source"] == f"deltalog.`{source_uri(src)}`"
    assert ti["operationParameters"]["source"] == f"delta.`{source_uri(src)}`"
    assert oi["operationParameters"]["isShallow"] is True
    assert list(oi["operationMetrics"]) == list(ti["operationMetrics"])
    assert oi["operationMetrics"] == ti["operationMetrics"]
    assert oi["isBlindAppend"] is ti["isBlindAppend"] is False
    # the same adds: absolute paths into the source, `p` deletion vectors naming the source's DV files
    key = lambda a: a["path"]
    assert sorted(map(strip_add, kinds(o, "add")), key=key) == sorted(map(strip_add, kinds(t, "add")), key=key)
    for a in kinds(o, "add"):
        assert a["path"].startswith(source_uri(src) + "/p=")
        assert a["dataChange"] is True
        if "deletionVector" in a:
            dv = a["deletionVector"]
            assert dv["storageType"] == "p" and dv["pathOrInlineDv"].startswith(source_uri(src) + "/deletion_vector_")
            assert os.path.exists(dv["pathOrInlineDv"][len("file:"):])
    (mo,), (mt,) = kinds(o, "metaData"), kinds(t, "metaData")
    assert mo["configuration"] == mt["configuration"] and mo["partitionColumns"] == mt["partitionColumns"] == ["p"]
    assert json.loads(mo["schemaString"]) == json.loads(mt["schemaString"])
    assert mo["id"] != live_meta_id(src)
    norm = lambda ps: [{k: sorted(v) if isinstance(v, list) else v for k, v in p.items()} for p in ps]
    assert norm(kinds(o, "protocol")) == norm(kinds(t, "protocol"))
    # nothing but the log in the clone's directory
    assert sorted(os.listdir(ours)) == ["_delta_log"]
    assert_engines_read_shallow(spark, delta_spark, ours, rows_deltalog(spark, src))
    assert rows_delta_spark(delta_spark, theirs) == rows_deltalog(spark, theirs) == rows_deltalog(spark, src)


def live_meta_id(path: Path) -> str:
    return [m for v in range(version_of(path) + 1) for m in kinds(commit(path, v), "metaData")][-1]["id"]


def test_deep_clone_copies_data_and_deletion_vectors(spark, tmp_path, delta_spark):
    src = tmp_path / "src"
    make_source(spark, src)
    want = rows_deltalog(spark, src)
    live = live_adds(src)
    deep = tmp_path / "deep"
    row = spark.sql(f"CREATE TABLE deltalog.`{deep}` DEEP CLONE deltalog.`{src}`").collect()[0].asDict()
    assert row == {"source_table_size": sum(a["size"] for a in live.values()), "source_num_of_files": len(live),
                   "num_removed_files": 0, "num_copied_files": len(live),
                   "removed_files_size": 0, "copied_files_size": sum(a["size"] for a in live.values())}
    acts = commit(deep, 0)
    info = commit_info(acts)
    assert info["operationParameters"]["isShallow"] is False
    assert info["operationMetrics"]["numCopiedFiles"] == str(len(live))
    adds = {a["path"]: a for a in kinds(acts, "add")}
    assert set(adds) == set(live)  # relative paths kept
    for p, a in adds.items():
        s = live[p]
        assert a["size"] == s["size"] == os.path.getsize(deep / p)
        assert (deep / p).read_bytes() == (src / p).read_bytes()
        assert a["stats"] == s["stats"] and a["partitionValues"] == s["partitionValues"]
        assert a.get("deletionVector") == s.get("deletionVector")  # `u` DVs keep their place and name
        if "deletionVector" in a and a["deletionVector"]["storageType"] == "u":
            dv_files = glob.glob(str(deep / "deletion_vector_*.bin"))
            assert dv_files and all(Path(f).read_bytes() == (src / Path(f).name).read_bytes() for f in dv_files)
    # the clone is independent of the source: the source's directory can go
    shutil.rmtree(src)
    assert_all_engines_read(spark, delta_spark, deep, want)


def test_clone_of_a_delta_spark_table_both_kinds_read_by_every_engine(spark, tmp_path, delta_spark):
    src = tmp_path / "src"
    create_delta_spark(delta_spark, src, DV, partitioned=True)
    delta_spark.run("spark.sql(args['s'])", s=f"DELETE FROM delta.`{src}` WHERE id IN (1, 2, 15)")
    want = rows_delta_spark(delta_spark, src)
    assert len(want) == 18
    shallow, deep = tmp_path / "shallow", tmp_path / "deep"
    spark.sql(f"CREATE TABLE deltalog.`{shallow}` SHALLOW CLONE deltalog.`{src}`").collect()
    spark.sql(f"CREATE TABLE deltalog.`{deep}` CLONE deltalog.`{src}`").collect()  # DEEP by default
    assert commit_info(commit(deep, 0))["operationParameters"]["isShallow"] is False
    assert commit_info(commit(shallow, 0))["operationParameters"]["sourceVersion"] == version_of(src)
    assert all(a["path"].startswith("file:") for a in kinds(commit(shallow, 0), "add"))
    assert not any(a["path"].startswith("file:") for a in kinds(commit(deep, 0), "add"))
    assert_engines_read_shallow(spark, delta_spark, shallow, want)
    assert_all_engines_read(spark, delta_spark, deep, want)
    # both clones take further writes; delta-spark reads them
    spark.sql(f"INSERT INTO deltalog.`{shallow}` VALUES (100, 'n100', 0)")
    spark.sql(f"DELETE FROM deltalog.`{deep}` WHERE id = 0")
    assert rows_delta_spark(delta_spark, shallow) == rows_deltalog(spark, shallow) and len(rows_deltalog(spark, shallow)) == 19
    assert rows_delta_spark(delta_spark, deep) == rows_deltalog(spark, deep) and len(rows_deltalog(spark, deep)) == 17
    assert rows_delta_spark(delta_spark, src) == want  # the source is untouched


def test_version_timestamp_properties_and_replace(spark, tmp_path, delta_spark):
    src = tmp_path / "src"
    make_source(spark, src)
    t = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{t}` SHALLOW CLONE deltalog.`{src}` VERSION AS OF 1 "
              "TBLPROPERTIES ('delta.appendOnly' = 'true', 'owner.team' = 'x')").collect()
    assert rows_deltalog(spark, t) == rows_deltalog_at(spark, src, 1)
    (md,) = kinds(commit(t, 0), "metaData")
    assert md["configuration"] == {"delta.enableDeletionVectors": "true", "delta.appendOnly": "true", "owner.team": "x"}
    assert commit_info(commit(t, 0))["operationParameters"]["sourceVersion"] == 1

    # REPLACE: a new version; the old files are removed, the table id stays, properties are the new source's
    first_id = md["id"]
    before = live_adds(t)
    row = spark.sql(f"CREATE OR REPLACE TABLE deltalog.`{t}` DEEP CLONE deltalog.`{src}` VERSION AS OF 3"
                    ).collect()[0].asDict()
    assert version_of(t) == 1
    acts = commit(t, 1)
    assert {r["path"] for r in kinds(acts, "remove")} == set(before)
    assert all(r["dataChange"] for r in kinds(acts, "remove"))
    assert row["num_removed_files"] == len(before) and row["removed_files_size"] == sum(a["size"] for a in before.values())
    assert row["num_copied_files"] == len(kinds(acts, "add")) > 0
    (md2,) = kinds(acts, "metaData")
    assert md2["id"] == first_id and md2["configuration"] == {"delta.enableDeletionVectors": "true"}
    assert rows_deltalog(spark, t) == rows_deltalog_at(spark, src, 3)
    assert_all_engines_read(spark, delta_spark, t, rows_deltalog_at(spark, src, 3))  # deep: relative paths

    # by timestamp: the version current then (commit times are the commit files' modification times)
    ts_ms = os.stat(src / "_delta_log" / f"{2:020d}.json").st_mtime_ns // 1_000_000
    when = dt.datetime.fromtimestamp(ts_ms / 1000, dt.timezone.utc)
    tz = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        text = when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d}"
        u = tmp_path / "u"
        spark.sql(f"CREATE TABLE deltalog.`{u}` SHALLOW CLONE deltalog.`{src}` TIMESTAMP AS OF '{text}'").collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", tz)
    assert commit_info(commit(u, 0))["operationParameters"]["sourceVersion"] == 2
    assert rows_deltalog(spark, u) == rows_deltalog_at(spark, src, 2)


def rows_deltalog_at(spark, path: Path, version: int) -> list:
    from test_dml_delete import norm, srt
    return srt(norm(r) for r in spark.read.format("deltalog").option("versionAsOf", version).load(str(path))
               .select("id", "name", "p").collect())


def test_refusals_and_if_not_exists(spark, tmp_path, delta_spark):
    import deltalog.exceptions as dx
    src, t = tmp_path / "src", tmp_path / "t"
    make_source(spark, src)
    spark.sql(f"CREATE TABLE deltalog.`{t}` SHALLOW CLONE deltalog.`{src}`").collect()

    def refused(sql: str) -> str:
        with pytest.raises(Exception) as e:
            spark.sql(sql).collect()
        return error_class(e.value)

    # an existing table without REPLACE: delta-spark's class for a path target
    assert refused(f"CREATE TABLE deltalog.`{t}` SHALLOW CLONE deltalog.`{src}`") == \
        "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    theirs_cls = delta_spark.run(f"""
try:
    spark.sql("CREATE TABLE delta.`{t}` SHALLOW CLONE delta.`{src}`").collect()
    result = None
except Exception as e:
    result = e.getCondition()
""")
    assert theirs_cls == "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    # IF NOT EXISTS: no row, no commit
    assert spark.sql(f"CREATE TABLE IF NOT EXISTS deltalog.`{t}` DEEP CLONE deltalog.`{src}`").collect() == []
    assert version_of(t) == 0
    # a table cannot replace itself with its own clone
    assert refused(f"CREATE OR REPLACE TABLE deltalog.`{src}` SHALLOW CLONE deltalog.`{src}`") == \
        "DELTA_UNSUPPORTED_CLONE_REPLACE_SAME_TABLE"
    # REPLACE TABLE needs the table
    assert refused(f"REPLACE TABLE deltalog.`{tmp_path / 'none'}` SHALLOW CLONE deltalog.`{src}`") == \
        "DELTA_CANNOT_REPLACE_MISSING_TABLE"
    assert not (tmp_path / "none").exists()
    # a non-empty directory without a Delta table
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "x.txt").write_text("x")
    assert refused(f"CREATE TABLE deltalog.`{junk}` DEEP CLONE deltalog.`{src}`") == \
        "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    assert sorted(os.listdir(junk)) == ["x.txt"]
    # IF NOT EXISTS with REPLACE; a path with another LOCATION; changing the column mapping mode
    assert refused(f"CREATE OR REPLACE TABLE IF NOT EXISTS deltalog.`{t}` CLONE deltalog.`{src}`") == \
        "DELTA_PARSING_MUTUALLY_EXCLUSIVE_CLAUSES"
    assert refused(f"CREATE TABLE deltalog.`{tmp_path / 'a'}` CLONE deltalog.`{src}` LOCATION '{tmp_path / 'b'}'") == \
        "DELTA_CLONE_AMBIGUOUS_TARGET"
    assert refused(f"CREATE TABLE deltalog.`{tmp_path / 'cm'}` SHALLOW CLONE deltalog.`{src}` "
                   "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')") == "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE"
    assert refused(f"CREATE TABLE deltalog.`{tmp_path / 'v'}` SHALLOW CLONE deltalog.`{src}` VERSION AS OF 99") == \
        "DELTA_VERSION_NOT_FOUND"
    assert refused(f"CREATE TABLE deltalog.`{tmp_path / 'm'}` SHALLOW CLONE deltalog.`{tmp_path / 'missing'}`") == \
        "DELTA_TABLE_NOT_FOUND"
    for name in ("cm", "v", "m", "a"):
        assert not (tmp_path / name).exists(), name
    assert version_of(t) == 0


def test_failed_deep_copy_leaves_no_target(spark, tmp_path):
    src = tmp_path / "src"
    make_source(spark, src)
    victim = sorted(live_adds(src))[-1]
    os.remove(src / victim)  # one data file of the source is gone: its copy fails
    target = tmp_path / "deep"
    with pytest.raises(Exception) as e:
        spark.sql(f"CREATE TABLE deltalog.`{target}` DEEP CLONE deltalog.`{src}`").collect()
    assert "could not copy" in str(e.value) and victim.split("/")[-1] in str(e.value)
    assert not target.exists()  # no commit, no copied files, no directory

    # onto an existing table: the table stays at its version, the copies are deleted
    existing = tmp_path / "existing"
    spark.sql(f"CREATE TABLE deltalog.`{existing}` (id BIGINT, name STRING, p INT) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{existing}` VALUES (1, 'a', 0)")
    files_before = sorted(str(p.relative_to(existing)) for p in existing.rglob("*") if p.is_file())
    with pytest.raises(Exception):
        spark.sql(f"CREATE OR REPLACE TABLE deltalog.`{existing}` DEEP CLONE deltalog.`{src}`").collect()
    assert version_of(existing) == 1
    files_after = sorted(str(p.relative_to(existing)) for p in existing.rglob("*") if p.is_file())
    assert files_after == files_before


def test_python_api(spark, tmp_path, delta_spark):
    from deltalog.tables import DeltaTable
    src = tmp_path / "src"
    make_source(spark, src)
    dtab = DeltaTable.forPath(spark, str(src))
    deep = dtab.clone(str(tmp_path / "deep"), properties={"delta.logRetentionDuration": "interval 60 days"})
    assert isinstance(deep, DeltaTable) and deep.version() == 0
    assert deep.toDF().count() == len(rows_deltalog(spark, src))
    info = commit_info(commit(tmp_path / "deep", 0))
    assert info["operationParameters"]["isShallow"] is False
    assert kinds(commit(tmp_path / "deep", 0), "metaData")[0]["configuration"]["delta.logRetentionDuration"] == \
        "interval 60 days"
    shallow = dtab.cloneAtVersion(2, str(tmp_path / "sh"), isShallow=True)
    assert sorted(map(tuple, shallow.toDF().select("id", "name", "p").collect()), key=repr) == \
        sorted(map(tuple, spark.read.format("deltalog").option("versionAsOf", 2).load(str(src))
                   .select("id", "name", "p").collect()), key=repr)
    # replace=True replaces; without it the existing target is refused
    from deltalog.exceptions import InvalidWriteError
    with pytest.raises(InvalidWriteError) as e:
        dtab.cloneAtVersion(3, str(tmp_path / "sh"), isShallow=True)
    assert e.value.errorClass == "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    again = dtab.cloneAtVersion(3, str(tmp_path / "sh"), isShallow=True, replace=True)
    assert again.version() == 1 and commit_info(commit(tmp_path / "sh", 1))["operationParameters"]["sourceVersion"] == 3
    # a table opened at a version clones that version
    pinned = DeltaTable.forPath(spark, str(src), version=1).clone(str(tmp_path / "pinned"), isShallow=True)
    assert commit_info(commit(tmp_path / "pinned", 0))["operationParameters"]["sourceVersion"] == 1
    assert pinned.toDF().count() == 10
    ts_ms = os.stat(src / "_delta_log" / f"{3:020d}.json").st_mtime_ns // 1_000_000
    when = dt.datetime.fromtimestamp(ts_ms / 1000, dt.timezone.utc)
    tz = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        dtab.cloneAtTimestamp(when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d}",
                              str(tmp_path / "ts"), isShallow=True)
    finally:
        spark.conf.set("spark.sql.session.timeZone", tz)
    assert commit_info(commit(tmp_path / "ts", 0))["operationParameters"]["sourceVersion"] == 3
    # delta-spark's argument checks
    for bad in (dict(target=1), dict(target="x", isShallow="yes"), dict(target="x", replace=1),
                dict(target="x", properties=[("a", "b")]), dict(target="x", properties={"a": 1})):
        with pytest.raises(ValueError):
            dtab.clone(**bad)
    assert_engines_read_shallow(spark, delta_spark, tmp_path / "sh", rows_deltalog_at(spark, src, 3))


def test_catalog_names(spark, tmp_path, delta_spark):
    src = tmp_path / "src"
    make_source(spark, src)
    spark.sql("DROP TABLE IF EXISTS clone_src")
    spark.sql("DROP TABLE IF EXISTS clone_managed")
    spark.sql("DROP TABLE IF EXISTS clone_external")
    try:
        spark.sql(f"CREATE TABLE clone_src USING deltalog LOCATION '{src}'")
        row = spark.sql("CREATE TABLE clone_managed DEEP CLONE clone_src").collect()[0]
        assert row["num_copied_files"] == row["source_num_of_files"] > 0
        assert spark.table("clone_managed").count() == len(rows_deltalog(spark, src))
        info = commit_info(commit(Path(spark.sql("DESCRIBE DETAIL clone_managed").collect()[0]["location"]
                                       .replace("file:", "")), 0))
        assert info["operationParameters"]["source"] == "spark_catalog.default.clone_src"
        ext = tmp_path / "ext"
        spark.sql(f"CREATE TABLE clone_external SHALLOW CLONE clone_src VERSION AS OF 2 LOCATION '{ext}'").collect()
        assert spark.table("clone_external").count() == 20
        assert version_of(ext) == 0
        with pytest.raises(Exception) as e:
            spark.sql("CREATE TABLE clone_external SHALLOW CLONE clone_src").collect()
        assert error_class(e.value) == "DELTA_TABLE_ALREADY_EXISTS"
        spark.sql("CREATE OR REPLACE TABLE clone_external SHALLOW CLONE clone_src").collect()
        assert version_of(ext) == 1 and spark.table("clone_external").count() == len(rows_deltalog(spark, src))
        hist = spark.sql("DESCRIBE HISTORY clone_external").collect()
        assert [h["operation"] for h in hist] == ["CLONE", "CLONE"]
        assert_engines_read_shallow(spark, delta_spark, ext, rows_deltalog(spark, src))
    finally:
        for t in ("clone_src", "clone_managed", "clone_external"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")
