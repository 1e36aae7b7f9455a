"""Row tracking across engines: delta-spark's DML on a table deltalog created with row tracking.

deltalog creates the table (``delta.enableRowTracking = true``) and appends to it; delta-spark
4.4.0 (``make peers`` puts its jars in ~/.m2; this test fetches them the same way when they are
missing) runs DELETE, UPDATE, MERGE and OPTIMIZE on it in a separate Python process, reading
``_metadata.row_id`` / ``_metadata.row_commit_version`` before and after. deltalog then reads the
table back (the materialized row-id / commit-version columns delta-spark wrote into its data
files stay out of the table's columns), appends again with fresh row ids above delta-spark's
high-water mark, and delta-rs reads the same rows.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq

import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "integration"))
from peers import delta_spark_jars  # noqa: E402  (one resolution of delta-spark's jars)
ROW_ID_KEY = "delta.rowTracking.materializedRowIdColumnName"
COMMIT_VERSION_KEY = "delta.rowTracking.materializedRowCommitVersionColumnName"
UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


# The delta-spark process: DML through SQL on delta.`path`, results as one JSON line on stdout.
DELTA_SPARK_SCRIPT = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    path, jars = sys.argv[1], sys.argv[2]
    spark = (SparkSession.builder.master("local[2]").appName("delta-spark-peer")
             .config("spark.jars", jars)
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    t = "delta.`" + path.replace("`", "``") + "`"

    def rows():
        q = "SELECT id, v, _metadata.row_id AS row_id, _metadata.row_commit_version AS rcv FROM " + t
        return sorted([r.asDict() for r in spark.sql(q).collect()], key=lambda r: r["id"])

    out = {"before": rows()}
    spark.sql("DELETE FROM " + t + " WHERE id % 5 = 0")
    spark.sql("UPDATE " + t + " SET v = v * 10 WHERE id < 4")
    spark.sql("MERGE INTO " + t + " AS t USING (SELECT * FROM VALUES (6L, 600L), (100L, 1000L) AS s(id, v)) AS s "
              "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)")
    out["optimize"] = [r.asDict(recursive=True) for r in spark.sql("OPTIMIZE " + t).collect()][0]["metrics"]
    out["after"] = rows()
    out["history"] = [r["operation"] for r in spark.sql("DESCRIBE HISTORY " + t).orderBy("version").collect()]
    print("RESULT " + json.dumps(out, default=str), flush=True)
    spark.stop()
""")


