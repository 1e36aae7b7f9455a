"""``DROP FEATURE`` of the features whose traces live in data files or the schema -- ``typeWidening``,
``columnMapping``, ``rowTracking`` -- compared commit by commit with
what delta-spark 4.4 writes when it drops the same feature of the same table; the rows read before
and after by deltalog, delta-spark (a separate process) and delta-rs; deltalog dropping them from
tables delta-spark made; the refusals (delta-spark's error classes, nothing written).

What delta-spark 4.4 writes (probed): typeWidening: ``UNSET TBLPROPERTIES`` of
``delta.enableTypeWidening``, a ``REORG`` (``applyPurge``) rewriting the files that still store an
older type, a ``DROP FEATURE`` commit removing ``delta.typeChanges`` (parameter ``columns``), then the
fast drop's barrier and downgrade; columnMapping: one ``REMOVE COLUMN MAPPING`` commit rewriting every
file under the logical names with the mode and ``maxColumnId`` removed, then barrier and downgrade;
rowTracking (writer feature, no history protection): ``SET TBLPROPERTIES`` (enable false, suspended
true), ``ROW TRACKING UNBACKFILL`` (files re-added without row ids), then one downgrade commit that
removes the properties and the ``delta.rowTracking`` domain; typeWidening-preview: dropped like
typeWidening (deltalog writes tables supporting the preview feature only for the drop's own commits).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltalog.exceptions import DropFeatureError, DropFeatureWaitForRetentionError
from deltalog.tables import DeltaTable


# ------------------------------------------------------------------------------ helpers

# the log-reading helpers of test_drop_feature
from test_drop_feature import actions, commit_info, one, versions  # noqa: E402


def kinds(path: Path, v: int, kind: str) -> list:
    return [a[kind] for a in actions(path, v) if kind in a]


def operations(path: Path) -> list:
    return [commit_info(path, v)["operation"] for v in versions(path)]


def sql_path(p: Path) -> str:
    return f"deltalog.`{p}`"


def summary(ci: dict) -> dict:
    """The commitInfo facts compared with delta-spark's (JSON-valued parameters parsed)."""
    params = {k: (json.loads(v) if k == "columns" else v) for k, v in (ci.get("operationParameters") or {}).items()}
    return {"operation": ci["operation"], "operationParameters": params, "isolationLevel": ci.get("isolationLevel"),
            "isBlindAppend": ci.get("isBlindAppend")}


def protocol_shape(p: dict) -> dict:
    return {k: (sorted(v) if isinstance(v, list) else v) for k, v in p.items()}


def ds_actions(peer_log: dict, v: int) -> list:
    return peer_log["commits"][str(v)]


def ds_one(peer_log: dict, v: int, kind: str):
    found = [a[kind] for a in ds_actions(peer_log, v) if kind in a]
    return found[0] if found else None


def ds_ops(peer_log: dict) -> list:
    return [ds_one(peer_log, v, "commitInfo")["operation"] for v in sorted(int(k) for k in peer_log["commits"])]


def live_files(p: Path) -> set:
    """The latest version's data files (relative paths), replayed from the JSON commits."""
    live: set = set()
    for v in versions(p):
        for a in actions(p, v):
            if "add" in a:
                live.add(a["add"]["path"])
            elif "remove" in a:
                live.discard(a["remove"]["path"])
    return live


def rows_deltalog(spark, p: Path) -> list:
    return sorted(tuple(r) for r in DeltaTable.forPath(spark, str(p)).toDF().collect())


def rows_delta_rs(p: Path) -> list:
    """Rows as delta-rs reads them (its query engine, which applies deletion vectors), structs as tuples."""
    t = pa.table(deltalake.QueryBuilder().register("t", deltalake.DeltaTable(str(p))).execute("SELECT * FROM t")
                 .read_all())
    return sorted(tuple(tuple(v.values()) if isinstance(v, dict) else v for v in r.values()) for r in t.to_pylist())


