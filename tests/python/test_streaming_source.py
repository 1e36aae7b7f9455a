"""Structured Streaming source (issue 29): ``spark.readStream.format("deltalog").load(path)`` and
``spark.readStream.table(name)``.

Every test streams into Spark's memory sink (or a Parquet file sink for restarts) with
``Trigger.AvailableNow`` / ``processAllAvailable()`` and checks the rows delivered, how they were
split into micro-batches (``recentProgress``), the offsets in the checkpoint, and the errors (with
delta-spark's error classes) for commits a stream cannot follow. delta-spark 4.4 (peer process)
streams a deltalog-written table and deltalog streams a delta-spark-written one.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import java_error_classes

COLS = "id BIGINT, p INT"


# ------------------------------------------------------------------------------------------ helpers
def create(spark, path: Path, props: str = "", partitioned: bool = False) -> str:
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} ({COLS}) USING deltalog {'PARTITIONED BY (p)' if partitioned else ''} {props}")
    return t


def append(spark, path: Path, ids, files: int = 1) -> None:
    """One commit adding rows ``ids`` (p = id % 2) in ``files`` files."""
    df = spark.createDataFrame([(int(i), int(i) % 2) for i in ids], COLS)
    df.repartition(files).write.format("deltalog").mode("append").save(str(path))


def stream(spark, path, **options):
    r = spark.readStream.format("deltalog")
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load(str(path))


RESULTS: dict = {}


def run_available_now(df, name: str, checkpoint: Path):
    """Streams ``df`` with Trigger.AvailableNow into ``RESULTS[name]`` (one list of row tuples per
    micro-batch, through foreachBatch: unlike the memory sink it restarts from a checkpoint);
    returns the finished query."""
    RESULTS[name] = []

    def collect(batch, batch_id):
        RESULTS[name].append([tuple(r) for r in batch.collect()])

    q = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(checkpoint))
         .trigger(availableNow=True).start())
    q.awaitTermination(120)
    assert not q.isActive
    if q.exception() is not None:
        raise q.exception()
    return q


def rows(name: str) -> list:
    return sorted(r for b in RESULTS[name] for r in b)


def batch_rows(q) -> list:
    """numInputRows of the query's micro-batches that read something."""
    return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"] > 0]


def ids(spark, name: str) -> list:
    """The ids delivered to ``name``: from RESULTS (run_available_now) or the memory table."""
    if name in RESULTS:
        return sorted(r[0] for r in rows(name))
    return sorted(r[0] for r in spark.sql(f"SELECT id FROM {name}").collect())


def offsets(checkpoint: Path) -> list:
    """The source offsets (JSON) of the checkpoint's offset log, by batch id."""
    out = []
    for f in sorted((checkpoint / "offsets").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1):
        if f.name.isdigit():
            out.append(json.loads(f.read_text().strip().splitlines()[-1]))
    return out


def error_text(e) -> str:
    return str(e) + " ".join(java_error_classes(e))


# ------------------------------------------------------------------------------------------ order and limits
def test_initial_snapshot_then_new_commits_in_order(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)
    for k in range(3):
        append(spark, path, range(k * 10, k * 10 + 10))
    df = stream(spark, path)
    assert df.isStreaming and [f.name for f in df.schema.fields] == ["id", "p"]
    q = (df.writeStream.format("memory").queryName("src_order").outputMode("append")
         .option("checkpointLocation", str(tmp_path / "cp")).start())
    try:
        q.processAllAvailable()
        assert ids(spark, "src_order") == list(range(30))
        append(spark, path, range(30, 35))
        append(spark, path, range(35, 40))
        q.processAllAvailable()
        assert ids(spark, "src_order") == list(range(40))
        # the first batch is the snapshot (version 3), then each commit's adds
        offs = offsets(tmp_path / "cp")
        first = offs[0]
        assert first["sourceVersion"] == 3 and first["reservoirVersion"] == 4 and first["index"] == -100
        assert first["isStartingVersion"] is False
        table_id = json.loads([ln for ln in (path / "_delta_log" / "00000000000000000000.json").read_text().splitlines()
                               if '"metaData"' in ln][0])["metaData"]["id"]
        assert {o["reservoirId"] for o in offs} == {table_id}
        assert offs[-1]["reservoirVersion"] == 6 and offs[-1]["index"] == -100
    finally:
        q.stop()


