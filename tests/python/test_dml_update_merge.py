"""UPDATE and MERGE (issue 27): ``UPDATE t SET … WHERE …``, ``MERGE INTO … USING … WHEN …``,
``DeltaTable.update`` and ``DeltaTable.merge(...).when…().execute()``.

Each statement runs on a deltalog table and the same statement on delta-spark 4.4's copy of it (a
separate process): the rows left, the statement's result row, the commit's operation, parameters and
metric names must agree; delta-spark, delta-rs and DuckDB must read deltalog's result exactly. Run
with and without deletion vectors, with the change data feed and row tracking; a seeded random
sequence of DELETE / UPDATE / MERGE is checked against pandas after every statement.
"""
from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from conftest import java_error_classes
from test_dml_delete import (ROWS, assert_all_engines_read, commit, commit_info, create, create_delta_spark,
                             kinds, norm, rows_deltalog, srt, version_of, without_ids)

SOURCE = [(1, "s1", 0), (4, "s4", 0), (7, "s7", 1), (25, "s25", 1), (26, "s26", 0), (None, "snull", 1)]
MERGE_SQL = ("MERGE INTO {t} AS t USING src AS s ON t.id = s.id "
             "WHEN MATCHED AND s.id = 4 THEN DELETE "
             "WHEN MATCHED THEN UPDATE SET name = s.name "
             "WHEN NOT MATCHED AND s.id > 25 THEN INSERT (id, name, p) VALUES (s.id, s.name, s.p) "
             "WHEN NOT MATCHED BY SOURCE AND t.id >= 17 THEN UPDATE SET name = concat(t.name, '-gone') "
             "WHEN NOT MATCHED BY SOURCE AND t.id < 2 THEN DELETE")


def merge_expected() -> list:
    """MERGE_SQL over ROWS and SOURCE, by hand (pandas-free: the clause rules spelled out)."""
    src = {r[0]: r for r in SOURCE if r[0] is not None}
    out = []
    for i, n, p in ROWS:
        if i is not None and i in src:
            if i == 4:
                continue
            out.append((i, src[i][1], p))
        elif i is not None and i >= 17:
            out.append((i, n + "-gone", p))
        elif i is not None and i < 2:
            continue
        else:
            out.append((i, n, p))
    existing = {r[0] for r in ROWS}
    out += [r for r in SOURCE if r[0] is not None and r[0] not in existing and r[0] > 25]
    return srt(norm(r) for r in out)


def their_sql(delta_spark, sql: str, source=None) -> list:
    code = ("if args['source'] is not None:\n"
            "    spark.createDataFrame(args['source'], 'id long, name string, p int').createOrReplaceTempView('src')\n"
            "result = [list(r) for r in spark.sql(args['sql']).collect()]")
    return delta_spark.run(code, sql=sql, source=source)


def assert_same_commit(ours: dict, theirs: dict, operation: str) -> None:
    assert ours["operation"] == theirs["operation"] == operation
    for k, v in theirs["operationParameters"].items():
        if k == "predicate":
            assert without_ids(ours["operationParameters"][k]) == without_ids(v)
        else:
            import re
            assert re.sub(r"#\d+", "", ours["operationParameters"][k]) == re.sub(r"#\d+", "", v), k
    assert sorted(ours["operationMetrics"]) == sorted(theirs["operationMetrics"])


