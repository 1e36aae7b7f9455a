"""VACUUM: files on disk before and after, against delta-spark 4.4 on copies of the same table.

The cross-engine tests build one table with each engine (partitioned by a column whose name starts
with ``_``, deletion vectors, change data files), add untracked, hidden and empty entries, age every
data file, copy the table and vacuum one copy with deltalog and one with delta-spark: the dry-run
lists, the files left, the ``VACUUM START`` / ``VACUUM END`` commits must be the same, and every
engine reads the same rows after. The safety tests build hostile logs by hand (absolute paths,
``../``, encoded traversal, other schemes, a remove naming ``_delta_log``, symbolic links out of
the table) and check that nothing outside the table is deleted or listed.
"""
from __future__ import annotations

import glob
import io
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from deltalog import exceptions as dx
from deltalog.tables import DeltaTable

OLD = time.time() - 30 * 86400
ROWS = [(i, f"n{i}", i % 3) for i in range(30)]
CHECK_OFF = {"deltalog": "spark.deltalog.retentionDurationCheck.enabled",
             "delta": "spark.databricks.delta.retentionDurationCheck.enabled"}


# ------------------------------------------------------------------------------------------ helpers
def statements(fmt: str, t: str) -> list:
    out = [f"CREATE TABLE {t} (id BIGINT, name STRING, _p INT) USING {fmt} PARTITIONED BY (_p) TBLPROPERTIES "
           "('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true')"]
    for lo in (0, 10, 20):
        out.append(f"INSERT INTO {t} VALUES " + ", ".join(f"({i}, '{n}', {p})" for i, n, p in ROWS[lo:lo + 10]))
    out += [f"DELETE FROM {t} WHERE id % 5 = 0", f"UPDATE {t} SET name = 'u' WHERE id = 4",
            f"DELETE FROM {t} WHERE id = 7", f"DELETE FROM {t} WHERE _p = 1"]
    return out


def expected() -> list:
    rows = [(i, "u" if i == 4 else n, p) for i, n, p in ROWS if i % 5 != 0 and i != 7 and p != 1]
    return sorted(rows)


def add_junk(t: Path) -> None:
    """Untracked, hidden and empty entries; every file outside _delta_log aged 30 days."""
    (t / "untracked.parquet").write_text("x")
    (t / "_p=0" / "untracked2.parquet").write_text("x")
    (t / "_p=0" / "_tmpfile").write_text("x")
    (t / "_hidden").mkdir()
    (t / "_hidden" / "x.parquet").write_text("x")
    (t / ".hiddenfile").write_text("x")
    (t / "emptydir" / "sub").mkdir(parents=True)
    (t / "metadata").mkdir()
    (t / "metadata" / "m.json").write_text("x")
    age(t)


def age(t: Path, when: float = OLD) -> None:
    for root, dirs, files in os.walk(t):
        if "_delta_log" in Path(root).parts:
            continue
        for f in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            os.utime(os.path.join(root, f), (when, when), follow_symlinks=False)


def tree(t: Path) -> set:
    """Every path under t (files and directories, links not followed), relative, _delta_log excluded."""
    out = set()
    for root, dirs, files in os.walk(t):
        rel = os.path.relpath(root, t)
        if rel.split(os.sep)[0] == "_delta_log":
            continue
        for name in dirs + files:
            out.add(os.path.normpath(os.path.join(rel, name)))
    return out - {"_delta_log"}


def relative(t: Path, paths) -> set:
    prefix = f"file:{t}/"
    assert all(p.startswith(prefix) for p in paths), paths
    return {p[len(prefix):] for p in paths}


def commit_infos(t: Path, first: int) -> list:
    out = []
    for f in sorted(glob.glob(str(t / "_delta_log" / "*.json")))[first:]:
        actions = [json.loads(x) for x in Path(f).read_text().splitlines()]
        assert len(actions) == 1, actions  # commitInfo only
        out.append(actions[0]["commitInfo"])
    return out


def n_commits(t: Path) -> int:
    return len(glob.glob(str(t / "_delta_log" / "*.json")))


def ours_vacuum(spark, t: Path, clause: str = "RETAIN 0 HOURS", dry: bool = False) -> list:
    return [r[0] for r in spark.sql(f"VACUUM deltalog.`{t}` {clause}{' DRY RUN' if dry else ''}").collect()]