def test_max_files_per_trigger_splits_batches(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)
    append(spark, path, range(0, 6), files=3)       # 3 files of 2 rows (snapshot)
    q = run_available_now(stream(spark, path, maxFilesPerTrigger=2), "src_maxfiles1", tmp_path / "cp")
    assert batch_rows(q) == [4, 2]
    assert ids(spark, "src_maxfiles1") == list(range(6))
    # after the snapshot: new commits, 2 files per batch across commit boundaries
    append(spark, path, range(6, 9), files=1)
    append(spark, path, range(9, 15), files=3)
    q = run_available_now(stream(spark, path, maxFilesPerTrigger=2), "src_maxfiles2", tmp_path / "cp")
    assert sum(batch_rows(q)) == 9 and len(batch_rows(q)) == 2
    assert batch_rows(q)[0] == 3 + 2  # the 1-file commit and the first file of the 3-file commit


def test_max_bytes_per_trigger(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)
    for k in range(4):
        append(spark, path, range(k * 5, k * 5 + 5))
    q = run_available_now(stream(spark, path, maxBytesPerTrigger=1), "src_maxbytes", tmp_path / "cp")
    assert batch_rows(q) == [5, 5, 5, 5]   # a batch always takes at least one file
    assert ids(spark, "src_maxbytes") == list(range(20))
    size = max(f.stat().st_size for f in path.glob("*.parquet"))
    q = run_available_now(stream(spark, path, maxBytesPerTrigger=size + 1), "src_maxbytes2", tmp_path / "cp2")
    assert batch_rows(q) == [10, 10]       # the file crossing the limit is taken


def test_starting_version_and_timestamp(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)                     # version 0
    append(spark, path, range(0, 3))        # 1
    time.sleep(1.1)
    append(spark, path, range(3, 6))        # 2
    append(spark, path, range(6, 9))        # 3
    run_available_now(stream(spark, path, startingVersion=2), "src_sv", tmp_path / "cp1")
    assert ids(spark, "src_sv") == list(range(3, 9))
    run_available_now(stream(spark, path, startingVersion="latest"), "src_latest", tmp_path / "cp2")
    assert ids(spark, "src_latest") == []
    log = path / "_delta_log"
    ts_v2 = (log / "00000000000000000002.json").stat().st_mtime
    ts = datetime.fromtimestamp(ts_v2 - 0.5, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00:00"
    run_available_now(stream(spark, path, startingTimestamp=ts), "src_ts", tmp_path / "cp3")
    assert ids(spark, "src_ts") == list(range(3, 9))
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, path, startingTimestamp="2999-01-01"), "src_ts2", tmp_path / "cp4")
    assert "DELTA_TIMESTAMP_GREATER_THAN_COMMIT" in error_text(e.value)
    with pytest.raises(Exception) as e:
        stream(spark, path, startingVersion=1, startingTimestamp=ts)
    assert "startingVersion" in str(e.value) and "startingTimestamp" in str(e.value)


def test_restart_from_checkpoint_delivers_only_new_data(spark, tmp_path):
    path, out, cp = tmp_path / "t", tmp_path / "out", tmp_path / "cp"
    create(spark, path)
    append(spark, path, range(0, 10), files=2)

    def run():
        q = (stream(spark, path, maxFilesPerTrigger=1).writeStream.format("parquet")
             .option("checkpointLocation", str(cp)).trigger(availableNow=True).start(str(out)))
        q.awaitTermination(120)
        assert q.exception() is None

    run()
    assert sorted(r[0] for r in spark.read.parquet(str(out)).collect()) == list(range(10))
    run()                                   # nothing new: nothing delivered again
    assert spark.read.parquet(str(out)).count() == 10
    append(spark, path, range(10, 13))
    append(spark, path, range(13, 20), files=2)
    run()
    got = sorted(r[0] for r in spark.read.parquet(str(out)).collect())
    assert got == list(range(20))           # exactly once


