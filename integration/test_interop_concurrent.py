"""deltalog and delta-spark (and delta-rs) appending to one table at the same time (issue 25).

One Spark process per engine (``peers.SparkPeer``), started once per session. For each case a table
is created by one engine; then deltalog and delta-spark each run a loop of blind appends inside one
``peer.run`` call, both calls issued at once from two threads so the processes race, while a thread
of this process appends through delta-rs. Every append writes ``ROWS`` rows ``(writer, seq, k)``, so
a lost or duplicated append shows in the data.

The two Spark writers go in rounds: a writer starts append i once the other has finished append
i-1, after a random delay of up to 0.8 x the other's last append time (seeded,
``DELTALOG_INTEROP_SEED``), so in each round both transactions are open at once and either may
commit first; the loser must resolve the conflict (its commitInfo's readVersion is then older than
the previous version). Without the rounds deltalog (about 1 s per append here) finishes long before
delta-spark, whose appends after another engine's commit take 3-10 s on a loaded 2-core machine
(it rebuilds its snapshot's protocol and metadata with Spark jobs when the newest version has no
``.crc``, which deltalog does not write), and the processes hardly overlap.

Checked afterwards, from the files alone:

* the log: versions 0..V contiguous, one complete commit file each, nothing but commitInfo + add in
  an append, commitInfo plausible for the engine that wrote it (engineInfo, operation WRITE,
  mode Append), every file a commit adds holds the rows of exactly one append of that engine;
* every append that returned success is in exactly one commit with all its rows, every one that
  raised is absent (and no append raised: blind appends must not fail in any of the engines);
* the writers really raced: the deltalog / delta-spark commits alternate several times;
* deltalog, delta-spark and delta-rs read the same rows (the expected ones) at the final version
  and at intermediate versions;
* every checkpoint (whoever wrote it, while the others were appending) reads completely with
  pyarrow and holds exactly the live files of its version; ``_last_checkpoint`` names a complete
  one; a copy of the table whose log starts at a checkpoint (no earlier commits, so the state can
  only come from that checkpoint) loads in all three engines with the right rows.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple
from urllib.parse import unquote

import pytest

from peers import SparkPeer

ENGINES = ("deltalog", "delta-spark")
FORMAT = {"deltalog": "deltalog", "delta-spark": "delta"}
ROWS = 3  # rows per append: (writer, seq, k) for k in 0..ROWS-1
SCHEMA = "writer string, seq long, k long"
CREATE_SEQ = -1  # seq of the rows written by the creating commit
MIN_SWITCHES = 4  # deltalog <-> delta-spark alternations the log must show (at least 1 per round)
COMMIT_RE = re.compile(r"^(\d{20})\.json$")
CHECKPOINT_RE = re.compile(r"^(\d{20})\.checkpoint\.parquet$")


@dataclass(frozen=True)
class Case:
    id: str
    creator: str
    partitioned: bool
    checkpoint_interval: Optional[int]  # None: the engines' default (10)
    spark_appends: Tuple[int, int]      # per Spark engine: (bounded, full)
    rs_appends: Tuple[int, int]         # delta-rs: (bounded, full)


CASES = [
    # Default checkpoint interval (10): a checkpoint at 10 (20, ...) by whichever engine committed it.
    Case("created-by-deltalog", "deltalog", False, None, (5, 100), (4, 30)),
    # Every other version is checkpointed, by whichever engine committed it, while the others append.
    Case("created-by-delta-spark-partitioned-checkpoint-interval-2", "delta-spark", True, 2, (5, 100), (4, 30)),
]


# ------------------------------------------------------------------------------------ peer code

WARM_UP = """
for i in range(2):
    df = spark.createDataFrame([('warm', i, 0)], 'writer string, seq long, k long')
    df.write.format(args['fmt']).mode('append').save(args['path'])
result = spark.read.format(args['fmt']).option('versionAsOf', 1).load(args['path']).count()
"""

CREATE = """
a = args
w = spark.createDataFrame([(a['writer'], a['seq'], k) for k in range(a['rows'])], a['schema']).write.format(a['fmt'])
if a['partitioned']:
    w = w.partitionBy('writer')
for k, v in a['props'].items():
    w = w.option(k, v)
w.save(a['path'])
"""

APPEND_LOOP = """
import os, random, time, traceback
a = args
rng = random.Random(a['seed'])
others = [w for w in a['spark_writers'] if w != a['writer']]
rounds = a['rounds']


