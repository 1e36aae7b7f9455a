"""Commit benchmark, deltalog vs delta-rs: perf-anchors §6.2 scenarios S5 and S6, in one run.

S5  1,000 sequential small commits (1 add each, blind append) on a table with
    ``delta.checkpointInterval = 100``; commits/s, p50 / p99 latency; durable and non-durable.
S6  8 concurrent writer processes x 25 blind appends on one table; total commits/s, failed
    commits (must be 0), retries, p50 / p99; the final version must be 200.

Engines, one after another (never at the same time: the machine has 2 cores):

* delta-rs (``deltalake``): ``DeltaTable.update_incremental()`` then
  ``create_write_transaction([AddAction], "append", schema,
  post_commithook_properties=PostCommitHookProperties(create_checkpoint=True))`` per commit, as in
  perf-anchors §3/§7. delta-rs' local object store does not fsync, so it only has a non-durable row.
* deltalog (JVM): ``io.deltalog.api.TxnTool append-bench`` — the same loop as ``TxnStress append``
  (``OptimisticTransaction.start`` + ``commit`` of one add, post-commit checkpoint included) with a
  start barrier, so JVM start-up is excluded (as the delta-rs processes' imports are). Durable mode is
  the engine default (``deltalog.commit.durable=true``: fsync of the commit file before the
  put-if-absent link, then of the log directory); non-durable sets it to false.
* deltalog (Python API, S5 only, ``--python-api``): ``OptimisticTransaction.forPath`` + ``commit``
  through py4j from a SparkSession (adds the py4j round trips; SparkSession start not timed).

Latency of one commit = update/start of the transaction + commit (+ checkpoint when due), for every
engine. Every run is checked: final version, one add per commit, every added file live (parsed from
the log), and the table re-read by delta-rs. Prints a Markdown table (and writes JSON with --json).

    .venv/bin/python benchmarks/txn_bench.py                 # S5 + S6, both engines (about 2-3 min)
    .venv/bin/python benchmarks/txn_bench.py --commits 300 --python-api
"""
from __future__ import annotations

import argparse
import glob
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

SCHEMA = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
TOOL = "io.deltalog.api.TxnTool"


# ------------------------------------------------------------------------------ helpers

def pct(values: List[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1)))))
    return s[k]


def create_table(path: str, checkpoint_interval: Optional[int]) -> None:
    """Version 0 written directly (same for every engine): protocol (1,2), metaData, no files."""
    from deltalog.actions import CommitInfo, Metadata, serializeActions
    from deltalog.protocol import Protocol
    os.makedirs(os.path.join(path, "_delta_log"))
    conf = {} if checkpoint_interval is None else {"delta.checkpointInterval": str(checkpoint_interval)}
    md = Metadata(id=str(uuid.uuid4()), schemaString=SCHEMA, configuration=conf,
                  createdTime=int(time.time() * 1000))
    info = CommitInfo.of(timestamp=int(time.time() * 1000), operation="CREATE TABLE",
                         operationParameters={}, isBlindAppend=True, txnId=str(uuid.uuid4()))
    with open(os.path.join(path, "_delta_log", "0" * 20 + ".json"), "w") as f:
        f.write(serializeActions([info, Protocol.forNewTable(md), md]))


def verify(path: str, expected_commits: int) -> Dict[str, Any]:
    """Correctness of a run: contiguous log, one add per commit, every add live, delta-rs agrees."""
    import pyarrow as pa
    from deltalake import DeltaTable as RsTable

    from deltalog.actions import AddFile, RemoveFile, parseActions
    log = os.path.join(path, "_delta_log")
    versions = sorted(int(n[:20]) for n in os.listdir(log) if len(n) == 25 and n.endswith(".json"))
    problems = []
    if versions != list(range(len(versions))):
        problems.append("log not contiguous")
    live = set()
    for v in versions[1:]:
        with open(os.path.join(log, f"{v:020d}.json")) as f:
            acts = parseActions(f.read())
        adds = [a.path for a in acts if isinstance(a, AddFile)]
        if len(adds) != 1 or any(isinstance(a, RemoveFile) for a in acts):
            problems.append(f"version {v}: {len(adds)} adds")
        live.update(adds)
    final = versions[-1] if versions else -1
    if final != expected_commits:
        problems.append(f"final version {final} != {expected_commits}")
    if len(live) != final:
        problems.append(f"{len(live)} distinct files for {final} commits")
    checkpoints = sorted({int(n[:20]) for n in os.listdir(log) if ".checkpoint." in n and not n.startswith(".")})
    rs = RsTable(path)
    rs_paths = set(pa.table(rs.get_add_actions(flatten=False)).column("path").to_pylist())
    if rs.version() != final or rs_paths != live:
        problems.append(f"delta-rs reads version {rs.version()} with {len(rs_paths)} files")
    return {"final_version": final, "files": len(live), "checkpoints": checkpoints, "problems": problems}


