"""Class-data sharing for the driver JVM: when an archive is used, created or left alone."""
import os
import shutil
import subprocess
import sys
import time

import pytest

from deltalog import _class_data as cd
from deltalog.session import JAVA_OPTIONS_KEY, configure_spark_with_deltalog


def _java_home(tmp_path, version: str) -> str:
    home = tmp_path / f"jdk-{version}"
    (home / "lib" / "server").mkdir(parents=True)
    (home / "lib" / "server" / "classes.jsa").write_bytes(b"base")
    (home / "release").write_text(f'IMPLEMENTOR="Test"\nJAVA_VERSION="{version}"\n')
    return str(home)


def _spark_home(tmp_path) -> str:
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    for name in ("spark-core.jar", "spark-sql.jar"):
        (jars / name).write_bytes(b"x" * 10)
    return str(tmp_path / "spark")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _age(path, seconds: float) -> None:
    t = os.stat(path).st_mtime - seconds
    os.utime(path, (t, t))


def _seen_elsewhere(directory, key: str = "k") -> None:
    """An earlier process (now gone) configured a driver for ``key``."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, key + ".seen"), "wb") as f:
        f.write(b"deltalog-seen pid %d\n" % _dead_pid())


def _archive_bytes() -> bytes:
    return cd.ARCHIVE_MAGIC + b"\0" * 8192


@pytest.mark.parametrize("text,expected", [("17.0.15", 17), ("21", 21), ("1.8.0_292", 8), ("11.0.2", 11)])
def test_java_feature_version_reads_the_release_file(tmp_path, text, expected):
    assert cd.java_feature_version(_java_home(tmp_path, text)) == expected


def test_java_feature_version_is_unknown_without_a_release_file(tmp_path):
    assert cd.java_feature_version(str(tmp_path)) is None


def test_the_first_driver_of_a_key_only_leaves_a_note(tmp_path):
    assert cd.resolve(str(tmp_path), "k") == {}
    assert (tmp_path / "k.seen").read_bytes() == b"deltalog-seen pid %d\n" % os.getpid()
    assert cd.resolve(str(tmp_path), "k") == {}, "the same process again is no second driver"
    assert not (tmp_path / "k.jsa.part").exists()


def test_a_later_driver_reserves_the_archive_and_its_process_may_configure_again(tmp_path):
    _seen_elsewhere(tmp_path)
    plan = cd.resolve(str(tmp_path), "k")
    part = tmp_path / "k.jsa.part"
    assert plan == {"create": str(part)}
    assert part.read_bytes() == b"deltalog-reserved pid %d\n" % os.getpid()
    # a second configure in the same process (no JVM launched yet) keeps the reservation
    assert cd.resolve(str(tmp_path), "k") == {"create": str(part)}


def test_a_live_reservation_of_another_process_leaves_the_driver_alone(tmp_path):
    part = tmp_path / "k.jsa.part"
    part.write_bytes(b"deltalog-reserved pid %d\n" % os.getppid())
    _age(part, 3600)
    assert cd.resolve(str(tmp_path), "k") == {}
    assert part.exists()


def test_an_abandoned_reservation_is_taken_over(tmp_path):
    part = tmp_path / "k.jsa.part"
    part.write_bytes(b"deltalog-reserved pid %d\n" % _dead_pid())
    _seen_elsewhere(tmp_path)
    assert cd.resolve(str(tmp_path), "k") == {}, "recent: its JVM may still be writing"
    _age(part, cd.ABANDONED_S + 1)
    assert cd.resolve(str(tmp_path), "k") == {"create": str(part)}
    assert part.read_bytes() == b"deltalog-reserved pid %d\n" % os.getpid()


def test_a_half_written_archive_is_never_used(tmp_path):
    part = tmp_path / "k.jsa.part"
    part.write_bytes(b"\0" * 100_000)  # the JVM writes the header last
    _seen_elsewhere(tmp_path)
    assert cd.resolve(str(tmp_path), "k") == {}
    _age(part, cd.ABANDONED_S + 1)
    assert cd.resolve(str(tmp_path), "k") == {"create": str(part)}
    assert not (tmp_path / "k.jsa").exists()


def test_a_complete_archive_is_published_once_settled_then_used(tmp_path):
    part = tmp_path / "k.jsa.part"
    part.write_bytes(_archive_bytes())
    assert cd.resolve(str(tmp_path), "k") == {}, "just written: the JVM may not have closed it"
    _age(part, cd.SETTLE_S + 1)
    archive = str(tmp_path / "k.jsa")
    assert cd.resolve(str(tmp_path), "k") == {"use": archive}
    assert not part.exists()
    assert cd.resolve(str(tmp_path), "k") == {"use": archive}


def test_publishing_keeps_the_new_archive_and_the_most_recently_used_other(tmp_path):
    day = cd.KEEP_NOTES_S
    for name, unused_for in [("a", 5 * day), ("b", 4 * day), ("c", 3 * day), ("d", 2 * day), ("e", 60)]:
        p = tmp_path / f"{name}.jsa"
        p.write_bytes(_archive_bytes())
        _age(p, unused_for)
    # using a (a directory filled by an older version) already brings it down to the bound
    assert cd.resolve(str(tmp_path), "a", limit=2) == {"use": str(tmp_path / "a.jsa")}
    assert sorted(p.name for p in tmp_path.glob("*.jsa")) == ["a.jsa", "e.jsa"]
    part = tmp_path / "new.jsa.part"
    part.write_bytes(_archive_bytes())
    _age(part, cd.SETTLE_S + 1)
    assert cd.resolve(str(tmp_path), "new", limit=2)["use"].endswith("new.jsa")
    # kept: new and the most recently used other (a, used just now); e goes, however recent
    assert sorted(p.name for p in tmp_path.glob("*.jsa")) == ["a.jsa", "new.jsa"]


def test_a_new_key_clears_old_notes_and_unfinished_archives_of_other_keys(tmp_path):
    day = cd.KEEP_NOTES_S
    old_seen, new_seen = tmp_path / "old.seen", tmp_path / "recent.seen"
    killed, complete = tmp_path / "killed.jsa.part", tmp_path / "complete.jsa.part"
    running, recent = tmp_path / "running.jsa.part", tmp_path / "recent.jsa.part"
    dead = tmp_path / "dead.jsa.part"
    archive, older = tmp_path / "kept.jsa", tmp_path / "older.jsa"
    old_seen.write_bytes(b"deltalog-seen pid %d\n" % _dead_pid())
    new_seen.write_bytes(b"deltalog-seen pid %d\n" % _dead_pid())
    killed.write_bytes(b"\0" * 10_000)  # the JVM was killed half-way through the write
    complete.write_bytes(_archive_bytes())  # recorded, never published: counts as an archive
    running.write_bytes(b"deltalog-reserved pid %d\n" % os.getpid())  # a live driver's reservation
    recent.write_bytes(b"deltalog-reserved pid %d\n" % _dead_pid())
    dead.write_bytes(b"deltalog-reserved pid %d\n" % _dead_pid())
    archive.write_bytes(_archive_bytes())
    older.write_bytes(_archive_bytes())
    for p in (old_seen, running, archive):
        _age(p, 2 * day)
    for p in (killed, dead):
        _age(p, cd.ABANDONED_S + 1)
    _age(complete, 3 * day)
    _age(older, 4 * day)
    for p in (new_seen, recent):
        _age(p, cd.ABANDONED_S / 2)  # its JVM may still be writing
    assert cd.resolve(str(tmp_path), "new", limit=2) == {}  # first sighting of a new key
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["complete.jsa.part", "kept.jsa", "new.seen", "recent.jsa.part", "recent.seen",
                    "running.jsa.part"]


def _record(directory, key: str, size: int, limit=None, environ=None) -> str:
    """One recording of ``key`` through ``resolve``, as drivers do it: an earlier (gone) process
    noted the key, this configure reserves it, the JVM writes ``size`` bytes as it exits, the next
    configure publishes it. Returns the archive's path."""
    _seen_elsewhere(directory, key)
    kw = {} if limit is None else {"limit": limit}
    plan = cd.resolve(str(directory), key, **kw)
    assert plan == {"create": os.path.join(str(directory), key + ".jsa.part")}
    with open(plan["create"], "wb") as f:  # the JVM replaces the reservation note by the archive
        f.write(cd.ARCHIVE_MAGIC)
        f.truncate(size)
    _age(plan["create"], cd.SETTLE_S + 1)
    plan = cd.resolve(str(directory), key, **kw)
    assert plan == {"use": os.path.join(str(directory), key + ".jsa")}
    return plan["use"]