def finished(writer, seq):
    f = os.path.join(rounds, f'{writer}-{seq}')
    return float(open(f).read()) if os.path.exists(f) and os.path.getsize(f) else None


while time.time() < a['start_at']:
    time.sleep(0.005)
out = []
for seq in range(a['n']):
    # Round seq starts when every other Spark writer has finished append seq-1; then a random
    # delay up to the slowest one's last append time, so either engine may commit first.
    longest = 1.0
    deadline = time.time() + 600
    for o in others:
        while seq > 0 and finished(o, seq - 1) is None and time.time() < deadline:
            time.sleep(0.01)
        longest = max(longest, finished(o, seq - 1) or 0.0)
    time.sleep(rng.uniform(0, min(0.8 * longest, 10.0)))
    t0 = time.time()
    try:
        df = spark.createDataFrame([(a['writer'], seq, k) for k in range(a['rows'])], a['schema'])
        df.write.format(a['fmt']).mode('append').save(a['path'])
        out.append({'seq': seq, 'ok': True, 't0': t0, 't1': time.time()})
    except Exception as e:
        out.append({'seq': seq, 'ok': False, 't0': t0, 't1': time.time(),
                    'error': ''.join(traceback.format_exception_only(type(e), e))[-3000:]})
    tmp = os.path.join(rounds, f'.{a["writer"]}-{seq}')
    with open(tmp, 'w') as f:
        f.write(str(time.time() - t0))
    os.rename(tmp, os.path.join(rounds, f'{a["writer"]}-{seq}'))
result = out
"""

READ = """
out = []
for path, version in args['reads']:
    try:
        r = spark.read.format(args['fmt'])
        if version is not None:
            r = r.option('versionAsOf', version)
        rows = r.load(path).select('writer', 'seq', 'k').collect()
        out.append({'ok': True, 'rows': sorted([r[0], r[1], r[2]] for r in rows)})
    except Exception as e:
        out.append({'ok': False, 'error': repr(e)[-3000:]})
result = out
"""


@pytest.fixture(scope="session")
def peers():
    """deltalog's and delta-spark's Spark processes, started (in parallel) once per session and
    warmed up (a few appends and reads of a scratch table) so the first timed append is not a
    cold JVM's."""
    import tempfile
    scratch = tempfile.mkdtemp(prefix="deltalog-interop-warm-")
    started: Dict[str, SparkPeer] = {}
    errors: List[BaseException] = []

    def start(engine: str) -> None:
        try:
            peer = SparkPeer(engine)
            started[engine] = peer
            if engine == "delta-spark":
                # State reconstruction (checkpoints, time travel) runs in 50 tasks by default; on
                # local[2] that, not the log, dominates delta-spark's checkpoint time.
                peer.run("spark.conf.set('spark.databricks.delta.snapshotPartitions', '2')")
            assert peer.run(WARM_UP, fmt=FORMAT[engine], path=os.path.join(scratch, engine)) == 2
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=start, args=(e,)) for e in ENGINES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        if errors:
            raise errors[0]
        yield started
    finally:
        for p in started.values():
            p.close()
        shutil.rmtree(scratch, ignore_errors=True)


# ------------------------------------------------------------------------------------ writers


def deltars_append_loop(path: str, n: int, start_at: float, pause: float, out: List[dict]) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake
    while time.time() < start_at:
        time.sleep(0.005)
    for seq in range(n):
        t0 = time.time()
        try:
            data = pa.table({"writer": pa.array(["delta-rs"] * ROWS, pa.string()),
                             "seq": pa.array([seq] * ROWS, pa.int64()),
                             "k": pa.array(range(ROWS), pa.int64())})
            write_deltalake(path, data, mode="append")
            out.append({"seq": seq, "ok": True, "t0": t0, "t1": time.time()})
        except Exception as e:  # noqa: BLE001 - recorded and asserted on
            out.append({"seq": seq, "ok": False, "t0": t0, "t1": time.time(),
                        "error": "".join(traceback.format_exception_only(type(e), e))[-3000:]})
        time.sleep(pause)


