"""Runs seeded sequences: writes with the sequence's writers, reads every version with every reader
(plain, with generated predicates, as of timestamps between commits), compares with the reference
and classifies each difference (pass / fail / known difference by a named rule / unsupported)."""
from __future__ import annotations

import json
import os
import random
import shutil
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from . import logcheck, rules
from .engines import (DeltaRsEngine, DuckDBEngine, PolarsEngine, SparkEngine, Unsupported, latest_version,
                      normalize, op_payload)
from .generator import CAPABLE, READERS, WRITER_MODES, WRITERS, Op, Sequence_, generate
from .predicates import evaluate, family, gen_pred
from .reference import State, apply, canon, multiset, row_key


@dataclass
class Check:
    seed: int
    profile: str
    writer: str                 # the sequence's writer mode (deltalog / delta-spark / delta-rs / mixed)
    reader: str                 # a reader, or "write" for an operation's own success
    version: int
    kind: str                   # plain / pred / asof / write
    what: str                   # predicate text, timestamp, or operation
    features: List[str]
    status: str = "pass"        # pass / fail / known / unsupported
    rule: str = ""
    detail: str = ""
    writers: List[str] = field(default_factory=list)   # engines whose commits the version holds
    params: str = ""            # the run's sizes (same seed + sizes = same sequence and queries)

    def repro(self) -> str:
        r = "" if self.reader == "write" else f",reader={self.reader}"
        return f"python -m integration.interop --seed {self.seed} --only writer={self.writer}{r}{self.params}"

    def header(self) -> str:
        return (f"seed={self.seed} profile={self.profile} writer={self.writer} reader={self.reader} "
                f"v{self.version} {self.kind}: {self.what} [{self.status}{' ' + self.rule if self.rule else ''}]\n"
                f"  reproduce: {self.repro()}")


def parse_seeds(spec: str) -> List[int]:
    """"4" -> 0..3; "0-9,17" -> those."""
    spec = str(spec).strip()
    if spec.isdigit():
        return list(range(int(spec)))
    out: List[int] = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


