"""Every Spark write path into a deltalog table ends in one deltalog commit or is refused before
anything is written (issue 23): SQL INSERT INTO / OVERWRITE (static and dynamic partitions, by
position and by name), insertInto, saveAsTable in all four modes, CTAS / RTAS, writeTo(...),
TRUNCATE, DROP TABLE, ALTER TABLE ... SET LOCATION and plain Parquet writes into a table's folder.

After each write the rows are checked through Spark and through delta-rs (``deltalake``, an
independent reader), the version through the log, and ``_delta_log`` is checked to be intact; a
refusal must leave the table's folder byte for byte as it was.
"""
from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import pytest

import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it

from pyspark.sql import functions as F


# ----------------------------------------------------------------------------- helpers

@pytest.fixture(scope="module")
def db(spark, tmp_path_factory):
    """A database whose managed tables live in a temporary folder (not the working directory)."""
    name = "sqlw_" + uuid.uuid4().hex[:8]
    location = tmp_path_factory.mktemp("warehouse")
    spark.sql(f"CREATE DATABASE {name} LOCATION '{location}'")
    yield name
    spark.sql(f"DROP DATABASE {name} CASCADE")


def name(db: str) -> str:
    return f"{db}.t_{uuid.uuid4().hex[:8]}"


def location(spark, table: str) -> Path:
    row = [r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect() if r.col_name == "Location"][0]
    return Path(row.data_type.replace("file:", ""))


def versions(path: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))


