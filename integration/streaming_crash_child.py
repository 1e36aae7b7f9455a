"""Child process of test_streaming_crash.py: one Spark driver running three streaming pipelines
into deltalog tables at the same time, each from Spark's file source over the JSON files of
``<base>/in`` (one file per micro-batch, ``maxFilesPerTrigger=1``), with ``Trigger.AvailableNow``:

* ``append``   — the rows, appended (``writeStream.format("deltalog")``, append mode);
* ``complete`` — per key the row count and the sum of ``v`` (complete mode: every batch replaces
  the table);
* ``merge``    — ``foreachBatch``: a MERGE adding the batch's per-key row count and sum of ``v`` to
  the per-key totals of ``merge`` (a replayed MERGE would count twice), made idempotent with the
  session's ``spark.databricks.delta.write.txnAppId``/``txnVersion`` = (``merge``, batch id); then
  the batch appended to ``audit`` with the writer options ``txnAppId``/``txnVersion``.

Prints ``ready`` once the queries run and ``done`` when all three finished; the parent kills it
with SIGKILL anywhere in between and starts it again on the same checkpoints.

Usage: python streaming_crash_child.py <base dir>
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

SCHEMA = "id LONG, key STRING, v LONG"


def main(base: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo / "python"))
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from deltalog import configure_spark_with_deltalog
    from deltalog.tables import DeltaTable

    builder = (SparkSession.builder.master("local[2]").appName("streaming-crash")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
    spark = configure_spark_with_deltalog(builder, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")

    def source():
        return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(base / "in"))

    def ckpt(name):
        return str(base / "checkpoints" / name)

    merge_path, audit_path = str(base / "merge"), str(base / "audit")

    def upsert(df, batch_id):
        s = df.sparkSession
        df.persist()
        try:
            per_key = df.groupBy("key").agg(F.count("id").alias("n"), F.sum("v").alias("total"))
            s.conf.set("spark.databricks.delta.write.txnAppId", "merge")
            s.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
            try:
                (DeltaTable.forPath(s, merge_path).alias("t").merge(per_key.alias("s"), "t.key = s.key")
                 .whenMatchedUpdate(set={"n": "t.n + s.n", "total": "t.total + s.total"})
                 .whenNotMatchedInsertAll().execute())
            finally:
                s.conf.unset("spark.databricks.delta.write.txnAppId")
                s.conf.unset("spark.databricks.delta.write.txnVersion")
            (df.write.format("deltalog").option("txnAppId", "audit").option("txnVersion", batch_id)
             .mode("append").save(audit_path))
        finally:
            df.unpersist()

    spark.createDataFrame([], "key STRING, n LONG, total LONG").write.format("deltalog").mode("ignore").save(merge_path)
    queries = [
        source().writeStream.format("deltalog").option("checkpointLocation", ckpt("append"))
        .trigger(availableNow=True).start(str(base / "append")),
        source().groupBy("key").agg({"id": "count", "v": "sum"})
        .withColumnRenamed("count(id)", "n").withColumnRenamed("sum(v)", "total")
        .writeStream.format("deltalog").outputMode("complete").option("checkpointLocation", ckpt("complete"))
        .trigger(availableNow=True).start(str(base / "complete")),
        source().writeStream.foreachBatch(upsert).option("checkpointLocation", ckpt("merge"))
        .trigger(availableNow=True).start(),
    ]
    print("ready", flush=True)
    for q in queries:
        q.awaitTermination()
        if q.exception() is not None:
            print(f"failed {q.exception()}", flush=True)
            sys.exit(1)
    print("done", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
