"""DELETE / UPDATE / MERGE and appends from several Spark processes on one table at once (issue 27).

(a) N worker processes (``peers.SparkPeer("deltalog")``, one JVM each) run seeded random sequences
    of DELETE / UPDATE / MERGE (the Python ``DeltaTable`` API) and blind appends on one
    partitioned table, all released at once; an operation that loses a conflict
    (``DeltaConcurrentModificationException``, a typed subclass) is retried from a fresh snapshot.
    Every operation carries its id in ``commitInfo.userMetadata``
    (``spark.databricks.delta.commitInfo.userMetadata``). Afterwards: every operation that returned
    is in exactly one commit, no failed attempt left one; replaying the committed operations in
    version order over plain Python rows gives, at every version, exactly what deltalog reads
    there (time travel) and what delta-rs reads there.
(b) Two processes DELETE rows of the same file: the one that commits second had read the file the
    first removed and fails with ``ConcurrentDeleteReadException`` (delta-spark 4.4 checks deletes of
    read files before double deletes, so a DELETE, which records what it read, gets that class, never
    ``ConcurrentDeleteDeleteException``); the table holds the winner's result only. Deterministic:
    the first process stops right before its commit (the engine's one-shot test hook runs a query
    whose UDF waits for a file) until the second one has committed.

Bounded sizes by default (3 workers x 6 operations); ``DELTALOG_INTEGRATION_FULL=1`` for 4 x 20.
"""
from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from peers import SparkPeer

PARTS = 3
KEYS = 60
MERGE_LIMIT = 45  # MERGE ON t.k = s.k AND t.k < MERGE_LIMIT (a target-only conjunct)
INITIAL = [[k, 0, k % PARTS] for k in range(40)]

WORKER = """
from deltalog.exceptions import DeltaConcurrentModificationException
from deltalog.tables import DeltaTable

path = args["path"]
log = []
SCHEMA = "k BIGINT, v BIGINT, part INT"

def run(op):
    dt = DeltaTable.forPath(spark, path)
    if op["kind"] == "append":
        spark.createDataFrame([tuple(r) for r in op["rows"]], SCHEMA).write.format("deltalog").mode("append").save(path)
    elif op["kind"] == "delete":
        dt.delete(f"k >= {op['a']} AND k <= {op['a'] + 3}")
    elif op["kind"] == "update":
        dt.update(f"k >= {op['a']} AND k <= {op['a'] + 3}", {"v": f"v * 2 + {op['d']}"})
    else:
        src = spark.createDataFrame([tuple(r) for r in op["rows"]], SCHEMA)
        (dt.alias("t").merge(src.alias("s"), f"t.k = s.k AND t.k < {args['limit']}")
         .whenMatchedUpdate(set={"v": "t.v + s.v"}).whenNotMatchedInsertAll().execute())

import os
def latest():
    return max(int(f[:20]) for f in os.listdir(os.path.join(path, "_delta_log")) if f.endswith(".json"))

for op in args["ops"]:
    conflicts = []
    done = False
    while not done and len(conflicts) < args["attempts"]:
        spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", op["id"])
        try:
            before = latest()
            run(op)
            done = True
            op_range = [before, latest()]
        except DeltaConcurrentModificationException as e:
            conflicts.append([type(e).__name__, e.errorClass])
        finally:
            spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    log.append({"id": op["id"], "done": done, "conflicts": conflicts, "range": op_range if done else None})
result = log
"""


def make_ops(worker: int, n: int, rng: random.Random) -> List[Dict[str, Any]]:
    ops = []
    for i in range(n):
        kind = rng.choice(["append", "delete", "update", "merge"])
        op: Dict[str, Any] = {"id": f"w{worker}-{i}", "kind": kind}
        a = rng.randrange(KEYS - 3)
        if kind == "append":
            ks = [rng.randrange(KEYS) for _ in range(2)]
            op["rows"] = [[k, 1000 * worker + i, k % PARTS] for k in ks]
        elif kind in ("delete", "update"):
            op["a"], op["d"] = a, 100 * worker + i
        else:
            op["rows"] = [[a, 7 + worker, a % PARTS], [a + 1, 11 + i, (a + 1) % PARTS]]
        ops.append(op)
    return ops


