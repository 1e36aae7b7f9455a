"""Integration tests of the transaction engine across processes (see README.md).

Everything here runs without Spark and binds nothing to the network: writers are separate JVMs
(``io.deltalog.tools.TxnStress``, ``io.deltalog.api.TxnTool``) started with the engine jar and
pyspark's jars on the classpath; the tables are checked from Python by parsing the log files
(``deltalog.actions``, pyarrow for checkpoints), by a fresh JVM (``TxnTool read``) and by delta-rs.

Sizes: bounded by default (what ``make test`` runs); ``--full`` or ``DELTALOG_INTEGRATION_FULL=1``
for the full sizes.
"""
from __future__ import annotations

import atexit
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))  # the checkout's package wins over an installed copy

from deltalog.actions import AddFile, CommitInfo, Metadata, RemoveFile, parseActions, serializeActions  # noqa: E402
from deltalog.protocol import Protocol  # noqa: E402

STRESS = "io.deltalog.tools.TxnStress"
TOOL = "io.deltalog.api.TxnTool"
# TxnStress's schema (its adds are unpartitioned).
SCHEMA = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
# Writers killed mid-commit never run their exit hooks: the native library snappy-java unpacks into
# the temp directory would stay behind in /tmp (one per JVM). Theirs goes into a directory removed
# when the test session ends.
_JVM_SCRATCH = tempfile.mkdtemp(prefix="deltalog-integration-jvm-")
atexit.register(shutil.rmtree, _JVM_SCRATCH, True)
JVM_OPTS = ["-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
            f"-Dorg.xerial.snappy.tempdir={_JVM_SCRATCH}"]

COMMIT_RE = re.compile(r"^(\d{20})\.json$")
CHECKPOINT_RE = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?(?:\.[0-9a-fA-F-]{36})?\.(parquet|json)$")


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="integration tests at full size (also DELTALOG_INTEGRATION_FULL=1)")


@pytest.fixture(scope="session")
def full(request) -> bool:
    return bool(request.config.getoption("--full", default=False)) or os.environ.get("DELTALOG_INTEGRATION_FULL") == "1"


def engine_jar() -> str:
    env = os.environ.get("DELTALOG_JAR")
    if env:
        return env
    jars = sorted(glob.glob(str(REPO / "python" / "deltalog" / "jars" / "deltalog-spark_*.jar")))
    if jars:
        return jars[-1]
    from deltalog.session import bundled_jar_path
    return bundled_jar_path()


def spark_jars_dir() -> str:
    import pyspark
    return os.path.join(os.path.dirname(pyspark.__file__), "jars")


def classpath() -> str:
    return f"{engine_jar()}{os.pathsep}{os.path.join(spark_jars_dir(), '*')}"


# ------------------------------------------------------------------------------------ processes


