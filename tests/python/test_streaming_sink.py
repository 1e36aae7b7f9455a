"""The Structured Streaming sink: writeStream.format("deltalog") / toTable (issue 29, sink half).

Every micro-batch is one commit with a txn action (appId = query id, version = batch id) and the
operation STREAMING UPDATE; a batch replayed after a restart is skipped. The input is Spark's file
source over JSON files written upfront (one file per micro-batch with maxFilesPerTrigger=1), run
with Trigger.AvailableNow so every run is deterministic.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import java_error_classes

SCHEMA = "id LONG, key STRING, v LONG"


# ----------------------------------------------------------------------------- helpers
def write_inputs(d: Path, batches, start: int = 0) -> None:
    """One JSON-lines file per batch (rows: dicts), named so the file source orders them."""
    d.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(batches, start):
        tmp = d / f".part-{i:05d}.json.tmp"
        tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
        tmp.rename(d / f"part-{i:05d}.json")


def rows_for(batch: int, n: int = 5, key_mod: int = 3):
    return [{"id": batch * 1000 + i, "key": f"k{(batch * n + i) % key_mod}", "v": i} for i in range(n)]


def stream(spark, src: Path, schema: str = SCHEMA):
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(src))


def run_available_now(writer, path=None, table=None):
    q = writer.trigger(availableNow=True)
    q = q.toTable(table) if table else q.start(str(path))
    q.awaitTermination()
    assert q.exception() is None
    return q


def forget_batch_commit(ckpt: Path, batch: int) -> None:
    """Deletes the checkpoint's record that `batch` finished: the next run replays that batch."""
    (ckpt / "commits" / str(batch)).unlink()
    (ckpt / "commits" / f".{batch}.crc").unlink(missing_ok=True)


def versions(path: Path):
    return sorted(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))


def commit(path: Path, v: int):
    return [json.loads(l) for l in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines() if l]


def kind(actions, k):
    return [a[k] for a in actions if k in a]


def table_rows(spark, path: Path, cols="id, key, v"):
    return sorted(tuple(r) for r in spark.sql(f"SELECT {cols} FROM deltalog.`{path}`").collect())


def expected(batches, cols=("id", "key", "v")):
    return sorted(tuple(r[c] for c in cols) for b in batches for r in b)


# ----------------------------------------------------------------------------- append
def test_append_one_commit_per_batch_with_txn_and_operation(spark, tmp_path):
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    batches = [rows_for(b) for b in range(3)]
    write_inputs(src, batches)
    q = run_available_now(stream(spark, src).writeStream.format("deltalog")
                          .option("checkpointLocation", str(ckpt)), out)
    assert versions(out) == [0, 1, 2]
    assert table_rows(spark, out) == expected(batches)
    for v in range(3):
        c = commit(out, v)
        assert kind(c, "txn") and kind(c, "txn")[0]["appId"] == q.id and kind(c, "txn")[0]["version"] == v
        assert kind(c, "txn")[0]["lastUpdated"] > 0
        info = kind(c, "commitInfo")[0]
        assert info["operation"] == "STREAMING UPDATE"
        assert info["operationParameters"] == {"outputMode": "Append", "queryId": q.id, "epochId": str(v)}
        m = info["operationMetrics"]
        adds = kind(c, "add")
        assert m["numAddedFiles"] == str(len(adds)) and m["numRemovedFiles"] == "0"
        assert m["numOutputRows"] == "5" and m["numOutputBytes"] == str(sum(a["size"] for a in adds))
        assert all(json.loads(a["stats"])["numRecords"] >= 1 for a in adds)
        assert not kind(c, "remove")
    assert kind(commit(out, 0), "metaData") and not kind(commit(out, 1), "metaData")


def test_restart_from_checkpoint_writes_nothing_twice(spark, tmp_path):
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    batches = [rows_for(b) for b in range(2)]
    write_inputs(src, batches)

    def run():
        return run_available_now(stream(spark, src).writeStream.format("deltalog")
                                 .option("checkpointLocation", str(ckpt)), out)
    q1 = run()
    assert versions(out) == [0, 1]
    q2 = run()  # nothing new: no batch, no commit
    assert versions(out) == [0, 1] and q2.id == q1.id
    more = [rows_for(b) for b in range(2, 4)]
    write_inputs(src, more, start=2)
    run()
    assert versions(out) == [0, 1, 2, 3]
    assert [kind(commit(out, v), "txn")[0]["version"] for v in (2, 3)] == [2, 3]
    assert table_rows(spark, out) == expected(batches + more)