def replay(rows: List[List[int]], op: Dict[str, Any]) -> List[List[int]]:
    """`op` applied to `rows` as the statement defines it."""
    kind = op["kind"]
    if kind == "append":
        return rows + [list(r) for r in op["rows"]]
    inside = lambda r: op.get("a", 0) <= r[0] <= op.get("a", 0) + 3  # noqa: E731
    if kind == "delete":
        return [r for r in rows if not inside(r)]
    if kind == "update":
        return [[r[0], r[1] * 2 + op["d"], r[2]] if inside(r) else r for r in rows]
    src = {r[0]: r for r in op["rows"]}
    out = [[r[0], r[1] + src[r[0]][1], r[2]] if (r[0] in src and r[0] < MERGE_LIMIT) else r for r in rows]
    matched = {r[0] for r in rows if r[0] in src and r[0] < MERGE_LIMIT}
    return out + [list(s) for k, s in src.items() if k not in matched]


def commit_infos(table: Path) -> List[dict]:
    files = sorted((table / "_delta_log").glob("*.json"))
    assert [int(f.stem) for f in files] == list(range(len(files))), "versions are not contiguous"
    return [next(json.loads(x)["commitInfo"] for x in f.read_text().splitlines() if "commitInfo" in x) for f in files]


def deltars_rows(table: Path, version: int) -> List[tuple]:
    import deltalake
    t = deltalake.DeltaTable(str(table), version=version).to_pyarrow_table().to_pydict()
    return sorted(zip(t["k"], t["v"], t["part"]))


def start_peers(n: int) -> List[SparkPeer]:
    peers: List[Optional[SparkPeer]] = [None] * n
    errors: List[BaseException] = []

    def start(i: int) -> None:
        try:
            peers[i] = SparkPeer("deltalog")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=start, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        for p in peers:
            if p is not None:
                p.close()
        raise errors[0]
    return [p for p in peers if p is not None]


@pytest.fixture(scope="module")
def workers(full):
    ps = start_peers(4 if full else 3)
    yield ps
    for p in ps:
        p.close()


def read_version(peer: SparkPeer, table: Path, version: int) -> List[tuple]:
    got = peer.run("result = [list(r) for r in spark.read.format('deltalog').option('versionAsOf', args['v'])"
                   ".load(args['p']).select('k', 'v', 'part').collect()]", p=str(table), v=version)
    return sorted(tuple(r) for r in got)