def rows_delta_spark(delta_spark, p: Path, columns: list) -> list:
    got = delta_spark.run("""
result = [list(r) for r in spark.read.format("delta").load(args["p"]).select(*args["cols"]).collect()]
""", p=str(p), cols=columns)
    return sorted(tuple(r) for r in got)


DELTA_SPARK_LOG = """
import json, os, glob, re
def log(p):
    out = {}
    for f in sorted(glob.glob(p + "/_delta_log/*.json")):
        out[int(os.path.basename(f)[:20])] = [json.loads(l) for l in open(f)]
    return {"commits": out}
def error_class(sql):
    try:
        spark.sql(sql)
    except Exception as e:
        m = re.search(r"\\[([A-Z_]+)\\]", str(e))
        return m.group(1) if m else str(e)[:300]
    return None
"""


@pytest.fixture(scope="module")
def delta_spark_drops(delta_spark, tmp_path_factory):
    """delta-spark 4.4 dropping the three features of its own tables, made as the tests make theirs."""
    base = tmp_path_factory.mktemp("ds_rewrite_drops")
    return delta_spark.run(DELTA_SPARK_LOG + """
b = args["base"]
spark.sql(f"CREATE TABLE delta.`{b}/tw` (a SMALLINT, b STRING) USING delta TBLPROPERTIES ('delta.enableTypeWidening'='true')")
spark.sql(f"INSERT INTO delta.`{b}/tw` VALUES (1, 'x'), (2, 'y')")
spark.sql(f"ALTER TABLE delta.`{b}/tw` ALTER COLUMN a TYPE INT")
spark.sql(f"INSERT INTO delta.`{b}/tw` VALUES (100000, 'z')")
spark.sql(f"ALTER TABLE delta.`{b}/tw` DROP FEATURE typeWidening")
spark.sql(f"CREATE TABLE delta.`{b}/cm` (a INT, b STRING) USING delta TBLPROPERTIES ('delta.columnMapping.mode'='name')")
spark.sql(f"INSERT INTO delta.`{b}/cm` VALUES (1, 'x'), (2, 'y')")
spark.sql(f"ALTER TABLE delta.`{b}/cm` RENAME COLUMN b TO c")
spark.sql(f"INSERT INTO delta.`{b}/cm` VALUES (3, 'z')")
spark.sql(f"ALTER TABLE delta.`{b}/cm` DROP FEATURE columnMapping")
spark.sql(f"CREATE TABLE delta.`{b}/cm_bad` (`a b` INT) USING delta TBLPROPERTIES ('delta.columnMapping.mode'='name')")
cm_bad = error_class(f"ALTER TABLE delta.`{b}/cm_bad` DROP FEATURE columnMapping")
spark.sql(f"CREATE TABLE delta.`{b}/rt` (a INT) USING delta TBLPROPERTIES ('delta.enableRowTracking'='true')")
spark.sql(f"INSERT INTO delta.`{b}/rt` VALUES (1), (2)")
spark.sql(f"UPDATE delta.`{b}/rt` SET a = 5 WHERE a = 2")
rt_th = error_class(f"ALTER TABLE delta.`{b}/rt` DROP FEATURE rowTracking TRUNCATE HISTORY")
spark.sql(f"ALTER TABLE delta.`{b}/rt` DROP FEATURE rowTracking")
rt_dm = error_class(f"ALTER TABLE delta.`{b}/rt` DROP FEATURE domainMetadata")
result = {"tw": log(b + "/tw"), "cm": log(b + "/cm"), "rt": log(b + "/rt"),
          "errors": {"cm_bad": cm_bad, "rt_th": rt_th, "rt_dm": rt_dm}}
""", base=str(base))


def assert_same_commits_from(p: Path, ds: dict, first: int, ds_later: int = 0) -> None:
    """Every commit from `first` on records the same operation facts as delta-spark's (whose log has
    `ds_later` more commits, of later statements)."""
    assert operations(p) == ds_ops(ds)[:len(ds_ops(ds)) - ds_later]
    for v in versions(p)[first:]:
        assert summary(commit_info(p, v)) == summary(ds_one(ds, v, "commitInfo")), v