class Procs:
    """JVM processes started by one test; every one still alive is killed (its process group) at
    the end of the test, so nothing outlives it."""

    def __init__(self) -> None:
        self.started: List[subprocess.Popen] = []

    def java(self, main: str, *args: str, jvm_opts: Sequence[str] = (), **kw) -> subprocess.Popen:
        cmd = ["java", *JVM_OPTS, *jvm_opts, "-cp", classpath(), main, *map(str, args)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, stdin=subprocess.DEVNULL, **kw)
        self.started.append(p)
        return p

    def run(self, main: str, *args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        p = self.java(main, *args, **kw)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(p)
            raise
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    @staticmethod
    def kill(p: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass

    def cleanup(self) -> None:
        for p in self.started:
            self.kill(p)
            for s in (p.stdout, p.stderr):
                if s is not None:
                    s.close()


@pytest.fixture
def procs():
    ps = Procs()
    yield ps
    ps.cleanup()


# ------------------------------------------------------------------------------------ tables


def create_table(path: Path, configuration: Optional[Dict[str, str]] = None,
                 adds: Iterable[AddFile] = (), schema: str = SCHEMA) -> None:
    """Writes version 0 directly (commitInfo, protocol (1,2), metaData with TxnStress's schema or
    ``schema``)."""
    log = path / "_delta_log"
    log.mkdir(parents=True)
    md = Metadata(id=str(uuid.uuid4()), schemaString=schema, configuration=dict(configuration or {}),
                  createdTime=int(time.time() * 1000))
    info = CommitInfo.of(timestamp=int(time.time() * 1000), operation="CREATE TABLE",
                         operationParameters={}, isBlindAppend=True, txnId=str(uuid.uuid4()))
    (log / ("0" * 20 + ".json")).write_text(serializeActions([info, Protocol.forNewTable(md), md, *adds]))


def add_file(name: str) -> AddFile:
    return AddFile(path=name, partitionValues={}, size=100, modificationTime=int(time.time() * 1000),
                   dataChange=True, stats='{"numRecords":1}')


@dataclass
class LogState:
    version: int
    commits: Dict[int, list] = field(default_factory=dict)      # version -> actions
    txn_ids: Dict[int, str] = field(default_factory=dict)
    live: Dict[str, AddFile] = field(default_factory=dict)
    ever_added: Dict[str, int] = field(default_factory=dict)    # path -> times added
    removed: Set[str] = field(default_factory=set)


def commit_versions(table: Path) -> List[int]:
    names = os.listdir(table / "_delta_log")
    return sorted(int(m.group(1)) for n in names if (m := COMMIT_RE.match(n)))


def read_log(table: Path) -> LogState:
    """Parses every commit file: contiguous from 0, each parseable (no partial commit file), each
    with exactly one commitInfo with a txnId, all txnIds distinct; replays adds and removes."""
    versions = commit_versions(table)
    assert versions, f"{table} has no commits"
    assert versions == list(range(versions[-1] + 1)), f"commit versions not contiguous: {versions}"
    st = LogState(version=versions[-1])
    for v in versions:
        text = (table / "_delta_log" / f"{v:020d}.json").read_text()
        assert text.endswith("\n"), f"version {v}: commit file is not complete"
        actions = parseActions(text, file=f"{v:020d}.json")
        infos = [a for a in actions if isinstance(a, CommitInfo)]
        assert len(infos) == 1, f"version {v}: {len(infos)} commitInfo actions"
        tid = infos[0].txnId
        assert tid, f"version {v}: commitInfo without txnId"
        st.commits[v] = actions
        st.txn_ids[v] = tid
        for a in actions:
            if isinstance(a, AddFile):
                st.ever_added[a.path] = st.ever_added.get(a.path, 0) + 1
                st.live[a.path] = a
                st.removed.discard(a.path)
            elif isinstance(a, RemoveFile):
                st.live.pop(a.path, None)
                st.removed.add(a.path)
    dup = [t for t in set(st.txn_ids.values()) if list(st.txn_ids.values()).count(t) > 1]
    assert not dup, f"txnIds used by more than one version: {dup}"
    return st


def check_checkpoints(table: Path) -> Optional[int]:
    """Every visible checkpoint file reads completely (pyarrow); multi-part sets are complete;
    ``_last_checkpoint``, when present, parses and names a complete, readable checkpoint whose row
    count matches its ``size``. Returns the ``_last_checkpoint`` version (None when absent)."""
    import pyarrow.parquet as pq
    log = table / "_delta_log"
    parts: Dict[Tuple[int, int], Set[int]] = {}
    rows: Dict[int, int] = {}
    for name in sorted(os.listdir(log)):
        m = CHECKPOINT_RE.match(name)
        if not m or name.startswith("."):
            continue
        v = int(m.group(1))
        if m.group(4) == "parquet":
            t = pq.read_table(log / name)  # raises on a truncated / partial file
            n = t.num_rows
        else:
            n = len(parseActions((log / name).read_text()))
        assert n > 0, f"{name} is empty"
        rows[v] = rows.get(v, 0) + n
        if m.group(2):
            parts.setdefault((v, int(m.group(3))), set()).add(int(m.group(2)))
    for (v, total), got in parts.items():
        assert got == set(range(1, total + 1)), f"checkpoint {v}: incomplete multi-part set {sorted(got)}/{total}"
    lc = log / "_last_checkpoint"
    if not lc.exists():
        return None
    info = json.loads(lc.read_text())
    v = int(info["version"])
    assert v in rows, f"_last_checkpoint points to version {v}, which has no complete checkpoint"
    if "size" in info:
        assert int(info["size"]) == rows[v], f"_last_checkpoint size {info['size']} != {rows[v]} rows"
    return v


def jvm_read(procs: Procs, table: Path) -> dict:
    """The table as loaded by a fresh JVM (uncached DeltaLog: `_last_checkpoint`, checkpoint, commits)."""
    r = procs.run(TOOL, "read", str(table), timeout=120)
    assert r.returncode == 0, f"TxnTool read failed: {r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def deltars_read(table: Path) -> Tuple[int, Set[str]]:
    import pyarrow as pa
    from deltalake import DeltaTable as RsTable
    dt = RsTable(str(table))
    t = pa.table(dt.get_add_actions(flatten=False))
    return dt.version(), set(t.column("path").to_pylist())


def wait_all(ps: Sequence[subprocess.Popen], timeout: float) -> List[Tuple[int, str, str]]:
    deadline = time.monotonic() + timeout
    out = []
    for p in ps:
        try:
            o, e = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"process {p.args[-4:]} did not finish in {timeout} s")
        out.append((p.returncode, o, e))
    return out


def read_line(p: subprocess.Popen, timeout: float) -> str:
    """One stdout line (blocking read in a helper thread so a hung JVM cannot hang the test)."""
    import threading
    box: List[str] = []
    t = threading.Thread(target=lambda: box.append(p.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    if not box:
        raise AssertionError(f"no output from {p.args[-4:]} within {timeout} s")
    return box[0].strip()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A Spark standalone cluster (``cluster.py``): one master and two one-core workers, each its
    own JVM on 127.0.0.1, started once for the session by the first test that asks for it and
    stopped (every process group killed) when the session ends, pass or fail (``atexit`` too)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cluster import StandaloneCluster
    c = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2, cores=1, memory="1g")
    c.start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def h():
    """This module's helpers (tests use ``h.read_log(...)`` etc.; no import of conftest needed)."""
    return sys.modules[__name__]
