"""RESTORE benchmark (issue 28 target: RESTORE of a 100k-file table <= 0.5x delta-spark).

The table is written by hand (no Spark): version 0 adds ``--files`` files (empty Parquet-named
files on disk, an add with stats each in the log), version 1 removes half of them and adds as many
new ones. ``RESTORE TABLE … TO VERSION AS OF 0`` then re-adds one half and removes the other
(every re-added file is checked to exist). Each engine restores its own copy (hard links of the
data files and commits) in its own Spark process — deltalog in this one, delta-spark 4.4 through
``integration/peers.py`` — after one warm-up restore of a small table; the live files after the
restore (replayed from the JSON log here) must be the same for both before any time is reported.

    .venv/bin/python benchmarks/restore_bench.py [--files 100000] [--runs 3] [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "v", "type": "double", "nullable": True, "metadata": {}}]})
T0 = (int(time.time()) - 3600) * 1000  # recent: delta-spark refuses versions older than the retention


def _add(i: int, ts: int) -> str:
    stats = json.dumps({"numRecords": 100, "minValues": {"id": i * 100, "v": 0.5},
                        "maxValues": {"id": i * 100 + 99, "v": 99.5}, "nullCount": {"id": 0, "v": 0}})
    return json.dumps({"add": {"path": f"part-{i:07d}-bench.snappy.parquet", "partitionValues": {}, "size": 1000 + i % 97,
                               "modificationTime": ts, "dataChange": True, "stats": stats}})


def build(root: str, files: int) -> str:
    """The source table (versions 0 and 1) under ``root/src``."""
    src = os.path.join(root, "src")
    log = os.path.join(src, "_delta_log")
    os.makedirs(log)
    half = files // 2
    for i in range(files + half):
        open(os.path.join(src, f"part-{i:07d}-bench.snappy.parquet"), "wb").close()
    v0 = [json.dumps({"commitInfo": {"timestamp": T0, "operation": "WRITE", "operationParameters": {"mode": "Append"}}}),
          json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
          json.dumps({"metaData": {"id": "restore-bench", "format": {"provider": "parquet", "options": {}},
                                   "schemaString": SCHEMA, "partitionColumns": [], "configuration": {},
                                   "createdTime": T0}})]
    v0 += [_add(i, T0) for i in range(files)]
    t1 = T0 + 60_000
    v1 = [json.dumps({"commitInfo": {"timestamp": t1, "operation": "WRITE", "operationParameters": {"mode": "Overwrite"}}})]
    v1 += [json.dumps({"remove": {"path": f"part-{i:07d}-bench.snappy.parquet", "deletionTimestamp": t1,
                                  "dataChange": True}}) for i in range(half)]
    v1 += [_add(i, t1) for i in range(files, files + half)]
    for v, lines, ts in ((0, v0, T0), (1, v1, t1)):
        p = os.path.join(log, f"{v:020d}.json")
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.utime(p, (ts / 1000, ts / 1000))
    return src


def copy_table(src: str, dst: str) -> str:
    """A copy of ``src`` sharing its files (hard links; RESTORE writes only a new commit)."""
    os.makedirs(os.path.join(dst, "_delta_log"))
    for d, names in ((src, os.listdir(src)), (os.path.join(src, "_delta_log"), os.listdir(os.path.join(src, "_delta_log")))):
        out = dst if d == src else os.path.join(dst, "_delta_log")
        for n in names:
            if n != "_delta_log":
                os.link(os.path.join(d, n), os.path.join(out, n))
    return dst


def live_files(table: str) -> set:
    live = set()
    log = os.path.join(table, "_delta_log")
    for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
        with open(os.path.join(log, name)) as f:
            for line in f:
                a = json.loads(line)
                if "add" in a:
                    live.add(a["add"]["path"])
                elif "remove" in a:
                    live.discard(a["remove"]["path"])
    return live


THEIRS = """
import time
t0 = time.perf_counter()
rows = spark.sql(args["sql"]).collect()
result = {"s": time.perf_counter() - t0, "row": rows[0].asDict() if rows else None}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer

    spark = side_by_side.deltalog_session()
    root = tempfile.mkdtemp(prefix="restore-bench-")
    try:
        t = time.perf_counter()
        src = build(root, a.files)
        warm = build(os.path.join(root, "warm"), 200)
        print(f"built {a.files} + {a.files // 2} files in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        ours, theirs = [], []
        with SparkPeer("delta-spark", driver_memory="4g") as ds:
            spark.sql(f"RESTORE TABLE deltalog.`{copy_table(warm, os.path.join(root, 'w1'))}` TO VERSION AS OF 0").collect()
            ds.run(THEIRS, sql=f"RESTORE TABLE delta.`{copy_table(warm, os.path.join(root, 'w2'))}` TO VERSION AS OF 0")
            for run in range(a.runs):
                mine = copy_table(src, os.path.join(root, f"ours{run}"))
                other = copy_table(src, os.path.join(root, f"theirs{run}"))
                t0 = time.perf_counter()
                row = spark.sql(f"RESTORE TABLE deltalog.`{mine}` TO VERSION AS OF 0").collect()[0].asDict()
                ours.append(time.perf_counter() - t0)
                got = ds.run(THEIRS, sql=f"RESTORE TABLE delta.`{other}` TO VERSION AS OF 0")
                theirs.append(got["s"])
                for k in ("num_restored_files", "num_removed_files", "num_of_files_after_restore"):
                    assert row[k] == got["row"][k], (k, row, got["row"])
                want = {f"part-{i:07d}-bench.snappy.parquet" for i in range(a.files)}
                assert live_files(mine) == live_files(other) == want
                print(f"run {run}: deltalog {ours[-1]:.2f}s, delta-spark {theirs[-1]:.2f}s", file=sys.stderr)
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    load = "%.2f" % os.getloadavg()[0]
    lines = ["", "## RESTORE (benchmarks/restore_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; table: {a.files:,} files at version 0, half of them "
             f"replaced at version 1; `RESTORE TABLE … TO VERSION AS OF 0` re-adds {a.files // 2:,} and removes "
             f"{a.files // 2:,} (every re-added file checked to exist); median of {a.runs} runs, each on a fresh copy, "
             f"after one warm-up restore; both engines end with the same live files; load average {load} at the end; "
             f"command: `python benchmarks/restore_bench.py --files {a.files} --runs {a.runs}`", "",
             ] + side_by_side.runs_table(ours, theirs) + [""]
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