# ------------------------------------------------------------------------------ typeWidening

def make_widened(spark, p: Path) -> None:
    t = sql_path(p)
    spark.sql(f"CREATE TABLE {t} (a SMALLINT, b STRING) USING deltalog TBLPROPERTIES ('delta.enableTypeWidening'='true')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y')")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN a TYPE INT")
    spark.sql(f"INSERT INTO {t} VALUES (100000, 'z')")


WIDENED_ROWS = [(1, "x"), (2, "y"), (100000, "z")]


def test_type_widening_drop_writes_what_delta_spark_writes(spark, tmp_path, delta_spark, delta_spark_drops):
    p = tmp_path / "tw"
    make_widened(spark, p)
    old_files = [a["path"] for a in kinds(p, 1, "add")]
    new_file = one(p, 3, "add")["path"]
    assert rows_deltalog(spark, p) == WIDENED_ROWS
    assert rows_delta_spark(delta_spark, p, ["a", "b"]) == WIDENED_ROWS

    spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE typeWidening")

    ds = delta_spark_drops["tw"]
    assert operations(p)[4:] == ["UNSET TBLPROPERTIES", "REORG", "DROP FEATURE", "Empty Commit", "Empty Commit",
                                 "Empty Commit", "DROP FEATURE"]
    assert_same_commits_from(p, ds, 4)
    assert one(p, 4, "metaData")["configuration"] == {} == ds_one(ds, 4, "metaData")["configuration"]
    # the REORG rewrote the files written before the type change, not the one written after it
    reorg = actions(p, 5)
    assert sorted(a["remove"]["path"] for a in reorg if "remove" in a) == sorted(old_files)
    assert all(a[k]["dataChange"] is False for a in reorg for k in ("add", "remove") if k in a)
    assert new_file in live_files(p) and not set(old_files) & live_files(p)
    for add in kinds(p, 5, "add"):
        assert str(pq.read_schema(p / add["path"]).field("a").type) == "int32"
    # delta.typeChanges removed from the schema, in its own commit, as delta-spark's
    assert one(p, 6, "metaData")["schemaString"] == ds_one(ds, 6, "metaData")["schemaString"]
    assert "delta.typeChanges" not in one(p, 10, "metaData")["schemaString"]
    assert protocol_shape(one(p, 10, "protocol")) == protocol_shape(ds_one(ds, 10, "protocol")) == {
        "minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["appendOnly", "checkpointProtection",
                                                                         "invariants"]}
    assert one(p, 10, "metaData")["configuration"] == ds_one(ds, 10, "metaData")["configuration"]

    assert rows_deltalog(spark, p) == WIDENED_ROWS
    assert rows_delta_spark(delta_spark, p, ["a", "b"]) == WIDENED_ROWS
    assert rows_delta_rs(p) == WIDENED_ROWS


