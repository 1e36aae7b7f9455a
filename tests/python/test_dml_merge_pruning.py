"""MERGE reads only the target files a source key can fall into (issue 27: "prune target files by the
source keys' range before the join").

For an equality ``t.k = s.k`` of the merge condition, a target file whose statistics bound ``k`` to
``[min, max]`` with no source key in between holds no matched row, so MERGE neither reads nor rewrites
it; a partition column's value must be one of the source keys. The files that must be skipped are
overwritten with bytes that are not Parquet while the MERGE runs, so reading one fails the statement;
they are put back before the result rows are compared with the expected ones.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_dml_delete import commit, commit_info, kinds, version_of

LIMIT_KEY = "spark.deltalog.merge.sourceKeysLimit"


def adds(path: Path) -> list:
    """The `add` actions of every commit of the table, oldest first."""
    return [x for v in range(version_of(path) + 1) for x in kinds(commit(path, v), "add")]


class Unreadable:
    """The data files of ``files`` replaced by garbage until the block ends."""

    def __init__(self, table: Path, files: list):
        self.paths = [table / f["path"] for f in files]

    def __enter__(self):
        for p in self.paths:
            shutil.copyfile(p, str(p) + ".keep")
            p.write_bytes(b"not a parquet file" * 64)
        return self

    def __exit__(self, *exc):
        for p in self.paths:
            shutil.move(str(p) + ".keep", p)


def key_of(kind: str, i: int):
    return i if kind == "bigint" else f"k{i:05d}"


def make_table(spark, path: Path, kind: str, dv: str) -> list:
    """Four files holding keys 0-99, 100-199, 200-299 and 300-399; returns their `add` actions in that order."""
    spark.sql(f"CREATE TABLE deltalog.`{path}` (k {kind.upper()}, v STRING) USING deltalog "
              f"TBLPROPERTIES ('delta.enableDeletionVectors' = '{dv}')")
    for block in range(4):
        rows = [(key_of(kind, i), f"v{i}") for i in range(block * 100, block * 100 + 100)]
        spark.createDataFrame(rows, f"k {kind}, v string").coalesce(1).write.format("deltalog") \
            .mode("append").save(str(path))
    files = adds(path)
    assert len(files) == 4
    return files


@pytest.mark.parametrize("kind", ["bigint", "string"])
@pytest.mark.parametrize("dv", ["false", "true"])
def test_merge_reads_only_files_a_source_key_falls_into(spark, tmp_path, kind, dv):
    path = tmp_path / "t"
    files = make_table(spark, path, kind, dv)
    src = [(key_of(kind, 150), "new150"), (key_of(kind, 170), "new170"), (key_of(kind, 1000), "ins1000"),
           (key_of(kind, 5000), "ins5000"), (None, "insnull")]
    spark.createDataFrame(src, f"k {kind}, v string").createOrReplaceTempView("src_keys")
    with Unreadable(path, [files[0], files[2], files[3]]):
        out = spark.sql(f"MERGE INTO deltalog.`{path}` t USING src_keys s ON t.k = s.k "
                        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *").collect()
    assert [tuple(r) for r in out] == [(5, 2, 0, 3)]
    actions = commit(path)
    removed = {r["path"] for r in kinds(actions, "remove")}
    assert removed == {files[1]["path"]}
    metrics = commit_info(actions)["operationMetrics"]
    assert (metrics["numTargetRowsUpdated"], metrics["numTargetRowsInserted"]) == ("2", "3")
    want = {(key_of(kind, i), f"v{i}") for i in range(400)} - {(key_of(kind, 150), "v150"), (key_of(kind, 170), "v170")}
    want |= {(key_of(kind, 150), "new150"), (key_of(kind, 170), "new170"), (key_of(kind, 1000), "ins1000"),
             (key_of(kind, 5000), "ins5000"), (None, "insnull")}
    got = [tuple(r) for r in spark.read.format("deltalog").load(str(path)).collect()]
    assert len(got) == len(want) and set(got) == want


def test_merge_prunes_by_the_keys_range_beyond_the_collect_limit(spark, tmp_path):
    """With more source rows than ``spark.deltalog.merge.sourceKeysLimit`` the keys' overall range prunes:
    keys 150 and 250 skip the files of 0-99 and 300-399 and read both files between."""
    path = tmp_path / "t"
    files = make_table(spark, path, "bigint", "false")
    spark.createDataFrame([(150, "a"), (250, "b")], "k bigint, v string").createOrReplaceTempView("src_range")
    spark.conf.set(LIMIT_KEY, "1")
    try:
        with Unreadable(path, [files[0], files[3]]):
            out = spark.sql(f"MERGE INTO deltalog.`{path}` t USING src_range s ON t.k = s.k "
                            "WHEN MATCHED THEN DELETE").collect()
    finally:
        spark.conf.unset(LIMIT_KEY)
    assert [tuple(r) for r in out] == [(2, 0, 2, 0)]
    removed = {r["path"] for r in kinds(commit(path), "remove")}
    assert removed == {files[1]["path"], files[2]["path"]}
    got = {r.k for r in spark.read.format("deltalog").load(str(path)).collect()}
    assert got == set(range(400)) - {150, 250}


def test_merge_reads_only_partitions_of_source_keys(spark, tmp_path):
    """``t.p = s.p`` on a partition column: only the partitions whose value is a source key are read;
    a source NULL matches no partition (not even the NULL one)."""
    path = tmp_path / "t"
    spark.sql(f"CREATE TABLE deltalog.`{path}` (k BIGINT, v STRING, p INT) USING deltalog PARTITIONED BY (p)")
    rows = [(i, f"v{i}", p) for p in (0, 1, 2) for i in range(10)] + [(i, f"v{i}", None) for i in range(10)]
    spark.createDataFrame(rows, "k bigint, v string, p int").write.format("deltalog").mode("append").save(str(path))
    files = adds(path)
    other = [f for f in files if f["partitionValues"]["p"] != "1"]
    assert other and len(other) < len(files)
    src = [(3, "x", 1), (4, "y", None), (50, "z", 1)]
    spark.createDataFrame(src, "k bigint, v string, p int").createOrReplaceTempView("src_parts")
    with Unreadable(path, other):
        out = spark.sql(f"MERGE INTO deltalog.`{path}` t USING src_parts s ON t.k = s.k AND t.p = s.p "
                        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *").collect()
    assert [tuple(r) for r in out] == [(3, 1, 0, 2)]
    got = sorted((r.k, r.v, -1 if r.p is None else r.p) for r in spark.read.format("deltalog").load(str(path)).collect()
                 if r.p == 1 or r.p is None and r.k == 4)
    assert got == sorted([(i, "x" if i == 3 else f"v{i}", 1) for i in range(10)] + [(50, "z", 1), (4, "v4", -1),
                                                                                   (4, "y", -1)])
