"""One synthetic Delta table generator for every engine in the log-replay benchmark.

Writes ``_delta_log`` directly (no data files: the benchmark only reads the log). Checkpoints
are written by delta-rs (``deltalake.DeltaTable(path).create_checkpoint()``) so their format does
not depend on deltalog.

Log shape for ``(commits=C, files=N)`` (perf-anchors §7, plus removes and a tail):

* version 0: commitInfo, protocol (1, 2), metaData (schema ``id long, value long, score double``
  and, when partitioned, ``part string`` as the partition column).
* versions 1 .. C-2: the "body" adds, spread evenly; in version v >= 2 every file added at v-1
  whose global index i has ``i % 50 == 7`` is removed (about 2 % of the adds get a remove).
* version C-1: fill-up adds so that exactly N files are active at version C-1.
* versions C .. C+TAIL-1 (the "tail", used for "checkpoint + 10 JSON commits"): each adds 100
  files and removes 20 body files (``i % 50 == 8``).

Every add is ~390 bytes of JSON with a stats string (numRecords, min/max/nullCount of 3 columns).
Commit v has timestamp ``T0 + v * 60 s`` in commitInfo, in modificationTime of its adds, and as
the mtime of its file (so timestamp time travel agrees whichever source an engine uses).

Tables are assembled from one cached full log by hard links (commit files are immutable):

* ``json-…``          versions 0 .. C-1, no checkpoint (S2, S3 without checkpoint, S7)
* ``ckpt-…-after0``   versions 0 .. C-1, checkpoint at C-1 written by delta-rs (S1, S3, S4)
* ``ckpt-…-after10``  versions 0 .. C+9, the same checkpoint at C-1 (S1 "+10")

Everything lives under ``benchmarks/.data/`` keyed by the parameters and ``GEN_VERSION``; a
``meta.json`` written last marks a directory complete, so reruns skip generation. ``meta.json``
holds the ground truth (version, active-file count, sha256 of sorted active paths) that every
engine's answer is checked against.

CLI: ``python benchmarks/generate.py --files 100000 --commits 1000 [--partitioned]`` builds the
JSON-only and both checkpoint variants of one table; ``--standard [--quick|--full]`` builds the
whole benchmark set.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

GEN_VERSION = "g1"
HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.environ.get("DELTALOG_BENCH_DATA", os.path.join(HERE, ".data"))

T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
STEP_MS = 60_000           # one commit per minute
TAIL = 10
TAIL_ADDS = 100
TAIL_REMOVES = 20
REMOVE_MOD, REMOVE_RES, TAIL_REMOVE_RES = 50, 7, 8
N_PARTITIONS = 10
TABLE_ID = "5e1f6a1c-0b7d-4c3e-9a55-3d0e2b9d7a10"


def commit_ts(version: int) -> int:
    return T0_MS + version * STEP_MS


def _uuidish(i: int) -> str:
    a = (i * 2654435761) & 0xFFFFFFFF
    b = (i * 40503) & 0xFFFF
    c = (i * 7919 + 0x4000) & 0x0FFF | 0x4000
    d = (i * 104729) & 0x3FFF | 0x8000
    e = (i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFF
    return "%08x-%04x-%04x-%04x-%012x" % (a, b, c, d, e)


@dataclass(frozen=True)
class Spec:
    """One logical table: C commits (versions 0..C-1) with exactly N active files at C-1."""

    commits: int
    files: int
    partitioned: bool = False

    def __post_init__(self) -> None:
        if self.commits < 3:
            raise ValueError("commits must be >= 3")
        if self.files < 1000:
            raise ValueError("files must be >= 1000")

    @property
    def key(self) -> str:
        return f"c{self.commits}-n{self.files}{'-p' if self.partitioned else ''}-{GEN_VERSION}"

    @property
    def last(self) -> int:
        """The version the checkpoint is written at (and the JSON-only table's latest)."""
        return self.commits - 1

    # ---- the deterministic plan: which file indices each version adds / removes ----

    @property
    def body_versions(self) -> int:
        return self.commits - 2  # versions 1 .. C-2

    @property
    def body_adds(self) -> int:
        return round(self.files * (self.commits - 2) / (self.commits - 1) / 0.98)

    @property
    def body_removed(self) -> int:
        t = self.body_adds
        return (t - REMOVE_RES + REMOVE_MOD - 1) // REMOVE_MOD if t > REMOVE_RES else 0

    @property
    def fill_adds(self) -> int:
        return self.files - (self.body_adds - self.body_removed)

    def body_range(self, v: int) -> Tuple[int, int]:
        """Global file indices [lo, hi) added by body version v (1 .. C-2)."""
        t, k = self.body_adds, self.body_versions
        return (t * (v - 1)) // k, (t * v) // k

    def actions(self, v: int) -> Tuple[List[int], List[int]]:
        """(added file indices, removed file indices) of version v."""
        c = self.commits
        if v == 0:
            return [], []
        if v <= c - 2:
            adds = list(range(*self.body_range(v)))
        elif v == c - 1:
            lo = self.body_adds
            adds = list(range(lo, lo + self.fill_adds))
        else:
            t = v - c
            if not 0 <= t < TAIL:
                raise ValueError(f"version {v} out of range")
            lo = self.body_adds + self.fill_adds + t * TAIL_ADDS
            adds = list(range(lo, lo + TAIL_ADDS))
        removes: List[int] = []
        if 2 <= v <= c - 1:
            lo, hi = self.body_range(v - 1)
            first = lo + ((REMOVE_RES - lo) % REMOVE_MOD)
            removes = list(range(first, hi, REMOVE_MOD))
        elif v >= c:
            t = v - c
            removes = [REMOVE_MOD * m + TAIL_REMOVE_RES for m in range(t * TAIL_REMOVES, (t + 1) * TAIL_REMOVES)]
            if removes[-1] >= self.body_adds:
                raise ValueError("table too small for the tail removes")
        return adds, removes

    def path(self, i: int) -> str:
        name = f"part-{i:08d}-{_uuidish(i)}.c000.snappy.parquet"
        return f"part={i % N_PARTITIONS}/{name}" if self.partitioned else name

    def truth(self, version: int) -> Dict[str, object]:
        """Ground truth at `version`: count and sha256 of sorted active paths."""
        active = set()
        for v in range(1, version + 1):
            adds, removes = self.actions(v)
            active.update(adds)
            active.difference_update(removes)
        paths = [self.path(i) for i in active]
        return {"version": version, "count": len(paths), "paths_sha256": paths_hash(paths)}


def paths_hash(paths: Iterable[str]) -> str:
    """sha256 of the '\\n'-joined sorted paths: the correctness key shared by every engine."""
    return hashlib.sha256("\n".join(sorted(paths)).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------ log writing

def _schema_string(partitioned: bool) -> str:
    fields = [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "value", "type": "long", "nullable": True, "metadata": {}},
        {"name": "score", "type": "double", "nullable": True, "metadata": {}},
    ]
    if partitioned:
        fields.append({"name": "part", "type": "string", "nullable": True, "metadata": {}})
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


def _add_line(spec: Spec, i: int, ts: int) -> str:
    idmin = 1000 * i
    vmin = (i * 7919) % 1_000_000 - 500_000
    smin = ((i * 37) % 10_000) / 97.0
    stats = ('{"numRecords":1000,"minValues":{"id":%d,"value":%d,"score":%.6f},'
             '"maxValues":{"id":%d,"value":%d,"score":%.6f},'
             '"nullCount":{"id":0,"value":0,"score":%d}}'
             % (idmin, vmin, smin, idmin + 999, vmin + 400_000 + i % 1000, smin + 50.0 + (i % 89) / 7.0, i % 5))
    pv = '{"part":"%d"}' % (i % N_PARTITIONS) if spec.partitioned else "{}"
    size = 100_000 + (i * 131) % 50_000
    return ('{"add":{"path":"%s","partitionValues":%s,"size":%d,"modificationTime":%d,'
            '"dataChange":true,"stats":%s}}\n'
            % (spec.path(i), pv, size, ts, json.dumps(stats)))


def _remove_line(spec: Spec, i: int, ts: int) -> str:
    pv = '{"part":"%d"}' % (i % N_PARTITIONS) if spec.partitioned else "{}"
    size = 100_000 + (i * 131) % 50_000
    return ('{"remove":{"path":"%s","deletionTimestamp":%d,"dataChange":true,'
            '"extendedFileMetadata":true,"partitionValues":%s,"size":%d}}\n'
            % (spec.path(i), ts, pv, size))


def _commit_text(spec: Spec, v: int) -> str:
    ts = commit_ts(v)
    adds, removes = spec.actions(v)
    op = "CREATE TABLE" if v == 0 else "WRITE"
    params = '{"mode":"ErrorIfExists"}' if v == 0 else '{"mode":"Append"}'
    parts = ['{"commitInfo":{"timestamp":%d,"operation":"%s","operationParameters":%s,'
             '"isBlindAppend":%s,"engineInfo":"deltalog-bench-generator/%s"}}\n'
             % (ts, op, params, "false" if removes else "true", GEN_VERSION)]
    if v == 0:
        parts.append('{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}\n')
        meta = {"metaData": {"id": TABLE_ID, "format": {"provider": "parquet", "options": {}},
                             "schemaString": _schema_string(spec.partitioned),
                             "partitionColumns": ["part"] if spec.partitioned else [],
                             "configuration": {}, "createdTime": ts}}
        parts.append(json.dumps(meta, separators=(",", ":")) + "\n")
    parts.extend(_remove_line(spec, i, ts) for i in removes)
    parts.extend(_add_line(spec, i, ts) for i in adds)
    return "".join(parts)


def _commit_name(v: int) -> str:
    return f"{v:020d}.json"


def _log(msg: str) -> None:
    print(f"[generate] {msg}", file=sys.stderr, flush=True)


def _write_meta(d: str, meta: Dict[str, object]) -> None:
    tmp = os.path.join(d, ".meta.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(d, "meta.json"))


def read_meta(d: str) -> Optional[Dict[str, object]]:
    try:
        with open(os.path.join(d, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ensure_full_log(spec: Spec) -> str:
    """The cached full log (versions 0 .. C+TAIL-1) that tables hard-link from."""
    d = os.path.join(DATA_DIR, "logs", spec.key)
    if read_meta(d):
        return d
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    t0 = time.perf_counter()
    total = 0
    for v in range(spec.commits + TAIL):
        text = _commit_text(spec, v).encode("utf-8")
        p = os.path.join(d, _commit_name(v))
        with open(p, "wb") as f:
            f.write(text)
        ts = commit_ts(v) / 1000.0
        os.utime(p, (ts, ts))
        total += len(text)
    adds = spec.body_adds + spec.fill_adds + TAIL * TAIL_ADDS
    _write_meta(d, {"spec": spec.__dict__, "log_bytes": total, "adds_total": adds,
                    "gen_seconds": round(time.perf_counter() - t0, 2)})
    _log(f"wrote log {spec.key}: {spec.commits + TAIL} commits, {total / 1e6:.1f} MB, "
         f"{time.perf_counter() - t0:.1f} s")
    return d


def _link_commits(src: str, dst_log: str, upto: int) -> int:
    total = 0
    for v in range(upto + 1):
        name = _commit_name(v)
        s = os.path.join(src, name)
        os.link(s, os.path.join(dst_log, name))
        total += os.path.getsize(s)
    return total


def log_bytes(table: str, lo: int, hi: int) -> int:
    """Bytes of JSON commits lo..hi (inclusive) in a table."""
    log = os.path.join(table, "_delta_log")
    return sum(os.path.getsize(os.path.join(log, _commit_name(v))) for v in range(lo, hi + 1))


def ensure_json_table(spec: Spec) -> str:
    """JSON-only table: versions 0 .. C-1, no checkpoint."""
    d = os.path.join(DATA_DIR, "tables", f"json-{spec.key}")
    if read_meta(d):
        return d
    src = ensure_full_log(spec)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "_delta_log"))
    nbytes = _link_commits(src, os.path.join(d, "_delta_log"), spec.last)
    t0 = time.perf_counter()
    truth = spec.truth(spec.last)
    _write_meta(d, {"spec": spec.__dict__, "kind": "json", "latest": truth, "checkpoint": None,
                    "json_commits_replayed": spec.commits, "log_bytes": nbytes,
                    "truth_seconds": round(time.perf_counter() - t0, 2)})
    _log(f"table json-{spec.key}: {truth['count']} active files at v{spec.last}")
    return d


def ensure_checkpoint_table(spec: Spec, after: int) -> str:
    """Checkpoint at C-1 (written by delta-rs) plus `after` (0 or 10) JSON commits after it."""
    if after not in (0, TAIL):
        raise ValueError(f"after must be 0 or {TAIL}")
    d = os.path.join(DATA_DIR, "tables", f"ckpt-{spec.key}-after{after}")
    if read_meta(d):
        return d
    src = ensure_full_log(spec)
    shutil.rmtree(d, ignore_errors=True)
    log = os.path.join(d, "_delta_log")
    os.makedirs(log)
    if after == 0:
        _link_commits(src, log, spec.last)
        import deltalake  # checkpoints come from delta-rs, never from deltalog
        t0 = time.perf_counter()
        deltalake.DeltaTable(d).create_checkpoint()
        ck_s = time.perf_counter() - t0
        del deltalake
    else:
        base = ensure_checkpoint_table(spec, 0)
        _link_commits(src, log, spec.last + after)
        blog = os.path.join(base, "_delta_log")
        for name in os.listdir(blog):
            if ".checkpoint." in name:
                os.link(os.path.join(blog, name), os.path.join(log, name))
        shutil.copyfile(os.path.join(blog, "_last_checkpoint"), os.path.join(log, "_last_checkpoint"))
        ck_s = None
    ck_files = sorted(n for n in os.listdir(log) if ".checkpoint." in n)
    if not ck_files or not ck_files[0].startswith(f"{spec.last:020d}."):
        raise RuntimeError(f"delta-rs did not write the expected checkpoint in {log}: {ck_files}")
    latest = spec.last + after
    t0 = time.perf_counter()
    truth = spec.truth(latest)
    _write_meta(d, {"spec": spec.__dict__, "kind": "checkpoint", "after": after, "latest": truth,
                    "checkpoint": {"version": spec.last, "files": ck_files,
                                   "bytes": sum(os.path.getsize(os.path.join(log, n)) for n in ck_files),
                                   "delta_rs_seconds": None if ck_s is None else round(ck_s, 2)},
                    "json_commits_replayed": after,
                    "log_bytes": log_bytes(d, spec.last + 1, latest) if after else 0,
                    "truth_seconds": round(time.perf_counter() - t0, 2)})
    _log(f"table ckpt-{spec.key}-after{after}: {truth['count']} active files at v{latest}"
         + (f" (delta-rs checkpoint {ck_s:.1f} s)" if ck_s is not None else ""))
    return d


def truth_at(spec: Spec, version: int, table: str) -> Dict[str, object]:
    """Ground truth at an older version, cached in the table's meta.json."""
    meta = read_meta(table) or {}
    cache = meta.setdefault("truth_at", {})
    if str(version) not in cache:
        cache[str(version)] = spec.truth(version)
        _write_meta(table, meta)
    return cache[str(version)]


# ----------------------------------------------------------------------------- standard set

S1_SPECS = {"10k": Spec(1000, 10_000), "100k": Spec(1000, 100_000), "1M": Spec(100, 1_000_000)}
S2_SPECS = {"a": Spec(1000, 10_000), "b": Spec(1000, 100_000), "c": Spec(10_000, 100_000),
            "d": Spec(100, 1_000_000)}


def standard_specs(with_1m: bool, with_c: bool, with_d: bool, partitioned: bool = False
                   ) -> Tuple[Dict[str, Spec], Dict[str, Spec]]:
    def p(s: Spec) -> Spec:
        return Spec(s.commits, s.files, partitioned)
    s1 = {k: p(v) for k, v in S1_SPECS.items() if with_1m or k != "1M"}
    s2 = {k: p(v) for k, v in S2_SPECS.items()
          if k in ("a", "b") or (k == "c" and with_c) or (k == "d" and with_d)}
    return s1, s2


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int)
    ap.add_argument("--commits", type=int)
    ap.add_argument("--partitioned", action="store_true")
    ap.add_argument("--standard", action="store_true", help="build the benchmark's table set")
    ap.add_argument("--quick", action="store_true", help="with --standard: no 1M, no (c)/(d)")
    ap.add_argument("--full", action="store_true", help="with --standard: include (c) and (d)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.standard:
        s1, s2 = standard_specs(not a.quick, a.full, a.full, a.partitioned)
        for s in s1.values():
            ensure_checkpoint_table(s, 0)
            ensure_checkpoint_table(s, TAIL)
        for s in s2.values():
            ensure_json_table(s)
    elif a.files and a.commits:
        s = Spec(a.commits, a.files, a.partitioned)
        ensure_json_table(s)
        ensure_checkpoint_table(s, 0)
        ensure_checkpoint_table(s, TAIL)
    else:
        ap.error("give --files and --commits, or --standard")
    _log(f"done in {time.perf_counter() - t0:.1f} s; data under {DATA_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
