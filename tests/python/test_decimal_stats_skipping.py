"""Decimal min/max statistics are read exactly (issue 25, interop seeds 34 and 50): deltalog parsed
every JSON number with a fraction as a double, so a decimal(38,10) bound with more than 17 significant
digits came back rounded, and a max rounded below the file's value (or a min rounded above it) made
file skipping drop the rows holding that value, on tables deltalog itself wrote with exact stats.
delta-spark 4.4 reads the same tables as the reference."""
import json
import os

import pytest

# more significant digits than a double carries; each rounds to a double on the wrong side of itself
VALUES = {1: "-1234567890123456789.0123456789", 2: "1234567890123456789.0123456789",
          3: "-9999999999999999999999999999.9999999999", 4: "9999999999999999999999999999.9999999999",
          5: "0.0000000001"}
QUERIES = [f"big = {VALUES[1]}", f"big = {VALUES[2]}", f"big = {VALUES[3]}", f"big = {VALUES[4]}",
           f"big IN ({VALUES[1]}, {VALUES[2]})", f"big <= {VALUES[1]}", f"big >= {VALUES[2]}",
           f"big > {VALUES[1]} AND big < {VALUES[2]}"]


def _one_file_per_value(spark, path: str) -> None:
    for i, v in VALUES.items():
        spark.sql(f"SELECT {i}L AS id, CAST('{v}' AS DECIMAL(38,10)) AS big") \
            .write.format("deltalog").mode("append").save(path)


def _stats(path: str) -> list:
    out = []
    for name in sorted(os.listdir(os.path.join(path, "_delta_log"))):
        if name.endswith(".json"):
            with open(os.path.join(path, "_delta_log", name)) as f:
                out += [json.loads(l)["add"]["stats"] for l in f if '"add"' in l]
    return out


def test_decimal_bounds_beyond_double_precision_do_not_skip_their_files(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    _one_file_per_value(spark, path)
    # the log holds the exact values (so file skipping is active on them)
    assert any(f'"big":{VALUES[1]}' in s for s in _stats(path))
    df = spark.read.format("deltalog").load(path)
    mine = {q: sorted(r.id for r in df.where(q).collect()) for q in QUERIES}
    theirs = delta_spark.run(
        "df = spark.read.format('delta').load(args['p'])\n"
        "result = {q: sorted(r.id for r in df.where(q).collect()) for q in args['qs']}", p=path, qs=QUERIES)
    assert mine == theirs
    assert mine[QUERIES[0]] == [1] and mine[QUERIES[4]] == [1, 2] and mine[QUERIES[7]] == [5]


def test_delete_by_a_decimal_beyond_double_precision_deletes_the_row(spark, tmp_path):
    path = str(tmp_path / "d")
    _one_file_per_value(spark, path)
    spark.sql(f"DELETE FROM deltalog.`{path}` WHERE big = {VALUES[2]} OR big = {VALUES[3]}")
    assert sorted(r.id for r in spark.read.format("deltalog").load(path).collect()) == [1, 4, 5]