def _archives(directory):
    return {p.name: p.stat().st_size for p in directory.iterdir() if p.name.endswith((".jsa", ".jsa.part"))}


def test_the_cache_stays_under_its_bound_after_several_recordings(tmp_path, monkeypatch):
    """The issue's directory (four archives of 165-188 MB and a stale 118 MB .jsa.part, as sparse
    files here) and then five recordings of new keys: after each, at most MAX_ARCHIVES archives,
    the newest ones, and no more bytes than MAX_ARCHIVES of the largest."""
    monkeypatch.delenv(cd.MAX_ARCHIVES_ENV, raising=False)
    assert cd.MAX_ARCHIVES == 2 and cd.max_archives() == 2
    mb = 1_000_000
    for i, size in enumerate((165 * mb, 170 * mb, 181 * mb, 188 * mb)):
        p = tmp_path / f"old{i}.jsa"
        with open(p, "wb") as f:
            f.write(cd.ARCHIVE_MAGIC)
            f.truncate(size)
        _age(p, 3600 * (10 - i))
    stale = tmp_path / "stale.jsa.part"  # a killed JVM's unfinished archive (no header yet)
    with open(stale, "wb") as f:
        f.truncate(118 * mb)
    _age(stale, 3600)
    assert sum(_archives(tmp_path).values()) == 822 * mb
    sizes = [150 * mb, 175 * mb, 160 * mb, 190 * mb, 140 * mb]
    recorded = []
    for n, size in enumerate(sizes):
        recorded.append(os.path.basename(_record(tmp_path, f"key{n}", size)))
        left = _archives(tmp_path)
        assert len(left) <= 2, left
        assert sum(left.values()) <= 2 * 190 * mb, left
        assert recorded[-1] in left
        if n >= 1:
            assert set(left) == set(recorded[-2:]), "the two most recent recordings survive"
        else:
            assert set(left) == {"key0.jsa", "old3.jsa"}, "the new one and the most recently used old one"
    assert _archives(tmp_path) == {"key3.jsa": 190 * mb, "key4.jsa": 140 * mb}
    # using an older key's archive again makes it the most recently used: a recording keeps it
    assert cd.resolve(str(tmp_path), "key3") == {"use": str(tmp_path / "key3.jsa")}
    _record(tmp_path, "key5", 100 * mb)
    assert set(_archives(tmp_path)) == {"key3.jsa", "key5.jsa"}


