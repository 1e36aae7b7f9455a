"""The conformance corpus read through ``spark.read.format("deltalog")``.

Every manifest table with data present (and not must_fail) is read and compared with its
``expected/`` Parquet rows as a multiset, or with the manifest's row count where only that is
known. must_fail tables must raise a typed deltalog error. Tables this connector cannot pass are
listed in KNOWN_FAILURES with the reason (strict xfail: a fixed table makes the run fail until it
is removed from the list).
"""
from __future__ import annotations

import datetime as dt
import decimal
import glob
import json
import os

import pytest

from conftest import CONFORMANCE, java_error_classes

MANIFEST = json.loads((CONFORMANCE / "manifest.json").read_text())

# Zone-less timestamp partition values are read in the session time zone (delta-spark's rule);
# these tables were written by a Spark session in the given zone.
WRITER_TIME_ZONE = {
    "delta-kernel-rs/data-reader-partition-values": "America/Los_Angeles",
}

# Tables without expected/ data whose rows equal another entry's expected/ data (same data written
# with column mapping); their columns are compared with the twin's columns of the same names.
TWIN_EXPECTED = {
    "delta/data-reader-primitives-column-mapping-name": "delta-kernel-rs/data-reader-primitives/expected",
    "delta/data-reader-partition-values-column-mapping-name": "delta-kernel-rs/data-reader-partition-values/expected",
}
WRITER_TIME_ZONE["delta/data-reader-partition-values-column-mapping-name"] = "America/Los_Angeles"

# Tables whose read does not match (id -> reason). Each is an expected failure (strict).
KNOWN_FAILURES: dict = {}

LARGE = 20000  # above this many rows the multiset comparison runs inside Spark (exceptAll)


def _readable(t):
    return t["data_present"] and not t["must_fail"]


def _canon(v):
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    if isinstance(v, decimal.Decimal):
        return format(v.normalize(), "f") if v.is_finite() else str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return "{" + ",".join(sorted(f"{_canon(k)}:{_canon(x)}" for k, x in v.items())) + "}"
    if isinstance(v, (list, tuple)):  # Row is a tuple
        return "[" + ",".join(_canon(x) for x in v) + "]"
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    return repr(v)


def _rows(df):
    return sorted(_canon(tuple(r)) for r in df.collect())


def _param(t):
    marks = []
    if t["id"] in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[t["id"]], strict=True))
    return pytest.param(t, id=t["id"], marks=marks)


@pytest.fixture
def session_zone(spark, request):
    zone = WRITER_TIME_ZONE.get(request.node.callspec.params["table"]["id"], "UTC")
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    yield zone
    spark.conf.set("spark.sql.session.timeZone", old)


@pytest.mark.parametrize("table", [_param(t) for t in MANIFEST if _readable(t)])
def test_connector_reads_corpus_table(spark, table, session_zone):
    path = str(CONFORMANCE / table["table_path"])
    df = spark.read.format("deltalog").load(path)
    expected_path = table["expected_path"] or TWIN_EXPECTED.get(table["id"])
    if expected_path:
        files = sorted(glob.glob(os.path.join(str(CONFORMANCE / expected_path), "**", "*.parquet"),
                               recursive=True))
        assert files, f"no expected parquet under {expected_path}"
        expected = spark.read.parquet(*files)
        by_lower = {c.lower(): c for c in expected.columns}
        expected = expected.select(*[expected[f"`{by_lower[c.lower()]}`"] for c in df.columns])
        n = expected.count()
        assert df.count() == n
        if n > LARGE:
            assert df.exceptAll(expected).count() == 0
            assert expected.exceptAll(df).count() == 0
        else:
            assert _rows(df) == _rows(expected)
    else:
        # decode every column of every row (count() alone would not read any column)
        df.write.format("noop").mode("overwrite").save()
        if table["rows"] is not None:
            assert df.count() == table["rows"]


@pytest.mark.parametrize("table", [_param(t) for t in MANIFEST if t["must_fail"]])
def test_connector_refuses_must_fail_table(spark, table):
    path = str(CONFORMANCE / table["table_path"])
    with pytest.raises(Exception) as e:
        spark.read.format("deltalog").load(path).collect()
    classes = java_error_classes(e.value)
    assert "io.deltalog.exceptions.DeltalogException" in classes, f"untyped error: {e.value!r}"
    for feature in table["reader_features"]:
        if feature == "catalogOwned":  # the one unsupported reader feature of these entries
            assert feature in str(e.value)


