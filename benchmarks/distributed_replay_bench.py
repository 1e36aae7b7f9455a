"""Distributed log replay benchmark and full-size check (issue 30).

A log of N live files with a multi-part checkpoint and C commits after it (benchmarks/large_log.py)
is loaded fresh, with the file set available, by

* deltalog with ``spark.deltalog.replay.distributedThreshold=0`` (the replay is a Spark job:
  io.deltalog.spark.read.SparkDistributedReplay), timed in the JVM around
  ``DeltaLog.uncached(path).update().state`` (io.deltalog.tools.SnapshotDigest);
* delta-spark 4.4: ``DeltaLog.clearCache()``, then ``DeltaLog.forTable(spark, path)`` and
  ``unsafeVolatileSnapshot.allFiles.count()`` (its state reconstruction job), timed around both;

each engine in its own Spark process (same master, same driver memory), first run reported and the
median of the others. deltalog's result is checked against the generator's truth (version, live
count, tombstones, digest of the live paths); delta-spark's count and version likewise.

``--in-driver`` also loads the table with deltalog's in-driver replay (threshold above the log) in
a process of the same driver memory and reports whether it succeeded, its time and heap, or the
OutOfMemoryError. ``--master spark://...`` runs on an existing cluster; ``--cluster`` starts the
standalone cluster of integration/cluster.py (one master, two workers) for the run.

    python benchmarks/distributed_replay_bench.py --files 300000 [--driver-memory 2g] [--in-driver] [--out benchmarks/RESULTS.md]
    DELTALOG_INTEGRATION_FULL=1 python benchmarks/distributed_replay_bench.py --files 2000000 --parts 20 --driver-memory 2g --in-driver
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "integration"))

import large_log  # noqa: E402
import side_by_side  # noqa: E402

WORKER = r'''
import json, os, sys, time
cfg = json.loads(sys.argv[1])
from pyspark.sql import SparkSession
b = (SparkSession.builder.master(cfg["master"]).appName("replay-bench-" + cfg["engine"])
     .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
     .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
     .config("spark.sql.session.timeZone", "UTC"))
for k, v in cfg["conf"].items():
    b = b.config(k, v)
if cfg["engine"] == "delta-spark":
    b = (b.config("spark.jars", cfg["jars"]).config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
          .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
else:
    sys.path.insert(0, os.path.join(cfg["repo"], "python"))
    from deltalog import configure_spark_with_deltalog
    b = configure_spark_with_deltalog(b, jar_path=cfg["jars"])
spark = b.getOrCreate()
jvm = spark._jvm
out = []
try:
    for r in range(cfg["runs"]):
        if cfg["engine"] == "delta-spark":
            D = jvm.org.apache.spark.sql.delta.DeltaLog
            D.clearCache()
            t0 = time.perf_counter()
            snap = D.forTable(spark._jsparkSession, cfg["table"]).unsafeVolatileSnapshot()
            n = snap.allFiles().count()
            out.append({"seconds": time.perf_counter() - t0, "count": n, "version": snap.version()})
            snap.uncache()
        else:
            hc = spark._jsc.hadoopConfiguration()
            out.append(json.loads(jvm.io.deltalog.tools.SnapshotDigest.load(cfg["table"], hc, cfg["threshold"])))
        print("RUN " + json.dumps(out[-1]), file=sys.stderr, flush=True)
except Exception as e:
    je = getattr(e, "java_exception", None)  # py4j: name the JVM's error (e.g. java.lang.OutOfMemoryError)
    try:
        msg = je.toString() if je is not None else str(e)
    except Exception:
        msg = str(e)
    out.append({"error": msg.splitlines()[0][:500] if msg else type(e).__name__})
print("RESULT " + json.dumps(out), flush=True)
spark.stop()
'''


def run_engine(engine: str, table: str, master: str, driver_memory: str, runs: int, threshold: str,
               conf: Dict[str, str], timeout: float) -> List[Dict[str, Any]]:
    from peers import deltalog_jar, delta_spark_jars
    jars = ",".join(delta_spark_jars()) if engine == "delta-spark" else deltalog_jar()
    cfg = {"engine": engine, "table": table, "master": master, "runs": runs, "threshold": threshold,
           "conf": conf, "jars": jars, "repo": REPO}
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable, TZ="UTC",
               PYSPARK_SUBMIT_ARGS=f"--driver-memory {driver_memory} pyspark-shell")
    env.pop("SPARK_CONF_DIR", None)
    p = subprocess.run([sys.executable, "-u", "-c", WORKER, json.dumps(cfg)], capture_output=True, text=True,
                       env=env, timeout=timeout, start_new_session=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = "\n".join(p.stderr.splitlines()[-15:])
    oom = "OutOfMemoryError" in p.stderr
    return [{"error": ("java.lang.OutOfMemoryError" if oom else f"exit {p.returncode}") + ": " + tail[-800:]}]


def timing(runs: List[Dict[str, Any]]) -> Dict[str, float]:
    secs = [r["seconds"] for r in runs]
    return {"first": secs[0], "median": statistics.median(secs[1:] if len(secs) > 1 else secs)}


def check_deltalog(r: Dict[str, Any], truth: Dict[str, Any], what: str, distributed: bool) -> None:
    if r["distributed"] != distributed:
        raise AssertionError(f"{what}: the load was {'' if r['distributed'] else 'not '}a Spark job")
    for k in ("version", "count", "tombstones", "paths_sum_sha256"):
        if r[k] != truth[k]:
            raise AssertionError(f"{what}: {k} = {r[k]}, generator truth {truth[k]}")


def add_log_args(ap: argparse.ArgumentParser) -> None:
    """The generated log's size and where the driver runs (shared with replay_heap_bisect.py)."""
    ap.add_argument("--files", type=int, default=300_000)
    ap.add_argument("--parts", type=int, default=10)
    ap.add_argument("--commits", type=int, default=100)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--cluster", action="store_true", help="start integration/cluster.py's standalone cluster")


