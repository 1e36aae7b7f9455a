"""ALTER TABLE ADD CONSTRAINT ... CHECK / DROP CONSTRAINT on deltalog tables. The commits must be
the ones delta-spark 4.4 writes for the same statements (operation, parameters, table property,
protocol after), existing rows are validated before anything is written (false and NULL both
violate, as in delta-spark), later writes of either engine enforce the constraint, and a concurrent
commit adding files makes the constraint's commit fail instead of skipping the new rows.
"""
from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

SCHEMA = "(id BIGINT, s STRUCT<a: INT, b: STRING>, x INT)"


def versions(path: Path) -> list:
    return sorted(int(f.name[:20]) for f in (path / "_delta_log").glob("*.json"))


def commit(path: Path, v: int | None = None) -> dict:
    v = versions(path)[-1] if v is None else v
    out = {}
    for line in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines():
        out.update(json.loads(line))
    return out


def protocol_at(path: Path) -> dict:
    """The latest protocol action of the table (read from its JSON commits)."""
    p = None
    for v in versions(path):
        p = commit(path, v).get("protocol", p)
    return p


def configuration(path: Path) -> dict:
    m = None
    for v in versions(path):
        m = commit(path, v).get("metaData", m)
    return m["configuration"]


def norm_protocol(p: dict) -> tuple:
    return (p["minReaderVersion"], p["minWriterVersion"], sorted(p.get("readerFeatures") or []),
            sorted(p.get("writerFeatures") or []))


# Statements run by both engines on their own table, in this order; {t} is the table.
STEPS = [
    "INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 5), (2, named_struct('a', 2, 'b', 'y'), 7)",
    "ALTER TABLE {t} ADD CONSTRAINT MyCons CHECK ( id  >  0 AND id<100 )",
    "ALTER TABLE {t} ADD CONSTRAINT nested CHECK (s.a>0 -- the struct's field\n)",
    "ALTER TABLE {t} ADD CONSTRAINT strs CHECK (s.b <> 'it''s' AND x IS NOT NULL /* c */ OR x<=>-1)",
    "ALTER TABLE {t} DROP CONSTRAINT MYCONS",
    "ALTER TABLE {t} DROP CONSTRAINT IF EXISTS mycons",
]


@pytest.mark.parametrize("props", ["", "TBLPROPERTIES ('delta.minWriterVersion' = '1')",
                                   "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"],
                         ids=["default", "writer1", "features"])
def test_commits_match_delta_spark(spark, tmp_path, delta_spark, props):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    create = f"CREATE TABLE {{t}} {SCHEMA} USING {{fmt}} {props}"
    spark.sql(create.format(t=f"deltalog.`{ours}`", fmt="deltalog"))
    ours_per_step = []
    for s in STEPS:
        spark.sql(s.format(t=f"deltalog.`{ours}`"))
        ours_per_step.append((commit(ours), protocol_at(ours), configuration(ours)))
    theirs_per_step = delta_spark.run("""
        import glob, json, os
        p = args["p"]
        def log():
            vs = sorted(int(os.path.basename(f)[:20]) for f in glob.glob(p + "/_delta_log/*.json"))
            proto, conf, last = None, None, None
            for v in vs:
                c = {}
                for line in open(f"{p}/_delta_log/{v:020d}.json"):
                    c.update(json.loads(line))
                proto = c.get("protocol", proto)
                conf = c.get("metaData", {}).get("configuration", conf) if "metaData" in c else conf
                last = c
            return [last, proto, conf]
        t = "delta.`" + p + "`"
        spark.sql(args["create"].format(t=t, fmt="delta"))
        result = []
        for s in args["steps"]:
            spark.sql(s.format(t=t))
            result.append(log())
    """, p=str(theirs), create=create, steps=STEPS)
    for step, (a, b) in enumerate(zip(ours_per_step, theirs_per_step)):
        (ca, pa, conf_a), (cb, pb, conf_b) = a, b
        where = STEPS[step]
        assert ca["commitInfo"]["operation"] == cb["commitInfo"]["operation"], where
        assert ca["commitInfo"]["operationParameters"] == cb["commitInfo"]["operationParameters"], where
        assert ("metaData" in ca) == ("metaData" in cb), where
        assert norm_protocol(pa) == norm_protocol(pb), where
        assert {k: v for k, v in conf_a.items() if k.startswith("delta.constraints.")} == \
            {k: v for k, v in conf_b.items() if k.startswith("delta.constraints.")}, where
    # what the steps left: two constraints, stored in delta-spark's spelling
    assert {k: v for k, v in configuration(ours).items() if k.startswith("delta.constraints.")} == {
        "delta.constraints.nested": "s . a > 0",
        "delta.constraints.strs": "s . b <> 'it' 's' AND x IS NOT NULL OR x <=> - 1"}
    assert "checkConstraints" in (protocol_at(ours).get("writerFeatures") or []) or \
        protocol_at(ours)["minWriterVersion"] == 3