def summarize(name: str, engine: str, mode: str, lat_s: List[float], wall_s: float, failures: int,
              retries: Optional[int], check: Dict[str, Any], notes: str = "",
              cpu_s: Optional[float] = None) -> Dict[str, Any]:
    ok = len(lat_s)
    return {
        "scenario": name, "engine": engine, "mode": mode, "commits": ok, "failed": failures,
        "retries": retries, "commits_per_s": ok / wall_s if wall_s > 0 else float("nan"),
        "p50_ms": pct(lat_s, 50) * 1000, "p99_ms": pct(lat_s, 99) * 1000, "max_ms": max(lat_s, default=0) * 1000,
        "wall_s": wall_s, "final_version": check["final_version"],
        "checkpoints": len(check["checkpoints"]), "correct": not check["problems"],
        "problems": check["problems"], "notes": notes,
        "cpu_ms_per_commit": (cpu_s * 1000 / ok) if cpu_s is not None and ok else None,
    }


# ------------------------------------------------------------------------------ delta-rs

def _rs_commit(dt: Any, schema: Any, name: str, i: int) -> None:
    from deltalake.transaction import AddAction, PostCommitHookProperties
    add = AddAction(name, 100 + i, {}, int(time.time() * 1000), True, '{"numRecords":1}')
    dt.create_write_transaction([add], "append", schema,
                                post_commithook_properties=PostCommitHookProperties(create_checkpoint=True))


def _rs_timed_commit(dt: Any, schema: Any, name: str, i: int) -> float:
    """One delta-rs commit of S5/S6 (refresh the table, then append one add): its latency in s."""
    t0 = time.perf_counter()
    dt.update_incremental()
    _rs_commit(dt, schema, name, i)
    return time.perf_counter() - t0


def deltars_s5(path: str, n: int) -> Tuple[List[float], float, int]:
    from deltalake import DeltaTable
    dt = DeltaTable(path)
    schema = dt.schema()
    lat, failures = [], 0
    t_start = time.perf_counter()
    for i in range(n):
        try:
            lat.append(_rs_timed_commit(dt, schema, f"s5-{i}.parquet", i))
        except Exception:
            failures += 1
    return lat, time.perf_counter() - t_start, failures


def _rs_writer(path: str, writer: int, n: int, go_file: str, ready: Any, results: Any) -> None:
    from deltalake import DeltaTable
    dt = DeltaTable(path)
    schema = dt.schema()
    ready.put(writer)
    while not os.path.exists(go_file):
        time.sleep(0.0005)
    lat, ends, errors = [], [], []
    for i in range(n):
        try:
            lat.append(_rs_timed_commit(dt, schema, f"w{writer}-{i}.parquet", i))
            ends.append(time.time())
        except Exception as e:
            errors.append(f"{type(e).__name__}: {str(e)[:200]}")
    results.put((writer, lat, ends, errors))


def deltars_s6(path: str, writers: int, n: int) -> Tuple[List[float], float, int, List[str]]:
    ctx = mp.get_context("spawn")
    ready, results = ctx.Queue(), ctx.Queue()
    go_file = path + ".go"
    ps = [ctx.Process(target=_rs_writer, args=(path, w, n, go_file, ready, results)) for w in range(writers)]
    for p in ps:
        p.start()
    for _ in ps:
        ready.get(timeout=300)
    t_go = time.time()
    open(go_file, "w").close()
    lat, ends, errors = [], [], []
    for _ in ps:
        _, l, e, err = results.get(timeout=900)
        lat += l
        ends += e
        errors += err
    for p in ps:
        p.join(timeout=60)
    return lat, (max(ends) - t_go) if ends else float("nan"), len(errors), errors[:3]


