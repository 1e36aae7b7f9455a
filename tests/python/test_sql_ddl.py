"""CREATE TABLE column definitions (issue 26): NOT NULL, COMMENT, DEFAULT, GENERATED ALWAYS AS (expr),
GENERATED ... AS IDENTITY. The log must hold what delta-spark 4.4 writes for the same statement
(schema with its field metadata, and the protocol's features), INSERT must fill identity, generated
and default columns left out of the statement, and delta-spark must take writes into the table
deltalog created (identity values continue above deltalog's high-water mark).
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

COLUMNS = ("(id BIGINT NOT NULL COMMENT 'the id', g BIGINT GENERATED ALWAYS AS (id * 2), d STRING DEFAULT 'x', "
           "i BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5), p STRING)")
PROPS = "TBLPROPERTIES ('delta.feature.allowColumnDefaults' = 'supported')"


def log0(path: Path) -> dict:
    out = {}
    for line in (path / "_delta_log" / f"{0:020d}.json").read_text().splitlines():
        a = json.loads(line)
        out.update({k: v for k, v in a.items() if k in ("metaData", "protocol")})
    return out


def test_column_definitions_are_logged_as_delta_spark_logs_them(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    spark.sql(f"CREATE TABLE deltalog.`{ours}` {COLUMNS} USING deltalog PARTITIONED BY (p) {PROPS}")
    delta_spark.run(f"spark.sql('''CREATE TABLE delta.`{theirs}` {COLUMNS} USING delta PARTITIONED BY (p) {PROPS}''')")
    a, b = log0(ours), log0(theirs)
    assert json.loads(a["metaData"]["schemaString"]) == json.loads(b["metaData"]["schemaString"])
    assert a["metaData"]["partitionColumns"] == b["metaData"]["partitionColumns"] == ["p"]
    assert (a["protocol"]["minReaderVersion"], a["protocol"]["minWriterVersion"]) == \
        (b["protocol"]["minReaderVersion"], b["protocol"]["minWriterVersion"])
    assert sorted(a["protocol"].get("writerFeatures", [])) == sorted(b["protocol"].get("writerFeatures", []))
    assert {"generatedColumns", "identityColumns", "allowColumnDefaults"} <= set(a["protocol"]["writerFeatures"])


def test_insert_fills_identity_generated_and_default_columns(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} {COLUMNS} USING deltalog PARTITIONED BY (p) {PROPS}")
    spark.sql(f"INSERT INTO {t} (id, p) VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO {t} (id, d, p) VALUES (3, 'y', 'a')")
    rows = sorted(tuple(r) for r in spark.sql(f"SELECT id, g, d, i, p FROM {t}").collect())
    assert [r[:3] for r in rows] == [(1, 2, "x"), (2, 4, "x"), (3, 6, "y")]
    ids = sorted(r[3] for r in rows)
    assert len(set(ids)) == 3 and all(i >= 10 and (i - 10) % 5 == 0 for i in ids), ids
    # a value that contradicts the generation expression is refused, nothing committed
    with pytest.raises(Exception, match="DELTA_GENERATED_COLUMN_MISMATCH"):
        spark.sql(f"INSERT INTO {t} (id, g, p) VALUES (4, 9, 'a')")
    with pytest.raises(Exception, match="NOT NULL|DELTA_NOT_NULL_CONSTRAINT_VIOLATED|NULL"):
        spark.sql(f"INSERT INTO {t} (id, p) VALUES (NULL, 'a')")
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 3
    # delta-spark appends to the table deltalog created: its identity values continue above ours
    got = delta_spark.run(f"""
        spark.sql("INSERT INTO delta.`{path}` (id, p) VALUES (5, 'c')")
        result = [r.asDict() for r in spark.sql("SELECT id, g, d, i FROM delta.`{path}`").collect()]
    """)
    new = next(r for r in got if r["id"] == 5)
    assert new["g"] == 10 and new["d"] == "x" and new["i"] > max(ids) and (new["i"] - 10) % 5 == 0
    assert sorted(r["i"] for r in got if r["id"] != 5) == ids


def test_column_definition_errors(spark, tmp_path):
    with pytest.raises(Exception, match="WRONG_COLUMN_DEFAULTS_FOR_DELTA_FEATURE_NOT_ENABLED"):
        spark.sql(f"CREATE TABLE deltalog.`{tmp_path / 'a'}` (id BIGINT, d STRING DEFAULT 'x') USING deltalog")
    with pytest.raises(Exception, match="DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE"):
        spark.sql(f"CREATE TABLE deltalog.`{tmp_path / 'b'}` (i INT GENERATED ALWAYS AS IDENTITY) USING deltalog")
    for name in ("a", "b"):
        assert not (tmp_path / name).exists()
    db = "ddl_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'wh'}'")
    try:
        # other providers cannot keep generated columns: refused, not silently dropped
        with pytest.raises(Exception, match="generated (and identity )?columns"):
            spark.sql(f"CREATE TABLE {db}.pq (id BIGINT, g BIGINT GENERATED ALWAYS AS (id + 1)) USING parquet")
        assert not spark.catalog.tableExists(f"{db}.pq")
        # a managed deltalog table keeps them
        spark.sql(f"CREATE TABLE {db}.t (id BIGINT, g BIGINT GENERATED ALWAYS AS (id + 1)) USING deltalog")
        spark.sql(f"INSERT INTO {db}.t (id) VALUES (41)")
        assert [tuple(r) for r in spark.sql(f"SELECT id, g FROM {db}.t").collect()] == [(41, 42)]
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def _last_commit(path: Path) -> dict:
    v = max(int(f.name[:20]) for f in (path / "_delta_log").glob("*.json"))
    out = {}
    for line in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines():
        out.update(json.loads(line))
    return out


@pytest.mark.parametrize("mapping", ["none", "name"])
def test_add_columns_as_delta_spark_does(spark, tmp_path, delta_spark, mapping):
    """ALTER TABLE ADD COLUMNS (FIRST, AFTER, into a struct, with a comment): the same schema and
    commit as delta-spark's for the same statements; old rows read NULL in both engines."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create = (f"CREATE TABLE {{t}} (id BIGINT, s STRUCT<a: INT, b: STRING>) USING {{fmt}} "
              f"TBLPROPERTIES ('delta.columnMapping.mode' = '{mapping}')")
    alter = ["ALTER TABLE {t} ADD COLUMNS (c STRING COMMENT 'new' FIRST, d DOUBLE AFTER id)",
             "ALTER TABLE {t} ADD COLUMNS (s.z BIGINT AFTER a, e DATE)"]
    spark.sql(create.format(t=f"deltalog.`{ours}`", fmt="deltalog"))
    spark.sql(f"INSERT INTO deltalog.`{ours}` (id, s) VALUES (1, named_struct('a', 1, 'b', 'x'))")
    for a in alter:
        spark.sql(a.format(t=f"deltalog.`{ours}`"))
    delta_spark.run("""
        t = "delta.`" + args["p"] + "`"
        spark.sql(args["create"].format(t=t, fmt="delta"))
        spark.sql("INSERT INTO " + t + " (id, s) VALUES (1, named_struct('a', 1, 'b', 'x'))")
        for a in args["alter"]:
            spark.sql(a.format(t=t))
    """, p=str(theirs), create=create, alter=alter)
    a, b = _last_commit(ours), _last_commit(theirs)

    def strip_ids(schema: dict) -> dict:  # physical names are random UUIDs in both engines
        def walk(x):
            if isinstance(x, dict):
                return {k: ("<phys>" if k == "delta.columnMapping.physicalName" else walk(v)) for k, v in x.items()}
            if isinstance(x, list):
                return [walk(v) for v in x]
            return x
        return walk(schema)

    assert strip_ids(json.loads(a["metaData"]["schemaString"])) == strip_ids(json.loads(b["metaData"]["schemaString"]))
    assert a["metaData"]["configuration"] == b["metaData"]["configuration"]
    assert a["commitInfo"]["operation"] == b["commitInfo"]["operation"] == "ADD COLUMNS"
    assert json.loads(a["commitInfo"]["operationParameters"]["columns"]) == \
        json.loads(b["commitInfo"]["operationParameters"]["columns"])
    # reads: old rows have NULL in the new columns, in both engines, on both tables
    want = [{"c": None, "id": 1, "d": None, "s": {"a": 1, "z": None, "b": "x"}, "e": None}]
    assert [r.asDict(recursive=True) for r in spark.read.format("deltalog").load(str(ours)).collect()] == want
    got = delta_spark.run("""
        result = [r.asDict(recursive=True) for r in spark.read.format("delta").load(args["p"]).collect()]
    """, p=str(ours))
    assert got == want
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_ALTER_TABLE"):
        spark.sql(f"ALTER TABLE deltalog.`{ours}` ADD COLUMNS (n INT NOT NULL)")


