"""Class-data sharing for the Spark driver JVM that pyspark launches.

A Spark driver loads ~14,000 classes from jars before it can open a table; the JVM spends most of
a session's start and of the first table open defining them. Java 13+ can dump the classes one
driver loaded into an archive (``-XX:ArchiveClassesAtExit``) and map it into the next driver
(``-XX:SharedArchiveFile``): on the benchmark machine session start 4.5 s -> 3.0 s, the first
``forPath`` of a 100k-file table 0.5 s -> 0.17 s and open + live files as Arrow 0.59 s -> 0.35 s
(``benchmarks/RESULTS.md``, fresh-process rows).

``driver_java_options`` returns the flags for ``spark.driver.extraJavaOptions``:

* an archive for this Java + Spark class path exists -> use it;
* none, and an earlier process started a driver for this key -> this driver reserves
  ``<key>.jsa.part`` (exclusive create, holds our pid) and the JVM writes the archive there when
  it exits; the JVM writes the header last, so a file whose header is complete is a complete
  archive, and the next configure renames it to ``<key>.jsa``. Recording the classes slows that
  one driver down (start 4.5 -> 7-8 s, first load 0.6 -> 1.4 s), so the very first driver of a key only leaves a note
  (``<key>.seen``): a machine that starts one driver and is thrown away never pays for it;
* another live process holds the reservation, or the JVM may still be writing -> no flags.

The key hashes what the JVM checks the archive against (Java build, the jars of the class path
with sizes and times, the driver's class-path and Java options, heap size), plus the jars added
through ``spark.jars`` (deltalog's own): their classes are archived too, and a class whose jar
changed is no longer taken from the archive, so a new deltalog jar gets an archive of its own. Anything else the JVM
finds different makes it ignore the archive (``-Xshare:auto``, logging of the ``cds`` tags off):
the driver then starts as it would without it, never fails. Off with
``DELTALOG_CLASS_SHARING=0`` or ``configure_spark_with_deltalog(..., class_sharing=False)``;
archives live in ``DELTALOG_CLASS_DATA_DIR`` (default ``~/.cache/deltalog/class-data``).

The directory stays bounded (an archive is 130-190 MB): one archive per key, and at most
``MAX_ARCHIVES`` (2, or ``DELTALOG_CLASS_DATA_MAX_ARCHIVES``) of them, the most recently used. Each
configure that publishes or uses an archive, or reserves or notes a new key, prunes the directory:
archives of other keys beyond the bound (least recently used first; a complete but unpublished
``.jsa.part`` counts as an archive), unfinished ``.jsa.part`` files whose reserving process is gone
and that nothing has written for ``ABANDONED_S``, and ``.seen`` notes of other keys older than a
day. Only a driver that is recording adds to that, by the one archive it writes. Deleting an
archive a running driver has mapped is safe on POSIX (the only systems this module adds flags on):
the JVM keeps the pages of the unlinked file until it exits; a driver configured with an archive
that is gone before its JVM starts just starts without it (``-Xshare:auto``). ``clear`` (the
``deltalog cache clear`` command) deletes everything this module wrote there.
"""
from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

SWITCH_ENV = "DELTALOG_CLASS_SHARING"
DIR_ENV = "DELTALOG_CLASS_DATA_DIR"
MAX_ARCHIVES_ENV = "DELTALOG_CLASS_DATA_MAX_ARCHIVES"
ARCHIVE_MAGIC = bytes.fromhex("a8ab0bf0")  # 0xf00baba8 little-endian: HotSpot's dynamic archive
QUIET = "-Xlog:cds*=off"
SETTLE_S = 5.0       # a complete header this long untouched: the JVM has closed the file
ABANDONED_S = 120.0  # a reservation whose process is gone and nothing written for this long
MAX_ARCHIVES = 2     # archives kept per directory (each 130-190 MB), the most recently used ones
KEEP_NOTES_S = 86400.0  # a .seen note of another key untouched this long is dropped
_OWN_FLAGS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare", "-XX:+AutoCreateSharedArchive")


def enabled(requested: Optional[bool], environ: Mapping[str, str] = os.environ) -> bool:
    if requested is not None:
        return requested
    return environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "false", "off", "no")


def archive_dir(environ: Mapping[str, str] = os.environ) -> str:
    if environ.get(DIR_ENV):
        return environ[DIR_ENV]
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "deltalog", "class-data")


