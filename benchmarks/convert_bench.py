"""CONVERT benchmark (issue 28 target: converting a 10k-file Parquet directory <= 0.5x delta-spark).

The directory is written by pyarrow (no Spark): ``--files`` Parquet files of ``--rows`` rows each
(id BIGINT, v DOUBLE, s STRING, d DATE), spread over ``--partitions`` Hive partition directories
``p=0 … p=N-1``. Each engine converts its own copy (hard links of the data files: CONVERT writes
only ``_delta_log``) in its own Spark process -- deltalog (``CONVERT TO DELTALOG``) in this one,
delta-spark 4.4 (``CONVERT TO DELTA``) through ``integration/peers.py`` -- both collecting
statistics (delta-spark reads every file's rows for them, deltalog its footers), after one warm-up
conversion of a small directory. Before any time is reported, both logs must add the same paths with
the same partition values and ``numRecords``.

    .venv/bin/python benchmarks/convert_bench.py [--files 10000] [--partitions 20] [--runs 3] [--out benchmarks/RESULTS.md]
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


def build(root: str, files: int, partitions: int, rows: int) -> str:
    """The Parquet directory ``root`` (pyarrow, one row group per file)."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq
    os.makedirs(root)
    for k in range(partitions):
        os.makedirs(os.path.join(root, f"p={k}"))
    base = dt.date(2020, 1, 1)
    for i in range(files):
        lo = i * rows
        t = pa.table({"id": pa.array(range(lo, lo + rows), pa.int64()),
                      "v": pa.array([x * 0.5 for x in range(rows)], pa.float64()),
                      "s": pa.array([f"s{(lo + x) % 9973:05d}" for x in range(rows)]),
                      "d": pa.array([base + dt.timedelta(days=(lo + x) % 3650) for x in range(rows)], pa.date32())})
        pq.write_table(t, os.path.join(root, f"p={i % partitions}", f"part-{i:06d}.parquet"))
    open(os.path.join(root, "_SUCCESS"), "w").close()
    return root


def copy_tree(src: str, dst: str) -> str:
    """A copy of ``src`` sharing its files (hard links)."""
    for d, _, names in os.walk(src):
        out = os.path.join(dst, os.path.relpath(d, src))
        os.makedirs(out, exist_ok=True)
        for n in names:
            os.link(os.path.join(d, n), os.path.join(out, n))
    return dst


def added(table: str) -> dict:
    """path -> (partitionValues, numRecords) of version 0's adds."""
    out = {}
    with open(os.path.join(table, "_delta_log", f"{0:020d}.json")) as f:
        for line in f:
            a = json.loads(line)
            if "add" in a:
                x = a["add"]
                out[x["path"]] = (json.dumps(x["partitionValues"], sort_keys=True), json.loads(x["stats"])["numRecords"])
    return out


THEIRS = """
import time
t0 = time.perf_counter()
spark.sql(args["sql"]).collect()
result = time.perf_counter() - t0
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer

    spark = side_by_side.deltalog_session()
    root = tempfile.mkdtemp(prefix="convert-bench-")
    clause = "PARTITIONED BY (p INT)"
    try:
        t = time.perf_counter()
        src = build(os.path.join(root, "src"), a.files, a.partitions, a.rows)
        warm = build(os.path.join(root, "warm"), 50, 5, 10)
        print(f"built {a.files} files in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        ours, theirs = [], []
        with SparkPeer("delta-spark", driver_memory="4g") as ds:
            spark.sql(f"CONVERT TO DELTALOG parquet.`{copy_tree(warm, os.path.join(root, 'w1'))}` {clause}").collect()
            ds.run(THEIRS, sql=f"CONVERT TO DELTA parquet.`{copy_tree(warm, os.path.join(root, 'w2'))}` {clause}")
            for run in range(a.runs):
                mine = copy_tree(src, os.path.join(root, f"ours{run}"))
                other = copy_tree(src, os.path.join(root, f"theirs{run}"))
                t0 = time.perf_counter()
                spark.sql(f"CONVERT TO DELTALOG parquet.`{mine}` {clause}").collect()
                ours.append(time.perf_counter() - t0)
                theirs.append(ds.run(THEIRS, sql=f"CONVERT TO DELTA parquet.`{other}` {clause}"))
                got, want = added(mine), added(other)
                assert len(got) == a.files and got == want, "the two logs differ"
                print(f"run {run}: deltalog {ours[-1]:.2f}s, delta-spark {theirs[-1]:.2f}s", file=sys.stderr)
                shutil.rmtree(mine, ignore_errors=True)
                shutil.rmtree(other, ignore_errors=True)
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    load = "%.2f" % os.getloadavg()[0]
    lines = ["", "## CONVERT (benchmarks/convert_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; a Parquet directory of {a.files:,} files "
             f"({a.rows} rows each: id BIGINT, v DOUBLE, s STRING, d DATE; written by pyarrow) in {a.partitions} "
             f"partition directories; `CONVERT TO DELTALOG parquet.`…` PARTITIONED BY (p INT)` vs delta-spark's "
             f"`CONVERT TO DELTA`, both collecting statistics (deltalog from the footers, delta-spark from the rows); "
             f"median of {a.runs} runs, each on a fresh hard-linked copy, after one warm-up conversion; both logs add "
             f"the same paths, partition values and numRecords; each engine in its own Spark process (local[2]); "
             f"load average {load} at the end; command: `python benchmarks/convert_bench.py --files {a.files} "
             f"--partitions {a.partitions} --runs {a.runs}`", "",
             ] + side_by_side.runs_table(ours, theirs) + [""]
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