# Tables without expected/ data that delta-rs 1.6 also reads: the connector's rows must equal
# delta-rs's (an independent engine). Left out: tables delta-rs refuses (deletion vectors, v2
# checkpoints, column mapping with reader features, variant shredding, type widening, catalog-managed,
# geometry, nanosecond edge timestamps) and column-mapping tables where delta-rs 1.6 returns nulls for
# every mapped column (delta/column-mapping-id, delta/data-reader-primitives-column-mapping-name,
# delta/data-reader-partition-values-column-mapping-name, delta-rs/table_with_column_mapping,
# delta-kernel-rs/cdf-column-mapping-{id,name}-mode, delta/table-with-icebegCompatV2Enabled); the second group is checked via TWIN_EXPECTED
# or ConnectorReadSuite instead.
DELTA_RS_COMPARABLE = [
    "delta-kernel-rs/app-txn-checkpoint", "delta-kernel-rs/app-txn-no-checkpoint", "delta-kernel-rs/basic_partitioned",
    "delta-kernel-rs/cdf-table-backtick-column-names", "delta-kernel-rs/cdf-table-data-change",
    "delta-kernel-rs/cdf-table-delete-conditional-two-rows", "delta-kernel-rs/cdf-table-partitioned",
    "delta-kernel-rs/cdf-table-update-ops", "delta-kernel-rs/external-table-different-nullability",
    "delta-kernel-rs/hive/deltatbl-column-names-case-insensitive", "delta-kernel-rs/hive/deltatbl-map-types-correctly",
    "delta-kernel-rs/hive/deltatbl-partition-prune", "delta-kernel-rs/hive/deltatbl-partitioned",
    "delta-kernel-rs/hive/deltatbl-special-chars-in-partition-column", "delta-kernel-rs/mixed-nulls",
    "delta-kernel-rs/parquet_row_group_skipping", "delta-kernel-rs/parsed-stats",
    "delta-kernel-rs/partitioned_with_materialize_feature", "delta-kernel-rs/table-without-dv-small",
    "delta-kernel-rs/timestamp-truncation-stats", "delta-kernel-rs/void-column", "delta-rs/cdc_ict_table",
    "delta-rs/cdf-table", "delta-rs/checkpoint-cdf-table", "delta-rs/delta-0.8.0", "delta-rs/delta-0.8.0-date",
    "delta-rs/delta-0.8.0-null-partition", "delta-rs/delta-0.8.0-numeric-partition", "delta-rs/delta-0.8.0-partitioned",
    "delta-rs/delta-0.8.0-special-partition", "delta-rs/delta-1.2.1-only-struct-stats",
    "delta-rs/delta-2.2.0-partitioned-types", "delta-rs/delta-checkpoint-stats-optional", "delta-rs/delta-stats-optional",
    "delta-rs/http_requests", "delta-rs/issue_1374", "delta-rs/partition-type-primitives",
    "delta-rs/python-0.25.5-checkpoint", "delta-rs/simple_table", "delta-rs/simple_table_with_checkpoint",
    "delta-rs/table_failed_last_checkpoint_update", "delta-rs/table_with_null_stats_in_notnull_struct",
    "delta/basic-with-checkpoint", "delta/delta-0.1.0", "delta/delta-0.2.0", "delta/delta-1.2.1",
    "delta/identity_test_written_by_version_5", "delta/kernel-pagination-multi-part-checkpoints",
    "delta/kernel-timestamp-partition-col-ISO8601",
    "delta/transaction_log_schema_evolvability",
]


def _canon_arrow(v):
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat()
    if isinstance(v, dict):
        return "{" + ",".join(sorted(f"{k}:{_canon_arrow(x)}" for k, x in v.items())) + "}"
    if isinstance(v, list) and v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # map
        return "map(" + ",".join(sorted(f"{_canon_arrow(k)}:{_canon_arrow(x)}" for k, x in v)) + ")"
    if isinstance(v, list):
        return "[" + ",".join(_canon_arrow(x) for x in v) + "]"
    return _canon(v)


def _arrow_rows(table, columns):
    cols = {c: table.column(c).to_pylist() for c in columns}
    return sorted(tuple(_canon_arrow(cols[c][i]) for c in columns) for i in range(table.num_rows))


@pytest.mark.parametrize("table_id", DELTA_RS_COMPARABLE)
def test_connector_matches_delta_rs(spark, table_id):
    import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it
    import pyarrow as pa
    table = next(t for t in MANIFEST if t["id"] == table_id)
    assert _readable(table) and not table["expected_path"]
    path = str(CONFORMANCE / table["table_path"])
    df = spark.read.format("deltalog").load(path)
    theirs = deltalake.DeltaTable(path).to_pyarrow_table()
    ours = pa.table(df.toArrow())
    assert _arrow_rows(ours, df.columns) == _arrow_rows(theirs, df.columns)


def test_pass_count_is_reported():
    readable = [t for t in MANIFEST if _readable(t)]
    print(f"\nconformance via connector: {len(readable) - len(KNOWN_FAILURES)} of {len(readable)} readable "
          f"tables expected to pass; {len(KNOWN_FAILURES)} known failures")
    assert not set(KNOWN_FAILURES) - {t["id"] for t in readable}