# ------------------------------------------------------------------------------------------ UPDATE
@pytest.mark.parametrize("dv", ["false", "true"])
def test_update_like_delta_spark(spark, tmp_path, delta_spark, dv):
    props = f"TBLPROPERTIES ('delta.enableDeletionVectors' = '{dv}')"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, props, partitioned=True)
    create_delta_spark(delta_spark, theirs, props, partitioned=True)
    sql = "UPDATE {t} SET name = upper(name), id = id + 100 WHERE id % 3 = 0 AND p = 0"
    res = spark.sql(sql.format(t=f"deltalog.`{ours}`"))
    assert res.schema.simpleString() == "struct<num_affected_rows:bigint>"
    assert [list(r) for r in res.collect()] == their_sql(delta_spark, sql.format(t=f"delta.`{theirs}`")) == [[4]]
    want = srt(norm((i + 100, n.upper(), p) if i is not None and i % 3 == 0 and p == 0 else (i, n, p))
               for i, n, p in ROWS)
    assert_all_engines_read(spark, delta_spark, ours, want)
    a = commit(ours)
    assert_same_commit(commit_info(a), commit_info(commit(theirs)), "UPDATE")
    m = commit_info(a)["operationMetrics"]
    removed = {r["path"] for r in kinds(a, "remove")}
    new_files = [x for x in kinds(a, "add") if x["path"] not in removed]  # DV'd files are re-added, not new
    assert m["numUpdatedRows"] == "4" and int(m["numAddedFiles"]) == len(new_files)
    if dv == "true":
        assert any(x.get("deletionVector") for x in kinds(a, "add")), "partially updated files get DVs"
        assert m["numCopiedRows"] == "0"
    else:
        assert not any(x.get("deletionVector") for x in kinds(a, "add"))
        assert int(m["numCopiedRows"]) + 4 == sum(json.loads(x["stats"])["numRecords"] for x in kinds(a, "add"))

    # no condition: every row; no matching row: nothing committed, like delta-spark
    for stmt, n in (("UPDATE {t} SET name = 'all'", len(ROWS)), ("UPDATE {t} SET name = 'x' WHERE id > 1000", 0)):
        v, tv = version_of(ours), version_of(theirs)
        got = [list(r) for r in spark.sql(stmt.format(t=f"deltalog.`{ours}`")).collect()]
        assert got == their_sql(delta_spark, stmt.format(t=f"delta.`{theirs}`")) == [[n]]
        assert version_of(ours) - v == version_of(theirs) - tv == (1 if n else 0)
    assert_same_commit(commit_info(commit(ours)), commit_info(commit(theirs)), "UPDATE")
    assert_all_engines_read(spark, delta_spark, ours, srt((r[0], "all", r[2]) for r in want))


