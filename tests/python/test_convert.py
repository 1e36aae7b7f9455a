"""CONVERT TO DELTALOG (issue 28): ``CONVERT TO DELTALOG parquet.`/path` [NO STATISTICS] [PARTITIONED BY
(…)]`` and ``DeltaTable.convertToDelta``.

Each test writes Parquet directories with plain Spark (``df.write.parquet``), converts one copy with
deltalog and, where compared, another with delta-spark 4.4 (``CONVERT TO DELTA``), and checks: the
rows after the conversion equal the Parquet rows (deltalog, delta-spark and delta-rs read them), the
commit (operation ``CONVERT``, delta-spark's parameters and metric), the added files (paths,
partition values, ``numRecords`` the same as delta-spark's), statistics equal to each file's actual
min / max / null count (computed here with pyarrow from the file's rows), and the refusals with
delta-spark's error classes (nothing written then).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from test_connector_write import session_conf
from test_dml_delete import commit, commit_info, kinds, srt, version_of

import deltalog.exceptions as dx
from deltalog.tables import DeltaTable

LONG = "x" * 40  # longer than the 32-character string prefix of the statistics

SELECT = ("SELECT id, CAST(id AS INT) AS i, concat('s', lpad(CAST(id AS STRING), 3, '0')) AS s, "
          "CASE WHEN id % 7 = 3 THEN NULL ELSE date_add(DATE'2020-01-01', CAST(id AS INT)) END AS d, "
          "timestamp_micros(1600000000000000 + id * 1000003) AS ts, CAST(id / 4 AS DECIMAL(12, 3)) AS dec, "
          "CAST(id AS DOUBLE) / 3 AS dbl, id % 2 = 0 AS b, "
          f"CASE WHEN id = 5 THEN '{LONG}' ELSE NULL END AS long_s, "
          "named_struct('x', id * 2, 'y', CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id AS STRING) END) AS st, "
          "array(id, id + 1) AS arr")


# ------------------------------------------------------------------------------------------ helpers
def write_parquet(spark, path: Path, sql: str, partition_by=(), files: int = 3) -> None:
    """Plain Spark Parquet (INT64 microsecond timestamps, so their footers carry min/max)."""
    # set for the write only, then unset (not set back to the default value: an explicit
    # outputTimestampType is a user's choice that deltalog's own writes honour)
    with session_conf(spark, "spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS"):
        w = spark.sql(sql).repartition(files).write.mode("overwrite")
        if partition_by:
            w = w.partitionBy(*partition_by)
        w.parquet(str(path))


def parquet_rows(spark, path: Path, columns) -> list:
    return srt(tuple(r) for r in spark.read.parquet(str(path)).select(*columns).collect())


def delta_rows(spark, path: Path, columns) -> list:
    return srt(tuple(r) for r in spark.read.format("deltalog").load(str(path)).select(*columns).collect())


def delta_spark_rows(delta_spark, path: Path, columns) -> list:
    got = delta_spark.run("result = [[str(v) if v is not None else None for v in r] for r in "
                          "spark.read.format('delta').load(args['p']).select(*args['c']).collect()]",
                          p=str(path), c=list(columns))
    return srt(tuple(r) for r in got)


def delta_rs_rows(path: Path, columns) -> list:
    import deltalake
    t = deltalake.DeltaTable(str(path)).to_pyarrow_table().select(list(columns)).to_pylist()
    return srt(tuple(r[c] for c in columns) for r in t)


def as_text(rows) -> list:
    return srt(tuple(None if v is None else str(v) for v in r) for r in rows)


def adds(path: Path) -> dict:
    return {a["path"]: a for a in kinds(commit(path, 0), "add")}


def stats(add: dict) -> dict:
    return json.loads(add["stats"])


def convert_delta_spark(delta_spark, path: Path, clause: str = "") -> None:
    delta_spark.run(f"spark.sql(\"CONVERT TO DELTA parquet.`{path}` {clause}\")")


def delta_spark_error(delta_spark, sql: str, path: Path = None):
    """delta-spark's error class for `sql`, run on a fresh copy of `path` (delta-spark leaves an empty
    ``_delta_log`` behind in a directory it refuses to convert)."""
    if path is not None:
        copy = path.parent / (path.name + "_delta_spark")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(path, copy)
        sql = sql.replace(f"`{path}`", f"`{copy}`")
    got = delta_spark.run(f"""
try:
    spark.sql({sql!r})
    result = None
except Exception as e:
    result = (e.getCondition() if hasattr(e, 'getCondition') else None) or str(e)