def test_the_bound_can_be_set_and_holds_through_driver_options(launchable, tmp_path):
    """Drivers of three deltalog jars in turn (three keys), through ``driver_java_options``, with
    DELTALOG_CLASS_DATA_MAX_ARCHIVES=1 and then 3."""
    cache = tmp_path / "cache"
    jars = []
    for v in ("0.1.0", "0.1.1", "0.1.2"):
        jar = tmp_path / f"deltalog-spark_2.13-{v}.jar"
        jar.write_bytes(v.encode())
        jars.append(str(jar))

    def record(env, jar) -> str:
        _seen_elsewhere(cache, _key(env, jars=[jar]))
        flags = cd.driver_java_options({}, None, env, extra_jars=[jar])
        assert flags[0].startswith("-XX:ArchiveClassesAtExit="), flags
        part = flags[0].split("=", 1)[1]
        with open(part, "wb") as f:
            f.write(_archive_bytes())
        _age(part, cd.SETTLE_S + 1)
        flags = cd.driver_java_options({}, None, env, extra_jars=[jar])
        assert flags == [f"-XX:SharedArchiveFile={part[:-5]}", cd.QUIET]
        return os.path.basename(part[:-5])

    one = dict(launchable, **{cd.MAX_ARCHIVES_ENV: "1"})
    names = [record(one, jar) for jar in jars]
    assert set(_archives(cache)) == {names[-1]}
    three = dict(launchable, **{cd.MAX_ARCHIVES_ENV: "3"})
    for jar in jars[:2]:
        record(three, jar)
    assert set(_archives(cache)) == set(names)
    for bad in ("0", "-1", "many", ""):
        assert cd.max_archives({cd.MAX_ARCHIVES_ENV: bad}) == cd.MAX_ARCHIVES
    assert cd.max_archives({}) == cd.MAX_ARCHIVES


