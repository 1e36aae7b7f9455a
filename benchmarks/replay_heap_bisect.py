"""The smallest driver heap at which each replay path loads a large log (issue 30).

For each path, deltalog's replay as a Spark job (``spark.deltalog.replay.distributedThreshold=0``)
and its in-driver replay (threshold above the log), the table of benchmarks/large_log.py is loaded
fresh (io.deltalog.tools.SnapshotDigest) in a new Spark driver process per heap size, from the
largest heap of ``--heaps`` down; a path stops at its first failure (an OutOfMemoryError, another
error or the timeout), so its last success is the smallest heap of the list it needs. Every load
that succeeds is checked against the generator's truth (version, live count, tombstones, digest of
the live paths). ``--cluster`` runs the drivers on integration/cluster.py's standalone cluster (one
master, two one-core workers with 1 GB executors), so that the executors' work is not in the
driver's heap as it is in ``local[2]``.

    DELTALOG_INTEGRATION_FULL=1 python benchmarks/replay_heap_bisect.py --files 2000000 --parts 20 \\
        --cluster --heaps 1g,896m,768m,704m,640m --out benchmarks/RESULTS.md
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import distributed_replay_bench as bench  # noqa: E402
import large_log  # noqa: E402
import side_by_side  # noqa: E402

PATHS = {"distributed": "0", "in-driver": str(1 << 62)}


def load(table: str, truth: Dict[str, Any], master: str, heap: str, path: str, timeout: float) -> Dict[str, Any]:
    """One fresh load in its own driver process: outcome, load seconds (JVM) or process seconds."""
    load_avg = os.getloadavg()[0]
    t0 = time.time()
    try:
        r = bench.run_engine("deltalog", table, master, heap, 1, PATHS[path],
                             {"spark.sql.shuffle.partitions": "2"}, timeout)[-1]
    except subprocess.TimeoutExpired:
        r = {"error": f"timeout after {timeout:.0f} s"}
    wall = time.time() - t0
    row = {"heap": heap, "path": path, "wall": wall, "load": load_avg}
    if "error" in r:
        err = r["error"]
        row["outcome"] = "OutOfMemoryError" if "OutOfMemoryError" in err else err.splitlines()[0][:120]
        row["ok"] = False
        row["detail"] = err
    else:
        bench.check_deltalog(r, truth, f"{path} replay with a {heap} driver", path == "distributed")
        row.update(ok=True, outcome=f"ok, equals truth; heap after {r['heap_mb_after']} MB of {r['max_heap_mb']} MB",
                   seconds=r["seconds"])
    print(row, flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    bench.add_log_args(ap)
    ap.add_argument("--heaps", default="1g,768m,640m,512m", help="driver heaps, largest first")
    ap.add_argument("--paths", default="distributed,in-driver")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    if bench.refuse_full_size(a.files):
        return 2
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    table, truth = large_log.ensure(a.files, a.parts, a.commits)
    heaps = [h.strip() for h in a.heaps.split(",") if h.strip()]
    paths = [p.strip() for p in a.paths.split(",") if p.strip()]
    cluster, master = None, a.master
    if a.cluster:
        from cluster import StandaloneCluster
        cluster = StandaloneCluster(tempfile.mkdtemp(prefix="replay-heap-cluster-"))
        cluster.start()
        master = cluster.master_url
    rows: List[Dict[str, Any]] = []
    try:
        for p in paths:
            for h in heaps:
                rows.append(load(table, truth, master, h, p, a.timeout))
                if not rows[-1]["ok"]:
                    break
    finally:
        if cluster is not None:
            cluster.stop()
    smallest = {p: next((r["heap"] for r in reversed(rows) if r["path"] == p and r["ok"]), None) for p in paths}
    cmd = "python benchmarks/replay_heap_bisect.py " + " ".join(sys.argv[1:])
    lines = ["", f"## Driver heap needed by each replay path: {truth['count']:,} live files (benchmarks/replay_heap_bisect.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; table: {truth['count']:,} live files, "
             f"{truth['parts']}-part checkpoint of {truth['checkpoint_files']:,} adds + {a.commits} commits after it "
             f"(benchmarks/large_log.py); master `{'standalone cluster (integration/cluster.py: 2 workers x 1 core, 1 GB executors)' if a.cluster else master}`; "
             f"one fresh driver process per load (`--driver-memory` = -Xmx), heaps tried largest first, a path "
             f"stops at its first failure; 2-core machine shared with other jobs (load average per row); "
             f"command: `{cmd}`", "",
             "| driver heap | path | outcome | load s | process s | load avg |", "|---|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['heap']} | {r['path']} | {r['outcome']} | "
                     f"{'%.1f' % r['seconds'] if 'seconds' in r else '-'} | {r['wall']:.0f} | {r['load']:.1f} |")
    lines.append("")
    lines.append("Smallest heap of the list that loads the table: " +
                 "; ".join(f"{p}: {smallest[p] or 'none'}" for p in paths) + ".")
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