def test_update_with_deletion_vectors_writes_few_rows_to_one_file(spark, tmp_path):
    """An UPDATE with deletion vectors writes its updated rows (kept from pass 1) with one write task per
    million rows, not one per partition of the scan that found them: rows updated in four files land
    in one new data file, and each old file gets a deletion vector."""
    path = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{path}` (id BIGINT, v STRING) USING deltalog "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    for block in range(4):
        spark.range(block * 100, block * 100 + 100).selectExpr("id", "cast(id AS string) AS v").coalesce(1) \
            .write.format("deltalog").mode("append").save(str(path))
    assert [tuple(r) for r in spark.sql(f"UPDATE deltalog.`{path}` SET v = 'u' WHERE id % 50 = 7").collect()] == [(8,)]
    a = commit(path)
    removed = {r["path"] for r in kinds(a, "remove")}
    new_files = [x for x in kinds(a, "add") if x["path"] not in removed]
    assert len(removed) == 4 and len(new_files) == 1
    assert all(x["deletionVector"]["cardinality"] == 2 for x in kinds(a, "add") if x["path"] in removed)
    got = sorted((r.id, r.v) for r in spark.read.format("deltalog").load(str(path)).collect())
    assert got == [(i, "u" if i % 50 == 7 else str(i)) for i in range(400)]


def test_update_python_api_rules_and_errors(spark, tmp_path, delta_spark):
    from pyspark.sql import functions as F
    from deltalog.exceptions import InvalidWriteError
    from deltalog.tables import DeltaTable
    path = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{path}` (id BIGINT, s STRUCT<a: INT, b: STRING>, "
              "g BIGINT GENERATED ALWAYS AS (id * 10), k BIGINT GENERATED ALWAYS AS IDENTITY) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{path}` (id, s) VALUES (1, named_struct('a', 1, 'b', 'x')), "
              "(2, named_struct('a', 2, 'b', 'y')), (3, NULL)")
    spark.sql(f"ALTER TABLE deltalog.`{path}` ADD CONSTRAINT small CHECK (id < 50)")
    dt = DeltaTable.forPath(spark, str(path))
    # Column condition and values, a nested field; the generated column follows id
    out = dt.update(F.col("id") >= 2, {"id": F.col("id") + 10, "s.b": F.lit("z")})
    assert [tuple(r) for r in out.collect()] == [(2,)]
    got = sorted(tuple(r) for r in dt.toDF().select("id", "s.a", "s.b", "g").collect())
    assert got == [(1, 1, "x", 10), (12, 2, "z", 120), (13, None, "z", 130)] or \
        got == [(1, 1, "x", 10), (12, 2, "z", 120), (13, None, None, 130)]
    # a NULL struct stays NULL when one of its fields is assigned? delta-spark builds the struct: check theirs
    theirs = delta_spark.run("result = [list(r) for r in spark.read.format('delta').load(args['p'])"
                             ".select('id', 's.a', 's.b', 'g').orderBy('id').collect()]", p=str(path))
    assert [tuple(r) for r in theirs] == got
    # string condition and values
    assert [tuple(r) for r in dt.update("id = 1", {"id": "id + 1"}).collect()] == [(1,)]
    v = version_of(path)
    with pytest.raises(Exception, match="small") as e:  # CHECK constraint: nothing written
        dt.update("id = 2", {"id": "100"})
    assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in str(e.value)
    with pytest.raises(Exception, match="DELTA_GENERATED_COLUMN_MISMATCH|Generated Column"):
        spark.sql(f"UPDATE deltalog.`{path}` SET g = 5")
    with pytest.raises(InvalidWriteError, match="DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED"):
        dt.update(set={"k": "1"})
    with pytest.raises(InvalidWriteError, match="DELTA_UNRESOLVED_COLUMN"):
        dt.update(set={"nope": "1"})
    with pytest.raises(InvalidWriteError, match="DELTA_CANNOT_WRITE_TIME_TRAVEL"):
        DeltaTable.forPath(spark, str(path), version=1).update(set={"id": "1"})
    with pytest.raises(ValueError):
        dt.update("id = 1")
    assert version_of(path) == v
    assert sorted(r.id for r in dt.toDF().collect()) == [2, 12, 13]


# ------------------------------------------------------------------------------------------ MERGE
@pytest.mark.parametrize("dv", ["false", "true"])
def test_merge_all_clauses_like_delta_spark(spark, tmp_path, delta_spark, dv):
    props = f"TBLPROPERTIES ('delta.enableDeletionVectors' = '{dv}')"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create(spark, ours, props)
    create_delta_spark(delta_spark, theirs, props)
    spark.createDataFrame(SOURCE, "id long, name string, p int").createOrReplaceTempView("src")
    res = spark.sql(MERGE_SQL.format(t=f"deltalog.`{ours}`"))
    assert res.columns == ["num_affected_rows", "num_updated_rows", "num_deleted_rows", "num_inserted_rows"]
    got = [list(r) for r in res.collect()]
    assert got == their_sql(delta_spark, MERGE_SQL.format(t=f"delta.`{theirs}`"), SOURCE)
    # matched: 1 (updated), 4 (deleted), 7 (updated); by source: 17,18,19 updated, 0 deleted; inserted: 26
    assert got == [[1 + 1 + 1 + 3 + 1 + 1, 5, 2, 1]]
    want = merge_expected()
    assert_all_engines_read(spark, delta_spark, ours, want)
    a = commit(ours)
    assert_same_commit(commit_info(a), commit_info(commit(theirs)), "MERGE")
    m = commit_info(a)["operationMetrics"]
    assert (m["numSourceRows"], m["numTargetRowsMatchedUpdated"], m["numTargetRowsNotMatchedBySourceUpdated"],
            m["numTargetRowsMatchedDeleted"], m["numTargetRowsNotMatchedBySourceDeleted"],
            m["numTargetRowsInserted"]) == ("6", "2", "3", "1", "1", "1")
    removed = {r["path"] for r in kinds(a, "remove")}
    assert int(m["numTargetFilesAdded"]) == len([x for x in kinds(a, "add") if x["path"] not in removed])
    if dv == "true":
        assert any(x.get("deletionVector") for x in kinds(a, "add"))

    # insert-only MERGE (anti join) and a MERGE matching nothing: same rows / versions as delta-spark
    sql2 = "MERGE INTO {t} t USING src s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *"
    got = [list(r) for r in spark.sql(sql2.format(t=f"deltalog.`{ours}`")).collect()]
    assert got == their_sql(delta_spark, sql2.format(t=f"delta.`{theirs}`"), SOURCE) == [[3, 0, 0, 3]]
    assert_same_commit(commit_info(commit(ours)), commit_info(commit(theirs)), "MERGE")
    want = srt(want + [norm(r) for r in SOURCE if r[0] in (4, 25, None)])
    assert_all_engines_read(spark, delta_spark, ours, want)