def test_clear_deletes_what_the_module_wrote_and_nothing_else(tmp_path):
    _record(tmp_path, "a", 10_000)
    _seen_elsewhere(tmp_path, "b")
    assert cd.resolve(str(tmp_path), "b") == {"create": str(tmp_path / "b.jsa.part")}
    (tmp_path / "c.seen.123.tmp").write_bytes(b"x")
    (tmp_path / "README.txt").write_text("not ours")
    kinds = sorted((os.path.basename(e["path"]), e["kind"]) for e in cd.cache_files(str(tmp_path)))
    assert kinds == [("a.jsa", "archive"), ("a.seen", "note"), ("b.jsa.part", "recording"), ("b.seen", "note"),
                     ("c.seen.123.tmp", "note")]
    expected = sum(p.stat().st_size for p in tmp_path.iterdir() if p.name != "README.txt")
    assert cd.clear(str(tmp_path)) == (5, expected)
    assert [p.name for p in tmp_path.iterdir()] == ["README.txt"]
    assert cd.clear(str(tmp_path / "missing")) == (0, 0)


def test_key_follows_the_class_path_and_the_driver_options(tmp_path):
    home, spark = _java_home(tmp_path, "17.0.15"), _spark_home(tmp_path)
    env = {"PATH": ""}
    key = cd.class_path_key(home, spark, {}, env)
    assert cd.class_path_key(home, spark, {}, env) == key
    assert cd.class_path_key(home, spark, {"spark.driver.memory": "64g"}, env) != key
    assert cd.class_path_key(home, spark, {"spark.driver.extraClassPath": "/x.jar"}, env) != key
    assert cd.class_path_key(home, spark, {}, {"SPARK_DIST_CLASSPATH": "/y"}) != key
    assert cd.class_path_key(home, spark, {}, {"PYSPARK_SUBMIT_ARGS": "--driver-memory 40g pyspark-shell"}) != key
    (tmp_path / "spark" / "jars" / "spark-sql.jar").write_bytes(b"y" * 11)
    assert cd.class_path_key(home, spark, {}, env) != key
    (tmp_path / "jdk-17.0.15" / "release").write_text('JAVA_VERSION="17.0.16"\n')
    assert cd.class_path_key(home, spark, {}, env) != key


def test_key_follows_the_jars_added_to_spark_jars(tmp_path):
    # a changed deltalog jar: its classes are no longer taken from the archive, so a new one is due
    home, spark = _java_home(tmp_path, "17.0.15"), _spark_home(tmp_path)
    env = {"PATH": ""}
    jar = tmp_path / "deltalog-spark_2.13-0.1.0.jar"
    jar.write_bytes(b"a" * 10)
    key = cd.class_path_key(home, spark, {}, env, extra_jars=[str(jar)])
    assert key != cd.class_path_key(home, spark, {}, env)
    assert cd.class_path_key(home, spark, {}, env, extra_jars=[str(jar)]) == key
    copy = tmp_path / "elsewhere" / jar.name  # the same jar at another path (copied with its time)
    copy.parent.mkdir()
    shutil.copy2(jar, copy)
    assert cd.class_path_key(home, spark, {}, env, extra_jars=[str(copy)]) == key
    jar.write_bytes(b"b" * 11)
    assert cd.class_path_key(home, spark, {}, env, extra_jars=[str(jar)]) != key


@pytest.fixture
def launchable(tmp_path, monkeypatch):
    """A process that has not started its driver JVM, with a fake Java and cache directory."""
    from pyspark import SparkContext
    monkeypatch.setattr(SparkContext, "_gateway", None)
    env = {"JAVA_HOME": _java_home(tmp_path, "17.0.15"), cd.DIR_ENV: str(tmp_path / "cache"), "PATH": ""}
    return env


