"""df.write.format("deltalog"): modes, options, rules, stats and the resulting log.

Every table written here is also read back with delta-rs (``deltalake``), an independent reader.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import json
import math
import os
from pathlib import Path

import pytest

import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it

from pyspark.sql import Row  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import (  # noqa: E402
    DecimalType, DoubleType, LongType, StringType, StructField, StructType, TimestampType,
)


# ----------------------------------------------------------------------------- helpers

def log_actions(path: Path, version: int) -> list[dict]:
    lines = (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def of(actions: list[dict], kind: str) -> list[dict]:
    return [a[kind] for a in actions if kind in a]


def commit_info(path: Path, version: int) -> dict:
    return of(log_actions(path, version), "commitInfo")[0]


def latest_version(path: Path) -> int:
    return max(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))


def live_files(path: Path) -> dict[str, dict]:
    files: dict[str, dict] = {}
    for v in range(latest_version(path) + 1):
        for a in log_actions(path, v):
            if "add" in a:
                files[a["add"]["path"]] = a["add"]
            if "remove" in a:
                files.pop(a["remove"]["path"], None)
    return files


def rows_rs(path: Path, sort: str) -> list[dict]:
    """Rows as delta-rs reads them, sorted by `sort`."""
    table = deltalake.DeltaTable(str(path)).to_pyarrow_table()
    return sorted(table.to_pylist(), key=lambda r: (r[sort] is None, r[sort]))


def rows_rs_sql(path: Path) -> list[dict]:
    """Rows as delta-rs' DataFusion engine reads them (handles column mapping)."""
    import pyarrow as pa
    dt_ = deltalake.DeltaTable(str(path))
    return pa.table(deltalake.QueryBuilder().register("t", dt_).execute("select * from t").read_all()).to_pylist()


def rows_rs_sql_where(path: Path, predicate: str) -> list[dict]:
    """Rows of `select * from t where <predicate>` through delta-rs' DataFusion engine (file pruning on stats)."""
    import pyarrow as pa
    dt_ = deltalake.DeltaTable(str(path))
    query = deltalake.QueryBuilder().register("t", dt_).execute(f"select * from t where {predicate}")
    return pa.table(query.read_all()).to_pylist()


def create_table_log(path: Path, schema: dict, configuration: dict | None = None,
                     partition_columns: list | None = None, writer_version: int = 6) -> None:
    """Version 0 written by hand: protocol (1, writer_version) and a metaData with `schema`."""
    log = path / "_delta_log"
    log.mkdir(parents=True)
    actions = [
        {"commitInfo": {"timestamp": 0, "operation": "CREATE TABLE"}},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": writer_version}},
        {"metaData": {"id": "00000000-0000-0000-0000-000000000001", "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(schema), "partitionColumns": partition_columns or [],
                      "configuration": configuration or {}, "createdTime": 0}},
    ]
    (log / ("0" * 20 + ".json")).write_text("\n".join(json.dumps(a) for a in actions) + "\n")


def field(name: str, typ: str, nullable: bool = True, metadata: dict | None = None) -> dict:
    return {"name": name, "type": typ, "nullable": nullable, "metadata": metadata or {}}


def struct(*fields: dict) -> dict:
    return {"type": "struct", "fields": list(fields)}


def error_text(excinfo) -> str:
    return str(excinfo.value)


@pytest.fixture
def table(tmp_path: Path) -> Path:
    return tmp_path / "t"


# ----------------------------------------------------------------------------- append / create

def test_append_creates_table_with_stats_and_commit_info(spark, table):
    df = spark.createDataFrame(
        [(1, "a", 1.5, dt.datetime(2024, 1, 1, 0, 0, 0, 123456)),
         (2, None, -2.0, dt.datetime(2024, 1, 2, 12, 0, 0, 999999)),
         (3, "c", None, None)],
        "id long, name string, value double, ts timestamp").coalesce(1)
    df.write.format("deltalog").save(str(table))

    actions = log_actions(table, 0)
    assert list(actions[0]) == ["commitInfo"]
    protocol = of(actions, "protocol")[0]
    assert (protocol["minReaderVersion"], protocol["minWriterVersion"]) == (1, 2)
    meta = of(actions, "metaData")[0]
    assert meta["partitionColumns"] == []
    schema = json.loads(meta["schemaString"])
    assert [f["name"] for f in schema["fields"]] == ["id", "name", "value", "ts"]
    assert all(f["nullable"] for f in schema["fields"])
    adds = of(actions, "add")
    assert len(adds) == 1
    add = adds[0]
    assert add["partitionValues"] == {} and add["dataChange"] is True
    assert add["size"] == (table / add["path"]).stat().st_size
    assert add["modificationTime"] > 0
    stats = json.loads(add["stats"])
    assert stats["numRecords"] == 3
    assert stats["minValues"] == {"id": 1, "name": "a", "value": -2.0, "ts": "2024-01-01T00:00:00.123Z"}
    # the max timestamp is truncated to the millisecond, as delta-spark writes it (readers widen it)
    assert stats["maxValues"] == {"id": 3, "name": "c", "value": 1.5, "ts": "2024-01-02T12:00:00.999Z"}
    assert stats["nullCount"] == {"id": 0, "name": 1, "value": 1, "ts": 1}
    assert stats["tightBounds"] is True

    ci = actions[0]["commitInfo"]
    assert ci["operation"] == "WRITE"
    assert ci["operationParameters"] == {"mode": "ErrorIfExists", "partitionBy": "[]"}
    assert ci["operationMetrics"]["numFiles"] == "1"
    assert ci["operationMetrics"]["numOutputRows"] == "3"
    assert ci["operationMetrics"]["numOutputBytes"] == str(add["size"])
    assert ci["isBlindAppend"] is True

    spark.createDataFrame([(4, "d", 4.0, None)], "id long, name string, value double, ts timestamp") \
        .write.format("deltalog").mode("append").save(str(table))
    ci1 = commit_info(table, 1)
    assert ci1["operationParameters"]["mode"] == "Append" and ci1["readVersion"] == 0
    got = rows_rs(table, "id")
    assert [r["id"] for r in got] == [1, 2, 3, 4]
    assert got[1]["name"] is None and got[0]["ts"] == dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=dt.timezone.utc)


