"""Child Spark processes of integration/test_streaming_source_crash.py (killed with SIGKILL).

    stream TABLE SINK CHECKPOINT MAX_FILES SKIP_CHANGE_COMMITS STOPFILE
        Streams deltalog table TABLE into Spark's Parquet file sink SINK (exactly-once through its
        _spark_metadata log) with maxFilesPerTrigger=MAX_FILES. STOPFILE "-": Trigger.AvailableNow,
        exits when everything up to the version current at start is written. Otherwise a 200 ms
        processing-time trigger until STOPFILE exists, then everything available, then exit.
        Prints "started" once the query runs and "done" at the end.
    write TABLE ROUNDS FIRST_ID
        Round r appends 20 new ids (from FIRST_ID) in 2 files; every 3rd round also DELETEs rows
        (id % 5 = 0, files rewritten), every 4th runs OPTIMIZE. Prints "appended LO HI" per append.
"""
from __future__ import annotations

import os
import sys
import time


def session():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    builder = (SparkSession.builder.master("local[1]").appName("stream-source-child")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.memory", "512m")
               # no compaction: the parent reads the sink's metadata log batch by batch
               .config("spark.sql.streaming.fileSink.log.compactInterval", "1000000"))
    return configure_spark_with_deltalog(builder, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()


def stream(table, sink, checkpoint, max_files, skip, stopfile):
    spark = session()
    df = (spark.readStream.format("deltalog").option("maxFilesPerTrigger", max_files)
          .option("skipChangeCommits", skip).load(table))
    w = df.writeStream.format("parquet").option("checkpointLocation", checkpoint)
    if stopfile == "-":
        q = w.trigger(availableNow=True).start(sink)
        print("started", flush=True)
        q.awaitTermination()
    else:
        q = w.trigger(processingTime="200 milliseconds").start(sink)
        print("started", flush=True)
        while not os.path.exists(stopfile):
            if q.exception() is not None:
                raise q.exception()
            time.sleep(0.2)
        q.processAllAvailable()
        q.stop()
    if q.exception() is not None:
        raise q.exception()
    print("done", flush=True)


def write(table, rounds, first_id):
    spark = session()
    t = f"deltalog.`{table}`"
    next_id = first_id
    for r in range(1, rounds + 1):
        ids = list(range(next_id, next_id + 20))
        spark.createDataFrame([(i, f"w{i}") for i in ids], "id BIGINT, v STRING").repartition(2) \
            .write.format("deltalog").mode("append").save(table)
        print(f"appended {ids[0]} {ids[-1]}", flush=True)
        next_id += 20
        if r % 3 == 0:
            spark.sql(f"DELETE FROM {t} WHERE id % 5 = 0")
            print("deleted", flush=True)
        if r % 4 == 0:
            spark.sql(f"OPTIMIZE {t}")
            print("optimized", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    if mode == "stream":
        stream(*rest)
    elif mode == "write":
        write(rest[0], int(rest[1]), int(rest[2]))
    else:
        raise SystemExit(f"unknown mode {mode}")