def test_type_widening_truncate_history_waits_then_drops(spark, tmp_path, delta_spark):
    p = tmp_path / "tw"
    make_widened(spark, p)
    t = DeltaTable.forPath(spark, str(p))
    # the pre-downgrade rewrote files and the schema: the younger history still uses the feature
    with pytest.raises(DropFeatureWaitForRetentionError) as e:
        t.dropFeatureSupport("typeWidening", truncateHistory=True)
    assert e.value.errorClass == "DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD" and str(p) in e.value.message
    assert operations(p)[4:] == ["UNSET TBLPROPERTIES", "REORG", "DROP FEATURE", "Empty Commit"]
    assert DeltaTable.forPath(spark, str(p)).protocol().readerFeatures == frozenset({"typeWidening"})
    # a second run finds no trace left in the latest version: nothing more is rewritten
    with pytest.raises(DropFeatureWaitForRetentionError) as e:
        t.dropFeatureSupport("typeWidening", truncateHistory=True)
    assert e.value.errorClass == "DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST"
    assert operations(p)[7:] == ["Empty Commit", "Empty Commit"]
    spark.sql(f"ALTER TABLE {sql_path(p)} SET TBLPROPERTIES "
              "('delta.dropFeatureTruncateHistory.retentionDuration' = 'interval 0 seconds')")
    t.dropFeatureSupport("typeWidening", truncateHistory=True)
    last = versions(p)[-1]
    assert commit_info(p, last)["operationParameters"] == {"featureName": "typeWidening", "truncateHistory": True}
    assert one(p, last, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert rows_deltalog(spark, p) == WIDENED_ROWS
    assert rows_delta_spark(delta_spark, p, ["a", "b"]) == WIDENED_ROWS
    assert rows_delta_rs(p) == WIDENED_ROWS


def test_type_widening_without_older_files(spark, tmp_path):
    # every file written after the change: no REORG commit, only the property and the schema cleaned
    p = tmp_path / "later"
    t = sql_path(p)
    spark.sql(f"CREATE TABLE {t} (a SMALLINT) USING deltalog TBLPROPERTIES ('delta.enableTypeWidening'='true')")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN a TYPE INT")
    spark.sql(f"INSERT INTO {t} VALUES (70000)")
    DeltaTable.forPath(spark, str(p)).dropFeatureSupport("typeWidening")
    assert operations(p)[3:] == ["UNSET TBLPROPERTIES", "DROP FEATURE", "Empty Commit", "Empty Commit",
                                 "Empty Commit", "DROP FEATURE"]
    assert rows_deltalog(spark, p) == [(70000,)]
    assert rows_delta_rs(p) == [(70000,)]


PREVIEW_TABLE = """
p = args["p"]
spark.sql(f"CREATE TABLE delta.`{p}` (a SMALLINT, b STRING) USING delta TBLPROPERTIES "
          "('delta.feature.typeWidening-preview' = 'supported', 'delta.enableTypeWidening' = 'true')")
spark.sql(f"INSERT INTO delta.`{p}` VALUES (1, 'x'), (2, 'y')")
spark.sql(f"ALTER TABLE delta.`{p}` ALTER COLUMN a TYPE INT")
spark.sql(f"INSERT INTO delta.`{p}` VALUES (100000, 'z')")
"""


def test_type_widening_preview_drop_writes_what_delta_spark_writes(spark, tmp_path, delta_spark):
    # a table of delta-spark 4.4 with the preview feature (enabling type widening does not add the
    # stable one then); its recorded type change carries the preview's tableVersion
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    delta_spark.run(PREVIEW_TABLE, p=str(ours))
    shutil.copytree(ours, theirs)
    proto = one(ours, 0, "protocol")
    assert "typeWidening-preview" in proto["readerFeatures"] and "typeWidening" not in proto["readerFeatures"]
    assert '"tableVersion":2' in one(ours, 2, "metaData")["schemaString"]
    # deltalog writes such a table only for the drop's own commits: an INSERT is refused, nothing written
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_FEATURES_FOR_WRITE|typeWidening-preview"):
        spark.sql(f"INSERT INTO {sql_path(ours)} VALUES (3, 'w')")
    assert versions(ours) == [0, 1, 2, 3]

    ds = delta_spark.run(DELTA_SPARK_LOG + """
spark.sql(f"ALTER TABLE delta.`{args['p']}` DROP FEATURE `typeWidening-preview`")
result = log(args["p"])
""", p=str(theirs))
    spark.sql(f"ALTER TABLE {sql_path(ours)} DROP FEATURE `typeWidening-preview`")

    assert operations(ours)[4:] == ["UNSET TBLPROPERTIES", "REORG", "DROP FEATURE", "Empty Commit", "Empty Commit",
                                    "Empty Commit", "DROP FEATURE"]
    assert_same_commits_from(ours, ds, 4)
    # the files written before the change rewritten with the INT type; typeChanges (with tableVersion) gone
    assert sorted(a["path"] for a in kinds(ours, 5, "remove")) == sorted(a["path"] for a in kinds(ours, 1, "add"))
    for add in kinds(ours, 5, "add"):
        assert str(pq.read_schema(ours / add["path"]).field("a").type) == "int32"
    assert one(ours, 6, "metaData")["schemaString"] == ds_one(ds, 6, "metaData")["schemaString"]
    assert "typeChanges" not in one(ours, 6, "metaData")["schemaString"]
    assert protocol_shape(one(ours, 10, "protocol")) == protocol_shape(ds_one(ds, 10, "protocol"))
    assert "typeWidening-preview" not in json.dumps(one(ours, 10, "protocol"))
    assert one(ours, 10, "metaData")["configuration"] == ds_one(ds, 10, "metaData")["configuration"]
    rows = [(1, "x"), (2, "y"), (100000, "z")]
    assert rows_deltalog(spark, ours) == rows
    assert rows_delta_spark(delta_spark, ours, ["a", "b"]) == rows
    assert rows_delta_rs(ours) == rows
    # the feature gone, deltalog writes the table again
    spark.sql(f"INSERT INTO {sql_path(ours)} VALUES (3, 'w')")
    assert rows_delta_spark(delta_spark, ours, ["a", "b"]) == sorted(rows + [(3, "w")])


@pytest.mark.parametrize("corpus_id", ["delta/type-widening", "delta/type-widening-nested"])
def test_type_widening_preview_drop_of_corpus_tables(spark, tmp_path, delta_spark, corpus_id):
    """The corpus' preview tables (widened from byte, float, decimal, date; nested fields), copied:
    deltalog's drop reads the same rows as before, and as delta-spark's drop of another copy."""
    from conformance_corpus import CONFORMANCE
    entry = next(t for t in json.loads((Path(CONFORMANCE) / "manifest.json").read_text()) if t["id"] == corpus_id)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(Path(CONFORMANCE) / entry["table_path"], ours)
    shutil.copytree(Path(CONFORMANCE) / entry["table_path"], theirs)
    before = delta_spark.run("result = [list(r) for r in spark.read.format('delta').load(args['p']).collect()]",
                             p=str(ours))
    ds = delta_spark.run(DELTA_SPARK_LOG + """
spark.sql(f"ALTER TABLE delta.`{args['p']}` DROP FEATURE `typeWidening-preview`")
result = log(args["p"])
""", p=str(theirs))
    DeltaTable.forPath(spark, str(ours)).dropFeatureSupport("typeWidening-preview")
    first = entry["version"] + 1
    assert operations(ours)[first:] == ds_ops(ds)[first:]
    assert_same_commits_from(ours, ds, first)
    last = versions(ours)[-1]
    assert protocol_shape(one(ours, last, "protocol")) == protocol_shape(ds_one(ds, last, "protocol"))
    assert "typeWidening-preview" not in json.dumps(one(ours, last, "protocol"))
    after = delta_spark.run("result = [list(r) for r in spark.read.format('delta').load(args['p']).collect()]",
                            p=str(ours))
    assert sorted(map(repr, after)) == sorted(map(repr, before))


# ------------------------------------------------------------------------------ columnMapping

def test_column_mapping_drop_writes_what_delta_spark_writes(spark, tmp_path, delta_spark, delta_spark_drops):
    p = tmp_path / "cm"
    t = sql_path(p)
    spark.sql(f"CREATE TABLE {t} (a INT, b STRING) USING deltalog TBLPROPERTIES ('delta.columnMapping.mode'='name')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y')")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN b TO c")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'z')")
    before = rows_deltalog(spark, p)
    assert before == [(1, "x"), (2, "y"), (3, "z")]
    assert rows_delta_spark(delta_spark, p, ["a", "c"]) == before == rows_delta_rs(p)
    old_files = sorted(a["path"] for v in (1, 3) for a in kinds(p, v, "add"))

    spark.sql(f"ALTER TABLE {t} DROP FEATURE columnMapping")

    ds = delta_spark_drops["cm"]
    assert operations(p)[4:] == ["REMOVE COLUMN MAPPING", "Empty Commit", "Empty Commit", "Empty Commit",
                                 "DROP FEATURE"]
    assert_same_commits_from(p, ds, 4)
    rcm = actions(p, 4)
    # one commit: schema and configuration without column mapping, every file rewritten
    assert json.loads(one(p, 4, "metaData")["schemaString"]) == json.loads(ds_one(ds, 4, "metaData")["schemaString"])
    assert one(p, 4, "metaData")["configuration"] == {} == ds_one(ds, 4, "metaData")["configuration"]
    assert sorted(a["remove"]["path"] for a in rcm if "remove" in a) == old_files
    assert all(a[k]["dataChange"] is False for a in rcm for k in ("add", "remove") if k in a)
    assert set(commit_info(p, 4)["operationMetrics"]) == set(ds_one(ds, 4, "commitInfo")["operationMetrics"])
    for add in kinds(p, 4, "add"):
        assert pq.read_schema(p / add["path"]).names == ["a", "c"]
    last = versions(p)[-1]
    assert one(p, last, "protocol")["minReaderVersion"] == 1
    assert "columnMapping" not in json.dumps(one(p, last, "protocol"))
    assert one(p, last, "metaData")["configuration"] == ds_one(ds, last, "metaData")["configuration"]

    assert rows_deltalog(spark, p) == before
    assert rows_delta_spark(delta_spark, p, ["a", "c"]) == before
    assert rows_delta_rs(p) == before


