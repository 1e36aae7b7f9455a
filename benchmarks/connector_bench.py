"""Spark connector benchmark, side by side in one run (perf-anchors §6.2 S8, issue 5 targets).

S8     Data-skipping plan on the 100k-file table of the log benchmark (``ckpt-c1000-n100000``: every
       file covers the disjoint id range [1000 i, 1000 i + 999]), at 0.1 %, 1 %, 10 % and 100 %
       selectivity (``id >= 0 AND id < X``). Planning only: no data file exists or is opened.
         * delta-rs: ``QueryBuilder().register("t", dt).execute("EXPLAIN SELECT count(*) ...")``
           with the ``DeltaTable`` loaded before the clock starts (as in perf-anchors §4).
         * deltalog: ``spark.read.format("deltalog").load(p).where(...)`` planned through
           ``io.deltalog.api.ScanApi.plannedFiles`` (Spark analysis, optimisation, physical planning,
           partition pruning and data skipping; the snapshot is cached after the warm-up, as
           delta-rs' is). The kept file set is checked against the ideal set computed from the
           generator; delta-rs' EXPLAIN truncates its file lists, so only its time is reported.
SCAN   Full scan (``count`` + a sum over every column, so every byte is decoded) of a ~1 GB table
       written once per format: plain ``spark.read.parquet``, deltalog, delta-spark (if its jars are
       available: ``make peers``). Same Spark session, same files layout and size.
APPEND A ~1 GB append (``df.write.mode("append")``) of the same generated DataFrame: plain Parquet,
       deltalog (stats collected), delta-spark.

    .venv/bin/python benchmarks/connector_bench.py                    # S8 only (about 1 min)
    .venv/bin/python benchmarks/connector_bench.py --scenarios S8,S8F,SCAN,APPEND --rows 60000000

Times are seconds: S8 the median of 5 runs after warm-up runs for 3 s (at most 300; the first run is
reported too), SCAN and APPEND the median of 2. Ratios
below 1 mean deltalog is faster. Never asserted in tests; printed as Markdown (``--out`` appends it
to a file; ``--json`` writes the raw numbers for ``charts.py``).
"""
from __future__ import annotations

import argparse
import glob
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "integration"))

import generate  # noqa: E402

DELTA_SPARK_COORDS = "io.delta:delta-spark_4.2_2.13:4.4.0"


S8_WARM_S = 3.0        # warm-up by time (as benchmarks/run.py; longer: Spark plans take hundreds of runs to compile)
S8_WARM_MAX_RUNS = 300  # a driver plans faster as the JIT compiles Spark's planner and ours (~200 plans)


