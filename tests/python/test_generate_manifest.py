"""GENERATE (issue 28): ``GENERATE symlink_format_manifest FOR TABLE t``, ``DeltaTable.generate`` and the
incremental manifest of ``delta.compatibility.symlinkFormatManifest.enabled``.

The manifests deltalog writes are compared file by file with those delta-spark 4.4 writes for the
same table (same directory tree, same absolute data-file paths), every listed path must be a live
file of the table, and the refusals carry delta-spark's error classes.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from test_dml_delete import version_of

MANIFEST = "_symlink_format_manifest"


def error_class(e) -> str:
    return getattr(e, "errorClass", None) or (e.getCondition() if hasattr(e, "getCondition") else None)


def manifests(table: Path) -> dict:
    """Relative manifest path -> its lines, sorted (delta-spark writes them in no set order)."""
    root = table / MANIFEST
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            if n == "manifest":
                p = Path(dirpath) / n
                text = p.read_text()
                assert text == "" or text.endswith("\n")
                out[str(p.relative_to(root))] = sorted(text.splitlines())
    return out


def live_files(spark, table: Path) -> list:
    rows = spark.read.format("deltalog").load(str(table)).selectExpr("input_file_name() AS f").distinct().collect()
    return sorted(unquote(r["f"]) for r in rows)  # input_file_name() is a URI; manifests hold Hadoop paths


def live_files_in(spark, table: Path, p: str) -> list:
    rows = spark.read.format("deltalog").load(str(table)).where(f"p = '{p}'") \
        .selectExpr("input_file_name() AS f").distinct().collect()
    return sorted(unquote(r["f"]) for r in rows)  # input_file_name() is a URI; manifests hold Hadoop paths


def delta_spark_generate(delta_spark, table: Path) -> None:
    delta_spark.run("spark.sql(args['s'])", s=f"GENERATE symlink_format_manifest FOR TABLE delta.`{table}`")


def make_partitioned(spark, t: Path, props: str = "") -> None:
    spark.sql(f"CREATE TABLE deltalog.`{t}` (id BIGINT, p STRING) USING deltalog PARTITIONED BY (p) {props}")
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (1, 'a'), (2, 'a'), (3, 'b c'), (4, 'x:y'), (5, NULL)")
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (6, 'a'), (7, 'b c')")


# ------------------------------------------------------------------------------------------ tests
def test_generate_writes_delta_sparks_manifests(spark, tmp_path, delta_spark):
    t = tmp_path / "t"
    make_partitioned(spark, t)
    assert spark.sql(f"GENERATE symlink_format_manifest FOR TABLE deltalog.`{t}`").collect() == []
    ours = manifests(t)
    assert set(ours) == {"p=a/manifest", "p=b c/manifest", "p=x%3Ay/manifest", "p=__HIVE_DEFAULT_PARTITION__/manifest"}
    listed = sorted(line for lines in ours.values() for line in lines)
    for line in listed:
        assert line.startswith(f"file:{t}/p=") and os.path.exists(line[len("file:"):])
    assert live_files(spark, t) == listed
    assert version_of(t) == 2  # GENERATE commits nothing
    shutil.rmtree(t / MANIFEST)
    delta_spark_generate(delta_spark, t)
    assert manifests(t) == ours

    # unpartitioned, and an empty unpartitioned table (an empty manifest, as delta-spark writes)
    u, e = tmp_path / "u", tmp_path / "e"
    spark.sql(f"CREATE TABLE deltalog.`{u}` (id BIGINT) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{u}` VALUES (1), (2)")
    spark.sql(f"CREATE TABLE deltalog.`{e}` (id BIGINT) USING deltalog")
    from deltalog.tables import DeltaTable
    for table in (u, e):
        DeltaTable.forPath(spark, str(table)).generate("SYMLINK_FORMAT_MANIFEST")  # any case
        ours = manifests(table)
        shutil.rmtree(table / MANIFEST)
        delta_spark_generate(delta_spark, table)
        assert manifests(table) == ours
    assert manifests(e) == {"manifest": []} and len(manifests(u)["manifest"]) == 2


def test_generate_removes_stale_partition_manifests(spark, tmp_path, delta_spark):
    t = tmp_path / "t"
    make_partitioned(spark, t)
    spark.sql(f"GENERATE symlink_format_manifest FOR TABLE deltalog.`{t}`")
    assert "p=b c/manifest" in manifests(t)
    spark.sql(f"DELETE FROM deltalog.`{t}` WHERE p = 'b c' OR id = 1")
    # without the property nothing changed yet
    assert manifests(t)["p=b c/manifest"]
    spark.sql(f"GENERATE symlink_format_manifest FOR TABLE deltalog.`{t}`")
    ours = manifests(t)
    assert "p=b c/manifest" not in ours and not (t / MANIFEST / "p=b c").exists()
    assert ours["p=a/manifest"] == live_files_in(spark, t, "a")
    (t / MANIFEST / "p=b c").mkdir()
    (t / MANIFEST / "p=b c" / "manifest").write_text("file:/stale\n")
    delta_spark_generate(delta_spark, t)
    assert manifests(t) == ours  # delta-spark agrees, and drops the stale one too


def test_refusals_have_delta_sparks_error_classes(spark, tmp_path, delta_spark):
    from deltalog.tables import DeltaTable
    dv = tmp_path / "dv"
    make_partitioned(spark, dv, "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"DELETE FROM deltalog.`{dv}` WHERE id = 1")
    cm = tmp_path / "cm"
    make_partitioned(spark, cm, "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    cases = [(dv, "DELTA_UNSUPPORTED_GENERATE_WITH_DELETION_VECTORS"),
             (cm, "DELTA_UNSUPPORTED_MANIFEST_GENERATION_WITH_COLUMN_MAPPING")]
    for table, cls in cases:
        with pytest.raises(Exception) as e:
            spark.sql(f"GENERATE symlink_format_manifest FOR TABLE deltalog.`{table}`").collect()
        assert error_class(e.value) == cls
        with pytest.raises(Exception) as e:
            DeltaTable.forPath(spark, str(table)).generate("symlink_format_manifest")
        assert error_class(e.value) == cls
        assert not (table / MANIFEST).exists()
        theirs = delta_spark.run(f"""