def their_vacuum(delta_spark, t: Path, clause: str = "RETAIN 0 HOURS", dry: bool = False) -> list:
    return delta_spark.run(
        "spark.conf.set(args['key'], 'false')\n"
        "try:\n    result = [r[0] for r in spark.sql(args['sql']).collect()]\n"
        "finally:\n    spark.conf.unset(args['key'])",
        key=CHECK_OFF["delta"], sql=f"VACUUM delta.`{t}` {clause}{' DRY RUN' if dry else ''}")


def rows_all_engines(spark, delta_spark, t: Path) -> None:
    import deltalake
    import pyarrow as pa
    want = expected()
    ours = sorted(tuple(r) for r in spark.read.format("deltalog").load(str(t)).select("id", "name", "_p").collect())
    theirs = sorted(tuple(r) for r in delta_spark.run(
        "result = [list(r) for r in spark.read.format('delta').load(args['p']).select('id', 'name', '_p').collect()]",
        p=str(t)))
    d = pa.table(deltalake.QueryBuilder().register("t", deltalake.DeltaTable(str(t)))
                 .execute("SELECT id, name, _p FROM t").read_all()).to_pydict()
    rs = sorted(zip(d["id"], d["name"], d["_p"]))
    assert ours == want and theirs == want and rs == want


@pytest.fixture
def check_off(spark):
    spark.conf.set(CHECK_OFF["deltalog"], "false")
    yield
    spark.conf.unset(CHECK_OFF["deltalog"])


# ------------------------------------------------------------------------------------------ cross-engine
def test_delta_spark_table_vacuumed_like_delta_spark(spark, delta_spark, tmp_path, check_off):
    """Copies of one delta-spark table, one vacuumed by each engine: same dry run, files left, commits."""
    src = tmp_path / "src"
    delta_spark.run("for s in args['stmts']:\n    spark.sql(s)", stmts=statements("delta", f"delta.`{src}`"))
    add_junk(src)
    assert glob.glob(str(src / "deletion_vector_*.bin")) and glob.glob(str(src / "_change_data" / "**" / "*.parquet"),
                                                                        recursive=True)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(src, ours, symlinks=True)
    shutil.copytree(src, theirs, symlinks=True)
    before = tree(ours)

    # default retention (7 days): the tombstones are fresh, so no data file they name goes (change data
    # files and DV files no action of the snapshot names do, as in delta-spark)
    default = relative(ours, ours_vacuum(spark, ours, "", dry=True))
    assert {"untracked.parquet", "_p=0/untracked2.parquet", "metadata/m.json", "emptydir", "emptydir/sub"} <= default
    assert not any(p.startswith("_p=") and "/part-" in p for p in default)
    dry = relative(ours, ours_vacuum(spark, ours, dry=True))
    assert dry == relative(theirs, their_vacuum(delta_spark, theirs, dry=True))
    assert {"untracked.parquet", "_p=0/untracked2.parquet", "metadata/m.json", "emptydir", "emptydir/sub"} <= dry
    assert any(p.startswith("_change_data/") for p in dry) and any(p.startswith("deletion_vector_") for p in dry)
    assert any(p.startswith("_p=1/") for p in dry)  # the removed partition's files
    assert not any(p.startswith(("_delta_log", "_hidden", ".")) or "/_tmp" in p for p in dry)
    assert tree(ours) == before  # a dry run deletes nothing

    first = n_commits(ours)
    assert ours_vacuum(spark, ours) == [f"file:{ours}"]
    their_vacuum(delta_spark, theirs)
    # delta-spark deletes files and directories in parallel in any order: a parent tried before its empty
    # child stays until the next VACUUM (deltalog deletes the deepest first)
    assert tree(ours) == tree(theirs) - {"emptydir"}
    assert before - tree(ours) >= dry and "emptydir" not in tree(ours)
    for kept in ("_hidden/x.parquet", ".hiddenfile", "_p=0/_tmpfile"):
        assert kept in tree(ours)
    assert glob.glob(str(ours / "deletion_vector_*.bin"))  # the current snapshot's DVs stay

    o, t = commit_infos(ours, first), commit_infos(theirs, first)
    assert [c["operation"] for c in o] == [c["operation"] for c in t] == ["VACUUM START", "VACUUM END"]
    # an empty directory delta-spark left behind (above) is one deletion fewer in its VACUUM END
    survived = 1 if "emptydir" in tree(theirs) else 0
    t[1]["operationMetrics"]["numDeletedFiles"] = str(int(t[1]["operationMetrics"]["numDeletedFiles"]) + survived)
    for a, b in zip(o, t):
        assert a["operationParameters"] == b["operationParameters"]
        assert a["operationMetrics"] == b["operationMetrics"]
        assert (a["isolationLevel"], a["isBlindAppend"], a["readVersion"]) == \
            (b["isolationLevel"], b["isBlindAppend"], b["readVersion"])
    assert o[0]["operationParameters"] == {"retentionCheckEnabled": False, "defaultRetentionMillis": 604800000,
                                           "specifiedRetentionMillis": 0}
    assert o[0]["operationMetrics"]["numFilesToDelete"] == str(len(dry))
    assert o[1]["operationParameters"] == {"status": "COMPLETED"}
    rows_all_engines(spark, delta_spark, ours)


