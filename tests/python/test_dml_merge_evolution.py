"""MERGE schema evolution through explicit assignments (issue 27), against delta-spark 4.4.

With schema evolution on, a source column (or nested field) that an ``UPDATE SET`` or an
``INSERT (…) VALUES (…)`` assigns and the target lacks is added to the table (delta-spark's rule:
the source schema filtered to the assigned paths, merged into the target's); source columns not
assigned are not added; without evolution the assignment is refused. The same statements run on
delta-spark's copy of the table; schemas (names, types, nesting) and rows must be equal.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

TARGET = "k BIGINT, v STRING, st STRUCT<a: INT>"
SOURCE = "SELECT * FROM VALUES (1L, 'u1', named_struct('a', 10, 'b', 'b1'), 'n1', 100), " \
         "(5L, 'i5', named_struct('a', 50, 'b', 'b5'), 'n5', 500) AS src(k, v, st, newcol, other)"
STATEMENTS = [
    "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
    "WHEN MATCHED THEN UPDATE SET v = s.v, newcol = s.newcol, st.b = s.st.b "
    "WHEN NOT MATCHED THEN INSERT (k, v, newcol) VALUES (s.k, s.v, s.newcol)",
]


def setup_sql(t: str, fmt: str) -> list:
    return [f"CREATE TABLE {t} ({TARGET}) USING {fmt}",
            f"INSERT INTO {t} VALUES (1, 'a', named_struct('a', 1)), (2, 'b', named_struct('a', 2))"]


def schema_of(path: Path) -> dict:
    """The latest metaData.schemaString of the log, without field metadata."""
    schema = None
    for f in sorted((path / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            a = json.loads(line)
            if "metaData" in a:
                schema = json.loads(a["metaData"]["schemaString"])

    def strip(t):
        if isinstance(t, dict) and t.get("type") == "struct":
            return [(x["name"], strip(x["type"]), x["nullable"]) for x in t["fields"]]
        return t
    return strip(schema)


def test_explicit_assignments_add_columns_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for s in setup_sql(f"deltalog.`{ours}`", "deltalog"):
        spark.sql(s)
    # deltalog through the Python builder (the same clauses as the SQL delta-spark runs)
    from deltalog.tables import DeltaTable
    (DeltaTable.forPath(spark, str(ours)).alias("t").merge(spark.sql(SOURCE).alias("s"), "t.k = s.k")
     .withSchemaEvolution()
     .whenMatchedUpdate(set={"v": "s.v", "newcol": "s.newcol", "st.b": "s.st.b"})
     .whenNotMatchedInsert(values={"k": "s.k", "v": "s.v", "newcol": "s.newcol"})
     .execute())
    delta_spark.run("for s in args['stmts']:\n    spark.sql(s)",
                    stmts=setup_sql(f"delta.`{theirs}`", "delta") +
                    [s.format(t=f"delta.`{theirs}`", src=SOURCE) for s in STATEMENTS])
    assert schema_of(ours) == schema_of(theirs)
    names = [f[0] for f in schema_of(ours)]
    assert names == ["k", "v", "st", "newcol"]  # `other` is not assigned: not added
    assert dict((f[0], f[1]) for f in schema_of(ours))["st"] == [("a", "integer", True), ("b", "string", True)]
    q = ("result = sorted([r.k, r.v, r.st and r.st.a, r.st and r.st.b, r.newcol] "
         "for r in spark.read.format(args['f']).load(args['p']).collect())")
    mine = sorted([r.k, r.v, r.st and r.st.a, r.st and r.st.b, r.newcol]
                  for r in spark.read.format("deltalog").load(str(ours)).collect())
    assert mine == delta_spark.run(q, f="delta", p=str(theirs)) == [
        [1, "u1", 1, "b1", "n1"], [2, "b", 2, None, None], [5, "i5", None, None, "n5"]]


def test_explicit_assignment_to_a_new_column_needs_evolution(spark, tmp_path):
    t = tmp_path / "t"
    for s in setup_sql(f"deltalog.`{t}`", "deltalog"):
        spark.sql(s)
    with pytest.raises(Exception, match="newcol"):
        spark.sql(f"MERGE INTO deltalog.`{t}` t USING ({SOURCE}) s ON t.k = s.k "
                  "WHEN MATCHED THEN UPDATE SET t.newcol = s.newcol").collect()
    assert [f.name for f in spark.read.format("deltalog").load(str(t)).schema.fields] == ["k", "v", "st"]


# ------------------------------------------------------------------ the SQL forms, against delta-spark
# Each statement runs on a fresh table of each engine (TARGET, two rows); {e} is WITH SCHEMA EVOLUTION
# or empty, `conf` the session's spark.databricks.delta.schema.autoMerge.enabled.
EVOLVING = {
    "update-insert-nested": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
                             "WHEN MATCHED THEN UPDATE SET newcol = s.newcol, st.b = s.st.b "
                             "WHEN NOT MATCHED THEN INSERT (k, v, newcol) VALUES (s.k, s.v, s.newcol)"),
    "automerge-conf": ("true", "MERGE INTO {t} t USING ({src}) s ON t.k = s.k "
                       "WHEN MATCHED THEN UPDATE SET st.b = s.st.b, v = upper(s.v) "
                       "WHEN NOT MATCHED AND s.other > 1 THEN INSERT (k, newcol, st) "
                       "VALUES (s.k, concat(s.newcol, 'x'), s.st)"),
    "insert-expression": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
                          "WHEN NOT MATCHED THEN INSERT (k, other) VALUES (s.k, s.other + 1)"),
    "struct-assigned-whole": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
                              "WHEN MATCHED AND s.other > 1 THEN UPDATE SET st = s.st "
                              "WHEN NOT MATCHED THEN INSERT (k, st) VALUES (s.k, s.st)"),
    "stars": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
              "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
}
# no column added: `*` with a narrower source under evolution (nulls), a wider one (top level) without it
UNCHANGED_SCHEMA = {
    "insert-star-narrow-evolution": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING (SELECT 7L AS k, 'x' AS v) s "
                                     "ON t.k = s.k WHEN NOT MATCHED THEN INSERT *"),
    "stars-extra-column-no-evolution": ("false", "MERGE INTO {t} t USING (SELECT 1L AS k, 'x' AS v, "
                                        "named_struct('a', 5) AS st, 3 AS extra) s ON t.k = s.k "
                                        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
}
REFUSED = {
    "insert-star-narrow-source": ("false", "MERGE INTO {t} t USING (SELECT 7L AS k, 'x' AS v) s ON t.k = s.k "
                                  "WHEN NOT MATCHED THEN INSERT *"),
    "update-star-narrow-source": ("false", "MERGE INTO {t} t USING (SELECT 1L AS k, 'x' AS v) s ON t.k = s.k "
                                  "WHEN MATCHED THEN UPDATE SET *"),
    "qualified-new-column": ("false", "MERGE INTO {t} t USING ({src}) s ON t.k = s.k "
                             "WHEN MATCHED THEN UPDATE SET t.newcol = s.newcol"),
    "insert-new-column": ("false", "MERGE INTO {t} t USING ({src}) s ON t.k = s.k "
                          "WHEN NOT MATCHED THEN INSERT (k, newcol) VALUES (s.k, s.newcol)"),
    "new-nested-field": ("false", "MERGE INTO {t} t USING ({src}) s ON t.k = s.k "
                         "WHEN MATCHED THEN UPDATE SET st.b = s.st.b"),
    "stars-wider-struct": ("false", "MERGE INTO {t} t USING ({src}) s ON t.k = s.k "
                           "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
    # with evolution: a key qualified by the target's alias, a name the source lacks, a by-source clause
    "evolution-qualified": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
                            "WHEN MATCHED THEN UPDATE SET t.newcol = s.newcol"),
    "evolution-not-in-source": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
                                "WHEN MATCHED THEN UPDATE SET zz = s.newcol"),
    "evolution-by-source": ("false", "MERGE WITH SCHEMA EVOLUTION INTO {t} t USING ({src}) s ON t.k = s.k "
                            "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET newcol = 'x'"),
}

_PEER_CODE = '''
import glob, json, re
def err_class(e):
    texts = [str(e)]
    j = getattr(e, "java_exception", None)
    while j is not None:
        texts.append(str(j.getMessage()))
        j = j.getCause()
    for t in texts:
        m = re.search(r"Cannot find main error class '([A-Z_.]+)'", t) or re.search(r"\\[([A-Z][A-Z_.]+)\\]", t)
        if m and m.group(1) != "INTERNAL_ERROR":
            return m.group(1)
    return type(e).__name__
out = {}
for name, (conf, stmt) in args["cases"].items():
    p = args["base"] + "/" + name
    for s in args["setup"]:
        spark.sql(s.format(t="delta.`%s`" % p))
    spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", conf)
    try:
        res = [list(r) for r in spark.sql(stmt.format(t="delta.`%s`" % p, src=args["src"])).collect()]
        rows = sorted(json.dumps(r.asDict(recursive=True), sort_keys=True)
                      for r in spark.read.format("delta").load(p).collect())
        out[name] = {"result": res, "rows": rows}
    except Exception as e:
        out[name] = {"error": err_class(e)}
    finally:
        spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", "false")
result = out
'''


@pytest.fixture(scope="module")
def delta_spark_merges(delta_spark, tmp_path_factory):
    """Every statement of EVOLVING and REFUSED run by delta-spark 4.4 (one peer call): result, rows or error class."""
    base = tmp_path_factory.mktemp("delta_spark_merges")
    out = delta_spark.run(_PEER_CODE, cases={**EVOLVING, **UNCHANGED_SCHEMA, **REFUSED}, base=str(base), src=SOURCE,
                          setup=setup_sql("{t}", "delta"))
    return base, out


def _ours(spark, path: Path, conf: str, stmt: str):
    for s in setup_sql(f"deltalog.`{path}`", "deltalog"):
        spark.sql(s)
    spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", conf)
    try:
        return spark.sql(stmt.format(t=f"deltalog.`{path}`", src=SOURCE)).collect()
    finally:
        spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", "false")


def _last_commit(path: Path) -> list:
    last = sorted((path / "_delta_log").glob("*.json"))[-1]
    return [json.loads(line) for line in last.read_text().splitlines()]


def _no_ids(s: str) -> str:
    import re
    return re.sub(r"#\d+", "", s)


@pytest.mark.parametrize("case", sorted(EVOLVING) + sorted(UNCHANGED_SCHEMA))
def test_sql_merge_evolves_like_delta_spark(spark, tmp_path, delta_spark_merges, case):
    base, theirs_out = delta_spark_merges
    conf, stmt = {**EVOLVING, **UNCHANGED_SCHEMA}[case]
    ours = tmp_path / "ours"
    res = _ours(spark, ours, conf, stmt)
    theirs = theirs_out[case]
    assert "error" not in theirs, theirs
    assert [list(r) for r in res] == theirs["result"]
    assert schema_of(ours) == schema_of(base / case)
    rows = sorted(json.dumps(r.asDict(recursive=True), sort_keys=True)
                  for r in spark.read.format("deltalog").load(str(ours)).collect())
    assert rows == theirs["rows"]
    # one commit: the MERGE with one metaData holding the evolved schema (none when nothing is added), as delta-spark's
    mine, their = _last_commit(ours), _last_commit(base / case)
    assert len([a for a in mine if "metaData" in a]) == len([a for a in their if "metaData" in a]) == \
        (1 if case in EVOLVING else 0)
    ci, tci = (next(a["commitInfo"] for a in c if "commitInfo" in a) for c in (mine, their))
    assert ci["operation"] == tci["operation"] == "MERGE"
    assert {k: _no_ids(v) for k, v in ci["operationParameters"].items()} == \
        {k: _no_ids(v) for k, v in tci["operationParameters"].items()}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_sql_merge_refuses_like_delta_spark(spark, tmp_path, delta_spark_merges, case):
    _, theirs_out = delta_spark_merges
    conf, stmt = REFUSED[case]
    ours = tmp_path / "ours"
    with pytest.raises(Exception) as e:
        _ours(spark, ours, conf, stmt)
    assert str(e.value).startswith(f"[{theirs_out[case]['error']}]"), (theirs_out[case], str(e.value))
    assert f"deltalog.`{ours}`" in str(e.value)  # the message names the table
    assert len(list((ours / "_delta_log").glob("*.json"))) == 2  # nothing committed after the setup
    assert [f.name for f in spark.read.format("deltalog").load(str(ours)).schema.fields] == ["k", "v", "st"]


def test_sql_merge_into_a_catalog_table_by_name(spark, tmp_path):
    """The target named in the catalog, unaliased and referenced by its name: the same evolution (and
    refusal) as on a path, and the same result as the Python builder's (compared with delta-spark above)."""
    import uuid
    db = "mevo_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'warehouse'}'")
    try:
        t = f"{db}.events"
        for s in setup_sql(t, "deltalog"):
            spark.sql(s)
        clauses = "WHEN MATCHED THEN UPDATE SET newcol = s.newcol, st.b = s.st.b " \
                  "WHEN NOT MATCHED THEN INSERT (k, newcol) VALUES (s.k, s.newcol)"
        with pytest.raises(Exception, match=r"^\[DELTA_MERGE_UNRESOLVED_EXPRESSION\].*newcol"):
            spark.sql(f"MERGE INTO {t} USING ({SOURCE}) s ON {t}.k = s.k {clauses}").collect()
        res = spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO {t} USING ({SOURCE}) s ON {t}.k = s.k {clauses}")
        path = tmp_path / "by_path"
        for s in setup_sql(f"deltalog.`{path}`", "deltalog"):
            spark.sql(s)
        from deltalog.tables import DeltaTable
        builder = (DeltaTable.forPath(spark, str(path)).alias("t").merge(spark.sql(SOURCE).alias("s"), "t.k = s.k")
                   .withSchemaEvolution()
                   .whenMatchedUpdate(set={"newcol": "s.newcol", "st.b": "s.st.b"})
                   .whenNotMatchedInsert(values={"k": "s.k", "newcol": "s.newcol"}).execute())
        assert [list(r) for r in res.collect()] == [list(r) for r in builder.collect()] == [[2, 1, 0, 1]]
        assert spark.table(t).schema == spark.read.format("deltalog").load(str(path)).schema
        assert sorted(map(str, spark.table(t).collect())) == \
            sorted(map(str, spark.read.format("deltalog").load(str(path)).collect()))
        assert [f.name for f in spark.table(t).schema.fields] == ["k", "v", "st", "newcol"]
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")