def median_time(fn: Callable[[], Any], runs: int, warmup: int = 1) -> Tuple[float, Any]:
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def warm_median(fn: Callable[[], Any], runs: int) -> Dict[str, Any]:
    """First run, then warm-up runs for ``S8_WARM_S`` (at most ``S8_WARM_MAX_RUNS`` runs in all),
    then the median of ``runs`` timed runs."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    spent, warm = 0.0, 1  # the first run (table load, class loading) is not warm-up time
    while spent < S8_WARM_S and warm < S8_WARM_MAX_RUNS:
        t0 = time.perf_counter()
        fn()
        spent += time.perf_counter() - t0
        warm += 1
    median, _ = median_time(fn, runs, 0)
    return {"first": first, "warm_runs": warm, "median": median}


def delta_spark_jars() -> List[str]:
    """delta-spark and its runtime jars from the local Maven repository (``make peers`` fetches them);
    [] when they are not there (the benchmark never downloads anything)."""
    from peers import delta_spark_jar_paths
    jars = delta_spark_jar_paths()
    return [str(j) for j in jars] if all(j.exists() for j in jars) else []


def start_spark(jar: Optional[str], with_delta_spark: bool, driver_memory: str) -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    builder = (SparkSession.builder.master("local[2]").appName("deltalog-connector-bench")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.memory", driver_memory).config("spark.ui.showConsoleProgress", "false"))
    builder = configure_spark_with_deltalog(builder, jar_path=jar)
    if with_delta_spark:
        jars = delta_spark_jars()
        conf = builder._options  # noqa: SLF001 - read back what configure_spark_with_deltalog set
        builder = builder.config("spark.jars", ",".join([conf.get("spark.jars", "")] + jars).strip(","))
        ext = conf.get("spark.sql.extensions", "")
        builder = builder.config("spark.sql.extensions",
                                 ",".join(e for e in [ext, "io.delta.sql.DeltaSparkSessionExtension"] if e))
    return builder.getOrCreate()


# ------------------------------------------------------------------------------------------- S8

def active_indices(spec: "generate.Spec", version: int) -> List[int]:
    active: set = set()
    for v in range(1, version + 1):
        adds, removes = spec.actions(v)
        active.update(adds)
        active.difference_update(removes)
    return sorted(active)


def s8(spark: Any, engines: List[str], runs: int) -> List[Dict[str, Any]]:
    spec = generate.S1_SPECS["100k"]
    table = generate.ensure_checkpoint_table(spec, 0)
    active = active_indices(spec, spec.last)
    id_end = 1000 * (max(active) + 1)
    rows = []
    dt = None
    if "delta-rs" in engines:
        from deltalake import DeltaTable, QueryBuilder
        dt = DeltaTable(table)
        dt.get_add_actions(flatten=False)  # loaded before the clock starts
    jvm = spark._jvm if spark is not None else None  # noqa: SLF001
    for sel in (0.001, 0.01, 0.1, 1.0):
        x = int(id_end * sel)
        cond = f"id >= 0 AND id < {x}"
        ideal = {spec.path(i) for i in active if 1000 * i < x}
        row: Dict[str, Any] = {"selectivity": sel, "ideal": len(ideal)}
        if dt is not None:
            import pyarrow as pa

            def rs_plan() -> int:
                r = QueryBuilder().register("t", dt).execute(f"EXPLAIN SELECT count(*) FROM t WHERE {cond}")
                return len(pa.table(r))
            row["delta-rs"] = warm_median(rs_plan, runs)["median"]
        if jvm is not None:
            def dl_df() -> Any:
                return spark.read.format("deltalog").load(table).where(cond)

            scan_api = jvm.io.deltalog.api.ScanApi  # py4j class lookup (JVM class-path scan): not planning

            def dl_plan() -> int:
                return scan_api.plannedFileCount(dl_df()._jdf)  # noqa: SLF001
            m = warm_median(dl_plan, runs)
            row["deltalog"], row["deltalog_first"], row["deltalog_warm_runs"] = m["median"], m["first"], m["warm_runs"]

            def spark_floor() -> Any:
                # The same filter on a one-partition range: Spark's own parse/analyse/plan cost,
                # a lower bound for any data source planned through Spark in this driver.
                return spark.range(1000).where(cond)._jdf.queryExecution().sparkPlan()  # noqa: SLF001
            row["spark_floor"] = warm_median(spark_floor, runs)["median"]
            text = jvm.io.deltalog.api.ScanApi.plannedFilesText(dl_df()._jdf)  # noqa: SLF001
            files = text.split("\n") if text else []
            kept = {os.path.relpath(f.replace("file:", ""), table) for f in files}
            row["deltalog_kept"] = len(kept)
            row["deltalog_exact"] = kept == ideal
        rows.append(row)
    return rows


def s8_float(spark: Any, runs: int) -> List[Dict[str, Any]]:
    """S8F: the cost of NaN-blind statistics (issue 25) on the S8 table, filter ``score > T`` on its
    double column. The generator's commits carry engineInfo ``deltalog-bench-generator/...``, not a
    writer known to count NaN, so under ``auto`` (the default) every file whose max alone would be
    skipped is kept back; ``true`` trusts every max (delta-spark's behaviour, and what a table written
    only by Spark engines gets after its provenance scan). ``provenance`` is the one-off scan of the
    table's commits (per table and JVM; later versions read only their new commits)."""
    spec = generate.S1_SPECS["100k"]
    table = generate.ensure_checkpoint_table(spec, 0)
    jvm = spark._jvm  # noqa: SLF001
    key = "spark.deltalog.skipping.trustFloatMaxStats"
    rows = []
    conf = spark._jsc.hadoopConfiguration()  # noqa: SLF001

    def provenance() -> float:
        jvm.io.deltalog.log.DeltaLog.clearCache()  # a new DeltaLog: nothing scanned yet
        log = jvm.io.deltalog.log.DeltaLog.forTable(table, conf)
        snapshot = log.update()  # loaded before the clock starts
        t0 = time.perf_counter()
        log.statsProvenance().nanBlindFiles(snapshot).isEmpty()
        return time.perf_counter() - t0
    t_prov = statistics.median(provenance() for _ in range(3))
    for threshold in (160.0, 120.0):
        cond = f"score > {threshold}"
        row: Dict[str, Any] = {"filter": cond, "provenance": t_prov}
        for mode in ("true", "auto"):
            spark.conf.set(key, mode)

            def plan() -> int:
                return jvm.io.deltalog.api.ScanApi.plannedFileCount(  # noqa: SLF001
                    spark.read.format("deltalog").load(table).where(cond)._jdf)
            m = warm_median(plan, runs)
            row[mode] = m["median"]
            row[mode + "_kept"] = plan()
        spark.conf.unset(key)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------- SCAN / APPEND

