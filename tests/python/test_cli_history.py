"""``deltalog history`` / ``deltalog describe`` and ``deltalog.history`` (issue 26): pure Python, no JVM.

Every table is described twice, by :func:`deltalog.history.table_history` / ``table_detail`` (and the
CLI's ``--json`` output) and by the engine's ``DESCRIBE HISTORY`` / ``DESCRIBE DETAIL`` through the
shared ``spark`` fixture, and the rows must be the same, timestamps to the millisecond: tables
written by deltalog (appends, overwrite, ALTER TABLE, a checkpoint, in-commit timestamps from the
start or enabled later) and conformance-corpus tables (classic, multi-part and V2 checkpoints with
sidecars, deletion vectors, clustering, in-commit timestamps, truncated logs).
"""
from __future__ import annotations

import datetime as dt
import io
import json
import os
from pathlib import Path

import pytest

import deltalog
from deltalog import cli
from deltalog.exceptions import ActionParseError, TableNotFoundError
from deltalog.history import DETAIL_COLUMNS, HISTORY_COLUMNS, history_row, table_detail, table_history

from conftest import CONFORMANCE

MANIFEST = {e["id"]: e for e in json.loads((CONFORMANCE / "manifest.json").read_text())}

# Corpus tables: checkpoint kinds, sidecars, DVs, ICT, clustering, legacy writers, truncated logs.
CORPUS = [
    "delta-kernel-rs/multi-part-checkpoint",
    "delta-kernel-rs/v1-multi-part-partitioned-struct-stats-only",
    "delta-kernel-rs/v2-checkpoint-json",
    "delta-kernel-rs/v2-checkpoint-parquet",
    "delta-kernel-rs/v2-json-sidecars-struct-stats-only",
    "delta-kernel-rs/v2-checkpoints-parquet-with-sidecars",
    "delta-kernel-rs/v2-classic-checkpoint-parquet",
    "delta-kernel-rs/dv-partitioned-with-checkpoint",
    "delta-rs/cdc_ict_table",
    "delta-rs/checkpoints_vacuumed",
    "delta-rs/table-with-domain-metadata",
    "delta/basic-dv-with-checkpoint",
    "delta/delta-0.1.0",
    "delta/kernel-pagination-v2-checkpoint-parquet",
]


def test_package_under_test_is_this_checkout():
    assert Path(deltalog.__file__).resolve().is_relative_to(Path(__file__).resolve().parents[2])


# ------------------------------------------------------------------------------- helpers
def engine_history(spark, path, limit=None):
    sql = f"DESCRIBE HISTORY deltalog.`{path}`" + ("" if limit is None else f" LIMIT {limit}")
    df = spark.sql(sql)
    rows = []
    for r in df.selectExpr("*", "unix_millis(timestamp) AS _ms").collect():
        d = r.asDict(recursive=True)
        d["timestamp"] = d.pop("_ms")
        rows.append(d)
    assert tuple(df.columns) == HISTORY_COLUMNS
    return rows


def engine_detail(spark, path):
    df = spark.sql(f"DESCRIBE DETAIL deltalog.`{path}`")
    assert tuple(df.columns) == DETAIL_COLUMNS
    (r,) = df.selectExpr("*", "unix_millis(createdAt) AS _c", "unix_millis(lastModified) AS _m").collect()
    d = r.asDict(recursive=True)
    d["createdAt"], d["lastModified"] = d.pop("_c"), d.pop("_m")
    return d