def test_all_types_read_identically_with_delta_rs_and_spark(spark, table):
    q = """select * from values
      (1Y, 2S, 3, 4L, 1.5f, 2.5d, 1.25BD, 'x', X'0102', true, date'2024-01-01',
       timestamp'2024-01-01 10:00:00.123456', timestamp_ntz'2024-01-01 10:00:00.5',
       array(1, 2), map('k', 1), named_struct('a', 1, 'b', 'y')),
      (null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null)
      as v(b, s, i, l, f, d, dec, str, bin, bo, dt, ts, ntz, arr, m, st)"""
    spark.sql(q).write.format("deltalog").save(str(table))
    rs = deltalake.DeltaTable(str(table)).to_pyarrow_table().to_pylist()
    sp = [r.asDict(recursive=True) for r in spark.read.format("deltalog").load(str(table)).collect()]
    assert len(rs) == len(sp) == 2
    full_rs = next(r for r in rs if r["i"] == 3)
    full_sp = next(r for r in sp if r["i"] == 3)
    assert full_rs["dec"] == full_sp["dec"] == decimal.Decimal("1.25")
    assert full_rs["bin"] == bytes(full_sp["bin"]) == b"\x01\x02"
    assert full_rs["ntz"] == full_sp["ntz"] == dt.datetime(2024, 1, 1, 10, 0, 0, 500000)
    assert full_rs["arr"] == full_sp["arr"] == [1, 2]
    assert dict(full_rs["m"]) == full_sp["m"] == {"k": 1}
    assert full_rs["st"] == full_sp["st"] == {"a": 1, "b": "y"}
    for k in ("b", "s", "i", "l", "f", "d", "str", "bo", "dt"):
        assert full_rs[k] == full_sp[k], k
    assert full_rs["ts"].astimezone(dt.timezone.utc).replace(tzinfo=None) == \
        spark.sql("select to_utc_timestamp(timestamp'2024-01-01 10:00:00.123456', current_timezone()) t") \
        .collect()[0].t
    empty_rs = next(r for r in rs if r["i"] is None)
    assert all(v is None for v in empty_rs.values())


def test_written_table_reads_back_with_spark(spark, table):
    df = spark.range(0, 50).withColumn("p", (F.col("id") % 3).cast("int"))
    df.write.format("deltalog").partitionBy("p").save(str(table))
    back = spark.read.format("deltalog").load(str(table))
    assert sorted(r.id for r in back.collect()) == list(range(50))
    assert back.filter("p = 1").count() == len([i for i in range(50) if i % 3 == 1])
    assert sorted(r["id"] for r in rows_rs(table, "id")) == list(range(50))


def test_partitioned_layout_and_values(spark, table):
    rows = [(1, "a/b c", decimal.Decimal("0.05"), dt.date(2024, 2, 29)),
            (2, None, decimal.Decimal("10.00"), dt.date(2024, 3, 1)),
            (3, "", decimal.Decimal("10.00"), None)]
    df = spark.createDataFrame(rows, "id int, s string, d decimal(10,2), day date")
    df.write.format("deltalog").partitionBy("s", "d", "day").save(str(table))
    adds = of(log_actions(table, 0), "add")
    by_id = {}
    for a in adds:
        stats = json.loads(a["stats"])
        by_id[stats["minValues"]["id"]] = a
        assert set(stats["nullCount"]) == {"id"}, "partition columns have no stats"
    assert by_id[1]["partitionValues"] == {"s": "a/b c", "d": "0.05", "day": "2024-02-29"}
    assert by_id[2]["partitionValues"] == {"s": None, "d": "10.00", "day": "2024-03-01"}
    # the empty string is written as null (digest 7.6)
    assert by_id[3]["partitionValues"] == {"s": None, "d": "10.00", "day": None}
    assert by_id[1]["path"].startswith("s=a%252Fb%20c/d=0.05/day=2024-02-29/")
    assert by_id[2]["path"].startswith("s=__HIVE_DEFAULT_PARTITION__/")
    assert (table / "s=__HIVE_DEFAULT_PARTITION__").is_dir()
    assert commit_info(table, 0)["operationParameters"]["partitionBy"] == '["s","d","day"]'
    got = rows_rs(table, "id")
    assert [(r["id"], r["s"], r["d"], r["day"]) for r in got] == [
        (1, "a/b c", decimal.Decimal("0.05"), dt.date(2024, 2, 29)),
        (2, None, decimal.Decimal("10.00"), dt.date(2024, 3, 1)),
        (3, None, decimal.Decimal("10.00"), None)]


def test_negative_decimal_partition_value_is_plain(spark, table):
    df = spark.createDataFrame([(1, decimal.Decimal("-0.05")), (2, decimal.Decimal("-1E+2"))], "id int, d decimal(10,2)")
    df.write.format("deltalog").partitionBy("d").save(str(table))
    values = sorted(a["partitionValues"]["d"] for a in of(log_actions(table, 0), "add"))
    assert values == ["-0.05", "-100.00"]
    # (delta-rs 1.6 cannot parse negative decimal partition values, see peers.md H; read with Spark)
    back = spark.read.format("deltalog").load(str(table))
    assert sorted((r.id, r.d) for r in back.collect()) == [(1, decimal.Decimal("-0.05")),
                                                           (2, decimal.Decimal("-100.00"))]


def test_timestamp_partition_value_is_iso_utc(spark, table):
    df = spark.createDataFrame([(1, dt.datetime(2024, 1, 1, 10, 30, 0, 5))], "id int, ts timestamp")
    df.write.format("deltalog").partitionBy("ts").save(str(table))
    add = of(log_actions(table, 0), "add")[0]
    expected = spark.sql("select timestamp'2024-01-01 10:30:00.000005' as t").collect()[0].t
    utc = expected.astimezone(dt.timezone.utc) if expected.tzinfo else \
        expected.replace(tzinfo=None)
    assert add["partitionValues"]["ts"].endswith("Z")
    assert add["partitionValues"]["ts"][:10] == "2024-01-01" and add["partitionValues"]["ts"].endswith(".000005Z")
    assert rows_rs(table, "id")[0]["ts"] is not None and utc is not None


# ----------------------------------------------------------------------------- modes

def test_error_if_exists_and_ignore(spark, table):
    spark.range(3).write.format("deltalog").save(str(table))
    with pytest.raises(Exception) as e:
        spark.range(3).write.format("deltalog").mode("error").save(str(table))
    assert "DELTA_PATH_EXISTS" in error_text(e) and str(table) in error_text(e)
    spark.range(10).write.format("deltalog").mode("ignore").save(str(table))
    assert latest_version(table) == 0
    # ignore on a missing table creates it
    other = table.parent / "other"
    spark.range(2).write.format("deltalog").mode("ignore").save(str(other))
    assert commit_info(other, 0)["operationParameters"]["mode"] == "Ignore"
    assert len(rows_rs(other, "id")) == 2