def test_driver_options_note_then_reserve_then_use_the_archive(launchable, tmp_path):
    assert cd.driver_java_options({}, None, launchable) == []
    (seen,) = (tmp_path / "cache").glob("*.seen")
    seen.write_bytes(b"deltalog-seen pid %d\n" % _dead_pid())
    flags = cd.driver_java_options({}, None, launchable)
    assert len(flags) == 2 and flags[1] == cd.QUIET
    assert flags[0].startswith("-XX:ArchiveClassesAtExit=") and flags[0].endswith(".jsa.part")
    part = flags[0].split("=", 1)[1]
    with open(part, "wb") as f:
        f.write(_archive_bytes())
    _age(part, cd.SETTLE_S + 1)
    assert cd.driver_java_options({}, None, launchable) == [f"-XX:SharedArchiveFile={part[:-5]}", cd.QUIET]


@pytest.mark.parametrize("why", ["switch", "argument", "old java", "no base archive", "user flags", "gateway env",
                                 "connect", "spark-defaults.conf", "submit args"])
def test_driver_options_stay_empty_when_sharing_cannot_or_must_not_apply(launchable, tmp_path, why):
    env, options, requested = dict(launchable), {}, None
    if why == "switch":
        env[cd.SWITCH_ENV] = "0"
    elif why == "argument":
        requested = False
    elif why == "old java":
        env["JAVA_HOME"] = _java_home(tmp_path, "11.0.2")
    elif why == "no base archive":
        os.unlink(os.path.join(env["JAVA_HOME"], "lib", "server", "classes.jsa"))
    elif why == "user flags":
        options[JAVA_OPTIONS_KEY] = "-Xshare:off"
    elif why == "gateway env":
        env["PYSPARK_GATEWAY_PORT"] = "4040"
    elif why == "connect":
        options["spark.remote"] = "sc://localhost"
    elif why == "spark-defaults.conf":  # a builder value would replace it: leave the options alone
        conf = tmp_path / "conf"
        conf.mkdir()
        (conf / "spark-defaults.conf").write_text("spark.master local\nspark.driver.extraJavaOptions -Dsite=1\n")
        env["SPARK_CONF_DIR"] = str(conf)
    elif why == "submit args":
        env["PYSPARK_SUBMIT_ARGS"] = "--driver-java-options -Dx=1 pyspark-shell"
    assert cd.driver_java_options(options, requested, env) == []
    assert not (tmp_path / "cache").exists(), "nothing reserved"


def test_other_spark_defaults_do_not_stop_sharing(launchable, tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("# spark.driver.extraJavaOptions -Dcommented=1\n"
                                              "spark.driver.extraClassPath /x.jar\n")
    env = dict(launchable, SPARK_CONF_DIR=str(conf))
    assert not cd.java_options_set_elsewhere("/nowhere", env)
    assert cd.java_options_set_elsewhere("/nowhere", dict(env, PYSPARK_SUBMIT_ARGS="--conf spark.driver.extraJavaOptions=-Dy pyspark-shell"))


def test_driver_options_stay_empty_once_the_driver_runs(tmp_path, monkeypatch):
    from pyspark import SparkContext
    monkeypatch.setattr(SparkContext, "_gateway", object())
    env = {"JAVA_HOME": _java_home(tmp_path, "17.0.15"), cd.DIR_ENV: str(tmp_path / "cache")}
    assert cd.driver_java_options({}, None, env) == []


def test_a_cache_directory_that_cannot_be_written_starts_without_sharing(launchable, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = dict(launchable, **{cd.DIR_ENV: str(blocker / "sub")})
    assert cd.driver_java_options({}, None, env) == []


def _key(env, options=None, jars=()) -> str:
    from pyspark.find_spark_home import _find_spark_home
    return cd.class_path_key(cd.java_home(env), _find_spark_home(), options or {}, env, extra_jars=jars)


def test_paths_with_blanks_are_quoted_for_spark(launchable, tmp_path):
    env = dict(launchable, **{cd.DIR_ENV: str(tmp_path / "my cache")})
    _seen_elsewhere(tmp_path / "my cache", _key(env))
    flag = cd.driver_java_options({}, None, env)[0]
    assert flag.startswith('"-XX:ArchiveClassesAtExit=') and flag.endswith('.jsa.part"')


def test_configure_appends_the_flags_to_the_users_java_options_once(launchable, monkeypatch, tmp_path):
    from pyspark.sql import SparkSession
    for k, v in launchable.items():
        monkeypatch.setenv(k, v)
    _seen_elsewhere(tmp_path / "cache", _key(launchable, {JAVA_OPTIONS_KEY: "-Dmy.flag=1"}))
    b = SparkSession.builder.config(JAVA_OPTIONS_KEY, "-Dmy.flag=1")
    b = configure_spark_with_deltalog(configure_spark_with_deltalog(b, jar_path="/j.jar"), jar_path="/j.jar")
    opts = b._options[JAVA_OPTIONS_KEY].split()
    assert opts[0] == "-Dmy.flag=1" and opts[2] == cd.QUIET
    assert opts[1].startswith("-XX:ArchiveClassesAtExit=") and len(opts) == 3
    b2 = configure_spark_with_deltalog(SparkSession.builder.config(JAVA_OPTIONS_KEY, "-Dx=2"),
                                       jar_path="/j.jar", class_sharing=False)
    assert b2._options[JAVA_OPTIONS_KEY] == "-Dx=2"


DRIVER = r"""
import os, sys
from pyspark.sql import SparkSession
from deltalog import configure_spark_with_deltalog
b = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
     .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
spark = configure_spark_with_deltalog(b, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
print("OPTIONS", spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", ""))
spark.range(5).write.format("deltalog").mode("overwrite").save(sys.argv[1])
print("ROWS", spark.read.format("deltalog").load(sys.argv[1]).count())
"""


def _drive(tmp_path, env) -> str:
    r = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path / "table")], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ROWS 5" in r.stdout
    return next(line for line in r.stdout.splitlines() if line.startswith("OPTIONS"))


