"""`make demo`: what deltalog can do so far, on an embedded local Spark.

1. start a local SparkSession configured by ``configure_spark_with_deltalog``;
2. build a table's metadata and derive its protocol, in Python and on the JVM engine, and show
   they agree;
3. upgrade the protocol (versions, then explicit features) and drop a feature;
4. show the feature registry and which clients-side checks pass;
5. print the JSON actions of the first commit such a table would get;
6-7. read a table through ``DeltaTable`` (time travel, checkpoint) and commit transactions;
8. write and read DataFrames with ``format("deltalog")`` (skipping, time travel, constraints);
9. ask the protocol advisor what enabling a feature would cost.

Run: ``python -m deltalog.demo``. On a cluster: ``DELTALOG_DEMO_MASTER=spark://host:7077`` (the
session's master; default ``local[2]``) and ``DELTALOG_DEMO_DIR=/shared/dir`` (where the demo's
tables go: a directory the executors see at the same path; default the system temp directory);
``DELTALOG_JAR`` names another engine jar than the bundled one.
``docker/docker-compose.yml``'s ``job`` service runs it so.
"""
from __future__ import annotations

import json
import os
import time
import uuid

from deltalog.actions import AddFile, CommitInfo, Format, Metadata, encodePath, parseActions, serializeActions
from deltalog.exceptions import DeltalogError
from deltalog.features import TableFeatures
from deltalog.protocol import Protocol


def _schema() -> str:
    fields = [
        {"name": "id", "type": "long", "nullable": False, "metadata": {}},
        {"name": "city", "type": "string", "nullable": True, "metadata": {}},
        {"name": "event_time", "type": "timestamp_ntz", "nullable": True, "metadata": {}},
    ]
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


def _workdir() -> str:
    """A new directory for one demo table, under ``DELTALOG_DEMO_DIR`` when set."""
    import tempfile
    base = os.environ.get("DELTALOG_DEMO_DIR")
    if base:
        os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix="deltalog-demo-", dir=base or None)


def _title(text: str) -> None:
    print("\n" + text + "\n" + "-" * len(text))


