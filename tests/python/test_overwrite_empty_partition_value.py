"""Overwriting the null partition of a table delta-rs wrote: delta-rs records an empty-string
partition value as ``"partitionValues": {"p": ""}``, which the protocol reads as null. A dynamic
partition overwrite (or replaceWhere ``p IS NULL``) of the null partition must therefore remove
that file as well as the ``{"p": null}`` one. delta-spark 4.4 keeps the ``""`` file (the interop
matrix's seeds 23 and 58; KNOWN_DIFFERENCES.md
``deltaspark-dynamic-overwrite-keeps-empty-string-partition``); deltalog must not."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import deltalake  # a test dependency (python/requirements-dev.txt): fail, never skip, without it


def _commit(path: Path, version: int):
    return [json.loads(l) for l in (path / "_delta_log" / f"{version:020d}.json").read_text().splitlines()]


@pytest.mark.parametrize("how", ["dynamic", "replaceWhere"])
def test_overwrite_of_null_partition_removes_empty_string_files(spark, tmp_path, how):
    path = tmp_path / "t"
    deltalake.write_deltalake(str(path), pa.table({"p": ["", None, "a"], "x": [1, 2, 3]}), partition_by=["p"])
    v0 = [a["add"] for a in _commit(path, 0) if "add" in a]
    assert sorted(map(str, (a["partitionValues"]["p"] for a in v0))) == ["", "None", "a"]  # the case under test
    w = spark.createDataFrame([(None, 9)], "p string, x long").write.format("deltalog").mode("overwrite")
    w = w.option("partitionOverwriteMode", "dynamic") if how == "dynamic" else w.option("replaceWhere", "p IS NULL")
    w.save(str(path))

    removed = sorted(a["remove"]["path"] for a in _commit(path, 1) if "remove" in a)
    assert removed == sorted(a["path"] for a in v0 if a["partitionValues"]["p"] in ("", None))
    got = sorted(((r.p, r.x) for r in spark.read.format("deltalog").load(str(path)).collect()), key=lambda t: t[1])
    assert got == [("a", 3), (None, 9)]
    assert sorted(r["x"] for r in deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist()) == [3, 9]