def run_writers(peers: Dict[str, SparkPeer], path: str, rounds: Path, n_spark: int, n_rs: int,
                seed: int) -> Dict[str, List[dict]]:
    """The three append loops at once; returns each writer's per-append outcomes."""
    results: Dict[str, Any] = {}
    rounds.mkdir()
    start_at = time.time() + 0.5

    def spark_loop(engine: str) -> None:
        try:
            results[engine] = peers[engine].run(APPEND_LOOP, writer=engine, fmt=FORMAT[engine], path=path,
                                                n=n_spark, rows=ROWS, schema=SCHEMA, start_at=start_at,
                                                spark_writers=list(ENGINES), rounds=str(rounds),
                                                seed=seed * 2 + ENGINES.index(engine))
        except BaseException as e:  # noqa: BLE001 - the peer itself broke: reported below
            results[engine] = e

    rs_out: List[dict] = []
    threads = [threading.Thread(target=spark_loop, args=(e,)) for e in ENGINES]
    # delta-rs commits in a few ms: paced so its appends spread over the Spark writers' run.
    threads.append(threading.Thread(target=deltars_append_loop, args=(path, n_rs, start_at, 1.0, rs_out)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for engine in ENGINES:
        if isinstance(results[engine], BaseException):
            raise AssertionError(f"{engine}'s append loop did not return") from results[engine]
    results["delta-rs"] = rs_out
    return results


# ------------------------------------------------------------------------------------ the log


def engine_of(info: dict) -> str:
    """The writing engine, from commitInfo.engineInfo."""
    ei = info.get("engineInfo") or ""
    if "deltalog/" in ei:
        return "deltalog"
    if "Delta-Lake/" in ei:
        return "delta-spark"
    if ei.startswith("delta-rs"):
        return "delta-rs"
    raise AssertionError(f"commitInfo with an unknown engineInfo: {info}")


@dataclass
class Commit:
    version: int
    engine: str
    info: dict
    adds: List[dict]
    append: Tuple[str, int]  # (writer, seq) of the rows it adds


def data_rows(table: Path, add: dict) -> List[Tuple[str, int, int]]:
    """The rows (writer, seq, k) of one added file (partition values from the add action)."""
    import pyarrow.parquet as pq
    t = pq.read_table(table / unquote(add["path"]))
    cols = t.to_pydict()
    n = t.num_rows
    writers = cols["writer"] if "writer" in cols else [add["partitionValues"]["writer"]] * n
    return [(writers[i], cols["seq"][i], cols["k"][i]) for i in range(n)]


def read_commits(table: Path, creator: str, partitioned: bool) -> List[Commit]:
    log = table / "_delta_log"
    names = os.listdir(log)
    versions = sorted(int(m.group(1)) for n in names if (m := COMMIT_RE.match(n)))
    assert versions == list(range(len(versions))), f"commit versions not contiguous: {versions}"
    leftovers = [n for n in names if n.endswith(".tmp") or ".json." in n and not n.endswith(".json.crc")]
    assert not leftovers, f"temporary / stray commit files left in the log: {leftovers}"
    assert not (log / "_commits").exists() or not os.listdir(log / "_commits"), "staged commits in _delta_log/_commits"

    commits = []
    for v in versions:
        text = (log / f"{v:020d}.json").read_text()
        actions = [json.loads(line) for line in text.splitlines() if line.strip()]
        kinds = Counter(next(iter(a)) for a in actions)
        assert kinds["commitInfo"] == 1, f"version {v}: {kinds['commitInfo']} commitInfo actions"
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        engine = engine_of(info)
        assert info.get("operation") == "WRITE", f"version {v}: operation {info.get('operation')!r}"
        adds = [a["add"] for a in actions if "add" in a]
        assert adds, f"version {v} adds no file"
        if v == 0:
            assert engine == creator, f"version 0 written by {engine}, not {creator}"
            assert set(kinds) == {"commitInfo", "protocol", "metaData", "add"}, f"version 0: {dict(kinds)}"
            md = next(a["metaData"] for a in actions if "metaData" in a)
            assert md["partitionColumns"] == (["writer"] if partitioned else [])
        else:
            # A blind append: nothing but its commitInfo and its adds.
            assert set(kinds) == {"commitInfo", "add"}, f"version {v} ({engine}): {dict(kinds)}"
            assert info["operationParameters"]["mode"] == "Append", f"version {v}: {info}"
            if engine != "delta-rs":  # delta-rs does not write these
                assert info.get("isBlindAppend") is True, f"version {v}: {info}"
                assert isinstance(info.get("readVersion"), int) and info["readVersion"] < v, f"version {v}: {info}"
                assert info.get("txnId"), f"version {v}: no txnId"
        rows = [r for add in adds for r in data_rows(table, add)]
        appends = {(w, s) for w, s, _ in rows}
        assert len(appends) == 1, f"version {v} ({engine}) adds rows of several appends: {sorted(appends)}"
        (w, s), = appends
        assert w == engine, f"version {v} written by {engine} adds {w}'s rows"
        assert sorted(k for _, _, k in rows) == list(range(ROWS)), f"version {v}: rows {rows}"
        if partitioned:
            assert all(a["partitionValues"] == {"writer": engine} for a in adds), f"version {v}: {adds}"
        commits.append(Commit(v, engine, info, adds, (w, s)))
    return commits


def retried(c: Commit) -> bool:
    """The commit lost at least one race and was committed after checking the winners."""
    if c.engine == "delta-rs":
        return int((c.info.get("operationMetrics") or {}).get("num_retries", 0)) > 0
    return c.version > 0 and c.info["readVersion"] < c.version - 1


def expected_rows(commits: List[Commit], version: int) -> List[List[Any]]:
    return sorted([w, s, k] for c in commits[:version + 1] for (w, s) in [c.append] for k in range(ROWS))


def live_paths(commits: List[Commit], version: int) -> set:
    return {unquote(a["path"]) for c in commits[:version + 1] for a in c.adds}


# ------------------------------------------------------------------------------------ checkpoints


def checkpoint_writer(path: Path) -> str:
    import pyarrow.parquet as pq
    created_by = pq.ParquetFile(path).metadata.created_by or ""
    if created_by.startswith("deltalog"):
        return "deltalog"
    if created_by.startswith("parquet-mr"):
        return "delta-spark"
    if created_by.startswith("parquet-rs"):
        return "delta-rs"
    raise AssertionError(f"{path.name}: unknown parquet writer {created_by!r}")


def check_checkpoint(table: Path, name: str, commits: List[Commit]) -> Tuple[int, str, int]:
    """Reads one checkpoint completely; its adds are exactly the live files of its version, one
    protocol and one metaData, no remove (nothing was ever removed). Returns (version, writer, rows)."""
    import pyarrow.parquet as pq
    v = int(CHECKPOINT_RE.match(name).group(1))
    t = pq.read_table(table / "_delta_log" / name).to_pylist()
    adds = {unquote(r["add"]["path"]) for r in t if r.get("add")}
    assert adds == live_paths(commits, v), f"{name}: adds differ from the live files of version {v}"
    assert sum(1 for r in t if r.get("protocol")) == 1, f"{name}: protocol rows"
    assert sum(1 for r in t if r.get("metaData")) == 1, f"{name}: metaData rows"
    assert not any(r.get("remove") for r in t), f"{name}: remove rows"
    return v, checkpoint_writer(table / "_delta_log" / name), len(t)


def table_from_checkpoint(table: Path, dst: Path, version: int, last_checkpoint: Optional[str]) -> None:
    """A copy of the table whose log is only the checkpoint at `version` and commit `version` (plus
    `_last_checkpoint` when the original one names this checkpoint): its state at `version` can only
    be read from the checkpoint."""
    shutil.copytree(table, dst, ignore=lambda d, names: ["_delta_log"] if Path(d) == table else [])
    log = dst / "_delta_log"
    log.mkdir()
    for name in (f"{version:020d}.checkpoint.parquet", f"{version:020d}.json"):
        shutil.copy2(table / "_delta_log" / name, log / name)
    if last_checkpoint is not None:
        (log / "_last_checkpoint").write_text(last_checkpoint)


# ------------------------------------------------------------------------------------ reads


def read_all(peers: Dict[str, SparkPeer], reads: List[Tuple[str, Optional[int]]]) -> Dict[str, List[dict]]:
    """Each (path, version) read by deltalog and delta-spark (at once, in their processes) and by
    delta-rs; rows as sorted [writer, seq, k] lists, or the error."""
    from deltalake import DeltaTable
    out: Dict[str, Any] = {}

    def spark_read(engine: str) -> None:
        try:
            out[engine] = peers[engine].run(READ, fmt=FORMAT[engine], reads=reads)
        except BaseException as e:  # noqa: BLE001
            out[engine] = e

    threads = [threading.Thread(target=spark_read, args=(e,)) for e in ENGINES]
    for t in threads:
        t.start()
    rs = []
    for path, version in reads:
        try:
            dt = DeltaTable(path, version=version) if version is not None else DeltaTable(path)
            d = dt.to_pyarrow_table(columns=["writer", "seq", "k"]).to_pydict()
            rs.append({"ok": True, "rows": sorted([w, s, k] for w, s, k in zip(d["writer"], d["seq"], d["k"]))})
        except Exception as e:  # noqa: BLE001
            rs.append({"ok": False, "error": repr(e)[-3000:]})
    for t in threads:
        t.join()
    for engine in ENGINES:
        if isinstance(out[engine], BaseException):
            raise AssertionError(f"{engine}'s reads did not return") from out[engine]
    out["delta-rs"] = rs
    return out


# ------------------------------------------------------------------------------------ the test


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_concurrent_appends_deltalog_delta_spark_delta_rs(peers, tmp_path, full, case: Case):
    t_start = time.time()
    table = tmp_path / "table"
    path = str(table)
    n_spark = case.spark_appends[1 if full else 0]
    n_rs = case.rs_appends[1 if full else 0]
    props = {} if case.checkpoint_interval is None else {"delta.checkpointInterval": str(case.checkpoint_interval)}
    interval = case.checkpoint_interval or 10

    peers[case.creator].run(CREATE, writer=case.creator, seq=CREATE_SEQ, rows=ROWS, schema=SCHEMA,
                            fmt=FORMAT[case.creator], partitioned=case.partitioned, props=props, path=path)
    t_created = time.time()
    seed = int(os.environ.get("DELTALOG_INTEROP_SEED", str(int(time.time()) % 100000)))
    outcomes = run_writers(peers, path, tmp_path / "rounds", n_spark, n_rs, seed)
    t_written = time.time()

    # -- every append accounted for: success -> exactly once; failure -> absent, error recorded
    commits = read_commits(table, case.creator, case.partitioned)
    final = commits[-1].version
    where: Dict[Tuple[str, int], List[int]] = {}
    for c in commits:
        where.setdefault(c.append, []).append(c.version)
    dup = {a: vs for a, vs in where.items() if len(vs) > 1}
    assert not dup, f"appends committed more than once: {dup}"
    assert where.get((case.creator, CREATE_SEQ)) == [0]
    failures: Dict[str, List[dict]] = {}
    for writer, results in outcomes.items():
        n = n_rs if writer == "delta-rs" else n_spark
        assert [r["seq"] for r in results] == list(range(n)), f"{writer}: outcomes {results}"
        for r in results:
            if r["ok"]:
                assert (writer, r["seq"]) in where, f"{writer}'s append {r['seq']} returned success but is not in the log"
            else:
                failures.setdefault(writer, []).append(r)
                assert (writer, r["seq"]) not in where, (
                    f"{writer}'s append {r['seq']} raised but was committed at {where[(writer, r['seq'])]}: {r['error']}")
    ok = {(w, r["seq"]) for w, rs in outcomes.items() for r in rs if r["ok"]}
    assert set(where) == ok | {(case.creator, CREATE_SEQ)}, "the log holds appends no writer reported"
    assert final == len(ok), f"final version {final}, {len(ok)} successful appends"

    # -- the writers raced: deltalog / delta-spark commits alternate
    spark_seq = [c.engine for c in commits[1:] if c.engine in ENGINES]
    switches = sum(1 for a, b in zip(spark_seq, spark_seq[1:]) if a != b)
    by_engine = Counter(c.engine for c in commits[1:])
    retries = Counter(c.engine for c in commits if retried(c))
    windows = {w: (min(r["t0"] for r in rs) - t_created, max(r["t1"] for r in rs) - t_created)
               for w, rs in outcomes.items() if rs}
    print(f"\n[{case.id}] seed {seed}, versions 0..{final}: commits {dict(by_engine)}, deltalog/delta-spark switches {switches}, "
          f"commits after lost races {dict(retries)}, failures {{{', '.join(f'{w}: {len(f)}' for w, f in failures.items())}}}, "
          f"writer windows (s) { {w: (round(a, 1), round(b, 1)) for w, (a, b) in windows.items()} }")
    print(f"[{case.id}] engines by version: " + "".join({"deltalog": "L", "delta-spark": "S", "delta-rs": "r"}[c.engine]
                                                        for c in commits))

    # Blind appends must not fail in any engine (conflict resolution retries them).
    assert not failures, "appends failed:\n" + "\n".join(
        f"{w} seq {r['seq']}: {r['error']}" for w, fs in failures.items() for r in fs)
    assert switches >= MIN_SWITCHES, (
        f"deltalog and delta-spark commits alternate only {switches} times: the writers did not race "
        f"({''.join('L' if e == 'deltalog' else 'S' for e in spark_seq)})")
    # ... and raced for the same versions: some commits were made after losing a version to another
    # writer (readVersion older than the previous version: the conflict check let them through).
    assert retries["deltalog"] + retries["delta-spark"] > 0, "no Spark writer ever lost a race for a version"

    # -- checkpoints written while the others appended
    log = table / "_delta_log"
    ckpts = sorted(n for n in os.listdir(log) if CHECKPOINT_RE.match(n))
    checked = [check_checkpoint(table, n, commits) for n in ckpts]
    for v, writer, _ in checked:
        # Each engine checkpoints after its own commits ...
        assert writer == commits[v].engine, f"checkpoint {v} written by {writer}, commit {v} by {commits[v].engine}"
    # ... deltalog and delta-spark after those at a multiple of the interval (delta-rs by a rule of its own).
    spark_ckpts = [v for v, w, _ in checked if w in ENGINES]
    want = [v for v in range(interval, final + 1, interval) if commits[v].engine in ENGINES]
    assert spark_ckpts == want, f"checkpoints by deltalog / delta-spark at {spark_ckpts}, expected {want} (interval {interval})"
    by_writer: Dict[str, List[int]] = {}
    for v, writer, _ in checked:
        by_writer.setdefault(writer, []).append(v)
    last_cp_text = (log / "_last_checkpoint").read_text() if (log / "_last_checkpoint").exists() else None
    assert last_cp_text is not None or not checked, "checkpoints written but no _last_checkpoint"
    last_cp = json.loads(last_cp_text) if last_cp_text else None
    if last_cp is not None:
        lv = int(last_cp["version"])
        rows_at = {v: n for v, _, n in checked}
        assert lv in rows_at, f"_last_checkpoint names version {lv}, which has no checkpoint"
        assert int(last_cp["size"]) == rows_at[lv], f"_last_checkpoint size {last_cp['size']} != {rows_at[lv]} rows"
    print(f"[{case.id}] checkpoints by writer {by_writer}, _last_checkpoint -> "
          f"{last_cp and last_cp['version']} (written by {last_cp and commits[int(last_cp['version'])].engine})")
    if case.checkpoint_interval is not None:
        # Which Spark engine commits the versions that get checkpoints depends on the race (on an
        # idle machine one engine can take every even version): at least one of them must have
        # checkpointed; every checkpoint is read by all three engines below.
        assert set(by_writer) & set(ENGINES), (
            f"checkpoints only by {sorted(by_writer)}: no Spark engine checkpointed while the others appended")

    # -- the same rows in every engine: final version, intermediate versions, and tables whose log
    #    starts at a checkpoint (one or two per writer of checkpoints)
    reads: List[Tuple[str, Optional[int]]] = [(path, None)]
    intermediate = sorted(({final // 4, final // 2, (3 * final) // 4} if full else {final // 2})
                          - {0, final})
    reads += [(path, v) for v in intermediate]
    from_ckpt: Set[int] = set()
    for writer, vs in by_writer.items():
        from_ckpt |= {vs[0], vs[-1]} if full else {vs[-1]}
    if full and last_cp is not None:
        from_ckpt.add(int(last_cp["version"]))
    for v in sorted(from_ckpt):
        dst = tmp_path / f"from-checkpoint-{v}"
        table_from_checkpoint(table, dst, v, last_cp_text if last_cp and int(last_cp["version"]) == v else None)
        reads.append((str(dst), None))
    expect = [expected_rows(commits, final if v is None else v) for _, v in reads[:1 + len(intermediate)]]
    expect += [expected_rows(commits, v) for v in sorted(from_ckpt)]
    got = read_all(peers, reads)
    wrong = []
    for engine, results in got.items():
        for (p, v), want, r in zip(reads, expect, results):
            what = f"{engine} reading {Path(p).name}" + ("" if v is None else f" @ v{v}")
            if not r["ok"]:
                wrong.append(f"{what}: {r['error']}")
            elif r["rows"] != want:
                have, exp = Counter(map(tuple, r["rows"])), Counter(map(tuple, want))
                wrong.append(f"{what}: missing {sorted((exp - have).elements())[:10]}, "
                             f"extra {sorted((have - exp).elements())[:10]}")
    assert not wrong, "reads differ from the expected rows:\n" + "\n".join(wrong)
    print(f"[{case.id}] {len(reads)} reads x 3 engines agree (final v{final}, intermediate {intermediate}, "
          f"from checkpoints {sorted(from_ckpt)}); create {t_created - t_start:.1f} s, appends "
          f"{t_written - t_created:.1f} s, checks {time.time() - t_written:.1f} s")
