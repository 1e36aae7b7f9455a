"""deltalog on a real Spark standalone cluster (issue 30): one master and two one-core workers, each
its own JVM (the session fixture ``spark_cluster``, ``cluster.py``). Drivers are child processes
(``cluster_child.py``) whose session is built as a user builds it: ``configure_spark_with_deltalog``
puts the jar into ``spark.jars`` and Spark ships it to the executors, which write the Parquet files
while the driver commits.

* the scenario suite (partitioned write with stats, reads with partition pruning and data
  skipping, DELETE with deletion vectors, UPDATE / MERGE / DELETE, OPTIMIZE, a streaming query into
  the sink with AvailableNow) runs on the cluster and, at the same time, on ``local[2]``: both
  report the same results, equal to a Python reference; delta-rs reads every table of both runs
  and gets the reference rows; the logs carry the stats, partition values and deletion vectors;
* two driver processes append to one table at once (both running on the cluster together): every
  append lands in exactly one commit, versions contiguous;
* an executor lost mid-write (``kill -9`` of a worker's process group: worker + executor JVM) while
  a write's tasks hold half-written files: Spark reruns the tasks, the write commits exactly one
  version whose files all exist with the exact row count, the killed attempts' files are not
  referenced, and VACUUM (RETAIN 0 HOURS) removes them.

* the demo (``python -m deltalog.demo``, what docker/'s ``job`` service runs) with the cluster as
  its master (full size only).

Sizes: bounded (``make test``) n = 2000 suite rows, 2 × 3 concurrent appends, one kill;
``--full`` / ``DELTALOG_INTEGRATION_FULL=1``: n = 200000, 2 × 10 appends, 4 kill rounds, the demo.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List

import pytest

CHILD = Path(__file__).resolve().parent / "cluster_child.py"
APPEND_SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": c, "type": "long", "nullable": True, "metadata": {}} for c in ("writer", "seq", "i")]})
SLOW_SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": c, "type": "long", "nullable": True, "metadata": {}} for c in ("id", "v")]})


# ------------------------------------------------------------------------------------ children


class Child:
    """A driver process (its own process group; killed at the end of the test if still alive)."""

    def __init__(self, h, master: str, mode: str, *args, command=None, env=None) -> None:
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", DELTALOG_JAR=h.engine_jar(),
                   PYTHONPATH=str(h.REPO / "python"), PYSPARK_PYTHON=sys.executable, **(env or {}))
        self.p = subprocess.Popen(command or [sys.executable, str(CHILD), master, mode, *map(str, args)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env, start_new_session=True)
        self.lines: List[str] = []
        self.err: List[str] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._pump, args=(self.p.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.p.stderr, self.err), daemon=True).start()

    def _pump(self, stream, into) -> None:
        for line in stream:
            with self._cv:
                into.append(line.rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def wait_line(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for l in self.lines:
                    if l.startswith(prefix):
                        self.lines.remove(l)
                        return l
                if self.p.poll() is not None and not any(l.startswith(prefix) for l in self.lines):
                    self._cv.wait(0.5)  # let the pumps drain
                    if not any(l.startswith(prefix) for l in self.lines):
                        raise AssertionError(f"driver exited ({self.p.returncode}) before '{prefix}': "
                                             f"{self.lines}\n{self.stderr_tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no '{prefix}' from the driver within {timeout} s\n{self.stderr_tail()}")
                self._cv.wait(min(left, 1.0))

    def send(self, line: str) -> None:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def result(self, timeout: float) -> Dict:
        line = self.wait_line("RESULT ", timeout)
        try:
            self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pass
        return json.loads(line[len("RESULT "):])

    def stderr_tail(self, chars: int = 6000) -> str:
        return "\n".join(self.err)[-chars:]

    def kill(self) -> None:
        import signal
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.p.wait(timeout=30)


@pytest.fixture
def children():
    started: List[Child] = []
    yield started
    for c in started:
        c.kill()


def start(children, h, master, mode, *args) -> Child:
    c = Child(h, master, mode, *args)
    children.append(c)
    return c


# ------------------------------------------------------------------------------------ reference


def reference(n: int) -> Dict[str, List[tuple]]:
    """The rows each suite table must hold (cluster_child.suite), computed in Python."""
    dml = {i: (i % 5, i + 1_000_000 if i % 5 == 0 else i) for i in range(n)}
    for i in range(n - n // 4, n + n // 4):
        dml[i] = (dml[i][0], -i) if i in dml else (i % 5, i * 2)
    m, per = max(1, n // 6), max(1, n // 5)
    return {
        "parts": sorted((i, i % 4, i * 3 % 1000, f"s{i}") for i in range(n)),
        "dv": sorted((i, i % 7) for i in range(n) if i % 10 != 0),
        "dml": sorted((i, k, v) for i, (k, v) in dml.items() if i % 9 != 0),
        "optimize": sorted((i, i % 11) for i in range(6 * m)),
        "stream": sorted((i, f"k{i % 3}", i % 13) for i in range(5 * per)),
    }


COLUMNS = {"parts": ("id", "part", "v", "s"), "dv": ("id", "v"), "dml": ("id", "k", "v"),
           "optimize": ("id", "v"), "stream": ("id", "key", "v")}
READS = {"part": lambda r, n: r[1] == 1, "skip": lambda r, n: r[0] < n // 8,
         "both": lambda r, n: r[1] == 2 and r[0] >= 3 * n // 4, "all": lambda r, n: True}


def agg_of(rows, cols) -> Dict[str, int]:
    out = {"n": len(rows)}
    for c in ("id", "v"):
        if c in cols:
            out[f"sum_{c}"] = sum(r[cols.index(c)] for r in rows)
    return out


def rs_rows(path: Path, cols) -> List[tuple]:
    """The table's rows as delta-rs reads them (its DataFusion scan, which applies deletion
    vectors; ``to_pyarrow_table`` refuses tables with the deletionVectors reader feature)."""
    import pyarrow as pa
    from deltalake import DeltaTable as RsTable, QueryBuilder
    sql = "SELECT " + ", ".join(f'"{c}"' for c in cols) + " FROM t"
    t = pa.table(QueryBuilder().register("t", RsTable(str(path))).execute(sql).read_all()).to_pylist()
    return sorted(tuple(r[c] for c in cols) for r in t)


def data_files(table: Path) -> set:
    """Every Parquet data file under the table root (relative paths), the log excluded."""
    out = set()
    for d, _, names in os.walk(table):
        if "_delta_log" in Path(d).relative_to(table).parts:
            continue
        for f in names:
            if f.endswith(".parquet"):
                out.add(str((Path(d) / f).relative_to(table)))
    return out


def live_paths(h, table: Path) -> set:
    from urllib.parse import unquote
    return {unquote(p) for p in h.read_log(table).live}


# ------------------------------------------------------------------------------------ the suite


@pytest.fixture(scope="module")
def suites(spark_cluster, tmp_path_factory, full, h):
    """The suite on the cluster and on local[2], run at the same time (two driver processes)."""
    n = 200_000 if full else 2000
    runs, kids = {}, []
    try:
        for name, master in (("cluster", spark_cluster.master_url), ("local", "local[2]")):
            base = tmp_path_factory.mktemp(f"suite-{name}")
            kids.append((name, base, Child(h, master, "suite", base, n)))
        for name, base, kid in kids:
            runs[name] = (base, kid.result(timeout=1800))
            print(f"suite on {name}: {runs[name][1]['seconds']} s")
    finally:
        for _, _, kid in kids:
            kid.kill()
    return n, runs


def _without_timings(res: Dict) -> Dict:
    return {k: v for k, v in res.items() if k not in ("seconds", "executors", "app")}


def test_suite_on_cluster_equals_local_and_reference(suites, spark_cluster, h):
    n, runs = suites
    (_, cluster), (_, local) = runs["cluster"], runs["local"]
    assert cluster["executors"] == 2, "the cluster driver should have had one executor on each worker"
    # the jar reached each executor through spark.jars (Spark fetched it into the executor's
    # directory of the application), not through the installation's classpath
    jar = Path(h.engine_jar()).name
    for w in range(2):
        assert list((spark_cluster.base / f"worker-{w}" / cluster["app"]).glob(f"*/{jar}")), f"worker {w}"
    assert not list(Path(h.spark_jars_dir()).glob("deltalog*.jar"))
    assert local["executors"] == 0
    assert _without_timings(cluster) == _without_timings(local)
    ref = reference(n)
    for name, pred in READS.items():
        rows = [r for r in ref["parts"] if pred(r, n)]
        assert cluster["parts"][name]["agg"] == agg_of(rows, COLUMNS["parts"]), name
    for name in ("dv", "dml", "stream"):
        assert cluster[name] == agg_of(ref[name], COLUMNS[name]), name
    assert cluster["optimize"]["agg"] == agg_of(ref["optimize"], COLUMNS["optimize"])
    assert cluster["optimize"]["numFilesRemoved"] == 12  # six appends of two files
    assert cluster["optimize"]["numFilesAdded"] >= 1


@pytest.mark.parametrize("run", ["cluster", "local"])
def test_delta_rs_reads_the_suite_tables(suites, run):
    n, runs = suites
    base, _ = runs[run]
    ref = reference(n)
    for name, cols in COLUMNS.items():
        assert rs_rows(base / name, cols) == ref[name], f"{run}: table {name}"


def test_partitioned_write_stats_and_pruning_counts(suites, h):
    """The executors' files carry partition values and stats; the listing counts of the reads
    are those the stats imply (pruning on ``part``, skipping on ``id``)."""
    n, runs = suites
    base, res = runs["cluster"]
    adds = list(h.read_log(base / "parts").live.values())
    assert len(adds) == 16  # 4 tasks x 4 partition values
    files = []
    for a in adds:
        stats = json.loads(a.stats)
        assert set(a.partitionValues) == {"part"} and a.path.startswith(f"part={a.partitionValues['part']}/")
        assert stats["numRecords"] > 0 and set(stats["minValues"]) >= {"id", "v", "s"}
        assert stats["nullCount"]["id"] == 0
        files.append((int(a.partitionValues["part"]), stats["minValues"]["id"], stats["maxValues"]["id"]))
    assert sum(json.loads(a.stats)["numRecords"] for a in adds) == n
    expect = {
        "part": ([f for f in files if f[0] == 1], lambda f: True),
        "skip": (files, lambda f: f[1] < n // 8),
        "both": ([f for f in files if f[0] == 2], lambda f: f[2] >= 3 * n // 4),
        "all": (files, lambda f: True),
    }
    for name, (pruned, keep) in expect.items():
        assert res["parts"][name]["listing"] == [16, len(pruned), len([f for f in pruned if keep(f)])], name
    assert res["parts"]["skip"]["listing"][2] < 16 and res["parts"]["both"]["listing"][2] < 4


def test_delete_on_the_cluster_wrote_deletion_vectors(suites, h):
    _, runs = suites
    base, _ = runs["cluster"]
    st = h.read_log(base / "dv")
    dvs = [a for a in st.live.values() if a.deletionVector]
    assert dvs, "DELETE on a table with delta.enableDeletionVectors should mark rows with deletion vectors"
    assert sum(a.deletionVector.cardinality for a in dvs) == len([i for i in range(suites[0]) if i % 10 == 0])
    if any(a.deletionVector.storageType == "u" for a in dvs):
        assert list((base / "dv").rglob("deletion_vector_*.bin")), "the deletion vector file is missing"


# ------------------------------------------------------------------------------------ two drivers


def test_two_drivers_append_to_one_table_at_once(spark_cluster, h, tmp_path, full, children):
    k, rows = (10, 50) if full else (3, 20)
    table = tmp_path / "t"
    h.create_table(table, schema=APPEND_SCHEMA)
    kids = [start(children, h, spark_cluster.master_url, "append", table, w, k, rows) for w in (1, 2)]
    for c in kids:
        c.wait_line("ready", timeout=600)
    # both applications hold an executor now: they run on the cluster at the same time
    apps = spark_cluster.state()["activeapps"]
    assert len([a for a in apps if a.get("name", "").startswith("cluster-append-")]) == 2, apps
    for c in kids:
        c.send("go")
    for c in kids:
        r = c.result(timeout=900)
        assert r == {"appends": k, "executors": 1}
    st = h.read_log(table)  # contiguous versions, one commitInfo and distinct txnId each
    assert st.version == 2 * k
    for v in range(1, 2 * k + 1):
        added = [a for a in st.commits[v] if isinstance(a, h.AddFile)]
        assert added, f"version {v} adds nothing"
        assert all(a.dataChange for a in added)
    want = sorted((w, s, i) for w in (1, 2) for s in range(k) for i in range(rows))
    assert rs_rows(table, ("writer", "seq", "i")) == want
    # each (writer, seq) append is exactly one commit: its rows are in the files of one version
    import pyarrow.parquet as pq
    per_version = {}
    for v in range(1, 2 * k + 1):
        paths = [a.path for a in st.commits[v] if isinstance(a, h.AddFile)]
        keys = set()
        for p in paths:
            t = pq.read_table(table / p, columns=["writer", "seq"]).to_pylist()
            keys |= {(r["writer"], r["seq"]) for r in t}
        assert len(keys) == 1, f"version {v} holds the rows of {keys}"
        per_version[v] = keys.pop()
    assert sorted(per_version.values()) == sorted((w, s) for w in (1, 2) for s in range(k))


# ------------------------------------------------------------------------------------ executor kill


def _kill_round(spark_cluster, h, children, table: Path, parts: int, rows: int, sleep: float):
    """One slow write with worker 1 killed while its executor holds a half-written file. Returns
    the orphan (unreferenced) data files after the commit and the driver, still running (it takes
    ``count`` / ``vacuum`` / ``quit`` on stdin)."""
    before = h.read_log(table).version
    c = start(children, h, spark_cluster.master_url, "slowwrite", table, parts, rows, sleep)
    c.wait_line("writing", timeout=600)
    deadline = time.monotonic() + 600
    # kill when worker 1's executor holds a data file of this write open (a half-written file)
    while not [f for f in spark_cluster.open_files(1, table) if f.endswith(".parquet")]:
        assert c.p.poll() is None, f"the writer exited early: {c.stderr_tail()}"
        assert time.monotonic() < deadline, "worker 1's executor never opened a data file of the write"
        time.sleep(0.05)
    spark_cluster.kill_worker(1)
    spark_cluster.start_worker(1, wait=False)
    version = int(c.wait_line("committed ", timeout=900).split()[1])
    spark_cluster.wait_workers(2)

    st = h.read_log(table)
    assert version == before + 1 == st.version, "the write should commit exactly one new version"
    new_adds = [a for a in st.commits[version] if isinstance(a, h.AddFile)]
    assert new_adds and sum(json.loads(a.stats)["numRecords"] for a in new_adds) == parts * rows
    assert len({a.path for a in new_adds}) == len(new_adds)
    live = live_paths(h, table)
    on_disk = data_files(table)
    assert live <= on_disk, f"referenced files missing: {sorted(live - on_disk)}"
    c.send("count")
    assert int(c.wait_line("count ", timeout=300).split()[1]) == version * parts * rows
    return on_disk - live, c


def test_executor_killed_mid_write(spark_cluster, h, tmp_path, full, children):
    rounds = 4 if full else 1
    parts, rows, sleep = (12, 5000, 3.0) if full else (6, 1000, 3.0)
    table = tmp_path / "t"
    h.create_table(table, schema=SLOW_SCHEMA)
    for r in range(rounds):
        orphans, c = _kill_round(spark_cluster, h, children, table, parts, rows, sleep)
        assert orphans, f"round {r}: the killed executor's half-written file should be left unreferenced"
        if r < rounds - 1:
            c.send("quit")
            c.result(timeout=300)
    want = sorted(i for _ in range(rounds) for i in range(parts * rows))
    assert [i for (i,) in rs_rows(table, ("id",))] == want
    # VACUUM with no retention removes the orphans and nothing the table references
    live = live_paths(h, table)
    c.send("vacuum")
    c.wait_line("vacuumed", timeout=600)
    assert data_files(table) == live
    c.send("count")
    assert int(c.wait_line("count ", timeout=300).split()[1]) == len(want)
    assert [i for (i,) in rs_rows(table, ("id",))] == want
    c.send("quit")
    assert c.result(timeout=300)["executors"] >= 1


# ------------------------------------------------------------------------------------ the demo job


def test_demo_job_runs_on_the_cluster(spark_cluster, h, tmp_path, children, full):
    """What docker-compose's ``job`` service runs (``python -m deltalog.demo`` with the cluster as
    master and a shared directory for its tables), against this cluster. Full size only: the demo
    takes about 2 min on the cluster of a loaded 2-core machine, beyond the bounded run's budget
    (the suite above runs the same operations in the bounded run)."""
    if not full:
        pytest.skip("full size only (--full or DELTALOG_INTEGRATION_FULL=1)")
    data = tmp_path / "data"
    c = Child(h, "", "", command=[sys.executable, "-m", "deltalog.demo"],
              env={"DELTALOG_DEMO_MASTER": spark_cluster.master_url, "DELTALOG_DEMO_DIR": str(data)})
    children.append(c)
    rc = c.p.wait(timeout=900)
    time.sleep(0.5)  # the pumps drain
    out = "\n".join(c.lines)
    assert rc == 0, f"the demo failed ({rc}):\n{out[-3000:]}\n{c.stderr_tail()}"
    assert f"({spark_cluster.master_url})" in out
    # 3 of ids 290-299 are in 'eu' (id % 3 == 0) plus the 10 appended 'eu' rows 300-309
    assert "rows with region = 'eu' AND id >= 290: 13" in out
    assert "agree   : True" in out
    assert not list(data.iterdir()), "the demo removes its tables when it is done"
    apps = [a for a in spark_cluster.state()["completedapps"] if a.get("name") == "deltalog-demo"]
    assert apps, "the demo's application should have run on the cluster"


# ------------------------------------------------------------------------------------ more features


def features_reference() -> dict:
    not3 = [i for i in range(2000) if i % 3 != 0]
    return {
        "zorder": [4, [[4000, sum(range(4000)), sum(i % 17 for i in range(4000))]]],
        "cdf_merge": [["insert", 500], ["update_postimage", 500], ["update_preimage", 500]],
        "generated_identity_check": ["DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", [[2000, 2 * sum(range(2000)), 2000]]],
        "column_mapping": [[1000, sum(range(1000)) + 10]],
        "liquid_clustering": [3, [[3000, sum(range(3000)), 13]]],
        "row_tracking_dv_purge": [len([i for i in not3 if i > 100]), [[2000, sum(not3)]]],
        "convert_clone_restore": [[500, sum(range(500))]],
        "overwrites": [[0, 250, sum(range(0, 1000, 4))], [1, 10, 45], [2, 10, 45],
                       [3, 250, sum(range(3, 1000, 4))]],
        "stream_source": [[1500, sum(range(1500))]],
    }


def test_more_features_on_cluster_equal_local(spark_cluster, h, tmp_path_factory, children, full):
    """Z-order and liquid-clustering OPTIMIZE, MERGE with change data feed, identity / generated
    columns and a CHECK constraint failing on an executor, column mapping, row tracking with
    deletion vectors and REORG PURGE, CONVERT / CLONE / RESTORE, replaceWhere and dynamic partition
    overwrite, a deltalog-to-deltalog stream: on the cluster and on local[2] at once, both equal
    to the Python reference (``cluster_features.py``). Full size only (about 2 min more)."""
    if not full:
        pytest.skip("full size only (--full or DELTALOG_INTEGRATION_FULL=1)")
    kids = {name: start(children, h, master, "features", tmp_path_factory.mktemp(f"features-{name}"))
            for name, master in (("cluster", spark_cluster.master_url), ("local", "local[2]"))}
    res = {name: c.result(timeout=1800) for name, c in kids.items()}
    assert res["cluster"]["executors"] == 2
    ref = features_reference()
    assert res["cluster"]["features"] == ref
    assert res["local"]["features"] == ref
