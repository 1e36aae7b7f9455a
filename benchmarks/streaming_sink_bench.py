"""Streaming sink benchmark (issue 29 target: <= 0.8x delta-spark 4.4), deltalog beside delta-spark.

The input is ``--batches`` Parquet files of ``--rows`` rows each (``id``, ``key``, ``v``, ``s``),
written upfront with pyarrow. Each engine, in its own Spark process (``integration/peers.py``:
local[2], UI off), runs ``spark.readStream.parquet(dir)`` with ``maxFilesPerTrigger=1`` and
``Trigger.AvailableNow`` into a new table (``format("deltalog")`` / ``format("delta")``, append
mode): one micro-batch, i.e. one commit, per input file. The end-to-end time is from ``start()`` to
the end of ``awaitTermination()``. A short stream (5 batches) into another table warms each JVM up
first; with ``--runs`` > 1 the median is reported, first run in brackets, each on a fresh table and
checkpoint. Before anything is reported each table is checked: one commit per batch, every row
there once (count and sum of ids, read by the engine that wrote it).

    .venv/bin/python benchmarks/streaming_sink_bench.py [--batches 20] [--rows 1000] [--runs 1] [--out benchmarks/RESULTS.md]

The full size is ``--batches 200`` (200 micro-batches of 1,000 rows).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

SCHEMA = "id LONG, key STRING, v DOUBLE, s STRING"


def write_inputs(d: str, batches: int, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    os.makedirs(d)
    for b in range(batches):
        ids = list(range(b * rows, (b + 1) * rows))
        t = pa.table({"id": pa.array(ids, pa.int64()), "key": [f"k{i % 97}" for i in ids],
                      "v": pa.array([i * 0.5 for i in ids], pa.float64()), "s": [f"row-{i:09d}" for i in ids]})
        pq.write_table(t, os.path.join(d, f"part-{b:05d}.parquet"))


RUN = """
import os, time
def stream(src, out, ckpt):
    t0 = time.perf_counter()
    q = (spark.readStream.schema(args['schema']).option('maxFilesPerTrigger', 1).parquet(src)
         .writeStream.format(args['fmt']).option('checkpointLocation', ckpt)
         .trigger(availableNow=True).start(out))
    q.awaitTermination()
    assert q.exception() is None, q.exception()
    took = time.perf_counter() - t0
    per_batch.append(sorted(p.durationMs['triggerExecution'] for p in q.recentProgress))
    return took
per_batch = []
root = args['root']
stream(args['warm'], os.path.join(root, 'warm-table'), os.path.join(root, 'warm-ckpt'))
times, checks = [], []
for r in range(args['runs']):
    out, ckpt = os.path.join(root, f'table-{r}'), os.path.join(root, f'ckpt-{r}')
    times.append(stream(args['src'], out, ckpt))
    row = spark.read.format(args['fmt']).load(out).selectExpr('count(*)', 'sum(id)').first()
    commits = len([n for n in os.listdir(os.path.join(out, '_delta_log')) if n.endswith('.json')])
    checks.append([row[0], row[1], commits])
result = {'times': times, 'checks': checks, 'batch_ms': per_batch[-1]}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20, help="input files = micro-batches (full size: 200)")
    ap.add_argument("--rows", type=int, default=1000, help="rows per input file / micro-batch")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer
    load_start = os.getloadavg()[0]
    res = {}
    with tempfile.TemporaryDirectory() as root:
        src, warm = os.path.join(root, "in"), os.path.join(root, "warm")
        write_inputs(src, a.batches, a.rows)
        write_inputs(warm, 5, a.rows)
        n = a.batches * a.rows
        want = [n, n * (n - 1) // 2, a.batches]
        for engine, fmt in (("deltalog", "deltalog"), ("delta-spark", "delta")):
            work = os.path.join(root, engine)
            os.makedirs(work)
            with SparkPeer(engine, timeout=7200.0) as peer:  # 200 delta-spark batches take > 10 min
                r = peer.run(RUN, schema=SCHEMA, fmt=fmt, src=src, warm=warm, root=work, runs=a.runs)
            assert all(c == want for c in r["checks"]), (engine, r["checks"], want)
            t = r["times"]
            res[engine] = {"first": t[0], "median": statistics.median(t[1:] if len(t) > 2 else t),
                           "batch_ms": statistics.median(r["batch_ms"])}
    ours, theirs = res["deltalog"], res["delta-spark"]
    load = f"load average {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    runs = "one run" if a.runs == 1 else f"median of {a.runs - 1 if a.runs > 2 else a.runs} runs, first in brackets"
    lines = ["", "## Streaming sink (benchmarks/streaming_sink_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}; {a.batches} micro-batches of "
             f"{a.rows:,} rows (`readStream.parquet` over {a.batches} files, `maxFilesPerTrigger=1`, "
             f"`Trigger.AvailableNow`, append mode) into a new table, end-to-end from `start()` to the end of "
             f"`awaitTermination()`, after a 5-batch warm-up stream; {runs}; both tables checked (one commit "
             f"per batch, {n:,} rows, sum of ids); each engine in its own Spark process (local[2]); command: "
             f"`python benchmarks/streaming_sink_bench.py --batches {a.batches} --rows {a.rows} --runs {a.runs}`", "",
             "| run | deltalog s | delta-spark s | deltalog / delta-spark |", "|---|---|---|---|",
             f"| {a.batches} micro-batches × {a.rows:,} rows | {side_by_side.cells(ours, theirs)} |",
             f"| per micro-batch (end-to-end / batches) | {ours['median'] / a.batches:.3f} | "
             f"{theirs['median'] / a.batches:.3f} | |",
             f"| median micro-batch (`triggerExecution`, last run's last ≤ 100 batches) | "
             f"{ours['batch_ms'] / 1000:.3f} | {theirs['batch_ms'] / 1000:.3f} | "
             f"{ours['batch_ms'] / theirs['batch_ms']:.2f}× |"]
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
