"""Conflict detection of DELETE / UPDATE / MERGE with recorded data predicates (issue 27).

A competing commit lands between the statement's read and its commit (the engine's one-shot test
hook). The statement records the target-side conjuncts of its condition; under Serializable an
appended file conflicts (``ConcurrentAppendException``, ``DELTA_CONCURRENT_APPEND``) only when its
partition values and stats (min / max / nullCount) may hold a row the condition selects; otherwise
the statement commits at the next version and the appended rows stay as they were written.
"""
from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

ROWS = [(i, f"n{i}", i % 2) for i in range(20)]


def create(spark, path: Path, props: str = "", partitioned: bool = False) -> None:
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING, p INT) USING deltalog "
              f"{'PARTITIONED BY (p)' if partitioned else ''} {props}")
    for chunk in (ROWS[:10], ROWS[10:]):
        spark.sql(f"INSERT INTO {t} VALUES " + ", ".join(f"({i}, '{n}', {p})" for i, n, p in chunk))


def rows(spark, path: Path) -> list:
    return sorted(tuple(r) for r in spark.read.format("deltalog").load(str(path)).select("id", "name", "p").collect())


def version_of(path: Path) -> int:
    return len(glob.glob(str(path / "_delta_log" / "*.json"))) - 1


def commit_info(path: Path, version: int) -> dict:
    lines = (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    return next(json.loads(x)["commitInfo"] for x in lines if "commitInfo" in x)


@pytest.fixture
def hook(spark):
    from deltalog._jvm import api_class
    api = api_class(spark, "DmlApi")
    yield lambda sql: api.runSqlBeforeNextDeleteCommit(spark._jsparkSession, sql)
    # a hook a statement that committed nothing did not take must not reach the next test
    spark._jvm.io.deltalog.commands.DeleteCommand.setBeforeCommitHook(None)


def expect_conflict(fn) -> None:
    from deltalog.exceptions import ConcurrentAppendException
    with pytest.raises(ConcurrentAppendException) as e:
        fn()
    assert e.value.errorClass == "DELTA_CONCURRENT_APPEND"


def assert_committed_after(path: Path, v: int, operation: str) -> None:
    """The append landed at v + 1, the statement at v + 2 with the read version v."""
    assert version_of(path) == v + 2
    ci = commit_info(path, v + 2)
    assert ci["operation"] == operation and ci["readVersion"] == v
    assert commit_info(path, v + 1)["operation"] == "WRITE"


def test_delete_commits_past_an_append_outside_its_predicate(spark, tmp_path, hook):
    from deltalog.tables import DeltaTable
    t = tmp_path / "t"
    create(spark, t)
    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (2, 'late', 0), (3, 'late', 1)")
    out = DeltaTable.forPath(spark, str(t)).delete("id > 15")
    assert [tuple(r) for r in out.collect()] == [(4,)]
    assert_committed_after(t, v, "DELETE")
    assert rows(spark, t) == sorted([r for r in ROWS if r[0] <= 15] + [(2, "late", 0), (3, "late", 1)])

    # a row the predicate selects: conflict, nothing of the DELETE is committed
    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (16, 'late', 0)")
    expect_conflict(lambda: DeltaTable.forPath(spark, str(t)).delete("id > 14"))
    assert version_of(t) == v + 1
    assert (16, "late", 0) in rows(spark, t)


def test_update_and_sql_delete_use_the_predicate(spark, tmp_path, hook):
    t = tmp_path / "t"
    create(spark, t)
    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (50, 'late', 0)")
    assert spark.sql(f"UPDATE deltalog.`{t}` SET name = 'u' WHERE id < 3").collect()[0][0] == 3
    assert_committed_after(t, v, "UPDATE")
    got = rows(spark, t)
    assert (50, "late", 0) in got and [r for r in got if r[1] == "u"] == [(0, "u", 0), (1, "u", 1), (2, "u", 0)]

    hook(f"INSERT INTO deltalog.`{t}` VALUES (1, 'late', 1)")
    expect_conflict(lambda: spark.sql(f"UPDATE deltalog.`{t}` SET name = 'v' WHERE id < 3").collect())

    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (60, 'late', 0)")
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id BETWEEN 4 AND 6 OR name = 'n7'").collect()
    assert_committed_after(t, v, "DELETE")
    hook(f"INSERT INTO deltalog.`{t}` VALUES (8, 'x', 0)")
    expect_conflict(lambda: spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id BETWEEN 8 AND 9").collect())


def test_merge_records_the_target_only_conjuncts(spark, tmp_path, hook):
    from deltalog.tables import DeltaTable
    t = tmp_path / "t"
    create(spark, t)
    src = spark.createDataFrame([(1, "m1", 1), (2, "m2", 0), (30, "m30", 0)], "id BIGINT, name STRING, p INT")
    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (50, 'late', 0)")
    (DeltaTable.forPath(spark, str(t)).alias("t").merge(src.alias("s"), "t.id = s.id AND t.id < 10")
     .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    assert_committed_after(t, v, "MERGE")
    got = rows(spark, t)
    assert (50, "late", 0) in got and (1, "m1", 1) in got and (2, "m2", 0) in got and (30, "m30", 0) in got

    # a row that could match the source under the condition: conflict
    hook(f"INSERT INTO deltalog.`{t}` VALUES (8, 'late', 0)")
    expect_conflict(lambda: DeltaTable.forPath(spark, str(t)).alias("t").merge(
        src.alias("s"), "t.id = s.id AND t.id < 10").whenMatchedDelete().execute())

    # no target-only conjunct: every append could match a source row
    hook(f"INSERT INTO deltalog.`{t}` VALUES (99, 'late', 0)")
    expect_conflict(lambda: DeltaTable.forPath(spark, str(t)).alias("t").merge(
        src.alias("s"), "t.id = s.id").whenMatchedDelete().execute())


def test_matched_only_merge_records_its_clauses_target_conjuncts(spark, tmp_path, hook):
    """As delta-spark: a MERGE with only WHEN MATCHED clauses also records the OR over its clauses of
    their conditions' target-only conjuncts (a target row satisfying none is left alone)."""
    from deltalog.tables import DeltaTable
    t = tmp_path / "t"
    create(spark, t)
    src = spark.createDataFrame([(i, f"m{i}", 0) for i in range(20)], "id BIGINT, name STRING, p INT")

    def merge():
        (DeltaTable.forPath(spark, str(t)).alias("t").merge(src.alias("s"), "t.id = s.id")
         .whenMatchedUpdate("t.id < 3 AND s.name != 'x'", {"name": "s.name"})
         .whenMatchedDelete("t.id > 16").execute())

    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (10, 'late', 0)")  # matched by the source, by no clause
    merge()
    assert_committed_after(t, v, "MERGE")
    got = rows(spark, t)
    assert (10, "late", 0) in got and (1, "m1", 1) in got and not [r for r in got if r[0] > 16]
    for late in ("(2, 'late', 0)", "(18, 'late', 0)"):
        hook(f"INSERT INTO deltalog.`{t}` VALUES {late}")
        expect_conflict(merge)


def test_partition_and_data_predicates_mix(spark, tmp_path, hook):
    t = tmp_path / "t"
    create(spark, t, partitioned=True)
    # same partition below the range, then the other partition inside the range: no conflict
    for late, lowest in (("(3, 'late', 1)", 14), ("(15, 'late', 0)", 10)):
        v = version_of(t)
        hook(f"INSERT INTO deltalog.`{t}` VALUES {late}")
        spark.sql(f"DELETE FROM deltalog.`{t}` WHERE p = 1 AND id > {lowest}").collect()
        assert_committed_after(t, v, "DELETE")
    assert rows(spark, t) == sorted([r for r in ROWS if not (r[2] == 1 and r[0] > 10)] +
                                    [(3, "late", 1), (15, "late", 0)])
    hook(f"INSERT INTO deltalog.`{t}` VALUES (13, 'late', 1)")
    expect_conflict(lambda: spark.sql(f"DELETE FROM deltalog.`{t}` WHERE p = 1 AND id > 6").collect())


def test_files_without_column_stats_conflict(spark, tmp_path, hook):
    t = tmp_path / "t"
    create(spark, t, "TBLPROPERTIES ('delta.dataSkippingNumIndexedCols' = '0')")
    hook(f"INSERT INTO deltalog.`{t}` VALUES (2, 'late', 0)")
    expect_conflict(lambda: spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id > 15").collect())


def test_write_serializable_ignores_blind_appends_even_inside_the_predicate(spark, tmp_path, hook):
    t = tmp_path / "t"
    create(spark, t, "TBLPROPERTIES ('delta.isolationLevel' = 'WriteSerializable')")
    v = version_of(t)
    hook(f"INSERT INTO deltalog.`{t}` VALUES (16, 'late', 0)")
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id > 15").collect()
    assert_committed_after(t, v, "DELETE")
    assert (16, "late", 0) in rows(spark, t)  # ordered after the DELETE


def test_merge_not_matched_by_source_acts_on_rows_outside_the_target_conjuncts(spark, tmp_path, delta_spark):
    """NOT MATCHED BY SOURCE applies to every target row without a match, also those a target-only
    conjunct of the condition excludes (as delta-spark 4.4 does); such a MERGE reads every file."""
    from deltalog.tables import DeltaTable
    t = tmp_path / "t"
    create(spark, t, partitioned=True)
    src = spark.createDataFrame([(1, "m1", 1)], "id BIGINT, name STRING, p INT")
    (DeltaTable.forPath(spark, str(t)).alias("t").merge(src.alias("s"), "t.p = 1 AND t.id = s.id")
     .whenMatchedUpdateAll().whenNotMatchedBySourceDelete().execute())
    d = tmp_path / "d"
    stmts = [f"CREATE TABLE delta.`{d}` (id BIGINT, name STRING, p INT) USING delta PARTITIONED BY (p)"] + [
        f"INSERT INTO delta.`{d}` VALUES " + ", ".join(f"({i}, '{n}', {p})" for i, n, p in chunk)
        for chunk in (ROWS[:10], ROWS[10:])] + [
        f"MERGE INTO delta.`{d}` t USING (SELECT 1L AS id, 'm1' AS name, 1 AS p) s ON t.p = 1 AND t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED BY SOURCE THEN DELETE"]
    theirs = delta_spark.run("for s in args['stmts']:\n    spark.sql(s)\n"
                             "result = [list(r) for r in spark.read.format('delta').load(args['p'])"
                             ".select('id', 'name', 'p').collect()]", stmts=stmts, p=str(d))
    assert rows(spark, t) == sorted(tuple(r) for r in theirs) == [(1, "m1", 1)]
