"""Engine adapters for the log-replay benchmark: delta-rs, deltalog, delta-spark, and a pyarrow floor.

Every adapter implements the same small protocol, driven by ``run.py``'s worker:

* ``start()``            once per run (deltalog, delta-spark: the warm SparkSession); returns info.
* ``before_run(case)``   untimed preparation (clear caches, make the S4 table copy).
* ``run(case)``          **the timed operation**; returns an opaque handle.
* ``summarize(case, h)`` untimed: ``Answer`` (version, active paths or schema, extra numbers).
* ``after_run(case, h)`` untimed clean-up.
* ``pids()``             processes whose peak RSS is measured (Python, and the JVM for the Spark engines).

Case ops: ``load`` (latest, S1/S2), ``load_version`` / ``load_timestamp`` (S7), ``pm`` (S3,
protocol + schema + version only), ``checkpoint`` (S4).

``python benchmarks/engines.py --fresh ENGINE PATH`` is the fresh-process measurement: start the
engine (for deltalog: create the SparkSession, reported separately), then load once; prints JSON.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class Unavailable(Exception):
    """The engine (or one of its operations) cannot run here; the message goes in the cell."""


@dataclass
class Answer:
    version: int
    paths: Optional[List[str]] = None          # active file paths (relative, as in the log)
    schema: Optional[List[str]] = None         # schema field names (S3)
    extra: Dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------ helpers

def proc_status(pid: int) -> Tuple[int, int]:
    """(VmRSS, VmHWM) of a process in bytes; (0, 0) if unreadable."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


def reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0: write 5 to clear_refs)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def log_dir(table: str) -> str:
    return os.path.join(table, "_delta_log")


def checkpoint_files(table: str, version: Optional[int] = None) -> List[str]:
    names = [n for n in os.listdir(log_dir(table)) if ".checkpoint." in n and not n.startswith(".")]
    if version is not None:
        names = [n for n in names if n.startswith(f"{version:020d}.")]
    return sorted(names)


