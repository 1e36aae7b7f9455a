"""DESCRIBE HISTORY benchmark (issue 26 target): `DESCRIBE HISTORY t LIMIT 100` and the full history on
a table with 10,000 commits (the generator's S2 (c) table: 10k commits, 100k files, no checkpoint),
deltalog (this process's SparkSession, SQL and `DeltaTable.history(100)`) beside delta-spark 4.4
(a separate Spark process, `integration/peers.py`), both warm: first run reported, then the median
of 5 runs after 3 warm-up runs. Rows are collected (`collect()`), so both engines build every row.

    .venv/bin/python benchmarks/history_bench.py [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import generate  # noqa: E402
import side_by_side  # noqa: E402

TIMING = """
import time, statistics
def once():
    t0 = time.perf_counter(); rows = spark.sql(args["sql"]).collect(); return time.perf_counter() - t0, len(rows)
first, n = once()
for _ in range(3): once()
times = [once()[0] for _ in range(5)]
result = {"first": first, "median": statistics.median(times), "rows": n}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    table = generate.ensure_json_table(generate.S2_SPECS["c"])
    from peers import SparkPeer
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    from deltalog.tables import DeltaTable
    b = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2").config("spark.driver.bindAddress", "127.0.0.1"))
    spark = configure_spark_with_deltalog(b).getOrCreate()
    rows = []
    with SparkPeer("delta-spark") as ds:
        for label, limit in (("LIMIT 100", " LIMIT 100"), ("full history", "")):
            ours = {}
            sql = f"DESCRIBE HISTORY deltalog.`{table}`{limit}"

            def once():
                t0 = time.perf_counter()
                n = len(spark.sql(sql).collect())
                return time.perf_counter() - t0, n
            first, n = once()
            for _ in range(3):
                once()
            ours = {"first": first, "median": statistics.median(once()[0] for _ in range(5)), "rows": n}
            theirs = ds.run(TIMING, sql=f"DESCRIBE HISTORY delta.`{table}`{limit}")
            assert ours["rows"] == theirs["rows"], (ours, theirs)
            py = None
            if limit:
                t = DeltaTable.forPath(spark, table)
                ts = []
                for _ in range(8):
                    t0 = time.perf_counter()
                    t.history(100).collect()
                    ts.append(time.perf_counter() - t0)
                py = statistics.median(ts[3:])
            rows.append((label, ours, theirs, py))
    spark.stop()
    load = "%.2f" % os.getloadavg()[0]
    lines = ["", "## DESCRIBE HISTORY (benchmarks/history_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; table: 10,000 commits, 100,000 files (S2 (c)); "
             f"load average {load} at the end; command: `python benchmarks/history_bench.py`", "",
             "| statement | rows | deltalog s (first) | delta-spark s (first) | deltalog / delta-spark | `DeltaTable.history(100)` s |",
             "|---|---|---|---|---|---|"]
    for label, o, t, py in rows:
        lines.append(f"| `DESCRIBE HISTORY` {label} | {o['rows']:,} | {side_by_side.cells(o, t)} | "
                     f"{'%.3f' % py if py is not None else ''} |")
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
