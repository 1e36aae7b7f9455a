"""ALTER TABLE column statements on deltalog tables: ALTER COLUMN (comment, position, DROP NOT NULL,
SET/DROP DEFAULT, TYPE with type widening), RENAME COLUMN and DROP COLUMN(S) with column mapping.

Each test runs the same statements on a deltalog table and, in delta-spark 4.4, on a Delta table,
and compares commit by commit: the operation and its parameters, the schema with its field
metadata and the table properties. Rows written before and after the changes read the same in
both engines, and delta-spark reads the deltalog table identically. Refused statements raise
delta-spark's error class and leave the table at its version.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest


# ----------------------------------------------------------------------------- helpers

def commits(path: Path) -> list:
    """Every commit of the table: {"commitInfo", "metaData", "protocol"} (absent ones left out)."""
    out = []
    for f in sorted((path / "_delta_log").glob("*.json")):
        c = {}
        for line in f.read_text().splitlines():
            c.update({k: v for k, v in json.loads(line).items() if k in ("commitInfo", "metaData", "protocol")})
        out.append(c)
    return out


def version(path: Path) -> int:
    return len(list((path / "_delta_log").glob("*.json"))) - 1


def strip_physical(x):
    """Physical names are random UUIDs (col-...) in both engines: replaced by a marker when random."""
    if isinstance(x, dict):
        return {k: ("<phys>" if k == "delta.columnMapping.physicalName" and str(v).startswith("col-") else
                    strip_physical(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [strip_physical(v) for v in x]
    return x


def params(commit: dict) -> dict:
    """operationParameters with JSON values parsed; CHANGE COLUMNS' columns sorted by name
    (delta-spark lists them in hash order)."""
    out = {}
    for k, v in commit["commitInfo"].get("operationParameters", {}).items():
        try:
            v = json.loads(v)
        except (TypeError, ValueError):
            pass
        if k == "columns" and isinstance(v, list) and v and isinstance(v[0], dict):
            v = sorted(v, key=lambda c: c["name"])
        out[k] = strip_physical(v)
    return out


def schema(commit: dict) -> dict:
    return strip_physical(json.loads(commit["metaData"]["schemaString"]))


def run_ours(spark, path: Path, stmts: list) -> None:
    for s in stmts:
        spark.sql(s.format(t=f"deltalog.`{path}`", fmt="deltalog"))


def run_theirs(delta_spark, path: Path, stmts: list) -> None:
    delta_spark.run("""
        for s in args["stmts"]:
            spark.sql(s.format(t="delta.`" + args["p"] + "`", fmt="delta"))
    """, p=str(path), stmts=stmts)


def assert_same_commits(ours: Path, theirs: Path, first: int = 1) -> None:
    """Commits from `first` on: same operation, parameters, schema, properties, partition columns
    (the metadata for the ALTER statements; INSERTs write none)."""
    a, b = commits(ours), commits(theirs)
    assert len(a) == len(b), ([c["commitInfo"]["operation"] for c in a], [c["commitInfo"]["operation"] for c in b])
    for v, (x, y) in enumerate(zip(a, b)):
        if v < first:
            continue
        where = f"version {v} ({y['commitInfo']['operation']})"
        assert x["commitInfo"]["operation"] == y["commitInfo"]["operation"], where
        assert params(x) == params(y), where
        assert ("metaData" in x) == ("metaData" in y), where
        if "metaData" in y:
            assert schema(x) == schema(y), where
            assert x["metaData"]["configuration"] == y["metaData"]["configuration"], where
            assert x["metaData"]["partitionColumns"] == y["metaData"]["partitionColumns"], where


def rows_ours(spark, path: Path, order: str) -> list:
    """Rows as the peer returns them (JSON with str() for decimals, timestamps, map keys)."""
    rows = [r.asDict(recursive=True) for r in spark.read.format("deltalog").load(str(path)).orderBy(order).collect()]
    return json.loads(json.dumps(rows, default=str))


def rows_theirs(delta_spark, path: Path, order: str) -> list:
    return delta_spark.run("""
        result = [r.asDict(recursive=True) for r in
                  spark.read.format("delta").load(args["p"]).orderBy(args["o"]).collect()]
    """, p=str(path), o=order)


def theirs_error(delta_spark, path: Path, stmt: str) -> str:
    """delta-spark's error message for `stmt` on its table ("" when it succeeds)."""
    return delta_spark.run("""
        try:
            spark.sql(args["s"].format(t="delta.`" + args["p"] + "`"))
            result = ""
        except Exception as e:
            result = str(e)
    """, p=str(path), s=stmt)


