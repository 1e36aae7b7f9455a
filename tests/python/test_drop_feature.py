"""``ALTER TABLE ... DROP FEATURE <name> [TRUNCATE HISTORY]`` and ``DeltaTable.dropFeatureSupport``
(digest §5.8): what each drop writes to the log (pre-downgrade commits, barrier checkpoints, the
downgrade commit with ``checkpointProtection``), compared with what delta-spark 4.4 writes for the
same drop of its own table; delta-spark reading the result and deltalog dropping a feature of a
table delta-spark made; refusals (delta-spark's error classes, nothing written); TRUNCATE HISTORY
with a short retention; a concurrent commit between validation and the downgrade commit.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from deltalog._z85 import encodeUuid
from deltalog.exceptions import (DeltaConcurrentModificationException, DropFeatureConflictException,
                                 DropFeatureError, DropFeatureWaitForRetentionError, MetadataChangedException,
                                 TableFeatureError)
from deltalog.tables import DeltaTable


# ------------------------------------------------------------------------------ helpers

def versions(path: Path) -> list:
    return sorted(int(f.name[:20]) for f in (path / "_delta_log").glob("*.json") if f.name[:20].isdigit())


def checkpoints(path: Path) -> list:
    return sorted(int(f.name[:20]) for f in (path / "_delta_log").glob("*.checkpoint*.parquet"))


def actions(path: Path, v: int) -> list:
    return [json.loads(l) for l in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines()]


def commit_info(path: Path, v: int) -> dict:
    return next(a["commitInfo"] for a in actions(path, v) if "commitInfo" in a)


def one(path: Path, v: int, kind: str):
    found = [a[kind] for a in actions(path, v) if kind in a]
    return found[0] if found else None


def operations(path: Path) -> list:
    return [commit_info(path, v)["operation"] for v in versions(path)]


def sql_path(p: Path) -> str:
    return f"deltalog.`{p}`"


def info_summary(ci: dict) -> dict:
    return {k: ci.get(k) for k in ("operation", "operationParameters", "isolationLevel", "isBlindAppend")}


DELTA_SPARK_LOG = """
import json, os, glob
def log(p):
    out = {}
    for f in sorted(glob.glob(p + "/_delta_log/*.json")):
        out[int(os.path.basename(f)[:20])] = [json.loads(l) for l in open(f)]
    cps = sorted(int(os.path.basename(f)[:20]) for f in glob.glob(p + "/_delta_log/*.checkpoint*.parquet"))
    return {"commits": out, "checkpoints": cps}
"""


def ds_ops(peer_log: dict) -> list:
    commits = peer_log["commits"]
    return [next(a["commitInfo"] for a in commits[str(v)] if "commitInfo" in a)["operation"]
            for v in sorted(int(k) for k in commits)]


def ds_commit(peer_log: dict, v: int) -> list:
    return peer_log["commits"][str(v)]


# ------------------------------------------------------------------------------ fast drop

@pytest.fixture(scope="module")
def delta_spark_drops(delta_spark, tmp_path_factory):
    """delta-spark 4.4 dropping deletionVectors, checkConstraints and v2Checkpoint of its own tables."""
    base = tmp_path_factory.mktemp("ds_drops")
    return delta_spark.run(DELTA_SPARK_LOG + """