def test_checkpoint_of_another_table_is_refused(spark, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for p in (a, b):
        create(spark, p)
        append(spark, p, range(3))
    run_available_now(stream(spark, a), "src_other0", tmp_path / "cp")
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, b), "src_other1", tmp_path / "cp")
    assert "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE" in error_text(e.value)


# ------------------------------------------------------------------------------------------ change commits
def test_delete_fails_the_stream_unless_skip_change_commits(spark, tmp_path):
    path = tmp_path / "t"
    t = create(spark, path)
    append(spark, path, range(0, 10))
    q = run_available_now(stream(spark, path), "src_del0", tmp_path / "cp")
    assert ids(spark, "src_del0") == list(range(10))
    spark.sql(f"DELETE FROM {t} WHERE id < 3")          # rewrites the file: removes + adds
    append(spark, path, range(10, 12))
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, path), "src_del1", tmp_path / "cp")
    text = error_text(e.value)
    assert "DELTA_SOURCE_TABLE_IGNORE_CHANGES" in text and "version 2" in text and "skipChangeCommits" in text
    # the same checkpoint with skipChangeCommits: the DELETE commit is skipped, later data delivered
    q = run_available_now(stream(spark, path, skipChangeCommits=True), "src_del2", tmp_path / "cp")
    assert ids(spark, "src_del2") == [10, 11]
    # ignoreChanges re-delivers the rewritten file's rows
    run_available_now(stream(spark, path, ignoreChanges=True, startingVersion=2), "src_del3", tmp_path / "cp2")
    assert ids(spark, "src_del3") == list(range(3, 12))


def test_whole_file_delete_needs_ignore_deletes(spark, tmp_path):
    path = tmp_path / "t"
    t = create(spark, path, partitioned=True)
    append(spark, path, range(0, 10))
    run_available_now(stream(spark, path), "src_pd0", tmp_path / "cp")
    spark.sql(f"DELETE FROM {t} WHERE p = 1")           # whole partition: removes only
    append(spark, path, [100, 102])
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, path), "src_pd1", tmp_path / "cp")
    assert "DELTA_SOURCE_IGNORE_DELETE" in error_text(e.value)
    run_available_now(stream(spark, path, ignoreDeletes=True), "src_pd2", tmp_path / "cp")
    assert ids(spark, "src_pd2") == [100, 102]


def test_optimize_is_skipped_silently(spark, tmp_path):
    path = tmp_path / "t"
    t = create(spark, path)
    for k in range(3):
        append(spark, path, range(k * 4, k * 4 + 4))
    run_available_now(stream(spark, path), "src_opt0", tmp_path / "cp")
    spark.sql(f"OPTIMIZE {t}")
    commit = (path / "_delta_log" / "00000000000000000004.json").read_text()
    assert '"OPTIMIZE"' in commit and '"remove"' in commit
    append(spark, path, range(100, 103))
    q = run_available_now(stream(spark, path), "src_opt1", tmp_path / "cp")
    assert ids(spark, "src_opt1") == [100, 101, 102]   # the compacted file is not delivered again
    assert sum(batch_rows(q)) == 3


# ------------------------------------------------------------------------------------------ reads
def test_deletion_vectors_are_applied(spark, tmp_path):
    path = tmp_path / "t"
    t = create(spark, path, props="TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    append(spark, path, range(0, 10))
    spark.sql(f"DELETE FROM {t} WHERE id % 3 = 0")
    log = "".join(f.read_text() for f in sorted((path / "_delta_log").glob("*.json")))
    assert '"deletionVector"' in log
    run_available_now(stream(spark, path), "src_dv", tmp_path / "cp")
    assert ids(spark, "src_dv") == [i for i in range(10) if i % 3]


def test_column_mapping_and_partition_filter(spark, tmp_path):
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, `my col` STRING, p INT) USING deltalog PARTITIONED BY (p) "
              "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 0), (2, 'b', 1), (3, 'c', 0)")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN `my col` TO renamed")
    spark.sql(f"INSERT INTO {t} VALUES (4, 'd', 1)")
    df = stream(spark, path).where("p = 1").select("id", "renamed", "p")
    run_available_now(df, "src_cm", tmp_path / "cp")
    assert rows("src_cm") == [(2, "b", 1), (4, "d", 1)]


