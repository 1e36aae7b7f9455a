"""Side-by-side log-replay benchmark: deltalog vs delta-rs and delta-spark (plus a pyarrow floor).

Scenarios (perf-anchors §6.2): S1 snapshot load from a checkpoint (+0 / +10 JSON commits),
S2 JSON-only replay, S3 protocol+metadata-only open, S4 checkpoint write, S7 time travel.

    .venv/bin/python benchmarks/run.py --quick            # no 1M tables, no S2 (c)/(d)
    .venv/bin/python benchmarks/run.py                    # + 1M (S1, S3, S4)
    .venv/bin/python benchmarks/run.py --full             # + S2 (c) 10k/100k and (d) 100/1M
    .venv/bin/python benchmarks/run.py --scenarios S1,S3 --engines delta-rs,floor

Engines run one after another, each in its own worker process (``--worker``), so their peak RSS
is measured separately. Per case: warm-up runs until 2 s have passed (at most 100, at least 1),
then the median of at least 5 timed runs, more until they add up to 1 s (at most 25; 2 if one
run takes more than 5 s). A JVM compiles the replay code
over its first tens of loads of a table (S1 100k: ~45 ms over runs 2-10, ~30 ms from about the
30th), so a single warm-up run would time runs 2-4 of the driver's life; the report lists the
first run and the warm-up count of every case, and the fresh-process measurement the cold case. Correctness first: every engine's answer is compared with the generator's
ground truth (version, active-file count, sha256 of the sorted active paths; for S3 version and
schema); any mismatch marks the row FAILED. No timing assertions anywhere.

Writes the Markdown report (``--out``), the raw results beside it (``results.json``) and PNG charts
drawn from them (``charts/`` beside it, by ``charts.py``; ``python benchmarks/charts.py
benchmarks/results.json`` redraws them without a run).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import generate as gen  # noqa: E402
from engines import (Answer, DeltaRsEngine, Unavailable, checkpoint_files, make_engine,  # noqa: E402
                     proc_status, reset_peak, strip_to_checkpoint, _short)

SCENARIOS = ("S1", "S2", "S3", "S4", "S7")
ENGINE_ORDER = ("delta-rs", "deltalog", "delta-spark", "floor")
SPARK_ENGINES = ("deltalog", "delta-spark")  # a Python worker plus a driver JVM
LONG_RUN_S = 5.0
WARM_MIN_S = 2.0
WARM_MAX_RUNS = 100
TIMED_RUNS = 5  # at least this many timed runs ...
TIMED_MIN_S = 1.0  # ... and more until they add up to this (a run of a few ms varies by +-50 %)
TIMED_MAX_RUNS = 25

# delta-rs 1.6.6 on this machine kind, perf-anchors §1.2 / §2 / §6.2 (file_uris(), other runs)
ANCHORS = {
    ("S1", "10k", 0): 0.031, ("S1", "100k", 0): 0.338, ("S1", "1M", 0): 2.92,
    ("S2", "a"): 0.464, ("S2", "b"): 0.969, ("S2", "c"): 5.07, ("S2", "d"): 8.10,
    ("S3", "1M", "ckpt"): 2.0, ("S3", "1M", "json"): 6.7,
    ("S4", "1M"): 6.30, ("S4", "100k"): 1.45,
    ("S7", "b"): 0.098, ("S7", "c"): 0.80, ("S7", "d"): 0.68,
}


# ==================================================================================== plan

def _size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def build_plan(a: argparse.Namespace) -> List[Dict[str, Any]]:
    """Cases for the selected scenarios; generates (or reuses) every table they need."""
    with_1m = a.full or not a.quick
    with_c = a.full or a.with_c
    with_d = a.full or a.with_d
    s1, s2 = gen.standard_specs(with_1m, with_c, with_d, a.partitioned)
    if a.smoke:  # tiny tables: exercise the harness, not the engines
        s1 = {"10k": gen.Spec(100, 10_000, a.partitioned)}
        s2 = {"a": gen.Spec(100, 10_000, a.partitioned), "b": gen.Spec(300, 20_000, a.partitioned)}
    want = set(a.scenarios)
    cases: List[Dict[str, Any]] = []
    work_root = os.path.join(gen.DATA_DIR, "work")

    def meta(d: str) -> Dict[str, Any]:
        return gen.read_meta(d) or {}

    def expect_latest(d: str) -> Dict[str, Any]:
        return dict(meta(d)["latest"])

    if "S1" in want:
        for size, spec in s1.items():
            for after in (0, gen.TAIL):
                d = gen.ensure_checkpoint_table(spec, after)
                m = meta(d)
                cases.append({
                    "scenario": "S1", "id": f"S1 {size} +{after}", "op": "load", "table": d,
                    "label": f"{size} files, checkpoint v{spec.last} + {after} JSON commits",
                    "expect": expect_latest(d), "json_commits": after, "log_bytes": m["log_bytes"],
                    "checkpoint_bytes": m["checkpoint"]["bytes"],
                    "anchor": ANCHORS.get(("S1", size, after))})
    if "S2" in want:
        for key, spec in s2.items():
            d = gen.ensure_json_table(spec)
            m = meta(d)
            cases.append({
                "scenario": "S2", "id": f"S2 ({key})", "op": "load", "table": d,
                "label": f"({key}) {spec.commits} commits / {_size_label(spec.files)} files, JSON only",
                "expect": expect_latest(d), "json_commits": spec.commits, "log_bytes": m["log_bytes"],
                "anchor": ANCHORS.get(("S2", key))})
    if "S3" in want:
        big = list(s1.items())[-1]
        size, spec = big
        schema = ["id", "value", "score"] + (["part"] if a.partitioned else [])
        for after in (0, gen.TAIL):
            d = gen.ensure_checkpoint_table(spec, after)
            cases.append({
                "scenario": "S3", "id": f"S3 {size} ckpt +{after}", "op": "pm", "table": d,
                "label": f"{size} files, checkpoint v{spec.last} + {after} JSON commits",
                "expect": {"version": spec.last + after, "schema": schema},
                "anchor": ANCHORS.get(("S3", size, "ckpt")) if after == 0 else None})
        jkey, jspec = list(s2.items())[-1]
        d = gen.ensure_json_table(jspec)
        jsize = _size_label(jspec.files)
        cases.append({
            "scenario": "S3", "id": f"S3 {jsize} json ({jkey})", "op": "pm", "table": d,
            "label": f"({jkey}) {jspec.commits} commits / {jsize} files, no checkpoint",
            "expect": {"version": jspec.last, "schema": schema},
            "anchor": ANCHORS.get(("S3", jsize, "json"))})
    if "S4" in want:  # every S1 size, small to large (the size chart; RSS of earlier cases counts)
        for size, spec in s1.items():
            d = gen.ensure_checkpoint_table(spec, gen.TAIL)
            m = meta(d)
            cases.append({
                "scenario": "S4", "id": f"S4 {size}", "op": "checkpoint", "table": d,
                "work": os.path.join(work_root, f"s4-{spec.key}"),
                "label": f"{size}+800 adds: checkpoint v{spec.last} + {gen.TAIL} commits -> checkpoint "
                         f"v{spec.last + gen.TAIL} (single file)",
                "expect": expect_latest(d), "source_checkpoint_bytes": m["checkpoint"]["bytes"],
                "anchor": ANCHORS.get(("S4", size))})
    if "S7" in want:
        for key, spec in s2.items():
            if key == "a":
                continue
            d = gen.ensure_json_table(spec)
            v = spec.commits // 10
            truth = gen.truth_at(spec, v, d)
            base = {"scenario": "S7", "table": d, "expect": dict(truth),
                    "json_commits": v + 1, "log_bytes": gen.log_bytes(d, 0, v)}
            cases.append(dict(base, id=f"S7 ({key}) v{v}", op="load_version", version=v,
                              label=f"({key}) {spec.commits} commits: version {v} "
                                    f"({_size_label(truth['count'])} files)",
                              anchor=ANCHORS.get(("S7", key))))
            cases.append(dict(base, id=f"S7 ({key}) ts", op="load_timestamp",
                              timestamp_ms=gen.commit_ts(v) + gen.STEP_MS // 2,
                              label=f"({key}) by timestamp (v{v} + 30 s -> v{v})", anchor=None))
    return cases


# ================================================================================== worker

def check(case: Dict[str, Any], ans: Answer, full: bool) -> List[str]:
    """Differences between an answer and the expected truth (empty = correct)."""
    exp, bad = case["expect"], []
    if ans.version != exp["version"]:
        bad.append(f"version {ans.version} != {exp['version']}")
    if "schema" in exp:
        if ans.schema != exp["schema"]:
            bad.append(f"schema {ans.schema} != {exp['schema']}")
    elif ans.paths is not None:
        if len(ans.paths) != exp["count"]:
            bad.append(f"count {len(ans.paths)} != {exp['count']}")
        elif full:
            h = gen.paths_hash(ans.paths)
            if h != exp["paths_sha256"]:
                bad.append(f"paths sha256 {h[:12]} != {exp['paths_sha256'][:12]}")
    return bad


def _one_run(engine: Any, case: Dict[str, Any]):
    engine.before_run(case)
    t0 = time.perf_counter()
    h = engine.run(case)
    dt = time.perf_counter() - t0
    ans = engine.summarize(case, h)
    engine.after_run(case, h)
    del h
    return dt, ans


def _checkpoint_output(case: Dict[str, Any]) -> Dict[str, Any]:
    work, v = case["work"], case["expect"]["version"]
    names = checkpoint_files(work, v)
    nbytes = sum(os.path.getsize(os.path.join(work, "_delta_log", n)) for n in names)
    side = os.path.join(work, "_delta_log", "_sidecars")
    if os.path.isdir(side):
        nbytes += sum(os.path.getsize(os.path.join(side, n)) for n in os.listdir(side))
    last = None
    try:
        with open(os.path.join(work, "_delta_log", "_last_checkpoint")) as f:
            last = json.load(f).get("version")
    except (OSError, ValueError):
        pass
    return {"files": names, "output_bytes": nbytes, "last_checkpoint_version": last}


def _relink_commit(case: Dict[str, Any]) -> None:
    """Put back the commit file at the checkpoint's version (a hard link to the source table's):
    delta-spark 4.4 refuses a log whose newest checkpoint has no commit file at its version
    ("Could not find any delta files for version N"). The state still comes from the checkpoint
    alone: no commit after it is left."""
    name = f"{case['expect']['version']:020d}.json"
    dst = os.path.join(case["work"], "_delta_log", name)
    if not os.path.exists(dst):
        os.link(os.path.join(case["table"], "_delta_log", name), dst)


def _verify_checkpoint(engine: Any, case: Dict[str, Any]) -> Dict[str, Any]:
    """Re-read the checkpoint just written, with only it left in the log, by delta-rs and the
    engine itself (delta-spark: plus the commit file at the checkpoint's version, see _relink_commit).
    Any difference makes the case FAILED."""
    out = _checkpoint_output(case)
    problems = []
    if not out["files"]:
        problems.append("no checkpoint file at the latest version")
    if out["last_checkpoint_version"] != case["expect"]["version"]:
        problems.append(f"_last_checkpoint version {out['last_checkpoint_version']}")
    if not problems:
        strip_to_checkpoint(case["work"], case["expect"]["version"])
        readers = [("delta-rs", DeltaRsEngine())]
        readers[0][1].start()
        if engine.name != "delta-rs" and callable(getattr(engine, "reread", None)):
            readers.append((engine.name, engine))  # deltalog, delta-spark: the engine itself
        for name, r in readers:
            try:
                if getattr(r, "reread_needs_commit", False):
                    _relink_commit(case)
                bad = check(case, r.reread(case["work"]), True)
                out[f"reread_{name}"] = "ok" if not bad else "; ".join(bad)
                problems += [f"re-read by {name}: {b}" for b in bad]
            except Exception as e:
                out[f"reread_{name}"] = _short(e)
                problems.append(f"re-read by {name} failed: {_short(e)}")
    out["problems"] = problems
    return out


def timed_more(times: List[float], long_runs: bool) -> bool:
    """True while a case needs another timed run: 2 runs of a case over LONG_RUN_S; otherwise at
    least TIMED_RUNS, then more until TIMED_MIN_S of timed runs or TIMED_MAX_RUNS runs (cases of a
    few ms get a median of up to 25, so one slow run (a GC, a parked thread) does not move it)."""
    if long_runs:
        return len(times) < 2
    if len(times) < TIMED_RUNS:
        return True
    return len(times) < TIMED_MAX_RUNS and sum(times) < TIMED_MIN_S


def run_case(engine: Any, case: Dict[str, Any]) -> Dict[str, Any]:
    pids = engine.pids()
    start_rss = {}
    for label, pid in pids:
        reset_peak(pid)
        start_rss[label] = proc_status(pid)[0]
    res: Dict[str, Any] = {"id": case["id"], "engine": engine.name}
    if engine.name == "floor" and case["op"] == "load_timestamp":
        return dict(res, status="skipped", error="n/a")
    try:
        warm, ans = _one_run(engine, case)
        problems = check(case, ans, True)
        first, warm_runs, spent = warm, 1, warm
        while spent < WARM_MIN_S and warm_runs < WARM_MAX_RUNS:
            w, _ = _one_run(engine, case)
            spent += w
            warm_runs += 1
        long_runs = warm > LONG_RUN_S
        times, splits = [], []
        while timed_more(times, long_runs):
            dt, ans = _one_run(engine, case)
            times.append(dt)
            if ans.extra.get("split"):
                splits.append(ans.extra["split"])
            problems += [f"run {len(times)}: {p}" for p in check(case, ans, False)]
    except Unavailable as e:
        return dict(res, status="skipped", error=str(e))
    except Exception as e:
        return dict(res, status="error", error=_short(e), traceback=traceback.format_exc()[-3000:])
    res.update(status="ok", warmup_s=first, warmup_runs=warm_runs, times_s=times, median_s=statistics.median(times),
               version=ans.version, count=None if ans.paths is None else len(ans.paths),
               extra={k: v for k, v in ans.extra.items() if k != "split"})
    if splits:
        res["split"] = {k: statistics.median(x[k] for x in splits) for k in splits[0]}
    if case["op"] == "checkpoint":
        if engine.name == "floor":
            res["checkpoint"] = {"output_bytes": ans.extra.get("output_bytes")}
        else:
            ck = _verify_checkpoint(engine, case)
            res["checkpoint"] = ck
            problems += ck.pop("problems")
    res["problems"] = problems
    res["rss"] = {label: {"start": start_rss[label], "peak": proc_status(pid)[1]} for label, pid in pids}
    return res


def worker(a: argparse.Namespace) -> int:
    with open(a.plan) as f:
        cases = json.load(f)
    out = open(a.result, "a")

    def emit(obj: Dict[str, Any]) -> None:
        out.write(json.dumps(obj, default=str) + "\n")
        out.flush()

    engine = make_engine(a.worker, a.deltars_op)
    try:
        info = engine.start()
    except Unavailable as e:
        emit({"engine": a.worker, "start": {"error": str(e)}})
        for c in cases:
            emit({"id": c["id"], "engine": a.worker, "status": "skipped", "error": str(e)})
        return 0
    except Exception as e:
        emit({"engine": a.worker, "start": {"error": _short(e)}})
        return 1
    emit({"engine": a.worker, "start": info})
    for c in cases:
        t0 = time.perf_counter()
        r = run_case(engine, c)
        r["case_wall_s"] = time.perf_counter() - t0
        emit(r)
        status = r["status"] if not r.get("problems") else "WRONG"
        med = f"{r['median_s']:.3f} s" if "median_s" in r else r.get("error", "")
        print(f"  [{a.worker}] {c['id']}: {status} {med}", file=sys.stderr, flush=True)
    if hasattr(engine, "stop"):
        engine.stop()
    return 0


# ============================================================================ orchestrator

def run_worker(engine: str, plan_path: str, a: argparse.Namespace) -> List[Dict[str, Any]]:
    fd, res_path = tempfile.mkstemp(prefix=f"bench-{engine}-", suffix=".jsonl")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, "--plan", plan_path,
           "--result", res_path, "--deltars-op", a.deltars_op]
    print(f"[run] engine {engine} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    try:
        # delta-spark's loads are Spark jobs (seconds each at 100k files): a longer budget
        timeout = a.worker_timeout * (3 if engine == "delta-spark" else 1)
        proc = subprocess.run(cmd, timeout=timeout, cwd=REPO,
                              stdout=subprocess.DEVNULL if not a.verbose else None)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    rows = []
    with open(res_path) as f:
        for line in f:
            rows.append(json.loads(line))
    os.unlink(res_path)
    rows.append({"engine": engine, "worker": {"rc": rc, "wall_s": time.perf_counter() - t0}})
    print(f"[run] engine {engine} done in {time.perf_counter() - t0:.0f} s (rc {rc})", file=sys.stderr)
    return rows


def run_fresh(engine: str, table: str, timeout: float, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    cmd = [sys.executable, os.path.join(HERE, "engines.py"), "--fresh", engine, table]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return {"engine": engine, "error": "timeout"}
    wall = time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["process_wall_s"] = wall
            return r
    return {"engine": engine, "error": f"no result (rc {p.returncode}): {p.stderr.strip()[-300:]}"}


# Fresh processes per row; the row shows the median load. One driver's first load varies by
# ±0.05 s and is bimodal for deltalog (whether a young GC of Spark's startup objects lands in it),
# so 5 drivers gave medians 0.03 s apart from one run to the next; 11 narrow that.
FRESH_DRIVERS = 11


def median_fresh(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The run with the median first load, with every run's start and load listed."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    mid = sorted(ok, key=lambda r: r["load_s"])[(len(ok) - 1) // 2]
    return dict(mid, loads_s=[r["load_s"] for r in ok], starts_s=[r["start_s"] for r in ok],
                answers=[(r["version"], r["count"], r["paths_sha256"]) for r in ok])


def repeat_fresh(engine: str, table: str, timeout: float, env: Optional[Dict[str, str]] = None,
                 first: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    runs = [first] if first is not None else []
    while len(runs) < FRESH_DRIVERS:
        runs.append(run_fresh(engine, table, timeout, env))
        if "error" in runs[-1]:
            break
    return median_fresh(runs)


CLASS_SHARING_ON = {"DELTALOG_CLASS_SHARING": "1"}


def fresh_deltalog(table: str, expect: Dict[str, Any], timeout: float
                   ) -> Tuple[List[Dict[str, Any]], Optional[Dict[str, Any]]]:
    """deltalog's fresh drivers without class-data sharing, then with it until one maps an archive
    (the first driver of a new Spark/Java class path only notes it, the next records the archive as
    it exits; both are reported as they happened). Returns those rows and the first driver that
    mapped the archive (None if none did): [[alternate_fresh]] runs the rest of them."""
    print("[run] fresh process: deltalog (class-data sharing off)", file=sys.stderr, flush=True)
    off = {"DELTALOG_CLASS_SHARING": "0"}
    out = [dict(repeat_fresh("deltalog", table, timeout, off), expect=expect,
                label="deltalog, class-data sharing off")]
    for _ in range(4):
        print("[run] fresh process: deltalog (class-data sharing on)", file=sys.stderr, flush=True)
        r = run_fresh("deltalog", table, timeout, CLASS_SHARING_ON)
        mode = r.get("class_data", "none")
        if mode == "archive" and "error" not in r:
            return out, r
        out.append(dict(r, expect=expect, label={"recording": "deltalog, recording the archive (once)",
                                                 }.get(mode, "deltalog, first driver of this class path")))
        if "error" in r:
            break
        if mode == "recording":
            time.sleep(15)  # the driver JVM writes the archive as it exits, after the Python process
    return out, None


def alternate_fresh(table: str, timeout: float, first_archive: Dict[str, Any]
                    ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """delta-rs drivers and deltalog drivers that map the class-data archive, started alternately
    (FRESH_DRIVERS of each, `first_archive` counting as deltalog's first), so that both engines
    meet the same machine: one engine's drivers all run at once took up a drift of the machine's
    load. Returns each engine's median row."""
    print("[run] fresh process: delta-rs and deltalog (class-data archive), alternately", file=sys.stderr, flush=True)
    rs: List[Dict[str, Any]] = []
    dl: List[Dict[str, Any]] = [first_archive]
    while len(rs) < FRESH_DRIVERS or len(dl) < FRESH_DRIVERS:
        if len(rs) < FRESH_DRIVERS:
            rs.append(run_fresh("delta-rs", table, timeout))
        if len(dl) < FRESH_DRIVERS:
            dl.append(run_fresh("deltalog", table, timeout, CLASS_SHARING_ON))
        if "error" in rs[-1] or "error" in dl[-1]:
            break
    return median_fresh(rs), median_fresh(dl)


def fresh_rows(a: argparse.Namespace, size: str) -> List[Dict[str, Any]]:
    """The fresh-process rows of S1 `size` (checkpoint + 0): delta-rs, and deltalog without the
    class-data archive, recording it, and mapping it (started alternately with delta-rs)."""
    spec = gen.S1_SPECS[size]
    spec = gen.Spec(spec.commits, spec.files, a.partitioned)
    d = gen.ensure_checkpoint_table(spec, 0)
    expect = (gen.read_meta(d) or {}).get("latest", {})
    print(f"[run] fresh process, S1 {size}", file=sys.stderr, flush=True)
    out: List[Dict[str, Any]] = []
    dl_rows: List[Dict[str, Any]] = []
    first_archive = None
    if "deltalog" in a.engines:
        dl_rows, first_archive = fresh_deltalog(d, expect, a.worker_timeout)
    archive_label = "deltalog, class-data archive"
    if "delta-rs" in a.engines and first_archive is not None:
        rs, dl = alternate_fresh(d, a.worker_timeout, first_archive)
        out += [dict(rs, expect=expect)] + dl_rows + [dict(dl, expect=expect, label=archive_label)]
    else:
        if "delta-rs" in a.engines:
            print("[run] fresh process: delta-rs", file=sys.stderr, flush=True)
            out.append(dict(repeat_fresh("delta-rs", d, a.worker_timeout), expect=expect))
        out += dl_rows
        if first_archive is not None:
            out.append(dict(repeat_fresh("deltalog", d, a.worker_timeout, CLASS_SHARING_ON, first=first_archive),
                            expect=expect, label=archive_label))
    return out


def machine_info() -> Dict[str, Any]:
    info: Dict[str, Any] = {"nproc": os.cpu_count(), "kernel": platform.release(),
                            "python": platform.python_version(),
                            "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    try:
        info["usable_cpus"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["ram_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    for mod in ("deltalake", "pyarrow", "pyspark"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as e:
            info[mod] = f"n/a ({type(e).__name__})"
    try:
        j = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        info["java"] = (j.stderr or j.stdout).splitlines()[0]
    except Exception:
        info["java"] = "n/a"
    try:  # read-only git queries
        info["git_head"] = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                          capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        info["git_dirty"] = bool(dirty)
    except Exception:
        pass
    return info


# ================================================================================= report

def _fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _fmt_ratio(num: Optional[float], den: Optional[float]) -> str:
    if not num or not den:
        return "—"
    r = num / den
    return f"{r:.2f}×" if r >= 0.1 else f"{r:.2g}×"  # two significant digits below 0.1 (0.0016×)


def _mb(b: Optional[float]) -> str:
    return "—" if b is None else f"{b / 1e6:,.0f}"


def _cell(r: Optional[Dict[str, Any]]) -> str:
    if r is None:
        return "not run"
    if r.get("status") == "ok":
        s = _fmt_s(r["median_s"])
        return s if not r.get("problems") else f"**{s} WRONG**"
    err = (r.get("error") or r.get("status") or "?").replace("|", "/")
    return f"{r['status']}: {err}" if r.get("status") == "error" else err


def _rss(r: Optional[Dict[str, Any]]) -> str:
    if not r or r.get("status") != "ok" or not r.get("rss"):
        return "—"
    parts = [f"{lab} {_mb(v['peak'])}" for lab, v in r["rss"].items()]
    return " / ".join(parts) if len(parts) > 1 else _mb(list(r["rss"].values())[0]["peak"])


def verdict(case: Dict[str, Any], rows: Dict[str, Dict[str, Any]], engines: List[str]) -> str:
    ok, failed, missing = [], [], []
    for e in engines:
        r = rows.get(e)
        if r is None or r.get("status") != "ok":
            if not (e == "floor" and r and r.get("error") == "n/a"):
                missing.append(e)
            continue
        (failed if r.get("problems") else ok).append(e)
    if failed:
        why = "; ".join(f"{e}: {', '.join(rows[e]['problems'][:2])}" for e in failed)
        return f"**FAILED** ({why})"
    if not ok:
        return "n/a (no engine ran)"
    s = f"OK ({', '.join(ok)} = truth)"
    if missing:
        s += f"; not run: {', '.join(missing)}"
    return s


def write_report(a: argparse.Namespace, cases: List[Dict[str, Any]], rows: List[Dict[str, Any]],
                 fresh: List[Tuple[str, List[Dict[str, Any]]]], info: Dict[str, Any], wall: float, cmd: str) -> str:
    by = {(r["id"], r["engine"]): r for r in rows if "id" in r}
    starts = {r["engine"]: r["start"] for r in rows if "start" in r}
    workers = {r["engine"]: r["worker"] for r in rows if "worker" in r}
    engines = [e for e in ENGINE_ORDER if e in a.engines]
    L: List[str] = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L += ["# Log-replay benchmark results", "",
          f"Generated by `benchmarks/run.py` on {now}. Scenarios: perf-anchors §6.2 "
          f"(see `benchmarks/README.md`).", "",
          "Reproduce (from the repository root):", "", "```", cmd, "```", ""]
    L += ["## Machine and software", "",
          f"* {info.get('nproc')} CPUs ({info.get('cpu', '?')}), {info.get('ram_gib', '?')} GiB RAM, "
          f"Linux {info.get('kernel')}; page cache warm (tables read in the warm-up run)",
          f"* load average (1/5/15 min) at start {info.get('loadavg_start')}, at end "
          f"{info.get('loadavg_end')}: above ~0.5 other processes shared the 2 CPUs and the "
          f"timings are noisy",
          f"* Python {info.get('python')}, deltalake {info.get('deltalake')}, pyarrow "
          f"{info.get('pyarrow')}, pyspark {info.get('pyspark')}, {info.get('java')}",
          f"* deltalog: git {info.get('git_head', '?')}{' (uncommitted changes)' if info.get('git_dirty') else ''}"]
    dl = starts.get("deltalog", {})
    if "error" in dl:
        L.append(f"* deltalog engine: {dl['error']}")
    elif dl:
        L.append(f"* deltalog engine: deltalog {dl.get('version')}, jar {dl.get('jar')}; "
                 f"warm SparkSession `local[2]`, driver memory 3g, started in {dl.get('session_start_s', 0):.1f} s "
                 f"(excluded); `DeltaTable.clearCache` {'called before every run' if dl.get('clearCache') else 'absent'}; "
                 f"the driver's heap is collected (`System.gc()`) when the case changes, not between runs of a case")
    ds = starts.get("delta-spark", {})
    if "error" in ds:
        L.append(f"* delta-spark engine: {ds['error']}")
    elif ds:
        L.append(f"* delta-spark engine: delta-spark {ds.get('version')} (jars from ~/.m2, `make peers`), "
                 f"through py4j on its JVM classes; warm SparkSession `local[2]`, driver memory 3g, "
                 f"`DeltaSparkSessionExtension` + `DeltaCatalog`, started in {ds.get('session_start_s', 0):.1f} s "
                 f"(excluded); `DeltaLog.clearCache()` before every run, the snapshot's cached state released "
                 f"after it (untimed); delta-spark's own settings at their defaults. Full load = "
                 f"`DeltaLog.forTable(spark, path)` + `.update()` + `snapshot.allFiles` "
                 f"(path, partitionValues, size, modificationTime, dataChange, stats) collected with "
                 f"`DataFrame.toArrow()` (see `benchmarks/README.md` for every scenario's calls)")
    dr = starts.get("delta-rs", {})
    if dr and "error" not in dr:
        call = dr.get("full_load_call")
        L.append(f"* delta-rs full load = `DeltaTable(path)` + `{call}"
                 + ("(flatten=False)`" if call == "get_add_actions" else "()`"))
    L.append(f"* Total wall time of this run: {wall:.0f} s, of which {info.get('waited_s', 0)} s waiting "
             f"for an idle machine "
             + "(" + ", ".join(f"{e} {w['wall_s']:.0f} s" for e, w in workers.items()) + ")")
    L += ["", f"Times are seconds, the median of the timed runs after warm-up runs for {WARM_MIN_S:.0f} s "
          f"(1 to {WARM_MAX_RUNS} warm-up runs; then at least {TIMED_RUNS} timed runs, more until they add up to "
          f"{TIMED_MIN_S:.0f} s, at most {TIMED_MAX_RUNS}; 2 when one takes more than {LONG_RUN_S:.0f} s). A JVM "
          "compiles the replay over its first tens of loads of a table (S1 100k: ~45 ms over runs 2-10, ~30 ms "
          "from about the 30th): a single warm-up timed runs 2-4 of the driver's life (the warm-up count and "
          "first run of each case are listed; the fresh-process table below has the cold case). Ratios below 1 mean deltalog is faster. `floor` is a pyarrow-only lower "
          "bound (not a Delta reader); `floor/x` near 1 means x has no headroom left. Peak RSS in MB "
          "(VmHWM reset before each case; for deltalog and delta-spark `py / jvm`; memory kept from earlier cases "
          "counts). Verdict: every engine's version, active-file count and sha256 of sorted paths "
          "against the generator's truth.", ""]

    titles = {"S1": "S1 — snapshot load from a checkpoint",
              "S2": "S2 — JSON-only replay",
              "S3": "S3 — protocol + metadata only (schema, version)",
              "S4": "S4 — checkpoint write (from a loaded snapshot)",
              "S7": "S7 — time travel (JSON replay to 10 % of history)"}
    for sc in SCENARIOS:
        cs = [c for c in cases if c["scenario"] == sc]
        if not cs:
            continue
        L += [f"## {titles[sc]}", ""]
        head = ["case", "files @ version", "delta-rs", "deltalog", "deltalog / delta-rs", "delta-spark",
                "deltalog / delta-spark", "floor", "floor / deltalog", "floor / delta-rs",
                "delta-rs [M] anchor", "RSS delta-rs", "RSS deltalog (py / jvm)",
                "RSS delta-spark (py / jvm)", "verdict"]
        if sc == "S3":
            head[1] = "version"
        L += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c in cs:
            rr = {e: by.get((c["id"], e)) for e in engines}
            med = {e: (r["median_s"] if r and r.get("status") == "ok" and not r.get("problems") else None)
                   for e, r in rr.items()}
            exp = c["expect"]
            fv = f"v{exp['version']}" if sc == "S3" else f"{exp['count']:,} @ v{exp['version']}"
            L.append("| " + " | ".join([
                f"{c['id']}: {c['label']}", fv, _cell(rr.get("delta-rs")), _cell(rr.get("deltalog")),
                _fmt_ratio(med.get("deltalog"), med.get("delta-rs")), _cell(rr.get("delta-spark")),
                _fmt_ratio(med.get("deltalog"), med.get("delta-spark")), _cell(rr.get("floor")),
                _fmt_ratio(med.get("floor"), med.get("deltalog")),
                _fmt_ratio(med.get("floor"), med.get("delta-rs")),
                _fmt_s(c.get("anchor")), _rss(rr.get("delta-rs")), _rss(rr.get("deltalog")),
                _rss(rr.get("delta-spark")), verdict(c, rr, engines)]) + " |")
        if sc in ("S2", "S7"):
            extra = []
            for c in cs:
                if not c.get("json_commits"):
                    continue
                bits = []
                for e in engines:
                    r = by.get((c["id"], e))
                    if r and r.get("status") == "ok" and not r.get("problems"):
                        t = r["median_s"]
                        mbs = c['log_bytes'] / 1e6 / t
                        bits.append(f"{e} {1000 * t / c['json_commits']:.2f} ms/commit, "
                                    + (f"{mbs:.0f} MB/s" if mbs >= 10 else f"{mbs:.2g} MB/s"))
                if bits:
                    extra.append(f"* {c['id']} ({c['json_commits']} JSON commits, "
                                 f"{c['log_bytes'] / 1e6:.1f} MB of JSON): " + "; ".join(bits))
            if extra:
                L += ["", "Log throughput (whole load time divided by JSON commits / JSON bytes read):", ""] + extra
        sp = [(c["id"], by.get((c["id"], "deltalog"), {}).get("split")) for c in cs]
        sp = [(i, x) for i, x in sp if x]
        if sp:
            L += ["", "deltalog time split (medians; forPath / first call needing the JVM file state "
                  "(`numFiles`) / `filesArrow()` to a pyarrow Table):", ""]
            L += [f"* {i}: open {x['open_s']:.3f} s, JVM state {x['jvm_state_s']:.3f} s, "
                  f"to Arrow {x['to_arrow_s']:.3f} s" for i, x in sp]
        sp = [(c["id"], by.get((c["id"], "delta-spark"), {}).get("split")) for c in cs]
        sp = [(i, x) for i, x in sp if x]
        if sp:
            L += ["", "delta-spark time split (medians; `forTable` + `update()` (or `getSnapshotAt`) / "
                  "`allFiles` state reconstruction and `toArrow()` to a pyarrow Table):", ""]
            L += [f"* {i}: snapshot {x['open_s']:.3f} s, files to Arrow {x['to_arrow_s']:.3f} s" for i, x in sp]
        for e in SPARK_ENGINES:
            firsts = [(c["id"], by.get((c["id"], e))) for c in cs] if e in engines else []
            firsts = [(i, r) for i, r in firsts if r and r.get("status") == "ok" and r.get("warmup_runs")]
            if firsts:
                L += ["", f"{e} warm-up (first run of the case, after the cases before it / warm-up runs):", ""]
                L += [f"* {i}: first run {r['warmup_s']:.3f} s, {r['warmup_runs']} warm-up runs, "
                      f"then median {r['median_s']:.3f} s of {len(r['times_s'])} timed runs" for i, r in firsts]
        if sc == "S4":
            L += [""]
            for c in cs:
                L.append(f"* source checkpoint {c['source_checkpoint_bytes'] / 1e6:.0f} MB")
                for e in engines:
                    r = by.get((c["id"], e))
                    if r and r.get("status") == "ok":
                        ck = r.get("checkpoint", {})
                        rr_ = ", ".join(f"{k[7:]} {v}" for k, v in ck.items() if k.startswith("reread_"))
                        L.append(f"* {e}: output {_mb(ck.get('output_bytes'))} MB"
                                 + (f" ({', '.join(ck['files'])})" if ck.get("files") else "")
                                 + (f"; re-read with only the new checkpoint left: {rr_}" if rr_ else ""))
        L.append("")

    for size, fresh_ in fresh:
        L += [f"## Fresh process, one load (S1 {size}, checkpoint + 0)", ""]
        if size != fresh[0][0]:
            L += [f"As above, for the {size}-file table.", ""]
        else:
            L += [f"A new Python process per run ({FRESH_DRIVERS} per row; the row is the run with the median "
                  "first load, every run's load is listed): engine start (deltalog: SparkSession creation with "
                  "the jar; delta-rs: `import deltalake`) is reported apart from the first load. deltalog "
                  "runs without class-data sharing (`DELTALOG_CLASS_SHARING=0`), then with it: the first "
                  "driver of a new Spark/Java class path only notes it, the next records an archive of the "
                  "classes it loaded as it exits (slower, once), later drivers map it; each driver that "
                  "ran is listed. The delta-rs drivers and the deltalog drivers that map the archive are "
                  "started alternately, so that both meet the same machine.", ""]
        L += ["| engine | start (excluded) | first load | loads of all runs | files @ version | correct | peak RSS MB |",
              "|---|---|---|---|---|---|---|"]
        for f_ in fresh_:
            name = f_.get("label", f_["engine"])
            if "error" in f_:
                L.append(f"| {name} | {f_['error'].replace('|', '/')} | — | — | — | — | — |")
                continue
            exp = f_.get("expect", {})
            want = (exp.get("version"), exp.get("count"), exp.get("paths_sha256"))
            ok = all(tuple(a_) == want for a_ in
                     f_.get("answers", [(f_["version"], f_["count"], f_["paths_sha256"])]))  # every run
            rss = " / ".join(f"{k} {_mb(v)}" for k, v in f_.get("peak_rss", {}).items())
            loads = " / ".join(f"{x:.3f}" for x in f_.get("loads_s", [f_["load_s"]]))
            L.append(f"| {name} | {f_['start_s']:.2f} s | {f_['load_s']:.3f} s | {loads} | "
                     f"{f_['count']:,} @ v{f_['version']} | {'OK' if ok else '**FAILED**'} | {rss} |")
        L.append("")

    errs = [r for r in rows if r.get("status") == "error"]
    if errs:
        L += ["## Errors", ""]
        for r in errs:
            L.append(f"* {r['engine']} / {r['id']}: {r['error']}")
        L.append("")
    return "\n".join(L)


def orchestrate(a: argparse.Namespace) -> int:
    t_all = time.perf_counter()
    cmd = a.command or ("cd " + shlex.quote(REPO) + " && " + " ".join(
        [os.path.relpath(sys.executable, REPO) if sys.executable.startswith(REPO) else sys.executable,
         "benchmarks/run.py"] + [shlex.quote(x) for x in sys.argv[1:]]))
    print("[run] preparing tables ...", file=sys.stderr, flush=True)
    cases = build_plan(a)
    t_wait = time.perf_counter()
    if a.wait_idle > 0:  # other builds share the 2 CPUs: wait (bounded) for a quiet machine
        deadline = time.time() + a.wait_idle
        while os.getloadavg()[0] > 0.7 and time.time() < deadline:
            print(f"[run] load average {os.getloadavg()[0]:.2f}; waiting for an idle machine ...",
                  file=sys.stderr, flush=True)
            time.sleep(15)
    waited = round(time.perf_counter() - t_wait)
    info = machine_info()
    info["waited_s"] = waited
    fd, plan_path = tempfile.mkstemp(prefix="bench-plan-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f)
    rows: List[Dict[str, Any]] = []
    for e in ENGINE_ORDER:
        if e in a.engines:
            rows += run_worker(e, plan_path, a)
    os.unlink(plan_path)
    fresh: List[Tuple[str, List[Dict[str, Any]]]] = []
    if not a.no_fresh and "S1" in a.scenarios:
        sizes = ["100k"] + (["1M"] if a.full or not a.quick else [])
        for size in sizes:
            fresh.append((size, fresh_rows(a, size)))
    wall = time.perf_counter() - t_all
    info["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    report = write_report(a, cases, rows, fresh, info, wall, cmd)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(report + "\n")
    out_dir = os.path.dirname(os.path.abspath(a.out))
    raw = a.json or os.path.join(out_dir, "results.json")
    os.makedirs(os.path.dirname(os.path.abspath(raw)), exist_ok=True)
    with open(raw, "w") as f:
        json.dump({"cases": cases, "rows": rows, "fresh": fresh, "info": info, "wall_s": wall,
                   "command": cmd, "engines": [e for e in ENGINE_ORDER if e in a.engines]},
                  f, indent=1, default=str)
    print(report)
    print(f"[run] wrote {a.out} (raw: {raw}) in {wall:.0f} s", file=sys.stderr)
    if not a.no_charts:  # the charts never fail the run: they are drawn from the JSON just written
        try:
            import charts
            written = charts.make_charts(raw, a.charts or os.path.join(out_dir, "charts"))
            print(f"[run] charts: {', '.join(written) if written else 'none'}", file=sys.stderr)
        except Exception as e:
            print(f"[run] charts not written: {_short(e)}", file=sys.stderr)
    return 0


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Side-by-side Delta log-replay benchmark.")
    ap.add_argument("--quick", action="store_true", help="skip 1M tables and S2 (c)/(d)")
    ap.add_argument("--full", action="store_true", help="everything, incl. 1M and S2 (c)/(d)")
    ap.add_argument("--with-c", action="store_true", help="add S2 (c) 10k commits / 100k files")
    ap.add_argument("--with-d", action="store_true", help="add S2 (d) 100 commits / 1M files")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="e.g. S1,S3")
    ap.add_argument("--engines", default=",".join(ENGINE_ORDER), help="delta-rs,deltalog,delta-spark,floor")
    ap.add_argument("--out", default=os.path.join("benchmarks", "RESULTS.md"))
    ap.add_argument("--json", help="raw results (default: results.json beside --out); charts.py reads it")
    ap.add_argument("--charts", metavar="DIR", help="PNG charts directory (default: charts/ beside --out)")
    ap.add_argument("--no-charts", action="store_true", help="do not draw the PNG charts")
    ap.add_argument("--smoke", action="store_true", help="tiny tables only (harness check)")
    ap.add_argument("--partitioned", action="store_true", help="tables with a partition column")
    ap.add_argument("--deltars-op", default="get_add_actions", choices=["get_add_actions", "file_uris"],
                    help="the delta-rs call that materialises the files (perf-anchors §1.2 used file_uris)")
    ap.add_argument("--no-fresh", action="store_true", help="skip the fresh-process measurement")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                    help="before measuring, wait up to SECONDS for a 1-min load average below 0.7")
    ap.add_argument("--worker-timeout", type=float, default=1800,
                    help="seconds per engine worker (delta-spark's: 3 times this)")
    ap.add_argument("--command", help="the command line to print in the report (e.g. 'make bench')")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--jar", help="deltalog engine jar to benchmark (default: $DELTALOG_BENCH_JAR, else the one "
                                  "bundled in python/deltalog/jars/); e.g. a jar built with -Dbuild.dir=target-perf")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.scenarios = [s.strip().upper() for s in a.scenarios.split(",") if s.strip()]
    a.engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    for s in a.scenarios:
        if s not in SCENARIOS:
            ap.error(f"unknown scenario {s}; choose from {','.join(SCENARIOS)}")
    for e in a.engines:
        if e not in ENGINE_ORDER:
            ap.error(f"unknown engine {e}; choose from {','.join(ENGINE_ORDER)}")
    if a.quick and a.full:
        ap.error("--quick and --full exclude each other")
    if a.jar:
        if not os.path.isfile(a.jar):
            ap.error(f"--jar {a.jar}: no such file")
        # the workers (separate processes) inherit it; engines.py reads DELTALOG_BENCH_JAR
        os.environ["DELTALOG_BENCH_JAR"] = os.path.abspath(a.jar)
    return a


def main(argv: Optional[List[str]] = None) -> int:
    a = parse_args(argv)
    if a.worker:
        return worker(a)
    return orchestrate(a)


if __name__ == "__main__":
    sys.exit(main())
