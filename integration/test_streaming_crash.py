"""Crash safety of the streaming sink: a streaming driver killed with SIGKILL mid-stream.

A child process (``streaming_crash_child.py``: one Spark driver, bound to 127.0.0.1) runs three
pipelines at once from Spark's file source over JSON files written upfront (one file per
micro-batch): an append into ``append``, an aggregation in complete mode into ``complete``, and a
``foreachBatch`` that MERGEs the batch's per-key count and sum into running totals in ``merge``
(idempotent through the session's ``spark.databricks.delta.write.txnAppId``/``txnVersion``) and
appends the batch to ``audit`` with the writer options ``txnAppId``/``txnVersion``. Each round starts the child on the same checkpoints, waits until some
sink committed a new version since the round started, sleeps a random 0–1.5 s and kills the
child's process group with SIGKILL (so kills land anywhere: writing data files, committing,
between the sink's commit and Spark's checkpoint commit, ...). After the kills a last run goes to
the end. Then, read with delta-rs (an independent reader) and the log parsed directly:

* ``append`` and ``audit`` hold every input row exactly once; ``complete`` and ``merge`` hold the
  exact count and sum per key over all input (a batch merged twice would count twice);
* every log is contiguous, one commitInfo each; the sink's commits carry a ``txn`` whose version
  never repeats for one appId (no batch committed twice) and together cover every batch id.

Kills: 3 bounded (``make test``), 50 with ``--full`` or ``DELTALOG_INTEGRATION_FULL=1``
(``DELTALOG_STREAM_CRASH_KILLS=n`` overrides). ``DELTALOG_CRASH_SEED`` fixes the random delays.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

CHILD = Path(__file__).resolve().parent / "streaming_crash_child.py"
ROWS_PER_FILE = 20


def _inputs(d: Path, files: int):
    d.mkdir(parents=True)
    rows = []
    for i in range(files):
        batch = [{"id": i * ROWS_PER_FILE + j, "key": f"k{(i * ROWS_PER_FILE + j) % 7}",
                  "v": (i * ROWS_PER_FILE + j) % 13} for j in range(ROWS_PER_FILE)]
        (d / f"part-{i:05d}.json").write_text("".join(json.dumps(r) + "\n" for r in batch))
        rows += batch
    return rows


def _commits(table: Path) -> int:
    log = table / "_delta_log"
    return len([n for n in os.listdir(log) if n.endswith(".json") and not n.startswith(".")]) if log.exists() else 0


def _start(h, base: Path) -> subprocess.Popen:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", DELTALOG_JAR=h.engine_jar(),
               PYTHONPATH=str(h.REPO / "python"))
    return subprocess.Popen([sys.executable, str(CHILD), str(base)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True)


class _Lines:
    """The child's stdout lines, collected by a thread (a killed child cannot hang the test)."""

    def __init__(self, p: subprocess.Popen) -> None:
        self.lines = []
        self.t = threading.Thread(target=lambda: [self.lines.append(l.strip()) for l in p.stdout], daemon=True)
        self.t.start()


def _rs_rows(table: Path, cols):
    from deltalake import DeltaTable as RsTable
    t = RsTable(str(table)).to_pyarrow_table(columns=list(cols)).to_pylist()
    return sorted(tuple(r[c] for c in cols) for r in t)


def _txn_versions(h, table: Path):
    """(appId, version) of every commit's txn action, in log order."""
    st = h.read_log(table)
    out = []
    for v in sorted(st.commits):
        text = (table / "_delta_log" / f"{v:020d}.json").read_text()
        for line in text.splitlines():
            a = json.loads(line)
            if "txn" in a:
                out.append((a["txn"]["appId"], a["txn"]["version"]))
    return out


def test_streaming_pipelines_survive_kill_9(procs, h, tmp_path, full):
    kills = int(os.environ.get("DELTALOG_STREAM_CRASH_KILLS", "50" if full else "3"))
    seed = int(os.environ.get("DELTALOG_CRASH_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    files = max(12, kills * 3)
    rows = _inputs(tmp_path / "in", files)
    sinks = [tmp_path / n for n in ("append", "complete", "merge", "audit")]
    done, killed, round_ = False, 0, 0
    while not done:
        round_ += 1
        assert round_ <= kills + 5, f"seed {seed}: the pipelines did not finish after {kills} kills"
        before = sum(_commits(t) for t in sinks)
        p = _start(h, tmp_path)
        procs.started.append(p)
        out = _Lines(p)
        if killed < kills:
            deadline = time.monotonic() + 300
            while p.poll() is None and sum(_commits(t) for t in sinks) == before:
                assert time.monotonic() < deadline, f"seed {seed}: no commit in round {round_}"
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 1.5))
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                killed += 1
        try:
            p.wait(timeout=600)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"seed {seed}: child did not finish in round {round_}")
        out.t.join(10)
        if p.returncode == 0:
            assert "done" in out.lines, f"seed {seed}: child exited 0 without 'done': {out.lines}"
            done = True
        elif p.returncode != -signal.SIGKILL:
            err = p.stderr.read()
            (tmp_path / f"child-stderr-{round_}.log").write_text(err)
            # the first error is the cause; the tail is usually the driver stopping under the other queries
            causes = [ln for ln in err.splitlines() if "Exception" in ln or "Error" in ln][:8]
            raise AssertionError(f"seed {seed}: child failed (rc {p.returncode}): {out.lines}\nfirst errors: "
                                 + "\n".join(causes) + f"\n(full stderr: {tmp_path}/child-stderr-{round_}.log)\n"
                                 + err[-2000:])
        # every log stays readable and well-formed after every kill
        for t in sinks:
            if _commits(t):
                h.read_log(t)
    print(f"streaming crash: seed {seed}, {killed} kills, {round_} runs")
    assert killed == kills

    want = sorted((r["id"], r["key"], r["v"]) for r in rows)
    assert _rs_rows(tmp_path / "append", ("id", "key", "v")) == want
    assert _rs_rows(tmp_path / "audit", ("id", "key", "v")) == want
    agg = {}
    for r in rows:
        n, s = agg.get(r["key"], (0, 0))
        agg[r["key"]] = (n + 1, s + r["v"])
    want_agg = sorted((k, n, s) for k, (n, s) in agg.items())
    assert _rs_rows(tmp_path / "complete", ("key", "n", "total")) == want_agg
    assert _rs_rows(tmp_path / "merge", ("key", "n", "total")) == want_agg

    for name, query in (("append", "append"), ("complete", "complete"), ("audit", "merge"), ("merge", "merge")):
        txns = _txn_versions(h, tmp_path / name)
        assert len(set(txns)) == len(txns), f"{name}: a batch committed twice: {txns}"
        assert len({a for a, _ in txns}) == 1, f"{name}: more than one appId: {txns}"
        batch_ids = sorted(v for _, v in txns)
        # exactly the batches Spark's checkpoint records as finished, each committed once (Spark keeps only
        # the last spark.sql.streaming.minBatchesToRetain (100) entries of its commit log: those retained are
        # the newest finished batches, and every batch up to the last finished one committed once)
        finished = sorted(int(n) for n in os.listdir(tmp_path / "checkpoints" / query / "commits") if n.isdigit())
        assert finished == list(range(finished[0], finished[-1] + 1)), f"{name}: checkpoint commits {finished}"
        assert batch_ids == list(range(finished[-1] + 1)), f"{name}: {batch_ids} vs finished {finished}"