def max_archives(environ: Mapping[str, str] = os.environ) -> int:
    """How many archives the directory keeps: ``DELTALOG_CLASS_DATA_MAX_ARCHIVES`` (an integer
    >= 1), else ``MAX_ARCHIVES``."""
    try:
        n = int(environ.get(MAX_ARCHIVES_ENV, "").strip())
    except ValueError:
        return MAX_ARCHIVES
    return n if n >= 1 else MAX_ARCHIVES


def java_home(environ: Mapping[str, str] = os.environ) -> Optional[str]:
    """The Java installation spark-submit will run: ``$JAVA_HOME``, else ``java`` on the PATH."""
    if environ.get("JAVA_HOME"):
        return os.path.realpath(environ["JAVA_HOME"])
    exe = shutil.which("java", path=environ.get("PATH"))
    if exe is None:
        return None
    return os.path.dirname(os.path.dirname(os.path.realpath(exe)))


def java_release(home: str) -> str:
    """The text of ``<home>/release`` ("" when missing)."""
    try:
        with open(os.path.join(home, "release"), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def java_feature_version(home: str, release: Optional[str] = None) -> Optional[int]:
    """Major version from ``<home>/release`` (``JAVA_VERSION="17.0.15"``); None when unknown."""
    text = java_release(home) if release is None else release
    m = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.M)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def java_options_set_elsewhere(spark_home: str, environ: Mapping[str, str] = os.environ) -> bool:
    """True when the driver's Java options come from ``spark-defaults.conf`` or
    ``PYSPARK_SUBMIT_ARGS``: a value set through the builder would replace (not extend) the
    first, and be replaced by the second."""
    args = environ.get("PYSPARK_SUBMIT_ARGS", "")
    if "--driver-java-options" in args or "spark.driver.extraJavaOptions" in args:
        return True
    conf_dir = environ.get("SPARK_CONF_DIR") or os.path.join(spark_home, "conf")
    try:
        with open(os.path.join(conf_dir, "spark-defaults.conf"), encoding="utf-8", errors="replace") as f:
            return any(re.match(r"\s*spark\.driver\.extraJavaOptions[\s=:]", line) for line in f)
    except OSError:
        return False


def has_base_archive(home: str) -> bool:
    """A HotSpot JDK with its default CDS archive, which a dynamic archive is layered on (OpenJ9
    and builds without CDS have none)."""
    return os.path.isfile(os.path.join(home, "lib", "server", "classes.jsa"))


def class_path_key(home: str, spark_home: str, options: Mapping[str, str],
                   environ: Mapping[str, str] = os.environ, release: Optional[str] = None,
                   extra_jars: Sequence[str] = ()) -> str:
    """Hash of everything the archive depends on that can be read without starting a JVM
    (``extra_jars``: jars the session adds to ``spark.jars``, by name, size and time)."""
    h = hashlib.sha256()

    def put(*parts: object) -> None:
        h.update(repr(parts).encode("utf-8", "surrogateescape"))
        h.update(b"\n")

    def put_jar(jar: str, *tag: str) -> None:  # a jar by name, size and time (gone: left out)
        try:
            st = os.stat(jar)
        except OSError:
            return
        put(*tag, os.path.basename(jar), st.st_size, st.st_mtime_ns)
    put("java", home, java_release(home) if release is None else release)
    for jar in sorted(glob.glob(os.path.join(spark_home, "jars", "*"))):
        put_jar(jar)
    for k in ("spark.driver.extraClassPath", "spark.driver.extraJavaOptions", "spark.driver.memory"):
        put(k, options.get(k))
    for k in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR", "YARN_CONF_DIR",
              "PYSPARK_SUBMIT_ARGS"):
        put(k, environ.get(k))
    put("spark_home", os.path.realpath(spark_home))
    for jar in extra_jars:
        put_jar(jar, "spark.jars")
    return h.hexdigest()[:24]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _note(kind: bytes) -> bytes:
    """A pid note: ``deltalog-<kind> pid <this process>``."""
    return b"deltalog-%s pid %d\n" % (kind, os.getpid())


def _noted_pid(path: str, kind: bytes) -> Optional[int]:
    """The pid of a note of ``kind`` in ``path``; None when missing or something else."""
    try:
        with open(path, "rb") as f:
            head = f.read(40)
    except OSError:
        return None
    m = re.match(rb"deltalog-" + kind + rb" pid (\d+)\n", head)
    return int(m.group(1)) if m else None