def test_overwrite_removes_every_file(spark, table):
    spark.range(0, 10, numPartitions=2).write.format("deltalog").save(str(table))
    before = set(live_files(table))
    spark.range(100, 103).write.format("deltalog").mode("overwrite").save(str(table))
    actions = log_actions(table, 1)
    removes = of(actions, "remove")
    assert {r["path"] for r in removes} == before
    assert all(r["dataChange"] and r["extendedFileMetadata"] and r["deletionTimestamp"] > 0 for r in removes)
    ci = commit_info(table, 1)
    assert ci["operationParameters"]["mode"] == "Overwrite"
    assert ci["operationMetrics"]["numRemovedFiles"] == str(len(before))
    assert ci["isBlindAppend"] is False
    assert [r["id"] for r in rows_rs(table, "id")] == [100, 101, 102]


# ----------------------------------------------------------------------------- schema

def test_schema_enforcement_lists_mismatching_columns(spark, table):
    spark.createDataFrame([(1, "a")], "id long, s string").write.format("deltalog").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(1, 2, "x")], "id long, s int, extra string") \
            .write.format("deltalog").mode("append").save(str(table))
    msg = error_text(e)
    assert "DELTA_SCHEMA_MISMATCH" in msg and "s (table: string, data: int)" in msg and "extra" in msg
    assert str(table) in msg
    assert latest_version(table) == 0
    # a missing nullable column is fine and a narrower integer is cast up
    spark.createDataFrame([(2,)], "id int").write.format("deltalog").mode("append").save(str(table))
    assert [(r["id"], r["s"]) for r in rows_rs(table, "id")] == [(1, "a"), (2, None)]


def test_merge_schema_adds_columns(spark, table):
    spark.createDataFrame([(1, "a")], "id long, s string").write.format("deltalog").save(str(table))
    spark.createDataFrame([(2, "b", 2.5)], "id long, s string, extra double") \
        .write.format("deltalog").mode("append").option("mergeSchema", "true").save(str(table))
    meta = of(log_actions(table, 1), "metaData")[0]
    assert [f["name"] for f in json.loads(meta["schemaString"])["fields"]] == ["id", "s", "extra"]
    assert meta["id"] == of(log_actions(table, 0), "metaData")[0]["id"]
    got = rows_rs(table, "id")
    assert [(r["id"], r["extra"]) for r in got] == [(1, None), (2, 2.5)]


def test_overwrite_schema_replaces_schema_and_partitioning(spark, table):
    spark.createDataFrame([(1, "a")], "id long, s string").write.format("deltalog").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(1.0,)], "x double").write.format("deltalog").mode("overwrite").save(str(table))
    assert "DELTA_SCHEMA_MISMATCH" in error_text(e)
    spark.createDataFrame([(1.0, "p")], "x double, q string").write.format("deltalog").mode("overwrite") \
        .option("overwriteSchema", "true").partitionBy("q").save(str(table))
    meta = of(log_actions(table, 1), "metaData")[0]
    assert meta["partitionColumns"] == ["q"]
    assert [f["name"] for f in json.loads(meta["schemaString"])["fields"]] == ["x", "q"]
    assert [(r["x"], r["q"]) for r in rows_rs(table, "x")] == [(1.0, "p")]


def test_partition_by_mismatch_is_refused(spark, table):
    spark.createDataFrame([(1, "a")], "id long, s string").write.format("deltalog").partitionBy("s").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(1, "a")], "id long, s string").write.format("deltalog").mode("append") \
            .partitionBy("id").save(str(table))
    assert "DELTA_PARTITION_COLUMNS_MISMATCH" in error_text(e)


# ----------------------------------------------------------------------------- overwrite variants

def _partitioned(spark, table):
    df = spark.createDataFrame([(i, f"p{i % 3}") for i in range(9)], "id long, p string")
    df.write.format("deltalog").partitionBy("p").save(str(table))


def test_replace_where_on_partitions(spark, table):
    _partitioned(spark, table)
    spark.createDataFrame([(100, "p1")], "id long, p string").write.format("deltalog").mode("overwrite") \
        .option("replaceWhere", "p = 'p1'").save(str(table))
    actions = log_actions(table, 1)
    assert {r["partitionValues"]["p"] for r in of(actions, "remove")} == {"p1"}
    assert commit_info(table, 1)["operationParameters"]["predicate"] == '["p = \'p1\'"]'
    got = rows_rs(table, "id")
    assert sorted((r["id"], r["p"]) for r in got) == sorted(
        [(i, f"p{i % 3}") for i in range(9) if i % 3 != 1] + [(100, "p1")])


def test_replace_where_rows_must_match(spark, table):
    _partitioned(spark, table)
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(100, "p2")], "id long, p string").write.format("deltalog").mode("overwrite") \
            .option("replaceWhere", "p = 'p1'").save(str(table))
    msg = error_text(e)
    assert "DELTA_REPLACE_WHERE_MISMATCH" in msg and "p = p2" in msg
    assert latest_version(table) == 0


def test_replace_where_on_data_columns_rewrites_touched_files(spark, table):
    # two files: ids 0-4 and 5-9
    spark.range(0, 10, 1, 2).withColumn("v", F.col("id") * 10).write.format("deltalog").save(str(table))
    files = {json.loads(a["stats"])["minValues"]["id"]: a["path"] for a in of(log_actions(table, 0), "add")}
    spark.createDataFrame([(3, -1)], "id long, v long").write.format("deltalog").mode("overwrite") \
        .option("replaceWhere", "id >= 3 AND id < 5").save(str(table))
    got = rows_rs(table, "id")
    assert [(r["id"], r["v"]) for r in got] == [(i, i * 10) for i in (0, 1, 2)] + [(3, -1)] + \
        [(i, i * 10) for i in range(5, 10)]
    actions = log_actions(table, 1)
    # only the file holding matching rows is rewritten; its rows 0-2 are copied
    assert [r["path"] for r in of(actions, "remove")] == [files[0]]
    assert files[5] in live_files(table)
    assert sum(json.loads(a["stats"])["numRecords"] for a in of(actions, "add")) == 4


