"""A Spark standalone cluster on this machine, from the pyspark installation (issue 30).

One master and ``workers`` workers, each its own JVM (``bin/spark-class
org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), all bound to 127.0.0.1 on free
ports, each worker with its own work directory (executors run there; the application's jars are
fetched into it by Spark). Every daemon runs in its own process group: stopping (or killing) a
worker takes its executor JVM and the executor's Python workers with it. ``stop()`` runs from the
pytest fixture's finalizer and from ``atexit``, and each daemon is SIGKILLed by the kernel when
the process that started it dies (``PR_SET_PDEATHSIG``), so no process outlives the test run.

    with StandaloneCluster(tmp_dir) as c:
        c.master_url          # spark://127.0.0.1:<port>
        c.kill_worker(0)      # SIGKILL of worker 0's process group (worker + its executor)
        c.start_worker(0)     # a new worker in the same slot, same work directory
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import weakref
from pathlib import Path
from typing import Dict, List, Optional

DAEMON_MEMORY = "256m"  # heap of the master and worker daemons themselves (not the executors')


def spark_home() -> str:
    """The Spark distribution inside the pyspark package (what ``find_spark_home`` returns)."""
    try:
        from pyspark.find_spark_home import _find_spark_home
        home = _find_spark_home()
    except Exception:  # pragma: no cover - older layouts
        import pyspark
        home = os.path.dirname(pyspark.__file__)
    if not os.path.exists(os.path.join(home, "bin", "spark-class")):
        raise FileNotFoundError(f"no bin/spark-class under SPARK_HOME {home}: pyspark's installation is incomplete")
    return home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the test process dies, even by SIGKILL (Linux
    ``PR_SET_PDEATHSIG``, kept across exec), where neither the fixture nor ``atexit`` runs."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


_LIVE: "weakref.WeakSet[StandaloneCluster]" = weakref.WeakSet()


def _stop_all() -> None:
    for c in list(_LIVE):
        c.stop()


atexit.register(_stop_all)


class StandaloneCluster:
    def __init__(self, base: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.base = Path(base)
        self.n_workers, self.cores, self.memory = workers, cores, memory
        self.home = spark_home()
        self.port = free_port()
        self.webui_port = free_port()
        self.master: Optional[subprocess.Popen] = None
        self.workers: List[Optional[subprocess.Popen]] = [None] * workers
        self._logs: List = []
        conf_dir = self.base / "conf"  # empty: nothing from a conf/ of the installation applies
        conf_dir.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, SPARK_HOME=self.home, SPARK_CONF_DIR=str(conf_dir),
                        SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
                        SPARK_NO_DAEMONIZE="1",
                        SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC", PYSPARK_PYTHON=sys.executable,
                        # no REST submission server (it would take the fixed port 6066)
                        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
        self.env.pop("SPARK_WORKER_DIR", None)

    # ------------------------------------------------------------------------------ lifecycle

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.base / f"{name}.log", "ab")
        self._logs.append(log)
        return subprocess.Popen([os.path.join(self.home, "bin", "spark-class"), *args], env=self.env,
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=str(self.base), start_new_session=True, preexec_fn=_die_with_parent)

    def start(self, timeout: float = 180) -> "StandaloneCluster":
        _LIVE.add(self)
        try:
            self.master = self._spawn("master", "org.apache.spark.deploy.master.Master",
                                      "--host", "127.0.0.1", "--port", str(self.port),
                                      "--webui-port", str(self.webui_port))
            self._wait(lambda st: st.get("status") == "ALIVE", timeout, "the master to be ALIVE")
            for i in range(self.n_workers):
                self.start_worker(i, wait=False)
            self.wait_workers(self.n_workers, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def start_worker(self, i: int, wait: bool = True, timeout: float = 180) -> None:
        work = self.base / f"worker-{i}"
        work.mkdir(exist_ok=True)
        self.workers[i] = self._spawn(f"worker-{i}", "org.apache.spark.deploy.worker.Worker",
                                      "--host", "127.0.0.1", "--webui-port", str(free_port()),
                                      "--cores", str(self.cores), "--memory", self.memory,
                                      "--work-dir", str(work), self.master_url)
        if wait:
            self.wait_workers(sum(1 for w in self.workers if w is not None and w.poll() is None), timeout)

    def kill_worker(self, i: int) -> int:
        """SIGKILL of worker ``i``'s process group: the worker JVM, its executor JVM (and that
        executor's Python workers) die at once, as when a machine is lost. Returns the pid."""
        p = self.workers[i]
        assert p is not None and p.poll() is None, f"worker {i} is not running"
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        return p.pid

    def _kill_group(self, p: Optional[subprocess.Popen]) -> None:
        if p is None:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                p.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            # the leader is gone; children (an executor) may still be in the group
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break

    def stop(self) -> None:
        for i, w in enumerate(self.workers):
            self._kill_group(w)
        self._kill_group(self.master)
        for log in self._logs:
            log.close()
        self._logs = []
        _LIVE.discard(self)

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------------------ state

    def state(self) -> Dict:
        """The master's JSON status page (workers, applications)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as r:
            return json.loads(r.read().decode())

    def alive_workers(self) -> List[Dict]:
        return [w for w in self.state().get("workers", []) if w.get("state") == "ALIVE"]

    def wait_workers(self, n: int, timeout: float = 180) -> None:
        self._wait(lambda st: sum(1 for w in st.get("workers", []) if w.get("state") == "ALIVE") >= n,
                   timeout, f"{n} ALIVE workers")

    def _wait(self, cond, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.master is not None and self.master.poll() is not None:
                raise RuntimeError(f"the master exited ({self.master.returncode}): {self.log_tail('master')}")
            try:
                last = self.state()
                if cond(last):
                    return
            except (OSError, ValueError):  # not listening yet / an empty page while it starts
                pass
            time.sleep(0.25)
        raise TimeoutError(f"waited {timeout} s for {what}; master state: {last}\n{self.log_tail('master')}")

    def log_tail(self, name: str, chars: int = 3000) -> str:
        f = self.base / f"{name}.log"
        return f.read_text(errors="replace")[-chars:] if f.exists() else ""

    def worker_group_pids(self, i: int) -> List[int]:
        """Pids in worker ``i``'s process group: the worker JVM, its executor JVM, the executor's
        Python workers (Linux ``/proc``)."""
        p = self.workers[i]
        if p is None:
            return []
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == p.pid:  # pgrp
                out.append(int(d))
        return out

    def open_files(self, i: int, under: Path) -> List[str]:
        """Files below ``under`` that a process of worker ``i``'s group holds open right now."""
        root = str(Path(under).resolve()) + os.sep
        out = []
        for pid in self.worker_group_pids(i):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith(root):
                    out.append(target)
        return out

    def daemon_pids(self) -> List[int]:
        return [p.pid for p in [self.master, *self.workers] if p is not None]