def _last_commit_info(path: Path) -> dict:
    last = sorted((path / "_delta_log").glob("*.json"))[-1]
    return next(json.loads(l)["commitInfo"] for l in last.read_text().splitlines() if l.startswith('{"commitInfo"'))


def test_set_and_unset_tblproperties_commits_as_delta_spark(spark, tmp_path, delta_spark):
    """The raw commitInfo of SET / UNSET TBLPROPERTIES: the same operation and parameters, with the same
    JSON types (delta-spark writes UNSET's ifExists as a JSON boolean)."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    statements = ["CREATE TABLE {t} (id INT) USING {fmt}",
                  "ALTER TABLE {t} SET TBLPROPERTIES ('a.b' = 'c', 'delta.appendOnly' = 'false')",
                  "ALTER TABLE {t} UNSET TBLPROPERTIES IF EXISTS ('a.b', 'nope')",
                  "ALTER TABLE {t} UNSET TBLPROPERTIES ('delta.appendOnly')"]
    infos = []
    for s in statements:
        spark.sql(s.format(t=f"deltalog.`{ours}`", fmt="deltalog"))
        delta_spark.run(f"spark.sql('''{s.format(t=f'delta.`{theirs}`', fmt='delta')}''')")
        infos.append((_last_commit_info(ours), _last_commit_info(theirs)))
    for mine, peer in infos[1:]:
        assert mine["operation"] == peer["operation"]
        assert mine["operationParameters"] == peer["operationParameters"], (mine, peer)