def test_deltalog_table_vacuumed_by_delta_spark_and_back(spark, delta_spark, tmp_path, check_off):
    t = tmp_path / "t"
    for s in statements("deltalog", f"deltalog.`{t}`"):
        spark.sql(s)
    add_junk(t)
    assert glob.glob(str(t / "deletion_vector_*.bin")) and glob.glob(str(t / "_change_data" / "**" / "*.parquet"),
                                                                      recursive=True)
    dry = relative(t, ours_vacuum(spark, t, dry=True))
    assert any(p.startswith("_change_data/") for p in dry) and any(p.startswith("deletion_vector_") for p in dry)
    before = tree(t)
    their_vacuum(delta_spark, t)  # delta-spark deletes what deltalog's dry run listed (and their .crc files)
    gone = {p for p in before - tree(t) if not p.rsplit("/", 1)[-1].startswith(".")}
    assert gone <= dry and dry - gone <= {"emptydir"}  # (a parent it tried before its child stays)
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (100, 'x', 2)")
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id = 100")
    age(t)
    gone = relative(t, ours_vacuum(spark, t, dry=True))
    files = {p for p in gone if (t / p).is_file()}  # (and the directories delta-spark's run left empty)
    assert files and all(p.startswith("_p=2/") for p in files) and all((t / p).is_dir() for p in gone - files)
    ours_vacuum(spark, t)
    assert not any((t / p).exists() for p in gone) and (t / "_hidden" / "x.parquet").exists()
    rows_all_engines(spark, delta_spark, t)


# ------------------------------------------------------------------------------------------ retention
def test_retention_check_refusal_and_young_files(spark, tmp_path):
    t = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (1), (2)")
    (t / "young.parquet").write_text("x")  # unreferenced but new: never deleted
    first = n_commits(t)
    with pytest.raises(dx.VacuumError) as e:
        spark.sql(f"VACUUM deltalog.`{t}` RETAIN 1 HOURS")
    assert e.value.errorClass == "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"
    assert "168 hours" in str(e.value) and str(t) in str(e.value)
    assert "spark.deltalog.retentionDurationCheck.enabled = false" in str(e.value)
    with pytest.raises(dx.VacuumError) as e:
        DeltaTable.forPath(spark, str(t)).vacuum(100)
    assert e.value.errorClass == "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"
    with pytest.raises(dx.VacuumError) as e:
        spark.sql(f"VACUUM deltalog.`{t}` RETAIN -1 HOURS DRY RUN")
    assert e.value.errorClass == "DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE"
    assert n_commits(t) == first
    spark.sql(f"VACUUM deltalog.`{t}` RETAIN 200 HOURS")  # above the table's: allowed
    # delta-spark's conf name is honoured too
    spark.conf.set(CHECK_OFF["delta"], "false")
    try:
        assert ours_vacuum(spark, t, "RETAIN 1 HOURS", dry=True) == []  # young.parquet is 0 h old
    finally:
        spark.conf.unset(CHECK_OFF["delta"])
    assert (t / "young.parquet").exists()
    with pytest.raises(Exception, match="DELTA_DUPLICATE_CLAUSE"):
        spark.sql(f"VACUUM deltalog.`{t}` DRY RUN DRY RUN")