def assert_refused_like_delta_spark(spark, delta_spark, ours: Path, theirs: Path, stmt: str, error_class: str):
    """Both engines refuse `stmt` with `error_class`; neither table gets a commit."""
    before = version(ours), version(theirs)
    with pytest.raises(Exception) as e:
        spark.sql(stmt.format(t=f"deltalog.`{ours}`"))
    assert error_class in str(e.value), str(e.value)[:2000]
    assert error_class in theirs_error(delta_spark, theirs, stmt)
    assert (version(ours), version(theirs)) == before, stmt
    return str(e.value)


# ----------------------------------------------------------------------------- ALTER COLUMN

def test_alter_column_comment_position_nullability_default(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stmts = [
        "CREATE TABLE {t} (id BIGINT NOT NULL, s STRUCT<a: INT, b: STRING>, c STRING NOT NULL, p STRING) "
        "USING {fmt} PARTITIONED BY (p) TBLPROPERTIES ('delta.feature.allowColumnDefaults' = 'supported')",
        "INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 'c1', 'p1')",
        "ALTER TABLE {t} ALTER COLUMN c COMMENT 'hello'",
        "ALTER TABLE {t} ALTER COLUMN c FIRST",
        "ALTER TABLE {t} ALTER COLUMN c AFTER id",
        "ALTER TABLE {t} ALTER COLUMN s.b FIRST",
        "ALTER TABLE {t} ALTER COLUMN s.a COMMENT 'nested'",
        "ALTER TABLE {t} ALTER COLUMN p COMMENT 'partition'",
        "ALTER TABLE {t} ALTER COLUMN c DROP NOT NULL",
        "ALTER TABLE {t} ALTER COLUMN c SET DEFAULT 'dflt'",
        "ALTER TABLE {t} ALTER COLUMN id SET DEFAULT 41 + 1",
        "INSERT INTO {t} (s, p) VALUES (named_struct('b', 'y', 'a', 2), 'p2')",
        "ALTER TABLE {t} ALTER COLUMN id DROP DEFAULT",
        "ALTER TABLE {t} CHANGE COLUMN c c STRING COMMENT 'both' AFTER s",
        "ALTER TABLE {t} ALTER COLUMN id COMMENT 'the id', c FIRST",
        "INSERT INTO {t} (id, s, c, p) VALUES (3, NULL, NULL, 'p1')",
    ]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    assert_same_commits(ours, theirs)
    last = commits(ours)[-2]  # the last ALTER
    assert last["commitInfo"]["operation"] == "CHANGE COLUMNS"
    assert params(last)["columns"] == [
        {"name": "c", "type": "string", "nullable": True, "metadata": {"comment": "both", "CURRENT_DEFAULT": "'dflt'"},
         "position": "FIRST"},
        {"name": "id", "type": "long", "nullable": False, "metadata": {"comment": "the id"}}]
    change = commits(ours)[3]
    assert change["commitInfo"]["operation"] == "CHANGE COLUMN"
    assert params(change) == {"column": {"name": "c", "type": "string", "nullable": False,
                                         "metadata": {"comment": "hello"}}, "position": "FIRST"}
    want = [{"c": "c1", "id": 1, "s": {"b": "x", "a": 1}, "p": "p1"},
            {"c": None, "id": 3, "s": None, "p": "p1"},
            {"c": "dflt", "id": 42, "s": {"b": "y", "a": 2}, "p": "p2"}]
    assert rows_ours(spark, ours, "id") == want
    assert rows_theirs(delta_spark, ours, "id") == want
    assert rows_theirs(delta_spark, theirs, "id") == want


def test_alter_column_refusals(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stmts = ["CREATE TABLE {t} (id BIGINT, c STRING, arr ARRAY<INT>, n INT, g BIGINT GENERATED ALWAYS AS (id + 1), "
             "dt DATE) USING {fmt} TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    # Spark's analysis refuses SET NOT NULL on a nullable column, for both engines
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN c SET NOT NULL",
                                    "Cannot change nullable column to non-nullable")
    msg = assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                          "ALTER TABLE {t} ALTER COLUMN c SET DEFAULT 'x'",
                                          "WRONG_COLUMN_DEFAULTS_FOR_DELTA_FEATURE_NOT_ENABLED")
    assert "'delta.feature.allowColumnDefaults' = 'supported'" in msg
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN arr.element COMMENT 'x'",
                                    "DELTA_UNSUPPORTED_COMMENT_MAP_ARRAY")
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN id TYPE STRING",
                                    "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP")
    # a narrowing never reaches the table: Spark's analysis refuses it for both engines
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN id TYPE INT", "NOT_SUPPORTED_CHANGE_COLUMN")
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN id TYPE DECIMAL(22, 0)",
                                    "DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE")
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN g TYPE DECIMAL(22, 0)",
                                    "DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH")
    # date -> timestamp_ntz needs the timestampNtz feature enabled by hand
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} ALTER COLUMN dt TYPE TIMESTAMP_NTZ",
                                    "DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT")
    # without delta.enableTypeWidening
    stmts = ["ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'false')"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    msg = assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                          "ALTER TABLE {t} ALTER COLUMN n TYPE BIGINT",
                                          "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP")
    assert "'delta.enableTypeWidening' = 'true'" in msg
    assert_same_commits(ours, theirs)