def iso_ms(text):
    if text is None:
        return None
    assert text.endswith("Z")
    t = dt.datetime.strptime(text[:-1], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)
    return (t - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def cli_history_json(path, *extra):
    status, out, err = run_cli("history", str(path), "--json", *extra)
    assert status == 0, err
    rows = json.loads(out)
    for r in rows:
        assert tuple(r) == HISTORY_COLUMNS
        r["timestamp"] = iso_ms(r["timestamp"])
    return rows


def cli_detail_json(path):
    status, out, err = run_cli("describe", str(path), "--json")
    assert status == 0, err
    d = json.loads(out)
    assert tuple(d) == DETAIL_COLUMNS
    d["createdAt"], d["lastModified"] = iso_ms(d["createdAt"]), iso_ms(d["lastModified"])
    return d


def python_history(path, limit=None):
    return [history_row(e) for e in table_history(path, limit)]


def assert_same_as_engine(spark, path, limits=(None, 1, 2)):
    """table_history / table_detail and the CLI's --json give the engine's rows exactly."""
    for limit in limits:
        mine = python_history(path, limit)
        assert mine == engine_history(spark, path, limit), (path, limit)
    assert cli_history_json(path) == python_history(path)
    assert cli_history_json(path, "--limit", "1") == python_history(path, 1)
    d = table_detail(path)
    assert tuple(d) == DETAIL_COLUMNS
    assert d == engine_detail(spark, path), path
    assert cli_detail_json(path) == d


def write(spark, path, lo, hi, mode="append", **options):
    w = spark.range(lo, hi).selectExpr("id", "id % 3 AS p").write.format("deltalog").mode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    w.save(str(path))


# ------------------------------------------------------------------------------- deltalog tables
def test_writes_overwrite_and_alter_table(spark, tmp_path):
    path = tmp_path / "t"
    spark.range(0, 10).selectExpr("id", "id % 3 AS p").write.format("deltalog").partitionBy("p").save(str(path))
    write(spark, path, 10, 15)
    spark.sql(f"ALTER TABLE deltalog.`{path}` SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days')")
    write(spark, path, 20, 22, mode="overwrite")
    assert_same_as_engine(spark, path, limits=(None, 0, 1, 2, 10))
    h = table_history(path)
    assert [e.version for e in h] == [3, 2, 1, 0]
    assert [e.commit_info["operation"] for e in h] == ["WRITE", "SET TBLPROPERTIES", "WRITE", "WRITE"]
    # monotonized modification times: strictly increasing with the version
    assert all(a.timestamp_ms > b.timestamp_ms for a, b in zip(h, h[1:]))
    d = table_detail(path)
    assert d["partitionColumns"] == ["p"] and d["properties"] == {"delta.logRetentionDuration": "interval 60 days"}
    assert d["lastModified"] == h[0].timestamp_ms
    # the text forms
    status, out, _ = run_cli("history", str(path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["version", "timestamp", "operation", "readVersion", "isBlindAppend", "engineInfo",
                                "operationParameters"]
    assert lines[2].startswith("3 ") and "Overwrite" in lines[2] and "SET TBLPROPERTIES" in lines[3]
    assert lines[-1].startswith("(4 commits")
    stamp = dt.datetime.fromtimestamp(h[0].timestamp_ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    assert stamp in lines[2]
    status, out, _ = run_cli("history", str(path), "--limit", "1")
    assert status == 0 and len(out.splitlines()) == 4
    status, out, _ = run_cli("describe", str(path))
    assert status == 0
    shown = dict(line.split(": ", 1) for line in out.splitlines())
    assert list(shown) == list(DETAIL_COLUMNS)
    assert shown["format"] == "delta" and shown["name"] == "null" and shown["numFiles"] == str(d["numFiles"])
    assert shown["partitionColumns"] == '["p"]' and shown["location"] == "file:" + str(path)


def test_checkpoint_and_commits_after_it(spark, tmp_path):
    from deltalog.tables import DeltaTable

    path = tmp_path / "cp"
    write(spark, path, 0, 10)
    write(spark, path, 10, 20)
    write(spark, path, 20, 30, mode="overwrite")
    DeltaTable.forPath(spark, str(path)).checkpoint()
    assert any(n.endswith(".checkpoint.parquet") for n in os.listdir(path / "_delta_log"))
    # the latest version is the checkpoint's: lastModified is the checkpoint's time, as in the engine
    assert_same_as_engine(spark, path, limits=(None, 1))
    write(spark, path, 30, 35)
    assert_same_as_engine(spark, path, limits=(None, 1))
    write(spark, path, 40, 42, mode="overwrite")  # removes files the checkpoint holds
    assert_same_as_engine(spark, path)
    last = (path / "_delta_log" / f"{4:020d}.json").read_text().splitlines()
    adds = [json.loads(line)["add"] for line in last if line.startswith('{"add"')]
    d = table_detail(path)
    assert (d["numFiles"], d["sizeInBytes"]) == (len(adds), sum(a["size"] for a in adds))
    # the old commits are still described even when the checkpoint alone rebuilds the state
    assert [e.version for e in table_history(path)] == [4, 3, 2, 1, 0]


def test_in_commit_timestamps_from_the_first_write(spark, tmp_path):
    path = tmp_path / "ict"
    write(spark, path, 0, 5, **{"delta.enableInCommitTimestamps": "true"})
    write(spark, path, 5, 10)
    write(spark, path, 10, 12, mode="overwrite")
    infos = {e.version: e.commit_info for e in table_history(path)}
    assert all(isinstance(c.get("inCommitTimestamp"), int) for c in infos.values())
    # the timestamps are the in-commit timestamps, not the files' times
    for e in table_history(path):
        assert e.timestamp_ms == e.commit_info["inCommitTimestamp"]
    os.utime(path / "_delta_log" / f"{2:020d}.json", (1, 1))  # file times do not matter any more
    assert_same_as_engine(spark, path)
    assert table_detail(path)["lastModified"] == infos[2]["inCommitTimestamp"]
    assert "inCommitTimestamp" in table_detail(path)["tableFeatures"]


def test_in_commit_timestamps_enabled_later(spark, tmp_path):
    path = tmp_path / "ict_later"
    write(spark, path, 0, 5)
    write(spark, path, 5, 10)
    spark.sql(f"ALTER TABLE deltalog.`{path}` SET TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')")
    write(spark, path, 10, 12)
    props = table_detail(path)["properties"]
    first = int(props.get("delta.inCommitTimestampEnablementVersion", "0"))
    assert first == 2  # the ALTER TABLE commit: versions 0 and 1 keep their file times
    h = table_history(path)
    assert [e.version for e in h] == [3, 2, 1, 0]
    for e in h:
        if e.version >= first:
            assert e.timestamp_ms == e.commit_info["inCommitTimestamp"]
    assert_same_as_engine(spark, path, limits=(None, 1, 2, 3))


# ------------------------------------------------------------------------------- corpus tables
@pytest.mark.parametrize("table_id", [t for t in CORPUS if t in MANIFEST])
def test_conformance_corpus_tables(spark, table_id):
    path = CONFORMANCE / MANIFEST[table_id]["table_path"]
    d = table_detail(path)
    assert d["numFiles"] == MANIFEST[table_id]["live_files"]
    if not any(n.endswith(".json") and n[:-5].isdigit() for n in os.listdir(path / "_delta_log")):
        # checkpoint only: no commit to show (the engine refuses too), the details are there
        with pytest.raises(TableNotFoundError, match="contains no commits"):
            table_history(path)
        with pytest.raises(Exception, match="DELTA_TABLE_NOT_FOUND"):
            spark.sql(f"DESCRIBE HISTORY deltalog.`{path}`").collect()
        assert d == engine_detail(spark, path)
        assert cli_detail_json(path) == d
        assert run_cli("history", str(path))[0] == 1
        return
    assert_same_as_engine(spark, path)


def test_corpus_covers_the_checkpoint_kinds():
    present = [t for t in CORPUS if t in MANIFEST]
    exercised = {x for t in present for x in MANIFEST[t]["exercises"]}
    assert {"multipart-checkpoint", "v2-checkpoint", "sidecars", "checkpoint-classic",
            "in-commit-timestamps", "clustering", "deletion-vectors"} <= exercised


# ------------------------------------------------------------------------------- limits and errors
def test_limit_reads_only_the_newest_commits(spark, tmp_path):
    path = tmp_path / "many"
    for i in range(5):
        write(spark, path, i, i + 1)
    bad = path / "_delta_log" / f"{1:020d}.json"
    mtime = bad.stat().st_mtime_ns
    bad.write_text("not json\n")
    os.utime(bad, ns=(mtime, mtime))
    expected = engine_history(spark, path, 2)
    assert [r["version"] for r in expected] == [4, 3]
    assert python_history(path, 2) == expected
    assert cli_history_json(path, "--limit", "2") == expected
    status, out, _ = run_cli("history", str(path), "--limit", "2")
    assert status == 0 and out.splitlines()[2].startswith("4 ")
    # every commit: the corrupt one is read and named
    with pytest.raises(ActionParseError, match=f"{1:020d}.json"):
        table_history(path)
    status, out, err = run_cli("history", str(path))
    assert status == 1 and out == ""
    assert err.startswith("deltalog: error: [DELTA_MALFORMED_LOG_LINE]") and f"{1:020d}.json" in err
    with pytest.raises(ValueError):
        table_history(path, -1)


def test_not_a_table(tmp_path):
    (tmp_path / "data").mkdir()
    for cmd in ("history", "describe"):
        status, out, err = run_cli(cmd, str(tmp_path / "data"))
        assert status == 1 and out == ""
        assert err.startswith("deltalog: error: [DELTA_TABLE_NOT_FOUND]")
        assert f"{tmp_path / 'data'} is not a Delta table" in err and err.count("\n") == 1
    (tmp_path / "data" / "_delta_log").mkdir()
    with pytest.raises(TableNotFoundError):
        table_history(tmp_path / "data")
    with pytest.raises(TableNotFoundError):
        table_detail(tmp_path / "data")
    status, _, err = run_cli("describe", str(tmp_path / "data"))
    assert status == 1 and "DELTA_TABLE_NOT_FOUND" in err
    with pytest.raises(SystemExit) as e:
        cli.main(["history", str(tmp_path), "--limit", "-1"], out=io.StringIO(), err=io.StringIO())
    assert e.value.code == 2


@pytest.mark.parametrize("command", [["history", "--limit", "2"], ["describe"]])
def test_runs_without_a_jvm(command):
    """Neither pyspark nor py4j is imported (a V2 checkpoint with sidecars: pyarrow only)."""
    import subprocess
    import sys

    path = CONFORMANCE / MANIFEST["delta-kernel-rs/v2-checkpoint-parquet"]["table_path"]
    script = ("import sys, runpy; sys.argv = ['deltalog'] + sys.argv[1:];\n"
              "try:\n    runpy.run_module('deltalog.cli', run_name='__main__')\n"
              "except SystemExit as e:\n    code = e.code\n"
              "loaded = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
              "print('LOADED', loaded, 'CODE', code)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "python")}
    res = subprocess.run([sys.executable, "-c", script, command[0], str(path), *command[1:]],
                         capture_output=True, text=True, env=env, timeout=120)
    assert "LOADED [] CODE 0" in res.stdout, res.stderr
    assert ("numFiles: 4" if command[0] == "describe" else "(2 commits") in res.stdout
