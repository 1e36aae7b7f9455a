"""Streaming source benchmark (issue 29 target: planning a micro-batch <= 0.5x delta-spark).

The table is written by hand (no Spark): version 0 creates it, versions 1..``--commits`` add
``--files-per-commit`` files each (log entries with stats; the stream never reads them), then
deltalog writes a checkpoint of the last version (both engines start from it, as on a real table).
Each engine streams its own copy (hard links) in its own Spark process — deltalog in this one,
delta-spark 4.4 through ``integration/peers.py`` — from ``startingVersion`` = one real commit
after the generated ones (its first batch) into the ``noop`` sink, 200 ms processing-time trigger
(delta-spark re-resolves ``startingVersion=latest`` until its first batch, so the stream's position
is pinned by that first batch). For each run, 10 new commits (one small real
Parquet file each, the same for both engines) are written into both copies and
``processAllAvailable()`` waits for them; the time reported is what the query progress says the
batches that read them spent planning: ``durationMs.latestOffset + durationMs.getBatch`` (summed
when the commits landed in more than one batch), next to the whole trigger time. Both engines must
deliver the same rows.

    .venv/bin/python benchmarks/streaming_source_bench.py [--commits 10000] [--files-per-commit 10] [--runs 5] [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "v", "type": "double", "nullable": True, "metadata": {}}]})
T0 = (int(time.time()) - 3600) * 1000


def _add(path: str, i: int, ts: int, size: int = 1000, rows: int = 100) -> dict:
    stats = json.dumps({"numRecords": rows, "minValues": {"id": i * rows, "v": 0.5},
                        "maxValues": {"id": i * rows + rows - 1, "v": 99.5}, "nullCount": {"id": 0, "v": 0}})
    return {"add": {"path": path, "partitionValues": {}, "size": size, "modificationTime": ts,
                    "dataChange": True, "stats": stats}}


def _write_commit(log: str, version: int, actions: list, ts: int) -> None:
    """Commit file ``version``, written whole then renamed into place (as writers do: a running
    stream must never see a half-written commit)."""
    p = os.path.join(log, f"{version:020d}.json")
    tmp = os.path.join(log, f".{version:020d}.json.tmp")
    with open(tmp, "w") as f:
        f.write("".join(json.dumps(a) + "\n" for a in actions))
    os.utime(tmp, (ts / 1000, ts / 1000))
    os.rename(tmp, p)


def build(root: str, commits: int, per_commit: int) -> str:
    src = os.path.join(root, "src")
    log = os.path.join(src, "_delta_log")
    os.makedirs(log)
    _write_commit(log, 0, [
        {"commitInfo": {"timestamp": T0, "operation": "CREATE TABLE"}},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": "stream-bench", "format": {"provider": "parquet", "options": {}}, "schemaString": SCHEMA,
                      "partitionColumns": [], "configuration": {}, "createdTime": T0}}], T0)
    n = 0
    for v in range(1, commits + 1):
        ts = T0 + v * 10
        actions = [{"commitInfo": {"timestamp": ts, "operation": "WRITE", "operationParameters": {"mode": "Append"}}}]
        for _ in range(per_commit):
            actions.append(_add(f"part-{n:07d}-bench.snappy.parquet", n, ts))
            n += 1
        _write_commit(log, v, actions, ts)
    return src


def copy_table(src: str, dst: str) -> str:
    shutil.copytree(src, dst, copy_function=os.link)
    return dst


def new_commits(tables: list, first_version: int, first_id: int, count: int = 10) -> None:
    """``count`` commits of one real Parquet file (10 rows) each, identical in every table."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    staged = []
    for k in range(count):
        name = f"new-{uuid.uuid4()}.parquet"
        ids = list(range(first_id + k * 10, first_id + k * 10 + 10))
        tmp = os.path.join(tables[0], name)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [float(i) for i in ids]}), tmp)
        for t in tables[1:]:
            os.link(tmp, os.path.join(t, name))
        size = os.path.getsize(tmp)
        now = int(time.time() * 1000)
        stats = json.dumps({"numRecords": 10, "minValues": {"id": ids[0]}, "maxValues": {"id": ids[-1]},
                            "nullCount": {"id": 0, "v": 0}})
        staged.append([{"commitInfo": {"timestamp": now, "operation": "WRITE"}},
                       {"add": {"path": name, "partitionValues": {}, "size": size, "modificationTime": now,
                                "dataChange": True, "stats": stats}}])
    # the commits of one run land together (written after their data files)
    for t in tables:
        for k, actions in enumerate(staged):
            _write_commit(os.path.join(t, "_delta_log"), first_version + k, actions, int(time.time() * 1000))


START = """
import time
t0 = time.perf_counter()
q = (spark.readStream.format(args['fmt']).option('startingVersion', args['start']).load(args['path'])
     .writeStream.format('noop').queryName(args['name']).option('checkpointLocation', args['cp'])
     .trigger(processingTime='200 milliseconds').start())
q.processAllAvailable()
result = {'start_s': time.perf_counter() - t0,
          'last_batch': max([p['batchId'] for p in q.recentProgress] or [-1])}
"""

