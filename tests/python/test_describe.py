"""DESCRIBE HISTORY / DESCRIBE DETAIL in SQL and ``DeltaTable.history()`` / ``detail()`` (issue 26).

The rows are checked against the log files themselves (each commit's ``commitInfo``, the live
files' sizes), against time travel (``TIMESTAMP AS OF`` a row's timestamp is that row's version),
and against delta-spark 4.4 run in a separate process on the same tables, both ways: a table
deltalog wrote and one delta-spark wrote must describe the same in both engines.
"""
from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path

import pytest

from conformance_corpus import CONFORMANCE
from deltalog.tables import DeltaTable


HISTORY_SCHEMA = ("struct<version:bigint,timestamp:timestamp,userId:string,userName:string,operation:string,"
                  "operationParameters:map<string,string>,job:struct<jobId:string,jobName:string,jobRunId:string,"
                  "runId:string,jobOwnerId:string,triggerType:string>,notebook:struct<notebookId:string>,"
                  "clusterId:string,readVersion:bigint,isolationLevel:string,isBlindAppend:boolean,"
                  "operationMetrics:map<string,string>,userMetadata:string,engineInfo:string>")
# delta-spark 4.4's DESCRIBE DETAIL; deltalog adds the documented `statistics` column at the end.
DELTA_SPARK_DETAIL_SCHEMA = (
    "struct<format:string,id:string,name:string,description:string,location:string,createdAt:timestamp,"
    "lastModified:timestamp,partitionColumns:array<string>,clusteringColumns:array<string>,"
    "numFiles:bigint,sizeInBytes:bigint,properties:map<string,string>,minReaderVersion:int,"
    "minWriterVersion:int,tableFeatures:array<string>>")
DETAIL_SCHEMA = DELTA_SPARK_DETAIL_SCHEMA[:-1] + ",statistics:map<string,bigint>>"
CORPUS = Path(CONFORMANCE)


