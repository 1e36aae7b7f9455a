"""NaN-blind statistics (issue 25): delta-rs leaves NaN out of float/double min/max, in the Delta
stats and in its Parquet footers (for ``[1.0, NaN]`` min = max = 1.0), as the Parquet spec asks of
writers. Spark orders NaN above every number, so a reader trusting that max drops the NaN row for
``x > 1.5`` -- delta-spark does, and so did deltalog, twice: data skipping dropped the file, and
parquet-java's row-group filter dropped the row group. deltalog now trusts float/double upper
bounds only for files added by commits of writers known to count NaN (``engineInfo``
``Apache-Spark/...``, ``Databricks-Runtime/...``), and the table property / Spark conf
``deltalog.skipping.trustFloatMaxStats`` overrides that (``true``: as delta-spark, ``false``: never).

Every expected row set here is computed in Python under Spark's semantics (NaN = NaN, NaN above
every number, -0.0 = 0.0), independently of any engine.
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import deltalake

from deltalog.tables import DeltaTable

NAN = float("nan")


def _listing(spark, path):
    stats = spark._jvm.io.deltalog.spark.read.DeltalogFileIndex.lastListingFor(str(path))
    assert stats is not None, f"no listing recorded for {path}"
    return stats.totalFiles(), stats.filesAfterDataSkipping()


def _key(v):
    if v is None:
        return (0, 0.0)
    if isinstance(v, float) and math.isnan(v):
        return (2, 0.0)
    return (1, v + 0.0)  # -0.0 and 0.0 are one value in SQL


def _spark_lt(a, b):
    """a < b under Spark SQL's order (NaN above every number, equal to itself)."""
    return _key(a) < _key(b)


# (SQL predicate on x, Python predicate on a non-null value x under Spark semantics)
PREDICATES = [
    ("x > 1.5", lambda x: _spark_lt(1.5, x)),
    ("x >= 1.5", lambda x: not _spark_lt(x, 1.5)),
    ("NOT (x < 1.5)", lambda x: not _spark_lt(x, 1.5)),
    ("x = double('NaN')", lambda x: isinstance(x, float) and math.isnan(x)),
    ("x IN (double('NaN'), 7.0)", lambda x: (isinstance(x, float) and math.isnan(x)) or x == 7.0),
    ("x <> 1.0", lambda x: _key(x) != _key(1.0)),
    ("x < 1.5", lambda x: _spark_lt(x, 1.5)),
    ("x = 1.0", lambda x: _key(x) == _key(1.0)),
]


def _expected(rows, pred):
    return sorted((_key(x), i) for i, x in rows if x is not None and pred(x))


def _got(spark, path, sql, col="x"):
    df = spark.read.format("deltalog").load(str(path)).where(sql)
    return sorted((_key(r[col]), r["i"]) for r in df.collect())


def _write_delta_rs(path: Path, batches, dtype=pa.float64()):
    for n, rows in enumerate(batches):
        deltalake.write_deltalake(str(path), pa.table({"i": pa.array([i for i, _ in rows], pa.int64()),
                                                       "x": pa.array([x for _, x in rows], dtype)}),
                                  mode="append" if n else "error")