MEASURE = """
q = [x for x in spark.streams.active if x.name == args['name']][0]
q.processAllAvailable()
ps = [p for p in q.recentProgress if p['batchId'] > args['after'] and p['numInputRows'] > 0]
result = {'batches': len(ps), 'rows': sum(p['numInputRows'] for p in ps),
          'plan_ms': sum(p['durationMs'].get('latestOffset', 0) + p['durationMs'].get('getBatch', 0) for p in ps),
          'trigger_ms': sum(p['durationMs'].get('triggerExecution', 0) for p in ps),
          'last_batch': max([p['batchId'] for p in q.recentProgress] or [args['after']])}
"""

STOP = """
for x in spark.streams.active:
    if x.name == args['name']:
        x.stop()
result = True
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--files-per-commit", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    b = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").config("spark.driver.memory", "4g")
         .config("spark.sql.shuffle.partitions", "2").config("spark.driver.bindAddress", "127.0.0.1"))
    spark = configure_spark_with_deltalog(b, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
    root = tempfile.mkdtemp(prefix="stream-bench-")
    load_start = os.getloadavg()[0]

    def ours(code: str, **args):
        scope = {"spark": spark, "args": args}
        exec(code, scope)
        return scope["result"]

    try:
        t = time.perf_counter()
        src = build(root, a.commits, a.files_per_commit)
        jvm = spark._jvm
        jvm.io.deltalog.log.DeltaLog.forTable(src, spark._jsc.hadoopConfiguration()).checkpoint()
        jvm.io.deltalog.log.DeltaLog.clearCache()
        files = a.commits * a.files_per_commit
        print(f"built {a.commits} commits / {files} files + checkpoint in {time.perf_counter() - t:.1f}s",
              file=sys.stderr)
        mine = copy_table(src, os.path.join(root, "ours"))
        other = copy_table(src, os.path.join(root, "theirs"))
        results = {"deltalog": [], "delta-spark": []}
        with SparkPeer("delta-spark", driver_memory="4g") as ds:
            engines = {"deltalog": (ours, "deltalog", mine), "delta-spark": (ds.run, "delta", other)}
            last = {}
            # one real commit the first batch reads (pins the stream's position in both engines)
            new_commits([mine, other], a.commits + 1, 10 ** 9 - 100, count=1)
            for e, (run, fmt, path) in engines.items():
                got = run(START, fmt=fmt, path=path, name=f"bench_{fmt}", cp=os.path.join(root, f"cp-{fmt}"),
                          start=str(a.commits + 1))
                last[e] = got["last_batch"]
                print(f"{e}: query started in {got['start_s']:.1f}s", file=sys.stderr)
            version, next_id = a.commits + 2, 10 ** 9
            for r in range(a.runs):
                new_commits([mine, other], version, next_id)
                version += 10
                next_id += 100
                for e, (run, fmt, path) in engines.items():
                    got = run(MEASURE, name=f"bench_{fmt}", after=last[e])
                    last[e] = got["last_batch"]
                    assert got["rows"] == 100, (e, got)
                    results[e].append(got)
                print(f"run {r}: " + ", ".join(f"{e} plan {results[e][-1]['plan_ms']} ms in {results[e][-1]['batches']} "
                                               f"batch(es), trigger {results[e][-1]['trigger_ms']} ms" for e in engines),
                      file=sys.stderr)
            for e, (run, fmt, path) in engines.items():
                run(STOP, name=f"bench_{fmt}")
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    med = {e: (statistics.median(x["plan_ms"] for x in v), statistics.median(x["trigger_ms"] for x in v))
           for e, v in results.items()}
    load = "%.2f" % os.getloadavg()[0]
    cmd = (f"python benchmarks/streaming_source_bench.py --commits {a.commits} --files-per-commit {a.files_per_commit} "
           f"--runs {a.runs}")
    lines = ["", "## Streaming source: planning a micro-batch (benchmarks/streaming_source_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; table: {a.commits:,} commits, "
             f"{a.commits * a.files_per_commit:,} files, checkpoint at the last version; a running stream "
             "(started at one real commit after them, noop sink, 200 ms trigger) per engine in its own Spark process (local[2]); per run 10 "
             "new one-file commits; time = `durationMs.latestOffset + durationMs.getBatch` of the batches that read them "
             f"(100 rows in both engines); median of {a.runs} runs; load average {load_start:.2f} at start, {load} at the "
             f"end; command: `{cmd}`", "",
             "| engine | median plan ms | plan ms per run | median trigger ms |", "|---|---:|---:|---:|",
             *[f"| {e} | {med[e][0]:.0f} | {', '.join(str(x['plan_ms']) for x in results[e])} | {med[e][1]:.0f} |"
               for e in results],
             f"| **deltalog / delta-spark** | **{med['deltalog'][0] / max(med['delta-spark'][0], 1):.2f}×** | | "
             f"{med['deltalog'][1] / max(med['delta-spark'][1], 1):.2f}× |", ""]
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