def test_merge_python_builder_and_clause_rules(spark, tmp_path):
    from deltalog.exceptions import InvalidWriteError
    from deltalog.tables import DeltaTable
    path = tmp_path / "t"
    create(spark, path)
    dt = DeltaTable.forPath(spark, str(path))
    src = spark.createDataFrame(SOURCE, "id long, name string, p int")
    out = (dt.alias("t").merge(src.alias("s"), "t.id = s.id")
           .whenMatchedDelete("s.id = 4")
           .whenMatchedUpdate(set={"name": "s.name"})
           .whenNotMatchedInsert(condition="s.id > 25", values={"id": "s.id", "name": "s.name", "p": "s.p"})
           .whenNotMatchedBySourceUpdate("t.id >= 17", {"name": "concat(t.name, '-gone')"})
           .whenNotMatchedBySourceDelete("t.id < 2")
           .execute())
    assert [tuple(r) for r in out.collect()] == [(8, 5, 2, 1)]
    assert rows_deltalog(spark, path) == merge_expected()

    # a target row matched by two source rows: delta-spark's error class, nothing written
    v = version_of(path)
    dup = spark.createDataFrame([(7, "a", 1), (7, "b", 1)], "id long, name string, p int")
    with pytest.raises(InvalidWriteError, match="DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"):
        dt.alias("t").merge(dup.alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute()
    assert version_of(path) == v
    # ... except when the only matched clause is an unconditional DELETE (delta-spark's exception)
    dup.createOrReplaceTempView("dup")
    res = spark.sql(f"MERGE INTO deltalog.`{path}` t USING dup s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert [tuple(r) for r in res.collect()] == [(1, 0, 1, 0)]
    assert 7 not in [r[0] for r in rows_deltalog(spark, path)]

    # clause rules: only the last clause of a kind may omit its condition; at least one clause
    v = version_of(path)
    with pytest.raises(InvalidWriteError, match="DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"):
        dt.merge(src.alias("s"), "id = s.id").whenMatchedDelete().whenMatchedUpdateAll().execute()
    with pytest.raises(InvalidWriteError, match="DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION"):
        dt.merge(src.alias("s"), "id = s.id").whenNotMatchedBySourceDelete() \
            .whenNotMatchedBySourceUpdate(set={"name": "'x'"}).execute()
    with pytest.raises(InvalidWriteError, match="DELTA_MERGE_MISSING_WHEN"):
        dt.merge(src.alias("s"), "id = s.id").execute()
    with pytest.raises(InvalidWriteError, match="DELTA_MERGE_UNRESOLVED_EXPRESSION"):
        dt.merge(src.alias("s"), "t.nope = s.id").whenMatchedDelete().execute()
    narrow = spark.createDataFrame([(1, "x")], "id long, name string")
    with pytest.raises(InvalidWriteError, match="DELTA_MERGE_UNRESOLVED_EXPRESSION"):
        dt.alias("t").merge(narrow.alias("s"), "t.id = s.id").whenNotMatchedInsertAll().execute()
    assert version_of(path) == v


def test_merge_schema_evolution(spark, tmp_path, delta_spark):
    from deltalog.tables import DeltaTable
    path = tmp_path / "t"
    create(spark, path)
    wide = spark.createDataFrame([(1, "w1", 1, 1.5), (40, "w40", 0, 4.0)], "id long, name string, p int, score double")
    dt = DeltaTable.forPath(spark, str(path))
    out = (dt.alias("t").merge(wide.alias("s"), "t.id = s.id").withSchemaEvolution()
           .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
    assert [tuple(r) for r in out.collect()] == [(2, 1, 0, 1)]
    assert [f.name for f in dt.toDF().schema.fields] == ["id", "name", "p", "score"]
    got = {r.id: (r.name, r.score) for r in dt.toDF().collect()}
    assert got[1] == ("w1", 1.5) and got[40] == ("w40", 4.0) and got[2] == ("n2", None)
    assert any("metaData" in x for x in commit(path))
    theirs = delta_spark.run("result = sorted([[r.id, r.score] for r in spark.read.format('delta').load(args['p'])"
                             ".collect() if r.score is not None])", p=str(path))
    assert theirs == [[1, 1.5], [40, 4.0]]
    # SQL: WITH SCHEMA EVOLUTION
    wide2 = spark.createDataFrame([(2, "w2", 0, 2.5, "new")], "id long, name string, p int, score double, tag string")
    wide2.createOrReplaceTempView("wide2")
    res = spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO deltalog.`{path}` t USING wide2 s ON t.id = s.id "
                    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert [tuple(r) for r in res.collect()] == [(1, 1, 0, 0)]
    row = [r for r in dt.toDF().collect() if r.id == 2][0]
    assert (row.name, row.score, row.tag) == ("w2", 2.5, "new")
    # without evolution the extra source column is not added
    v = version_of(path)
    extra = spark.createDataFrame([(3, "x3", 1, 3.5, "t", 9)], "id long, name string, p int, score double, tag string, z int")
    dt.alias("t").merge(extra.alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute()
    assert "z" not in dt.toDF().columns and version_of(path) == v + 1


# ------------------------------------------------------------------------------------------ CDF, row tracking
@pytest.mark.parametrize("dv", ["false", "true"])
def test_update_and_merge_change_data_feed(spark, tmp_path, delta_spark, dv):
    path = tmp_path / "t"
    create(spark, path, f"TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = '{dv}')")
    v_upd = version_of(path) + 1
    spark.sql(f"UPDATE deltalog.`{path}` SET name = 'u' WHERE id IN (3, 12)")
    spark.createDataFrame(SOURCE, "id long, name string, p int").createOrReplaceTempView("src")
    v_merge = version_of(path) + 1
    spark.sql(MERGE_SQL.format(t=f"deltalog.`{path}`"))
    assert kinds(commit(path, v_upd), "cdc") and kinds(commit(path, v_merge), "cdc")
    ours = spark.read.format("deltalog").option("readChangeFeed", "true").option("startingVersion", v_upd) \
        .load(str(path)).select("id", "name", "_change_type", "_commit_version").collect()
    theirs = delta_spark.run(
        "result = [list(r) for r in spark.sql(\"SELECT id, name, _change_type, _commit_version FROM "
        "table_changes_by_path('%s', %d)\").collect()]" % (path, v_upd))
    for got in (ours, theirs):
        got = sorted((r[3], r[2], r[0], r[1]) for r in (tuple(x) for x in got))
        assert [g for g in got if g[0] == v_upd] == sorted(
            [(v_upd, "update_preimage", 3, "n3"), (v_upd, "update_postimage", 3, "u"),
             (v_upd, "update_preimage", 12, "n12"), (v_upd, "update_postimage", 12, "u")])
        m = [g[1:] for g in got if g[0] == v_merge]
        assert ("delete", 4, "n4") in m and ("delete", 0, "n0") in m and ("insert", 26, "s26") in m
        assert ("update_preimage", 1, "n1") in m and ("update_postimage", 1, "s1") in m
        assert ("update_postimage", 18, "n18-gone") in m
        assert len(m) == 2 * 5 + 2 + 1


def test_update_and_merge_keep_row_ids(spark, tmp_path, delta_spark):
    for dv in ("false", "true"):
        path = tmp_path / f"rt-{dv}"
        create(spark, path, f"TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = '{dv}')")
        code = ("from pyspark.sql import functions as F\n"
                "result = [[r.id, r.row_id, r.v] for r in spark.read.format('delta').load(args['p'])"
                ".select('id', '_metadata.row_id', F.col('_metadata.row_commit_version').alias('v')).collect()]")
        before = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
        spark.sql(f"UPDATE deltalog.`{path}` SET name = 'u' WHERE id IN (3, 12)")
        v_upd = version_of(path)
        spark.createDataFrame(SOURCE, "id long, name string, p int").createOrReplaceTempView("src")
        spark.sql(MERGE_SQL.format(t=f"deltalog.`{path}`"))
        v_merge = version_of(path)
        after = {r[0]: (r[1], r[2]) for r in delta_spark.run(code, p=str(path))}
        for k, (rid, ver) in after.items():
            if k == 26:  # inserted: a fresh id
                assert rid > max(b[0] for b in before.values()) and ver == v_merge
                continue
            assert rid == before[k][0], k  # every surviving row keeps its id
            if k in (1, 7, 17, 18, 19):
                assert ver == v_merge, k
            elif k in (3, 12):
                assert ver == v_upd, k
            else:
                assert ver == before[k][1], k
        assert len({v[0] for v in after.values()}) == len(after)


# ------------------------------------------------------------------------------------------ random sequences
@pytest.mark.parametrize("dv", ["false", "true"])
@pytest.mark.parametrize("broadcast", ["32m", "-1"])
def test_random_dml_sequence_matches_pandas(spark, tmp_path, dv, broadcast):
    """Seeded random DELETE / UPDATE / MERGE statements on a deltalog table and on a pandas frame of the
    same rows; after every statement the table's rows equal the frame's. MERGE's pass 2 runs both ways:
    the small source broadcast (hash join of the touched files + anti join for the inserts) and, with
    ``spark.deltalog.merge.broadcastSourceThreshold = -1``, one shuffled full outer join."""
    key = "spark.deltalog.merge.broadcastSourceThreshold"
    spark.conf.set(key, str(32 * 1024 * 1024) if broadcast == "32m" else "-1")
    try:
        _random_dml_sequence(spark, tmp_path, dv)
    finally:
        spark.conf.unset(key)


def _random_dml_sequence(spark, tmp_path, dv):
    from deltalog.tables import DeltaTable
    rnd = random.Random(27 + (dv == "true"))
    path = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{path}` (k BIGINT, v BIGINT, p BIGINT) USING deltalog PARTITIONED BY (p) "
              f"TBLPROPERTIES ('delta.enableDeletionVectors' = '{dv}')")
    ref = pd.DataFrame({"k": range(60), "v": [rnd.randrange(100) for _ in range(60)], "p": [k % 3 for k in range(60)]})
    spark.createDataFrame(ref).repartition(4).write.format("deltalog").mode("append").save(str(path))
    dt = DeltaTable.forPath(spark, str(path))
    for step in range(12):
        op = rnd.choice(["delete", "update", "merge", "merge"])
        a, b = sorted(rnd.sample(range(120), 2))
        if op == "delete":
            dt.delete(f"k >= {a} AND k < {b} AND v % 2 = 0")
            ref = ref[~((ref.k >= a) & (ref.k < b) & (ref.v % 2 == 0))]
        elif op == "update":
            dt.update(f"v < {a}", {"v": f"v + {b}"})
            ref.loc[ref.v < a, "v"] = ref.v + b
        else:
            keys = rnd.sample(range(120), 15)
            src = pd.DataFrame({"k": keys, "v": [rnd.randrange(100) for _ in keys], "p": [k % 3 for k in keys]})
            # without a not-matched-by-source clause MERGE reads only the files a source key falls into
            by_source = rnd.random() < 0.5
            builder = (dt.alias("t").merge(spark.createDataFrame(src).alias("s"), "t.k = s.k")
                       .whenMatchedDelete("s.v < 20").whenMatchedUpdate(set={"v": "t.v + s.v"})
                       .whenNotMatchedInsertAll("s.v >= 50"))
            if by_source:
                builder = builder.whenNotMatchedBySourceUpdate(f"t.k < {a}", {"v": "t.v - 1"})
            builder.execute()
            m = ref.merge(src, on="k", how="outer", suffixes=("", "_s"), indicator=True)
            both, left, right = m[m._merge == "both"], m[m._merge == "left_only"], m[m._merge == "right_only"]
            both = both[~(both.v_s < 20)].assign(v=lambda d: d.v + d.v_s)
            if by_source:
                left = left.assign(v=lambda d: d.v.where(~(d.k < a), d.v - 1))
            right = right[right.v_s >= 50].assign(v=lambda d: d.v_s, p=lambda d: d.p_s)
            ref = pd.concat([x[["k", "v", "p"]] for x in (both, left, right)])
        ref = ref.astype({"k": "int64", "v": "int64", "p": "int64"})
        got = sorted(tuple(r) for r in dt.toDF().select("k", "v", "p").collect())
        assert got == sorted(ref.itertuples(index=False, name=None)), f"step {step}: {op}"


@pytest.mark.parametrize("broadcast", ["32m", "-1"])
def test_merge_upsert_identity_and_generated_columns(spark, tmp_path, broadcast):
    """An upsert MERGE into a table with identity and generated columns, pass 2 both ways (broadcast
    source: hash join + anti join for the inserts; -1: one full outer join): matched rows keep their
    identity value and get the generated column recomputed; inserted rows get new, distinct identity
    values above the old ones, of the form start + m * step."""
    key = "spark.deltalog.merge.broadcastSourceThreshold"
    path = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{path}` (id BIGINT, v STRING, g BIGINT GENERATED ALWAYS AS (id * 10), "
              "k BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 5 INCREMENT BY 3)) USING deltalog")
    spark.range(0, 40).selectExpr("id", "cast(id AS string) AS v").repartition(4) \
        .write.format("deltalog").mode("append").save(str(path))
    before = {r.id: r.k for r in spark.read.format("deltalog").load(str(path)).collect()}
    src = spark.range(30, 70).selectExpr("id", "concat('new', cast(id AS string)) AS v").repartition(3)
    src.createOrReplaceTempView("idsrc")
    spark.conf.set(key, str(32 * 1024 * 1024) if broadcast == "32m" else "-1")
    try:
        got = spark.sql(f"MERGE INTO deltalog.`{path}` t USING idsrc s ON t.id = s.id "
                        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)")
        assert [list(r) for r in got.collect()] == [[40, 10, 0, 30]]
    finally:
        spark.conf.unset(key)
    rows = {r.id: r for r in spark.read.format("deltalog").load(str(path)).collect()}
    assert sorted(rows) == list(range(70))
    assert all(rows[i].g == i * 10 for i in rows)
    assert all(rows[i].v == (f"new{i}" if i >= 30 else str(i)) for i in rows)
    assert all(rows[i].k == before[i] for i in before)
    new = [rows[i].k for i in range(40, 70)]
    assert len(set(new)) == 30 and min(new) > max(before.values())
    assert all((k - 5) % 3 == 0 for k in new)