def make_checkpoint_copy(src: str, dst: str) -> None:
    """An S4 working copy: the existing checkpoint plus the JSON commits after it (hard links;
    writers only add files), and a private copy of ``_last_checkpoint`` (rewritten by writers)."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(log_dir(dst))
    with open(os.path.join(log_dir(src), "_last_checkpoint")) as f:
        ck_version = int(json.load(f)["version"])
    for name in os.listdir(log_dir(src)):
        s = os.path.join(log_dir(src), name)
        if name == "_last_checkpoint":
            shutil.copyfile(s, os.path.join(log_dir(dst), name))
        elif name.startswith(f"{ck_version:020d}.checkpoint."):
            os.link(s, os.path.join(log_dir(dst), name))
        elif name.endswith(".json") and name[:20].isdigit() and int(name[:20]) > ck_version:
            os.link(s, os.path.join(log_dir(dst), name))


def strip_to_checkpoint(table: str, version: int) -> None:
    """Leave only the checkpoint at `version` (and `_last_checkpoint`) so a re-read must use it."""
    for name in os.listdir(log_dir(table)):
        if name == "_last_checkpoint" or name.startswith(f"{version:020d}.checkpoint."):
            continue
        p = os.path.join(log_dir(table), name)
        if os.path.isfile(p):
            os.unlink(p)


def _version_of(name: str) -> int:
    return int(name[:20])


# ------------------------------------------------------------------------------ delta-rs

class DeltaRsEngine:
    """delta-rs through the `deltalake` wheel. Full load = DeltaTable(path) + one call that
    materialises every active file: ``get_add_actions(flatten=False)`` (an Arrow table, the
    default) or ``file_uris()`` (the call perf-anchors §1.2 timed)."""

    name = "delta-rs"

    def __init__(self, op: str = "get_add_actions") -> None:
        if op not in ("get_add_actions", "file_uris"):
            raise ValueError(op)
        self.op = op

    def start(self) -> Dict[str, Any]:
        t0 = time.perf_counter()
        try:
            import deltalake
        except ImportError as e:
            raise Unavailable(f"deltalake not importable: {e} (pip install deltalake==1.6.6)")
        self.dl = deltalake
        return {"version": deltalake.__version__, "import_s": time.perf_counter() - t0,
                "full_load_call": self.op}

    def pids(self) -> List[Tuple[str, int]]:
        return [("py", os.getpid())]

    def before_run(self, case: Dict[str, Any]) -> None:
        if case["op"] == "checkpoint":
            make_checkpoint_copy(case["table"], case["work"])
            self._ck_dt = self.dl.DeltaTable(case["work"])  # "from a loaded snapshot"

    def _materialise(self, dt: Any) -> Any:
        return dt.file_uris() if self.op == "file_uris" else dt.get_add_actions(flatten=False)

    def run(self, case: Dict[str, Any]) -> Any:
        op = case["op"]
        if op == "load":
            dt = self.dl.DeltaTable(case["table"])
            return dt, self._materialise(dt)
        if op == "load_version":
            dt = self.dl.DeltaTable(case["table"], version=case["version"])
            return dt, self._materialise(dt)
        if op == "load_timestamp":
            # open at version 0 (tiny), then time travel: avoids loading the latest first
            dt = self.dl.DeltaTable(case["table"], version=0)
            dt.load_as_version(_utc(case["timestamp_ms"]))
            return dt, self._materialise(dt)
        if op == "pm":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # without_files is deprecated (ignored) in 1.6.6
                dt = self.dl.DeltaTable(case["table"], without_files=True)
            return dt, (dt.protocol(), dt.schema(), dt.version())
        if op == "checkpoint":
            self._ck_dt.create_checkpoint()
            return self._ck_dt, None
        raise ValueError(op)

    def summarize(self, case: Dict[str, Any], h: Any) -> Answer:
        dt, out = h
        ans = _table_answer(case["op"], dt, out)
        if ans is not None:
            return ans
        if self.op == "file_uris":
            root = os.path.abspath(case["table"]).rstrip("/") + "/"
            paths = [u.split(root, 1)[1] if root in u else u for u in out]
        else:
            import pyarrow as pa
            paths = pa.table(out).column("path").to_pylist()
        return Answer(dt.version(), paths=paths)

    def after_run(self, case: Dict[str, Any], h: Any) -> None:
        self._ck_dt = None

    def reread(self, table: str) -> Answer:
        """Load with delta-rs (used to check checkpoints written by any engine)."""
        import pyarrow as pa
        dt = self.dl.DeltaTable(table)
        return Answer(dt.version(), paths=pa.table(dt.get_add_actions(flatten=False)).column("path").to_pylist())


def _table_answer(op: str, dt: Any, out: Any) -> Optional[Answer]:
    """The answer of a `pm` or `checkpoint` case, the same for delta-rs and deltalog (``dt`` has
    ``version()``; a `pm` case's ``out`` is (protocol, schema, version)); None for the load cases."""
    if op == "pm":
        _, schema, version = out
        return Answer(int(version), schema=[f.name for f in schema.fields])
    if op == "checkpoint":
        return Answer(dt.version())
    return None


def _utc(ms: int) -> Any:
    import datetime
    return datetime.datetime.fromtimestamp(ms / 1000.0, tz=datetime.timezone.utc)


# ------------------------------------------------------------------------------ deltalog

def spark_builder(master: str = "local[2]") -> Any:
    from pyspark.sql import SparkSession
    return (SparkSession.builder.master(master)
            .appName("deltalog-bench")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "3g")
            .config("spark.sql.session.timeZone", "UTC")
            # diagnostics only (e.g. -Xlog options); never set by `make bench`
            .config("spark.driver.extraJavaOptions", os.environ.get("DELTALOG_BENCH_JOPTS", "")))


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    first = text.splitlines()[0] if text else type(e).__name__
    return first[:300]