def refuse_full_size(files: int) -> bool:
    """True (after saying why) when more than 1M files are asked for without DELTALOG_INTEGRATION_FULL=1."""
    if files > 1_000_000 and os.environ.get("DELTALOG_INTEGRATION_FULL") != "1":
        print("more than 1M files: set DELTALOG_INTEGRATION_FULL=1 to run the full-size check", file=sys.stderr)
        return True
    return False


def main() -> int:
    ap = argparse.ArgumentParser()
    add_log_args(ap)
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--runs", type=int, default=3, help="loads per engine (first reported, median of the rest)")
    ap.add_argument("--engines", default="deltalog,delta-spark")
    ap.add_argument("--in-driver", action="store_true", help="also try deltalog's in-driver replay")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    if refuse_full_size(a.files):
        return 2
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    t0 = time.time()
    table, truth = large_log.ensure(a.files, a.parts, a.commits)
    gen_s = time.time() - t0
    cluster = None
    master = a.master
    conf: Dict[str, str] = {"spark.sql.shuffle.partitions": "2"}
    if a.cluster:
        from cluster import StandaloneCluster  # integration/cluster.py (issue 30's cluster fixture)
        cluster = StandaloneCluster(tempfile.mkdtemp(prefix="replay-cluster-"))
        cluster.start()
        master = cluster.master_url
    load0 = os.getloadavg()[0]
    results: Dict[str, List[Dict[str, Any]]] = {}
    try:
        engines = [e.strip() for e in a.engines.split(",") if e.strip()]
        for e in engines:
            results[e] = run_engine(e, table, master, a.driver_memory, a.runs, "0", conf, a.timeout)
            print(e, json.dumps(results[e]), flush=True)
        if a.in_driver:
            results["in-driver"] = run_engine("deltalog", table, master, a.driver_memory, 1,
                                              str(1 << 62), conf, a.timeout)
            print("in-driver", json.dumps(results["in-driver"]), flush=True)
    finally:
        if cluster is not None:
            cluster.stop()
    load1 = os.getloadavg()[0]
    ok = {k: v for k, v in results.items() if v and "error" not in v[-1]}
    if "deltalog" in ok:
        for r in ok["deltalog"]:
            check_deltalog(r, truth, "deltalog distributed replay", True)
    if "in-driver" in ok:
        check_deltalog(ok["in-driver"][0], truth, "deltalog in-driver replay", False)
    if "delta-spark" in ok:
        for r in ok["delta-spark"]:
            assert (r["count"], r["version"]) == (truth["count"], truth["version"]), (r, truth)

    cmd = "python benchmarks/distributed_replay_bench.py " + " ".join(sys.argv[1:])
    lines = ["", "## Distributed log replay vs delta-spark state reconstruction (benchmarks/distributed_replay_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; table: {truth['count']:,} live files, "
             f"{truth['parts']}-part checkpoint of {truth['checkpoint_files']:,} adds + {a.commits} commits after it "
             f"(benchmarks/large_log.py, generated in {gen_s:.0f} s or cached); master `{master}`, driver memory "
             f"{a.driver_memory}; each engine in its own process; fresh load with the file set available, first run "
             f"and median of {max(1, a.runs - 1)}; 2-core machine shared with other jobs (load average "
             f"{load0:.2f} at start, {load1:.2f} at end); command: `{cmd}`", ""]
    if "deltalog" in ok and "delta-spark" in ok:
        lines += ["| load | deltalog s (first) | delta-spark s (first) | deltalog / delta-spark |", "|---|---|---|---|",
                  f"| fresh snapshot + file set | {side_by_side.cells(timing(ok['deltalog']), timing(ok['delta-spark']))} |", ""]
    for k, v in results.items():
        if k in ok:
            r = v[-1]
            extra = (f", driver heap after the load {r['heap_mb_after']} MB of {r['max_heap_mb']} MB"
                     if "heap_mb_after" in r else "")
            lines.append(f"* {k}: {len(v)} loads, version {r['version']}, {r['count']:,} files{extra}; "
                         f"times {', '.join('%.2f' % x['seconds'] for x in v)} s")
        else:
            lines.append(f"* {k}: FAILED with driver memory {a.driver_memory}: `{v[-1]['error'][:300]}`")
    lines.append("* deltalog's results equal the generator's truth (version, live count, tombstones, "
                 "digest of the live paths)" + ("; delta-spark's count and version too." if "delta-spark" in ok else "."))
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
