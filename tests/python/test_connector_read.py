"""spark.read.format("deltalog"): tables written by delta-rs, compared with delta-rs's own reads.

Pruning / skipping file counts are asserted against what the written stats imply, through the
file index's ``lastListing`` and Spark's "number of files read" metric.
"""
from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pytest

import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it
import conformance_corpus  # noqa: E402
from conftest import java_error_classes  # noqa: E402
from deltalog.exceptions import InvalidReadOptionError, TableNotFoundError  # noqa: E402
from pyspark.errors import AnalysisException  # noqa: E402
from deltalake import DeltaTable, write_deltalake  # noqa: E402


def _read(spark, path, **options):
    return spark.read.format("deltalog").options(**options).load(str(path))


def _canon(v):
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    if isinstance(v, decimal.Decimal):
        return format(v.normalize(), "f")
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:  # Spark gives session-zone naive datetimes for TIMESTAMP
            return v.isoformat()
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat()
    if isinstance(v, dict):
        return "{" + ",".join(sorted(f"{_canon(k)}:{_canon(x)}" for k, x in v.items())) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_canon(x) for x in v) + "]"
    return repr(v)


def _rows_spark(df):
    return sorted(tuple(_canon(r[c]) for c in df.columns) for r in df.collect())


def _rows_arrow(table: pa.Table, columns):
    cols = {c: table.column(c).to_pylist() for c in columns}
    return sorted(tuple(_canon(cols[c][i]) for c in columns) for i in range(table.num_rows))


def _listing(spark, path):
    stats = spark._jvm.io.deltalog.spark.read.DeltalogFileIndex.lastListingFor(str(path))
    assert stats is not None, f"no listing recorded for {path}"
    return stats.totalFiles(), stats.filesAfterPartitionPruning(), stats.filesAfterDataSkipping()


@pytest.fixture(scope="module", autouse=True)
def _utc(spark):
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield
    spark.conf.set("spark.sql.session.timeZone", old)


@pytest.fixture(scope="module")
def three_files(tmp_path_factory):
    """Three appends of ids 0-9, 10-19, 20-29 (one file each, stats by delta-rs)."""
    path = tmp_path_factory.mktemp("three_files") / "t"
    for lo in (0, 10, 20):
        ids = list(range(lo, lo + 10))
        data = pa.table({"id": pa.array(ids, pa.int64()),
                         "name": pa.array([f"n{i:02d}" for i in ids]),
                         "score": pa.array([None if i % 10 == 0 else float(i) for i in ids], pa.float64())})
        write_deltalake(str(path), data, mode="append")
    return path


def test_full_read_matches_delta_rs(spark, three_files):
    df = _read(spark, three_files)
    assert df.columns == ["id", "name", "score"]
    expected = DeltaTable(str(three_files)).to_pyarrow_table()
    assert _rows_spark(df) == _rows_arrow(expected, df.columns)
    assert _listing(spark, three_files) == (3, 3, 3)


@pytest.mark.parametrize("predicate, files, rows", [
    ("id > 15", 2, 14),
    ("id = 5", 1, 1),
    ("id >= 29", 1, 1),
    ("id < 0", 0, 0),
    ("id in (3, 25)", 2, 2),
    ("id is null", 0, 0),
    ("score is null", 3, 3),
    ("name like 'n1%'", 1, 10),
    ("name = 'n10' or id = 29", 2, 2),
    ("not (id >= 10)", 1, 10),
    ("id + 1 = 3", 3, 1),  # not usable for skipping: every file is kept
])
def test_data_skipping_counts(spark, three_files, predicate, files, rows):
    df = _read(spark, three_files).where(predicate)
    assert df.count() == rows
    assert _listing(spark, three_files) == (3, 3, files)


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory):
    """Partitioned by (p string, k int) with a null partition; one file per partition."""
    path = tmp_path_factory.mktemp("partitioned") / "t"
    data = pa.table({
        "v": pa.array(range(8), pa.int64()),
        "p": pa.array(["a", "a", "b", "b", "c", "c", None, None]),
        "k": pa.array([1, 2, 1, 2, 1, 1, 1, 1], pa.int32()),
        "w": pa.array([f"w{i}" for i in range(8)]),
    })
    write_deltalake(str(path), data, partition_by=["p", "k"])
    return path