def _commit_info(path: Path, version: int) -> dict:
    for line in (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
        if line.startswith('{"commitInfo"'):
            return json.loads(line)["commitInfo"]
    raise AssertionError(f"no commitInfo in version {version}")


# Two files written by delta-rs: file 1 holds [1.0, NaN] (one row group), file 2 only 1.0.
BATCHES = [[(1, 1.0), (2, NAN)], [(3, 1.0), (4, -0.0)]]
ALL_ROWS = [r for b in BATCHES for r in b]


@pytest.fixture(scope="module")
def delta_rs_table(tmp_path_factory):
    path = tmp_path_factory.mktemp("nan") / "rs"
    _write_delta_rs(path, BATCHES)
    # the reproduction: delta-rs' own stats leave the NaN out of the max
    add = next(json.loads(l)["add"] for l in (path / "_delta_log" / f"{0:020d}.json").read_text().splitlines()
               if l.startswith('{"add"'))
    assert json.loads(add["stats"])["maxValues"]["x"] == 1.0
    assert _commit_info(path, 0)["engineInfo"].startswith("delta-rs")
    return path


@pytest.mark.parametrize("sql,pred", PREDICATES, ids=[p[0] for p in PREDICATES])
def test_nan_rows_of_a_delta_rs_table_survive_skipping_and_pushdown(spark, delta_rs_table, sql, pred):
    assert _got(spark, delta_rs_table, sql) == _expected(ALL_ROWS, pred), sql


def test_float_column_too(spark, tmp_path):
    path = tmp_path / "f32"
    _write_delta_rs(path, BATCHES, pa.float32())
    for sql, pred in PREDICATES[:5]:
        assert _got(spark, path, sql) == _expected(ALL_ROWS, pred), sql


def test_parquet_row_group_filter_alone(spark, tmp_path):
    """Without Delta stats for x, only parquet-java's row-group filter (on delta-rs' NaN-blind
    footer) can drop the row: the file must be read without float filters pushed down."""
    path = tmp_path / "nostats"
    _write_delta_rs(path, BATCHES)
    log = path / "_delta_log"
    for f in sorted(log.glob("*.json")):
        out = []
        for line in f.read_text().splitlines():
            a = json.loads(line)
            if "add" in a:
                st = json.loads(a["add"]["stats"])
                st = {"numRecords": st["numRecords"]}
                a["add"]["stats"] = json.dumps(st)
            out.append(json.dumps(a))
        f.write_text("\n".join(out) + "\n")
    assert _got(spark, path, "x > 1.5") == [(_key(NAN), 2)]
    assert _got(spark, path, "x = double('NaN')") == [(_key(NAN), 2)]


def test_spark_written_files_keep_float_max_skipping(spark, tmp_path):
    """Files added by deltalog (engineInfo Apache-Spark/...) are trusted: x > 1.5 skips the file
    whose max is 1.0, reading no commit for it; the delta-rs file of the same table is kept back."""
    path = tmp_path / "mixed"
    spark.createDataFrame([(10, 1.0), (11, 0.5)], "i long, x double").coalesce(1) \
        .write.format("deltalog").save(str(path))
    assert _commit_info(path, 0)["engineInfo"].startswith("Apache-Spark/")
    got = _got(spark, path, "x > 1.5")
    assert got == [] and _listing(spark, path) == (1, 0)
    # delta-rs appends [1.0, NaN]: that file alone comes back
    deltalake.write_deltalake(str(path), pa.table({"i": pa.array([12, 13], pa.int64()), "x": [1.0, NAN]}),
                              mode="append")
    assert _got(spark, path, "x > 1.5") == [(_key(NAN), 13)]
    assert _listing(spark, path) == (2, 1)
    # deltalog appends a file whose max is 1.0 again: still skipped
    spark.createDataFrame([(14, 0.25)], "i long, x double").write.format("deltalog").mode("append").save(str(path))
    assert _got(spark, path, "x > 1.5") == [(_key(NAN), 13)]
    assert _listing(spark, path) == (3, 1)


def test_trust_setting(spark, tmp_path):
    path = tmp_path / "prop"
    _write_delta_rs(path, BATCHES)
    key = "spark.deltalog.skipping.trustFloatMaxStats"
    try:
        # "true": every max is trusted, as delta-spark does -- and the NaN row is lost, which is
        # why it is not the default
        spark.conf.set(key, "true")
        assert _got(spark, path, "x > 1.5") == []
        spark.conf.set(key, "false")
        assert _got(spark, path, "x > 1.5") == [(_key(NAN), 2)]
        spark.conf.set(key, "sometimes")
        with pytest.raises(Exception, match="trustFloatMaxStats"):
            _got(spark, path, "x > 1.5")
    finally:
        spark.conf.unset(key)
    # the table property (ALTER TABLE ... SET TBLPROPERTIES, one commit) wins over the session
    t = tmp_path / "prop2"
    spark.createDataFrame([(1, 1.0)], "i long, x double").write.format("deltalog").save(str(t))
    name = f"deltalog.`{t}`"
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('deltalog.skipping.trustFloatMaxStats' = 'false')")
    spark.read.format("deltalog").load(str(t)).where("x > 1.5").collect()
    assert _listing(spark, t) == (1, 1)  # the file is read: its max is not trusted
    with pytest.raises(Exception, match="DELTA_INVALID_TABLE_PROPERTY_VALUE"):
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('deltalog.skipping.trustFloatMaxStats' = 'maybe')")


def test_history_cleaned_up_after_a_checkpoint(spark, tmp_path):
    """Commits removed by log cleanup leave files of unknown writer: with a NaN-blind writer among
    the retained commits every file is treated as NaN-blind; with only Spark writers, none is."""
    rs = tmp_path / "rs"
    _write_delta_rs(rs, BATCHES + [[(5, 0.0)]])
    deltalake.DeltaTable(str(rs)).create_checkpoint()
    (rs / "_delta_log" / f"{0:020d}.json").unlink()
    (rs / "_delta_log" / f"{1:020d}.json").unlink()
    assert _got(spark, rs, "x > 1.5") == [(_key(NAN), 2)]

    sp = tmp_path / "spark"
    spark.createDataFrame([(1, 1.0)], "i long, x double").write.format("deltalog").save(str(sp))
    spark.createDataFrame([(2, 0.5)], "i long, x double").write.format("deltalog").mode("append").save(str(sp))
    DeltaTable.forPath(spark, str(sp)).checkpoint()
    for v in (0, 1):
        (sp / "_delta_log" / f"{v:020d}.json").unlink()
    spark.createDataFrame([(3, 0.25)], "i long, x double").write.format("deltalog").mode("append").save(str(sp))
    DeltaTable.clearCache(spark)
    assert _got(spark, sp, "x > 1.5") == []
    assert _listing(spark, sp) == (3, 0)  # every max trusted: all three files skipped


def test_table_deleted_and_recreated_at_the_same_path(spark, tmp_path):
    """The writers of a path's commits are remembered per table (metaData.id): a table deleted and
    re-created by delta-rs at the same path is not judged by the old table's commits."""
    path = tmp_path / "again"
    for i in range(3):
        spark.createDataFrame([(i, 1.0)], "i long, x double").write.format("deltalog").mode("append").save(str(path))
    assert _got(spark, path, "x > 1.5") == []  # every commit by deltalog: the max is trusted, files skipped
    shutil.rmtree(path)
    _write_delta_rs(path, [[(7, 1.0), (8, NAN)]])
    assert _got(spark, path, "x > 1.5") == [(_key(NAN), 8)]