def test_concurrent_dml_and_appends_equal_their_replay(workers, tmp_path, full):
    n_ops = 20 if full else 6
    table = tmp_path / "t"
    workers[0].run("spark.createDataFrame([tuple(r) for r in args['rows']], 'k BIGINT, v BIGINT, part INT')"
                   ".write.format('deltalog').partitionBy('part').save(args['p'])", rows=INITIAL, p=str(table))
    rng = random.Random(27)
    plans = [make_ops(w, n_ops, rng) for w in range(len(workers))]
    logs: List[Any] = [None] * len(workers)

    def go(w: int) -> None:
        try:
            logs[w] = workers[w].run(WORKER, path=str(table), ops=plans[w], limit=MERGE_LIMIT, attempts=12)
        except BaseException as e:  # noqa: BLE001
            logs[w] = e

    ts = [threading.Thread(target=go, args=(w,)) for w in range(len(workers))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for w, lg in enumerate(logs):
        assert not isinstance(lg, BaseException), f"worker {w}: {lg}"

    ops = {op["id"]: op for plan in plans for op in plan}
    outcome = {e["id"]: e for lg in logs for e in lg}
    infos = commit_infos(table)
    committed = [ci.get("userMetadata") for ci in infos[1:]]
    # every operation that returned committed at most once, a conflicting attempt committed nothing;
    # a DELETE / UPDATE whose snapshot held no row it selects commits nothing (checked below)
    done = sorted(i for i, e in outcome.items() if e["done"])
    assert None not in committed and len(set(committed)) == len(committed)
    assert set(committed) <= set(done)
    no_ops = sorted(set(done) - set(committed))
    assert all(ops[i]["kind"] in ("delete", "update") for i in no_ops), no_ops
    conflicts = [c for e in outcome.values() for c in e["conflicts"]]
    assert all(cls.startswith("Concurrent") and err.startswith("DELTA_CONCURRENT") for cls, err in conflicts), conflicts
    print(f"{len(workers)} workers, {len(ops)} operations, {len(done)} committed, "
          f"{len(conflicts)} conflicts retried: {sorted({c[0] for c in conflicts})}")

    rows = [list(r) for r in INITIAL]
    states = [rows]
    assert read_version(workers[0], table, 0) == deltars_rows(table, 0) == sorted(tuple(r) for r in rows)
    for v, op_id in enumerate(committed, start=1):
        rows = replay(rows, ops[op_id])
        states.append(rows)
        want = sorted(tuple(r) for r in rows)
        assert read_version(workers[v % len(workers)], table, v) == want, f"deltalog at version {v} ({op_id})"
        assert deltars_rows(table, v) == want, f"delta-rs at version {v} ({op_id})"
        assert infos[v]["operation"] == {"append": "WRITE", "delete": "DELETE", "update": "UPDATE",
                                         "merge": "MERGE"}[ops[op_id]["kind"]]
    # an operation that committed nothing read a version (between the latest before it started and
    # the latest when it returned) at which no row was in its range
    for i in no_ops:
        lo, hi = outcome[i]["range"]
        a = ops[i]["a"]
        assert any(not any(a <= r[0] <= a + 3 for r in states[v]) for v in range(lo, hi + 1)), i


WAIT_UDF = """
import os, time
from pyspark.sql.types import IntegerType
def wait_for(reached, go):
    open(reached, "w").close()
    deadline = time.time() + 300
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.05)
    return 1
spark.udf.register("wait_for", wait_for, IntegerType())
"""


def test_two_deletes_of_the_same_file(workers, tmp_path):
    import time
    a, b = workers[0], workers[1]
    table = tmp_path / "t"
    a.run("spark.range(10).selectExpr('id AS k', '0L AS v', '0 AS part').coalesce(1)"
          ".write.format('deltalog').save(args['p'])", p=str(table))
    reached, go = tmp_path / "reached", tmp_path / "go"
    a.run(WAIT_UDF)
    a.run("from deltalog._jvm import api_class\n"
          "api_class(spark, 'DmlApi').runSqlBeforeNextDeleteCommit(spark._jsparkSession, args['sql'])",
          sql=f"SELECT wait_for('{reached}', '{go}')")
    box: Dict[str, Any] = {}

    def first() -> None:
        try:
            box["a"] = a.run("from deltalog.tables import DeltaTable\n"
                             "from deltalog.exceptions import DeltaConcurrentModificationException\n"
                             "try:\n"
                             "    DeltaTable.forPath(spark, args['p']).delete('k = 3')\n"
                             "    result = None\n"
                             "except DeltaConcurrentModificationException as e:\n"
                             "    result = [type(e).__name__, e.errorClass, str(e)]", p=str(table))
        except BaseException as e:  # noqa: BLE001
            box["a"] = e

    t = threading.Thread(target=first)
    t.start()
    deadline = time.time() + 300
    while not reached.exists() and t.is_alive() and time.time() < deadline:
        time.sleep(0.05)
    assert reached.exists(), f"the first DELETE never reached its commit: {box.get('a')}"
    # the second process deletes rows of the same (only) file and commits version 1: it removes the
    # file and adds the rewritten rest (k 5..9), which holds no row of the first DELETE's predicate
    # (its stats say so), so the first fails on the removal of the file it read
    b.run("from deltalog.tables import DeltaTable\nDeltaTable.forPath(spark, args['p']).delete('k <= 4')", p=str(table))
    go.touch()
    t.join(300)
    assert not t.is_alive()
    got = box["a"]
    assert isinstance(got, list), f"the first DELETE did not fail with a conflict: {got}"
    assert got[:2] == ["ConcurrentDeleteReadException", "DELTA_CONCURRENT_DELETE_READ"], got
    infos = commit_infos(table)
    assert len(infos) == 2 and infos[1]["operation"] == "DELETE"
    assert read_version(a, table, 1) == deltars_rows(table, 1) == [(k, 0, 0) for k in range(5, 10)]