def test_partitioned_read_keeps_schema_order(spark, partitioned):
    df = _read(spark, partitioned)
    assert df.columns == ["v", "p", "k", "w"]
    expected = DeltaTable(str(partitioned)).to_pyarrow_table()
    assert _rows_spark(df) == _rows_arrow(expected, df.columns)


@pytest.mark.parametrize("predicate, after_pruning, rows", [
    ("p = 'a'", 2, 2),
    ("p = 'a' and k = 2", 1, 1),
    ("k = 1", 4, 6),
    ("p is null", 1, 2),
    ("p is not null and k > 1", 2, 2),
    ("p in ('b', 'c')", 3, 4),
    ("p > 'z'", 0, 0),
])
def test_partition_pruning_counts(spark, partitioned, predicate, after_pruning, rows):
    df = _read(spark, partitioned).where(predicate)
    assert df.count() == rows
    total, pruned, read = _listing(spark, partitioned)
    assert (total, pruned, read) == (6, after_pruning, after_pruning)


def test_typed_partition_columns(spark, tmp_path):
    path = tmp_path / "typed"
    data = pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "d": pa.array([dt.date(2020, 1, 1), dt.date(2021, 6, 30), None], pa.date32()),
        "b": pa.array([True, False, None]),
        "n": pa.array([decimal.Decimal("1.50"), decimal.Decimal("2.25"), None], pa.decimal128(10, 2)),
        "l": pa.array([10, None, 30], pa.int64()),
        "ts": pa.array([dt.datetime(2020, 1, 1, 12, 30, 15, 123456), dt.datetime(1999, 12, 31, 23, 59, 59), None],
                       pa.timestamp("us", tz="UTC")),
    })
    write_deltalake(str(path), data, partition_by=["d", "b", "n", "l", "ts"])
    df = _read(spark, path)
    expected = DeltaTable(str(path)).to_pyarrow_table()
    assert _rows_spark(df) == _rows_arrow(expected, df.columns)
    assert df.where("d = date'2021-06-30'").count() == 1
    assert _listing(spark, path) == (3, 1, 1)
    assert df.where("ts > timestamp'2000-01-01 00:00:00'").select("id").collect()[0][0] == 1
    assert df.where("n > 2").select("id").collect()[0][0] == 2  # (delta-rs cannot write negative decimal partitions)


def test_time_travel(spark, tmp_path):
    path = tmp_path / "tt"
    write_deltalake(str(path), pa.table({"x": pa.array([1, 2], pa.int64())}))
    write_deltalake(str(path), pa.table({"x": pa.array([3], pa.int64())}), mode="append")
    write_deltalake(str(path), pa.table({"x": pa.array([9], pa.int64())}), mode="overwrite")
    assert sorted(r.x for r in _read(spark, path).collect()) == [9]
    assert sorted(r.x for r in _read(spark, path, versionAsOf="1").collect()) == [1, 2, 3]
    assert sorted(r.x for r in spark.read.format("deltalog").load(f"{path}@v0").collect()) == [1, 2]
    with pytest.raises(InvalidReadOptionError) as e:
        _read(spark, path, versionAsOf="0", timestampAsOf="2020-01-01").collect()
    assert "io.deltalog.spark.read.InvalidReadOptionException" in java_error_classes(e.value)


def test_non_delta_path_is_a_typed_error(spark, tmp_path):
    with pytest.raises(TableNotFoundError) as e:  # also a pyspark AnalysisException
        _read(spark, tmp_path).collect()
    assert isinstance(e.value, AnalysisException) and e.value.errorClass == "DELTA_TABLE_NOT_FOUND"
    assert "io.deltalog.exceptions.TableNotFoundException" in java_error_classes(e.value)
    assert str(tmp_path) in str(e.value)


