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
