"""Reliability of the streaming source (issue 29): a Spark process streaming a deltalog table
(``readStream.format("deltalog")``, small ``maxFilesPerTrigger``) into Spark's Parquet file sink is
killed with SIGKILL (its whole process group) at random points and restarted from its checkpoint
until a run finishes. The sink is exactly-once (its ``_spark_metadata`` log names the files of
committed batches), so every row of the source must be in the committed files exactly once: no
file of the source skipped or delivered twice across restarts.

* ``test_kill_9_while_streaming``: the source is pre-filled with many one-file commits (written
  directly as log JSON + Parquet); when a run finishes before it is killed, more commits are
  added so the next one has work. 3 kills bounded, 50 with ``--full`` /
  ``DELTALOG_INTEGRATION_FULL=1``.
* ``test_stream_while_another_process_appends_deletes_and_optimizes``: a second Spark process
  appends, DELETEs (files rewritten) and runs OPTIMIZE on the source while the stream runs with
  ``skipChangeCommits=true`` (and is killed once / 3 times): every appended row is delivered once,
  the DELETE and OPTIMIZE commits deliver nothing.

``DELTALOG_CRASH_SEED`` fixes the random kill delays.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import REPO, engine_jar

CHILD = Path(__file__).resolve().parent / "streaming_source_child.py"
SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "v", "type": "string", "nullable": True, "metadata": {}}]})


# ------------------------------------------------------------------------------------------ source table
class SourceTable:
    """A deltalog table whose commits are written directly (one Parquet file of new ids each)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log = path / "_delta_log"
        self.log.mkdir(parents=True)
        self.version = -1
        self.next_id = 0
        now = int(time.time() * 1000)
        self._commit([
            {"commitInfo": {"timestamp": now, "operation": "CREATE TABLE"}},
            {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
            {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                          "schemaString": SCHEMA, "partitionColumns": [], "configuration": {},
                          "createdTime": now}}])

    def _commit(self, actions) -> None:
        self.version += 1
        name = self.log / f"{self.version:020d}.json"
        tmp = self.log / f".{name.name}.tmp"
        tmp.write_text("".join(json.dumps(a) + "\n" for a in actions))
        os.rename(tmp, name)

    def append(self, commits: int, rows: int = 5) -> None:
        for _ in range(commits):
            ids = list(range(self.next_id, self.next_id + rows))
            self.next_id += rows
            name = f"part-{uuid.uuid4()}.parquet"
            pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"r{i}" for i in ids]}),
                           self.path / name)
            st = (self.path / name).stat()
            stats = json.dumps({"numRecords": rows, "minValues": {"id": ids[0]}, "maxValues": {"id": ids[-1]},
                                "nullCount": {"id": 0, "v": 0}})
            self._commit([{"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "WRITE"}},
                          {"add": {"path": name, "partitionValues": {}, "size": st.st_size,
                                   "modificationTime": int(st.st_mtime * 1000), "dataChange": True,
                                   "stats": stats}}])


# ------------------------------------------------------------------------------------------ sink
def committed_ids(sink: Path) -> list:
    """Ids in the files the Parquet sink's metadata log names (committed batches only)."""
    meta = sink / "_spark_metadata"
    if not meta.exists():
        return []
    out = []
    for f in sorted(meta.iterdir(), key=lambda p: p.name):
        if not f.name.isdigit():
            continue
        lines = f.read_text().splitlines()
        assert lines[0] == "v1", f"{f}: {lines[0]}"
        for line in lines[1:]:
            entry = json.loads(line)
            assert entry["action"] == "add"
            path = entry["path"].replace("file://", "").replace("file:", "")
            out.extend(pq.read_table(path, columns=["id"]).column("id").to_pylist())
    return out


# ------------------------------------------------------------------------------------------ processes
def child_env() -> dict:
    env = dict(os.environ)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["DELTALOG_JAR"] = engine_jar()
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python"), env.get("PYTHONPATH", "")])
    return env


def start_child(procs, tmp_path: Path, *args) -> subprocess.Popen:
    err = open(tmp_path / f"child-{time.time_ns()}.err", "w")
    p = subprocess.Popen([sys.executable, str(CHILD), *map(str, args)], stdout=subprocess.PIPE, stderr=err,
                         text=True, start_new_session=True, stdin=subprocess.DEVNULL, env=child_env(), cwd=tmp_path)
    err.close()
    procs.started.append(p)
    return p


def wait_line(p: subprocess.Popen, expected: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            raise AssertionError(f"child exited ({p.poll()}) before printing {expected!r}")
        if line.strip() == expected:
            return
    raise AssertionError(f"no {expected!r} within {timeout} s")


def finish(p: subprocess.Popen, timeout: float = 600) -> None:
    out, _ = p.communicate(timeout=timeout)
    assert p.returncode == 0 and "done" in out, f"child failed ({p.returncode}): {out[-2000:]}"


def stream_args(table, sink, cp, stopfile="-", skip="false"):
    return ("stream", table.path if isinstance(table, SourceTable) else table, sink, cp, 2, skip, stopfile)


# ------------------------------------------------------------------------------------------ tests
def _count(d: Path) -> int:
    return len([f for f in d.iterdir() if f.name.isdigit()]) if d.exists() else 0


def test_kill_9_while_streaming(procs, tmp_path, full):
    kills_wanted = 50 if full else 3
    seed = int(os.environ.get("DELTALOG_CRASH_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    src = SourceTable(tmp_path / "src")
    src.append(200 if full else 40)
    sink, cp = tmp_path / "sink", tmp_path / "cp"
    kills = finished_early = planned_not_committed = 0
    while kills < kills_wanted:
        p = start_child(procs, tmp_path, *stream_args(src, sink, cp))
        wait_line(p, "started")
        if kills % 2 == 0:
            # during batch processing: once this run planned a new batch, after a random delay
            planned = _count(cp / "offsets")
            deadline = time.monotonic() + 120
            while p.poll() is None and _count(cp / "offsets") == planned and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 1.5))
        else:
            time.sleep(rng.uniform(0.0, 4.0))   # anywhere, start-up included
        if p.poll() is None:
            procs.kill(p)
            kills += 1
            if _count(cp / "offsets") > _count(cp / "commits"):
                planned_not_committed += 1
        else:
            finished_early += 1
            src.append(40)          # the stream caught up: give the next run work
        got = committed_ids(sink)
        assert len(got) == len(set(got)), f"seed {seed}: a row was delivered twice after {kills} kills"
        assert set(got) <= set(range(src.next_id))
    finish(start_child(procs, tmp_path, *stream_args(src, sink, cp)))
    got = committed_ids(sink)
    assert sorted(got) == list(range(src.next_id)), \
        f"seed {seed}: {len(got)} rows delivered for {src.next_id} ({len(set(got))} distinct)"
    assert planned_not_committed >= 1, "no kill landed between a batch's offset and its commit"
    print(f"streaming source crash test: seed {seed}, {kills} kills ({planned_not_committed} with a planned batch not "
          f"committed), {finished_early} runs finished before their kill, {src.version} source commits, "
          f"{_count(cp / 'commits')} batches, {len(got)} rows exactly once")


def test_stream_while_another_process_appends_deletes_and_optimizes(procs, tmp_path, full):
    seed = int(os.environ.get("DELTALOG_CRASH_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    src = SourceTable(tmp_path / "src")
    src.append(10)
    sink, cp, stop = tmp_path / "sink", tmp_path / "cp", tmp_path / "stop"
    rounds = 12 if full else 6
    kills_wanted = 3 if full else 1
    streamer = start_child(procs, tmp_path, *stream_args(src, sink, cp, stopfile=stop, skip="true"))
    wait_line(streamer, "started")
    deadline = time.monotonic() + 240
    while not (cp / "offsets" / "0").exists():     # the initial snapshot is fixed by the first offset
        assert time.monotonic() < deadline and streamer.poll() is None, "the stream did not plan its first batch"
        time.sleep(0.2)
    writer = start_child(procs, tmp_path, "write", src.path, rounds, src.next_id)
    kills = 0
    while writer.poll() is None:
        time.sleep(rng.uniform(2.0, 8.0))
        if kills < kills_wanted and writer.poll() is None:
            procs.kill(streamer)
            kills += 1
            streamer = start_child(procs, tmp_path, *stream_args(src, sink, cp, stopfile=stop, skip="true"))
            wait_line(streamer, "started")
    out, _ = writer.communicate(timeout=600)
    assert writer.returncode == 0, out
    appended = [tuple(map(int, line.split()[1:])) for line in out.splitlines() if line.startswith("appended ")]
    assert len(appended) == rounds and "deleted" in out and "optimized" in out
    stop.write_text("stop")
    finish(streamer)
    expected = list(range(src.next_id)) + [i for lo, hi in appended for i in range(lo, hi + 1)]
    got = committed_ids(sink)
    assert sorted(got) == sorted(expected), \
        f"seed {seed}: {len(got)} rows delivered, {len(expected)} expected ({len(set(got))} distinct)"
    log = sorted((src.path / "_delta_log").glob("*.json"))
    ops = [json.loads(f.read_text().splitlines()[0]).get("commitInfo", {}).get("operation") for f in log]
    assert "DELETE" in ops and "OPTIMIZE" in ops
    print(f"streaming source with a concurrent writer: seed {seed}, {kills} kills, {len(log)} commits ({ops.count('DELETE')} "
          f"DELETE, {ops.count('OPTIMIZE')} OPTIMIZE), {len(got)} rows exactly once")