# ----------------------------------------------------------------------------- ALTER COLUMN TYPE

def test_type_widening(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stmts = [
        "CREATE TABLE {t} (b TINYINT, i INT, f FLOAT, d DECIMAL(5,2), dt DATE, s STRUCT<x: SMALLINT>, "
        "arr ARRAY<INT>, m MAP<INT, ARRAY<SMALLINT>>, k INT, p INT) USING {fmt} PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.enableTypeWidening' = 'true', 'delta.feature.timestampNtz' = 'supported')",
        "INSERT INTO {t} VALUES (1, 2, 1.5, 3.25, DATE'2024-01-02', named_struct('x', 7), array(1, 2), "
        "map(1, array(3S)), 5, 9)",
        "ALTER TABLE {t} ALTER COLUMN b TYPE SMALLINT",
        "ALTER TABLE {t} ALTER COLUMN b TYPE INT",
        "ALTER TABLE {t} ALTER COLUMN i TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN f TYPE DOUBLE",
        "ALTER TABLE {t} ALTER COLUMN d TYPE DECIMAL(10,4)",
        "ALTER TABLE {t} ALTER COLUMN dt TYPE TIMESTAMP_NTZ",
        "ALTER TABLE {t} ALTER COLUMN s.x TYPE INT",
        "ALTER TABLE {t} ALTER COLUMN arr.element TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN m.key TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN m.value.element TYPE INT",
        "ALTER TABLE {t} ALTER COLUMN p TYPE BIGINT",
        "ALTER TABLE {t} ALTER COLUMN b TYPE DOUBLE",
        "ALTER TABLE {t} ALTER COLUMN i TYPE BIGINT",  # already BIGINT: no commit in either engine
        "ALTER TABLE {t} CHANGE COLUMN k k DECIMAL(12,1) COMMENT 'kk' FIRST",
        "INSERT INTO {t} VALUES (12.5, 1.25, 30000000000, 2.5, 123456.1234, TIMESTAMP_NTZ'2024-05-06 07:08:09', "
        "named_struct('x', 100000), array(5000000000), map(6000000000, array(70000)), 8000000000)",
    ]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    assert_same_commits(ours, theirs)
    fields = {f["name"]: f for f in schema(commits(ours)[-1 - 1])["fields"]}
    assert fields["b"]["metadata"]["delta.typeChanges"] == [
        {"toType": "short", "fromType": "byte"}, {"toType": "integer", "fromType": "short"},
        {"toType": "double", "fromType": "integer"}]
    assert fields["m"]["metadata"]["delta.typeChanges"] == [
        {"toType": "long", "fromType": "integer", "fieldPath": "key"},
        {"toType": "integer", "fromType": "short", "fieldPath": "value.element"}]
    assert fields["s"]["type"]["fields"][0]["metadata"]["delta.typeChanges"] == [
        {"toType": "integer", "fromType": "short"}]
    # the type change is recorded in the schema, not in the operation's column
    assert params(commits(ours)[3]) == {"column": {"name": "b", "type": "integer", "nullable": True, "metadata": {
        "delta.typeChanges": [{"toType": "short", "fromType": "byte"}]}}}
    # no data file was rewritten: only the two INSERTs added files
    assert sum(1 for c in commits(ours) if c["commitInfo"]["operation"] == "WRITE") == 2
    want = rows_theirs(delta_spark, theirs, "p")
    assert rows_ours(spark, ours, "p") == want
    assert rows_theirs(delta_spark, ours, "p") == want
    assert [(r["i"], r["k"], r["dt"], r["m"]) for r in want] == [
        (2, "5.0", "2024-01-02 00:00:00", {"1": [3]}), (30000000000, "12.5", "2024-05-06 07:08:09", {"6000000000": [70000]})]
    # data skipping over files written before the change
    got = spark.sql(f"SELECT i, p FROM deltalog.`{ours}` WHERE i > 3 AND dt > TIMESTAMP_NTZ'2024-01-01 12:00:00'")
    assert [tuple(r) for r in got.collect()] == [(30000000000, 8000000000)]


# ----------------------------------------------------------------------------- RENAME / DROP COLUMN

@pytest.mark.parametrize("mode", ["name", "id"])
def test_rename_and_drop_columns(spark, tmp_path, delta_spark, mode):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create = ("CREATE TABLE {t} (id BIGINT, s STRUCT<a: INT, b: STRING>, c STRING, d INT, "
              "g INT GENERATED ALWAYS AS (d + 1), e INT, p STRING) USING {fmt} PARTITIONED BY (p) "
              f"TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}', 'delta.enableChangeDataFeed' = 'true', "
              "'delta.dataSkippingStatsColumns' = 'id,c,s.b,e')")
    insert = "INSERT INTO {t} (id, s, c, d, e, p) VALUES (1, named_struct('a', 1, 'b', 'x'), 'c1', 5, 6, 'p1')"
    run_ours(spark, ours, [create, insert])
    run_theirs(delta_spark, theirs, [create, insert])
    # a CHECK constraint (ADD CONSTRAINT is another statement's work: the property is what it writes)
    delta_spark.run("""spark.sql("ALTER TABLE delta.`" + args["p"] + "` ADD CONSTRAINT ck CHECK (id > 0)")""",
                    p=str(theirs))
    run_ours(spark, ours, ["ALTER TABLE {t} SET TBLPROPERTIES ('delta.constraints.ck' = 'id > 0')"])
    stmts = [
        "ALTER TABLE {t} RENAME COLUMN c TO c2",
        "ALTER TABLE {t} RENAME COLUMN s.a TO a2",
        "ALTER TABLE {t} RENAME COLUMN p TO p2",
        "ALTER TABLE {t} DROP COLUMN g",
        "ALTER TABLE {t} DROP COLUMNS (C2, s.b)",
        "ALTER TABLE {t} DROP COLUMN IF EXISTS zz",  # nothing to drop: no commit
        "INSERT INTO {t} (id, s, d, e, p2) VALUES (2, named_struct('a2', 2), 7, 8, 'p2')",
    ]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    a, b = commits(ours), commits(theirs)
    # the constraint commit differs in name (ADD CONSTRAINT vs SET TBLPROPERTIES); compare the rest
    assert [c["commitInfo"]["operation"] for c in a[3:]] == [c["commitInfo"]["operation"] for c in b[3:]] == [
        "RENAME COLUMN", "RENAME COLUMN", "RENAME COLUMN", "DROP COLUMNS", "DROP COLUMNS", "WRITE"]
    assert_same_commits(ours, theirs, first=3)
    assert params(a[4]) == {"oldColumnPath": "s.a", "newColumnPath": "s.a2"}
    assert params(a[7]) == {"columns": ["c2", "s.b"]}
    assert a[7]["metaData"]["configuration"]["delta.dataSkippingStatsColumns"] == "id,e"
    # renamed fields keep their physical names and ids
    def field(c, n):
        return next(f for f in json.loads(c["metaData"]["schemaString"])["fields"] if f["name"] == n)
    assert field(a[3], "c2")["metadata"] == field(a[0], "c")["metadata"]
    assert field(a[5], "p2")["metadata"] == field(a[0], "p")["metadata"]
    want = [{"id": 1, "s": {"a2": 1}, "d": 5, "e": 6, "p2": "p1"}, {"id": 2, "s": {"a2": 2}, "d": 7, "e": 8, "p2": "p2"}]
    assert rows_ours(spark, ours, "id") == want
    assert rows_theirs(delta_spark, ours, "id") == want
    assert rows_theirs(delta_spark, theirs, "id") == want
    # refused as delta-spark refuses them, nothing committed
    for stmt, error_class in [
            ("ALTER TABLE {t} RENAME COLUMN id TO id2", "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE"),
            ("ALTER TABLE {t} DROP COLUMN id", "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE"),
            ("ALTER TABLE {t} DROP COLUMN p2", "DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN"),
            ("ALTER TABLE {t} DROP COLUMN s.a2", "DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA"),
            ("ALTER TABLE {t} RENAME COLUMN e TO D", "FIELD_ALREADY_EXISTS")]:
        assert_refused_like_delta_spark(spark, delta_spark, ours, theirs, stmt, error_class)


def test_rename_drop_generated_dependencies_and_all_columns(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stmts = ["CREATE TABLE {t} (a INT, b INT, g INT GENERATED ALWAYS AS (b * 2)) USING {fmt} "
             "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    for stmt, error_class in [
            ("ALTER TABLE {t} RENAME COLUMN b TO b2", "DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE"),
            ("ALTER TABLE {t} DROP COLUMN b", "DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE"),
            # columns are taken out one after the other (before dependencies are checked): the last one
            # left cannot go
            ("ALTER TABLE {t} DROP COLUMNS (a, g, b)", "DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA")]:
        assert_refused_like_delta_spark(spark, delta_spark, ours, theirs, stmt, error_class)
    # the generated column is checked as it was before the statement: it cannot go with its column
    for stmt in ["ALTER TABLE {t} DROP COLUMNS (b, g)", "ALTER TABLE {t} DROP COLUMNS (g, b)"]:
        assert_refused_like_delta_spark(spark, delta_spark, ours, theirs, stmt,
                                        "DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE")
    stmts = ["ALTER TABLE {t} DROP COLUMN g", "ALTER TABLE {t} DROP COLUMN b"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs, "ALTER TABLE {t} DROP COLUMN a",
                                    "DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA")
    assert_same_commits(ours, theirs)


def test_rename_and_drop_need_column_mapping_which_alter_table_enables(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stmts = ["CREATE TABLE {t} (id BIGINT, s STRUCT<a: INT>, arr ARRAY<STRUCT<x: INT>>, v STRING) USING {fmt}",
             "INSERT INTO {t} VALUES (1, named_struct('a', 2), array(named_struct('x', 3)), 'v1')"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    for stmt, error_class in [("ALTER TABLE {t} RENAME COLUMN v TO w", "DELTA_UNSUPPORTED_RENAME_COLUMN"),
                              ("ALTER TABLE {t} DROP COLUMN v", "DELTA_UNSUPPORTED_DROP_COLUMN")]:
        msg = assert_refused_like_delta_spark(spark, delta_spark, ours, theirs, stmt, error_class)
        assert "SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')" in msg
    stmts = ["ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    a, b = commits(ours)[-1], commits(theirs)[-1]
    assert a["protocol"] == b["protocol"] or (
        (a["protocol"]["minReaderVersion"], a["protocol"]["minWriterVersion"]) ==
        (b["protocol"]["minReaderVersion"], b["protocol"]["minWriterVersion"]) and
        sorted(a["protocol"].get("writerFeatures", [])) == sorted(b["protocol"].get("writerFeatures", [])))
    assert_refused_like_delta_spark(spark, delta_spark, ours, theirs,
                                    "ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'id')",
                                    "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE")
    stmts = ["ALTER TABLE {t} RENAME COLUMN v TO w",
             "ALTER TABLE {t} RENAME COLUMN arr.element.x TO y",
             "ALTER TABLE {t} DROP COLUMN id",
             "INSERT INTO {t} VALUES (named_struct('a', 4), array(named_struct('y', 5)), 'w2')"]
    run_ours(spark, ours, stmts)
    run_theirs(delta_spark, theirs, stmts)
    assert_same_commits(ours, theirs)
    want = [{"s": {"a": 2}, "arr": [{"y": 3}], "w": "v1"}, {"s": {"a": 4}, "arr": [{"y": 5}], "w": "w2"}]
    assert rows_ours(spark, ours, "w") == want
    assert rows_theirs(delta_spark, ours, "w") == want
    assert rows_theirs(delta_spark, theirs, "w") == want
