"""Writing tables whose protocol supports `variantType` (issue 25: tables other engines wrote, deltalog
writes). delta-rs 1.x lists `variantType` in every table-features protocol it creates, with or without a
variant column, so refusing the feature refused every delta-rs table with deletion vectors or
timestamp_ntz. Variant columns are written unshredded with a nullCount and no min/max statistics."""
import datetime
import json
import os

import pyarrow as pa
import pytest

deltalake = pytest.importorskip("deltalake")


def _commit(path: str, version: int) -> list:
    with open(os.path.join(path, "_delta_log", f"{version:020d}.json")) as f:
        return [json.loads(line) for line in f if line.strip()]


def _protocol(path: str) -> dict:
    from deltalake import DeltaTable
    p = DeltaTable(path).protocol()
    return {"reader": set(p.reader_features or []), "writer": set(p.writer_features or [])}


def test_delta_rs_table_with_variant_type_in_its_protocol_takes_deltalog_writes(spark, tmp_path):
    from deltalake import DeltaTable, write_deltalake
    path = str(tmp_path / "rs")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                     "ts": pa.array([datetime.datetime(2020, 1, d) for d in (1, 2, 3)], pa.timestamp("us"))})
    write_deltalake(path, data, mode="error", configuration={"delta.enableDeletionVectors": "true"})
    # the premise: delta-rs lists variantType although the table has no variant column
    assert "variantType" in _protocol(path)["writer"]

    spark.createDataFrame([(4, datetime.datetime(2020, 1, 4))], "id BIGINT, ts TIMESTAMP_NTZ") \
        .write.format("deltalog").mode("append").save(path)
    spark.sql(f"DELETE FROM deltalog.`{path}` WHERE id = 2")

    want = [1, 3, 4]
    assert sorted(r.id for r in spark.read.format("deltalog").load(path).collect()) == want
    from deltalake import QueryBuilder
    t = DeltaTable(path)
    assert t.version() == 2
    got = pa.table(QueryBuilder().register("t", t).execute("SELECT id FROM t").read_all())
    assert sorted(got.column("id").to_pylist()) == want
    # the protocol is left as delta-rs wrote it
    assert "variantType" in _protocol(path)["writer"]


def test_variant_column_written_unshredded_with_null_counts_only(spark, tmp_path, delta_spark):
    path = str(tmp_path / "v")
    spark.sql("SELECT id, CASE WHEN id = 1 THEN NULL ELSE parse_json(concat('{\"a\":', id, '}')) END AS v "
              "FROM range(3)").write.format("deltalog").save(path)
    actions = _commit(path, 0)
    protocol = next(a["protocol"] for a in actions if "protocol" in a)
    assert "variantType" in protocol["readerFeatures"] and "variantType" in protocol["writerFeatures"]
    assert "variantShredding" not in protocol["writerFeatures"]
    stats = [json.loads(a["add"]["stats"]) for a in actions if "add" in a]
    assert sum(s["nullCount"]["v"] for s in stats) == 1
    assert all("v" not in s.get("minValues", {}) and "v" not in s.get("maxValues", {}) for s in stats)
    assert all("id" in s["minValues"] for s in stats if s["numRecords"] > 0)

    mine = sorted((r.id, r.a) for r in spark.read.format("deltalog").load(path)
                  .selectExpr("id", "variant_get(v, '$.a', 'int') AS a").collect())
    assert mine == [(0, 0), (1, None), (2, 2)]
    theirs = delta_spark.run(
        "result = sorted([(r.id, r.a) for r in spark.read.format('delta').load(args['p'])"
        ".selectExpr('id', \"variant_get(v, '$.a', 'int') AS a\").collect()])", p=path)
    assert [tuple(x) for x in theirs] == mine
