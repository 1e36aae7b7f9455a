"""Peer engines in separate processes, for the interop tests.

``SparkPeer("deltalog")`` / ``SparkPeer("delta-spark")`` starts one Python process holding one
SparkSession (``local[2]``, UI off, bound to 127.0.0.1, session time zone UTC) configured for that
engine only, never both in one JVM. The test talks to it over stdin/stdout, one JSON object per
line: ``peer.run(code, **args)`` executes ``code`` (Python source) in the worker with ``spark``,
``args`` (the keyword arguments) and ``result`` (None) in scope, and returns ``result`` after the
code ran (JSON-encoded, ``default=str``). An exception in the worker is raised here as
``PeerError`` with the worker's traceback; the worker stays usable.

delta-spark's jars come from the local Maven repository (``make peers`` resolves them); when they
are missing they are fetched the same way.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, List, Optional

REPO = Path(__file__).resolve().parent.parent
DELTA_VERSION = "4.4.0"
DELTA_SPARK_COORDS = f"io.delta:delta-spark_4.2_2.13:{DELTA_VERSION}"


class PeerError(RuntimeError):
    """Code run in a peer process raised; the message carries the worker's traceback."""


def delta_spark_jar_paths() -> List[Path]:
    """Where delta-spark's jars live in ~/.m2 (present or not); ``delta_spark_jars`` fetches them."""
    m2 = Path(os.path.expanduser("~/.m2/repository/io/delta"))
    return [m2 / f"delta-spark_4.2_2.13/{DELTA_VERSION}/delta-spark_4.2_2.13-{DELTA_VERSION}.jar",
            m2 / f"delta-storage/{DELTA_VERSION}/delta-storage-{DELTA_VERSION}.jar",
            m2 / f"delta-kernel-api/{DELTA_VERSION}/delta-kernel-api-{DELTA_VERSION}.jar",
            m2 / f"delta-kernel-defaults/{DELTA_VERSION}/delta-kernel-defaults-{DELTA_VERSION}.jar"]


def delta_spark_jars() -> List[str]:
    """delta-spark's jars from ~/.m2, fetched with ``mvn dependency:get`` (as ``make peers``) if absent."""
    jars = delta_spark_jar_paths()
    if not all(j.exists() for j in jars):
        subprocess.run(["mvn", "-B", "-ntp", "-q", "dependency:get", f"-Dartifact={DELTA_SPARK_COORDS}",
                        "-Dtransitive=true"], cwd=REPO, check=True, timeout=900)
    missing = [str(j) for j in jars if not j.exists()]
    assert not missing, f"delta-spark jars missing after mvn dependency:get: {missing}"
    return [str(j) for j in jars]


def deltalog_jar() -> str:
    """The engine jar of this checkout (``make jar``), or ``DELTALOG_JAR``."""
    if os.environ.get("DELTALOG_JAR"):
        return os.environ["DELTALOG_JAR"]
    jars = sorted((REPO / "python" / "deltalog" / "jars").glob("deltalog-spark_*.jar"))
    assert jars, "no engine jar in python/deltalog/jars: run `make jar` (or set DELTALOG_JAR)"
    return str(jars[-1])


_WORKER = textwrap.dedent("""
    import json, os, sys, traceback
    engine, jars, repo = sys.argv[1], sys.argv[2], sys.argv[3]
    from pyspark.sql import SparkSession
    b = (SparkSession.builder.master("local[2]").appName("interop-" + engine)
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
    if engine == "delta-spark":
        b = (b.config("spark.jars", jars)
              .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
              .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    else:
        sys.path.insert(0, os.path.join(repo, "python"))
        from deltalog import configure_spark_with_deltalog
        b = configure_spark_with_deltalog(b, jar_path=jars)
    spark = b.getOrCreate()
    out = sys.stdout
    sys.stdout = sys.stderr  # prints of the code run go to stderr; stdout carries the replies
    out.write(json.dumps({"ready": spark.version}) + "\\n"); out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        scope = {"spark": spark, "args": req["args"], "result": None}
        try:
            exec(req["code"], scope)
            reply = {"ok": True, "result": scope["result"]}
        except BaseException:
            reply = {"ok": False, "error": traceback.format_exc()}
        out.write(json.dumps(reply, default=str) + "\\n"); out.flush()
    spark.stop()
""")


class SparkPeer:
    """One Spark process for ``engine`` ("deltalog" or "delta-spark"); see the module doc."""

    def __init__(self, engine: str, timeout: float = 600.0, driver_memory: str = ""):
        assert engine in ("deltalog", "delta-spark"), engine
        self.engine = engine
        self.timeout = timeout
        jars = ",".join(delta_spark_jars()) if engine == "delta-spark" else deltalog_jar()
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
                   PYSPARK_SUBMIT_ARGS=(f"--driver-memory {driver_memory} " if driver_memory else "") + "pyspark-shell",
                   TZ="UTC")
        env.pop("SPARK_CONF_DIR", None)
        self._stderr: List[str] = []
        self.proc = subprocess.Popen([sys.executable, "-u", "-c", _WORKER, engine, jars, str(REPO)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, start_new_session=True, bufsize=1)
        threading.Thread(target=self._drain, daemon=True).start()
        hello = self._reply()
        self.spark_version = hello["ready"]

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-200]

    def _reply(self) -> dict:
        while True:
            box: dict = {}
            t = threading.Thread(target=lambda: box.setdefault("line", self.proc.stdout.readline()), daemon=True)
            t.start()
            t.join(self.timeout)
            line = box.get("line")
            if not line:
                self.close()
                raise PeerError(f"{self.engine} process gave no reply (exit {self.proc.poll()}); its stderr:\n"
                                + "".join(self._stderr[-60:]))
            if line.startswith("{"):
                return json.loads(line)
            # the JVM's own stdout (delta-spark's VACUUM prints "Deleted N files ..."): not a reply
            self._stderr.append(line)

    def run(self, code: str, **args: Any) -> Any:
        """Run ``code`` in the peer (``spark``, ``args``, ``result`` in scope); return ``result``."""
        self.proc.stdin.write(json.dumps({"code": textwrap.dedent(code), "args": args}, default=str) + "\n")
        self.proc.stdin.flush()
        reply = self._reply()
        if not reply["ok"]:
            raise PeerError(f"{self.engine}: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except Exception:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def __enter__(self) -> "SparkPeer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def duckdb_connection():
    """A DuckDB connection with the delta extension loaded from the ``duckdb-extension-delta`` wheel
    (no network)."""
    import duckdb
    import duckdb_extension_delta
    ext = Path(duckdb_extension_delta.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "delta.duckdb_extension"
    assert ext.exists(), f"{ext} missing: duckdb and duckdb-extension-delta versions must match"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("SET TimeZone = 'UTC'")
    return con