def test_partition_filter_prunes_each_batch(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path, partitioned=True)
    for k in range(3):
        append(spark, path, range(k * 10, k * 10 + 10), files=2)
    adds = [json.loads(ln)["add"] for f in sorted((path / "_delta_log").glob("*.json"))
            for ln in f.read_text().splitlines() if '"add"' in ln]
    in_p1 = [a for a in adds if a["partitionValues"]["p"] == "1"]
    assert 0 < len(in_p1) < len(adds)
    q = (stream(spark, path).where("p = 1").writeStream.format("memory").queryName("src_prune")
         .option("checkpointLocation", str(tmp_path / "cp")).start())
    try:
        q.processAllAvailable()
        leaves = q._jsq.streamingQuery().lastExecution().executedPlan().collectLeaves().iterator()
        scans = []
        while leaves.hasNext():
            leaf = leaves.next()
            m = leaf.metrics().get("numFiles")
            if m.isDefined():
                scans.append(m.get().value())
        assert scans == [len(in_p1)]          # only the batch's files of partition p = 1 are read
        assert ids(spark, "src_prune") == [i for i in range(30) if i % 2 == 1]
    finally:
        q.stop()


def scan_file_counts(q) -> list:
    """The "number of files read" of every file scan in the query's last micro-batch."""
    leaves = q._jsq.streamingQuery().lastExecution().executedPlan().collectLeaves().iterator()
    out = []
    while leaves.hasNext():
        m = leaves.next().metrics().get("numFiles")
        if m.isDefined():
            out.append(m.get().value())
    return out


def test_data_filter_skips_files_by_stats(spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)
    for lo in (0, 100, 200):                      # one file per commit: ids lo .. lo + 9
        append(spark, path, range(lo, lo + 10))
    q = (stream(spark, path).where("id > 100").writeStream.format("memory").queryName("src_skip")
         .option("checkpointLocation", str(tmp_path / "cp")).start())
    try:
        q.processAllAvailable()
        adds = [json.loads(ln)["add"] for f in sorted((path / "_delta_log").glob("*.json"))
                for ln in f.read_text().splitlines() if '"add"' in ln]
        maybe = [a for a in adds if json.loads(a["stats"])["maxValues"]["id"] > 100]
        assert 0 < len(maybe) < len(adds)
        assert scan_file_counts(q) == [len(maybe)]   # the initial snapshot's batch: the file of 0..9 is skipped
        append(spark, path, range(20, 30))           # a new commit whose stats exclude it ...
        append(spark, path, [5, 500])                # ... and one that may match
        q.processAllAvailable()
        assert scan_file_counts(q) == [1]           # the last batch (both commits) reads one file
        assert ids(spark, "src_skip") == list(range(101, 110)) + list(range(200, 210)) + [500]
    finally:
        q.stop()


def test_exclude_regex_as_delta_spark(spark, delta_spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path, partitioned=True)
    for k in range(3):
        append(spark, path, range(k * 10, k * 10 + 10), files=2)
    run_available_now(stream(spark, path, excludeRegex="p=1/", maxFilesPerTrigger=2), "src_excl", tmp_path / "cp")
    code = (
        "q = (spark.readStream.format('delta').option('excludeRegex', 'p=1/').option('maxFilesPerTrigger', '2')"
        ".load(args['p']).writeStream.format('memory').queryName(args['name'])"
        ".option('checkpointLocation', args['cp']).trigger(availableNow=True).start())\n"
        "q.awaitTermination()\n"
        "result = sorted(r[0] for r in spark.sql('SELECT id FROM ' + args['name']).collect())\n")
    theirs = delta_spark.run(code, p=str(path), name="ds_excl", cp=str(tmp_path / "cp_ds"))
    assert ids(spark, "src_excl") == theirs == [i for i in range(30) if i % 2 == 0]
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, path, excludeRegex="part-("), "src_excl_bad", tmp_path / "cp_bad")
    assert "DELTA_REGEX_OPT_SYNTAX_ERROR" in error_text(e.value) and "excludeRegex" in error_text(e.value)