def test_replace_where_on_data_columns_keeps_deleted_rows_of_files_with_dvs(spark, table):
    """A file with a deletion vector is rewritten with its DV applied: rows deleted before stay deleted
    (found by the interop matrix: such files used to be refused)."""
    spark.range(0, 10, 1, 2).withColumn("v", F.col("id") * 10).write.format("deltalog") \
        .option("delta.enableDeletionVectors", "true").save(str(table))
    spark.sql(f"DELETE FROM deltalog.`{table}` WHERE id IN (1, 6)")
    assert any(a.get("deletionVector") for a in of(log_actions(table, 1), "add"))
    spark.createDataFrame([(3, -1)], "id long, v long").write.format("deltalog").mode("overwrite") \
        .option("replaceWhere", "id >= 3 AND id < 5").save(str(table))
    want = [(0, 0), (2, 20), (3, -1)] + [(i, i * 10) for i in (5, 7, 8, 9)]
    assert sorted((r["id"], r["v"]) for r in rows_rs_sql(table)) == want
    got = spark.read.format("deltalog").load(str(table)).orderBy("id").collect()
    assert [(r.id, r.v) for r in got] == want
    # the rewritten file (ids 0-4) is removed with its DV; the other one keeps its DV
    removed = of(log_actions(table, 2), "remove")
    assert len(removed) == 1 and removed[0].get("deletionVector")
    assert all(not a.get("deletionVector") for a in of(log_actions(table, 2), "add"))


def test_replace_where_rewrite_refused_on_row_tracking_tables(spark, table):
    """Copying a file's other rows would give them new row ids: refused until rewrites preserve them;
    a partition-only replaceWhere (whole files removed, nothing copied) still works."""
    df = spark.range(0, 6, 1, 1).withColumn("p", (F.col("id") % 2).cast("int"))
    df.write.format("deltalog").partitionBy("p").option("delta.enableRowTracking", "true").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(2, 0)], "id long, p int").write.format("deltalog").mode("overwrite") \
            .option("replaceWhere", "id = 2").save(str(table))
    assert "DELTA_REPLACE_WHERE_ROW_TRACKING" in error_text(e)
    assert latest_version(table) == 0
    spark.createDataFrame([(100, 0)], "id long, p int").write.format("deltalog").mode("overwrite") \
        .option("replaceWhere", "p = 0").save(str(table))
    assert [r["id"] for r in rows_rs(table, "id")] == [1, 3, 5, 100]


def test_replace_where_with_change_data_feed_writes_cdc_files(spark, table):
    spark.createDataFrame([(i, i * 10) for i in range(6)], "id long, v long").coalesce(1) \
        .write.format("deltalog").option("delta.enableChangeDataFeed", "true").save(str(table))
    assert of(log_actions(table, 0), "metaData")[0]["configuration"]["delta.enableChangeDataFeed"] == "true"
    spark.createDataFrame([(4, -4)], "id long, v long").write.format("deltalog").mode("overwrite") \
        .option("replaceWhere", "id >= 4").save(str(table))
    actions = log_actions(table, 1)
    cdcs = of(actions, "cdc")
    assert cdcs and all(c["path"].startswith("_change_data/") and c["dataChange"] is False for c in cdcs)
    import pyarrow.parquet as pq
    change = pq.ParquetDataset([str(table / c["path"]) for c in cdcs]).read().to_pylist()
    assert sorted((r["id"], r["v"], r["_change_type"]) for r in change) == [
        (4, -4, "insert"), (4, 40, "delete"), (5, 50, "delete")]
    assert [(r["id"], r["v"]) for r in rows_rs(table, "id")] == [(0, 0), (1, 10), (2, 20), (3, 30), (4, -4)]
    # a plain append needs no change files
    spark.createDataFrame([(9, 9)], "id long, v long").write.format("deltalog").mode("append").save(str(table))
    assert of(log_actions(table, 2), "cdc") == []


def test_dynamic_partition_overwrite(spark, table):
    _partitioned(spark, table)
    spark.createDataFrame([(100, "p0"), (101, "p9")], "id long, p string").write.format("deltalog") \
        .mode("overwrite").option("partitionOverwriteMode", "dynamic").save(str(table))
    removed = {r["partitionValues"]["p"] for r in of(log_actions(table, 1), "remove")}
    assert removed == {"p0"}
    got = sorted((r["id"], r["p"]) for r in rows_rs(table, "id"))
    assert got == sorted([(i, f"p{i % 3}") for i in range(9) if i % 3 != 0] + [(100, "p0"), (101, "p9")])


def test_dynamic_partition_overwrite_from_session_conf(spark, table):
    _partitioned(spark, table)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.createDataFrame([(100, "p2")], "id long, p string").write.format("deltalog") \
            .mode("overwrite").save(str(table))
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert {r["partitionValues"]["p"] for r in of(log_actions(table, 1), "remove")} == {"p2"}
    assert len(rows_rs(table, "id")) == 7


# ----------------------------------------------------------------------------- options

def test_user_metadata_from_option_and_session(spark, table):
    spark.range(1).write.format("deltalog").option("userMetadata", "from-option").save(str(table))
    assert commit_info(table, 0)["userMetadata"] == "from-option"
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "from-session")
    try:
        spark.range(1).write.format("deltalog").mode("append").save(str(table))
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    assert commit_info(table, 1)["userMetadata"] == "from-session"


def test_idempotent_writes_skip_applied_versions(spark, table):
    def write(version, n):
        spark.range(n).write.format("deltalog").mode("append").option("txnAppId", "app-1") \
            .option("txnVersion", str(version)).save(str(table))
    write(1, 2)
    assert of(log_actions(table, 0), "txn")[0]["appId"] == "app-1"
    assert of(log_actions(table, 0), "txn")[0]["version"] == 1
    write(1, 5)  # already applied: skipped
    write(0, 5)  # older: skipped
    assert latest_version(table) == 0 and len(rows_rs(table, "id")) == 2
    write(2, 3)
    assert latest_version(table) == 1 and len(rows_rs(table, "id")) == 5
    with pytest.raises(Exception) as e:
        spark.range(1).write.format("deltalog").mode("append").option("txnAppId", "x").save(str(table))
    assert "DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS" in error_text(e)


def test_data_change_false(spark, table):
    spark.range(4).write.format("deltalog").save(str(table))
    spark.read.format("deltalog").load(str(table)).coalesce(1).write.format("deltalog").mode("overwrite") \
        .option("dataChange", "false").save(str(table))
    actions = log_actions(table, 1)
    assert all(a["dataChange"] is False for a in of(actions, "add"))
    assert all(r["dataChange"] is False for r in of(actions, "remove"))
    assert sorted(r["id"] for r in rows_rs(table, "id")) == [0, 1, 2, 3]