def test_replayed_batch_is_skipped(spark, tmp_path):
    """Spark replays the last batch when its commits/ entry is missing (a crash between the sink's
    commit and the checkpoint's): the sink sees the batch id in the table's txn and writes nothing."""
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    batches = [rows_for(b) for b in range(3)]
    write_inputs(src, batches)
    w = lambda: stream(spark, src).writeStream.format("deltalog").option("checkpointLocation", str(ckpt))
    run_available_now(w(), out)
    assert versions(out) == [0, 1, 2]
    forget_batch_commit(ckpt, 2)
    q = run_available_now(w(), out)
    assert (ckpt / "commits" / "2").exists(), "Spark did not replay batch 2"
    # batch 2 ran again; the sink skipped it without even reading its input (the plan is lazy)
    assert q.lastProgress is not None and q.lastProgress["batchId"] == 2
    assert versions(out) == [0, 1, 2]
    assert table_rows(spark, out) == expected(batches)


# ----------------------------------------------------------------------------- complete / update
def test_complete_mode_replaces_contents_in_one_commit(spark, tmp_path):
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    batches = [rows_for(b, n=6, key_mod=4) for b in range(3)]
    write_inputs(src, batches)
    agg = stream(spark, src).groupBy("key").agg({"v": "sum", "id": "count"}) \
        .withColumnRenamed("sum(v)", "total").withColumnRenamed("count(id)", "n")
    q = run_available_now(agg.writeStream.format("deltalog").outputMode("complete")
                          .option("checkpointLocation", str(ckpt)), out)
    assert versions(out) == [0, 1, 2]
    want = {}
    for r in (r for b in batches for r in b):
        t, n = want.get(r["key"], (0, 0))
        want[r["key"]] = (t + r["v"], n + 1)
    assert table_rows(spark, out, "key, total, n") == sorted((k, t, n) for k, (t, n) in want.items())
    prev_adds = {a["path"] for a in kind(commit(out, 0), "add")}
    for v in (1, 2):
        c = commit(out, v)
        info = kind(c, "commitInfo")[0]
        assert info["operationParameters"] == {"outputMode": "Complete", "queryId": q.id, "epochId": str(v)}
        removed = {r["path"] for r in kind(c, "remove")}
        assert removed == prev_adds and all(r["dataChange"] for r in kind(c, "remove"))
        assert info["operationMetrics"]["numRemovedFiles"] == str(len(removed))
        assert kind(c, "txn")[0]["version"] == v
        prev_adds = {a["path"] for a in kind(c, "add")}