def run_delta_spark(path: Path) -> dict:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_SUBMIT_ARGS="pyspark-shell")
    env.pop("SPARK_CONF_DIR", None)
    p = subprocess.run([sys.executable, "-c", DELTA_SPARK_SCRIPT, str(path), ",".join(delta_spark_jars())],
                       capture_output=True, text=True, env=env, timeout=900, start_new_session=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and lines, f"delta-spark failed (exit {p.returncode}):\n{p.stdout[-4000:]}\n{p.stderr[-8000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def log_versions(path: Path) -> list[int]:
    return sorted(int(f.name[:20]) for f in (path / "_delta_log").glob("*.json") if f.name[:20].isdigit())


def log_actions(path: Path, version: int) -> list[dict]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def latest_configuration(path: Path) -> dict:
    conf = None
    for v in log_versions(path):
        for a in log_actions(path, v):
            if "metaData" in a:
                conf = a["metaData"].get("configuration", {})
    return conf


def high_water_mark(path: Path) -> int:
    hwm = -1
    for v in log_versions(path):
        for a in log_actions(path, v):
            d = a.get("domainMetadata")
            if d and d["domain"] == "delta.rowTracking" and not d.get("removed"):
                hwm = json.loads(d["configuration"])["rowIdHighWaterMark"]
    return hwm


def rows_of(df) -> dict:
    return {r["id"]: r["v"] for r in df.collect()}


def test_delta_spark_dml_on_a_row_tracking_table_deltalog_created(spark, tmp_path):
    path = tmp_path / "rt"
    spark.range(0, 10, 1, 2).selectExpr("id", "id AS v").write.format("deltalog") \
        .option("delta.enableRowTracking", "true").save(str(path))
    spark.range(10, 15, 1, 1).selectExpr("id", "id AS v").write.format("deltalog").mode("append").save(str(path))

    # The protocol's row-tracking section: both materialized column names, unique per table.
    conf0 = next(a["metaData"] for a in log_actions(path, 0) if "metaData" in a)["configuration"]
    assert conf0["delta.enableRowTracking"] == "true"
    assert re.fullmatch(f"_row-id-col-{UUID}", conf0[ROW_ID_KEY]), conf0
    assert re.fullmatch(f"_row-commit-version-col-{UUID}", conf0[COMMIT_VERSION_KEY]), conf0
    assert high_water_mark(path) == 14

    out = run_delta_spark(path)

    # Before the DML delta-spark sees the ids deltalog assigned: 0..14, versions 0 (create) / 1 (append).
    before = {r["id"]: r for r in out["before"]}
    assert sorted(r["row_id"] for r in out["before"]) == list(range(15))
    assert {r["id"]: r["rcv"] for r in out["before"]} == {i: (0 if i < 10 else 1) for i in range(15)}
    assert [op for op in out["history"] if op in ("DELETE", "UPDATE", "MERGE", "OPTIMIZE")] == \
        ["DELETE", "UPDATE", "MERGE", "OPTIMIZE"], out["history"]
    assert out["optimize"]["numFilesAdded"] >= 1

    expected = {i: i for i in range(15) if i % 5 != 0}
    expected.update({1: 10, 2: 20, 3: 30, 6: 600, 100: 1000})
    after = {r["id"]: r for r in out["after"]}
    assert {i: r["v"] for i, r in after.items()} == expected
    # Stable row ids: every surviving row keeps the id deltalog gave it (materialized by delta-spark
    # under the names deltalog assigned); the inserted row gets a fresh one above the mark.
    for i, r in after.items():
        if i in before:
            assert r["row_id"] == before[i]["row_id"], (i, r, before[i])
    assert after[100]["row_id"] > 14
    assert len({r["row_id"] for r in out["after"]}) == len(out["after"])
    assert all(after[i]["rcv"] > before[i]["rcv"] for i in (1, 2, 3, 6))
    assert after[4]["rcv"] == before[4]["rcv"]

    # delta-spark kept the names and wrote the materialized columns into its rewritten files.
    conf = latest_configuration(path)
    assert (conf[ROW_ID_KEY], conf[COMMIT_VERSION_KEY]) == (conf0[ROW_ID_KEY], conf0[COMMIT_VERSION_KEY])
    live = deltalake.DeltaTable(str(path)).file_uris()
    assert live
    file_columns = set().union(*(set(pq.read_schema(u.replace("file://", "")).names) for u in live))
    assert conf0[ROW_ID_KEY] in file_columns, file_columns

    # deltalog reads the table's columns only, the same rows as delta-spark and delta-rs.
    df = spark.read.format("deltalog").load(str(path))
    assert df.columns == ["id", "v"]
    assert rows_of(df) == expected
    rs = deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    assert {r["id"]: r["v"] for r in rs} == expected

    # A deltalog append after delta-spark's DML: fresh ids above delta-spark's high-water mark.
    hwm = high_water_mark(path)
    assert hwm >= after[100]["row_id"]
    spark.range(200, 203, 1, 1).selectExpr("id", "id AS v").write.format("deltalog").mode("append").save(str(path))
    v = log_versions(path)[-1]
    adds = [a["add"] for a in log_actions(path, v) if "add" in a]
    assert [a["baseRowId"] for a in adds] == [hwm + 1] and [a["defaultRowCommitVersion"] for a in adds] == [v]
    assert high_water_mark(path) == hwm + 3
    assert latest_configuration(path)[ROW_ID_KEY] == conf0[ROW_ID_KEY]
    expected.update({200: 200, 201: 201, 202: 202})
    assert rows_of(spark.read.format("deltalog").load(str(path))) == expected
    rs = deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    assert {r["id"]: r["v"] for r in rs} == expected