def test_max_records_per_file(spark, table):
    spark.range(0, 10, numPartitions=1).write.format("deltalog").option("maxRecordsPerFile", "3").save(str(table))
    adds = of(log_actions(table, 0), "add")
    assert sorted(json.loads(a["stats"])["numRecords"] for a in adds) == [1, 3, 3, 3]
    assert commit_info(table, 0)["operationMetrics"]["numFiles"] == "4"


@pytest.mark.parametrize("option,value", [("maxRecordsPerFile", "ten"), ("dataChange", "maybe"),
                                          ("partitionOverwriteMode", "sometimes"), ("mergeSchema", "yes"),
                                          ("spark.sql.parquet.outputTimestampType", "INT95")])
def test_invalid_option_values_are_refused_before_writing(spark, table, option, value):
    with pytest.raises(Exception) as e:
        spark.range(3).write.format("deltalog").option(option, value).save(str(table))
    assert "DELTA_INVALID_WRITE_OPTION" in error_text(e) and option in error_text(e) and value in error_text(e)
    assert not (table / "_delta_log").exists()


def test_table_properties_on_creation(spark, table):
    spark.range(3).write.format("deltalog").option("delta.appendOnly", "true") \
        .option("delta.dataSkippingNumIndexedCols", "1").save(str(table))
    meta = of(log_actions(table, 0), "metaData")[0]
    assert meta["configuration"]["delta.appendOnly"] == "true"
    assert meta["configuration"]["delta.dataSkippingNumIndexedCols"] == "1"
    assert of(log_actions(table, 0), "protocol")[0]["minWriterVersion"] >= 2
    # session defaults for new tables apply too
    spark.conf.set("spark.databricks.delta.properties.defaults.enableChangeDataFeed", "true")
    try:
        spark.range(1).write.format("deltalog").save(str(table.parent / "t2"))
    finally:
        spark.conf.unset("spark.databricks.delta.properties.defaults.enableChangeDataFeed")
    meta2 = of(log_actions(table.parent / "t2", 0), "metaData")[0]
    assert meta2["configuration"]["delta.enableChangeDataFeed"] == "true"
    assert of(log_actions(table.parent / "t2", 0), "protocol")[0]["minWriterVersion"] >= 4


@pytest.mark.parametrize("prop,value,accepted", [
    ("delta.checkpointInterval", "0", "a positive integer"),
    ("delta.checkpointInterval", "abc", "a positive integer"),
    ("delta.logRetentionDuration", "interval 1 month", "Months and years are not accepted"),
    ("delta.deletedFileRetentionDuration", "soon", "calendar interval"),
    ("delta.appendOnly", "yes", "'true' or 'false'"),
    ("delta.columnMapping.mode", "position", "'none', 'id' or 'name'"),
    ("delta.dataSkippingNumIndexedCols", "-2", "an integer >= -1"),
])
def test_invalid_table_property_values_are_refused_before_writing(spark, table, prop, value, accepted):
    with pytest.raises(Exception) as e:
        spark.range(3).write.format("deltalog").option(prop, value).save(str(table))
    text = error_text(e)
    assert "DELTA_INVALID_TABLE_PROPERTY_VALUE" in text
    assert f"invalid value '{value}' for table property {prop}" in text and accepted in text
    assert str(table) in text
    assert not table.exists() or not any(table.rglob("*")), "nothing written"


def test_valid_table_property_values_are_used(spark, table):
    spark.range(3).write.format("deltalog").option("delta.checkpointInterval", "2") \
        .option("delta.logRetentionDuration", "interval 60 days").option("DELTA.ISOLATIONLEVEL", "WriteSerializable") \
        .save(str(table))
    conf = of(log_actions(table, 0), "metaData")[0]["configuration"]
    assert conf == {"delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 60 days",
                    "delta.isolationLevel": "WriteSerializable"}
    for _ in range(2):
        spark.range(1).write.format("deltalog").mode("append").save(str(table))
    assert (table / "_delta_log" / f"{2:020d}.checkpoint.parquet").exists(), "a checkpoint every 2 commits"
    assert commit_info(table, 1)["isolationLevel"] == "WriteSerializable"


def test_unknown_delta_property_refused_unless_allowed(spark, table):
    with pytest.raises(Exception) as e:
        spark.range(3).write.format("deltalog").option("delta.foo", "1").save(str(table))
    text = error_text(e)
    assert "DELTA_UNKNOWN_CONFIGURATION" in text and "delta.foo" in text
    assert "spark.databricks.delta.allowArbitraryProperties.enabled=true" in text
    assert not table.exists() or not any(table.rglob("*")), "nothing written"
    spark.conf.set("spark.databricks.delta.allowArbitraryProperties.enabled", "true")
    try:
        spark.range(3).write.format("deltalog").option("delta.foo", "1").save(str(table))
        # the escape hatch lets unknown names through, not invalid values of known ones
        with pytest.raises(Exception) as e2:
            spark.range(3).write.format("deltalog").option("delta.checkpointInterval", "0") \
                .save(str(table.parent / "t2"))
        assert "DELTA_INVALID_TABLE_PROPERTY_VALUE" in error_text(e2)
    finally:
        spark.conf.unset("spark.databricks.delta.allowArbitraryProperties.enabled")
    assert of(log_actions(table, 0), "metaData")[0]["configuration"] == {"delta.foo": "1"}
    assert sorted(r["id"] for r in rows_rs(table, "id")) == [0, 1, 2]


def test_odd_property_values_written_by_another_engine_still_take_appends(spark, table):
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
    odd = {"delta.checkpointInterval": "0", "delta.otherEngine.flag": "on", "delta.logRetentionDuration": "1 month"}
    create_table_log(table, schema, configuration=odd, writer_version=2)
    spark.range(3).write.format("deltalog").mode("append").save(str(table))
    spark.range(3, 5).write.format("deltalog").mode("append").option("mergeSchema", "true").save(str(table))
    assert latest_version(table) == 2
    assert of(log_actions(table, 2), "metaData") == []
    assert sorted(r["id"] for r in rows_rs(table, "id")) == [0, 1, 2, 3, 4]
    assert sorted(r.id for r in spark.read.format("deltalog").load(str(table)).collect()) == [0, 1, 2, 3, 4]