def test_update_mode_is_refused(spark, tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    write_inputs(src, [rows_for(0)])
    agg = stream(spark, src).groupBy("key").count()
    with pytest.raises(Exception) as e:
        agg.writeStream.format("deltalog").outputMode("update") \
            .option("checkpointLocation", str(tmp_path / "ckpt")).start(str(out))
    assert "DELTA_UNSUPPORTED_OUTPUT_MODE" in str(e.value)
    assert "io.deltalog.commands.InvalidWriteException" in java_error_classes(e.value)
    assert not (out / "_delta_log").exists()


# ----------------------------------------------------------------------------- write rules
def test_partitioned_merge_schema_and_constraint_violation(spark, tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    write_inputs(src, [rows_for(0), rows_for(1)])
    run_available_now(stream(spark, src).writeStream.format("deltalog").partitionBy("key")
                      .option("checkpointLocation", str(tmp_path / "c1")), out)
    meta = kind(commit(out, 0), "metaData")[0]
    assert meta["partitionColumns"] == ["key"]
    assert all(set(a["partitionValues"]) == {"key"} for a in kind(commit(out, 1), "add"))

    # a new column: refused without mergeSchema (nothing committed), added with it
    src2 = tmp_path / "in2"
    write_inputs(src2, [[{"id": 9000 + i, "key": "k0", "v": i, "extra": f"e{i}"} for i in range(3)]])
    s2 = lambda: stream(spark, src2, SCHEMA + ", extra STRING").writeStream.format("deltalog")
    q = s2().option("checkpointLocation", str(tmp_path / "c2")).trigger(availableNow=True).start(str(out))
    with pytest.raises(Exception):
        q.awaitTermination()
    assert versions(out) == [0, 1]
    run_available_now(s2().option("checkpointLocation", str(tmp_path / "c3")).option("mergeSchema", "true"), out)
    assert versions(out) == [0, 1, 2]
    fields = [f["name"] for f in json.loads(kind(commit(out, 2), "metaData")[0]["schemaString"])["fields"]]
    assert fields == ["id", "key", "v", "extra"]
    assert sorted(r[0] for r in spark.sql(f"SELECT extra FROM deltalog.`{out}` WHERE extra IS NOT NULL")
                  .collect()) == ["e0", "e1", "e2"]

    # a CHECK constraint violated by a micro-batch: the query fails, nothing is committed
    spark.sql(f"ALTER TABLE deltalog.`{out}` ADD CONSTRAINT v_small CHECK (v < 100)")
    before = versions(out)
    src3 = tmp_path / "in3"
    write_inputs(src3, [[{"id": 7001, "key": "k1", "v": 5}, {"id": 7002, "key": "k2", "v": 500}]])
    q = stream(spark, src3).writeStream.format("deltalog").option("checkpointLocation", str(tmp_path / "c4")) \
        .trigger(availableNow=True).start(str(out))
    with pytest.raises(Exception) as e:
        q.awaitTermination()
    assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in str(e.value) or "v_small" in str(e.value)
    assert versions(out) == before
    assert spark.sql(f"SELECT count(*) FROM deltalog.`{out}` WHERE id IN (7001, 7002)").first()[0] == 0


def test_not_null_generated_and_identity_columns(spark, tmp_path):
    src = tmp_path / "in"
    spark.sql("DROP TABLE IF EXISTS stream_sink_rules")
    spark.sql("CREATE TABLE stream_sink_rules (id BIGINT NOT NULL, key STRING, v BIGINT, "
              "v2 BIGINT GENERATED ALWAYS AS (v * 2), rid BIGINT GENERATED ALWAYS AS IDENTITY) USING deltalog")
    try:
        write_inputs(src, [rows_for(0, n=3), rows_for(1, n=3)])
        run_available_now(stream(spark, src).writeStream.format("deltalog")
                          .option("checkpointLocation", str(tmp_path / "c")), table="stream_sink_rules")
        got = spark.sql("SELECT id, v, v2, rid FROM stream_sink_rules").collect()
        assert sorted((r.id, r.v2) for r in got) == sorted((r["id"], r["v"] * 2) for b in range(2)
                                                            for r in rows_for(b, n=3))
        assert len({r.rid for r in got}) == 6 and all(r.rid is not None for r in got)
        # NOT NULL: a null id fails the batch, nothing committed
        loc = Path(spark.sql("DESCRIBE DETAIL stream_sink_rules").first()["location"].replace("file:", ""))
        before = versions(loc)
        src2 = tmp_path / "in2"
        write_inputs(src2, [[{"id": None, "key": "x", "v": 1}]])
        q = stream(spark, src2).writeStream.format("deltalog") \
            .option("checkpointLocation", str(tmp_path / "c2")).trigger(availableNow=True).toTable("stream_sink_rules")
        with pytest.raises(Exception) as e:
            q.awaitTermination()
        assert "DELTA_NOT_NULL_CONSTRAINT_VIOLATED" in str(e.value) or "NOT NULL" in str(e.value)
        assert versions(loc) == before
    finally:
        spark.sql("DROP TABLE IF EXISTS stream_sink_rules")


# ----------------------------------------------------------------------------- toTable
def test_to_table_on_catalog_table(spark, tmp_path):
    src = tmp_path / "in"
    batches = [rows_for(b) for b in range(2)]
    write_inputs(src, batches)
    for t in ("stream_sink_existing", "stream_sink_new"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    spark.sql("CREATE TABLE stream_sink_existing (id BIGINT, key STRING, v BIGINT) USING deltalog")
    try:
        q = run_available_now(stream(spark, src).writeStream.format("deltalog")
                              .option("checkpointLocation", str(tmp_path / "c1")), table="stream_sink_existing")
        assert sorted(tuple(r) for r in spark.table("stream_sink_existing").collect()) == expected(batches)
        detail = spark.sql("DESCRIBE DETAIL stream_sink_existing").first()
        assert detail["format"] in ("delta", "deltalog")
        loc = Path(detail["location"].replace("file:", ""))
        assert versions(loc) == [0, 1, 2]  # CREATE TABLE + 2 batches
        assert kind(commit(loc, 2), "txn")[0] == {**kind(commit(loc, 2), "txn")[0], "appId": q.id, "version": 1}
        assert not list(loc.glob("_spark_metadata")), "Spark's file sink wrote the table"
        # a table that does not exist yet is created (USING deltalog) by toTable
        run_available_now(stream(spark, src).writeStream.format("deltalog")
                          .option("checkpointLocation", str(tmp_path / "c2")), table="stream_sink_new")
        assert spark.sql("DESCRIBE DETAIL stream_sink_new").first()["format"] in ("delta", "deltalog")
        assert sorted(tuple(r) for r in spark.table("stream_sink_new").collect()) == expected(batches)
    finally:
        for t in ("stream_sink_existing", "stream_sink_new"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_to_table_cluster_by_creates_a_clustered_table(spark, tmp_path):
    src = tmp_path / "in"
    batches = [rows_for(b) for b in range(2)]
    write_inputs(src, batches)
    for t in ("stream_sink_clustered", "stream_sink_clustered_ref"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    try:
        run_available_now(stream(spark, src).writeStream.clusterBy("key").format("deltalog")
                          .option("checkpointLocation", str(tmp_path / "c")), table="stream_sink_clustered")
        spark.sql("CREATE TABLE stream_sink_clustered_ref (id BIGINT, key STRING, v BIGINT) USING deltalog "
                  "CLUSTER BY (key)")
        ours = spark.sql("DESCRIBE DETAIL stream_sink_clustered").first()
        ref = spark.sql("DESCRIBE DETAIL stream_sink_clustered_ref").first()
        assert ours["clusteringColumns"] == ref["clusteringColumns"] == ["key"]
        assert ours["partitionColumns"] == []

        def created(detail):  # the CREATE commit's protocol and clustering domain
            actions = commit(Path(detail["location"].replace("file:", "")), 0)
            domains = [d for d in kind(actions, "domainMetadata") if d["domain"] == "delta.clustering"]
            return kind(actions, "protocol")[0], [json.loads(d["configuration"]) for d in domains]

        assert created(ours) == created(ref)
        assert sorted(tuple(r) for r in spark.table("stream_sink_clustered").collect()) == expected(batches)
        # by path: the table the first batch creates is clustered the same way
        out = tmp_path / "by_path"
        run_available_now(stream(spark, src).writeStream.clusterBy("key").format("deltalog")
                          .option("checkpointLocation", str(tmp_path / "c2")), path=out)
        by_path = spark.sql(f"DESCRIBE DETAIL deltalog.`{out}`").first()
        assert by_path["clusteringColumns"] == ["key"]
        assert created(by_path) == created(ref)
        assert table_rows(spark, out) == expected(batches)
        assert "__clustering_columns" not in json.dumps(commit(out, 0))
    finally:
        for t in ("stream_sink_clustered", "stream_sink_clustered_ref"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")


# ----------------------------------------------------------------------------- foreachBatch
def test_foreach_batch_merge_and_write_idempotent(spark, tmp_path):
    """foreachBatch with a MERGE that adds to the target (not idempotent by itself) under the session's
    spark.databricks.delta.write.txnAppId/txnVersion, and a write with txnAppId/txnVersion: a replayed
    batch is skipped by both (no commit, nothing counted twice)."""
    from deltalog.tables import DeltaTable
    src, out, audit, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "audit", tmp_path / "ckpt"
    spark.createDataFrame([], SCHEMA).write.format("deltalog").save(str(out))
    batches = [[{"id": i, "key": f"k{i}", "v": b + 1} for i in range(4)] for b in range(3)]  # same ids each batch
    write_inputs(src, batches)

    def upsert(df, batch_id):
        s = df.sparkSession
        s.conf.set("spark.databricks.delta.write.txnAppId", "merge-app")
        s.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
        try:
            (DeltaTable.forPath(s, str(out)).alias("t").merge(df.alias("s"), "t.id = s.id")
             .whenMatchedUpdate(set={"v": "t.v + s.v"}).whenNotMatchedInsertAll().execute())
        finally:
            s.conf.unset("spark.databricks.delta.write.txnAppId")
            s.conf.unset("spark.databricks.delta.write.txnVersion")
        (df.write.format("deltalog").option("txnAppId", "audit-app").option("txnVersion", batch_id)
         .mode("append").save(str(audit)))

    w = lambda: stream(spark, src).writeStream.foreachBatch(upsert).option("checkpointLocation", str(ckpt))
    run_available_now(w())
    summed = sorted((i, f"k{i}", 1 + 2 + 3) for i in range(4))
    assert table_rows(spark, out) == summed
    assert table_rows(spark, audit) == expected(batches)
    out_versions, audit_versions = versions(out), versions(audit)
    merges = [commit(out, v) for v in out_versions[1:]]
    assert [kind(c, "commitInfo")[0]["operation"] for c in merges] == ["MERGE"] * 3
    assert [(t["appId"], t["version"]) for c in merges for t in kind(c, "txn")] == [("merge-app", b) for b in range(3)]
    assert [(t["appId"], t["version"]) for v in audit_versions for t in kind(commit(audit, v), "txn")] == \
        [("audit-app", b) for b in range(3)]
    # replay the last batch: MERGE and write are both skipped (no commit, no value added twice)
    forget_batch_commit(ckpt, 2)
    run_available_now(w())
    assert (ckpt / "commits" / "2").exists()
    assert versions(out) == out_versions and versions(audit) == audit_versions
    assert table_rows(spark, out) == summed
    assert table_rows(spark, audit) == expected(batches)


def test_idempotent_merge_session_conf_outside_streaming(spark, tmp_path):
    """The session confs alone: the same (appId, version) twice merges once; only one conf is an error."""
    from deltalog.tables import DeltaTable
    out = tmp_path / "t"
    spark.createDataFrame([(1, "a", 1)], SCHEMA).write.format("deltalog").save(str(out))
    src = spark.createDataFrame([(1, "a", 10)], SCHEMA)

    def merge():
        (DeltaTable.forPath(spark, str(out)).alias("t").merge(src.alias("s"), "t.id = s.id")
         .whenMatchedUpdate(set={"v": "t.v + s.v"}).execute())
    spark.conf.set("spark.databricks.delta.write.txnAppId", "app")
    try:
        spark.conf.set("spark.databricks.delta.write.txnVersion", "7")
        merge()
        merge()
        assert table_rows(spark, out) == [(1, "a", 11)] and versions(out) == [0, 1]
        spark.conf.set("spark.databricks.delta.write.txnVersion", "8")
        merge()
        assert table_rows(spark, out) == [(1, "a", 21)] and versions(out) == [0, 1, 2]
        spark.conf.unset("spark.databricks.delta.write.txnVersion")
        with pytest.raises(Exception) as e:
            merge()
        assert "DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS" in str(e.value)
        assert versions(out) == [0, 1, 2]
    finally:
        spark.conf.unset("spark.databricks.delta.write.txnAppId")
        spark.conf.unset("spark.databricks.delta.write.txnVersion")


# ----------------------------------------------------------------------------- delta-spark
PEER_STREAM = """
import json, os
q = (spark.readStream.schema(args['schema']).option('maxFilesPerTrigger', 1).json(args['src'])
     .writeStream.format('delta').option('checkpointLocation', args['ckpt'])
     .trigger(availableNow=True).start(args['out']))
q.awaitTermination()
result = q.id
"""


def test_delta_spark_reads_sink_table_and_logs_match(spark, tmp_path, delta_spark):
    src = tmp_path / "in"
    batches = [rows_for(b) for b in range(2)]
    write_inputs(src, batches)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    run_available_now(stream(spark, src).writeStream.format("deltalog")
                      .option("checkpointLocation", str(tmp_path / "c1")), ours)
    their_q = delta_spark.run(PEER_STREAM, schema=SCHEMA, src=str(src), ckpt=str(tmp_path / "c2"), out=str(theirs))
    # delta-spark reads what the sink wrote, row for row
    got = delta_spark.run(f"result = sorted([list(r) for r in spark.sql('SELECT id, key, v FROM delta.`{ours}`')"
                          ".collect()])")
    assert sorted(tuple(r) for r in got) == expected(batches)
    # deltalog reads what delta-spark's sink wrote
    assert table_rows(spark, theirs) == expected(batches)
    assert versions(ours) == versions(theirs) == [0, 1]
    for v in (0, 1):
        a, b = commit(ours, v), commit(theirs, v)
        ia, ib = kind(a, "commitInfo")[0], kind(b, "commitInfo")[0]
        assert ia["operation"] == ib["operation"] == "STREAMING UPDATE"
        assert set(ia["operationParameters"]) == set(ib["operationParameters"])
        assert ia["operationParameters"]["outputMode"] == ib["operationParameters"]["outputMode"]
        assert ia["operationParameters"]["epochId"] == ib["operationParameters"]["epochId"] == str(v)
        assert ib["operationParameters"]["queryId"] == their_q
        assert set(ia["operationMetrics"]) == set(ib["operationMetrics"])
        assert ia["operationMetrics"]["numOutputRows"] == ib["operationMetrics"]["numOutputRows"]
        ta, tb = kind(a, "txn")[0], kind(b, "txn")[0]
        assert set(ta) == set(tb) and ta["version"] == tb["version"] == v and tb["appId"] == their_q
        assert {k for x in a for k in x} == {k for x in b for k in x}  # the same kinds of actions
