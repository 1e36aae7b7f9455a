"""VACUUM benchmark (issue 28 target: <= 0.5x delta-spark 4.4), deltalog beside delta-spark on the same Spark.

The table is built directly, not through Spark: ``--files`` referenced data files (tiny, 8 bytes)
spread over ``--partitions`` partition directories ``part=<i>/``, plus half as many unreferenced
files, half of them removed by ``remove`` actions whose ``deletionTimestamp`` is 30 days old (expired
tombstones) and half never in the log (orphans). The log is ``--commits`` JSON commits of ``add`` /
``remove`` actions; every data file and commit is dated 30 days back (``os.utime``), so VACUUM with the
table's default retention (7 days) deletes exactly the unreferenced files.

Each engine runs in its own Spark process (``integration/peers.py``: local[2], UI off) on its own copy
of the table: first ``VACUUM ... DRY RUN`` (``--dry-runs`` times, median reported, first in
brackets), then one real ``VACUUM``. Before anything is reported the dry-run lists of both engines
are checked to be the same set of paths, and the trees left after the real runs identical.

    .venv/bin/python benchmarks/vacuum_bench.py [--files 100000] [--partitions 100] [--dry-runs 3] [--out benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

OLD = time.time() - 30 * 86400


def build(root: str, files: int, partitions: int, commits: int) -> None:
    """The table at ``root``: ``files`` live files, ``files // 4`` expired tombstones, ``files // 4`` orphans."""
    log = os.path.join(root, "_delta_log")
    os.makedirs(log)
    for p in range(partitions):
        os.makedirs(os.path.join(root, f"part={p}"))
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}},
                                           {"name": "part", "type": "integer", "nullable": True, "metadata": {}}]}
    meta = {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                         "schemaString": json.dumps(schema), "partitionColumns": ["part"], "configuration": {},
                         "createdTime": int(OLD * 1000)}}
    removed, orphans = files // 4, files // 4

    def name(i: int) -> tuple:
        p = i % partitions
        return p, f"part={p}/part-{i:07d}-{uuid.UUID(int=i)}.c000.snappy.parquet"

    def add(i: int) -> str:
        p, path = name(i)
        return json.dumps({"add": {"path": path, "partitionValues": {"part": str(p)}, "size": 8,
                                   "modificationTime": int(OLD * 1000), "dataChange": True,
                                   "stats": '{"numRecords":1}'}})

    def rm(i: int) -> str:
        p, path = name(i)
        return json.dumps({"remove": {"path": path, "deletionTimestamp": int(OLD * 1000), "dataChange": True,
                                      "extendedFileMetadata": True, "partitionValues": {"part": str(p)},
                                      "size": 8}})

    referenced = files + removed
    per = -(-referenced // commits)
    versions = [[json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}), json.dumps(meta)]]
    for lo in range(0, referenced, per):
        versions.append([add(i) for i in range(lo, min(referenced, lo + per))])
    versions.append([rm(i) for i in range(files, referenced)])
    for v, lines in enumerate(versions):
        with open(os.path.join(log, f"{v:020d}.json"), "w") as f:
            f.write("\n".join(lines) + "\n")
        os.utime(os.path.join(log, f"{v:020d}.json"), (OLD + v, OLD + v))
    for i in range(referenced + orphans):
        if i >= referenced:
            path = f"part={i % partitions}/orphan-{i:07d}.parquet"
        else:
            path = name(i)[1]
        full = os.path.join(root, path)
        with open(full, "wb") as f:
            f.write(b"PAR1PAR1")
        os.utime(full, (OLD, OLD))


def tree(root: str) -> set:
    out = set()
    for d, dirs, fs in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel.startswith("_delta_log"):
            continue
        out.update(os.path.normpath(os.path.join(rel, x)) for x in dirs + fs)
    return out - {"_delta_log"}


RUN = """
import time, statistics
t = f"{'deltalog' if args['fmt'] == 'deltalog' else 'delta'}.`{args['path']}`"
def once(sql):
    t0 = time.perf_counter()
    rows = [r[0] for r in spark.sql(sql).collect()]
    return time.perf_counter() - t0, rows
dry = [once(f"VACUUM {t} DRY RUN") for _ in range(args["dry_runs"])]
real_time, _ = once(f"VACUUM {t}")
times = [d[0] for d in dry]
warm = times[1:] or times
result = {"dry": {"first": times[0], "median": statistics.median(warm)},
          "real": {"first": real_time, "median": real_time}, "paths": dry[-1][1]}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000, help="referenced (live) data files")
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--commits", type=int, default=10)
    ap.add_argument("--dry-runs", type=int, default=3)
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from peers import SparkPeer
    load_start = os.getloadavg()[0]
    res = {}
    with tempfile.TemporaryDirectory() as root:
        t0 = time.perf_counter()
        build(os.path.join(root, "deltalog"), a.files, a.partitions, a.commits)
        shutil.copytree(os.path.join(root, "deltalog"), os.path.join(root, "delta-spark"))
        build_s = time.perf_counter() - t0
        before = tree(os.path.join(root, "deltalog"))
        for engine, fmt in (("deltalog", "deltalog"), ("delta-spark", "delta")):
            path = os.path.join(root, engine)
            with SparkPeer(engine, driver_memory="4g") as peer:
                res[engine] = peer.run(RUN, path=path, fmt=fmt, dry_runs=a.dry_runs)
            prefix = f"file:{path}/"
            res[engine]["set"] = {p[len(prefix):] for p in res[engine]["paths"]}
            res[engine]["left"] = tree(path)
        ours, theirs = res["deltalog"], res["delta-spark"]
        assert ours["set"] == theirs["set"], (len(ours["set"]), len(theirs["set"]))
        assert ours["left"] == theirs["left"]
        deleted = len(before - ours["left"])
        assert deleted == a.files // 2 and len(ours["set"]) == deleted, (deleted, len(ours["set"]))
    load = f"load average {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    lines = ["", "## VACUUM (benchmarks/vacuum_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}; {a.files:,} live files + "
             f"{a.files // 4:,} expired tombstones + {a.files // 4:,} orphans (8-byte files, built directly in "
             f"{build_s:.0f} s) in {a.partitions} partition directories, log of {a.commits + 2} JSON commits, "
             f"everything dated 30 days back; `VACUUM t DRY RUN` (median of {max(1, a.dry_runs - 1)} after one "
             f"warm-up, first in brackets) then `VACUUM t` (one run, a copy per engine); both engines listed "
             f"the same {deleted:,} paths and left identical trees; each engine in its own Spark process "
             f"(local[2]); command: `python benchmarks/vacuum_bench.py --files {a.files} --partitions "
             f"{a.partitions} --dry-runs {a.dry_runs}`", "",
             "| run | deltalog s | delta-spark s | deltalog / delta-spark |", "|---|---|---|---|",
             f"| VACUUM DRY RUN | {side_by_side.cells(ours['dry'], theirs['dry'])} |",
             f"| VACUUM (deletes {deleted:,}) | {side_by_side.cells(ours['real'], theirs['real'])} |"]
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