VIOLATING_ROWS = ("INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 5), "
                  "(2, named_struct('a', -1, 'b', 'y'), NULL), (3, NULL, 7)")
REFUSED = {"x > 0": 1,        # x NULL violates
           "s.a > 0": 2,      # a = -1, and the NULL struct (s.a NULL) violates
           "id > 1": 1}


def test_violating_rows_refuse_the_constraint(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    t = f"deltalog.`{ours}`"
    spark.sql(f"CREATE TABLE {t} {SCHEMA} USING deltalog")
    spark.sql(VIOLATING_ROWS.format(t=t))
    before = versions(ours)
    ours_msgs = {}
    for i, (cond, n) in enumerate(REFUSED.items()):
        with pytest.raises(Exception, match="DELTA_NEW_CHECK_CONSTRAINT_VIOLATION") as e:
            spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT c{i} CHECK ({cond})")
        msg = str(e.value)
        ours_msgs[cond] = msg
        assert re.search(rf"\b{n} rows in .*{re.escape(str(ours))}.* violate the new CHECK constraint", msg), msg
    assert versions(ours) == before
    assert not any(k.startswith("delta.constraints.") for k in configuration(ours))
    # delta-spark counts the same rows on its own copy of the table
    theirs_msgs = delta_spark.run("""
        t = "delta.`" + args["p"] + "`"
        spark.sql("CREATE TABLE " + t + " " + args["schema"] + " USING delta")
        spark.sql(args["rows"].format(t=t))
        result = {}
        for i, cond in enumerate(args["conds"]):
            try:
                spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT c{i} CHECK ({cond})")
                result[cond] = "added"
            except Exception as e:
                result[cond] = str(e)
    """, p=str(theirs), schema=SCHEMA, rows=VIOLATING_ROWS, conds=list(REFUSED))
    for cond, n in REFUSED.items():
        m = re.search(r"\[DELTA_NEW_CHECK_CONSTRAINT_VIOLATION\] (\d+) rows in .* violate the new CHECK "
                      r"constraint \((.*)\)", theirs_msgs[cond])
        assert m and int(m.group(1)) == n, theirs_msgs[cond]
        assert ours_msgs[cond].rstrip().endswith(f"violate the new CHECK constraint ({m.group(2)})"), ours_msgs[cond]
    # a constraint the rows satisfy is added
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT ok CHECK (id BETWEEN 1 AND 3)")
    assert configuration(ours)["delta.constraints.ok"] == "id BETWEEN 1 AND 3"


def test_constraint_errors_write_nothing(spark, tmp_path):
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} {SCHEMA} USING deltalog")
    spark.sql(f"INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 5)")
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT c CHECK (id > 0)")
    before = versions(path)
    cases = [
        (f"ALTER TABLE {t} ADD CONSTRAINT C CHECK (id > 1)",
         r"DELTA_CONSTRAINT_ALREADY_EXISTS.*Constraint 'c' already exists.*\n.*\nid > 0"),
        (f"ALTER TABLE {t} ADD CONSTRAINT u CHECK (nope > 0)", r"UNRESOLVED_COLUMN.*nope"),
        (f"ALTER TABLE {t} ADD CONSTRAINT u CHECK (s.nope > 0)", r"nope"),
        (f"ALTER TABLE {t} ADD CONSTRAINT nb CHECK (id + 1)",
         r"DELTA_NON_BOOLEAN_CHECK_CONSTRAINT.*CHECK constraint 'nb' \(id \+ 1\) should be a boolean expression"),
        (f"ALTER TABLE {t} ADD CONSTRAINT r CHECK (rand() > 0.5)", r"DELTA_INVALID_CHECK_CONSTRAINT.*deterministic"),
        (f"ALTER TABLE {t} ADD CHECK (id > 0)", r"DELTA_UNSUPPORTED_ALTER_TABLE.*needs a name"),
        (f"ALTER TABLE {t} DROP CONSTRAINT nope", r"DELTA_CONSTRAINT_DOES_NOT_EXIST.*nope"),
    ]
    for sql, pattern in cases:
        with pytest.raises(Exception) as e:
            spark.sql(sql)
        assert re.search(pattern, str(e.value), re.S), (sql, str(e.value))
    assert versions(path) == before
    assert configuration(path) == {"delta.constraints.c": "id > 0"}