def commit_infos(path: Path) -> dict:
    out = {}
    for f in sorted((path / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            if line.startswith('{"commitInfo"'):
                out[int(f.name[:20])] = json.loads(line)["commitInfo"]
    return out


def live_sizes(path: Path) -> dict:
    live = {}
    for f in sorted((path / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            a = json.loads(line)
            if "add" in a:
                live[a["add"]["path"]] = a["add"]["size"]
            elif "remove" in a:
                live.pop(a["remove"]["path"], None)
    return live


def make_table(spark, path: Path) -> None:
    spark.range(0, 10).selectExpr("id", "id % 3 AS p").write.format("deltalog").partitionBy("p").save(str(path))
    spark.range(10, 15).selectExpr("id", "id % 3 AS p").write.format("deltalog").mode("append").save(str(path))
    spark.sql(f"ALTER TABLE deltalog.`{path}` SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days')")
    spark.range(20, 22).selectExpr("id", "id % 3 AS p").write.format("deltalog").mode("overwrite").save(str(path))


def as_plain(rows) -> list:
    return [r.asDict(recursive=True) for r in rows]


def test_describe_history_matches_the_log_and_time_travel(spark, tmp_path):
    path = tmp_path / "h"
    make_table(spark, path)
    df = spark.sql(f"DESCRIBE HISTORY deltalog.`{path}`")
    assert df.schema.simpleString() == HISTORY_SCHEMA
    rows = as_plain(df.collect())
    infos = commit_infos(path)
    assert [r["version"] for r in rows] == [3, 2, 1, 0]
    for r in rows:
        ci = infos[r["version"]]
        assert r["operation"] == ci["operation"]
        assert r["operationParameters"] == ci.get("operationParameters")
        assert r["operationMetrics"] == ci.get("operationMetrics")
        assert r["readVersion"] == ci.get("readVersion")
        assert r["isBlindAppend"] == ci.get("isBlindAppend")
        assert r["isolationLevel"] == ci.get("isolationLevel")
        assert r["engineInfo"] == ci["engineInfo"]
        # TIMESTAMP AS OF the row's timestamp is the row's version
        ts = r["timestamp"].strftime("%Y-%m-%d %H:%M:%S.%f")
        got = spark.read.format("deltalog").option("timestampAsOf", ts).load(str(path))
        assert DeltaTable.forPath(spark, str(path), timestamp=r["timestamp"]).version() == r["version"], ts
        assert got.count() == spark.read.format("deltalog").option("versionAsOf", r["version"]).load(str(path)).count()
    assert [r["operation"] for r in rows] == ["WRITE", "SET TBLPROPERTIES", "WRITE", "WRITE"]
    assert rows[0]["operationParameters"]["mode"] == "Overwrite"
    # LIMIT n: the n newest; SQL and the Python API agree
    assert as_plain(spark.sql(f"DESC HISTORY '{path}' LIMIT 2").collect()) == rows[:2]
    t = DeltaTable.forPath(spark, str(path))
    assert as_plain(t.history(1).collect()) == rows[:1]
    assert as_plain(t.history().collect()) == rows
    with pytest.raises(ValueError):
        t.history(-1)


def test_history_reads_only_the_commits_it_shows(spark, tmp_path):
    path = tmp_path / "many"
    for i in range(12):
        spark.range(i, i + 1).write.format("deltalog").mode("append").save(str(path))
    # a corrupt old commit cannot matter to LIMIT 3: only the 3 newest commit files are read
    (path / "_delta_log" / f"{1:020d}.json").write_text("not json\n")
    rows = spark.sql(f"DESCRIBE HISTORY deltalog.`{path}` LIMIT 3").collect()
    assert [r.version for r in rows] == [11, 10, 9]
    with pytest.raises(Exception, match="00000000000000000001.json"):
        spark.sql(f"DESCRIBE HISTORY deltalog.`{path}`").collect()


def test_describe_detail(spark, tmp_path):
    path = tmp_path / "d"
    make_table(spark, path)
    df = spark.sql(f"DESCRIBE DETAIL deltalog.`{path}`")
    assert df.schema.simpleString() == DETAIL_SCHEMA
    (d,) = as_plain(df.collect())
    sizes = live_sizes(path)
    meta = next(json.loads(l)["metaData"] for l in (path / "_delta_log" / f"{0:020d}.json").read_text().splitlines()
                if l.startswith('{"metaData"'))
    assert d["format"] == "delta" and d["id"] == meta["id"] and d["name"] is None
    assert d["location"] == path.as_uri().replace("file:///", "file:/")
    assert d["numFiles"] == len(sizes) and d["sizeInBytes"] == sum(sizes.values())
    assert d["partitionColumns"] == ["p"] and d["clusteringColumns"] == []
    assert d["properties"] == {"delta.logRetentionDuration": "interval 60 days"}
    assert (d["minReaderVersion"], d["minWriterVersion"]) == (1, 2)
    assert d["tableFeatures"] == ["appendOnly", "invariants"]
    assert d["statistics"] == {"numDeletionVectors": 0, "numRowsDeletedByDeletionVectors": 0}
    assert d["createdAt"] == dt.datetime.fromtimestamp(meta["createdTime"] / 1000)
    assert d["lastModified"] == spark.sql(f"DESCRIBE HISTORY deltalog.`{path}` LIMIT 1").collect()[0].timestamp
    assert as_plain(DeltaTable.forPath(spark, str(path)).detail().collect()) == [d]


def test_describe_by_name(spark, tmp_path):
    db = "desc_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'wh'}'")
    try:
        spark.sql(f"CREATE TABLE {db}.t (id BIGINT, s STRING) USING deltalog COMMENT 'events' "
                  "TBLPROPERTIES ('delta.appendOnly' = 'true')")
        spark.sql(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
        (d,) = as_plain(spark.sql(f"DESCRIBE DETAIL {db}.t").collect())
        assert d["name"] == f"spark_catalog.{db}.t" and d["description"] == "events"
        assert d["numFiles"] >= 1 and d["properties"]["delta.appendOnly"] == "true"
        assert as_plain(DeltaTable.forName(spark, f"{db}.t").detail().collect()) == [d]
        h = spark.sql(f"DESCRIBE HISTORY {db}.t").collect()
        assert [r.operation for r in h] == ["WRITE", "CREATE TABLE"]
        spark.sql(f"CREATE TABLE {db}.pq (id BIGINT) USING parquet")
        with pytest.raises(Exception, match="DELTA_TABLE_NOT_FOUND"):
            spark.sql(f"DESCRIBE HISTORY {db}.pq").collect()
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def _norm_history(rows: list) -> list:
    # the timestamp is compared separately (delta-spark shows it in its session time zone)
    return [{k: v for k, v in r.items() if k != "timestamp"} for r in rows]


def test_delta_spark_describes_the_same(spark, tmp_path, delta_spark):
    """A table deltalog wrote and one delta-spark wrote: both engines' DESCRIBE HISTORY and DETAIL agree."""
    ours = tmp_path / "ours"
    make_table(spark, ours)
    theirs = tmp_path / "theirs"
    delta_spark.run("""
        p = args["p"]
        spark.range(0, 10).selectExpr("id", "id % 3 AS p").write.format("delta").partitionBy("p").save(p)
        spark.range(10, 15).selectExpr("id", "id % 3 AS p").write.format("delta").mode("append").save(p)
        spark.sql("ALTER TABLE delta.`" + p + "` SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days')")
        spark.range(20, 22).selectExpr("id", "id % 3 AS p").write.format("delta").mode("overwrite").save(p)
    """, p=str(theirs))
    code = """
        t = "delta.`" + args["p"] + "`"
        h = spark.sql("DESCRIBE HISTORY " + t)
        d = spark.sql("DESCRIBE DETAIL " + t)
        result = {"h": [r.asDict(recursive=True) for r in h.collect()], "d": d.collect()[0].asDict(recursive=True),
                  "hs": h.schema.simpleString(), "ds": d.schema.simpleString()}
    """
    for path in (ours, theirs):
        peer = delta_spark.run(code, p=str(path))
        assert peer["hs"] == HISTORY_SCHEMA and peer["ds"] == DELTA_SPARK_DETAIL_SCHEMA
        mine_h = as_plain(spark.sql(f"DESCRIBE HISTORY deltalog.`{path}`").collect())
        (mine_d,) = as_plain(spark.sql(f"DESCRIBE DETAIL deltalog.`{path}`").collect())
        assert _norm_history(mine_h) == _norm_history(peer["h"]), path.name
        # the same instants (both Python processes run in the machine's zone)
        assert [str(r["timestamp"]) for r in mine_h] == [str(r["timestamp"]) for r in peer["h"]], path.name
        for k in ("format", "id", "name", "description", "partitionColumns", "clusteringColumns", "numFiles",
                  "sizeInBytes", "properties", "minReaderVersion", "minWriterVersion", "tableFeatures"):
            assert mine_d[k] == peer["d"][k], (path.name, k)
        assert str(mine_d["lastModified"]) == str(peer["d"]["lastModified"])
        assert mine_d["location"] == peer["d"]["location"]


@pytest.mark.parametrize("table", ["delta-kernel-rs/table-with-dv-small",
                                   "delta-kernel-rs/dv-partitioned-with-checkpoint/delta"])
def test_detail_statistics_count_deletion_vectors(spark, table):
    """`statistics`: live deletion vectors and the rows they delete. Checked against the corpus: the
    rows the stats record minus the rows a reader sees (delta-rs' file stats and the manifest), and
    the live files with a DV replayed from the JSON log where there is no checkpoint."""
    from deltalake import DeltaTable as RsTable

    from deltalog.history import table_detail
    path = CORPUS / table
    (d,) = as_plain(spark.sql(f"DESCRIBE DETAIL deltalog.`{path}`").collect())
    stats = d["statistics"]
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    visible = next(e["rows"] for e in manifest if e["table_path"] == table)
    physical = sum(RsTable(str(path)).get_add_actions(flatten=True).column("num_records").to_pylist())
    assert stats["numRowsDeletedByDeletionVectors"] == physical - visible > 0
    assert table_detail(path)["statistics"] == stats  # the pure-Python replay agrees
    if not any(path.glob("_delta_log/*.checkpoint.parquet")):
        live = {}
        for f in sorted((path / "_delta_log").glob("*.json")):
            for line in f.read_text().splitlines():
                a = json.loads(line)
                if "add" in a:
                    live[a["add"]["path"]] = a["add"].get("deletionVector")
                elif "remove" in a:
                    live.pop(a["remove"]["path"], None)
        assert stats["numDeletionVectors"] == sum(1 for dv in live.values() if dv) >= 1