class Matrix:
    def __init__(self, workdir: str, spark_peers: Dict[str, Any], readers=READERS, n_preds: int = 3,
                 asof_pairs: int = 3, log=print, max_ops: Optional[int] = None):
        self.workdir = workdir
        self.engines: Dict[str, Any] = {name: SparkEngine(p) for name, p in spark_peers.items()}
        self.engines["delta-rs"] = DeltaRsEngine()
        self.engines["duckdb"] = DuckDBEngine()
        self.engines["polars"] = PolarsEngine()
        self.readers = [r for r in readers if r in self.engines]
        self.n_preds = n_preds
        self.asof_pairs = asof_pairs
        self.log = log
        self.max_ops = max_ops

    # -------------------------------------------------------------------------------- writes
    def _write(self, seq: Sequence_, path: str, checks: List[Check]) -> Tuple[Dict[int, State], Dict[int, List[str]], List[str]]:
        props = dict(seq.profile.properties)
        self._cum: List[str] = []
        states: Dict[int, State] = {}
        writers_at: Dict[int, List[str]] = {}
        history: List[State] = []
        op_version: List[int] = []
        state: Optional[State] = None
        op_feats: List[str] = []
        feats_at: Dict[int, List[str]] = {}
        i = 0
        while i < len(seq.ops):
            w = seq.ops[i].writer
            j = i
            while (j < len(seq.ops) and seq.ops[j].writer == w and seq.ops[j].kind != "restore"
                   and isinstance(self.engines[w], SparkEngine)):   # one round trip per run of Spark ops
                j += 1
            j = max(j, i + 1)
            batch = seq.ops[i:j]
            payloads = [self._payload(seq, o, w, props, op_version) for o in batch]
            res = self.engines[w].apply(path, payloads)
            for o, r in zip(batch, res):
                if r["ok"]:
                    bad = logcheck.problems(path, r["version"]) if r["version"] >= 0 else []
                    if bad:
                        r.update(ok=False, invalid=True, error="the commit left the table invalid: " + "; ".join(bad))
                if not r["ok"]:
                    res = res[:res.index(r) + 1]
                    break
                state = self._record(seq, o, r["version"], state, history, op_version, states, writers_at,
                                     op_feats, feats_at, checks)
                i += 1
            if len(res) < len(batch) or not res[-1]["ok"]:
                o = seq.ops[i]
                err = res[-1].get("error", "no reply")
                c = Check(seq.seed, seq.profile.name, seq.writer_mode, "write", latest_version(path), "write",
                          o.describe(), seq.profile.features + [f"write: {o.kind}"], "fail", "", err,
                          [o.writer])
                c.rule = rules.classify_write(seq, o, err) or ""
                c.status = "known" if c.rule else "fail"
                checks.append(c)
                done = False
                if res[-1].get("invalid"):   # drop the invalid commit: the next writer starts from the version before
                    v_bad = res[-1]["version"]
                    if v_bad != latest_version(path):
                        raise RuntimeError(f"seed {seq.seed}: {o.describe()} left the table invalid and later "
                                           f"operations were applied on top:\n{err}")
                    if o.kind == "create":
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.remove(os.path.join(path, "_delta_log", f"{v_bad:020d}.json"))
                for alt in [e for e in WRITERS if e in CAPABLE[o.kind] and e != o.writer]:
                    before = latest_version(path)
                    rr = self.engines[alt].apply(path, [self._payload(seq, o, alt, props, op_version)])
                    if rr[0]["ok"]:
                        o.writer = alt
                        state = self._record(seq, o, rr[0]["version"], state, history, op_version, states,
                                             writers_at, op_feats, feats_at, checks)
                        done = True
                        break
                if not done:
                    raise RuntimeError(f"seed {seq.seed}: no writer could apply {o.describe()}:\n{err}")
                i += 1
        self.feats_at = feats_at
        self._op_version = op_version
        return states, writers_at, op_feats

    def _payload(self, seq, o: Op, w: str, props, op_version) -> Dict[str, Any]:
        dialect = self.engines[w].dialect
        rv = op_version[o.restore_to] if o.kind == "restore" else None
        return op_payload(o, dialect, seq.partition_by, props, rv)

    def _record(self, seq, o, version, state, history, op_version, states, writers_at, op_feats, feats_at, checks):
        state = apply(state, o, seq.profile.partitioned, history)
        history.append(state)
        op_version.append(version)
        prev = writers_at.get(op_version[o.restore_to], []) if o.kind == "restore" else self._cum
        self._cum = sorted(set(prev) | {o.writer})
        writers_at[version] = self._cum
        states[version] = state
        feat = {"merge_schema": "schema evolution", "checkpoint": "checkpoint", "delete": "DELETE",
                "update": "UPDATE", "merge": "MERGE", "optimize": "OPTIMIZE", "restore": "RESTORE",
                "replace_where": "replaceWhere", "dynamic_overwrite": "dynamic overwrite",
                "overwrite": "overwrite"}.get(o.kind)
        if feat and feat not in op_feats:
            op_feats.append(feat)
        feats_at[version] = list(op_feats)
        checks.append(Check(seq.seed, seq.profile.name, seq.writer_mode, "write", version, "write", o.describe(),
                            seq.profile.features + [f"write: {o.kind}"], "pass", writers=[o.writer]))
        return state

    # ------------------------------------------------------------------------------ commit times
    @staticmethod
    def commit_times(path: str, last: int) -> Dict[int, int]:
        out = {}
        for v in range(last + 1):
            f = os.path.join(path, "_delta_log", f"{v:020d}.json")
            ict = None
            with open(f) as fh:
                for line in fh:
                    a = json.loads(line)
                    if "commitInfo" in a and a["commitInfo"].get("inCommitTimestamp") is not None:
                        ict = int(a["commitInfo"]["inCommitTimestamp"])
            out[v] = ict if ict is not None else int(os.stat(f).st_mtime_ns // 1_000_000)
        return out

    # ---------------------------------------------------------------------------------- a seed
    def run_seed(self, seed: int, writer_mode: Optional[str] = None, readers: Optional[List[str]] = None) -> List[Check]:
        seq = generate(seed, writer_mode=writer_mode, max_ops=self.max_ops)
        path = os.path.join(self.workdir, f"seed{seed}-{seq.writer_mode}")
        shutil.rmtree(path, ignore_errors=True)
        checks: List[Check] = []
        t0 = time.time()
        states, writers_at, _ = self._write(seq, path, checks)
        self._states = states
        t_write = time.time() - t0
        last = latest_version(path)
        times = self.commit_times(path, last)
        self._checkpoints = []   # (version, engine): the last operation that reached that version wrote it
        for f in os.listdir(os.path.join(path, "_delta_log")):
            if ".checkpoint" in f and f[:20].isdigit():
                v = int(f[:20])
                ws = [o.writer for o, ov in zip(seq.ops, self._op_version) if ov == v]
                if ws:
                    self._checkpoints.append((v, ws[-1]))
        rng = random.Random(seed * 1000003 + 17)
        queries: List[Dict[str, Any]] = []
        versions = sorted(v for v in states if v <= last)
        for v in versions:
            st = states[v]
            queries.append({"qid": len(queries), "group": str(v), "version": v, "expect": v, "kind": "plain"})
            for _ in range(self.n_preds):
                q = gen_pred(rng, st.names, seq.profile.partitioned)
                queries.append({"qid": len(queries), "group": str(v), "version": v, "expect": v, "kind": "pred",
                                "pred": q})
        pairs = [(a, b) for a, b in zip(versions, versions[1:]) if b == a + 1 and times[b] - times[a] >= 4]
        for a, b in rng.sample(pairs, min(self.asof_pairs, len(pairs))):
            ts = (times[a] + times[b]) // 2
            queries.append({"qid": len(queries), "group": str(a), "timestamp_ms": ts, "expect": a, "kind": "asof"})
        readers = [r for r in (readers or self.readers) if r in self.engines]
        results: Dict[str, Dict[int, Any]] = {}

        took: Dict[str, float] = {}

        def run(r: str) -> None:
            t = time.time()
            try:
                results[r] = self.engines[r].read(path, queries)
                took[r] = time.time() - t
            except BaseException as e:  # the whole reader failed (e.g. its process died)
                results[r] = {q["qid"]: RuntimeError(f"{type(e).__name__}: {e}") for q in queries}
        threads = [threading.Thread(target=run, args=(r,)) for r in readers if isinstance(self.engines[r], SparkEngine)]
        for t in threads:
            t.start()
        for r in readers:
            if not isinstance(self.engines[r], SparkEngine):
                run(r)
        for t in threads:
            t.join()
        for r in readers:
            for q in queries:
                checks.append(self._compare(seq, r, q, results[r].get(q["qid"], RuntimeError("no result")),
                                            states[q["expect"]], writers_at.get(q["expect"], []), last))
        params = f" --preds {self.n_preds} --asof {self.asof_pairs}" + (
            f" --max-ops {self.max_ops}" if self.max_ops is not None else "")
        for c in checks:
            c.params = params
        self.log(f"seed {seed} {seq.profile.name} writer={seq.writer_mode}: {len(seq.ops)} ops "
                 f"({', '.join(o.describe() for o in seq.ops)}), versions 0..{last}, {len(queries)} queries x "
                 f"{len(readers)} readers; write {t_write:.1f}s, total {time.time() - t0:.1f}s; reads "
                 + ", ".join(f"{r} {t:.1f}s" for r, t in took.items()))
        return checks

    def _compare(self, seq: Sequence_, reader: str, q: Dict[str, Any], res: Any, st: State, writers: List[str],
                 last: int) -> Check:
        v = q["expect"]
        feats = list(seq.profile.features) + self.feats_at.get(v, [])
        pred = q.get("pred")
        if q["kind"] == "plain":
            what = "all rows"
            feats.append("read latest" if v == last else "time travel (version)")
        elif q["kind"] == "pred":
            what = pred.describe()
            feats.append(family(pred.ctype))
            if pred.and_ is not None:
                feats.append("filter: partition AND data")
        else:
            what = f"timestampAsOf {q['timestamp_ms']} ms (between v{v} and v{v + 1})"
            feats.append("time travel (timestamp)")
        c = Check(seq.seed, seq.profile.name, seq.writer_mode, reader, v, q["kind"], what, feats, writers=writers)
        expected = [r for r in st.rows if pred is None or evaluate(pred, r) is True]
        if isinstance(res, Unsupported):
            c.status, c.detail = "unsupported", str(res)
            return c
        if isinstance(res, BaseException):
            c.detail = str(res)
            c.rule = rules.classify_error(seq, c, pred, c.detail, st) or ""
            c.status = "known" if c.rule else "fail"
            return c
        try:
            got = normalize(res, st.columns)
        except Exception as e:
            c.detail = f"{type(e).__name__}: {e}"
            c.rule = rules.classify_error(seq, c, pred, c.detail, st) or ""
            c.status = "known" if c.rule else "fail"
            return c
        try:
            exp_ms = multiset(expected, st.columns)
            got_ms = multiset(got, st.columns)
        except Exception as e:
            c.status, c.detail = "fail", f"could not compare values: {type(e).__name__}: {e}"
            return c
        if exp_ms == got_ms:
            return c
        by_key_e = {row_key(r, st.columns): r for r in expected}
        by_key_g = {row_key(r, st.columns): r for r in got}
        missing = [by_key_e[k] for k in (exp_ms - got_ms).elements()]
        extra = [by_key_g[k] for k in (got_ms - exp_ms).elements()]
        history = [s for v2, s in self._states.items() if v2 < v]
        rule, left_m, left_e = rules.classify_diff(seq, c, pred, missing, extra, st, history,
                                                   list(zip(seq.ops, self._op_version)), self._checkpoints)
        c.rule = rule or ""
        c.status = "known" if c.rule else "fail"
        c.detail = diff_text(missing, extra, st, pred)
        if not rule and (len(left_m), len(left_e)) != (len(missing), len(extra)):
            c.detail += "\nnot explained by any rule:\n" + diff_text(left_m, left_e, st, pred)
        return c


def _short(r: Dict[str, Any], cols: List[str]) -> str:
    return "{" + ", ".join(f"{c}: {r.get(c)!r}" for c in cols) + "}"


def diff_text(missing, extra, st: State, pred) -> str:
    cols = st.names
    lines = [f"missing {len(missing)} row(s) the reference has, {len(extra)} extra row(s):"]
    for r in missing[:6]:
        lines.append("  - " + _short(r, cols))
    for r in extra[:6]:
        lines.append("  + " + _short(r, cols))
    return "\n".join(lines)