def test_read_change_feed_stream(spark, tmp_path):
    path = tmp_path / "t"
    t = create(spark, path, props="TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', "
                                  "'delta.enableDeletionVectors' = 'true')")
    append(spark, path, range(0, 4))                    # version 1
    df = stream(spark, path, readChangeFeed=True)
    assert [f.name for f in df.schema.fields] == ["id", "p", "_change_type", "_commit_version", "_commit_timestamp"]
    q = (df.writeStream.format("memory").queryName("src_cdf").outputMode("append")
         .option("checkpointLocation", str(tmp_path / "cp")).start())
    try:
        q.processAllAvailable()
        spark.sql(f"DELETE FROM {t} WHERE id = 1")       # version 2 (DV)
        spark.sql(f"UPDATE {t} SET id = 20 WHERE id = 2")  # version 3
        append(spark, path, [7])                        # version 4
        q.processAllAvailable()
    finally:
        q.stop()
    got = sorted(tuple(r) for r in spark.sql(
        "SELECT id, _change_type, _commit_version FROM src_cdf").collect())
    assert got == sorted([(0, "insert", 1), (1, "insert", 1), (2, "insert", 1), (3, "insert", 1),
                          (1, "delete", 2), (2, "update_preimage", 3), (20, "update_postimage", 3),
                          (7, "insert", 4)])
    # from a starting version, rate-limited: whole commits, one per batch with maxFilesPerTrigger=1
    q = run_available_now(stream(spark, path, readChangeFeed=True, startingVersion=2, maxFilesPerTrigger=1)
                          .select("id", "_change_type", "_commit_version"), "src_cdf2", tmp_path / "cp2")
    assert [sorted({r[2] for r in b}) for b in RESULTS["src_cdf2"] if b] == [[2], [3], [4]]
    assert rows("src_cdf2") == sorted(g for g in got if g[2] >= 2)


def test_schema_change_stops_the_stream_and_restart_picks_it_up(spark, tmp_path):
    path = tmp_path / "t"
    t = create(spark, path)
    append(spark, path, range(0, 3))
    run_available_now(stream(spark, path), "src_sc0", tmp_path / "cp")
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (extra STRING)")
    spark.sql(f"INSERT INTO {t} VALUES (10, 0, 'x')")
    # a source planned before the change sees the new metaData in the range: the stream stops
    df = stream(spark, path)
    assert [f.name for f in df.schema.fields] == ["id", "p", "extra"]
    # the restarted source has the new schema: the old commits are read with it (additive), so it goes on
    run_available_now(df.select("id", "extra"), "src_sc1", tmp_path / "cp")
    assert rows("src_sc1") == [(10, "x")]
    # a query started before the change fails on it
    path2 = tmp_path / "t2"
    t2 = create(spark, path2)
    append(spark, path2, range(0, 3))
    q = (stream(spark, path2).writeStream.format("memory").queryName("src_sc2").outputMode("append")
         .option("checkpointLocation", str(tmp_path / "cp2")).start())
    try:
        q.processAllAvailable()
        spark.sql(f"ALTER TABLE {t2} ADD COLUMNS (extra STRING)")
        spark.sql(f"INSERT INTO {t2} VALUES (10, 0, 'x')")
        with pytest.raises(Exception) as e:
            q.processAllAvailable()
        assert "DELTA_SCHEMA_CHANGED_WITH_VERSION" in error_text(e.value) and "version 2" in error_text(e.value)
    finally:
        q.stop()


