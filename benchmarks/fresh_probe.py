"""Where a fresh driver's first load goes: a diagnostic, not part of `make bench`.

Runs fresh processes of delta-rs and deltalog alternately (like `run.alternate_fresh`) on one
checkpointed table and prints, per deltalog driver, the load's split (open / JVM state / to Arrow),
the CPU each JVM thread group used inside the load (from ``/proc/<pid>/task/*/stat``: the JIT's
compiler threads, the load's own threads, and the GC and VM threads, whose CPU shows a collection
landing in the load); then the medians and their ratio. Each driver is timed exactly as ``engines.fresh_main`` times
it: the only work added before the timed load reads ``/proc`` (no py4j call: extra py4j calls
before the load give the JIT time to finish Spark's startup compilations and made the load ~20 %
faster than the benchmark measures).

    .venv/bin/python benchmarks/fresh_probe.py TABLE [--drivers 12] [--variant JVM_OPTIONS]...

``--variant=-XX:TieredStopAtLevel=1`` (with `=`: the value starts with a dash) adds a deltalog driver with those driver JVM options
(``DELTALOG_BENCH_JOPTS``; diagnostics only) to every round; ``--jar PATH`` benchmarks another
engine jar. Drivers run until one maps the class-data archive of each jar and set of options
before any is counted (the first of a new one notes the class path, the next records it).
``--profile FILE`` appends async-profiler's collapsed stacks of each deltalog load to FILE: give
the jar of ``tools.profiler:async-profiler`` (Maven Central; it holds ``linux-x64/libasyncProfiler.so``)
in ``DELTALOG_ASYNC_PROFILER_JAR``; it is loaded through its own class loader (adding it to the
boot class path would disable the class-data archive), which costs a few py4j calls before the load.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))


def thread_cpu_ms(pid: int) -> Dict[str, int]:
    """CPU ms (user + system) of each thread of `pid`, by thread id, with its name."""
    out: Dict[str, Any] = {}
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        out[t] = (name, (int(fields[11]) + int(fields[12])) * tick_ms)
    return out


def group(name: str) -> str:
    if "CompilerThre" in name:
        return "JIT"
    if name.startswith(("G1 ", "GC Thread", "VM Thread")):
        return "GC/VM"
    if name.startswith("deltalog-"):
        return "deltalog threads"
    if name.startswith("Thread-"):
        return "py4j (load)"
    return "other"


def _profiler(e: Any, jar: str) -> Any:
    jvm, gw = e.spark.sparkContext._jvm, e.spark.sparkContext._gateway
    lib = os.path.join(tempfile.gettempdir(), f"deltalog-probe-{os.path.getsize(jar)}-libasyncProfiler.so")
    if not os.path.exists(lib):
        with zipfile.ZipFile(jar) as z, open(lib, "wb") as f:
            f.write(z.read("linux-x64/libasyncProfiler.so"))
    urls = gw.new_array(jvm.java.net.URL, 1)
    urls[0] = jvm.java.net.URL("file:" + os.path.abspath(jar))
    cls = jvm.java.net.URLClassLoader(urls, None).loadClass("one.profiler.AsyncProfiler")
    params = gw.new_array(jvm.java.lang.Class, 1)
    params[0] = jvm.java.lang.Class.forName("java.lang.String")
    args = gw.new_array(jvm.java.lang.Object, 1)
    args[0] = lib
    return cls.getMethod("getInstance", params).invoke(None, args)


def child(engine: str, table: str, profile: Optional[str]) -> Dict[str, Any]:
    """One fresh process: engine start, then the timed first load (as engines.fresh_main)."""
    sys.path.insert(0, HERE)
    import engines
    e = engines.make_engine(engine)
    e.start()
    case = {"op": "load", "table": table}
    e.before_run(case)
    pid = getattr(e, "jvm_pid", None)
    prof = _profiler(e, os.environ["DELTALOG_ASYNC_PROFILER_JAR"]) if profile and pid else None
    if prof is not None:
        prof.execute("start,event=cpu,interval=200us")
    before = thread_cpu_ms(pid) if pid else {}
    t0 = time.perf_counter()
    e.run(case)
    load = time.perf_counter() - t0
    after = thread_cpu_ms(pid) if pid else {}
    out: Dict[str, Any] = {"engine": engine, "load_s": load, "split": getattr(e, "_split", None)}
    if pid:
        if prof is not None:
            prof.execute("stop")
            with open(profile, "a") as f:
                f.write(prof.execute("collapsed"))
        cpu: Dict[str, float] = collections.Counter()
        for tid, (name, ms) in after.items():
            cpu[group(name)] += ms - before.get(tid, (name, 0))[1]
        out["cpu_ms"] = {k: round(v) for k, v in cpu.items() if v > 0}
        opts = e.spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
        out["class_data"] = ("archive" if "SharedArchiveFile" in opts else
                             "recording" if "ArchiveClassesAtExit" in opts else "none")
    if hasattr(e, "stop"):
        e.stop()
    return out


def run_child(engine: str, table: str, env: Dict[str, str], profile: Optional[str]) -> Dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, table]
    if profile:
        cmd += ["--profile", profile]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env), timeout=600)
    for line in p.stdout.splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    return {"engine": engine, "error": p.stderr.strip()[-400:]}


def describe(label: str, r: Dict[str, Any]) -> str:
    if "error" in r:
        return f"{label:28s} ERROR {r['error']}"
    s = f"{label:28s} {r['load_s']:.3f} s"
    if r.get("split"):
        s += "  " + " ".join(f"{k[:-2]}={v:.3f}" for k, v in r["split"].items())
    if r.get("cpu_ms"):
        s += "  cpu ms " + json.dumps(r["cpu_ms"])
    if r.get("class_data") and r["class_data"] != "archive":
        s += f"  ({r['class_data']})"
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("--drivers", type=int, default=12)
    ap.add_argument("--variant", action="append", default=[], metavar="JVM_OPTIONS")
    ap.add_argument("--jar")
    ap.add_argument("--profile")
    ap.add_argument("--child", nargs=2, metavar=("ENGINE", "TABLE"))
    a = ap.parse_args()
    if a.child:
        print("PROBE " + json.dumps(child(a.child[0], a.child[1], a.profile), default=str))
        return
    if a.table is None:
        ap.error("give the table")
    # one class-data archive per deltalog row (jar / JVM options): with fewer kept they take turns recording
    base = {"DELTALOG_CLASS_SHARING": "1", "DELTALOG_CLASS_DATA_MAX_ARCHIVES": str(max(2, 1 + len(a.variant)))}
    if a.jar:
        base["DELTALOG_BENCH_JAR"] = a.jar
    rows = [("delta-rs", {}), ("deltalog", base)] + [(f"deltalog {v}", dict(base, DELTALOG_BENCH_JOPTS=v))
                                                      for v in a.variant]
    for label, env in rows[1:]:
        # Each jar and set of JVM options has its own class-data archive: the first driver notes
        # the class path, the second records the archive as it exits; neither is counted.
        for _ in range(3):
            r = run_child("deltalog", a.table, env, None)
            print(describe(label + " (untimed)", r), flush=True)
            if r.get("class_data") == "archive" or "error" in r:
                break
            time.sleep(5)
    loads: Dict[str, List[float]] = collections.defaultdict(list)
    for i in range(a.drivers):
        for label, env in rows:
            r = run_child(label.split()[0], a.table, env, a.profile if label != "delta-rs" else None)
            print(describe(label, r), flush=True)
            if "error" not in r:
                loads[label].append(r["load_s"])
    rs = statistics.median(loads["delta-rs"]) if loads.get("delta-rs") else float("nan")
    for label, v in loads.items():
        m = statistics.median(v)
        print(f"{label:28s} median {m:.3f} s of {len(v)} ({min(v):.3f}-{max(v):.3f})"
              + ("" if label == "delta-rs" else f"  = {m / rs:.2f}x delta-rs"))


if __name__ == "__main__":
    main()
