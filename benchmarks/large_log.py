"""Generator of very large logs for the distributed-replay benchmark and the full-size check
(issue 30): a multi-part checkpoint written directly with pyarrow (no engine, fast) followed by
JSON commits.

Layout of ``large-n<N>-p<P>-c<C>``:

* version 0: commitInfo, protocol (1, 2), metaData (generate.py's schema, no partitions); the
  checkpoint sits at version ``CKPT = 10`` (versions 1..9 are not written: the checkpoint
  replaces them, as after a log cleanup);
* ``<CKPT>.checkpoint.<p>.<P>.parquet``: the protocol, metadata, one txn and ``N + 20·C - 10·C``
  adds (generate.py's paths and ~300-byte stats), spread evenly over P parts, row groups of 50k;
  ``_last_checkpoint`` names it;
* versions CKPT+1 .. CKPT+C: each removes 200 checkpoint files, adds 100 new files, updates the
  txn; every 10th re-adds 50 live checkpoint files (``dataChange = false``, new stats), version
  CKPT+C/2 changes the table configuration. Exactly N files are live at the end.

``truth`` (in ``meta.json``): the latest version, live count, tombstone count, sha256 of the sorted
live paths (generate.paths_hash) and their order-independent digest (``paths_sum_sha256``),
computed from the plan, not by any engine.

    python benchmarks/large_log.py --files 2000000 --parts 20 --commits 100
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate  # noqa: E402

CKPT = 10
REMOVES, ADDS, READDS = 200, 100, 50
ROW_GROUP = 50_000


def path(i: int) -> str:
    return f"part-{i:08d}-{generate._uuidish(i)}.c000.snappy.parquet"


def paths_sum_sha256(paths) -> str:
    """Order-independent digest: the sum of the paths' SHA-256 values mod 2^256 (hex), as
    io.deltalog.tools.SnapshotDigest computes it from a loaded snapshot."""
    import hashlib
    total = 0
    for p in paths:
        total += int.from_bytes(hashlib.sha256(p.encode("utf-8")).digest(), "big")
    return "%064x" % (total % (1 << 256))


def stats(i: int, salt: int = 0) -> str:
    idmin = 1000 * i
    vmin = (i * 7919 + salt) % 1_000_000 - 500_000
    smin = ((i * 37) % 10_000) / 97.0
    return ('{"numRecords":1000,"minValues":{"id":%d,"value":%d,"score":%.6f},'
            '"maxValues":{"id":%d,"value":%d,"score":%.6f},'
            '"nullCount":{"id":0,"value":0,"score":%d}}'
            % (idmin, vmin, smin, idmin + 999, vmin + 400_000 + i % 1000, smin + 50.0 + (i % 89) / 7.0, i % 5))


def size(i: int) -> int:
    return 100_000 + (i * 131) % 50_000


class Plan:
    """Which file indices each version adds / removes / re-adds (deterministic)."""

    def __init__(self, files: int, commits: int):
        self.files, self.commits = files, commits
        self.checkpoint_files = files + (REMOVES - ADDS) * commits
        self.latest = CKPT + commits

    def removes(self, v: int) -> range:
        t = v - CKPT - 1
        return range(t * REMOVES, (t + 1) * REMOVES)  # the oldest checkpoint files first

    def adds(self, v: int) -> range:
        t = v - CKPT - 1
        lo = self.checkpoint_files + t * ADDS
        return range(lo, lo + ADDS)

    def readds(self, v: int) -> range:
        t = v - CKPT - 1
        if t % 10 != 9:
            return range(0)
        lo = self.checkpoint_files - (t + 1) * READDS  # the newest checkpoint files: never removed
        return range(lo, lo + READDS)

    def live(self) -> List[int]:
        removed = set()
        for v in range(CKPT + 1, self.latest + 1):
            removed.update(self.removes(v))
        out = [i for i in range(self.checkpoint_files) if i not in removed]
        for v in range(CKPT + 1, self.latest + 1):
            out.extend(self.adds(v))
        return out


def _schema():
    import pyarrow as pa
    m = pa.map_(pa.string(), pa.string())
    return pa.schema([
        ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])),
        ("add", pa.struct([("path", pa.string()), ("partitionValues", m), ("size", pa.int64()),
                           ("modificationTime", pa.int64()), ("dataChange", pa.bool_()), ("stats", pa.string()),
                           ("tags", m)])),
        ("remove", pa.struct([("path", pa.string()), ("deletionTimestamp", pa.int64()), ("dataChange", pa.bool_()),
                              ("extendedFileMetadata", pa.bool_()), ("partitionValues", m), ("size", pa.int64())])),
        ("metaData", pa.struct([("id", pa.string()), ("name", pa.string()), ("description", pa.string()),
                                ("format", pa.struct([("provider", pa.string()), ("options", m)])),
                                ("schemaString", pa.string()), ("partitionColumns", pa.list_(pa.string())),
                                ("configuration", m), ("createdTime", pa.int64())])),
        ("protocol", pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())])),
    ])


def _write_part(out: str, lo: int, hi: int, first: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = _schema()
    ts = generate.commit_ts(CKPT)
    rows: List[Dict[str, object]] = []
    if first:
        rows.append({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
        rows.append({"metaData": {"id": generate.TABLE_ID, "format": {"provider": "parquet", "options": []},
                                  "schemaString": generate._schema_string(False), "partitionColumns": [],
                                  "configuration": [], "createdTime": generate.commit_ts(0)}})
        rows.append({"txn": {"appId": "large-log-app", "version": CKPT, "lastUpdated": ts}})
    n = len(rows) + hi - lo
    cols = {f.name: [None] * n for f in schema}
    for k, r in enumerate(rows):
        for name, val in r.items():
            cols[name][k] = val
    base = len(rows)
    adds = cols["add"]
    for i in range(lo, hi):
        adds[base + i - lo] = {"path": path(i), "partitionValues": [], "size": size(i), "modificationTime": ts,
                               "dataChange": False, "stats": stats(i), "tags": None}
    table = pa.Table.from_pydict(cols, schema=schema)
    pq.write_table(table, out, row_group_size=ROW_GROUP, compression="snappy")


def _commit(plan: Plan, v: int) -> str:
    ts = generate.commit_ts(v)
    lines = ['{"commitInfo":{"timestamp":%d,"operation":"WRITE","operationParameters":{"mode":"Append"},'
             '"isBlindAppend":false,"engineInfo":"deltalog-large-log-generator"}}' % ts]
    if v == CKPT + plan.commits // 2:
        lines.append(json.dumps({"metaData": {
            "id": generate.TABLE_ID, "format": {"provider": "parquet", "options": {}},
            "schemaString": generate._schema_string(False), "partitionColumns": [],
            "configuration": {"delta.appendOnly": "false", "large.log.version": str(v)},
            "createdTime": generate.commit_ts(0)}}, separators=(",", ":")))
    lines.append('{"txn":{"appId":"large-log-app","version":%d,"lastUpdated":%d}}' % (v, ts))
    for i in plan.removes(v):
        lines.append('{"remove":{"path":"%s","deletionTimestamp":%d,"dataChange":true,"extendedFileMetadata":true,'
                     '"partitionValues":{},"size":%d}}' % (path(i), ts, size(i)))
    for i in plan.readds(v):
        lines.append('{"add":{"path":"%s","partitionValues":{},"size":%d,"modificationTime":%d,"dataChange":false,'
                     '"stats":%s}}' % (path(i), size(i), ts, json.dumps(stats(i, salt=v))))
    for i in plan.adds(v):
        lines.append('{"add":{"path":"%s","partitionValues":{},"size":%d,"modificationTime":%d,"dataChange":true,'
                     '"stats":%s}}' % (path(i), size(i), ts, json.dumps(stats(i))))
    return "\n".join(lines) + "\n"


def ensure(files: int, parts: int, commits: int, root: str = "") -> Tuple[str, Dict[str, object]]:
    """The table (built once, cached under ``root``, default DELTALOG_BENCH_DATA / benchmarks/.data)
    and its truth."""
    d = os.path.join(root or os.path.join(generate.DATA_DIR, "large"),
                     f"large-n{files}-p{parts}-c{commits}-{generate.GEN_VERSION}b")
    meta_path = os.path.join(d, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            return d, json.load(f)["truth"]
    t0 = time.time()
    plan = Plan(files, commits)
    log = os.path.join(d, "_delta_log")
    os.makedirs(log, exist_ok=True)
    with open(os.path.join(log, f"{0:020d}.json"), "w") as f:
        f.write('{"commitInfo":{"timestamp":%d,"operation":"CREATE TABLE","operationParameters":{},'
                '"isBlindAppend":true}}\n' % generate.commit_ts(0))
        f.write('{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}\n')
        f.write(json.dumps({"metaData": {"id": generate.TABLE_ID, "format": {"provider": "parquet", "options": {}},
                                         "schemaString": generate._schema_string(False), "partitionColumns": [],
                                         "configuration": {}, "createdTime": generate.commit_ts(0)}},
                           separators=(",", ":")) + "\n")
    n = plan.checkpoint_files
    bounds = [n * p // parts for p in range(parts + 1)]
    for p in range(parts):
        _write_part(os.path.join(log, f"{CKPT:020d}.checkpoint.{p + 1:010d}.{parts:010d}.parquet"),
                    bounds[p], bounds[p + 1], first=p == 0)
    with open(os.path.join(log, "_last_checkpoint"), "w") as f:
        json.dump({"version": CKPT, "size": n + 3, "parts": parts, "numOfAddFiles": n}, f)
    for v in range(CKPT + 1, plan.latest + 1):
        with open(os.path.join(log, f"{v:020d}.json"), "w") as f:
            f.write(_commit(plan, v))
    live = plan.live()
    truth = {"version": plan.latest, "count": len(live), "paths_sha256": generate.paths_hash(path(i) for i in live),
             "paths_sum_sha256": paths_sum_sha256(path(i) for i in live), "tombstones": REMOVES * commits,
             "checkpoint_files": n, "parts": parts}
    with open(meta_path, "w") as f:
        json.dump({"truth": truth, "seconds": round(time.time() - t0, 1)}, f)
    generate._log(f"large log {d}: {n:,} checkpoint adds in {parts} parts + {commits} commits, "
                  f"{len(live):,} live, {time.time() - t0:.0f} s")
    return d, truth


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2_000_000)
    ap.add_argument("--parts", type=int, default=20)
    ap.add_argument("--commits", type=int, default=100)
    a = ap.parse_args()
    d, truth = ensure(a.files, a.parts, a.commits)
    print(d, json.dumps(truth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