class DeltalogEngine:
    """deltalog through its Python API (py4j into the engine in the Spark driver JVM).

    One warm SparkSession per run. Every measured load starts from a fresh ``DeltaTable`` handle
    after ``DeltaTable.clearCache(spark)`` (if the API has it), so no cached snapshot is reused.
    """

    name = "deltalog"

    def start(self) -> Dict[str, Any]:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        py = os.path.join(REPO, "python")
        if os.path.isdir(os.path.join(py, "deltalog")) and py not in sys.path:
            sys.path.insert(0, py)  # the source tree wins over an installed copy
        try:
            import deltalog
            from deltalog.tables import DeltaTable
        except Exception as e:  # ImportError, or an import-time error in a half-built tree
            raise Unavailable(f"deltalog API not available yet: {_short(e)}")
        self.DeltaTable = DeltaTable
        t0 = time.perf_counter()
        try:
            # a private copy of the jar: a concurrent `make jar` replacing it mid-run otherwise
            # breaks lazy class loading in the running JVM (NoClassDefFoundError)
            src = os.environ.get("DELTALOG_BENCH_JAR") or _bundled_jar()
            jar = None
            if src:
                jar = _private_jar_copy(src)
                self.jar_source = src
            self.spark = deltalog.configure_spark_with_deltalog(spark_builder(), jar_path=jar).getOrCreate()
            self.spark.sparkContext.setLogLevel("ERROR")
            jvm = self.spark.sparkContext._jvm
            self.jvm_pid = int(jvm.java.lang.ProcessHandle.current().pid())
        except Exception as e:
            raise Unavailable(f"deltalog API not available yet: SparkSession failed: {_short(e)}")
        session_s = time.perf_counter() - t0
        try:  # the Python API exists but the jar may predate io.deltalog.api.TableApi
            from py4j.java_gateway import JavaClass
            api = jvm.io.deltalog.api.TableApi
            if not isinstance(api, JavaClass):
                raise Unavailable("io.deltalog.api.TableApi is missing from the jar "
                                  "(rebuild it: `make jar`)")
        except Unavailable as e:
            self.stop()
            raise Unavailable(f"deltalog API not available yet: {e}")
        self.has_clear = callable(getattr(DeltaTable, "clearCache", None))
        return {"version": getattr(deltalog, "__version__", "?"),
                "session_start_s": session_s, "clearCache": self.has_clear,
                "jar": _jar_info()}

    def pids(self) -> List[Tuple[str, int]]:
        return [("py", os.getpid()), ("jvm", self.jvm_pid)]

    def _clear(self) -> None:
        if self.has_clear:
            self.DeltaTable.clearCache(self.spark)

    def before_run(self, case: Dict[str, Any]) -> None:
        self._clear()
        # When the case changes: drop the previous runs' handles (py4j releases the JVM objects
        # when the Python proxies die) and let the driver reclaim them, so one case's 1M-file state
        # does not linger into the next one's heap. Not between runs of one case: a full GC before
        # every run shrank the heap each time, so every load ran into a small young generation
        # (S1 100k +5 ms, S2 (b) +15 ms), which no driver that loads tables does.
        # (Nothing to reclaim before a process' first case: the fresh-process load is not
        # preceded by a full GC either.)
        key = (case.get("op"), case.get("table"), case.get("version"), case.get("timestamp_ms"))
        previous, self._last_case = getattr(self, "_last_case", None), key
        if previous is not None and previous != key:
            import gc
            gc.collect()
            self.spark._jvm.System.gc()
        if case["op"] == "checkpoint":
            if not callable(getattr(self.DeltaTable, "checkpoint", None)):
                raise Unavailable("deltalog API not available yet: DeltaTable.checkpoint() is missing")
            make_checkpoint_copy(case["table"], case["work"])
            self._ck_dt = self.DeltaTable.forPath(self.spark, case["work"])
            self._ck_dt.snapshot()  # "from a loaded snapshot": JVM state built, untimed

    def _load(self, **kw: Any) -> Any:
        # split points (diagnostics, not the reported time): open, JVM state (one cheap py4j call
        # that needs the live-file state: numFiles), Arrow transfer to Python
        t0 = time.perf_counter()
        dt = self.DeltaTable.forPath(self.spark, self._table, **kw)
        t1 = time.perf_counter()
        num_files = getattr(getattr(dt, "_handle", None), "numFiles", None)
        if num_files is not None:
            num_files()
        t2 = time.perf_counter()
        out = dt.filesArrow()
        t3 = time.perf_counter()
        self._split = {"open_s": t1 - t0, "jvm_state_s": t2 - t1, "to_arrow_s": t3 - t2}
        return dt, out

    def run(self, case: Dict[str, Any]) -> Any:
        DT, spark, op = self.DeltaTable, self.spark, case["op"]
        self._table, self._split = case["table"], None
        if op == "load":
            return self._load()
        if op == "load_version":
            return self._load(version=case["version"])
        if op == "load_timestamp":
            return self._load(timestamp=int(case["timestamp_ms"]))
        if op == "pm":
            dt = DT.forPath(spark, case["table"])
            return dt, (dt.protocol(), dt.schema(), dt.version())
        if op == "checkpoint":
            self._ck_dt.checkpoint()
            return self._ck_dt, None
        raise ValueError(op)

    def summarize(self, case: Dict[str, Any], h: Any) -> Answer:
        dt, out = h
        ans = _table_answer(case["op"], dt, out)
        if ans is not None:
            return ans
        return Answer(dt.version(), paths=out.column("path").to_pylist(),
                      extra={"split": self._split} if self._split else {})

    def after_run(self, case: Dict[str, Any], h: Any) -> None:
        self._ck_dt = None

    def reread(self, table: str) -> Answer:
        self._clear()
        dt = self.DeltaTable.forPath(self.spark, table)
        return Answer(dt.version(), paths=dt.filesArrow().column("path").to_pylist())

    def stop(self) -> None:
        try:
            self.spark.stop()
        except Exception:
            pass