def data_frame(spark: Any, rows: int) -> Any:
    """~17 bytes/row in Parquet: 60M rows ≈ 1 GB. Deterministic, mixed types, some nulls."""
    from pyspark.sql import functions as F
    return (spark.range(0, rows, 1, 16)
            .withColumn("k", (F.col("id") % 1000).cast("int"))
            .withColumn("v", F.when(F.col("id") % 97 == 0, None).otherwise(F.col("id") * 7 % 1000003))
            .withColumn("d", (F.col("id") % 10007) / 13.0)
            .withColumn("s", F.concat(F.lit("name-"), (F.col("id") % 50000).cast("string"))))


def scan_append(spark: Any, rows: int, work: str, with_delta_spark: bool, scenarios: set) -> Dict[str, Any]:
    fmts = ["parquet", "deltalog"] + (["delta"] if with_delta_spark else [])
    out: Dict[str, Any] = {"rows": rows, "append": {}, "scan": {}, "bytes": {}}
    paths = {f: os.path.join(work, f"t-{f}") for f in fmts}

    def write(fmt: str, path: str, n: int = rows) -> None:
        data_frame(spark, n).write.format(fmt).mode("append").save(path)

    # Warm-up: every format writes and scans a small table first, so no format pays the JIT and
    # class-loading cost of the first write or scan in its measured runs.
    from pyspark.sql import functions as F
    for fmt in fmts:
        p = paths[fmt] + "-warmup"
        write(fmt, p, 200_000)
        spark.read.format(fmt).load(p).agg(F.sum("id"), F.sum(F.length("s"))).collect()
        shutil.rmtree(p, ignore_errors=True)

    for fmt in fmts:
        times = []
        reps = 2 if "APPEND" in scenarios else 1
        for r in range(reps):
            p = paths[fmt] if r == reps - 1 else paths[fmt] + f"-append{r}"
            t0 = time.perf_counter()
            write(fmt, p)
            times.append(time.perf_counter() - t0)
            if p != paths[fmt]:
                shutil.rmtree(p, ignore_errors=True)
        out["append"][fmt] = statistics.median(times)
        out["bytes"][fmt] = sum(os.path.getsize(f) for f in glob.glob(os.path.join(paths[fmt], "**", "*.parquet"),
                                                                        recursive=True))
    if "SCAN" in scenarios:
        for fmt in fmts:
            def scan() -> Any:
                df = spark.read.format(fmt).load(paths[fmt])
                return df.agg(F.count("*"), F.sum("id"), F.sum("k"), F.sum("v"), F.sum("d"),
                              F.sum(F.length("s"))).collect()[0]
            out["scan"][fmt], res = median_time(scan, 2)
            out.setdefault("scan_result", {})[fmt] = tuple(res)
    return out