def test_schema_evolution_reads_missing_columns_as_null(spark, tmp_path):
    path = tmp_path / "evolve"
    write_deltalake(str(path), pa.table({"a": pa.array([1], pa.int64())}))
    write_deltalake(str(path), pa.table({"a": pa.array([2], pa.int64()), "b": pa.array(["x"])}),
                    mode="append", schema_mode="merge")
    rows = sorted((r.a, r.b) for r in _read(spark, path).collect())
    assert rows == [(1, None), (2, "x")]


# ------------------------------------------------------------------------------- change data feed

CONFORMANCE = str(conformance_corpus.CONFORMANCE)

# Corpus CDF tables whose feed delta-rs (load_cdf) reads too.
CDF_TABLES = [
    "delta-rs/cdf-table",
    "delta-rs/cdf-table-non-partitioned",
    "delta-rs/cdf-table-with-cdc-and-dvs",
    "delta-rs/cdc_ict_table",
    "delta-rs/simple_table_with_cdc",
    "delta-kernel-rs/cdf-table-with-dv",
    "delta-kernel-rs/compacted-log-files-table",
    "delta/commit-info-containing-arbitrary-operationParams-types",
]


def _cdf(spark, path, **options):
    return spark.read.format("deltalog").option("readChangeFeed", "true").options(**options).load(str(path))


def _delta_rs_cdf(path, columns, **kwargs):
    table = pa.table(DeltaTable(str(path)).load_cdf(**kwargs).read_all())
    return _rows_arrow(table, columns)


@pytest.mark.parametrize("rel", CDF_TABLES)
def test_change_feed_matches_delta_rs(spark, rel):
    path = os.path.join(CONFORMANCE, rel)
    df = _cdf(spark, path, startingVersion="0")
    columns = [c for c in df.columns if c != "_commit_timestamp"]
    ours = _rows_spark(df.select(*[f"`{c}`" for c in columns]))
    assert ours == _delta_rs_cdf(path, columns, starting_version=0)
    assert len(ours) > 0


def test_change_feed_of_a_delta_rs_table(spark, tmp_path):
    path = tmp_path / "cdf"
    conf = {"delta.enableChangeDataFeed": "true"}
    write_deltalake(str(path), pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array(["a", "b", "c"])}),
                    configuration=conf)
    write_deltalake(str(path), pa.table({"id": pa.array([4], pa.int64()), "v": pa.array(["d"])}), mode="append")
    dt_ = DeltaTable(str(path))
    dt_.delete("id = 2")
    dt_.update(updates={"v": "'z'"}, predicate="id = 3")
    df = _cdf(spark, path, startingVersion="0")
    columns = ["id", "v", "_change_type", "_commit_version"]
    assert _rows_spark(df.select(*columns)) == _delta_rs_cdf(path, columns, starting_version=0)
    kinds = {r._change_type for r in df.collect()}
    assert kinds == {"insert", "delete", "update_preimage", "update_postimage"}
    # _commit_timestamp is the commit file's modification time (no in-commit timestamps here)
    for r in df.select("_commit_version", "_commit_timestamp").distinct().collect():
        mtime_ms = os.stat(path / "_delta_log" / f"{r[0]:020d}.json").st_mtime_ns // 1_000_000
        ts = r[1].replace(tzinfo=dt.timezone.utc)
        assert int(ts.timestamp() * 1000) == mtime_ms
    # a version range
    some = _cdf(spark, path, startingVersion="2", endingVersion="2")
    assert {(r.id, r._change_type) for r in some.collect()} == {(2, "delete")}