def test_row_tracking_and_in_commit_timestamps_from_the_transaction(spark, table):
    spark.range(0, 6, 1, 2).write.format("deltalog").option("delta.enableRowTracking", "true") \
        .option("delta.enableInCommitTimestamps", "true").save(str(table))
    spark.range(6, 9, 1, 1).write.format("deltalog").mode("append").save(str(table))
    adds = of(log_actions(table, 0), "add") + of(log_actions(table, 1), "add")
    # every add carries row ids that follow the numRecords of the stats
    spans = sorted((a["baseRowId"], json.loads(a["stats"])["numRecords"]) for a in adds)
    assert spans[0][0] == 0
    assert all(spans[i + 1][0] >= spans[i][0] + spans[i][1] for i in range(len(spans) - 1))
    assert [a["defaultRowCommitVersion"] for a in of(log_actions(table, 1), "add")] == [1]
    assert all("inCommitTimestamp" in commit_info(table, v) for v in (0, 1))
    assert sorted(r["id"] for r in rows_rs(table, "id")) == list(range(9))


# ----------------------------------------------------------------------------- stats details

def test_stats_truncation_nan_and_indexed_columns(spark, table):
    long_s = "x" * 40
    schema = "a double, s string, n struct<i: int, j: string>, z long"
    df = spark.createDataFrame([(1.0, long_s, (1, "q"), 5), (float("nan"), "b" * 33 + "\u00ff", (None, "r"), 6)],
                               schema).coalesce(1)
    df.write.format("deltalog").option("delta.dataSkippingNumIndexedCols", "3").save(str(table))
    stats = json.loads(of(log_actions(table, 0), "add")[0]["stats"])
    # NaN: no bounds for column a; strings truncated to 32 chars with a tie-breaker on the max
    assert "a" not in stats["minValues"] and "a" not in stats["maxValues"]
    assert stats["minValues"]["s"] == "b" * 32
    assert stats["maxValues"]["s"] == "x" * 32 + "\u007f"
    # 3 leaves: a, s, n.i (n.j and z are beyond the budget)
    assert stats["nullCount"] == {"a": 0, "s": 0, "n": {"i": 1}}
    assert stats["minValues"]["n"] == {"i": 1} and "z" not in stats["minValues"]


def test_filters_over_written_stats_never_lose_rows(spark, table):
    long_a = "k" * 40 + "a"
    long_b = "k" * 40 + "b"
    rows = [(1, float("nan"), long_a, dt.datetime(2024, 1, 1, 0, 0, 0, 999)),
            (2, 3.0, long_b, dt.datetime(2024, 1, 1, 0, 0, 0, 1999))]
    # one row per file, so data skipping decides per row
    for r in rows:
        spark.createDataFrame([r], "id int, x double, s string, ts timestamp").coalesce(1) \
            .write.format("deltalog").mode("append").save(str(table))
    df = spark.read.format("deltalog").load(str(table))
    ts = df.filter("id = 2").collect()[0].ts
    assert [r.id for r in df.filter("x > 5").collect()] == [1]  # NaN is above every number in Spark
    assert [r.id for r in df.filter(F.col("s") == long_b).collect()] == [2]
    assert [r.id for r in df.filter(F.col("s") > "k" * 40 + "a").collect()] == [2]
    assert [r.id for r in df.filter(F.col("ts") == F.lit(ts)).collect()] == [2]
    assert sorted(r.id for r in df.filter(F.col("ts") >= F.lit(ts)).collect()) == [2]


def test_stats_columns_property(spark, table):
    spark.createDataFrame([(1, 2, 3)], "a int, b int, c int").write.format("deltalog") \
        .option("delta.dataSkippingStatsColumns", "c,a").save(str(table))
    stats = json.loads(of(log_actions(table, 0), "add")[0]["stats"])
    assert stats["minValues"] == {"a": 1, "c": 3}


# ----------------------------------------------------------------------------- files and stats every reader gets right

@contextlib.contextmanager
def session_conf(spark, key: str, value: str):
    """`key` set to `value` in the session for the block, then unset (or restored)."""
    old = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if old is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, old)


def micros(s: str) -> int:
    """Microseconds since the epoch of a UTC wall-clock time (proleptic Gregorian, as Spark and Arrow)."""
    return (dt.datetime.fromisoformat(s) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)


EDGE_TIMESTAMPS = ["0001-01-01 00:00:00", "1500-06-01 00:00:00", "1970-01-01 00:00:00", "9999-12-31 23:59:59.999999"]


def _parquet_ts_column(path: Path, column: str):
    """The Parquet column chunk schema of `column` in the table's only data file."""
    import pyarrow.parquet as pq
    (add,) = live_files(path).values()
    schema = pq.ParquetFile(path / add["path"]).schema
    return schema.column(schema.names.index(column))


def _edge_timestamps(spark):
    values = ", ".join(f"({i}, timestamp'{t}')" for i, t in enumerate(EDGE_TIMESTAMPS))
    return spark.sql(f"select * from values {values} as v(id, ts)").coalesce(1)


def test_timestamps_are_int64_micros_that_every_reader_gets_right(spark, table):
    import pyarrow as pa
    expected = [micros(t) for t in EDGE_TIMESTAMPS]
    with session_conf(spark, "spark.sql.session.timeZone", "UTC"):
        _edge_timestamps(spark).write.format("deltalog").save(str(table))
        col = _parquet_ts_column(table, "ts")
        assert col.physical_type == "INT64"
        logical = json.loads(col.logical_type.to_json())
        assert (logical["Type"], logical["timeUnit"], logical["isAdjustedToUTC"]) == \
            ("Timestamp", "microseconds", True), logical
        # delta-rs: INT96 would come back as nanoseconds, wrapped or clamped outside 1677-2262
        got = deltalake.DeltaTable(str(table)).to_pyarrow_table().sort_by("id")
        assert got.schema.field("ts").type == pa.timestamp("us", tz="UTC")
        assert got.column("ts").cast(pa.int64()).to_pylist() == expected
        assert got.column("ts").to_pylist()[-1] == dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)
        back = spark.read.format("deltalog").load(str(table)).orderBy("id").selectExpr("unix_micros(ts) us").collect()
        assert [r.us for r in back] == expected


@pytest.mark.parametrize("how", ["session", "option"])
def test_explicit_output_timestamp_type_still_wins(spark, table, how):
    key = "spark.sql.parquet.outputTimestampType"
    with session_conf(spark, "spark.sql.session.timeZone", "UTC"):
        writer = _edge_timestamps(spark).write.format("deltalog")
        if how == "session":
            with session_conf(spark, key, "INT96"):
                writer.save(str(table))
        else:
            writer.option(key, "int96").save(str(table))
        assert _parquet_ts_column(table, "ts").physical_type == "INT96"
        # INT96 files (ours or anyone's) still read back exactly
        back = spark.read.format("deltalog").load(str(table)).orderBy("id").selectExpr("unix_micros(ts) us")
        assert [r.us for r in back.collect()] == [micros(t) for t in EDGE_TIMESTAMPS]
        # the next write without the setting is back to INT64 micros
        if how == "session":
            assert spark.conf.get(key, None) is None
        _edge_timestamps(spark).write.format("deltalog").mode("overwrite").save(str(table))
        assert _parquet_ts_column(table, "ts").physical_type == "INT64"