def main() -> None:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog

    _title("1. Local Spark with deltalog")
    builder = (SparkSession.builder.master(os.environ.get("DELTALOG_DEMO_MASTER", "local[2]")).appName("deltalog-demo")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.showConsoleProgress", "false"))
    spark = configure_spark_with_deltalog(builder, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    api = spark._jvm.io.deltalog.api.ProtocolApi
    print(f"Spark {spark.version} ({spark.sparkContext.master}); extensions = {spark.conf.get('spark.sql.extensions')}")

    _title("2. Protocol for a new table, from its metadata")
    configuration = {"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true",
                     "delta.checkpointInterval": "20"}
    metadata = Metadata(id=str(uuid.uuid4()), schemaString=_schema(), format=Format(),
                        partitionColumns=["city"], configuration=configuration,
                        createdTime=int(time.time() * 1000))
    py = Protocol.forNewTable(metadata)
    jvm = Protocol.fromJsonDict(json.loads(api.forNewTable(json.dumps(configuration), _schema(), "{}")))
    print("metadata:", json.dumps(configuration), "+ NOT NULL id + a timestamp_ntz column")
    print("Python  :", py.simpleString)
    print("JVM     :", jvm.simpleString)
    print("agree   :", py == jvm)
    plain = Protocol.forNewTable({"configuration": {}})
    print("a plain table gets", plain.simpleString, "(delta-spark's default)")

    _title("3. Upgrades and drops")
    steps = [
        ("upgradeTableProtocol(1, 3)", lambda p: p.upgradeTableProtocol(1, 3)),
        ("upgradeTableProtocol(1, 2)  -- never downgrades", lambda p: p.upgradeTableProtocol(1, 2)),
        ("addFeatureSupport('rowTracking')", lambda p: p.addFeatureSupport("rowTracking")),
        ("addFeatureSupport('deletionVectors')", lambda p: p.addFeatureSupport("deletionVectors")),
        ("dropFeatureSupport('domainMetadata')", lambda p: p.dropFeatureSupport("domainMetadata")),
        ("dropFeatureSupport('rowTracking')", lambda p: p.dropFeatureSupport("rowTracking")),
        ("dropFeatureSupport('deletionVectors')", lambda p: p.dropFeatureSupport("deletionVectors")),
    ]
    p = plain
    print(f"{'start':52} {p.simpleString}")
    for label, step in steps:
        try:
            p = step(p)
            print(f"{label:52} {p.simpleString}")
        except DeltalogError as e:
            print(f"{label:52} refused: {e.errorClass}")

    _title("4. The feature registry (first 12 of %d)" % len(TableFeatures.all()))
    print(f"{'feature':22} {'type':14} {'legacy':7} {'min (r,w)':10} {'droppable':9} requires")
    for f in TableFeatures.all()[:12]:
        kind = "reader-writer" if f.isReaderWriterFeature else "writer-only"
        print(f"{f.name:22} {kind:14} {str(f.isLegacyFeature):7} {str((f.minReaderVersion, f.minWriterVersion)):10} "
              f"{str(f.isRemovable):9} {', '.join(f.requiredFeatureNames) or '-'}")
    for table in (py, Protocol.fromJsonDict({"minReaderVersion": 3, "minWriterVersion": 7,
                                              "readerFeatures": ["futureFeature"],
                                              "writerFeatures": ["futureFeature"]})):
        try:
            table.checkCanRead(table="demo")
            print(f"deltalog can read a table with protocol {table.simpleString}")
        except DeltalogError as e:
            print(f"read check refused {table.simpleString}: {e.errorClass}")

    _title("5. The first commit of this table, as JSON actions")
    add = AddFile(path=encodePath("city=New York/part-00000-demo.c000.snappy.parquet"),
                  partitionValues={"city": "New York"}, size=1024,
                  modificationTime=metadata.createdTime or 0, dataChange=True,
                  stats=json.dumps({"numRecords": 3}, separators=(",", ":")))
    commit = [CommitInfo.of(timestamp=metadata.createdTime, operation="CREATE TABLE",
                            operationParameters={"partitionBy": "[\"city\"]"},
                            isolationLevel="Serializable", isBlindAppend=True,
                            engineInfo="deltalog/0.1.0"),
              py, metadata, add]
    text = serializeActions(commit)
    print(text, end="")
    again = serializeActions(parseActions(text, file="00000000000000000000.json"))
    print("parse -> serialize round trip identical:", again == text)

    _demo_read(spark)
    _demo_dataframes(spark)
    spark.stop()


def _demo_read(spark) -> None:
    """Build a small table (log written with deltalog.actions, data with pyarrow), then read it."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from deltalog.actions import parseAction
    from deltalog.tables import DeltaTable

    _title("6. Reading a table: snapshot, files, time travel, checkpoint")
    root = _workdir()
    log = os.path.join(root, "_delta_log")
    os.makedirs(log)
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "city", "type": "string", "nullable": True, "metadata": {}}]}, separators=(",", ":"))
    meta = Metadata(id=str(uuid.uuid4()), schemaString=schema, format=Format(), partitionColumns=["city"],
                    configuration={}, createdTime=1_700_000_000_000)
    t0 = 1_700_000_000_000
    for version, city in enumerate(["New York", "Zürich", "a:b"]):
        rel = f"city={city.replace(':', '%3A')}/part-{version:05d}.parquet"
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        pq.write_table(pa.table({"id": pa.array(range(version * 10, version * 10 + 10), pa.int64())}),
                       os.path.join(root, rel))
        add = AddFile(path=encodePath(rel), partitionValues={"city": city},
                      size=os.path.getsize(os.path.join(root, rel)), modificationTime=t0, dataChange=True,
                      stats=json.dumps({"numRecords": 10}, separators=(",", ":")))
        actions = [CommitInfo.of(timestamp=t0 + version * 60_000, operation="WRITE")]
        if version == 0:
            actions += [Protocol.forNewTable(meta), meta]
        actions.append(add)
        if version == 2:  # the third commit also removes the first file
            first = parseAction(open(os.path.join(log, f"{0:020d}.json")).read().splitlines()[-1])
            actions.append(first.remove(deletionTimestamp=t0 + version * 60_000))
        path = os.path.join(log, f"{version:020d}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(serializeActions(actions))
        os.utime(path, ((t0 + version * 60_000) / 1000,) * 2)

    dt = DeltaTable.forPath(spark, root)
    print(f"table {root}: version {dt.version()}, protocol {dt.protocol().simpleString}")
    print("schema:", dt.schema().simpleString(), "partitioned by", dt.partitionColumns())
    dt.files().select("path", "partitionValues", "size").show(truncate=False)
    print("tombstones:", dt.tombstonesArrow().column("path").to_pylist())
    print("version 0 had", DeltaTable.forPath(spark, root, version=0).snapshot().numFiles, "file(s);",
          "at", "2023-11-14T22:14:30Z", "the table was at version",
          DeltaTable.forPath(spark, root, timestamp="2023-11-14T22:14:30Z").version())
    dt.checkpoint()
    print("checkpoint written:", sorted(n for n in os.listdir(log) if "checkpoint" in n))

    _title("7. Transactions: a commit, a conflict, a blind append")
    from deltalog.exceptions import DeltaConcurrentModificationException
    now = t0 + 10 * 60_000
    t1 = DeltaTable.forPath(spark, root).startTransaction()
    t2 = DeltaTable.forPath(spark, root).startTransaction()
    pred = ["city = 'Zürich'"]
    read1, read2 = t1.filterFiles(pred), t2.filterFiles(pred)
    v = t1.commit([f.remove(now) for f in read1], "DELETE", {"predicate": json.dumps(pred)})
    print(f"t1 (read version {t1.readVersion()}) deleted {len(read1)} file(s) of {pred[0]}: version {v}")
    try:
        t2.commit([f.remove(now) for f in read2], "DELETE", {"predicate": json.dumps(pred)})
    except DeltaConcurrentModificationException as e:
        print(f"t2 (read version {t2.readVersion()}) lost the race: {type(e).__name__} [{e.errorClass}]")
    rel = "city=Oslo/part-00009.parquet"
    os.makedirs(os.path.join(root, "city=Oslo"))
    pq.write_table(pa.table({"id": pa.array([90], pa.int64())}), os.path.join(root, rel))
    t3 = DeltaTable.forPath(spark, root).startTransaction()
    v3 = t3.commit([AddFile(path=rel, partitionValues={"city": "Oslo"}, size=os.path.getsize(os.path.join(root, rel)),
                            modificationTime=now, dataChange=True, stats=json.dumps({"numRecords": 1}))], "WRITE")
    final = DeltaTable.forPath(spark, root)
    print(f"blind append committed version {v3}; live files now:",
          sorted(final.filesArrow().column("path").to_pylist()))
    shutil.rmtree(root)


def _demo_dataframes(spark) -> None:
    """DataFrames through the connector, then the protocol advisor on the table written."""
    import shutil

    from deltalog.advisor import plan_change
    from deltalog.tables import DeltaTable

    _title("8. DataFrames: format(\"deltalog\")")
    root = os.path.join(_workdir(), "sales")
    df = spark.createDataFrame([(i, ["eu", "us", "apac"][i % 3], i * 10.0) for i in range(300)],
                               "id long, region string, amount double").repartition(3, "id")
    df.write.format("deltalog").partitionBy("region").option("delta.enableChangeDataFeed", "true").save(root)
    spark.range(300, 310).selectExpr("id", "'eu' AS region", "CAST(id * 10 AS DOUBLE) AS amount") \
        .write.format("deltalog").mode("append").save(root)
    q = spark.read.format("deltalog").load(root).where("region = 'eu' AND id >= 290")
    print(f"rows with region = 'eu' AND id >= 290: {q.count()}")
    listing = spark._jvm.io.deltalog.spark.read.DeltalogFileIndex.lastListingFor(root)
    print(f"files: {listing.totalFiles()} live, {listing.filesAfterPartitionPruning()} after partition pruning, "
          f"{listing.filesAfterDataSkipping()} after data skipping (min/max stats)")
    print("version 0 has", spark.read.format("deltalog").option("versionAsOf", 0).load(root).count(), "rows,",
          "the latest", spark.read.format("deltalog").load(root).count())
    changes = spark.read.format("deltalog").option("readChangeFeed", "true").option("startingVersion", 1).load(root)
    print("change feed since version 1:", sorted((r["_change_type"], r["cnt"]) for r in
                                               changes.groupBy("_change_type").count().withColumnRenamed("count", "cnt").collect()))
    try:
        spark.createDataFrame([(1, "eu", 5.0)], "id long, region string, amount string") \
            .write.format("deltalog").mode("append").save(root)
    except Exception as e:  # schema enforcement: nothing is committed
        line = next((x for x in str(e).splitlines() if "[DELTA_" in x), str(e).splitlines()[0])
        print("appending amount as a string is refused:", line[line.find("[DELTA_"):][:170], "...")

    _title("9. Protocol advisor: what would enabling deletion vectors cost?")
    dt = DeltaTable.forPath(spark, root)
    plan = plan_change(dt.protocol(), dt.metadata(), property_changes={"delta.enableDeletionVectors": "true"})
    print(str(plan)[:900])
    shutil.rmtree(os.path.dirname(root))


if __name__ == "__main__":
    main()