def commit_info(path: Path, version: int) -> dict:
    lines = (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    return [json.loads(x)["commitInfo"] for x in lines if x.strip() and "commitInfo" in json.loads(x)][0]


def metadata(path: Path) -> dict:
    meta = None
    for v in versions(path):
        for line in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines():
            if line.strip() and "metaData" in json.loads(line):
                meta = json.loads(line)["metaData"]
    return meta


def assert_log_intact(path: Path) -> None:
    """Every commit from 0 to the latest is there and parses; delta-rs opens the table at it."""
    vs = versions(path)
    assert vs == list(range(len(vs))), f"commits missing in {path}: {vs}"
    for v in vs:
        for line in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines():
            if line.strip():
                json.loads(line)
    assert deltalake.DeltaTable(str(path)).version() == vs[-1]


def rows(spark, table: str, key: str = "id") -> list[tuple]:
    return sorted(tuple(r) for r in spark.table(table).orderBy(key).collect())


def rows_rs(path: Path) -> list[tuple]:
    t = deltalake.DeltaTable(str(path)).to_pyarrow_table()
    cols = t.column_names
    return sorted(tuple(r[c] for c in cols) for r in t.to_pylist())


def check(spark, table: str, expected: list[tuple], version: int) -> Path:
    """Rows through Spark and delta-rs, the latest version, the log intact."""
    path = location(spark, table)
    assert rows(spark, table, spark.table(table).columns[0]) == sorted(expected)
    assert rows_rs(path) == sorted(expected)
    assert versions(path)[-1] == version
    assert_log_intact(path)
    return path


def fingerprint(path: Path) -> dict[str, str]:
    """Every file under `path` (relative name -> content hash)."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def refused(fn, error_class: str) -> None:
    with pytest.raises(Exception) as e:
        fn()
    assert error_class in str(e.value), str(e.value)[:2000]


# ----------------------------------------------------------------------------- INSERT

def test_insert_into_values_select_and_insert_into_api(spark, db):
    t = name(db)
    spark.range(5).write.format("deltalog").saveAsTable(t)
    spark.sql(f"INSERT INTO {t} VALUES (10), (11)")
    check(spark, t, [(i,) for i in [0, 1, 2, 3, 4, 10, 11]], 1)
    spark.sql(f"INSERT INTO {t} SELECT id + 100 FROM range(2)")
    spark.range(20, 22).write.insertInto(t)
    path = check(spark, t, [(i,) for i in [0, 1, 2, 3, 4, 10, 11, 100, 101, 20, 21]], 3)
    assert commit_info(path, 1)["operation"] == "WRITE"
    assert commit_info(path, 1)["operationParameters"]["mode"] == "Append"
    # no Parquet file outside a commit: every data file in the folder is referenced by the log
    listed = {p.name for p in path.glob("*.parquet")}
    referenced = set(deltalake.DeltaTable(str(path)).file_uris())
    assert listed == {os.path.basename(x) for x in referenced}


def test_insert_by_position_and_by_name(spark, db):
    t = name(db)
    spark.sql(f"CREATE TABLE {t} (a INT, b STRING) USING deltalog")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x')")
    spark.sql(f"INSERT INTO {t} (b, a) VALUES ('y', 2)")
    spark.sql(f"INSERT INTO {t} BY NAME SELECT 'z' AS b, 3 AS a")
    check(spark, t, [(1, "x"), (2, "y"), (3, "z")], 3)


def test_insert_overwrite_table_static_and_dynamic_partitions(spark, db):
    t = name(db)
    spark.sql(f"CREATE TABLE {t} (id INT, p STRING) USING deltalog PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"INSERT OVERWRITE {t} PARTITION (p = 'a') VALUES (10)")
    check(spark, t, [(10, "a"), (2, "b"), (3, "c")], 2)
    spark.sql(f"INSERT INTO {t} PARTITION (p = 'd') VALUES (4)")
    check(spark, t, [(10, "a"), (2, "b"), (3, "c"), (4, "d")], 3)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.sql(f"INSERT OVERWRITE {t} VALUES (20, 'b'), (30, 'c')")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    check(spark, t, [(10, "a"), (20, "b"), (30, "c"), (4, "d")], 4)
    spark.sql(f"INSERT OVERWRITE {t} VALUES (7, 'z')")  # static: the whole table
    path = check(spark, t, [(7, "z")], 5)
    params = commit_info(path, 5)["operationParameters"]
    assert params["mode"] == "Overwrite"
    # history is kept: the first insert is still there to time travel to
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {t} VERSION AS OF 1").collect()) == \
        [(1, "a"), (2, "b"), (3, "c")]


def test_insert_into_api_overwrite(spark, db):
    t = name(db)
    spark.range(3).write.format("deltalog").saveAsTable(t)
    spark.range(100, 102).write.insertInto(t, overwrite=True)
    check(spark, t, [(100,), (101,)], 1)


def test_insert_into_path_table(spark, tmp_path):
    p = tmp_path / "pt"
    spark.range(3).write.format("deltalog").save(str(p))
    spark.sql(f"INSERT INTO deltalog.`{p}` VALUES (7)")
    assert sorted(r.id for r in spark.sql(f"SELECT * FROM deltalog.`{p}`").collect()) == [0, 1, 2, 7]
    spark.sql(f"INSERT OVERWRITE deltalog.`{p}` VALUES (9)")
    assert rows_rs(p) == [(9,)]
    assert versions(p) == [0, 1, 2]
    assert_log_intact(p)


# ----------------------------------------------------------------------------- saveAsTable

def test_save_as_table_modes_keep_history(spark, db):
    t = name(db)
    spark.range(5).write.format("deltalog").saveAsTable(t)
    path = check(spark, t, [(i,) for i in range(5)], 0)
    refused(lambda: spark.range(1).write.format("deltalog").mode("error").saveAsTable(t), "TABLE_OR_VIEW_ALREADY_EXISTS")
    spark.range(1).write.format("deltalog").mode("ignore").saveAsTable(t)
    spark.range(5, 7).write.format("deltalog").mode("append").saveAsTable(t)
    check(spark, t, [(i,) for i in range(7)], 1)
    spark.range(100, 103).write.format("deltalog").mode("overwrite").saveAsTable(t)
    check(spark, t, [(100,), (101,), (102,)], 2)
    assert commit_info(path, 2)["operation"] == "CREATE OR REPLACE TABLE AS SELECT"
    old = spark.read.format("deltalog").option("versionAsOf", 0).load(str(path))
    assert sorted(r.id for r in old.collect()) == list(range(5))
    # overwrite keeps the schema unless overwriteSchema says otherwise
    before = fingerprint(path)
    other = spark.range(2).select(F.col("id").cast("string").alias("name"))
    refused(lambda: other.write.format("deltalog").mode("overwrite").saveAsTable(t), "DELTA_SCHEMA_MISMATCH")
    assert fingerprint(path) == before
    other.write.format("deltalog").mode("overwrite").option("overwriteSchema", "true").saveAsTable(t)
    check(spark, t, [("0",), ("1",)], 3)
    assert spark.table(t).columns == ["name"]


def test_save_as_table_honours_table_properties(spark, db):
    t = name(db)
    (spark.range(3).write.format("deltalog").option("delta.appendOnly", "true")
     .option("delta.enableChangeDataFeed", "true").saveAsTable(t))
    path = location(spark, t)
    conf = metadata(path)["configuration"]
    assert conf["delta.appendOnly"] == "true" and conf["delta.enableChangeDataFeed"] == "true"


# ----------------------------------------------------------------------------- CTAS / RTAS / CREATE

def test_ctas_with_tblproperties_and_comment(spark, db):
    t = name(db)
    spark.sql(f"CREATE TABLE {t} USING deltalog COMMENT 'orders' "
              "TBLPROPERTIES ('delta.appendOnly' = 'true', 'delta.enableChangeDataFeed' = 'true', 'team' = 'x') "
              "AS SELECT id, id * 2 AS v FROM range(4)")
    path = check(spark, t, [(i, 2 * i) for i in range(4)], 0)
    meta = metadata(path)
    assert meta["configuration"] == {"delta.appendOnly": "true", "delta.enableChangeDataFeed": "true", "team": "x"}
    assert meta["description"] == "orders"
    proto = [json.loads(x)["protocol"] for x in (path / "_delta_log" / f"{0:020d}.json").read_text().splitlines()
             if "protocol" in json.loads(x)][0]
    assert {"appendOnly", "changeDataFeed"} <= set(proto["writerFeatures"])
    assert commit_info(path, 0)["operation"] == "CREATE TABLE AS SELECT"
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    assert props["delta.appendOnly"] == "true" and props["team"] == "x"
    # append-only: an overwrite is refused and nothing changes
    before = fingerprint(path)
    refused(lambda: spark.sql(f"INSERT OVERWRITE {t} SELECT 1, 2"), "DELTA_APPEND_ONLY")
    refused(lambda: spark.sql(f"TRUNCATE TABLE {t}"), "DELTA_APPEND_ONLY")
    assert fingerprint(path) == before


def location_of_new(spark, table: str) -> Path:
    """Where a managed table `db.name` would live."""
    db, short = table.split(".")
    warehouse = Path(spark.sql(f"DESCRIBE DATABASE {db}").filter("info_name = 'Location'").first()
                     .info_value.replace("file:", ""))
    return warehouse / short


def test_failed_ctas_leaves_nothing(spark, db):
    t = name(db)
    with pytest.raises(Exception):
        spark.sql(f"CREATE TABLE {t} USING deltalog AS SELECT 1 / 0 AS x")
    assert not spark.catalog.tableExists(t)
    assert not location_of_new(spark, t).exists()
    # a constraint-free failure late in the write (a bad property value) leaves nothing either
    refused(lambda: spark.sql(f"CREATE TABLE {t} USING deltalog TBLPROPERTIES ('delta.appendOnly' = 'maybe') "
                              "AS SELECT 1 AS x"), "DELTA_INVALID_TABLE_PROPERTY_VALUE")
    assert not spark.catalog.tableExists(t)
    assert not location_of_new(spark, t).exists()


def test_create_table_then_insert_and_register_existing(spark, db, tmp_path):
    t = name(db)
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) USING deltalog")
    path = location(spark, t)
    assert versions(path) == [0] and not list(path.glob("*.parquet"))
    assert commit_info(path, 0)["operation"] == "CREATE TABLE"
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a')")
    check(spark, t, [(1, "a")], 1)
    # an existing table registered by LOCATION: its schema comes from the log
    ext = name(db)
    spark.sql(f"CREATE TABLE {ext} USING deltalog LOCATION '{path}'")
    assert rows(spark, ext) == [(1, "a")]
    assert versions(path) == [0, 1]
    bad = name(db)
    refused(lambda: spark.sql(f"CREATE TABLE {bad} (id INT) USING deltalog LOCATION '{path}'"),
            "DELTA_CREATE_TABLE_SCHEMA_MISMATCH")
    refused(lambda: spark.sql(f"CREATE TABLE {bad} USING deltalog LOCATION '{path}' AS SELECT 1 AS id"),
            "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION")
    assert not spark.catalog.tableExists(bad)
    assert versions(path) == [0, 1]


def test_replace_table_keeps_history(spark, db):
    t = name(db)
    spark.sql(f"CREATE TABLE {t} USING deltalog AS SELECT id FROM range(3)")
    spark.sql(f"REPLACE TABLE {t} USING deltalog PARTITIONED BY (p) "
              "AS SELECT id, CAST(id % 2 AS INT) AS p FROM range(4)")
    path = check(spark, t, [(0, 0), (1, 1), (2, 0), (3, 1)], 1)
    assert metadata(path)["partitionColumns"] == ["p"]
    assert commit_info(path, 1)["operation"] == "REPLACE TABLE AS SELECT"
    spark.sql(f"CREATE OR REPLACE TABLE {t} (a STRING) USING deltalog")
    check(spark, t, [], 2)
    assert spark.table(t).columns == ["a"]
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {t} VERSION AS OF 0").collect()) == [0, 1, 2]
    # TIMESTAMP AS OF: the latest commit at or before the time (here: the first one)
    first = location(spark, t) / "_delta_log" / f"{0:020d}.json"
    ts = __import__("datetime").datetime.fromtimestamp(first.stat().st_mtime, __import__("datetime").timezone.utc)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        got = spark.sql(f"SELECT id FROM {t} TIMESTAMP AS OF '{ts.strftime('%Y-%m-%d %H:%M:%S.%f')}'").collect()
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
    assert sorted(r.id for r in got) == [0, 1, 2]


# ----------------------------------------------------------------------------- writeTo

def test_write_to_v2_api(spark, db):
    t = name(db)
    df = spark.range(4).withColumn("p", (F.col("id") % 2).cast("int"))
    df.writeTo(t).using("deltalog").partitionedBy(F.col("p")).tableProperty("delta.enableChangeDataFeed", "true") \
        .create()
    path = check(spark, t, [(i, i % 2) for i in range(4)], 0)
    assert metadata(path)["configuration"] == {"delta.enableChangeDataFeed": "true"}
    df.writeTo(t).append()
    check(spark, t, [(i, i % 2) for i in range(4)] * 2, 1)
    spark.range(10, 12).withColumn("p", F.lit(0)).writeTo(t).overwrite(F.col("p") == 0)
    check(spark, t, [(1, 1), (3, 1), (1, 1), (3, 1), (10, 0), (11, 0)], 2)
    spark.range(20, 21).withColumn("p", F.lit(1)).writeTo(t).overwritePartitions()
    check(spark, t, [(10, 0), (11, 0), (20, 1)], 3)
    spark.range(2).withColumn("p", F.lit(5)).writeTo(t).using("deltalog").replace()
    check(spark, t, [(0, 5), (1, 5)], 4)
    assert metadata(path)["partitionColumns"] == []
    spark.range(1).withColumn("p", F.lit(6)).writeTo(t).using("deltalog").createOrReplace()
    check(spark, t, [(0, 6)], 5)


# ----------------------------------------------------------------------------- TRUNCATE, DROP, SET LOCATION

def test_truncate_table(spark, db):
    t = name(db)
    spark.range(5).write.format("deltalog").saveAsTable(t)
    spark.sql(f"TRUNCATE TABLE {t}")
    path = check(spark, t, [], 1)
    assert commit_info(path, 1)["operation"] == "TRUNCATE"
    assert len(list(path.glob("*.parquet"))) > 0  # files are removed in the log, not deleted (VACUUM does that)


def test_drop_external_table_keeps_data_and_log(spark, db, tmp_path):
    p = tmp_path / "ext"
    spark.range(3).write.format("deltalog").save(str(p))
    before = fingerprint(p)
    t = name(db)
    spark.sql(f"CREATE TABLE {t} USING deltalog LOCATION '{p}'")
    spark.sql(f"DROP TABLE {t}")
    assert not spark.catalog.tableExists(t)
    assert fingerprint(p) == before
    managed = name(db)
    spark.range(3).write.format("deltalog").saveAsTable(managed)
    mpath = location(spark, managed)
    spark.sql(f"DROP TABLE {managed}")
    assert not mpath.exists()


def test_alter_table_set_location(spark, db, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    spark.range(3).write.format("deltalog").save(str(a))
    spark.range(10, 12).write.format("deltalog").save(str(b))
    spark.range(2).select(F.col("id").cast("string").alias("s")).write.format("deltalog").save(str(c))
    t = name(db)
    spark.sql(f"CREATE TABLE {t} USING deltalog LOCATION '{a}'")
    before = {x: fingerprint(x) for x in (a, b, c)}
    spark.sql(f"ALTER TABLE {t} SET LOCATION '{b}'")
    assert rows(spark, t) == [(10,), (11,)]
    refused(lambda: spark.sql(f"ALTER TABLE {t} SET LOCATION '{c}'"), "DELTA_SET_LOCATION_SCHEMA_MISMATCH")
    refused(lambda: spark.sql(f"ALTER TABLE {t} SET LOCATION '{tmp_path / 'none'}'"), "DELTA_TABLE_NOT_FOUND")
    assert rows(spark, t) == [(10,), (11,)]
    assert {x: fingerprint(x) for x in (a, b, c)} == before


def test_alter_table_properties_are_commits(spark, db):
    t = name(db)
    spark.range(2).write.format("deltalog").saveAsTable(t)
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 7 days', 'k' = 'v')")
    path = location(spark, t)
    assert metadata(path)["configuration"] == {"delta.logRetentionDuration": "interval 7 days", "k": "v"}
    assert commit_info(path, 1)["operation"] == "SET TBLPROPERTIES"
    spark.sql(f"ALTER TABLE {t} UNSET TBLPROPERTIES ('k')")
    assert metadata(path)["configuration"] == {"delta.logRetentionDuration": "interval 7 days"}
    before = fingerprint(path)
    # without column mapping (test_sql_alter_columns.py has the statement itself)
    refused(lambda: spark.sql(f"ALTER TABLE {t} RENAME COLUMN id TO id2"), "DELTA_UNSUPPORTED_RENAME_COLUMN")
    assert fingerprint(path) == before


# ----------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_plain_parquet_write_into_table_folder_is_refused(spark, tmp_path, mode):
    p = tmp_path / "t"
    spark.range(3).write.format("deltalog").save(str(p))
    before = fingerprint(p)
    refused(lambda: spark.range(5).write.mode(mode).parquet(str(p)), "DELTA_FILE_FORMAT_WRITE_INTO_DELTA_TABLE")
    refused(lambda: spark.range(5).write.mode(mode).format("parquet").save(str(p)),
            "DELTA_FILE_FORMAT_WRITE_INTO_DELTA_TABLE")
    assert fingerprint(p) == before
    assert rows_rs(p) == [(0,), (1,), (2,)]


def test_insert_into_temp_view_over_table_is_refused(spark, tmp_path):
    p = tmp_path / "v"
    spark.range(3).write.format("deltalog").save(str(p))
    before = fingerprint(p)
    view = "v_" + uuid.uuid4().hex[:8]
    spark.read.format("deltalog").load(str(p)).createOrReplaceTempView(view)
    for stmt in (f"INSERT INTO {view} VALUES (9)", f"INSERT OVERWRITE {view} VALUES (9)"):
        refused(lambda: spark.sql(stmt), "DELTA_FILE_FORMAT_WRITE_INTO_DELTA_TABLE")
    assert fingerprint(p) == before


def test_row_level_statements_on_catalog_tables(spark, db):
    """UPDATE and MERGE by table name (tests/python/test_dml_update_merge.py covers them in depth),
    the target unaliased and referenced by its name; a cached read sees the new rows."""
    t = name(db)
    spark.range(3).write.format("deltalog").saveAsTable(t)
    spark.table(t).cache().count()
    assert [tuple(r) for r in spark.sql(f"UPDATE {t} SET id = 5 WHERE id = 1").collect()] == [(1,)]
    res = spark.sql(f"MERGE INTO {t} USING (SELECT 2L AS id UNION ALL SELECT 7L) s ON {t}.id = s.id "
                    "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *")
    assert [tuple(r) for r in res.collect()] == [(2, 0, 1, 1)]
    assert sorted(r.id for r in spark.table(t).collect()) == [0, 5, 7]
    ops = [r.operation for r in spark.sql(f"DESCRIBE HISTORY {t}").collect()]
    assert ops[:2] == ["MERGE", "UPDATE"]


def test_catalog_entry_outside_deltalog_catalog_is_refused(spark, db):
    """A session without DeltalogCatalog reaches a deltalog catalog table through the data source
    with the entry's marker among its options: refused with the setting to add, not read as files."""
    t = name(db)
    spark.range(3).write.format("deltalog").saveAsTable(t)
    path = location(spark, t)
    refused(lambda: spark.read.format("deltalog").option("deltalog.catalog", "x").load(str(path)).collect(),
            "DELTA_CONFIGURE_SPARK_SESSION_WITH_EXTENSION_AND_CATALOG")


def test_path_table_write_apis(spark, tmp_path):
    """The DataFrame APIs that take a table name work on ``deltalog.`/path` `` too."""
    p = tmp_path / "pw"
    spark.range(3).write.format("deltalog").save(str(p))
    ident = f"deltalog.`{p}`"
    spark.range(3, 5).write.insertInto(ident)
    spark.range(5, 6).writeTo(ident).append()
    assert rows_rs(p) == [(i,) for i in range(6)]
    spark.range(10, 12).writeTo(ident).overwrite(F.col("id") >= 3)
    assert rows_rs(p) == [(0,), (1,), (2,), (10,), (11,)]
    spark.sql(f"TRUNCATE TABLE {ident}")
    assert rows_rs(p) == []
    assert versions(p) == [0, 1, 2, 3, 4]
    assert_log_intact(p)
    with pytest.raises(Exception):  # a path is not a catalog entry: nothing to drop, nothing deleted
        spark.sql(f"DROP TABLE {ident}")
    assert versions(p) == [0, 1, 2, 3, 4]
    assert_log_intact(p)


UNCONFIGURED = r'''
import os, sys, json
from pyspark.sql import SparkSession
from deltalog.session import bundled_jar_path
warehouse, table = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.jars", bundled_jar_path()).config("spark.sql.warehouse.dir", warehouse)
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1").getOrCreate())
out = {}
for label, fn in [
        ("saveAsTable", lambda: spark.range(3).write.format("deltalog").saveAsTable("t")),
        ("ctas", lambda: spark.sql("CREATE TABLE t2 USING deltalog AS SELECT 1 AS id")),
        ("insert_path", lambda: spark.sql(f"INSERT INTO deltalog.`{table}` VALUES (9)"))]:
    try:
        fn()
        out[label] = "written"
    except Exception as e:
        out[label] = str(e).splitlines()[0][:300]
# path reads and writes need neither the extension nor the catalog
spark.range(3, 4).write.format("deltalog").mode("append").save(table)
out["read"] = sorted(r.id for r in spark.read.format("deltalog").load(table).collect())
print("RESULT " + json.dumps(out))
'''


def test_session_without_extension_and_catalog(tmp_path):
    """A session with only the jar: statements that would need DeltalogCatalog are refused before
    anything is written (no table folder, no catalog entry); path reads and writes still work."""
    import subprocess
    import sys
    table = tmp_path / "tbl"
    warehouse = tmp_path / "wh"
    deltalake.write_deltalake(str(table), __import__("pyarrow").table({"id": [0, 1, 2]}))
    before = fingerprint(table)
    script = tmp_path / "unconfigured.py"
    script.write_text(UNCONFIGURED)
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", DELTALOG_CLASS_SHARING="0")
    proc = subprocess.run([sys.executable, str(script), str(warehouse), str(table)], capture_output=True,
                          text=True, timeout=600, env=env)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(line[0][len("RESULT "):])
    assert out["saveAsTable"] != "written" and out["ctas"] != "written" and out["insert_path"] != "written", out
    assert not (warehouse / "t").exists() and not (warehouse / "t2").exists()
    assert out["read"] == [0, 1, 2, 3]
    assert versions(table) == [0, 1]
    first = "_delta_log/00000000000000000000.json"
    assert fingerprint(table)[first] == before[first]


def test_table_properties_are_validated_in_sql(spark, db):
    """Known properties are checked when set (CTAS, ALTER TABLE), unknown delta.* names refused; nothing
    is written for a refused statement."""
    t = name(db)
    refused(lambda: spark.sql(f"CREATE TABLE {t} USING deltalog TBLPROPERTIES ('delta.checkpointInterval' = 'abc') "
                              "AS SELECT 1 AS id"), "DELTA_INVALID_TABLE_PROPERTY_VALUE")
    refused(lambda: spark.sql(f"CREATE TABLE {t} USING deltalog TBLPROPERTIES ('delta.fooBar' = '1') "
                              "AS SELECT 1 AS id"), "DELTA_UNKNOWN_CONFIGURATION")
    assert not spark.catalog.tableExists(t)
    assert not (location_of_new(spark, t)).exists()
    spark.sql(f"CREATE TABLE {t} USING deltalog AS SELECT 1 AS id")
    path = location(spark, t)
    before = fingerprint(path)
    refused(lambda: spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.checkpointInterval' = '0')"),
            "DELTA_INVALID_TABLE_PROPERTY_VALUE")
    refused(lambda: spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'names')"),
            "DELTA_INVALID_TABLE_PROPERTY_VALUE")
    assert fingerprint(path) == before


def test_delta_table_for_name(spark, db, tmp_path):
    """``DeltaTable.forName``: the catalog gives the location, the log the rest (also time travel);
    a table of another provider is refused."""
    from deltalog.exceptions import TableNotFoundError
    from deltalog.tables import DeltaTable
    t = name(db)
    spark.range(3).write.format("deltalog").saveAsTable(t)
    spark.sql(f"INSERT INTO {t} VALUES (7)")
    dt = DeltaTable.forName(spark, t)
    path = location(spark, t)
    assert dt.version() == 1 == DeltaTable.forPath(spark, str(path)).version()
    assert len(dt.filesArrow()) == len(deltalake.DeltaTable(str(path)).file_uris())
    assert DeltaTable.forName(spark, t, version=0).version() == 0
    assert DeltaTable.forName(spark, f"deltalog.`{path}`").version() == 1
    other = name(db)
    spark.range(2).write.format("parquet").saveAsTable(other)
    with pytest.raises(TableNotFoundError) as e:
        DeltaTable.forName(spark, other)
    assert e.value.errorClass == "DELTA_MISSING_DELTA_TABLE"