def _stats_text(path: Path, version: int) -> str:
    (add,) = of(log_actions(path, version), "add")
    return add["stats"]


def test_zero_bounds_are_signed_outward(spark, table):
    # one file whose zeros are all -0.0, one of +0.0 only; float and double, top level and nested
    for i, z in ((1, "-0.0"), (2, "0.0")):
        spark.sql(f"select {i} id, cast('{z}' as double) x, cast('{z}' as float) f, "
                  f"named_struct('y', cast('{z}' as double), 'g', cast('{z}' as float)) n") \
            .coalesce(1).write.format("deltalog").mode("append").save(str(table))
    for v in (0, 1):
        text = _stats_text(table, v)
        # checked on the JSON text: 0.0 and -0.0 compare equal as floats
        assert f'"minValues":{{"id":{v + 1},"x":-0.0,"f":-0.0,"n":{{"y":-0.0,"g":-0.0}}}}' in text, text
        assert f'"maxValues":{{"id":{v + 1},"x":0.0,"f":0.0,"n":{{"y":0.0,"g":0.0}}}}' in text, text
    # the -0.0 file really holds -0.0
    assert [math.copysign(1.0, r.x) for r in spark.read.format("deltalog").load(str(table)).orderBy("id")
            .collect()] == [-1.0, 1.0]
    # readers that order -0.0 below 0.0 when pruning (delta-rs) keep both files, both ways
    dt_ = deltalake.DeltaTable(str(table))
    for pred in ("x >= 0.0", "x <= -0.0", "f >= 0.0", "x = 0.0"):
        kept = dt_.to_pyarrow_dataset(file_pruning_predicate=pred).to_table()
        assert sorted(kept.column("id").to_pylist()) == [1, 2], pred
    assert sorted(r["id"] for r in dt_.to_pyarrow_table(filters=[("x", ">=", 0.0)]).to_pylist()) == [1, 2]
    for pred in ("x >= 0.0", "x = 0.0"):  # DataFusion prunes on the stats with the same order
        assert sorted(r["id"] for r in rows_rs_sql_where(table, pred)) == [1, 2], pred
    df = spark.read.format("deltalog").load(str(table))
    for pred in ("x >= 0.0", "x <= -0.0", "f >= 0.0", "x = 0.0", "n.y >= 0.0", "n.g <= -0.0"):
        assert sorted(r.id for r in df.filter(pred).collect()) == [1, 2], pred


def test_timestamp_max_stays_inside_the_range_and_skipping_keeps_it(spark, table):
    values = {1: "9999-12-31 23:59:59.999999", 2: "2024-01-01 00:00:00.0005"}
    with session_conf(spark, "spark.sql.session.timeZone", "UTC"):
        for i, t in values.items():
            spark.sql(f"select {i} id, timestamp'{t}' ts, timestamp_ntz'{t}' ntz").coalesce(1) \
                .write.format("deltalog").mode("append").save(str(table))
        for v, ms in ((0, "9999-12-31T23:59:59.999"), (1, "2024-01-01T00:00:00.000")):
            stats = json.loads(_stats_text(table, v))
            # truncated to the millisecond, min and max: a valid timestamp, never +10000-01-01
            assert stats["minValues"]["ts"] == stats["maxValues"]["ts"] == ms + "Z"
            assert stats["minValues"]["ntz"] == stats["maxValues"]["ntz"] == ms
        got = deltalake.DeltaTable(str(table)).to_pyarrow_table().sort_by("id")
        import pyarrow as pa
        assert got.column("ts").cast(pa.int64()).to_pylist() == [micros(values[1]), micros(values[2])]
        assert got.column("ntz").cast(pa.int64()).to_pylist() == [micros(values[1]), micros(values[2])]
        df = spark.read.format("deltalog").load(str(table))
        for i, t in values.items():
            for pred in (f"ts = timestamp'{t}'", f"ntz = timestamp_ntz'{t}'", f"ts >= timestamp'{t}' and id = {i}"):
                assert [r.id for r in df.filter(pred).collect()] == [i], pred
        # the widened max ends at the truncated millisecond's last microsecond: beyond it, the file is skipped
        assert df.filter("ts > timestamp'2024-01-01 00:00:00.000999' and ts < timestamp'2025-01-01'").collect() == []
        listing = spark._jvm.io.deltalog.spark.read.DeltalogFileIndex.lastListingFor(str(table))
        assert listing.filesAfterDataSkipping() == 0


# ----------------------------------------------------------------------------- rules

def test_not_null_including_nested(spark, table):
    schema = struct(field("id", "long", nullable=False),
                    field("s", struct(field("x", "integer", nullable=False)), nullable=True))
    create_table_log(table, schema)
    ok = spark.createDataFrame([(1, (2,)), (2, None)], "id long, s struct<x: int>")
    ok.write.format("deltalog").mode("append").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(None, (1,))], "id long, s struct<x: int>").write.format("deltalog") \
            .mode("append").save(str(table))
    assert "DELTA_NOT_NULL_CONSTRAINT_VIOLATED" in error_text(e) and "column id" in error_text(e)
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(3, (None,))], "id long, s struct<x: int>").write.format("deltalog") \
            .mode("append").save(str(table))
    assert "column s.x" in error_text(e)
    assert latest_version(table) == 1
    # (pyarrow refuses a null struct whose child is NOT NULL, so read back with Spark)
    back = spark.read.format("deltalog").load(str(table)).collect()
    assert sorted((r.id, r.s.x if r.s else None) for r in back) == [(1, 2), (2, None)]


def test_invariants_and_check_constraints(spark, table):
    inv = json.dumps({"expression": {"expression": "v > 0"}})
    schema = struct(field("id", "long"), field("v", "integer", metadata={"delta.invariants": inv}))
    create_table_log(table, schema, configuration={"delta.constraints.small_id": "id < 100"})
    spark.createDataFrame([(1, 5)], "id long, v int").write.format("deltalog").mode("append").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(2, -7)], "id long, v int").write.format("deltalog").mode("append").save(str(table))
    assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in error_text(e) and "v = -7" in error_text(e)
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(200, 1)], "id long, v int").write.format("deltalog").mode("append").save(str(table))
    assert "CHECK constraint small_id" in error_text(e) and "id = 200" in error_text(e)
    assert latest_version(table) == 1
    assert [r["id"] for r in rows_rs(table, "id")] == [1]
    # nothing of the failed writes is referenced; their files are deleted
    referenced = {table / p for p in live_files(table)}
    on_disk = {p for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}
    assert on_disk == referenced