def test_column_mapping_drop_of_a_partitioned_table_python_path(spark, tmp_path, delta_spark):
    p = tmp_path / "cmp"
    t = sql_path(p)
    spark.sql(f"CREATE TABLE {t} (id INT, v STRING, part STRING) USING deltalog PARTITIONED BY (part) "
              "TBLPROPERTIES ('delta.columnMapping.mode'='id', 'delta.enableDeletionVectors'='true')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 'p1'), (2, 'b', 'p2'), (3, 'c', 'p1')")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN v TO w")
    spark.sql(f"DELETE FROM {t} WHERE id = 3")
    before = rows_deltalog(spark, p)
    assert before == [(1, "a", "p1"), (2, "b", "p2")]
    DeltaTable.forPath(spark, str(p)).dropFeatureSupport("columnMapping")
    rcm_v = operations(p).index("REMOVE COLUMN MAPPING")
    adds = kinds(p, rcm_v, "add")
    assert {k for a in adds for k in a["partitionValues"]} == {"part"}
    assert all(not a.get("deletionVector") for a in adds)  # the deleted row is left out, not carried
    for add in adds:
        assert pq.read_schema(p / add["path"]).names == ["id", "w"]
    assert rows_deltalog(spark, p) == before
    assert rows_delta_spark(delta_spark, p, ["id", "w", "part"]) == before
    assert rows_delta_rs(p) == before