def test_tombstone_within_retention_keeps_its_file(spark, tmp_path, check_off):
    """A file only an old version references stays while its remove is younger than RETAIN."""
    t = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT) USING deltalog")
    for i in range(3):
        spark.sql(f"INSERT INTO deltalog.`{t}` VALUES ({i})")
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id = 0")  # remove stamped now
    age(t)
    assert ours_vacuum(spark, t, "RETAIN 1 HOURS", dry=True) == []
    removed = {json.loads(x)["remove"]["path"] for x in
               Path(sorted(glob.glob(str(t / "_delta_log" / "*.json")))[-1]).read_text().splitlines() if '"remove"' in x}
    assert relative(t, ours_vacuum(spark, t, dry=True)) == removed  # RETAIN 0: its file goes


# ------------------------------------------------------------------------------------------ python, LITE, CLI
def test_python_vacuum(spark, tmp_path, check_off):
    t = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (1)")
    (t / "stale.parquet").write_text("x")
    age(t)
    dt = DeltaTable.forPath(spark, str(t))
    df = dt.vacuum(0, dryRun=True)
    assert df.columns == ["path"] and [r.path for r in df.collect()] == [f"file:{t}/stale.parquet"]
    first = n_commits(t)
    res = dt.vacuum(0)
    assert res.count() == 0 and not (t / "stale.parquet").exists()
    assert [c["operation"] for c in commit_infos(t, first)] == ["VACUUM START", "VACUUM END"]
    assert DeltaTable.forPath(spark, str(t)).toDF().count() == 1


def test_lite_uses_only_the_log(spark, tmp_path, check_off):
    t = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT) USING deltalog")
    for i in range(3):
        spark.sql(f"INSERT INTO deltalog.`{t}` VALUES ({i})")
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE id = 0")
    (t / "untracked.parquet").write_text("x")
    age(t)
    removed = {json.loads(x)["remove"]["path"] for x in
               Path(sorted(glob.glob(str(t / "_delta_log" / "*.json")))[-1]).read_text().splitlines() if '"remove"' in x}
    assert relative(t, ours_vacuum(spark, t, "LITE RETAIN 0 HOURS", dry=True)) == removed
    newest = n_commits(t) - 1
    ours_vacuum(spark, t, "RETAIN 0 HOURS LITE")
    assert (t / "untracked.parquet").exists() and not any((t / r).exists() for r in removed)
    assert json.loads((t / "_delta_log" / "_last_vacuum_info").read_text()) == \
        {"latestCommitVersionOutsideOfRetentionWindow": newest}  # the newest commit before VACUUM START

    # a log that no longer starts at version 0, without a record of the last VACUUM: refused
    u = tmp_path / "u"
    spark.sql(f"CREATE TABLE deltalog.`{u}` (id BIGINT) USING deltalog")
    for i in range(3):
        spark.sql(f"INSERT INTO deltalog.`{u}` VALUES ({i})")
    DeltaTable.forPath(spark, str(u)).checkpoint()
    (u / "_delta_log" / f"{0:020d}.json").unlink()
    with pytest.raises(dx.VacuumError) as e:
        spark.sql(f"VACUUM deltalog.`{u}` LITE RETAIN 0 HOURS")
    assert e.value.errorClass == "DELTA_CANNOT_VACUUM_LITE" and "VACUUM FULL" in str(e.value)


def test_cli(spark, tmp_path, check_off):
    from deltalog.cli import main
    t = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (1)")
    (t / "stale.parquet").write_text("xyz")
    age(t)

    def run(*argv):
        out, err = io.StringIO(), io.StringIO()
        return main(list(argv), out, err), out.getvalue(), err.getvalue()

    code, out, _ = run("vacuum", str(t), "--dry-run", "--retain-hours", "0")
    assert code == 0 and f"file:{t}/stale.parquet" in out and "would delete 1 files and directories" in out
    code, out, _ = run("vacuum", str(t), "--retain-hours", "0", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["numDeletedFiles"] == 1 and doc["sizeOfDataToDelete"] == 3
    assert not (t / "stale.parquet").exists()
    spark.conf.unset(CHECK_OFF["deltalog"])
    code, _, err = run("vacuum", str(t), "--retain-hours", "1")
    assert code == 1 and err.count("\n") == 1 and "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT" in err

    # bad input is refused before any Spark starts (a fresh process: fast, one line, non-zero)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    for argv, status, text in ((["vacuum", str(tmp_path / "nope")], 1, "not a Delta table"),
                               (["vacuum", str(t), "--retain-hours", "-2"], 2, "must be a number of hours")):
        p = subprocess.run([sys.executable, "-m", "deltalog.cli"] + argv, capture_output=True, text=True, env=env,
                           timeout=60)
        assert p.returncode == status and text in p.stderr and "pyspark" not in p.stderr


