"""Write benchmark: ``df.write.format("deltalog")`` append vs plain ``df.write.parquet``.

The same DataFrame (generated with ``spark.range``: a long, an int, a double, a date, a ~24-char
string; about 1 GB in memory at the default 25 million rows) is written with each writer, several
times, alternating, into fresh directories. The deltalog write includes everything a real append
does: per-file statistics gathered while rows are written, and the commit. Reported (never
asserted): median and best wall time per writer, the ratio, rows/s, and the bytes written.

Every deltalog run is checked: one commit, numRecords of the adds = rows, and the row count read
back through ``spark.read.format("deltalog")``.

    DELTALOG_JAR=$PWD/target/deltalog-spark_2.13-0.1.0.jar PYTHONPATH=python \\
        .venv/bin/python benchmarks/connector_write_bench.py --rows 25000000 --repeat 3
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def build_session(jar: str | None, cores: int):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog

    builder = (SparkSession.builder.master(f"local[{cores}]").appName("connector-write-bench")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "3g")
               .config("spark.sql.shuffle.partitions", str(cores))
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1"))
    return configure_spark_with_deltalog(builder, jar_path=jar).getOrCreate()


def data(spark, rows: int, partitions: int):
    from pyspark.sql import functions as F
    return (spark.range(0, rows, 1, partitions)
            .select(F.col("id"),
                    (F.col("id") % 1000).cast("int").alias("bucket"),
                    (F.col("id") * 0.5).alias("amount"),
                    F.date_add(F.lit("2020-01-01").cast("date"), (F.col("id") % 3650).cast("int")).alias("day"),
                    F.concat(F.lit("customer-"), F.lpad(F.col("id").cast("string"), 15, "0")).alias("name")))


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


def check_deltalog(spark, path: Path, rows: int) -> None:
    log = path / "_delta_log" / ("0" * 20 + ".json")
    actions = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    n = sum(json.loads(a["add"]["stats"])["numRecords"] for a in actions if "add" in a)
    assert n == rows, f"stats say {n} rows, wrote {rows}"
    assert spark.read.format("deltalog").load(str(path)).count() == rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=25_000_000)
    ap.add_argument("--partitions", type=int, default=8, help="Spark partitions (= data files) of the input")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--jar", default=os.environ.get("DELTALOG_JAR"))
    args = ap.parse_args()

    spark = build_session(args.jar, args.cores)
    df = data(spark, args.rows, args.partitions)
    work = Path(tempfile.mkdtemp(prefix="connector-write-bench-"))
    times: dict[str, list[float]] = {"parquet": [], "deltalog": []}
    sizes: dict[str, int] = {}
    try:
        # Warm-up (not timed): JIT, class loading, both writers.
        small = data(spark, 100_000, 2)
        small.write.parquet(str(work / "warm-parquet"))
        small.write.format("deltalog").save(str(work / "warm-deltalog"))
        for i in range(args.repeat):
            for name in ("parquet", "deltalog"):
                out = work / f"{name}-{i}"
                t0 = time.perf_counter()
                if name == "parquet":
                    df.write.parquet(str(out))
                else:
                    df.write.format("deltalog").save(str(out))
                times[name].append(time.perf_counter() - t0)
                sizes[name] = dir_bytes(out)
                if name == "deltalog":
                    check_deltalog(spark, out, args.rows)
                shutil.rmtree(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"## connector write: {args.rows:,} rows, {args.partitions} input partitions, "
          f"local[{args.cores}], {args.repeat} runs each\n")
    print("| writer | median s | best s | rows/s (median) | Parquet bytes |")
    print("|---|---|---|---|---|")
    for k in ("parquet", "deltalog"):
        print(f"| {k} | {med[k]:.2f} | {min(times[k]):.2f} | {args.rows / med[k]:,.0f} | {sizes[k]:,} |")
    print(f"\ndeltalog / parquet (median): {med['deltalog'] / med['parquet']:.3f}x")


if __name__ == "__main__":
    main()