def test_a_real_driver_writes_the_archive_and_the_next_driver_loads_spark_from_it(tmp_path):
    """Two Spark drivers in turn: the first dumps its classes when it exits, the second maps them
    (the JVM's own class-loading log names the archive as the source of Spark's classes)."""
    cache = tmp_path / "cache"
    env = dict(os.environ, **{cd.DIR_ENV: str(cache), "SPARK_LOCAL_IP": "127.0.0.1"})
    env.pop(cd.SWITCH_ENV, None)
    from deltalog.session import bundled_jar_path
    jar = env.get("DELTALOG_JAR") or bundled_jar_path()  # the jar the driver adds: part of the key
    _seen_elsewhere(cache, _key(env, jars=[jar]))  # not the machine's first driver: this one records
    first = _drive(tmp_path, env)
    assert "-XX:ArchiveClassesAtExit=" in first and cd.QUIET in first
    part = next(iter(cache.glob("*.jsa.part")))
    deadline = time.time() + 120
    while not cd._complete(str(part)) and time.time() < deadline:  # the JVM writes it as it exits
        time.sleep(0.5)
    assert cd._complete(str(part)), "the first driver left no archive"
    _age(part, cd.SETTLE_S + 1)  # complete: the JVM has written its header last
    log = tmp_path / "classes.log"
    second = _drive(tmp_path, dict(env, JAVA_TOOL_OPTIONS=f"-Xlog:class+load=info:file={log}"))
    assert f"-XX:SharedArchiveFile={part.with_suffix('')}" in second
    shared = [line for line in log.read_text(errors="replace").splitlines()
              if "source: shared objects file (top)" in line and " org.apache.spark." in line]
    assert len(shared) > 1000, f"{len(shared)} Spark classes came from the archive"
    # deltalog's own classes (spark.jars, Spark's class loader) too: the archive's key has the jar
    ours = [line for line in log.read_text(errors="replace").splitlines()
            if "source: shared objects file (top)" in line and " io.deltalog." in line]
    assert len(ours) > 100, f"{len(ours)} deltalog classes came from the archive"


def test_no_spark_home_leaves_the_driver_alone_instead_of_exiting(launchable, monkeypatch):
    import pyspark.find_spark_home as fsh

    def missing():
        raise SystemExit(-1)  # what pyspark does when it finds no SPARK_HOME
    monkeypatch.setattr(fsh, "_find_spark_home", missing)
    assert cd.driver_java_options({}, None, launchable) == []