# ------------------------------------------------------------------------------------------ safety
def write_log(t: Path, versions: list) -> None:
    log = t / "_delta_log"
    log.mkdir(parents=True)
    for v, actions in enumerate(versions):
        (log / f"{v:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


def add(path: str, **extra) -> dict:
    return {"add": {"path": path, "partitionValues": {}, "size": 1, "modificationTime": 0, "dataChange": True,
                    **extra}}


def remove(path: str, ts: int = 1000) -> dict:
    return {"remove": {"path": path, "deletionTimestamp": ts, "dataChange": True}}


def test_hostile_log_never_touches_anything_outside_the_table(spark, tmp_path, check_off):
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = [outside / f"victim{i}.parquet" for i in range(8)]
    for v in victims:
        v.write_text("keep me")
    (outside / "dir").mkdir()
    (outside / "dir" / "inner.parquet").write_text("keep me")
    t = tmp_path / "table"
    hostile = [f"file:{victims[0]}", str(victims[1]), "../outside/victim2.parquet",
               "%2E%2E%2Foutside%2Fvictim3.parquet", "s3://other-bucket/outside/victim4.parquet",
               "sub/../../outside/victim5.parquet", "_delta_log/00000000000000000000.json",
               f"file://{victims[6]}", "hdfs://host/outside/victim7.parquet",
               "linkdir/inner.parquet", "linkfile.parquet"]
    meta = {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                         "schemaString": json.dumps({"type": "struct", "fields": [
                             {"name": "id", "type": "long", "nullable": True, "metadata": {}}]}),
                         "partitionColumns": [], "configuration": {}, "createdTime": 0}}
    write_log(t, [[{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}, meta, add("keep.parquet")],
                  [add(p) for p in hostile[:5]] + [remove(p) for p in hostile[5:]],
                  [remove(p) for p in hostile[:5]] + [remove("gone.parquet")]])
    (t / "keep.parquet").write_text("x")
    (t / "gone.parquet").write_text("x")
    (t / "stale.parquet").write_text("x")
    os.symlink(outside / "dir", t / "linkdir")  # a directory link out of the table
    os.symlink(victims[0], t / "linkfile.parquet")  # a file link out of the table
    age(t)
    log_before = sorted(os.listdir(t / "_delta_log"))

    full = ours_vacuum(spark, t, dry=True)
    assert relative(t, full) == {"gone.parquet", "stale.parquet", "linkdir", "linkfile.parquet"}  # links as entries
    lite = ours_vacuum(spark, t, "LITE RETAIN 0 HOURS", dry=True)
    assert relative(t, lite) == {"gone.parquet", "linkfile.parquet"}  # never linkdir/inner.parquet
    ours_vacuum(spark, t, "LITE RETAIN 0 HOURS")
    ours_vacuum(spark, t)
    assert all(v.read_text() == "keep me" for v in victims) and (outside / "dir" / "inner.parquet").exists()
    assert (t / "keep.parquet").exists() and not (t / "stale.parquet").exists() and not (t / "gone.parquet").exists()
    assert not os.path.lexists(t / "linkfile.parquet") and not os.path.lexists(t / "linkdir")  # links removed, targets kept
    assert all(p in os.listdir(t / "_delta_log") for p in log_before)


def test_symlinked_directory_on_a_referenced_path_is_not_followed(spark, tmp_path, check_off):
    """A live file reached through a link keeps the link; nothing behind it is listed or deleted."""
    outside = tmp_path / "outside"
    (outside / "data").mkdir(parents=True)
    (outside / "data" / "part-0.parquet").write_text("x")
    (outside / "data" / "orphan.parquet").write_text("x")
    t = tmp_path / "table"
    meta = {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                         "schemaString": '{"type":"struct","fields":[]}', "partitionColumns": [], "configuration": {},
                         "createdTime": 0}}
    write_log(t, [[{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}, meta,
                   add("linked/part-0.parquet")]])
    os.symlink(outside / "data", t / "linked")
    age(outside)
    age(t)
    assert ours_vacuum(spark, t, dry=True) == []
    ours_vacuum(spark, t)
    assert (outside / "data" / "orphan.parquet").exists() and os.path.islink(t / "linked")