def test_column_mapping_drop_refused_for_names_parquet_cannot_hold(spark, tmp_path, delta_spark_drops):
    p = tmp_path / "bad"
    spark.sql(f"CREATE TABLE {sql_path(p)} (`a b` INT) USING deltalog TBLPROPERTIES ('delta.columnMapping.mode'='name')")
    with pytest.raises(DropFeatureError) as e:
        spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE columnMapping")
    assert e.value.errorClass == delta_spark_drops["errors"]["cm_bad"] == \
        "DELTA_INVALID_COLUMN_NAMES_WHEN_REMOVING_COLUMN_MAPPING"
    assert str(p) in e.value.message and "a b" in e.value.message
    assert versions(p) == [0]


# ------------------------------------------------------------------------------ rowTracking

def test_row_tracking_drop_writes_what_delta_spark_writes(spark, tmp_path, delta_spark, delta_spark_drops):
    p = tmp_path / "rt"
    t = sql_path(p)
    spark.sql(f"CREATE TABLE {t} (a INT) USING deltalog TBLPROPERTIES ('delta.enableRowTracking'='true')")
    spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    spark.sql(f"UPDATE {t} SET a = 5 WHERE a = 2")
    errors = delta_spark_drops["errors"]
    # no history protection: TRUNCATE HISTORY is refused before anything is written, as delta-spark
    with pytest.raises(DropFeatureError) as e:
        DeltaTable.forPath(spark, str(p)).dropFeatureSupport("rowTracking", truncateHistory=True)
    assert e.value.errorClass == errors["rt_th"] == "DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED"
    assert versions(p) == [0, 1, 2]

    spark.sql(f"ALTER TABLE {t} DROP FEATURE rowTracking")

    ds = delta_spark_drops["rt"]
    assert operations(p)[3:] == ["SET TBLPROPERTIES", "ROW TRACKING UNBACKFILL", "DROP FEATURE"]
    assert_same_commits_from(p, ds, 3, ds_later=1)  # delta-spark then dropped domainMetadata
    conf = one(p, 3, "metaData")["configuration"]
    assert conf["delta.enableRowTracking"] == "false" and conf["delta.rowTrackingSuspended"] == "true"
    unbackfilled = kinds(p, 4, "add")
    assert unbackfilled and all("baseRowId" not in a and "defaultRowCommitVersion" not in a and
                                a["dataChange"] is False for a in unbackfilled)
    assert {a["path"] for a in unbackfilled} == {a["path"] for v in (1, 2) for a in kinds(p, v, "add")} - \
        {r["path"] for r in kinds(p, 2, "remove")}
    # the downgrade: properties and the row tracking domain removed; domainMetadata stays
    assert protocol_shape(one(p, 5, "protocol")) == protocol_shape(ds_one(ds, 5, "protocol"))
    assert one(p, 5, "metaData")["configuration"] == {} == ds_one(ds, 5, "metaData")["configuration"]
    dm = one(p, 5, "domainMetadata")
    assert dm["domain"] == "delta.rowTracking" and dm["removed"] is True
    assert ds_one(ds, 5, "domainMetadata")["removed"] is True

    assert rows_deltalog(spark, p) == [(1,), (5,)]
    assert rows_delta_spark(delta_spark, p, ["a"]) == [(1,), (5,)]
    assert rows_delta_rs(p) == [(1,), (5,)]
    # as with delta-spark, domainMetadata can then be dropped too; new writes get no row ids
    assert errors["rt_dm"] is None
    spark.sql(f"ALTER TABLE {t} DROP FEATURE domainMetadata")
    assert protocol_shape(one(p, 6, "protocol")) == protocol_shape(ds_one(ds, 6, "protocol"))
    spark.sql(f"INSERT INTO {t} VALUES (7)")
    assert "baseRowId" not in one(p, versions(p)[-1], "add")