base = args["base"]
spark.sql(f"CREATE TABLE delta.`{base}/dv` (id INT) USING delta TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
spark.sql(f"INSERT INTO delta.`{base}/dv` VALUES (1), (2)")
spark.sql(f"ALTER TABLE delta.`{base}/dv` DROP FEATURE deletionVectors")
spark.sql(f"CREATE TABLE delta.`{base}/cc` (id INT) USING delta TBLPROPERTIES ('delta.constraints.pos'='id > 0')")
spark.sql(f"ALTER TABLE delta.`{base}/cc` DROP CONSTRAINT pos")
spark.sql(f"ALTER TABLE delta.`{base}/cc` DROP FEATURE checkConstraints")
result = {"dv": log(base + "/dv"), "cc": log(base + "/cc")}
""", base=str(base))


def test_fast_drop_of_deletion_vectors_writes_what_delta_spark_writes(spark, tmp_path, delta_spark,
                                                                        delta_spark_drops):
    p = tmp_path / "dv"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
    spark.sql(f"INSERT INTO {sql_path(p)} VALUES (1), (2)")
    spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE deletionVectors")

    # pre-downgrade (property unset, DV tombstones), 3 checkpointed barrier commits, the downgrade
    assert operations(p) == ["CREATE TABLE", "WRITE", "UNSET TBLPROPERTIES", "Deletion Vector Tombstones",
                             "Empty Commit", "Empty Commit", "Empty Commit", "DROP FEATURE"]
    ds = delta_spark_drops["dv"]
    assert operations(p) == ds_ops(ds)
    assert checkpoints(p) == ds["checkpoints"] == [4, 5, 6, 7]
    assert one(p, 2, "metaData")["configuration"] == {}

    # the downgrade commit: protocol without the feature, checkpointProtection, protected version
    assert one(p, 7, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 7,
                                     "writerFeatures": ["appendOnly", "checkpointProtection", "invariants"]}
    assert one(p, 7, "metaData")["configuration"] == {"delta.requireCheckpointProtectionBeforeVersion": "7"}
    ci = commit_info(p, 7)
    assert ci["operationParameters"] == {"featureName": "deletionVectors", "truncateHistory": False}
    assert ci["readVersion"] == 6
    ds_drop = ds_commit(ds, 7)
    ds_ci = next(a["commitInfo"] for a in ds_drop if "commitInfo" in a)
    assert info_summary(ci) == info_summary(ds_ci)
    ds_protocol = next(a["protocol"] for a in ds_drop if "protocol" in a)
    assert sorted(ds_protocol["writerFeatures"]) == one(p, 7, "protocol")["writerFeatures"]
    assert next(a["metaData"] for a in ds_drop if "metaData" in a)["configuration"] == \
        one(p, 7, "metaData")["configuration"]
    for v in (3, 4, 5, 6):  # the barrier / tombstone commits record the same commitInfo facts
        ds_v = next(a["commitInfo"] for a in ds_commit(ds, v) if "commitInfo" in a)
        assert info_summary(commit_info(p, v)) == info_summary(ds_v), v

    # deltalog and delta-spark read the downgraded table
    t = DeltaTable.forPath(spark, str(p))
    assert t.version() == 7 and t.protocol().simpleString == "1,7,None,[appendOnly,checkpointProtection,invariants]"
    assert sorted(r.id for r in t.toDF().collect()) == [1, 2]
    got = delta_spark.run("""
d = spark.sql(f"DESCRIBE DETAIL delta.`{args['p']}`").collect()[0]
result = {"rows": sorted(r.id for r in spark.read.format("delta").load(args["p"]).collect()),
          "features": sorted(d.tableFeatures), "r": d.minReaderVersion, "w": d.minWriterVersion}
""", p=str(p))
    assert got == {"rows": [1, 2], "features": ["appendOnly", "checkpointProtection", "invariants"], "r": 1, "w": 7}


def test_writer_only_feature_drops_in_one_commit(spark, tmp_path, delta_spark_drops):
    p = tmp_path / "cc"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES ('delta.constraints.pos'='id > 0')")
    assert one(p, 0, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 3}
    # still constrained: refused with delta-spark's class, naming the constraint; nothing written
    with pytest.raises(DropFeatureError) as e:
        DeltaTable.forPath(spark, str(p)).dropFeatureSupport("checkConstraints")
    assert e.value.errorClass == "DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE" and "`pos`" in e.value.message
    assert isinstance(e.value, TableFeatureError) and versions(p) == [0]

    spark.sql(f"ALTER TABLE {sql_path(p)} UNSET TBLPROPERTIES ('delta.constraints.pos')")
    DeltaTable.forPath(spark, str(p)).dropFeatureSupport("checkConstraints")
    assert versions(p) == [0, 1, 2] and checkpoints(p) == []
    assert one(p, 2, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert one(p, 2, "metaData")["configuration"] == {}  # written, as delta-spark does
    ci = commit_info(p, 2)
    ds = delta_spark_drops["cc"]
    ds_last = max(int(k) for k in ds["commits"])
    ds_ci = next(a["commitInfo"] for a in ds_commit(ds, ds_last) if "commitInfo" in a)
    assert info_summary(ci) == info_summary(ds_ci) == {
        "operation": "DROP FEATURE", "operationParameters": {"featureName": "checkConstraints",
                                                             "truncateHistory": False},
        "isolationLevel": "Serializable", "isBlindAppend": True}
    assert next(a["protocol"] for a in ds_commit(ds, ds_last) if "protocol" in a) == one(p, 2, "protocol")


def test_v2_checkpoint_and_vacuum_protocol_check_fast_drops(spark, tmp_path):
    p = tmp_path / "v2"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES ('delta.checkpointPolicy'='v2')")
    spark.sql(f"INSERT INTO {sql_path(p)} VALUES (1)")
    DeltaTable.forPath(spark, str(p)).checkpoint()
    DeltaTable.forPath(spark, str(p)).dropFeatureSupport("v2Checkpoint")
    # as delta-spark 4.4: policy set to classic, barrier, downgrade keeping the classic policy
    assert operations(p)[2:] == ["SET TBLPROPERTIES", "Empty Commit", "Empty Commit", "Empty Commit", "DROP FEATURE"]
    assert one(p, 6, "metaData")["configuration"] == {"delta.checkpointPolicy": "classic",
                                                      "delta.requireCheckpointProtectionBeforeVersion": "6"}
    assert one(p, 6, "protocol")["writerFeatures"] == ["appendOnly", "checkpointProtection", "invariants"]
    assert {3, 4, 5, 6} <= set(checkpoints(p))
    assert (p / "_delta_log" / f"{6:020d}.checkpoint.parquet").exists()  # classic

    q = tmp_path / "vpc"
    spark.sql(f"CREATE TABLE {sql_path(q)} (id INT) USING deltalog "
              "TBLPROPERTIES ('delta.feature.vacuumProtocolCheck'='supported')")
    spark.sql(f"ALTER TABLE {sql_path(q)} DROP FEATURE vacuumProtocolCheck")
    assert operations(q) == ["CREATE TABLE", "Empty Commit", "Empty Commit", "Empty Commit", "DROP FEATURE"]
    assert one(q, 4, "protocol")["writerFeatures"] == ["appendOnly", "checkpointProtection", "invariants"]
    assert checkpoints(q) == [1, 2, 3, 4]


def test_in_commit_timestamp_and_domain_metadata_drops(spark, tmp_path):
    p = tmp_path / "ict"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES ('delta.enableInCommitTimestamps'='true')")
    spark.sql(f"INSERT INTO {sql_path(p)} VALUES (1)")
    spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE inCommitTimestamp")
    # as delta-spark 4.4: the property is set to false (recorded as UNSET), then one downgrade commit
    assert operations(p) == ["CREATE TABLE", "WRITE", "UNSET TBLPROPERTIES", "DROP FEATURE"]
    assert one(p, 2, "metaData")["configuration"] == {"delta.enableInCommitTimestamps": "false"}
    assert one(p, 3, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert "inCommitTimestamp" not in commit_info(p, 3)

    q = tmp_path / "dm"
    spark.sql(f"CREATE TABLE {sql_path(q)} (id INT) USING deltalog TBLPROPERTIES ('delta.feature.domainMetadata'='supported')")
    spark.sql(f"ALTER TABLE {sql_path(q)} DROP FEATURE domainMetadata")
    assert operations(q) == ["CREATE TABLE", "DROP FEATURE"]
    assert one(q, 1, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}


def test_domain_metadata_drop_removes_leaked_domains_as_delta_spark(spark, tmp_path, delta_spark):
    """Domains left behind (here written by an application) are removed by one DOMAIN METADATA
    CLEANUP commit before the downgrade, as delta-spark 4.4 does on its own copy."""
    def leak(path: Path, v: int) -> None:
        lines = [{"commitInfo": {"timestamp": 1, "operation": "MANUAL UPDATE", "operationParameters": {}}},
                 {"domainMetadata": {"domain": "app.one", "configuration": "{}", "removed": False}},
                 {"domainMetadata": {"domain": "app.two", "configuration": "{\"k\":1}", "removed": False}}]
        (path / "_delta_log" / f"{v:020d}.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    props = "TBLPROPERTIES ('delta.feature.domainMetadata'='supported')"
    spark.sql(f"CREATE TABLE {sql_path(ours)} (id INT) USING deltalog {props}")
    delta_spark.run(f"spark.sql(\"CREATE TABLE delta.`{theirs}` (id INT) USING delta {props}\")")
    leak(ours, 1)
    leak(theirs, 1)
    spark.sql(f"ALTER TABLE {sql_path(ours)} DROP FEATURE domainMetadata")
    delta_spark.run(f"spark.sql('ALTER TABLE delta.`{theirs}` DROP FEATURE domainMetadata')")
    assert operations(ours) == operations(theirs) == ["CREATE TABLE", "MANUAL UPDATE", "DOMAIN METADATA CLEANUP",
                                                      "DROP FEATURE"]
    ci, tci = commit_info(ours, 2), commit_info(theirs, 2)
    assert ci["operationParameters"] == tci["operationParameters"]
    removed = sorted((a["domainMetadata"]["domain"], a["domainMetadata"]["removed"])
                     for a in actions(ours, 2) if "domainMetadata" in a)
    assert removed == [("app.one", True), ("app.two", True)]
    assert one(ours, 3, "protocol") == one(theirs, 3, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert delta_spark.run(f"result = spark.read.format('delta').load('{ours}').count()") == 0


def test_catalog_table(spark, tmp_path):
    name = "drop_feature_catalog_t"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    p = tmp_path / "cat"
    spark.sql(f"CREATE TABLE {name} (id INT) USING deltalog LOCATION '{p}' "
              "TBLPROPERTIES ('delta.feature.checkConstraints'='supported')")
    try:
        spark.sql(f"ALTER TABLE {name} DROP FEATURE `checkConstraints`")
        assert one(p, 1, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}
        with pytest.raises(DropFeatureError) as e:
            spark.sql(f"ALTER TABLE {name} DROP FEATURE checkConstraints")
        assert e.value.errorClass == "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT" and name in e.value.message
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


# ------------------------------------------------------------------------------ refusals

@pytest.mark.parametrize("feature, error_class", [
    ("fooBar", "DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE"),
    ("`delta.enableDeletionVectors`", "DELTA_FEATURE_DROP_FEATURE_IS_DELTA_PROPERTY"),
    ("changeDataFeed", "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT"),
    ("appendOnly", "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE"),
    ("invariants", "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE"),
    ("checkpointProtection", "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT"),
    ("checkConstraints TRUNCATE HISTORY", "DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED"),
    ("domainMetadata", "DELTA_FEATURE_DROP_DEPENDENT_FEATURE"),
])
def test_refusals_use_delta_spark_error_classes_and_write_nothing(spark, tmp_path, feature, error_class):
    p = tmp_path / "t"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES "
              "('delta.feature.checkConstraints'='supported', 'delta.feature.clustering'='supported')")
    with pytest.raises(DropFeatureError) as e:
        spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE {feature}")
    assert e.value.errorClass == error_class
    assert str(p) in e.value.message
    assert versions(p) == [0]


def test_checkpoint_protection_needs_truncate_history(spark, tmp_path):
    p = tmp_path / "t"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog "
              "TBLPROPERTIES ('delta.feature.vacuumProtocolCheck'='supported')")
    spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE vacuumProtocolCheck")
    v = versions(p)[-1]
    with pytest.raises(DropFeatureError) as e:
        DeltaTable.forPath(spark, str(p)).dropFeatureSupport("checkpointProtection")
    assert e.value.errorClass == "DELTA_FEATURE_CAN_ONLY_DROP_CHECKPOINT_PROTECTION_WITH_HISTORY_TRUNCATION"
    # the protected history is younger than the 24-hour retention
    with pytest.raises(DropFeatureWaitForRetentionError) as e:
        DeltaTable.forPath(spark, str(p)).dropFeatureSupport("checkpointProtection", truncateHistory=True)
    assert e.value.errorClass == "DELTA_FEATURE_DROP_CHECKPOINT_PROTECTION_WAIT_FOR_RETENTION_PERIOD"
    # as delta-spark 4.4: the attempt ended the history with a checkpointed empty commit, nothing else
    assert versions(p)[-1] == v + 1 and commit_info(p, v + 1)["operation"] == "Empty Commit"
    assert DeltaTable.forPath(spark, str(p)).protocol().writerFeatures >= {"checkpointProtection"}
    # with a zero retention the history before the protected version is truncated, then dropped
    spark.sql(f"ALTER TABLE {sql_path(p)} SET TBLPROPERTIES "
              "('delta.dropFeatureTruncateHistory.retentionDuration' = 'interval 0 seconds')")
    DeltaTable.forPath(spark, str(p)).dropFeatureSupport("checkpointProtection", truncateHistory=True)
    last = versions(p)[-1]
    assert one(p, last, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}
    assert "delta.requireCheckpointProtectionBeforeVersion" not in one(p, last, "metaData")["configuration"]
    assert commit_info(p, last)["operationParameters"] == {"featureName": "checkpointProtection",
                                                           "truncateHistory": True}
    # the history up to the attempt's own checkpointed empty commit is gone
    assert min(versions(p)) == last - 1 and commit_info(p, last - 1)["operation"] == "Empty Commit"
    assert checkpoints(p) == [last - 1]
    assert DeltaTable.forPath(spark, str(p)).toDF().count() == 0


def test_python_argument_checks(spark, tmp_path):
    p = tmp_path / "t"
    spark.range(1).write.format("deltalog").save(str(p))
    t = DeltaTable.forPath(spark, str(p))
    with pytest.raises(ValueError):
        t.dropFeatureSupport(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        t.dropFeatureSupport("deletionVectors", truncateHistory="yes")  # type: ignore[arg-type]
    assert versions(p) == [0]


# ------------------------------------------------------------------------------ delta-spark tables

def test_deletion_vectors_left_in_files_are_purged_like_delta_spark(spark, tmp_path, delta_spark):
    p, q = tmp_path / "ds", tmp_path / "theirs"
    made_by_delta_spark = """
for p in (args["p"], args["q"]):
    spark.sql(f"CREATE TABLE delta.`{p}` (id INT) USING delta TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
    spark.sql(f"INSERT INTO delta.`{p}` VALUES (1), (2), (3)")
    spark.sql(f"DELETE FROM delta.`{p}` WHERE id = 2")
"""
    delta_spark.run(made_by_delta_spark, p=str(p), q=str(q))
    before = versions(p)
    dv_file = next(a["add"] for a in actions(p, before[-1]) if "add" in a and a["add"].get("deletionVector"))
    # a file still has a deletion vector: like delta-spark, the drop purges it first (REORG ... APPLY (PURGE))
    DeltaTable.forPath(spark, str(p)).dropFeatureSupport("deletionVectors")
    delta_spark.run("spark.sql(f\"ALTER TABLE delta.`{args['q']}` DROP FEATURE deletionVectors\")", q=str(q))
    theirs = delta_spark.run(DELTA_SPARK_LOG + "result = log(args['q'])", q=str(q))
    last = versions(p)[-1]
    ops = operations(p)
    assert ops == ds_ops(theirs)
    assert ops[len(before):] == ["UNSET TBLPROPERTIES", "REORG", "Deletion Vector Tombstones", "Empty Commit",
                                 "Empty Commit", "Empty Commit", "DROP FEATURE"]
    reorg = actions(p, len(before) + 1)
    assert [r["remove"]["path"] for r in reorg if "remove" in r] == [dv_file["path"]]
    assert all(a[k]["dataChange"] is False and not a[k].get("deletionVector") for a in reorg for k in ("add",) if k in a)
    tomb = [a["remove"] for a in actions(p, len(before) + 2) if "remove" in a]
    assert len(tomb) == 1 and tomb[0]["path"].startswith("deletion_vector_") and tomb[0]["dataChange"] is False
    assert one(p, last, "protocol")["writerFeatures"] == ["appendOnly", "checkpointProtection", "invariants"]
    got = delta_spark.run("""
result = sorted(r.id for r in spark.read.format("delta").load(args["p"]).collect())
spark.sql(f"INSERT INTO delta.`{args['p']}` VALUES (4)")
""", p=str(p))
    assert got == [1, 3]
    assert sorted(r.id for r in DeltaTable.forPath(spark, str(p)).toDF().collect()) == [1, 3, 4]


# ------------------------------------------------------------------------------ TRUNCATE HISTORY

def test_truncate_history_waits_for_the_retention_then_drops(spark, tmp_path, delta_spark):
    p = tmp_path / "t"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
    spark.sql(f"INSERT INTO {sql_path(p)} VALUES (1)")
    # run 1: traces removed, empty commit + checkpoint, then "wait"
    with pytest.raises(DropFeatureWaitForRetentionError) as e:
        DeltaTable.forPath(spark, str(p)).dropFeatureSupport("deletionVectors", truncateHistory=True)
    assert e.value.errorClass == "DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD"
    assert "delta.dropFeatureTruncateHistory.retentionDuration" in e.value.message
    assert operations(p) == ["CREATE TABLE", "WRITE", "UNSET TBLPROPERTIES", "Deletion Vector Tombstones",
                             "Empty Commit"]
    assert checkpoints(p) == [4]
    assert DeltaTable.forPath(spark, str(p)).protocol().readerFeatures == frozenset({"deletionVectors"})
    # run 2 at once: the history within 24 hours still enables deletion vectors
    with pytest.raises(DropFeatureWaitForRetentionError) as e:
        spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE deletionVectors TRUNCATE HISTORY")
    assert e.value.errorClass == "DELTA_FEATURE_DROP_HISTORICAL_VERSIONS_EXIST"
    assert min(versions(p)) == 0
    # with a zero retention: the history is truncated to the last checkpoint, then the drop commits
    spark.sql(f"ALTER TABLE {sql_path(p)} SET TBLPROPERTIES "
              "('delta.dropFeatureTruncateHistory.retentionDuration' = 'interval 0 seconds')")
    spark.sql(f"ALTER TABLE {sql_path(p)} DROP FEATURE deletionVectors TRUNCATE HISTORY")
    vs = versions(p)
    last = vs[-1]
    assert commit_info(p, last)["operationParameters"] == {"featureName": "deletionVectors", "truncateHistory": True}
    assert one(p, last, "protocol") == {"minReaderVersion": 1, "minWriterVersion": 2}  # no checkpointProtection
    assert vs == [last - 1, last] and checkpoints(p) == [last - 1, last]
    assert commit_info(p, last - 1)["operation"] == "Empty Commit"
    assert delta_spark.run("result = spark.read.format('delta').load(args['p']).count()", p=str(p)) == 1


# ------------------------------------------------------------------------------ concurrency

DV_ADD = json.dumps({"add": {
    "path": "concurrent.parquet", "partitionValues": {}, "size": 10, "modificationTime": 1, "dataChange": True,
    "stats": json.dumps({"numRecords": 3}),
    "deletionVector": {"storageType": "u", "pathOrInlineDv": encodeUuid(uuid.UUID(int=7)), "offset": 1,
                       "sizeInBytes": 34, "cardinality": 1}}})


def test_concurrent_commit_using_the_feature_again_fails_the_downgrade(spark, tmp_path):
    from deltalog._jvm import api_class, call
    p = tmp_path / "t"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
    api = api_class(spark, "TableApi")
    # the winner adds a file with a deletion vector after the drop validated the table
    with pytest.raises(DropFeatureConflictException) as e:
        call(api.dropFeatureSupportWithConcurrentCommit, str(p), "deletionVectors", False, DV_ADD, "WRITE")
    assert e.value.errorClass == "DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL"
    assert isinstance(e.value, DeltaConcurrentModificationException)
    winner = versions(p)[-1]
    assert e.value.winningVersion == winner and commit_info(p, winner)["operation"] == "WRITE"
    assert "deletion vector" in e.value.message
    # nothing dropped: the protocol is the one the winner committed with
    assert DeltaTable.forPath(spark, str(p)).protocol().readerFeatures == frozenset({"deletionVectors"})
    assert all(commit_info(p, v)["operation"] != "DROP FEATURE" for v in versions(p))

    # the winner enables the feature's property again: a metadata change, the winner wins
    q = tmp_path / "q"
    spark.sql(f"CREATE TABLE {sql_path(q)} (id INT) USING deltalog TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
    reenable = json.dumps({"metaData": {**one(q, 0, "metaData"),
                                        "configuration": {"delta.enableDeletionVectors": "true"}}})
    with pytest.raises(MetadataChangedException):
        call(api.dropFeatureSupportWithConcurrentCommit, str(q), "deletionVectors", False, reenable,
             "SET TBLPROPERTIES")
    last = versions(q)[-1]
    assert one(q, last, "metaData")["configuration"] == {"delta.enableDeletionVectors": "true"}
    assert DeltaTable.forPath(spark, str(q)).protocol().readerFeatures == frozenset({"deletionVectors"})


def test_concurrent_unrelated_commit_is_rebased_and_protection_restamped(spark, tmp_path):
    from deltalog._jvm import api_class, call
    p = tmp_path / "t"
    spark.sql(f"CREATE TABLE {sql_path(p)} (id INT) USING deltalog "
              "TBLPROPERTIES ('delta.feature.vacuumProtocolCheck'='supported')")
    add = json.dumps({"add": {"path": "other.parquet", "partitionValues": {}, "size": 10, "modificationTime": 1,
                              "dataChange": True, "stats": json.dumps({"numRecords": 1})}})
    v = call(api_class(spark, "TableApi").dropFeatureSupportWithConcurrentCommit, str(p), "vacuumProtocolCheck",
             False, add, "WRITE")
    assert commit_info(p, v - 1)["operation"] == "WRITE"
    assert commit_info(p, v)["operation"] == "DROP FEATURE"
    # the protected version is the version the downgrade landed at, not the one first attempted
    assert one(p, v, "metaData")["configuration"] == {"delta.requireCheckpointProtectionBeforeVersion": str(v)}
    assert v in checkpoints(p)