# ----------------------------------------------------------------------------------------- report

def markdown(meta: Dict[str, Any], s8_rows: List[Dict[str, Any]], sa: Optional[Dict[str, Any]],
             s8f_rows: Optional[List[Dict[str, Any]]] = None) -> str:
    lines = [f"## Spark connector (benchmarks/connector_bench.py)", "",
             f"{meta['date']}, {meta['machine']}; load average {meta['load_start']} at start, "
             f"{meta['load_end']} at end; command: `{meta['command']}`", ""]
    if s8f_rows:
        lines += ["### S8F — NaN-blind statistics: `score > T` on the S8 table (double column)", "",
                  "| filter | files kept, max trusted (`true`) | plan s (`true`) | files kept, `auto` | plan s (`auto`) "
                  "| provenance scan s (all commits, once per table) |", "|---|---|---|---|---|---|"]
        for r in s8f_rows:
            lines.append(f"| `{r['filter']}` | {r['true_kept']:,} | {r['true']:.3f} | {r['auto_kept']:,} | "
                         f"{r['auto']:.3f} | {r['provenance']:.3f} |")
        lines += ["", "The generator's commits name no writer known to count NaN in its max, so `auto` keeps back "
                  "every file only its `score` max would skip (the files a NaN row could hide in); `true` is "
                  "delta-spark's behaviour and what a table written by Spark engines gets. The provenance scan "
                  "reads the table's commits once per table and JVM (a fresh uncached `DeltaLog` each run here).", ""]
    if s8_rows:
        lines += ["### S8 — data-skipping plan, 100k files with stats (sorted table)", "",
                  "| selectivity | ideal files | deltalog kept | exact set | delta-rs s | deltalog s | deltalog / delta-rs "
                  "| Spark floor s | floor / delta-rs | deltalog first run s (warm-up runs) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in s8_rows:
            rs, dl, fl = r.get("delta-rs"), r.get("deltalog"), r.get("spark_floor")
            ratio = f"{dl / rs:.2f}×" if rs and dl else "n/a"
            floor_ratio = f"{fl / rs:.2f}×" if rs and fl else "n/a"
            lines.append(f"| {r['selectivity'] * 100:g} % | {r['ideal']:,} | {r.get('deltalog_kept', 'n/a'):,} | "
                         f"{'yes' if r.get('deltalog_exact') else 'NO'} | "
                         f"{'n/a' if rs is None else '%.3f' % rs} | {'n/a' if dl is None else '%.3f' % dl} | {ratio} | "
                         f"{'n/a' if fl is None else '%.3f' % fl} | {floor_ratio} | "
                         f"{'n/a' if dl is None else '%.3f (%d)' % (r['deltalog_first'], r['deltalog_warm_runs'])} |")
        lines += ["", "delta-rs: EXPLAIN through QueryBuilder on a loaded DeltaTable; deltalog: DataFrame "
                  "creation + Spark planning + pruning/skipping through `ScanApi.plannedFileCount` from Python (py4j "
                  "included), snapshot cached. delta-rs' EXPLAIN truncates its file lists, so only deltalog's kept "
                  "set is checked against the ideal one. Spark floor: `spark.range(1000).where(<same filter>)` "
                  "planned the same way (no data source, no files): what Spark's parser, analyser, optimiser "
                  "and planner cost in this driver at this point; no source planned through Spark goes below it. "
                  "Each engine and the floor warm up for 3 s per row (at most 300 runs) before 5 timed runs: "
                  "Spark's planner and deltalog's skipping get faster over the first ~200 plans of a driver "
                  "as the JIT compiles them; the first run of each row is listed.", ""]
    if sa:
        fmts = list(sa["append"].keys())
        names = {"parquet": "plain Parquet", "deltalog": "deltalog", "delta": "delta-spark 4.4.0"}
        lines += [f"### Full scan and append, {sa['rows']:,} rows", "",
                  "| | " + " | ".join(names[f] for f in fmts) + " | deltalog / Parquet | deltalog / delta-spark |",
                  "|---|" + "---|" * (len(fmts) + 2)]

        def ratio(d: Dict[str, float], a: str, b: str) -> str:
            return f"{d[a] / d[b]:.2f}×" if a in d and b in d else "n/a"
        for kind in ("append", "scan"):
            d = sa[kind]
            if d:
                lines.append(f"| {kind} s | " + " | ".join("%.2f" % d[f] for f in fmts) +
                             f" | {ratio(d, 'deltalog', 'parquet')} | {ratio(d, 'deltalog', 'delta')} |")
        lines.append("| bytes written | " + " | ".join(f"{sa['bytes'][f] / 1e6:,.0f} MB" for f in fmts) + " | | |")
        if sa.get("scan_result"):
            import math
            vals = list(sa["scan_result"].values())
            # float sums depend on the summation order: equal within 1e-12 relative
            same = all(len(v) == len(vals[0]) and all(
                math.isclose(a, b, rel_tol=1e-12) if isinstance(a, float) or isinstance(b, float) else a == b
                for a, b in zip(v, vals[0])) for v in vals)
            lines += ["", f"Scan results identical across formats (float sums within 1e-12): "
                      f"{'yes' if same else 'NO ' + str(sa['scan_result'])}."]
        lines += ["", "Scan = count + sums over every column (every value decoded), median of 2 in one warm "
                  "SparkSession (`local[2]`); append = `df.write.format(f).mode('append').save`, median of 2; "
                  "deltalog's append includes per-file statistics and the commit."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", default="S8")
    ap.add_argument("--engines", default="delta-rs,deltalog")
    ap.add_argument("--runs", type=int, default=5, help="timed S8 runs after the warm-up")
    ap.add_argument("--rows", type=int, default=60_000_000, help="rows of the SCAN/APPEND table (60M ≈ 1 GB)")
    ap.add_argument("--jar", default=os.environ.get("DELTALOG_JAR"))
    ap.add_argument("--no-delta-spark", action="store_true")
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--out", help="append the Markdown report to this file")
    ap.add_argument("--json", help="also write the raw results here (charts.py draws them: "
                                   "benchmarks/connector-results.json beside results.json)")
    a = ap.parse_args()
    scenarios = set(a.scenarios.split(","))
    engines = a.engines.split(",")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} cores, {platform.platform()}",
            "load_start": "%.2f" % os.getloadavg()[0],
            "command": "python benchmarks/connector_bench.py " + " ".join(sys.argv[1:])}
    with_ds = bool(scenarios & {"SCAN", "APPEND"}) and not a.no_delta_spark and bool(delta_spark_jars())
    spark = start_spark(a.jar, with_ds, a.driver_memory) if "deltalog" in engines or scenarios & {"SCAN", "APPEND"} else None
    s8_rows, sa, s8f_rows = [], None, []
    try:
        if "S8" in scenarios:
            s8_rows = s8(spark, engines, a.runs)
        if "S8F" in scenarios and spark is not None:
            s8f_rows = s8_float(spark, a.runs)
        if scenarios & {"SCAN", "APPEND"}:
            os.makedirs(generate.DATA_DIR, exist_ok=True)
            work = tempfile.mkdtemp(prefix="deltalog-connector-bench-", dir=generate.DATA_DIR)
            try:
                sa = scan_append(spark, a.rows, work, with_ds, scenarios)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        if spark is not None:
            spark.stop()
    meta["load_end"] = "%.2f" % os.getloadavg()[0]
    report = markdown(meta, s8_rows, sa, s8f_rows)
    print(report)
    if a.json:
        import json
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "s8": s8_rows,
                       "scan_append": None if sa is None else {k: v for k, v in sa.items() if k != "scan_result"}},
                      f, indent=1, default=str)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n" + report)
    ok = all(r.get("deltalog_exact", True) for r in s8_rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