def test_writes_enforce_added_constraint_and_not_dropped_one(spark, tmp_path):
    db = "cons_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'wh'}'")
    try:
        t = f"{db}.t"
        spark.sql(f"CREATE TABLE {t} {SCHEMA} USING deltalog")
        spark.sql(f"INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 5)")
        spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT pos CHECK (x > 0 AND s.a > 0)")
        loc = Path(spark.sql(f"DESCRIBE DETAIL {t}").collect()[0]["location"].replace("file:", ""))
        assert commit(loc)["commitInfo"]["operation"] == "ADD CONSTRAINT"
        for bad in ("(2, named_struct('a', 1, 'b', 'x'), -5)", "(2, named_struct('a', 1, 'b', 'x'), NULL)",
                    "(2, named_struct('a', -1, 'b', 'x'), 5)"):
            with pytest.raises(Exception, match="DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"):
                spark.sql(f"INSERT INTO {t} VALUES {bad}")
        spark.sql(f"INSERT INTO {t} VALUES (2, named_struct('a', 2, 'b', 'y'), 6)")
        assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 2
        spark.sql(f"ALTER TABLE {t} DROP CONSTRAINT pos")
        spark.sql(f"INSERT INTO {t} VALUES (3, named_struct('a', -1, 'b', 'z'), -5)")
        assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {t}").collect()) == [1, 2, 3]
        # the dropped constraint's rows now block adding it again
        with pytest.raises(Exception, match=r"DELTA_NEW_CHECK_CONSTRAINT_VIOLATION.*1 rows"):
            spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT pos CHECK (x > 0 AND s.a > 0)")
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def test_delta_spark_enforces_a_constraint_deltalog_added(spark, tmp_path, delta_spark):
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} {SCHEMA} USING deltalog")
    spark.sql(f"INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 5)")
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT nested CHECK (s.a > 0)")
    got = delta_spark.run("""
        t = "delta.`" + args["p"] + "`"
        try:
            spark.sql("INSERT INTO " + t + " VALUES (2, named_struct('a', -1, 'b', 'y'), 1)")
            refused = None
        except Exception as e:
            refused = str(e)
        spark.sql("INSERT INTO " + t + " VALUES (3, named_struct('a', 3, 'b', 'z'), 1)")
        result = {"refused": refused}
    """, p=str(path))
    assert got["refused"] and "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in got["refused"], got
    assert "nested" in got["refused"]
    assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {t}").collect()) == [1, 3]


def test_concurrent_append_makes_the_constraint_commit_fail(spark, tmp_path):
    """The rows are validated on the transaction's snapshot; a file added in between was never
    checked, so the commit must not go through (the whole table was read: ConcurrentAppend)."""
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} {SCHEMA} USING deltalog")
    spark.sql(f"INSERT INTO {t} VALUES (1, named_struct('a', 1, 'b', 'x'), 5)")
    add = spark._jvm.io.deltalog.spark.AddConstraint
    pending = add.prepare(spark._jsparkSession, str(path), t, "pos", "x > 0")
    spark.sql(f"INSERT INTO {t} VALUES (2, named_struct('a', 1, 'b', 'x'), -5)")  # violates, not yet enforced
    before = versions(path)
    with pytest.raises(Exception, match="DELTA_CONCURRENT_APPEND"):
        pending.commit()
    assert versions(path) == before
    assert not any(k.startswith("delta.constraints.") for k in configuration(path))
    # a concurrent metadata change conflicts too
    pending = add.prepare(spark._jsparkSession, str(path), t, "idpos", "id > 0")
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.appendOnly' = 'false')")
    with pytest.raises(Exception, match="DELTA_METADATA_CHANGED"):
        pending.commit()
    # with nothing in between it commits
    pending = add.prepare(spark._jsparkSession, str(path), t, "idpos", "id > 0")
    assert pending.commit() == versions(path)[-1]
    assert configuration(path)["delta.constraints.idpos"] == "id > 0"
