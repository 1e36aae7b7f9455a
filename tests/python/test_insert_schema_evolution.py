"""Schema evolution through INSERT (issue 26): with ``spark.databricks.delta.schema.autoMerge.enabled``,
the write option ``mergeSchema`` or ``INSERT WITH SCHEMA EVOLUTION``, an insert whose rows have
columns (or nested struct fields) the table lacks adds them, in the write's own commit (metaData
with the merged schema next to the adds). Each statement runs on deltalog and on delta-spark 4.4
(its own copy of the table, separate process): the schema, the rows and the commit (actions,
operation, operationParameters) must agree. Without one of the switches the insert is refused
before anything is written.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"


def last_version(path: Path) -> int:
    return max(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))


def actions(path: Path, version: int) -> list[dict]:
    return [json.loads(x) for x in (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines() if x.strip()]


def schema(path: Path) -> dict:
    meta = None
    for v in range(last_version(path) + 1):
        f = path / "_delta_log" / f"{v:020d}.json"
        if f.exists():
            meta = next((a["metaData"] for a in actions(path, v) if "metaData" in a), meta)
    return meta


def without_physical_names(s):
    """A schema (parsed JSON) without column mapping's physical names (random per engine)."""
    if isinstance(s, dict):
        return {k: without_physical_names(v) for k, v in s.items() if k != "delta.columnMapping.physicalName"}
    if isinstance(s, list):
        return [without_physical_names(x) for x in s]
    return s


def run_ours(spark, code: str, t: str, fmt: str, auto_merge: bool) -> None:
    from pyspark.sql import functions as F
    spark.conf.set(AUTO_MERGE, str(auto_merge).lower())
    try:
        exec(code.format(t=t, fmt=fmt), {"spark": spark, "F": F})
    finally:
        spark.conf.unset(AUTO_MERGE)


def run_theirs(delta_spark, code: str, t: str, fmt: str, auto_merge: bool) -> None:
    body = "\n".join("    " + line for line in code.format(t=t, fmt=fmt).splitlines())
    delta_spark.run(f"""
from pyspark.sql import functions as F
spark.conf.set("{AUTO_MERGE}", "{str(auto_merge).lower()}")
try:
{body}
finally:
    spark.conf.unset("{AUTO_MERGE}")
""")


def both(spark, delta_spark, tmp_path: Path, create: str, statement: str, auto_merge: bool = True):
    """Create the table and insert a first row in each engine, run ``statement``; the two logs' folders."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for run, path, fmt, name in ((run_ours, ours, "deltalog", "deltalog"), (run_theirs, theirs, "delta", "delta")):
        engine = spark if run is run_ours else delta_spark
        t = f"{name}.`{path}`"
        ddl = create if "{fmt}" in create else create + " USING {fmt}"
        run(engine, f"spark.sql('''CREATE TABLE {{t}} {ddl}''')", t, fmt, False)
        run(engine, statement, t, fmt, auto_merge)
    return ours, theirs


def tuples(v):
    """Rows (and structs in them) as plain tuples, from Spark Rows or a peer's JSON lists."""
    return tuple(tuples(x) for x in v) if isinstance(v, (list, tuple)) else v


def rows(spark, path: Path) -> list:
    return sorted((tuples(r) for r in spark.read.format("deltalog").load(str(path)).collect()), key=repr)


def rows_theirs(delta_spark, path: Path) -> list:
    got = delta_spark.run(f"result = [list(r) for r in spark.read.format('delta').load('{path}').collect()]")
    return sorted((tuples(r) for r in got), key=repr)


def assert_same_commit(ours: Path, theirs: Path) -> dict:
    """The newest commit of each: same actions, operation and parameters; returns deltalog's metaData."""
    a, b = actions(ours, last_version(ours)), actions(theirs, last_version(theirs))
    assert last_version(ours) == last_version(theirs)
    assert sorted(k for x in a for k in x) == sorted(k for x in b for k in x)
    ca = next(x["commitInfo"] for x in a if "commitInfo" in x)
    cb = next(x["commitInfo"] for x in b if "commitInfo" in x)
    assert ca["operation"] == cb["operation"] == "WRITE"
    assert ca["operationParameters"] == cb["operationParameters"]
    meta = next(x["metaData"] for x in a if "metaData" in x)
    theirs_meta = next(x["metaData"] for x in b if "metaData" in x)
    assert without_physical_names(json.loads(meta["schemaString"])) == \
        without_physical_names(json.loads(theirs_meta["schemaString"]))
    assert meta["partitionColumns"] == theirs_meta["partitionColumns"]
    return meta