def _private_jar_copy(src: str) -> str:
    """A copy of the jar `src` that no build replaces: one per jar build (named by its size and
    modification time, kept with that time: the class-data key follows the jar), shared by every
    driver of that build (a copy per driver filled the temp directory: ~3.5 MB per fresh process)."""
    import tempfile
    st = os.stat(src)
    d = os.path.join(tempfile.gettempdir(), f"deltalog-bench-jar-{st.st_size}-{st.st_mtime_ns}")
    jar = os.path.join(d, os.path.basename(src))
    if not os.path.exists(jar):
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".copy-", dir=d)
        os.close(fd)
        shutil.copy2(src, tmp)
        os.replace(tmp, jar)  # atomic: a concurrent driver sees no jar or the whole jar
    return jar


def _bundled_jar() -> Optional[str]:
    jars = sorted(glob.glob(os.path.join(REPO, "python", "deltalog", "jars", "deltalog-spark_*.jar")))
    return jars[-1] if jars else None


def _jar_info() -> Optional[str]:
    override = os.environ.get("DELTALOG_BENCH_JAR")
    jars = [override] if override else sorted(glob.glob(os.path.join(REPO, "python", "deltalog", "jars", "*.jar")))
    if not jars:
        return None
    st = os.stat(jars[-1])
    return f"{os.path.basename(jars[-1])} ({st.st_size} B, mtime {time.strftime('%Y-%m-%d %H:%M', time.localtime(st.st_mtime))})"


# ------------------------------------------------------------------------------ delta-spark

DELTA_SPARK_VERSION = "4.4.0"  # as integration/peers.py and `make peers`


