"""Child driver of test_cluster.py: one Spark driver process per call, with ``--master`` either the
standalone cluster's ``spark://127.0.0.1:<port>`` or ``local[2]`` (the same scenario run both ways).
The session is configured as a user would: ``configure_spark_with_deltalog`` puts the engine jar
into ``spark.jars`` (Spark ships it to the executors); nothing else.

Modes (the last stdout line is ``RESULT <json>``):

* ``suite <base> <n>``: the scenarios of the module, each on its own table under ``<base>``:
  ``parts`` (a partitioned write with stats, read with partition pruning and data skipping),
  ``dv`` (DELETE on a table with deletion vectors), ``dml`` (UPDATE, MERGE, copy-on-write DELETE),
  ``optimize`` (six small appends, OPTIMIZE), ``stream`` (JSON files into the sink, AvailableNow).
  Reports per scenario the row count and sums read back through Spark, the file listing counts of
  the reads, the OPTIMIZE metrics and the number of executors the driver had (and each scenario's seconds, informative only).
* ``append <table> <writer> <k> <rows>``: prints ``ready`` once its executor ran a job, waits for
  ``go`` on stdin, then makes ``k`` appends of ``rows`` rows ``(writer, seq, i)`` and reports the
  the number it made.
* ``features <base>``: ``cluster_features.features`` (more table features), its results.
* ``slowwrite <table> <partitions> <rows per partition> <sleep s>``: one append whose tasks each
  write half their rows, sleep, then write the rest (a Python ``mapInArrow`` on the executors);
  prints ``writing`` before it and ``committed <version>`` after; then reads a command per stdin
  line: ``count`` (prints ``count <rows>``), ``vacuum`` (VACUUM RETAIN 0 HOURS, prints
  ``vacuumed``), ``quit``.

Usage: python cluster_child.py <master> <mode> <args...>
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))


JVM_FLAGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def session(master: str, app: str, extra=()):
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog

    b = (SparkSession.builder.master(master).appName(app)
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.memory", "768m")
         .config("spark.executor.memory", "512m").config("spark.executor.cores", "1")
         # short-lived test JVMs on a small machine: C1 only, serial GC (less CPU than the defaults)
         .config("spark.driver.extraJavaOptions", JVM_FLAGS).config("spark.executor.extraJavaOptions", JVM_FLAGS))
    for k, v in extra:
        b = b.config(k, v)
    spark = configure_spark_with_deltalog(b, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def executors(spark) -> int:
    """Executors registered with the driver (the driver's own entry excluded)."""
    infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    return max(0, len(infos) - 1)


def agg(df) -> dict:
    from pyspark.sql import functions as F
    cols = df.columns
    exprs = [F.count(F.lit(1)).alias("n")]
    for c in ("id", "v"):
        if c in cols:
            exprs.append(F.sum(F.col(c).cast("decimal(38,0)")).cast("string").alias(f"sum_{c}"))
    r = df.agg(*exprs).collect()[0]
    return {k: (int(r[k]) if r[k] is not None else None) for k in r.asDict()}


def listing(spark, path: str) -> list:
    s = spark._jvm.io.deltalog.spark.read.DeltalogFileIndex.lastListingFor(path)
    return [s.totalFiles(), s.filesAfterPartitionPruning(), s.filesAfterDataSkipping()]


def suite(spark, base: Path, n: int) -> dict:
    out = {"seconds": {}}
    clock = [time.monotonic()]

    def lap(name):
        now = time.monotonic()
        out["seconds"][name] = round(now - clock[0], 1)
        clock[0] = now

    t = {name: str(base / name) for name in ("parts", "dv", "dml", "optimize", "stream")}

    # partitioned write with stats; reads with pruning and skipping (ids are contiguous per task)
    (spark.range(0, n, 1, 4)
     .selectExpr("id", "cast(id % 4 as int) as part", "id * 3 % 1000 as v", "concat('s', cast(id as string)) as s")
     .write.format("deltalog").partitionBy("part").save(t["parts"]))
    reads = {}
    for name, pred in (("part", "part = 1"), ("skip", f"id < {n // 8}"),
                       ("both", f"part = 2 and id >= {3 * n // 4}"), ("all", "true")):
        df = spark.read.format("deltalog").load(t["parts"]).where(pred)
        reads[name] = {"agg": agg(df), "listing": listing(spark, t["parts"])}
    out["parts"] = reads
    lap("parts")

    # deletion vectors: DELETE marks rows instead of rewriting files
    spark.sql(f"CREATE TABLE deltalog.`{t['dv']}` (id BIGINT, v BIGINT) USING deltalog "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.range(0, n, 1, 2).selectExpr("id", "id % 7 as v").write.format("deltalog").mode("append").save(t["dv"])
    spark.sql(f"DELETE FROM deltalog.`{t['dv']}` WHERE id % 10 = 0")
    out["dv"] = agg(spark.read.format("deltalog").load(t["dv"]))
    lap("dv")

    # UPDATE, MERGE, copy-on-write DELETE
    spark.range(0, n, 1, 2).selectExpr("id", "id % 5 as k", "id as v").write.format("deltalog").save(t["dml"])
    spark.sql(f"UPDATE deltalog.`{t['dml']}` SET v = v + 1000000 WHERE k = 0")
    lo, hi = n - n // 4, n + n // 4
    spark.sql(f"""MERGE INTO deltalog.`{t['dml']}` AS t USING (SELECT id FROM range({lo}, {hi}, 1, 2)) AS s
                  ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET v = -s.id
                  WHEN NOT MATCHED THEN INSERT (id, k, v) VALUES (s.id, s.id % 5, s.id * 2)""")
    spark.sql(f"DELETE FROM deltalog.`{t['dml']}` WHERE id % 9 = 0")
    out["dml"] = agg(spark.read.format("deltalog").load(t["dml"]))
    lap("dml")

    # OPTIMIZE: six appends of two files each, compacted
    m = max(1, n // 6)
    for i in range(6):
        spark.range(i * m, (i + 1) * m, 1, 2).selectExpr("id", "id % 11 as v").write.format("deltalog") \
            .mode("append").save(t["optimize"])
    row = spark.sql(f"OPTIMIZE deltalog.`{t['optimize']}`").collect()[0].asDict(recursive=True)
    metrics = row.get("metrics") or {}
    out["optimize"] = {"agg": agg(spark.read.format("deltalog").load(t["optimize"])),
                       "numFilesAdded": metrics.get("numFilesAdded"),
                       "numFilesRemoved": metrics.get("numFilesRemoved")}
    lap("optimize")

    # streaming: JSON files through the deltalog sink, Trigger.AvailableNow
    src = base / "stream-in"
    src.mkdir()
    per = max(1, n // 5)
    for f in range(5):
        (src / f"part-{f}.json").write_text("".join(
            json.dumps({"id": f * per + j, "key": f"k{(f * per + j) % 3}", "v": (f * per + j) % 13}) + "\n"
            for j in range(per)))
    q = (spark.readStream.schema("id LONG, key STRING, v LONG").option("maxFilesPerTrigger", 2).json(str(src))
         .writeStream.format("deltalog").option("checkpointLocation", str(base / "stream-ckpt"))
         .trigger(availableNow=True).start(t["stream"]))
    q.awaitTermination()
    if q.exception() is not None:
        raise RuntimeError(f"streaming query failed: {q.exception()}")
    out["stream"] = agg(spark.read.format("deltalog").load(t["stream"]))
    lap("stream")
    out["executors"] = executors(spark)
    out["app"] = spark.sparkContext.applicationId
    return out


def append(spark, table: str, writer: int, k: int, rows: int) -> dict:
    # warm up on the executor (not on the table), then wait for the parent's "go": both drivers
    # start their appends together
    spark.range(0, 10, 1, 1).selectExpr("sum(id)").collect()
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("no go")
    for seq in range(k):
        (spark.range(0, rows, 1, 1).selectExpr(f"{writer} as writer", f"{seq} as seq", "id as i")
         .write.format("deltalog").mode("append").save(table))
    return {"appends": k, "executors": executors(spark)}


def slowwrite(spark, table: str, parts: int, rows: int, sleep: float) -> None:
    import pyarrow as pa

    def slow(batches):
        for b in batches:
            half = b.num_rows // 2
            yield b.slice(0, half)
            time.sleep(sleep)  # the task's file is open, half written
            yield b.slice(half)

    df = (spark.range(0, parts * rows, 1, parts).selectExpr("id", "id % 97 as v")
          .mapInArrow(slow, "id LONG, v LONG"))
    deadline = time.monotonic() + 300
    while executors(spark) < 2 and time.monotonic() < deadline:  # both executors get tasks
        time.sleep(0.2)
    print("writing", flush=True)
    df.write.format("deltalog").mode("append").save(table)
    from deltalog.tables import DeltaTable
    print(f"committed {DeltaTable.forPath(spark, table).version()}", flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "count":
            print(f"count {spark.read.format('deltalog').load(table).count()}", flush=True)
        elif cmd == "vacuum":
            spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
            spark.sql(f"VACUUM deltalog.`{table}` RETAIN 0 HOURS").collect()
            print("vacuumed", flush=True)
        elif cmd == "quit":
            break
    _ = pa  # pyarrow must import on the driver too (mapInArrow)


def main(argv) -> None:
    master, mode, args = argv[0], argv[1], argv[2:]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if mode == "suite":
        spark = session(master, "cluster-suite")
        if master.startswith("spark://"):
            deadline = time.monotonic() + 300
            while executors(spark) < 2 and time.monotonic() < deadline:  # both executors work
                time.sleep(0.2)
        res = suite(spark, Path(args[0]), int(args[1]))
    elif mode == "append":
        # one core each: two drivers on the two one-core workers run at the same time
        spark = session(master, f"cluster-append-{args[1]}", [("spark.cores.max", "1")])
        res = append(spark, args[0], int(args[1]), int(args[2]), int(args[3]))
    elif mode == "features":
        spark = session(master, "cluster-features")
        if master.startswith("spark://"):
            deadline = time.monotonic() + 300
            while executors(spark) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
        from cluster_features import features
        res = {"features": features(spark, args[0]), "executors": executors(spark)}
    elif mode == "slowwrite":
        spark = session(master, "cluster-slowwrite", [("spark.task.maxFailures", "8")])
        slowwrite(spark, args[0], int(args[1]), int(args[2]), float(args[3]))
        res = {"executors": executors(spark)}
    else:
        raise SystemExit(f"unknown mode {mode}")
    print("RESULT " + json.dumps(res), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