CASES = {
    # name: (CREATE columns, statement run with autoMerge on, expected new schema (name, type) at top level)
    "positional_values": (
        "(id INT, s STRING)",
        "spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\nspark.sql(\"INSERT INTO {t} SELECT 2, 'b', 10L AS n\")",
        [("id", "integer"), ("s", "string"), ("n", "long")]),
    "by_name_nested": (
        "(id INT, st STRUCT<a: INT>)",
        "spark.sql(\"INSERT INTO {t} VALUES (1, named_struct('a', 1))\")\n"
        "spark.sql(\"INSERT INTO {t} BY NAME SELECT named_struct('a', 2, 'b', 'x') AS st, 'e' AS extra, 2 AS id\")",
        [("id", "integer"), ("st", {"type": "struct", "fields": [("a", "integer"), ("b", "string")]}),
         ("extra", "string")]),
    "insert_into_api": (
        "(id INT, s STRING)",
        "spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\n"
        "spark.range(2, 4).selectExpr('CAST(id AS INT) AS id', \"'b' AS s\", 'id * 2.5D AS d').write.insertInto('{t}')",
        [("id", "integer"), ("s", "string"), ("d", "double")]),
    "write_to_append": (
        "(id INT, s STRING)",
        "spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\n"
        "spark.range(2, 4).selectExpr(\"'b' AS s\", 'CAST(id AS INT) AS id', 'id > 2 AS flag').writeTo('{t}').append()",
        [("id", "integer"), ("s", "string"), ("flag", "boolean")]),
    "save_as_table_append": (
        "(id INT, s STRING)",
        "spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\n"
        "spark.range(2, 3).selectExpr('CAST(id AS INT) AS id', \"'b' AS s\", \"'z' AS z\")"
        ".write.format('{fmt}').mode('append').saveAsTable('{t}')",
        [("id", "integer"), ("s", "string"), ("z", "string")]),
    "partitioned": (
        "(id INT, p STRING) USING {fmt} PARTITIONED BY (p)",
        "spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\n"
        "spark.sql(\"INSERT INTO {t} SELECT 2, 'b', 'x' AS extra\")",
        [("id", "integer"), ("p", "string"), ("extra", "string")]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_insert_adds_the_new_columns_as_delta_spark_does(spark, delta_spark, tmp_path, case):
    create, statement, expected = CASES[case]
    ours, theirs = both(spark, delta_spark, tmp_path, create, statement)
    meta = assert_same_commit(ours, theirs)

    def simple(fields):
        return [(f["name"], simple(f["type"]["fields"]) if isinstance(f["type"], dict) else f["type"]) for f in fields]
    want = [(n, simple([{"name": a, "type": b} for a, b in t["fields"]]) if isinstance(t, dict) else t)
            for n, t in expected]
    assert simple(json.loads(meta["schemaString"])["fields"]) == want
    # one commit: the merged schema and the rows, nothing else in between
    assert [v for v in range(last_version(ours) + 1) if any("metaData" in a for a in actions(ours, v))] == \
        [0, last_version(ours)]
    assert any("add" in a for a in actions(ours, last_version(ours)))
    ours_rows = rows(spark, ours)
    assert ours_rows == rows_theirs(delta_spark, theirs)
    # the row written before the evolution reads NULL in every new column
    first = next(r for r in ours_rows if r[0] == 1)
    assert first[len(expected) - 1] is None
    # delta-spark reads deltalog's table the same way
    assert rows_theirs(delta_spark, ours) == ours_rows


def test_insert_with_schema_evolution_clause(spark, delta_spark, tmp_path):
    """Spark 4.2's ``INSERT WITH SCHEMA EVOLUTION INTO``: evolution for this statement only (no session conf)."""
    stmt = ("spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\n"
            "spark.sql(\"INSERT WITH SCHEMA EVOLUTION INTO {t} BY NAME SELECT 2 AS id, 'b' AS s, 7L AS n\")")
    ours, theirs = both(spark, delta_spark, tmp_path, "(id INT, s STRING)", stmt, auto_merge=False)
    meta = assert_same_commit(ours, theirs)
    assert [f["name"] for f in json.loads(meta["schemaString"])["fields"]] == ["id", "s", "n"]
    assert rows(spark, ours) == [(1, "a", None), (2, "b", 7)]


def test_write_to_merge_schema_option(spark, delta_spark, tmp_path):
    stmt = ("spark.sql(\"INSERT INTO {t} VALUES (1, 'a')\")\n"
            "spark.range(2, 3).selectExpr('CAST(id AS INT) AS id', \"'b' AS s\", \"'m' AS m\")"
            ".writeTo('{t}').option('mergeSchema', 'true').append()")
    ours, theirs = both(spark, delta_spark, tmp_path, "(id INT, s STRING)", stmt, auto_merge=False)
    meta = assert_same_commit(ours, theirs)
    assert [f["name"] for f in json.loads(meta["schemaString"])["fields"]] == ["id", "s", "m"]
    assert rows(spark, ours) == [(1, "a", None), (2, "b", "m")]


def test_column_mapping_table_gets_ids_for_new_columns(spark, delta_spark, tmp_path):
    create = "(id INT, st STRUCT<a: INT>) USING {fmt} TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"
    stmt = ("spark.sql(\"INSERT INTO {t} VALUES (1, named_struct('a', 1))\")\n"
            "spark.sql(\"INSERT INTO {t} BY NAME SELECT 2 AS id, named_struct('a', 2, 'b', 3L) AS st, 'n' AS n\")")
    ours, theirs = both(spark, delta_spark, tmp_path, create, stmt)
    meta = assert_same_commit(ours, theirs)
    theirs_meta = next(a["metaData"] for a in actions(theirs, last_version(theirs)) if "metaData" in a)
    assert meta["configuration"]["delta.columnMapping.maxColumnId"] == \
        theirs_meta["configuration"]["delta.columnMapping.maxColumnId"] == "5"
    fields = json.loads(meta["schemaString"])["fields"]
    n = next(f for f in fields if f["name"] == "n")
    b = next(f for f in next(f for f in fields if f["name"] == "st")["type"]["fields"] if f["name"] == "b")
    assert {n["metadata"]["delta.columnMapping.id"], b["metadata"]["delta.columnMapping.id"]} == {4, 5}
    assert n["metadata"]["delta.columnMapping.physicalName"] and b["metadata"]["delta.columnMapping.physicalName"]
    assert rows(spark, ours) == [(1, (1, None), None), (2, (2, 3), "n")]
    assert rows_theirs(delta_spark, ours) == rows_theirs(delta_spark, theirs) == rows(spark, ours)


@pytest.mark.parametrize("statement", [
    "INSERT INTO {t} SELECT 2, 'b', 10L AS n",
    "INSERT INTO {t} BY NAME SELECT 2 AS id, 'b' AS s, 10L AS n",
])
def test_without_auto_merge_the_insert_is_refused(spark, delta_spark, tmp_path, statement):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    spark.sql(f"CREATE TABLE deltalog.`{ours}` (id INT, s STRING) USING deltalog")
    delta_spark.run(f"spark.sql('''CREATE TABLE delta.`{theirs}` (id INT, s STRING) USING delta''')")
    before = sorted(p.name for p in (ours / "_delta_log").iterdir())
    with pytest.raises(Exception) as ours_error:
        spark.sql(statement.format(t=f"deltalog.`{ours}`"))
    from peers import PeerError
    with pytest.raises(PeerError) as theirs_error:
        delta_spark.run(f"spark.sql('''{statement.format(t=f'delta.`{theirs}`')}''')")
    assert sorted(p.name for p in (ours / "_delta_log").iterdir()) == before
    # deltalog refuses in Spark's analysis (Spark's error class), delta-spark in its write (schema mismatch)
    assert re.match(r"\[(INSERT_COLUMN_ARITY_MISMATCH\.TOO_MANY_DATA_COLUMNS|INCOMPATIBLE_DATA_FOR_TABLE\.EXTRA_COLUMNS)\]",
                    str(ours_error.value)), str(ours_error.value)[:300]
    assert "A schema mismatch detected when writing to the Delta table" in str(theirs_error.value), \
        str(theirs_error.value)[-1500:]