def delta_spark_jars() -> List[str]:
    """delta-spark 4.4.0 and its runtime jars from the local Maven repository (`make peers`
    resolves them; the benchmark never downloads anything)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
    from peers import delta_spark_jar_paths
    jars = [str(j) for j in delta_spark_jar_paths()]
    missing = [j for j in jars if not os.path.exists(j)]
    if missing:
        raise Unavailable(f"delta-spark {DELTA_SPARK_VERSION} jars missing (run `make peers`): {', '.join(missing)}")
    return jars


class DeltaSparkEngine:
    """delta-spark 4.4.0 (the reference Spark connector), driven through py4j on its JVM classes.

    One warm SparkSession per run (``local[2]``, same settings as deltalog's, plus delta-spark's
    jars, ``DeltaSparkSessionExtension`` and ``DeltaCatalog``). Before every run, including the
    warm-up, ``DeltaLog.clearCache()`` empties delta-spark's DeltaLog cache, so every run builds a
    new ``DeltaLog`` and snapshot from the files (deltalog's adapter calls
    ``DeltaTable.clearCache`` the same way). The snapshot's cached state (delta-spark persists the
    reconstructed log state as a cached Dataset) is released after each run, untimed.

    Timed calls (``jvm`` = the driver's classes, ``DL`` = ``org.apache.spark.sql.delta.DeltaLog``):

    * load: ``DL.forTable(spark, path)``, ``.update()``, then the live files as a pyarrow Table:
      ``snapshot.allFiles`` (the state reconstruction, a Spark job) with the add columns
      ``path, partitionValues, size, modificationTime, dataChange, stats`` collected by
      ``DataFrame.toArrow()``, as delta-rs' ``get_add_actions`` and deltalog's ``filesArrow``
      hand an Arrow table to Python. (All AddFile columns cannot go through ``toArrow`` in
      pyspark 4.2: the null ``deletionVector`` struct fails pyarrow's non-null cast.)
    * load_version: ``DL.forTable(spark, path).getSnapshotAt(v)`` + the same listing.
    * load_timestamp: ``deltaLog.history().getActiveCommitAtTime(Timestamp(ms), ...)`` (the commit
      in effect at that time, as ``timestampAsOf`` resolves it) then ``getSnapshotAt(commit.version)``
      + the same listing.
    * pm: ``DL.forTable(spark, path).update()``, then ``snapshot.protocol()``, ``.metadata()``,
      ``.schema()`` field names and ``.version()``; no file listing.
    * checkpoint: ``deltaLog.checkpoint()`` on a DeltaLog of the case's table copy, loaded (and its
      state computed: ``snapshot.numOfFiles()``) in ``before_run``.
    """

    name = "delta-spark"
    reread_needs_commit = True  # S4's re-read: see run.py's _relink_commit
    ADD_FIELDS = ("path", "partitionValues", "size", "modificationTime", "dataChange", "stats")

    def start(self) -> Dict[str, Any]:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        jars = delta_spark_jars()
        t0 = time.perf_counter()
        try:
            self.spark = (spark_builder()
                          .appName("delta-spark-bench")
                          .config("spark.ui.showConsoleProgress", "false")
                          .config("spark.driver.bindAddress", "127.0.0.1")
                          .config("spark.driver.host", "127.0.0.1")
                          .config("spark.jars", ",".join(jars))
                          .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                          .config("spark.sql.catalog.spark_catalog",
                                  "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                          .getOrCreate())
            self.spark.sparkContext.setLogLevel("ERROR")
            jvm = self.spark.sparkContext._jvm
            self.jvm = jvm
            self.jvm_pid = int(jvm.java.lang.ProcessHandle.current().pid())
            self.DL = jvm.org.apache.spark.sql.delta.DeltaLog
            self.DL.clearCache()  # fails here, not in the first case, if the classes are missing
        except Exception as e:
            raise Unavailable(f"delta-spark not available: SparkSession failed: {_short(e)}")
        return {"version": DELTA_SPARK_VERSION, "session_start_s": time.perf_counter() - t0,
                "jars": [os.path.basename(j) for j in jars]}

    def pids(self) -> List[Tuple[str, int]]:
        return [("py", os.getpid()), ("jvm", self.jvm_pid)]

    # -- py4j helpers: Scala default arguments are methods named `<method>$default$<n>`
    @staticmethod
    def _defaults(obj: Any, method: str, *ns: int) -> List[Any]:
        return [getattr(obj, f"{method}$default${n}")() for n in ns]

    def _for_table(self, path: str) -> Any:
        return self.DL.forTable(self.spark._jsparkSession, path)

    def _update(self, dlog: Any) -> Any:
        return dlog.update(*self._defaults(dlog, "update", 1, 2, 3))

    def _snapshot_at(self, dlog: Any, version: int) -> Any:
        return dlog.getSnapshotAt(int(version), *self._defaults(dlog, "getSnapshotAt", 2, 3, 4))

    def _files_arrow(self, snap: Any) -> Any:
        from pyspark.sql import DataFrame
        return DataFrame(snap.allFiles().toDF(), self.spark).select(*self.ADD_FIELDS).toArrow()

    def before_run(self, case: Dict[str, Any]) -> None:
        self.DL.clearCache()
        key = (case.get("op"), case.get("table"), case.get("version"), case.get("timestamp_ms"))
        previous, self._last_case = getattr(self, "_last_case", None), key
        if previous is not None and previous != key:  # as deltalog's adapter: only when the case changes
            import gc
            gc.collect()
            self.jvm.System.gc()
        if case["op"] == "checkpoint":
            make_checkpoint_copy(case["table"], case["work"])
            self._ck_log = self._for_table(case["work"])
            self._update(self._ck_log).numOfFiles()  # "from a loaded snapshot": state built, untimed

    def _load(self, snap: Any) -> Any:
        t1 = time.perf_counter()
        out = self._files_arrow(snap)
        self._split = {"open_s": t1 - self._t0, "to_arrow_s": time.perf_counter() - t1}
        return snap, out

    def run(self, case: Dict[str, Any]) -> Any:
        op = case["op"]
        self._split = None
        self._t0 = time.perf_counter()
        if op == "load":
            return self._load(self._update(self._for_table(case["table"])))
        if op == "load_version":
            return self._load(self._snapshot_at(self._for_table(case["table"]), case["version"]))
        if op == "load_timestamp":
            dlog = self._for_table(case["table"])
            hist = dlog.history()
            ts = self.jvm.java.sql.Timestamp(int(case["timestamp_ms"]))
            commit = hist.getActiveCommitAtTime(
                ts, self.jvm.scala.Option.empty(), False,
                *self._defaults(hist, "getActiveCommitAtTime", 4, 5))
            return self._load(self._snapshot_at(dlog, commit.version()))
        if op == "pm":
            snap = self._update(self._for_table(case["table"]))
            snap.protocol()
            snap.metadata()
            return snap, (int(snap.version()), list(snap.schema().fieldNames()))
        if op == "checkpoint":
            self._ck_log.checkpoint()
            return self._ck_log.unsafeVolatileSnapshot(), None
        raise ValueError(op)

    def summarize(self, case: Dict[str, Any], h: Any) -> Answer:
        snap, out = h
        op = case["op"]
        if op == "pm":
            return Answer(out[0], schema=out[1])
        if op == "checkpoint":
            return Answer(int(snap.version()))
        return Answer(int(snap.version()), paths=out.column("path").to_pylist(),
                      extra={"split": self._split} if self._split else {})

    def after_run(self, case: Dict[str, Any], h: Any) -> None:
        try:  # release the cached state Dataset of this run's snapshot (untimed)
            h[0].uncache()
        except Exception:
            pass
        self._ck_log = None

    def reread(self, table: str) -> Answer:
        self.DL.clearCache()
        snap = self._update(self._for_table(table))
        out = self._files_arrow(snap)
        snap.uncache()
        return Answer(int(snap.version()), paths=out.column("path").to_pylist())

    def stop(self) -> None:
        try:
            self.spark.stop()
        except Exception:
            pass


# ------------------------------------------------------------------------------ pyarrow floor

class FloorEngine:
    """A pyarrow-only lower bound (perf-anchors §6.1), NOT a Delta reader.

    load: read the newest checkpoint <= target (projected ``add`` leaf columns, 1 thread) plus the
    JSON commits after it with ``pyarrow.json`` (one buffer, 1 thread), then drop every path that a JSON
    ``remove`` names with one ``is_in`` hash pass. It relies on the generator's shape (no path is
    ever re-added; single-part checkpoints) instead of full reconciliation.
    pm: list ``_delta_log``; protocol/metaData from the checkpoint's two columns, else a reverse
    scan of the commits for the newest ``protocol``/``metaData`` lines.
    checkpoint: ``pq.write_table`` of the loaded adds (snappy, one file); load untimed.
    """

    name = "floor"
    ADD_FIELDS = ("path", "partitionValues", "size", "modificationTime", "dataChange", "stats")

    def start(self) -> Dict[str, Any]:
        import pyarrow
        import pyarrow.compute  # noqa: F401
        import pyarrow.json  # noqa: F401
        import pyarrow.parquet  # noqa: F401
        self.pa = pyarrow
        return {"version": pyarrow.__version__}

    def pids(self) -> List[Tuple[str, int]]:
        return [("py", os.getpid())]

    def before_run(self, case: Dict[str, Any]) -> None:
        if case["op"] == "checkpoint":
            self._ck_table = self._load(case["table"], None)
            self._ck_out = case["work"] + ".floor.parquet"
            os.makedirs(os.path.dirname(self._ck_out), exist_ok=True)

    def _listing(self, table: str, target: Optional[int]) -> Tuple[Optional[str], List[str], int]:
        names = os.listdir(log_dir(table))
        commits = sorted(n for n in names if n.endswith(".json") and len(n) == 25 and n[:20].isdigit())
        latest = _version_of(commits[-1]) if commits else -1
        cks = sorted(n for n in names if n.endswith(".checkpoint.parquet"))
        tgt = latest if target is None else target
        cks = [n for n in cks if _version_of(n) <= tgt]
        ck = cks[-1] if cks else None
        ck_v = _version_of(ck) if ck else -1
        if ck:
            latest = max(latest, ck_v)
        tgt = latest if target is None else target
        commits = [n for n in commits if ck_v < _version_of(n) <= tgt]
        return ck, commits, tgt

    def _load(self, table: str, target: Optional[int]) -> Any:
        pa = self.pa
        import pyarrow.compute as pc
        import pyarrow.json as pj
        import pyarrow.parquet as pq
        ck, commits, tgt = self._listing(table, target)
        parts = []
        partitioned = False
        if ck:
            # leaf projection, one thread: reading the whole `add` struct is 2-5x slower, and
            # delta-rs writes one row group, so threads only add contention
            t = pq.read_table(os.path.join(log_dir(table), ck),
                              columns=[f"add.{n}" for n in self.ADD_FIELDS], use_threads=False)
            parts.append(t.filter(t.column("path").is_valid()))
        removed = None
        if commits:
            buf = b"".join(open(os.path.join(log_dir(table), n), "rb").read() for n in commits)
            add_t = pa.struct([("path", pa.string()), ("size", pa.int64()),
                               ("modificationTime", pa.int64()), ("dataChange", pa.bool_()),
                               ("stats", pa.string())])
            schema = pa.schema([("add", add_t), ("remove", pa.struct([("path", pa.string())]))])
            # one thread, 8 MB blocks: the fastest setting measured on 2 cores (threads contend)
            j = pj.read_json(pa.py_buffer(buf), read_options=pj.ReadOptions(
                use_threads=False, block_size=8 << 20), parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="ignore"))
            a = j.column("add").combine_chunks()
            a = a.filter(a.is_valid())
            parts.append(pa.table({n: a.field(n) for n in add_t.names}))
            r = j.column("remove").combine_chunks()
            removed = r.filter(r.is_valid()).field("path")
        if len(parts) > 1:
            common = [n for n in parts[1].column_names if n in parts[0].column_names]
            target = pa.schema([pa.field(n, parts[1].schema.field(n).type) for n in common])
            parts = [p.select(common).cast(target) for p in parts]
        t = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if removed is not None and len(removed):
            t = t.filter(pc.invert(pc.is_in(t.column("path"), value_set=removed)))
        t = t.replace_schema_metadata({"version": str(tgt)})
        return t

    def _pm(self, table: str) -> Tuple[int, dict, dict]:
        import pyarrow.parquet as pq
        ck, commits, tgt = self._listing(table, None)
        proto = meta = None
        for n in reversed(commits):
            with open(os.path.join(log_dir(table), n), "rb") as f:
                data = f.read()
            if b'"metaData"' not in data and b'"protocol"' not in data:
                continue
            for line in data.splitlines():
                if meta is None and line.startswith(b'{"metaData"'):
                    meta = json.loads(line)["metaData"]
                elif proto is None and line.startswith(b'{"protocol"'):
                    proto = json.loads(line)["protocol"]
            if proto is not None and meta is not None:
                break
        if (proto is None or meta is None) and ck:
            t = pq.read_table(os.path.join(log_dir(table), ck), columns=["protocol", "metaData"])
            for col, is_meta in (("metaData", True), ("protocol", False)):
                c = t.column(col).combine_chunks()
                c = c.filter(c.is_valid())
                if len(c) and (meta if is_meta else proto) is None:
                    v = c[0].as_py()
                    if is_meta:
                        meta = v
                    else:
                        proto = v
        return tgt, proto, meta

    def run(self, case: Dict[str, Any]) -> Any:
        op = case["op"]
        if op == "load":
            return self._load(case["table"], None)
        if op == "load_version":
            return self._load(case["table"], case["version"])
        if op == "load_timestamp":
            raise Unavailable("n/a")
        if op == "pm":
            return self._pm(case["table"])
        if op == "checkpoint":
            import pyarrow.parquet as pq
            pq.write_table(self._ck_table, self._ck_out, compression="snappy")
            return os.path.getsize(self._ck_out)
        raise ValueError(op)

    def summarize(self, case: Dict[str, Any], h: Any) -> Answer:
        op = case["op"]
        if op == "pm":
            v, _, meta = h
            return Answer(v, schema=[f["name"] for f in json.loads(meta["schemaString"])["fields"]])
        if op == "checkpoint":
            return Answer(int(self._ck_table.schema.metadata[b"version"]),
                          extra={"output_bytes": h, "rows": self._ck_table.num_rows})
        return Answer(int(h.schema.metadata[b"version"]), paths=h.column("path").to_pylist())

    def after_run(self, case: Dict[str, Any], h: Any) -> None:
        if case["op"] == "checkpoint":
            self._ck_table = None
            try:
                os.unlink(self._ck_out)
            except OSError:
                pass


ENGINES = {"delta-rs": DeltaRsEngine, "deltalog": DeltalogEngine, "delta-spark": DeltaSparkEngine,
           "floor": FloorEngine}


def make_engine(name: str, deltars_op: str = "get_add_actions") -> Any:
    if name == "delta-rs":
        return DeltaRsEngine(deltars_op)
    return ENGINES[name]()


# ------------------------------------------------------------------------------ fresh process

def fresh_main(engine: str, path: str) -> Dict[str, Any]:
    """Fresh process: engine start (import / SparkSession) timed apart from the first load."""
    t_proc = time.perf_counter()
    e = make_engine(engine)
    info = e.start()
    t_start = time.perf_counter() - t_proc
    case = {"op": "load", "table": path}
    e.before_run(case)
    t0 = time.perf_counter()
    h = e.run(case)
    load_s = time.perf_counter() - t0
    ans = e.summarize(case, h)
    from generate import paths_hash
    out = {"engine": engine, "start_s": t_start, "load_s": load_s, "version": ans.version,
           "count": len(ans.paths or []), "paths_sha256": paths_hash(ans.paths or []),
           "info": info}
    if getattr(e, "spark", None) is not None:  # deltalog: did the driver start from a class-data archive?
        opts = e.spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
        out["class_data"] = ("archive" if "SharedArchiveFile" in opts else
                             "recording" if "ArchiveClassesAtExit" in opts else "none")
    peaks = {label: proc_status(pid)[1] for label, pid in e.pids()}
    out["peak_rss"] = peaks
    if hasattr(e, "stop"):
        e.stop()
    return out


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--fresh", nargs=2, metavar=("ENGINE", "PATH"), required=True)
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    try:
        res = fresh_main(*a.fresh)
    except Unavailable as ex:
        res = {"engine": a.fresh[0], "error": str(ex)}
    except Exception as ex:  # report, never crash the orchestrator
        res = {"engine": a.fresh[0], "error": _short(ex)}
    print("RESULT " + json.dumps(res, default=str))