try:
    spark.sql("GENERATE symlink_format_manifest FOR TABLE delta.`{table}`").collect()
    result = None
except Exception as e:
    result = e.getCondition()
""")
        assert theirs == cls
    with pytest.raises(Exception) as e:
        spark.sql(f"GENERATE manifest_of_other_kind FOR TABLE deltalog.`{cm}`").collect()
    assert error_class(e.value) == "DELTA_MODE_NOT_SUPPORTED"
    with pytest.raises(Exception) as e:
        spark.sql(f"GENERATE symlink_format_manifest FOR TABLE deltalog.`{tmp_path / 'none'}`").collect()
    assert error_class(e.value) == "DELTA_TABLE_NOT_FOUND"

    # the incremental manifest and deletion vectors exclude each other (delta-spark's property rule)
    with pytest.raises(Exception) as e:
        spark.sql(f"ALTER TABLE deltalog.`{dv}` SET TBLPROPERTIES "
                  "('delta.compatibility.symlinkFormatManifest.enabled' = 'true')")
    assert error_class(e.value) == \
        "DELTA_VIOLATE_TABLE_PROPERTY_VALIDATION_FAILED.PERSISTENT_DELETION_VECTORS_WITH_INCREMENTAL_MANIFEST_GENERATION"
    spark.sql(f"ALTER TABLE deltalog.`{dv}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')")
    with pytest.raises(Exception) as e:
        spark.sql(f"ALTER TABLE deltalog.`{dv}` SET TBLPROPERTIES "
                  "('delta.compatibility.symlinkFormatManifest.enabled' = 'true')")
    assert error_class(e.value) == \
        "DELTA_VIOLATE_TABLE_PROPERTY_VALIDATION_FAILED.EXISTING_DELETION_VECTORS_WITH_INCREMENTAL_MANIFEST_GENERATION"


def test_incremental_manifests_follow_every_commit(spark, tmp_path, delta_spark):
    props = "TBLPROPERTIES ('delta.compatibility.symlinkFormatManifest.enabled' = 'true')"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    spark.sql(f"CREATE TABLE deltalog.`{ours}` (id BIGINT, p STRING) USING deltalog PARTITIONED BY (p) {props}")
    delta_spark.run("spark.sql(args['s'])",
                    s=f"CREATE TABLE delta.`{theirs}` (id BIGINT, p STRING) USING delta PARTITIONED BY (p) {props}")
    steps = ["INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')",
             "INSERT INTO {t} VALUES (4, 'a')",
             "DELETE FROM {t} WHERE p = 'b'",
             "UPDATE {t} SET id = id + 10 WHERE p = 'a'"]

    def same_as_delta_spark() -> None:
        """The same manifests (partition directories) as delta-spark's table after the same statements,
        each listing exactly the partition's live files (the two tables' data files differ in name)."""
        o, t = manifests(ours), manifests(theirs)
        assert set(o) == set(t)
        for key, lines in o.items():
            assert lines == live_files_in(spark, ours, key.split("=")[1].split("/")[0])
            assert len(t[key]) > 0 and all(line.startswith(f"file:{theirs}/") for line in t[key])

    spark.sql(steps[0].format(t=f"deltalog.`{ours}`"))
    delta_spark.run("spark.sql(args['s'])", s=steps[0].format(t=f"delta.`{theirs}`"))
    assert set(manifests(ours)) == {"p=a/manifest", "p=b/manifest", "p=c/manifest"}
    same_as_delta_spark()

    # incremental: a commit rewrites only the manifests of the partitions it touches
    marker = ["file:/only-a-full-generation-would-replace-this"]
    (ours / MANIFEST / "p=c" / "manifest").write_text(marker[0] + "\n")
    for step in steps[1:]:
        spark.sql(step.format(t=f"deltalog.`{ours}`"))
        delta_spark.run("spark.sql(args['s'])", s=step.format(t=f"delta.`{theirs}`"))
        assert manifests(ours)["p=c/manifest"] == marker
    ours_now = manifests(ours)
    assert "p=b/manifest" not in ours_now and not (ours / MANIFEST / "p=b").exists()  # emptied: deleted
    assert ours_now["p=a/manifest"] == live_files_in(spark, ours, "a")
    # a full GENERATE brings p=c back; then both engines agree file by file
    spark.sql(f"GENERATE symlink_format_manifest FOR TABLE deltalog.`{ours}`")
    same_as_delta_spark()