# ------------------------------------------------------------------------------ deltalog (JVM)

class Jvm:
    def __init__(self, jar: str, warmup: int) -> None:
        import pyspark
        self.warmup = warmup
        self.cp = f"{jar}{os.pathsep}{os.path.join(os.path.dirname(pyspark.__file__), 'jars', '*')}"

    def start_writer(self, table: str, n: int, writer: str, go_file: str, durable: bool,
                     jit: str = "c2") -> subprocess.Popen:
        # jit "c1": -XX:TieredStopAtLevel=1, the usual setting for short-lived JVM tools. A writer that
        # makes only 25 commits otherwise spends most of its measured CPU in C2 compiler threads.
        flags = ["-XX:TieredStopAtLevel=1"] if jit == "c1" else []
        cmd = ["java", "-Xmx512m", "-XX:+UseSerialGC", *flags, f"-Ddeltalog.commit.durable={str(durable).lower()}",
               f"-Ddeltalog.bench.warmup={self.warmup}",
               "-cp", self.cp, TOOL, "append-bench", table, str(n), writer, go_file]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _collect(p: subprocess.Popen, sink: List[Tuple[float, str]], ready: threading.Event) -> None:
    for line in p.stdout:
        line = line.strip()
        if line == "ready":
            ready.set()
        else:
            sink.append((time.time(), line))


def deltalog_jvm_run(jvm: Jvm, table: str, writers: int, n: int, durable: bool, jit: str = "c2"
                     ) -> Tuple[List[float], float, int, int, List[str], float]:
    """(latencies, wall, failures, retries, errors, CPU seconds of all writer processes)."""
    go_file = table + f".go-{uuid.uuid4().hex[:6]}"
    procs, sinks, threads, readies = [], [], [], []
    try:
        for w in range(writers):
            p = jvm.start_writer(table, n, str(w), go_file, durable, jit)
            sink: List[Tuple[float, str]] = []
            ev = threading.Event()
            t = threading.Thread(target=_collect, args=(p, sink, ev), daemon=True)
            t.start()
            procs.append(p), sinks.append(sink), threads.append(t), readies.append(ev)
        for ev, p in zip(readies, procs):
            if not ev.wait(timeout=300):
                raise RuntimeError(f"writer did not get ready: {p.stderr.read() if p.poll() is not None else ''}")
        t_go = time.time()
        open(go_file, "w").close()
        errors = []
        for p, t in zip(procs, threads):
            p.wait(timeout=900)
            t.join(timeout=30)
            err = p.stderr.read().strip()
            if err:
                errors.append(err[:300])
        lat, ends, failures, retries, cpu_us = [], [], 0, 0, 0
        for sink in sinks:
            for ts, line in sink:
                words = line.split()
                if words[0] == "committed":
                    v, us, rv = int(words[1]), int(words[2]), int(words[3])
                    lat.append(us / 1e6)
                    ends.append(ts)
                    retries += v - rv - 1
                elif words[0] == "failed":
                    failures += 1
                    errors.append(line)
                elif words[0] == "cpu":
                    cpu_us += int(words[1])
        return lat, (max(ends) - t_go) if ends else float("nan"), failures, retries, errors[:3], cpu_us / 1e6
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
        if os.path.exists(go_file):
            os.remove(go_file)


# ------------------------------------------------------------------------------ deltalog (py4j)

def deltalog_python_s5(spark: Any, path: str, n: int, durable: bool) -> Tuple[List[float], float, int]:
    from deltalog.actions import AddFile
    from deltalog.txn import OptimisticTransaction
    jvm = spark.sparkContext._jvm
    jvm.java.lang.System.setProperty("deltalog.commit.durable", str(durable).lower())
    scratch = path + ".warmup"  # untimed warm-up on a scratch table
    create_table(scratch, 10)
    for i in range(100):
        OptimisticTransaction.forPath(spark, scratch).commit(
            [AddFile(path=f"w{i}.parquet", partitionValues={}, size=1, modificationTime=0)], "WRITE")
    shutil.rmtree(scratch, ignore_errors=True)
    lat, failures = [], 0
    t_start = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        try:
            txn = OptimisticTransaction.forPath(spark, path)
            txn.commit([AddFile(path=f"s5-{i}.parquet", partitionValues={}, size=100 + i,
                                modificationTime=int(time.time() * 1000), stats='{"numRecords":1}')],
                       "WRITE", {"mode": "Append"})
            lat.append(time.perf_counter() - t0)
        except Exception:
            failures += 1
    jvm.java.lang.System.clearProperty("deltalog.commit.durable")
    return lat, time.perf_counter() - t_start, failures