def _complete(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == ARCHIVE_MAGIC and os.fstat(f.fileno()).st_size > 4096
    except OSError:
        return False


def _first_sighting(seen: str) -> bool:
    """True (and recorded) unless an earlier process configured a driver for this key: a machine
    that starts a driver once (a throw-away container) never pays for writing an archive."""
    pid = _noted_pid(seen, b"seen")
    if pid is not None:
        return pid == os.getpid()
    tmp = f"{seen}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(_note(b"seen"))
    os.replace(tmp, seen)
    return True


def _used(archive: str, now: float) -> str:
    """Marks ``archive`` as used at ``now`` (its mtime is its last use: pruning keeps the recent
    ones; ``now`` rather than the file system's clock, which may tick in milliseconds)."""
    try:
        os.utime(archive, (now, now))
    except OSError:
        pass
    return archive


def _unlink(path: str) -> None:
    try:
        os.unlink(path)  # a JVM that mapped an archive keeps its pages (POSIX); new drivers no longer see it
    except OSError:
        pass


def _prune(directory: str, keep_key: str, now: float, limit: int = MAX_ARCHIVES) -> None:
    """Bound the directory for a driver of ``keep_key`` (whose files are left alone): at most
    ``limit`` archives in all, ``keep_key``'s (if any) and the most recently used of the others; a
    complete ``.jsa.part`` of another key (recorded, never published) counts as one of them, an
    unfinished one whose reserving process is gone and that nothing wrote for ``ABANDONED_S`` (its
    driver was killed, or the write stopped half-way) is deleted, and so is a ``.seen`` note of
    another key older than ``KEEP_NOTES_S`` (that key then needs two drivers again before it
    records)."""
    mine = keep_key + "."
    candidates = []  # (last used, path) of the archives of other keys
    own_archive = False
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        p = os.path.join(directory, name)
        if name.startswith(mine):
            own_archive = own_archive or name == keep_key + ".jsa"
            continue
        try:
            age = now - os.stat(p).st_mtime
        except OSError:
            continue
        if name.endswith(".jsa"):
            candidates.append((now - age, p))
        elif name.endswith(".jsa.part"):
            if _complete(p):
                if age >= SETTLE_S:
                    candidates.append((now - age, p))
                continue
            pid = _noted_pid(p, b"reserved")
            if pid is not None and _pid_alive(pid):
                continue  # a long-running driver that will write its archive as it exits
            if age >= ABANDONED_S:
                _unlink(p)
        elif name.endswith(".seen") or re.search(r"\.seen\.\d+\.tmp$", name):
            if age >= KEEP_NOTES_S:
                _unlink(p)
    room = max(limit - (1 if own_archive else 0), 0)
    for _, p in sorted(candidates, reverse=True)[room:]:
        _unlink(p)


def _ours(name: str) -> bool:
    """A file this module writes: an archive, an archive being recorded, a note, a note's temp file."""
    return (name.endswith(".jsa") or name.endswith(".jsa.part") or name.endswith(".seen")
            or bool(re.search(r"\.seen\.\d+\.tmp$", name)))


def cache_files(directory: str) -> List[Dict[str, object]]:
    """The files of the class-data directory, most recently used first: ``{"path", "kind"
    ("archive", "recording" (a ``.jsa.part``: reserved, being written or not yet published) or
    "note"), "bytes", "mtime"}``; empty when the directory is missing."""
    out: List[Dict[str, object]] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        if not _ours(name):
            continue
        p = os.path.join(directory, name)
        try:
            st = os.stat(p)
        except OSError:
            continue
        kind = "archive" if name.endswith(".jsa") else "recording" if name.endswith(".jsa.part") else "note"
        out.append({"path": p, "kind": kind, "bytes": st.st_size, "mtime": st.st_mtime})
    out.sort(key=lambda e: (e["kind"] != "archive", -float(e["mtime"])))  # type: ignore[arg-type]
    return out


def clear(directory: str) -> Tuple[int, int]:
    """Delete every file this module wrote in ``directory`` (archives, recordings, notes; other
    files and the directory itself stay); returns (files deleted, bytes freed). Safe while drivers
    run on POSIX: one that mapped an archive keeps it until it exits; one that is recording writes
    its archive when it exits, and the next configure of its key publishes it."""
    files = bytes_freed = 0
    for entry in cache_files(directory):
        try:
            os.unlink(str(entry["path"]))
        except OSError:
            continue
        files += 1
        bytes_freed += int(entry["bytes"])  # type: ignore[call-overload]
    return files, bytes_freed


def resolve(directory: str, key: str, now: Optional[float] = None,
            limit: Optional[int] = None) -> Dict[str, Optional[str]]:
    """What this driver does with the archive of ``key``: ``{"use": path}``, ``{"create": path}``
    or ``{}`` (neither: another driver holds the reservation or is writing the archive). Prunes
    the directory to ``limit`` archives (default: ``max_archives()``) whenever it uses, publishes,
    reserves or first notes ``key``'s archive."""
    now = time.time() if now is None else now
    limit = max_archives() if limit is None else limit
    archive = os.path.join(directory, key + ".jsa")
    part = archive + ".part"
    if os.path.isfile(archive):
        _used(archive, now)
        _prune(directory, key, now, limit)  # (also bounds a directory filled by older versions)
        return {"use": archive}
    if os.path.exists(part):
        try:
            age = now - os.stat(part).st_mtime
        except OSError:
            return {}
        if _complete(part):
            if age < SETTLE_S:
                return {}
            try:
                os.replace(part, archive)
            except FileNotFoundError:
                pass  # another driver's configure renamed it first
            if not os.path.isfile(archive):
                return {}
            _used(archive, now)
            _prune(directory, key, now, limit)  # a new archive: the least recently used others go
            return {"use": archive}
        pid = _noted_pid(part, b"reserved")
        if pid == os.getpid():
            return {"create": part}  # reserved by an earlier configure of this process, no JVM yet
        if (pid is not None and _pid_alive(pid)) or age < ABANDONED_S:
            return {}
        try:
            os.unlink(part)  # its driver died before writing, or the write stopped half-way
        except OSError:
            return {}
    os.makedirs(directory, exist_ok=True)
    if _first_sighting(os.path.join(directory, key + ".seen")):
        _prune(directory, key, now, limit)  # a new class path: older ones may be gone for good
        return {}
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return {}
    with os.fdopen(fd, "wb") as f:
        f.write(_note(b"reserved"))
    _prune(directory, key, now, limit)
    return {"create": part}


def driver_java_options(options: Mapping[str, str], requested: Optional[bool] = None,
                        environ: Mapping[str, str] = os.environ, extra_jars: Sequence[str] = ()) -> List[str]:
    """JVM flags to append to ``spark.driver.extraJavaOptions`` (empty: leave the driver as it is);
    ``extra_jars``: the jars the session adds to ``spark.jars`` (part of the archive's key)."""
    if not enabled(requested, environ) or os.name != "posix":
        return []  # (liveness checks use kill(pid, 0), which is POSIX: on Windows it terminates)
    if "PYSPARK_GATEWAY_PORT" in environ or environ.get("SPARK_REMOTE") or options.get("spark.remote"):
        return []  # the JVM exists already (spark-submit) or there is none (Spark Connect)
    if any(flag in options.get("spark.driver.extraJavaOptions", "") for flag in _OWN_FLAGS):
        return []  # the user manages class-data sharing
    try:
        from pyspark import SparkContext
        if getattr(SparkContext, "_gateway", None) is not None:
            return []  # this process' driver JVM runs already: its flags are fixed
        from pyspark.find_spark_home import _find_spark_home
        spark_home = _find_spark_home()
    except (Exception, SystemExit):  # noqa: BLE001 - no pyspark (or no SPARK_HOME: pyspark exits)
        return []
    if java_options_set_elsewhere(spark_home, environ):
        return []  # our --conf would replace the user's options from spark-defaults.conf
    home = java_home(environ)
    release = "" if home is None else java_release(home)
    version = None if home is None else java_feature_version(home, release)
    if home is None or version is None or version < 13 or not has_base_archive(home):
        return []
    try:
        plan = resolve(archive_dir(environ), class_path_key(home, spark_home, options, environ, release, extra_jars),
                       limit=max_archives(environ))
    except OSError:
        return []  # read-only or full cache directory: start without an archive
    if plan.get("use"):
        return [_flag("-XX:SharedArchiveFile=", plan["use"]), QUIET]
    if plan.get("create"):
        return [_flag("-XX:ArchiveClassesAtExit=", plan["create"]), QUIET]
    return []


def _flag(name: str, path: str) -> str:
    """Spark splits extra Java options like a shell: quote a path with blanks."""
    return f'"{name}{path}"' if re.search(r"\s", path) else name + path
