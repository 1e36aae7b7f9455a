"""Log retention (issue 28): after an automatic checkpoint, commits and checkpoints older than
``delta.logRetentionDuration`` are deleted when ``delta.enableExpiredLogCleanup`` is on (the
default), keeping the newest checkpoint before the cut-off and its commit, as delta-spark 4.4 does
on the same table layout; delta-spark and delta-rs read the cleaned-up table exactly.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from test_dml_delete import rows_delta_rs, rows_delta_spark, rows_deltalog, srt

DAY = 24 * 3600
COLS = "(id BIGINT, name STRING, p INT)"


def log_versions(path: Path) -> dict:
    out: dict = {"commits": [], "checkpoints": []}
    for f in sorted(os.listdir(path / "_delta_log")):
        if not f[0].isdigit():
            continue
        if f.endswith(".json") and "checkpoint" not in f:
            out["commits"].append(int(f.split(".")[0]))
        elif ".checkpoint." in f:
            out["checkpoints"].append(int(f.split(".")[0]))
    return out


def age(path: Path, up_to: int, seconds_ago: float) -> None:
    """Log files of versions <= up_to written `seconds_ago`, one second apart in version order
    (delta-spark only trusts strictly increasing file times)."""
    t = time.time() - seconds_ago
    for f in os.listdir(path / "_delta_log"):
        if f[0].isdigit() and int(f.split(".")[0]) <= up_to:
            v = int(f.split(".")[0])
            os.utime(path / "_delta_log" / f, (t + v, t + v))


def statements(t: str, using: str, versions: range, props: str = "") -> list:
    out = [f"CREATE TABLE {t} {COLS} USING {using} {props}"] if versions.start == 0 else []
    return out + [f"INSERT INTO {t} VALUES ({v}, 'n{v}', {v % 2})" for v in versions if v > 0]


def run_both(spark, delta_spark, ours: Path, theirs: Path, versions: range, props: str = "") -> None:
    for s in statements(f"deltalog.`{ours}`", "deltalog", versions, props):
        spark.sql(s)
    delta_spark.run("for s in args['stmts']:\n    spark.sql(s)",
                    stmts=statements(f"delta.`{theirs}`", "delta", versions, props))


def want(last: int) -> list:
    return srt((v, f"n{v}", v % 2) for v in range(1, last + 1))


def test_expired_history_is_deleted_as_delta_spark_does(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    run_both(spark, delta_spark, ours, theirs, range(0, 25))
    for p in (ours, theirs):
        assert log_versions(p) == {"commits": list(range(25)), "checkpoints": [10, 20]}
        age(p, 14, 40 * DAY)                          # versions 0..14 are 40 days old
    run_both(spark, delta_spark, ours, theirs, range(25, 31))
    # newest commit before the cut-off: 14; newest checkpoint at or before it: 10 (kept with its commit)
    assert log_versions(ours) == log_versions(theirs) == {"commits": list(range(10, 31)),
                                                          "checkpoints": [10, 20, 30]}
    assert rows_deltalog(spark, ours) == rows_delta_spark(delta_spark, ours) == rows_delta_rs(ours) == want(30)
    at10 = spark.read.format("deltalog").option("versionAsOf", 10).load(str(ours)).select("id", "name", "p")
    assert srt(tuple(r) for r in at10.collect()) == want(10)
    history = [r["version"] for r in spark.sql(f"DESCRIBE HISTORY deltalog.`{ours}`").collect()]
    assert min(history) == 10
    with pytest.raises(Exception) as e:
        spark.read.format("deltalog").option("versionAsOf", 5).load(str(ours)).collect()
    assert "5" in str(e.value) and "10" in str(e.value)


def test_disabled_cleanup_and_longer_retention_keep_everything(spark, tmp_path, delta_spark):
    for name, props in (("off", "TBLPROPERTIES ('delta.enableExpiredLogCleanup' = 'false')"),
                        ("long", "TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days')")):
        ours, theirs = tmp_path / f"ours-{name}", tmp_path / f"theirs-{name}"
        run_both(spark, delta_spark, ours, theirs, range(0, 25), props)
        for p in (ours, theirs):
            age(p, 14, 40 * DAY)
        run_both(spark, delta_spark, ours, theirs, range(25, 31))
        assert log_versions(ours) == log_versions(theirs) == {"commits": list(range(31)),
                                                              "checkpoints": [10, 20, 30]}
        assert rows_deltalog(spark, ours) == want(30)


def test_delta_spark_continues_a_cleaned_deltalog_table(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    for s in statements(f"deltalog.`{path}`", "deltalog", range(0, 25)):
        spark.sql(s)
    age(path, 24, 40 * DAY)
    for s in statements(f"deltalog.`{path}`", "deltalog", range(25, 31)):
        spark.sql(s)
    assert log_versions(path)["commits"] == list(range(20, 31))
    delta_spark.run(f"spark.sql(\"INSERT INTO delta.`{path}` VALUES (31, 'n31', 1)\")")
    assert rows_deltalog(spark, path) == rows_delta_rs(path) == want(31)