def test_column_mapping_drop_is_refused(spark, tmp_path):
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, a STRING, b STRING) USING deltalog "
              "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 'b')")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN b")
    spark.sql(f"INSERT INTO {t} VALUES (2, 'x')")
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, path, startingVersion=0), "src_cmdrop", tmp_path / "cp")
    text = error_text(e.value)
    assert "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG" in text and "'b' was dropped" in text
    assert "Please provide a 'schemaTrackingLocation' to enable non-additive schema evolution" in text  # delta-spark's
    # deltalog has no schema tracking log: the option is refused up front, not ignored
    with pytest.raises(Exception) as e:
        run_available_now(stream(spark, path, startingVersion=0, schemaTrackingLocation=str(tmp_path / "cp2" / "s")),
                          "src_cmdrop2", tmp_path / "cp2")
    text = error_text(e.value)
    assert "DELTA_INVALID_READ_OPTION" in text and "schemaTrackingLocation is not supported" in text


def test_read_stream_table(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS stream_src_tbl")
    spark.sql(f"CREATE TABLE stream_src_tbl ({COLS}) USING deltalog LOCATION '{tmp_path / 't'}'")
    try:
        spark.sql("INSERT INTO stream_src_tbl VALUES (1, 1), (2, 0)")
        spark.sql("INSERT INTO stream_src_tbl VALUES (3, 1)")
        df = spark.readStream.option("maxFilesPerTrigger", "1").table("stream_src_tbl")
        q = run_available_now(df, "src_table", tmp_path / "cp")
        assert ids(spark, "src_table") == [1, 2, 3]
        assert len(batch_rows(q)) >= 2
        assert "DeltalogSource" in q.recentProgress[-1]["sources"][0]["description"]
    finally:
        spark.sql("DROP TABLE IF EXISTS stream_src_tbl")


# ------------------------------------------------------------------------------------------ interop
def test_stream_reads_delta_spark_table(spark, delta_spark, tmp_path):
    path = tmp_path / "t"
    delta_spark.run(
        "p = args['p']\n"
        "spark.sql(f\"CREATE TABLE delta.`{p}` (id BIGINT, p INT) USING delta TBLPROPERTIES "
        "('delta.enableDeletionVectors' = 'true')\")\n"
        "for k in range(3):\n"
        "    spark.sql(f\"INSERT INTO delta.`{p}` VALUES ({k}, 0), ({k + 10}, 1)\")\n"
        "spark.sql(f\"DELETE FROM delta.`{p}` WHERE id = 11\")\n", p=str(path))
    run_available_now(stream(spark, path, maxFilesPerTrigger=1), "src_from_ds", tmp_path / "cp")
    assert ids(spark, "src_from_ds") == [0, 1, 2, 10, 12]
    delta_spark.run("spark.sql(f\"INSERT INTO delta.`{args['p']}` VALUES (50, 0)\")", p=str(path))
    run_available_now(stream(spark, path), "src_from_ds2", tmp_path / "cp")
    assert ids(spark, "src_from_ds2") == [50]


def test_delta_spark_streams_deltalog_table(spark, delta_spark, tmp_path):
    path = tmp_path / "t"
    create(spark, path)
    for k in range(3):
        append(spark, path, range(k * 3, k * 3 + 3))
    code = (
        "q = (spark.readStream.format('delta').option('maxFilesPerTrigger', '1').load(args['p'])"
        ".writeStream.format('memory').queryName(args['name']).option('checkpointLocation', args['cp'])"
        ".trigger(availableNow=True).start())\n"
        "q.awaitTermination()\n"
        "result = sorted(r[0] for r in spark.sql('SELECT id FROM ' + args['name']).collect())\n")
    theirs = delta_spark.run(code, p=str(path), name="ds_from_dl", cp=str(tmp_path / "cp_ds"))
    run_available_now(stream(spark, path), "dl_from_dl", tmp_path / "cp")
    assert theirs == ids(spark, "dl_from_dl") == list(range(9))
