"""Catalog-table benchmarks (issue 26 targets), deltalog beside delta-spark 4.4 on the same Spark:

P1  ``spark.table("t").where(cond)`` planning on a 100k-file catalog table (the S8 table: 1,000
    commits, checkpoint, 100k files with stats, registered with ``CREATE TABLE t USING ... LOCATION``),
    warm, at 0.1 % / 10 % / 100 % selectivity. "Planning" = analysis, optimisation, physical
    planning and the file list the scan reads (``queryExecution.toRdd`` builds the scan's RDD, which
    needs the pruned and skipped files; no job runs). Target: <= delta-spark.
P2  ``CREATE TABLE t (...) USING ... LOCATION ...`` + first ``INSERT INTO t VALUES`` of 10 rows, each
    iteration on a fresh table. Target: <= delta-spark.

Each engine runs in its own Spark process (``integration/peers.py``: local[2], UI off, 6 GB driver) with the same
code; both are warmed up (3 runs) before the median of 7 timed runs; the first run is listed too.
The scans' partition counts (Spark packs them from the kept files and their sizes) are checked equal
between the engines; the table is log-only (no data files), so nothing is read.

    .venv/bin/python benchmarks/sql_bench.py [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import generate  # noqa: E402
import side_by_side  # noqa: E402

PLANNING = """
import time, statistics
name = args["name"]
if not spark.catalog.tableExists(name):
    spark.sql(f"CREATE TABLE {name} USING {args['fmt']} LOCATION '{args['table']}'")
def once():
    t0 = time.perf_counter()
    parts = spark.table(name).where(args["cond"])._jdf.queryExecution().toRdd().getNumPartitions()
    return time.perf_counter() - t0, parts
first, parts = once()
for _ in range(3): once()
times = [once()[0] for _ in range(7)]
result = {"first": first, "median": statistics.median(times), "partitions": parts}
"""

CREATE_INSERT = """
import time, statistics, uuid
values = ", ".join(f"({i}, 's{i}')" for i in range(10))
def once():
    n = "ci_" + uuid.uuid4().hex[:10]
    t0 = time.perf_counter()
    spark.sql(f"CREATE TABLE {n} (id INT, s STRING) USING {args['fmt']} LOCATION '{args['root']}/{n}'")
    spark.sql(f"INSERT INTO {n} VALUES {values}")
    dt = time.perf_counter() - t0
    rows = spark.table(n).count()
    spark.sql(f"DROP TABLE {n}")
    return dt, rows
first, rows = once()
for _ in range(3): once()
times = [once()[0] for _ in range(7)]
result = {"first": first, "median": statistics.median(times), "rows": rows}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spec = generate.S1_SPECS["100k"]
    table = generate.ensure_checkpoint_table(spec, 0)
    from connector_bench import active_indices
    id_end = 1000 * (max(active_indices(spec, spec.last)) + 1)  # file i holds ids 1000*i .. (generate.py)
    from peers import SparkPeer
    load_start = os.getloadavg()[0]
    planning, create = [], {}
    with tempfile.TemporaryDirectory() as root, SparkPeer("deltalog", driver_memory="6g") as dl, \
            SparkPeer("delta-spark", driver_memory="6g") as ds:
        for sel in (0.001, 0.1, 1.0):
            cond = f"id >= 0 AND id < {int(id_end * sel)}"
            ours = dl.run(PLANNING, name="p1", fmt="deltalog", table=table, cond=cond)
            theirs = ds.run(PLANNING, name="p1", fmt="delta", table=table, cond=cond)
            # The table has no data files (a log-only benchmark table): the check is the scan's partition
            # count, which Spark packs from the kept files' sizes the same way for both engines.
            assert ours["partitions"] == theirs["partitions"], (sel, ours, theirs)
            planning.append((sel, ours, theirs))
        for engine, peer, fmt in (("deltalog", dl, "deltalog"), ("delta-spark", ds, "delta")):
            create[engine] = peer.run(CREATE_INSERT, fmt=fmt, root=os.path.join(root, engine))
            assert create[engine]["rows"] == 10
    load = f"load average {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    lines = ["", "## Catalog tables: planning and CREATE + INSERT (benchmarks/sql_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}; each engine in its own Spark "
             "process (local[2], 6 GB driver); median of 7 warm runs (first run in brackets); command: "
             "`python benchmarks/sql_bench.py`", "",
             "| case | scan partitions / rows | deltalog s | delta-spark s | deltalog / delta-spark |", "|---|---|---|---|---|"]
    for sel, o, t in planning:
        lines.append(f"| P1 `spark.table(t).where(id < …)` plan, 100k files, {sel:.1%} | {o['partitions']:,} | "
                     f"{side_by_side.cells(o, t)} |")
    o, t = create["deltalog"], create["delta-spark"]
    lines.append(f"| P2 `CREATE TABLE` + `INSERT` 10 rows | 10 | {side_by_side.cells(o, t)} |")
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
