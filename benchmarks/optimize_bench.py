"""OPTIMIZE compaction benchmark (issue 28 target: 10k small files, ~1 GB, <= 1.0x delta-spark 4.4 with
the same number of output files +-10 %).

Data: one unpartitioned table of ``--files`` small files holding ``--size`` bytes in total (columns
``id bigint, a bigint, b double, s string``; random values, so the Parquet files barely compress),
written once by delta-spark; each engine optimizes its own fresh copy of that folder, ``--runs`` times
(alternating engines; the median is reported, the first run in brackets). Each engine runs
in its own Spark process (``integration/peers.py``: local[2], UI off, 6 GB driver). ``--max-file-size``
sets ``spark.databricks.delta.optimize.maxFileSize`` in both (default: unset, 1 GiB). Before any time is
reported, the optimized tables' row count and an order-independent checksum must be equal between the
engines (and equal to the input's); each process reads the whole input once first (the same warm-up:
delta-spark's process also wrote it).

    .venv/bin/python benchmarks/optimize_bench.py [--files 10000] [--size 1g] [--max-file-size 128m] [--runs 3] [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

BYTES_PER_ROW = 30  # measured: the four columns below, snappy Parquet

# Few tasks, each writing many files (maxRecordsPerFile): 10k one-file tasks took > 15 min here.
SETUP = """
(spark.range(0, args["rows"], 1, args["tasks"])
    .selectExpr("id", "cast(rand(7) * 9e18 AS BIGINT) AS a", "rand(11) AS b", "substr(md5(cast(id AS STRING)), 1, 8) AS s")
    .write.format("delta").option("maxRecordsPerFile", args["per_file"]).save(args["path"]))
import glob, os
files = [f for f in glob.glob(args["path"] + "/*.parquet")]
result = {"files": len(files), "bytes": sum(os.path.getsize(f) for f in files)}
"""

CHECK = """
df = spark.read.format(args["fmt"]).load(args["path"])
c = df.selectExpr("count(*) AS n", "sum(hash(id, a, b, s)) AS h").collect()[0]
result = {"n": c.n, "h": c.h}
"""

OPTIMIZE = """
import time, json, glob
if args["max"]:
    spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(args["max"]))
prefix = 'deltalog' if args['fmt'] == 'deltalog' else 'delta'
t0 = time.perf_counter()
row = spark.sql(f"OPTIMIZE {prefix}.`{args['path']}`").collect()[0]
took = time.perf_counter() - t0
spark.conf.unset("spark.databricks.delta.optimize.maxFileSize")
m = row["metrics"]
df = spark.read.format(args["fmt"]).load(args["path"])
c = df.selectExpr("count(*) AS n", "sum(hash(id, a, b, s)) AS h").collect()[0]
result = {"time": took, "added": m["numFilesAdded"], "removed": m["numFilesRemoved"],
          "bytes": m["filesAdded"]["totalSize"], "n": c.n, "h": c.h}
"""


def parse_size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("b")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--size", default="1g", help="total bytes of the small files (e.g. 1g, 256m)")
    ap.add_argument("--max-file-size", default="", help="spark.databricks.delta.optimize.maxFileSize (default 1 GiB)")
    ap.add_argument("--runs", type=int, default=1, help="OPTIMIZE runs per engine, each on a fresh copy")
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer
    rows = max(a.files, parse_size(a.size) // BYTES_PER_ROW)
    per_file = -(-rows // a.files)
    tasks = max(1, min(a.files, 50))
    while a.files % tasks:
        tasks -= 1
    max_size = parse_size(a.max_file_size) if a.max_file_size else 0
    load_start = os.getloadavg()[0]
    res = {}
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp, \
            SparkPeer("deltalog", driver_memory="6g", timeout=3600) as dl, \
            SparkPeer("delta-spark", driver_memory="6g", timeout=3600) as ds:
        root = Path(tmp)
        base = root / "base"
        t0 = time.perf_counter()
        made = ds.run(SETUP, path=str(base), rows=rows, tasks=tasks, per_file=per_file)
        print(f"table: {made['files']} files, {made['bytes']:,} bytes, {rows:,} rows "
              f"({time.perf_counter() - t0:.0f}s)", flush=True)
        want = ds.run(CHECK, path=str(base), fmt="delta")
        # the same warm-up in both processes (delta-spark's also wrote the table): a full read of the input
        assert dl.run(CHECK, path=str(base), fmt="deltalog") == want
        runs = {"deltalog": [], "delta-spark": []}
        for i in range(a.runs):
            for engine, peer, fmt in (("deltalog", dl, "deltalog"), ("delta-spark", ds, "delta")):
                work = root / f"work-{engine}"
                shutil.copytree(base, work)
                r = peer.run(OPTIMIZE, path=str(work), fmt=fmt, max=max_size)
                runs[engine].append(r)
                print(engine, f"run {i + 1}: {r['time']:.2f}s, {r['added']} files out", flush=True)
                shutil.rmtree(work)
    for engine, rs in runs.items():
        assert len({(r["n"], r["h"], r["added"]) for r in rs}) == 1, (engine, rs)
        res[engine] = dict(rs[0], median=sorted(r["time"] for r in rs)[len(rs) // 2], first=rs[0]["time"],
                           all=[r["time"] for r in rs])
    o, t = res["deltalog"], res["delta-spark"]
    assert (o["n"], o["h"]) == (t["n"], t["h"]) == (want["n"], want["h"]), (o, t, want)
    assert o["removed"] == t["removed"] == made["files"], (o, t)
    files_ratio = o["added"] / t["added"]
    load = f"load average {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    cmd = f"python benchmarks/optimize_bench.py --files {a.files} --size {a.size}" + \
        (f" --max-file-size {a.max_file_size}" if a.max_file_size else "") + (f" --runs {a.runs}" if a.runs > 1 else "")
    lines = ["", "## OPTIMIZE compaction (benchmarks/optimize_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}; one unpartitioned table of "
             f"{made['files']:,} small files ({made['bytes']:,} bytes, {rows:,} rows, written by delta-spark), each "
             f"engine optimizing its own fresh copy {a.runs} time(s) (alternating; median, first run in brackets; all runs: deltalog "
             f"{', '.join(f'{x:.1f}' for x in o['all'])} s, delta-spark {', '.join(f'{x:.1f}' for x in t['all'])} s); maxFileSize {a.max_file_size or '1 GiB (default)'}; row "
             f"count and checksum equal between the engines and the input; command: `{cmd}`", "",
             "| case | files in | files out (deltalog / delta-spark) | deltalog s | delta-spark s | deltalog / delta-spark |",
             "|---|---|---|---|---|---|",
             f"| compaction | {made['files']:,} | {o['added']} / {t['added']} ({files_ratio:.2f}×) | "
             f"{side_by_side.cells(o, t)} |"]
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
