"""Crash safety: writers killed with SIGKILL during commits and during checkpoint writing.

The table checkpoints every 2 commits (``delta.checkpointInterval = 2``), so a writer spends much of
its time writing checkpoints. Each iteration starts ``TxnStress append`` (a fresh JVM), waits for
its first commit, then kills it (``kill -9`` of its process group) either after a random delay or
as soon as a checkpoint temp file (or a ``_last_checkpoint`` temp file) appears in the log. After
every kill:

* the log is contiguous and every commit file is complete (put-if-absent of a finished temp file);
  every commit the writer reported is in the log with its file;
* no partial checkpoint is visible: every visible checkpoint file reads completely and
  ``_last_checkpoint`` is absent or names a complete checkpoint whose row count matches;
* a fresh JVM (``TxnTool read``, uncached) and delta-rs load the table at its last committed
  version with exactly the replayed live files;
* the next writer (the next iteration, and a final writer) commits successfully.

Iterations: 20 bounded, 50 with ``--full``. ``DELTALOG_CRASH_SEED`` fixes the random delays.
"""
from __future__ import annotations

import os
import random
import time

from deltalog.actions import AddFile


def _temp_checkpoint_files(log_dir) -> list:
    return [n for n in os.listdir(log_dir)
            if n.startswith(".") and n.endswith(".tmp") and (".checkpoint." in n or "_last_checkpoint" in n)]


def test_kill_9_during_commits_and_checkpoints(procs, h, tmp_path, full):
    iterations = 50 if full else 20
    seed = int(os.environ.get("DELTALOG_CRASH_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    table = tmp_path / "crash"
    log_dir = table / "_delta_log"
    h.create_table(table, configuration={"delta.checkpointInterval": "2"})
    hits = {"during-checkpoint": 0, "random": 0}
    last_version = 0
    for i in range(iterations):
        writer = f"c{i}"
        p = procs.java(h.STRESS, "append", str(table), "100000", writer)
        first = h.read_line(p, timeout=120)
        assert first.startswith("committed "), f"iteration {i} (seed {seed}): writer did not commit: {first!r}"
        assert int(first.split()[1]) == last_version + 1, \
            f"iteration {i} (seed {seed}): the next writer committed {first} after version {last_version}"
        if i % 2 == 1:
            # kill while a checkpoint (or _last_checkpoint) is being written
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline and not _temp_checkpoint_files(log_dir):
                time.sleep(0.0002)
            hit = bool(_temp_checkpoint_files(log_dir))
            h.Procs.kill(p)
            hits["during-checkpoint" if hit else "random"] += 1
        else:
            time.sleep(rng.uniform(0.0, 0.25))
            h.Procs.kill(p)
            hits["random"] += 1
        assert p.poll() is not None
        out = p.stdout.read()
        reported = [int(line.split()[1]) for line in [first, *out.splitlines()]
                    if line.startswith("committed ") and len(line.split()) == 2]

        st = h.read_log(table)
        assert st.version >= (reported[-1] if reported else last_version)
        for k, v in enumerate(reported):
            adds = [a.path for a in st.commits[v] if isinstance(a, AddFile)]
            assert adds == [f"w{writer}-{k}.parquet"], f"reported commit {v} is not in the log: {adds}"
        assert set(st.live) == {p for p in st.ever_added}, "appends only: every added file is live"
        assert all(n == 1 for n in st.ever_added.values())
        cp = h.check_checkpoints(table)
        loaded = h.jvm_read(procs, table)
        assert loaded["version"] == st.version, f"iteration {i} (seed {seed}): fresh JVM loaded {loaded['version']}"
        assert set(loaded["paths"]) == set(st.live)
        if cp is not None:
            assert loaded["checkpointVersion"] is None or loaded["checkpointVersion"] >= cp
        rs_version, rs_paths = h.deltars_read(table)
        assert (rs_version, rs_paths) == (st.version, set(st.live)), f"iteration {i}: delta-rs disagrees"
        last_version = st.version

    # the next writer after the last crash succeeds
    r = procs.run(h.STRESS, "append", str(table), "3", "final", timeout=120)
    assert r.returncode == 0, r.stderr
    assert [int(x.split()[1]) for x in r.stdout.splitlines()] == [last_version + 1, last_version + 2,
                                                                   last_version + 3]
    st = h.read_log(table)
    assert st.version == last_version + 3
    h.check_checkpoints(table)
    leftovers = [n for n in os.listdir(log_dir) if n.startswith(".") and n.endswith(".tmp")]
    print(f"crash test: seed {seed}, {iterations} kills ({hits}), final version {st.version}, "
          f"{len(leftovers)} hidden temp files left by killed writers")
    assert hits["during-checkpoint"] >= 1, f"no kill landed during a checkpoint write ({hits})"