""")
    found = re.search(r"\[([A-Z_]+)\]", got) if got else None
    return found.group(1) if found else got


def error_class(e) -> str:
    return getattr(e, "errorClass", None)


def file_truth(table: Path, add_path: str, column: str):
    """(min, max, null count) of `column` in the file at `add_path`, from its rows."""
    from urllib.parse import unquote
    col = pq.read_table(table / unquote(add_path)).column(column)
    mm = pc.min_max(col)
    return mm["min"].as_py(), mm["max"].as_py(), col.null_count


# ------------------------------------------------------------------------------------------ tests
def test_convert_unpartitioned_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_parquet(spark, ours, f"{SELECT} FROM range(60)")
    shutil.copytree(ours, theirs)
    columns = ["id", "i", "s", "d", "ts", "dec", "dbl", "b", "long_s", "st", "arr"]
    before = parquet_rows(spark, ours, columns)

    assert spark.sql(f"CONVERT TO DELTALOG parquet.`{ours}`").collect() == []
    convert_delta_spark(delta_spark, theirs)

    # rows: the Parquet rows, through every engine
    assert delta_rows(spark, ours, columns) == before
    flat = ["id", "i", "s", "d", "dec", "b", "long_s"]
    want = as_text(parquet_rows(spark, ours, flat))
    assert as_text(delta_spark_rows(delta_spark, ours, flat)) == want
    assert as_text(delta_rs_rows(ours, flat)) == want

    # the commit: delta-spark's operation, parameters, metric; same files and row counts
    o, t = commit(ours, 0), commit(theirs, 0)
    ci, ti = commit_info(o), commit_info(t)
    assert ci["operation"] == ti["operation"] == "CONVERT"
    assert ci["operationParameters"] == ti["operationParameters"] == {
        "numFiles": 3, "partitionedBy": "[]", "collectStats": True, "sourceFormat": "parquet"}
    assert ci["operationMetrics"] == ti["operationMetrics"] == {"numConvertedFiles": "3"}
    assert kinds(o, "protocol") == kinds(t, "protocol")
    ours_meta, theirs_meta = kinds(o, "metaData")[0], kinds(t, "metaData")[0]
    assert json.loads(ours_meta["schemaString"]) == json.loads(theirs_meta["schemaString"])
    assert ours_meta["partitionColumns"] == theirs_meta["partitionColumns"] == []
    oa, ta = adds(ours), adds(theirs)
    assert sorted(oa) == sorted(ta) and len(oa) == 3
    for p, a in oa.items():
        assert a["partitionValues"] == ta[p]["partitionValues"] == {}
        assert a["size"] == ta[p]["size"] and a["dataChange"] is True
        assert stats(a)["numRecords"] == stats(ta[p])["numRecords"]

    # statistics: each file's real min / max / null count; none where the footer cannot be trusted
    for p, a in oa.items():
        s = stats(a)
        for c in ("id", "i", "s", "d", "dec"):
            lo, hi, nulls = file_truth(ours, p, c)
            assert s["nullCount"][c] == nulls, (p, c)
            shown = (lambda v: v.isoformat()) if c == "d" else (lambda v: float(v)) if c == "dec" else (lambda v: v)
            assert shown(lo) == (s["minValues"][c] if c != "dec" else float(s["minValues"][c])), (p, c)
            assert shown(hi) == (s["maxValues"][c] if c != "dec" else float(s["maxValues"][c])), (p, c)
        lo, hi, _ = file_truth(ours, p, "ts")
        assert s["minValues"]["ts"].startswith(lo.strftime("%Y-%m-%dT%H:%M:%S"))
        assert s["nullCount"]["st"] == {"x": 0, "y": pq.read_table(ours / p).column("st").combine_chunks()
                                        .field("y").null_count}
        # no bounds for float/double (a footer's min/max leave NaN out) nor for boolean / arrays
        assert "dbl" not in s["minValues"] and "b" not in s["minValues"] and "arr" not in s.get("nullCount", {})
        assert s["nullCount"]["dbl"] == 0 and s["nullCount"]["b"] == 0
        # the same bounds delta-spark computes from the data, where we have them
        ts = stats(ta[p])
        for c in ("id", "i", "s", "d", "dec", "st"):
            assert s["minValues"][c] == ts["minValues"][c] and s["maxValues"][c] == ts["maxValues"][c], (p, c)
        assert s["nullCount"]["long_s"] == ts["nullCount"]["long_s"]
        if "long_s" in s["minValues"]:  # the 40-character string: truncated as delta-spark truncates it
            assert s["minValues"]["long_s"] == ts["minValues"]["long_s"] == LONG[:32]
            assert s["maxValues"]["long_s"] == ts["maxValues"]["long_s"]

    # deltalog's own reader skips files by these statistics
    assert spark.read.format("deltalog").load(str(ours)).where("id = 7").count() == 1


def test_convert_partitioned_null_and_escaped_values(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_parquet(spark, ours, "SELECT id, concat('v', CAST(id AS STRING)) AS v, "
                  "CASE WHEN id % 4 = 0 THEN NULL WHEN id % 4 = 1 THEN 'a/b c' WHEN id % 4 = 2 THEN 'x%=y' "
                  "ELSE 'plain' END AS p, CAST(id % 2 AS INT) AS q FROM range(40)", partition_by=("p", "q"))
    shutil.copytree(ours, theirs)
    names = sorted(x.name for x in ours.iterdir())
    assert "p=__HIVE_DEFAULT_PARTITION__" in names and "p=a%2Fb c" in names and "p=x%25%3Dy" in names
    before = parquet_rows(spark, ours, ["id", "v", "p", "q"])

    table = DeltaTable.convertToDelta(spark, f"parquet.`{ours}`", "p STRING, q INT")
    assert table.version() == 0
    convert_delta_spark(delta_spark, theirs, "PARTITIONED BY (p STRING, q INT)")

    assert srt(tuple(r) for r in table.toDF().select("id", "v", "p", "q").collect()) == before
    want = as_text(before)
    assert as_text(delta_spark_rows(delta_spark, ours, ["id", "v", "p", "q"])) == want
    assert as_text(delta_rs_rows(ours, ["id", "v", "p", "q"])) == want

    ci, ti = commit_info(commit(ours, 0)), commit_info(commit(theirs, 0))
    assert ci["operationParameters"] == ti["operationParameters"]
    assert ci["operationParameters"]["partitionedBy"] == '["p","q"]'
    meta = kinds(commit(ours, 0), "metaData")[0]
    assert meta["partitionColumns"] == ["p", "q"]
    assert [f["name"] for f in json.loads(meta["schemaString"])["fields"]] == ["id", "v", "p", "q"]
    assert json.loads(meta["schemaString"]) == json.loads(kinds(commit(theirs, 0), "metaData")[0]["schemaString"])
    oa, ta = adds(ours), adds(theirs)
    assert sorted(oa) == sorted(ta)
    assert any("p=a%252Fb%20c/" in p for p in oa)  # the directory's name, URI-encoded
    values = {json.dumps(a["partitionValues"], sort_keys=True) for a in oa.values()}
    assert {json.dumps(v["partitionValues"], sort_keys=True) for v in ta.values()} == values
    assert '{"p": null, "q": "0"}' in values and '{"p": "a/b c", "q": "1"}' in values
    assert '{"p": "x%=y", "q": "0"}' in values
    for p, a in oa.items():
        assert stats(a)["numRecords"] == stats(ta[p])["numRecords"]
        assert "p" not in stats(a)["nullCount"]  # partition columns have no statistics
        assert stats(a)["minValues"] == stats(ta[p])["minValues"]
    # partition pruning on the converted table
    assert spark.read.format("deltalog").load(str(ours)).where("p IS NULL").count() == 10
    assert spark.read.format("deltalog").load(str(ours)).where("p = 'a/b c' AND q = 1").count() == 10


def test_schemas_merged_hidden_files_skipped_and_no_statistics(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_parquet(spark, ours / "one", "SELECT id, CAST(id AS STRING) AS a FROM range(5)", files=1)
    write_parquet(spark, ours / "two", "SELECT id, CAST(id AS SMALLINT) AS c FROM range(5, 9)", files=1)
    (ours / "_tmp").mkdir()
    shutil.copy(next((ours / "one").glob("*.parquet")), ours / "_tmp" / "skipped.parquet")
    shutil.copy(next((ours / "one").glob("*.parquet")), ours / ".hidden.parquet")
    assert (ours / "one" / "_SUCCESS").exists()
    shutil.copytree(ours, theirs)

    spark.sql(f"CONVERT TO DELTALOG parquet.`{ours}` NO STATISTICS")
    convert_delta_spark(delta_spark, theirs, "NO STATISTICS")
    o, t = commit(ours, 0), commit(theirs, 0)
    assert commit_info(o)["operationParameters"] == commit_info(t)["operationParameters"]
    assert commit_info(o)["operationParameters"]["collectStats"] is False
    assert sorted(adds(ours)) == sorted(adds(theirs)) and len(adds(ours)) == 2
    assert all(a.get("stats") is None for a in adds(ours).values())
    schema = json.loads(kinds(o, "metaData")[0]["schemaString"])
    # the same columns as delta-spark's (whose order of new columns follows its parallel listing;
    # deltalog's follows the files' paths, sorted)
    theirs_fields = json.loads(kinds(t, "metaData")[0]["schemaString"])["fields"]
    assert sorted(schema["fields"], key=str) == sorted(theirs_fields, key=str)
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [("id", "long"), ("a", "string"), ("c", "short")]
    rows = delta_rows(spark, ours, ["id", "a", "c"])
    assert rows == srt([(i, str(i), None) for i in range(5)] + [(i, None, i) for i in range(5, 9)])

    # with statistics: a column a file does not have is null in each of its rows
    again = tmp_path / "again"
    shutil.copytree(ours, again, ignore=shutil.ignore_patterns("_delta_log"))
    DeltaTable.convertToDelta(spark, f"parquet.`{again}`")
    for p, a in adds(again).items():
        s = stats(a)
        if p.startswith("one/"):
            assert s["nullCount"] == {"id": 0, "a": 0, "c": 5} and "c" not in s["minValues"]
        else:
            assert s["nullCount"] == {"id": 0, "a": 4, "c": 0}
            assert (s["minValues"]["c"], s["maxValues"]["c"]) == (5, 8)


def test_refusals_name_the_file_and_write_nothing(spark, tmp_path, delta_spark):
    def refused(path: Path, clause: str = "", target: str = None):
        target = target or f"parquet.`{path}`"
        with pytest.raises(dx.InvalidWriteError) as e:
            spark.sql(f"CONVERT TO DELTALOG {target} {clause}")
        if path.exists():
            assert not (path / "_delta_log").exists()
        return e.value

    # a directory that does not match the partition schema
    t = tmp_path / "mismatch"
    write_parquet(spark, t, "SELECT id, CAST(id % 2 AS INT) AS p FROM range(10)", partition_by=("p",))
    e = refused(t, "PARTITIONED BY (q INT)")
    assert error_class(e) == "DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME" and "p=0/" in str(e)
    assert delta_spark_error(delta_spark, f"CONVERT TO DELTA parquet.`{t}` PARTITIONED BY (q INT)", t) == \
        "DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME"
    e = refused(t, "PARTITIONED BY (p INT, q INT)")
    assert error_class(e) == "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME"
    assert delta_spark_error(delta_spark, f"CONVERT TO DELTA parquet.`{t}` PARTITIONED BY (p INT, q INT)", t) == \
        "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME"
    e = refused(t, "PARTITIONED BY (p DATE)")
    assert error_class(e) == "DELTA_FAILED_CAST_PARTITION_VALUE" and "p=0/" in str(e)
    shutil.copy(next((t / "p=0").glob("*.parquet")), t / "stray.parquet")
    e = refused(t, "PARTITIONED BY (p INT)")
    assert error_class(e) == "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME" and "stray.parquet" in str(e)
    (t / "stray.parquet").unlink()
    # partitioned files converted without a partition schema: refused the same way
    e = refused(t)
    assert error_class(e) == "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME"

    # incompatible schemas: the file is named
    t = tmp_path / "incompatible"
    write_parquet(spark, t / "a", "SELECT id FROM range(3)", files=1)
    write_parquet(spark, t / "b", "SELECT CAST(id AS STRING) AS id FROM range(3)", files=1)
    e = refused(t)
    assert error_class(e) == "DELTA_FAILED_MERGE_SCHEMA_FILE"
    assert str(next((t / "b").glob("*.parquet")).name) in str(e) and "bigint and string" in str(e)
    # delta-spark names the file (DELTA_FAILED_MERGE_SCHEMA_FILE) when both files meet in one of its tasks,
    # else only the column (DELTA_FAILED_TO_MERGE_FIELDS, merging the tasks' schemas); deltalog always names it
    assert delta_spark_error(delta_spark, f"CONVERT TO DELTA parquet.`{t}`", t) in \
        ("DELTA_FAILED_MERGE_SCHEMA_FILE", "DELTA_FAILED_TO_MERGE_FIELDS")

    # a file that is not Parquet
    t = tmp_path / "notparquet"
    write_parquet(spark, t, "SELECT id FROM range(3)", files=1)
    (t / "notes.txt").write_text("not parquet")
    e = refused(t)
    assert error_class(e) == "DELTA_FAILED_READ_FILE_FOOTER" and "notes.txt" in str(e)
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        DeltaTable.convertToDelta(spark, f"parquet.`{t}`")
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")
    assert [p for p in adds(t)] == [next(t.glob("*.parquet")).name]

    # empty directory, hidden files only, a path that does not exist
    t = tmp_path / "empty"
    t.mkdir()
    assert error_class(refused(t)) == "DELTA_EMPTY_DIRECTORY"
    (t / "_SUCCESS").write_text("")
    assert error_class(refused(t)) == "DELTA_EMPTY_DIRECTORY"
    assert delta_spark_error(delta_spark, f"CONVERT TO DELTA parquet.`{t}`", t) == "DELTA_EMPTY_DIRECTORY"
    assert error_class(refused(tmp_path / "nope")) == "DELTA_PATH_DOES_NOT_EXIST"

    # targets that are not parquet directories
    assert error_class(refused(t, target=f"'{t}'")) == "DELTA_MISSING_PROVIDER_FOR_CONVERT"
    assert error_class(refused(t, target=f"orc.`{t}`")) == "DELTA_CONVERT_NON_PARQUET_TABLE"


def test_already_a_table_is_left_alone(spark, tmp_path, delta_spark):
    t = tmp_path / "t"
    write_parquet(spark, t, "SELECT id FROM range(10)", files=2)
    DeltaTable.convertToDelta(spark, f"parquet.`{t}`")
    log = sorted(x.name for x in (t / "_delta_log").iterdir())
    # again, by SQL (both spellings) and by the Python API: no commit, success
    spark.sql(f"CONVERT TO DELTALOG parquet.`{t}`")
    spark.sql(f"CONVERT TO DELTA parquet.`{t}` PARTITIONED BY (x INT)")
    spark.sql(f"CONVERT TO DELTALOG deltalog.`{t}`")
    assert DeltaTable.convertToDelta(spark, f"parquet.`{t}`").version() == 0
    assert sorted(x.name for x in (t / "_delta_log").iterdir()) == log and version_of(t) == 0
    # delta-spark does the same with a table it did not convert
    theirs = tmp_path / "theirs"
    spark.sql(f"CREATE TABLE deltalog.`{theirs}` (id BIGINT) USING deltalog")
    spark.sql(f"INSERT INTO deltalog.`{theirs}` VALUES (1)")
    assert delta_spark_error(delta_spark, f"CONVERT TO DELTA parquet.`{theirs}`") is None
    spark.sql(f"CONVERT TO DELTALOG parquet.`{theirs}`")
    assert version_of(theirs) == 1
    # a path named as a Delta table that is not one is refused
    with pytest.raises(dx.InvalidWriteError) as e:
        spark.sql(f"CONVERT TO DELTALOG deltalog.`{tmp_path / 'none'}`")
    assert error_class(e.value) == "DELTA_MISSING_PROVIDER_FOR_CONVERT"


def test_python_api_takes_a_struct_type_and_the_table_is_writable(spark, tmp_path):
    from pyspark.sql.types import IntegerType, StructField, StructType
    t = tmp_path / "t"
    write_parquet(spark, t, "SELECT id, CAST(id % 3 AS INT) AS p FROM range(12)", partition_by=("p",))
    table = DeltaTable.convertToDelta(spark, f"parquet.`{t}`", StructType([StructField("p", IntegerType())]))
    spark.sql(f"INSERT INTO deltalog.`{t}` VALUES (100, 1)")
    assert table.toDF().where("p = 1").count() == 5
    assert kinds(commit(t, 0), "metaData")[0]["partitionColumns"] == ["p"]
    with pytest.raises(TypeError):
        DeltaTable.convertToDelta(spark, f"parquet.`{t}`", 42)


def test_cli_convert(spark, tmp_path):
    import io

    from deltalog.cli import main
    t = tmp_path / "t"
    write_parquet(spark, t, "SELECT id, CAST(id % 2 AS INT) AS p FROM range(8)", partition_by=("p",), files=1)
    out, err = io.StringIO(), io.StringIO()
    assert main(["convert", str(t), "--partition-by", "p INT"], out=out, err=err) == 0
    nfiles = len(list(t.glob("p=*/*.parquet")))
    assert out.getvalue().startswith(f"converted {t}: version 0, {nfiles} files") and "partitioned by p" in out.getvalue()
    assert commit_info(commit(t, 0))["operation"] == "CONVERT"
    out = io.StringIO()
    assert main(["convert", str(t)], out=out, err=err) == 0 and "already is a Delta table" in out.getvalue()
    other = tmp_path / "other"
    write_parquet(spark, other, "SELECT id, CAST(id % 2 AS INT) AS p FROM range(8)", partition_by=("p",), files=1)
    err = io.StringIO()
    assert main(["convert", str(other)], out=io.StringIO(), err=err) == 1
    assert "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME" in err.getvalue()
    assert not (other / "_delta_log").exists()