def test_generated_columns(spark, table):
    schema = struct(field("a", "long"), field("b", "long", metadata={"delta.generationExpression": "a * 2"}))
    create_table_log(table, schema, writer_version=4)
    spark.createDataFrame([(1,), (2,)], "a long").write.format("deltalog").mode("append").save(str(table))
    spark.createDataFrame([(3, 6)], "a long, b long").write.format("deltalog").mode("append").save(str(table))
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(4, 9)], "a long, b long").write.format("deltalog").mode("append").save(str(table))
    assert "DELTA_GENERATED_COLUMN_MISMATCH" in error_text(e) and "b = 9" in error_text(e)
    assert [(r["a"], r["b"]) for r in rows_rs(table, "a")] == [(1, 2), (2, 4), (3, 6)]


def test_identity_columns(spark, table):
    schema = struct(field("id", "long", nullable=False,
                          metadata={"delta.identity.start": 10, "delta.identity.step": 5,
                                    "delta.identity.allowExplicitInsert": False}),
                    field("v", "string"))
    create_table_log(table, schema)
    spark.createDataFrame([("a",), ("b",), ("c",)], "v string").repartition(2) \
        .write.format("deltalog").mode("append").save(str(table))
    ids = [r["id"] for r in rows_rs(table, "id")]
    assert len(set(ids)) == 3 and all(i >= 10 and (i - 10) % 5 == 0 for i in ids)
    meta = of(log_actions(table, 1), "metaData")[0]
    id_field = json.loads(meta["schemaString"])["fields"][0]
    assert id_field["metadata"]["delta.identity.highWaterMark"] == max(ids)
    spark.createDataFrame([("d",)], "v string").write.format("deltalog").mode("append").save(str(table))
    ids2 = [r["id"] for r in rows_rs(table, "id")]
    assert len(set(ids2)) == 4 and max(ids2) > max(ids)
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(1, "x")], "id long, v string").write.format("deltalog").mode("append") \
            .save(str(table))
    assert "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED" in error_text(e)


def test_append_only_refuses_overwrite(spark, table):
    spark.range(3).write.format("deltalog").option("delta.appendOnly", "true").save(str(table))
    spark.range(3).write.format("deltalog").mode("append").save(str(table))
    with pytest.raises(Exception) as e:
        spark.range(3).write.format("deltalog").mode("overwrite").save(str(table))
    assert "DELTA_APPEND_ONLY_TABLE" in error_text(e)
    assert latest_version(table) == 1 and len(rows_rs(table, "id")) == 6


# ----------------------------------------------------------------------------- column mapping

@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_physical_names_and_field_ids(spark, table, mode):
    df = spark.createDataFrame([(1, "a", (2,)), (2, "b", (3,))], "id long, p string, s struct<x: int>")
    df.write.format("deltalog").option("delta.columnMapping.mode", mode).partitionBy("p").save(str(table))
    actions = log_actions(table, 0)
    meta = of(actions, "metaData")[0]
    fields = json.loads(meta["schemaString"])["fields"]
    phys = {f["name"]: f["metadata"]["delta.columnMapping.physicalName"] for f in fields}
    ids = {f["name"]: f["metadata"]["delta.columnMapping.id"] for f in fields}
    nested = fields[2]["type"]["fields"][0]["metadata"]
    assert all(p.startswith("col-") for p in phys.values())
    assert int(meta["configuration"]["delta.columnMapping.maxColumnId"]) == 4
    assert sorted(list(ids.values()) + [nested["delta.columnMapping.id"]]) == [1, 2, 3, 4]
    add = of(actions, "add")[0]
    assert set(add["partitionValues"]) == {phys["p"]}
    stats = json.loads(add["stats"])
    assert set(stats["nullCount"]) == {phys["id"], phys["s"]}
    assert stats["nullCount"][phys["s"]] == {nested["delta.columnMapping.physicalName"]: 0}
    import pyarrow.parquet as pq
    pq_schema = pq.read_schema(str(table / add["path"].replace("%20", " ")))
    assert pq_schema.names == [phys["id"], phys["s"]]
    assert int(pq_schema.field(phys["id"]).metadata[b"PARQUET:field_id"]) == ids["id"]
    back = spark.read.format("deltalog").load(str(table))
    assert sorted((r.id, r.p, r.s.x) for r in back.collect()) == [(1, "a", 2), (2, "b", 3)]
    # delta-rs: its pyarrow path reads column-mapped tables as nulls (peers.md H); its DataFusion
    # path resolves physical names and field ids
    assert sorted((r["id"], r["p"], r["s"]["x"]) for r in rows_rs_sql(table)) == [(1, "a", 2), (2, "b", 3)]
    # appending with a new column (mergeSchema) gives it the next id
    spark.createDataFrame([(3, "c", (4,), 1.0)], "id long, p string, s struct<x: int>, w double") \
        .write.format("deltalog").mode("append").option("mergeSchema", "true").save(str(table))
    meta1 = of(log_actions(table, 1), "metaData")[0]
    assert meta1["configuration"]["delta.columnMapping.maxColumnId"] == "5"
    w = json.loads(meta1["schemaString"])["fields"][3]
    assert w["metadata"]["delta.columnMapping.id"] == 5
    assert sorted((r["id"], r["w"]) for r in rows_rs_sql(table)) == [(1, None), (2, None), (3, 1.0)]


# ----------------------------------------------------------------------------- failures

def test_failed_task_commits_nothing(spark, table):
    spark.range(3).write.format("deltalog").save(str(table))
    bad = spark.range(0, 10, numPartitions=2).select(
        "id", F.when(F.col("id") == 7, F.raise_error(F.lit("boom"))).otherwise(F.lit(1)).alias("x"))
    with pytest.raises(Exception) as e:
        bad.write.format("deltalog").mode("append").option("mergeSchema", "true").save(str(table))
    assert "boom" in error_text(e)
    assert latest_version(table) == 0
    referenced = {table / p for p in live_files(table)}
    on_disk = {p for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}
    assert on_disk == referenced