def start_spark(jar: str) -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    b = (SparkSession.builder.master("local[2]").appName("deltalog-txn-bench")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
    spark = configure_spark_with_deltalog(b, jar_path=jar).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# ------------------------------------------------------------------------------ report

def markdown(rows: List[Dict[str, Any]], meta: Dict[str, Any]) -> str:
    out = [f"Commit benchmark (perf-anchors §6.2 S5/S6), {meta['date']}, {meta['machine']}; "
           f"load average {meta['load_start']} at start, {meta['load_end']} at end; "
           f"command: `{meta['command']}`", "",
           "| # | engine | mode | commits | failed | retries | commits/s | p50 ms | p99 ms | max ms | CPU ms / commit | final version | checkpoints | correct |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(
            f"| {r['scenario']} | {r['engine']} | {r['mode']} | {r['commits']} | {r['failed']} | "
            f"{'n/a' if r['retries'] is None else r['retries']} | {r['commits_per_s']:.1f} | {r['p50_ms']:.1f} | "
            f"{r['p99_ms']:.1f} | {r['max_ms']:.0f} | "
            f"{'n/a' if r.get('cpu_ms_per_commit') is None else '%.1f' % r['cpu_ms_per_commit']} | "
            f"{r['final_version']} | {r['checkpoints']} | "
            f"{'yes' if r['correct'] else 'NO: ' + '; '.join(r['problems'])} |")
    out += ["", "Ratios (deltalog / delta-rs commits/s): " + ", ".join(meta.get("ratios", [])) or "n/a", "",
            "Notes: latency = start/update of the transaction + commit (+ the post-commit checkpoint when due). "
            "delta-rs' local store does not fsync (its only mode is non-durable). deltalog durable = fsync of the "
            "commit file before the put-if-absent link + fsync of the log directory. S6 commits/s = commits / "
            "(last commit end - release of the start barrier); JVM start and Python imports are excluded. "
            "deltalog retries = versions a commit had to rebase over (committed version - read version - 1); "
            "delta-rs does not report its retries. Single run per row; deltalog JVMs warm up first on a scratch table "
            f"({meta.get('jvm_warmup')} untimed commits). CPU ms / commit = CPU time of all writer processes "
            "(every thread: JIT compilers and GC included) during the measured commits / commits. S6 runs the "
            "deltalog writers twice: with the default tiered JIT (C2 compiles the commit path inside the measured "
            "window) and with -XX:TieredStopAtLevel=1 (C1 only), the usual setting for short-lived JVM tools."]
    for r in rows:
        if r["notes"]:
            out.append(f"* {r['scenario']} {r['engine']} {r['mode']}: {r['notes']}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=1000, help="S5 commits (default 1000)")
    ap.add_argument("--checkpoint-interval", type=int, default=100, help="delta.checkpointInterval of the S5 and S6 tables")
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--per-writer", type=int, default=25)
    ap.add_argument("--scenarios", default="S5,S6")
    ap.add_argument("--engines", default="delta-rs,deltalog")
    ap.add_argument("--python-api", action="store_true", help="also S5 through the Python API (py4j)")
    ap.add_argument("--jar", default=os.environ.get("DELTALOG_BENCH_JAR"))
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--jvm-warmup", type=int, default=300,
                    help="untimed commits each deltalog JVM makes on a scratch table first (JIT warm-up)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--s6-jit", default="c1,c2",
                    help="S6 deltalog writer JVMs: c1 (-XX:TieredStopAtLevel=1), c2 (default tiered JIT), or both")
    args = ap.parse_args()
    scenarios = set(args.scenarios.split(","))
    engines = args.engines.split(",")

    src = args.jar or sorted(glob.glob(os.path.join(REPO, "python", "deltalog", "jars", "deltalog-spark_*.jar")))[-1]
    work = args.workdir or tempfile.mkdtemp(prefix="deltalog-txn-bench-")
    # a private copy of the jar: a concurrent rebuild replacing it breaks lazy class loading
    jar = os.path.join(work, os.path.basename(src))
    shutil.copyfile(src, jar)
    jvm = Jvm(jar, args.jvm_warmup)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} cores, {platform.platform()}",
            "load_start": "%.2f" % os.getloadavg()[0],
            "command": "python benchmarks/txn_bench.py " + " ".join(sys.argv[1:]),
            "jvm_warmup": args.jvm_warmup}
    rows: List[Dict[str, Any]] = []

    def table(name: str, ci: Optional[int]) -> str:
        p = os.path.join(work, f"{name}-{uuid.uuid4().hex[:6]}")
        create_table(p, ci)
        return p

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    n5, w6, n6 = args.commits, args.writers, args.per_writer
    if "S5" in scenarios:
        if "delta-rs" in engines:
            log(f"S5 delta-rs: {n5} commits ...")
            p = table("s5-rs", args.checkpoint_interval)
            lat, wall, fail = deltars_s5(p, n5)
            rows.append(summarize("S5", "delta-rs", "non-durable (no fsync)", lat, wall, fail, None, verify(p, n5)))
        if "deltalog" in engines:
            for durable in (False, True):
                mode = "durable" if durable else "non-durable"
                log(f"S5 deltalog JVM {mode}: {n5} commits ...")
                p = table("s5-dl", args.checkpoint_interval)
                lat, wall, fail, retries, errs, cpu = deltalog_jvm_run(jvm, p, 1, n5, durable)
                rows.append(summarize("S5", "deltalog (JVM)", mode, lat, wall, fail, retries, verify(p, n5),
                                      "; ".join(errs), cpu))
            if args.python_api:
                spark = start_spark(jar)
                try:
                    for durable in (False, True):
                        mode = "durable" if durable else "non-durable"
                        log(f"S5 deltalog Python API {mode}: {n5} commits ...")
                        p = table("s5-py", args.checkpoint_interval)
                        lat, wall, fail = deltalog_python_s5(spark, p, n5, durable)
                        rows.append(summarize("S5", "deltalog (Python API)", mode, lat, wall, fail, None,
                                              verify(p, n5)))
                finally:
                    spark.stop()
    if "S6" in scenarios:
        total = w6 * n6
        if "delta-rs" in engines:
            log(f"S6 delta-rs: {w6} x {n6} ...")
            p = table("s6-rs", args.checkpoint_interval)
            lat, wall, fail, errs = deltars_s6(p, w6, n6)
            rows.append(summarize("S6", "delta-rs", "non-durable (no fsync)", lat, wall, fail, None,
                                  verify(p, total - fail), ("errors: " + " | ".join(errs)) if errs else ""))
        if "deltalog" in engines:
            for jit in args.s6_jit.split(","):
                for durable in (False, True):
                    mode = ("durable" if durable else "non-durable") + (", C1 JIT" if jit == "c1" else ", C2 JIT")
                    log(f"S6 deltalog JVM {mode}: {w6} x {n6} ...")
                    p = table("s6-dl", args.checkpoint_interval)
                    lat, wall, fail, retries, errs, cpu = deltalog_jvm_run(jvm, p, w6, n6, durable, jit)
                    rows.append(summarize("S6", "deltalog (JVM)", mode, lat, wall, fail, retries, verify(p, total),
                                          "; ".join(errs), cpu))
    meta["load_end"] = "%.2f" % os.getloadavg()[0]
    ratios = []
    for sc in ("S5", "S6"):
        base = next((r for r in rows if r["scenario"] == sc and r["engine"] == "delta-rs"), None)
        if base:
            for r in rows:
                if r["scenario"] == sc and r["engine"] != "delta-rs":
                    ratios.append(f"{sc} {r['engine']} {r['mode']} {r['commits_per_s'] / base['commits_per_s']:.1f}x")
    meta["ratios"] = ratios
    print(markdown(rows, meta))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["correct"] and (r["failed"] == 0 or r["engine"] == "delta-rs") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