def test_change_feed_by_timestamps(spark, tmp_path):
    path = tmp_path / "cdf_ts"
    conf = {"delta.enableChangeDataFeed": "true"}
    for i in range(3):
        write_deltalake(str(path), pa.table({"id": pa.array([i], pa.int64())}), mode="append", configuration=conf)
    base = 1_700_000_000  # seconds; commits at base, base+100, base+200
    for v in range(3):
        f = path / "_delta_log" / f"{v:020d}.json"
        os.utime(f, (base + 100 * v, base + 100 * v))
    fmt = lambda s: dt.datetime.fromtimestamp(s, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    df = _cdf(spark, path, startingTimestamp=fmt(base + 50), endingTimestamp=fmt(base + 150))
    assert [(r.id, r._commit_version) for r in df.collect()] == [(1, 1)]
    df = _cdf(spark, path, startingTimestamp=fmt(base + 100))
    assert sorted(r._commit_version for r in df.collect()) == [1, 2]
    with pytest.raises(InvalidReadOptionError) as e:
        _cdf(spark, path).collect()
    assert "io.deltalog.spark.read.InvalidReadOptionException" in java_error_classes(e.value)


@pytest.mark.parametrize("sql_type", ["double", "float"])
def test_negative_zero_survives_parquet_pushdown(spark, tmp_path, sql_type):
    """A dictionary-encoded file whose zeros are all -0.0 (and one with only +0.0): parquet-java's
    dictionary and row-group filters order -0.0 below +0.0, SQL says they are equal. Every query keeps
    every row SQL keeps (delta-spark loses the -0.0 rows for the first four)."""
    from pyspark.sql import functions as F
    neg, pos = tmp_path / "neg", tmp_path / "pos"
    spark.range(500).select(F.lit(-0.0).cast(sql_type).alias("x")).coalesce(1).write.format("deltalog").save(str(neg))
    spark.range(500).select(F.lit(0.0).cast(sql_type).alias("x")).coalesce(1).write.format("deltalog").save(str(pos))
    import pyarrow.parquet as pq
    neg_file = next(neg.glob("*.parquet"))
    assert "PLAIN_DICTIONARY" in pq.ParquetFile(neg_file).metadata.row_group(0).column(0).encodings \
        or "RLE_DICTIONARY" in pq.ParquetFile(neg_file).metadata.row_group(0).column(0).encodings
    keep_all = ["x >= 0.0", "x = 0.0", "x IN (0.0, 7.0)", "NOT (x < 0.0)", "x <= -0.0", "x <=> 0.0",
                "x >= -0.0 AND x <= 0.0", "NOT (x > 0.0)"]
    keep_none = ["x > 0.0", "x < 0.0", "x < -0.0", "x > -0.0", "NOT (x = 0.0)", "x IN (7.0)"]
    for table in (neg, pos):
        df = spark.read.format("deltalog").load(str(table))
        for cond in keep_all:
            assert df.filter(cond).count() == 500, (table.name, cond)
        for cond in keep_none:
            assert df.filter(cond).count() == 0, (table.name, cond)


def test_column_mapping_id_that_is_not_an_integer_is_a_typed_error(spark, tmp_path):
    """A schema whose delta.columnMapping.id is a string (a buggy writer's) raises
    DELTA_INVALID_COLUMN_MAPPING naming the column, not a ClassCastException."""
    import json as _json
    path = tmp_path / "badid"
    (path / "_delta_log").mkdir(parents=True)
    field = {"name": "x", "type": "long", "nullable": True,
             "metadata": {"delta.columnMapping.id": "1", "delta.columnMapping.physicalName": "col-x"}}
    lines = [{"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}},
             {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}},
                           "schemaString": _json.dumps({"type": "struct", "fields": [field]}),
                           "partitionColumns": [], "configuration": {"delta.columnMapping.mode": "id"},
                           "createdTime": 0}}]
    (path / "_delta_log" / f"{0:020d}.json").write_text("".join(_json.dumps(l) + "\n" for l in lines))
    with pytest.raises(Exception, match="DELTA_INVALID_COLUMN_MAPPING") as e:
        spark.read.format("deltalog").load(str(path)).collect()
    assert "ClassCastException" not in str(e.value)[:300]
