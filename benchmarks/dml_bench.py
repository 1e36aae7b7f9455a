"""DELETE and UPDATE benchmark (issue 27 targets), deltalog beside delta-spark 4.4 on the same Spark:

D1  ``DELETE FROM t WHERE id % 1000 = k``: 0.1 % of the rows, spread over every data file, on a table
    of ``--rows`` rows in 20 files; copy-on-write and with deletion vectors
    (``delta.enableDeletionVectors = true``). Targets: DV <= 0.3x the same engine's copy-on-write,
    deltalog <= 0.8x delta-spark.
U1  ``UPDATE t SET v = v + 1, s = concat(s, 'u') WHERE id % 1000 = k`` on the same tables, same targets.

Each engine runs in its own Spark process (``integration/peers.py``: local[2], UI off, 6 GB driver)
and writes its own copy of the same rows; one warm-up DELETE, then the median of ``--runs`` DELETEs
(each with a new k, so each deletes rows that are still there). The row counts after the runs are
checked equal between the engines before anything is reported.

    .venv/bin/python benchmarks/dml_bench.py [--rows 2000000] [--runs 3] [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

SETUP = """
path, fmt, dv = args["path"], args["fmt"], args["dv"]
(spark.range(args["rows"]).selectExpr("id", "id % 97 AS k", "rand(1) AS v", "cast(id AS string) AS s")
    .repartition(20).write.format(fmt).option("delta.enableDeletionVectors", str(dv).lower()).save(path))
spark.sql(f"ALTER TABLE {'deltalog' if fmt == 'deltalog' else 'delta'}.`{path}` SET TBLPROPERTIES "
          f"('delta.enableDeletionVectors' = '{str(dv).lower()}')")
result = spark.read.format(fmt).load(path).count()
"""

RUN = """
import time, statistics
t = f"{'deltalog' if args['fmt'] == 'deltalog' else 'delta'}.`{args['path']}`"
def once(k):
    t0 = time.perf_counter()
    spark.sql(args["stmt"].format(t=t, k=k)).collect()
    return time.perf_counter() - t0
first = once(1)
times = [once(k) for k in range(2, 2 + args["runs"])]
check = spark.read.format(args["fmt"]).load(args["path"]).selectExpr("count(*)", "sum(hash(id, v, s))").collect()[0]
result = {"first": first, "median": statistics.median(times), "rows": check[0], "hash": check[1]}
"""


STATEMENTS = {
    "DELETE": "DELETE FROM {t} WHERE id % 1000 = {k}",
    "UPDATE": "UPDATE {t} SET v = v + 1, s = concat(s, 'u') WHERE id % 1000 = {k} + 500",
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer
    load_start = os.getloadavg()[0]
    res = {}
    with tempfile.TemporaryDirectory() as root, SparkPeer("deltalog", driver_memory="6g") as dl, \
            SparkPeer("delta-spark", driver_memory="6g") as ds:
        for engine, peer, fmt in (("deltalog", dl, "deltalog"), ("delta-spark", ds, "delta")):
            for dv in (False, True):
                path = os.path.join(root, f"{engine}-{'dv' if dv else 'cow'}")
                assert peer.run(SETUP, path=path, fmt=fmt, dv=dv, rows=a.rows) == a.rows
                for stmt, sql in STATEMENTS.items():
                    res[(engine, dv, stmt)] = peer.run(RUN, path=path, fmt=fmt, runs=a.runs, stmt=sql)
    for stmt in STATEMENTS:  # the same rows in every table after each statement's runs
        assert len({(r["rows"], r["hash"]) for k, r in res.items() if k[2] == stmt}) == 1, res
    counts = {res[k]["rows"] for k in res if k[2] == "UPDATE"}
    load = f"load average {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    lines = ["", "## DELETE and UPDATE (benchmarks/dml_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}; {a.rows:,} rows in 20 files; "
             f"`DELETE ... WHERE id % 1000 = k`, then `UPDATE ... SET v = v + 1, s = concat(s, 'u') WHERE "
             f"id % 1000 = k + 500` (0.1 % of the rows each, in every file); median of {a.runs} after one "
             f"warm-up (first in brackets); the same rows (count and checksum) in every table after each "
             f"statement, {counts.pop():,} rows at the end; command: "
             f"`python benchmarks/dml_bench.py --rows {a.rows} --runs {a.runs}`", "",
             "| statement | mode | deltalog s | delta-spark s | deltalog / delta-spark |", "|---|---|---|---|---|"]
    for stmt in STATEMENTS:
        for dv in (False, True):
            o, t = res[("deltalog", dv, stmt)], res[("delta-spark", dv, stmt)]
            lines.append(f"| {stmt} | {'deletion vectors' if dv else 'copy-on-write'} | {side_by_side.cells(o, t)} |")
        for engine in ("deltalog", "delta-spark"):
            lines.append(f"| {stmt} | DV / copy-on-write, {engine} | | | "
                         f"{res[(engine, True, stmt)]['median'] / res[(engine, False, stmt)]['median']:.2f}× |")
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