# ------------------------------------------------------------------------------ delta-spark's tables

def test_drops_of_tables_delta_spark_made(spark, tmp_path, delta_spark):
    tw, cm, rt = tmp_path / "tw", tmp_path / "cm", tmp_path / "rt"
    delta_spark.run("""
tw, cm, rt = args["tw"], args["cm"], args["rt"]
spark.sql(f"CREATE TABLE delta.`{tw}` (a INT, s STRUCT<f: FLOAT>) USING delta TBLPROPERTIES ('delta.enableTypeWidening'='true')")
spark.sql(f"INSERT INTO delta.`{tw}` VALUES (1, named_struct('f', 1.5)), (2, named_struct('f', 2.5))")
spark.sql(f"ALTER TABLE delta.`{tw}` CHANGE COLUMN a TYPE BIGINT")
spark.sql(f"ALTER TABLE delta.`{tw}` CHANGE COLUMN s.f TYPE DOUBLE")
spark.sql(f"INSERT INTO delta.`{tw}` VALUES (5000000000, named_struct('f', 3.25))")
spark.sql(f"CREATE TABLE delta.`{cm}` (id INT, v STRING) USING delta TBLPROPERTIES ('delta.columnMapping.mode'='name', 'delta.enableDeletionVectors'='true')")
spark.sql(f"INSERT INTO delta.`{cm}` VALUES (1, 'a'), (2, 'b'), (3, 'c')")
spark.sql(f"DELETE FROM delta.`{cm}` WHERE id = 2")
spark.sql(f"ALTER TABLE delta.`{cm}` DROP COLUMN v")
spark.sql(f"ALTER TABLE delta.`{cm}` ADD COLUMN v STRING")
spark.sql(f"INSERT INTO delta.`{cm}` VALUES (4, 'd')")
spark.sql(f"CREATE TABLE delta.`{rt}` (id INT) USING delta TBLPROPERTIES ('delta.enableRowTracking'='true', 'delta.enableDeletionVectors'='true')")
spark.sql(f"INSERT INTO delta.`{rt}` VALUES (1), (2), (3)")
spark.sql(f"DELETE FROM delta.`{rt}` WHERE id = 2")
""", tw=str(tw), cm=str(cm), rt=str(rt))
    tw_rows = [(1, (1.5,)), (2, (2.5,)), (5000000000, (3.25,))]
    cm_rows = [(1, None), (3, None), (4, "d")]
    rt_rows = [(1,), (3,)]

    def ds_rows(path, cols):
        return sorted(tuple(tuple(x) if isinstance(x, list) else x for x in r)
                      for r in delta_spark.run("""
result = [[list(x) if hasattr(x, "__fields__") else x for x in r]
          for r in spark.read.format("delta").load(args["p"]).select(*args["cols"]).collect()]
""", p=str(path), cols=cols))

    def dl_rows(path):
        return sorted(tuple(tuple(x) if hasattr(x, "__fields__") else x for x in r)
                      for r in DeltaTable.forPath(spark, str(path)).toDF().collect())

    assert dl_rows(tw) == tw_rows == ds_rows(tw, ["a", "s"])
    assert dl_rows(cm) == cm_rows == ds_rows(cm, ["id", "v"])
    assert dl_rows(rt) == rt_rows

    DeltaTable.forPath(spark, str(tw)).dropFeatureSupport("typeWidening")
    DeltaTable.forPath(spark, str(cm)).dropFeatureSupport("columnMapping")
    DeltaTable.forPath(spark, str(rt)).dropFeatureSupport("rowTracking")

    assert "REORG" in operations(tw) and "REMOVE COLUMN MAPPING" in operations(cm)
    assert operations(rt)[-3:] == ["SET TBLPROPERTIES", "ROW TRACKING UNBACKFILL", "DROP FEATURE"]
    for add in kinds(tw, operations(tw).index("REORG"), "add"):
        s = pq.read_schema(tw / add["path"])
        assert str(s.field("a").type) == "int64" and str(s.field("s").type.field("f").type) == "double"
    assert dl_rows(tw) == tw_rows == ds_rows(tw, ["a", "s"])
    assert dl_rows(cm) == cm_rows == ds_rows(cm, ["id", "v"])
    assert dl_rows(rt) == rt_rows == ds_rows(rt, ["id"])
    assert rows_delta_rs(cm) == cm_rows
    assert rows_delta_rs(rt) == rt_rows
    assert rows_delta_rs(tw) == tw_rows
    # delta-spark keeps writing the downgraded tables
    delta_spark.run("""
spark.sql(f"INSERT INTO delta.`{args['tw']}` VALUES (6, named_struct('f', 6.5))")
spark.sql(f"INSERT INTO delta.`{args['cm']}` VALUES (6, 'f')")
spark.sql(f"INSERT INTO delta.`{args['rt']}` VALUES (6)")
""", tw=str(tw), cm=str(cm), rt=str(rt))
    assert (6, (6.5,)) in dl_rows(tw) and (6, "f") in dl_rows(cm) and (6,) in dl_rows(rt)
