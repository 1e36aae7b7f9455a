"""The Python ``DeltaTable`` API with delta-spark's signatures (issue 26): ``forPath(spark, path,
hadoopConf)`` with time travel keyword-only, ``isDeltaTable``, ``toDF``, ``alias``, the builders
(``create / createIfNotExists / replace / createOrReplace``), ``upgradeTableProtocol`` and
``addFeatureSupport``. Each call is checked through its result and the commit it wrote.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import deltalake

from deltalog.builder import IdentityGenerator
from deltalog.tables import DeltaTable


def log_versions(path: Path) -> list:
    return sorted(int(f.name[:20]) for f in (path / "_delta_log").glob("*.json"))


def last_actions(path: Path) -> list:
    v = log_versions(path)[-1]
    return [json.loads(l) for l in (path / "_delta_log" / f"{v:020d}.json").read_text().splitlines()]


def test_for_path_signature_hadoop_conf_and_keyword_time_travel(spark, tmp_path):
    p = tmp_path / "t"
    spark.range(3).write.format("deltalog").save(str(p))
    spark.range(3, 5).write.format("deltalog").mode("append").save(str(p))
    # delta-spark code passes Hadoop options third: they reach the table's file system
    t = DeltaTable.forPath(spark, str(p), {"fs.file.impl.disable.cache": "true"})
    assert t.version() == 1 and t.toDF().count() == 5
    assert DeltaTable.forPath(spark, str(p), {"x.y": "z"}, version=0).toDF().count() == 3
    assert DeltaTable.forPath(spark, str(p), version=0).toDF().count() == 3
    with pytest.raises(TypeError):
        DeltaTable.forPath(spark, str(p), 0)  # time travel is keyword-only now
    # a Hadoop option that breaks the file system shows it is really used for this table
    with pytest.raises(Exception):
        DeltaTable.forPath(spark, "nofs://x/t", {"fs.nofs.impl": "no.such.FileSystem"})


def test_is_delta_table(spark, tmp_path):
    p = tmp_path / "t"
    spark.range(2).write.format("deltalog").save(str(p))
    assert DeltaTable.isDeltaTable(spark, str(p))
    assert not DeltaTable.isDeltaTable(spark, str(tmp_path))          # the parent
    assert not DeltaTable.isDeltaTable(spark, str(p / "_delta_log"))  # inside the table
    assert not DeltaTable.isDeltaTable(spark, str(tmp_path / "nope"))
    spark.range(2).write.parquet(str(tmp_path / "pq"))
    assert not DeltaTable.isDeltaTable(spark, str(tmp_path / "pq"))


def test_to_df_and_alias(spark, tmp_path):
    p = tmp_path / "t"
    spark.range(3).write.format("deltalog").save(str(p))
    t = DeltaTable.forPath(spark, str(p))
    spark.range(3, 6).write.format("deltalog").mode("append").save(str(p))
    assert t.toDF().count() == 6  # latest, as delta-spark's toDF
    pinned = DeltaTable.forPath(spark, str(p), version=0)
    assert pinned.toDF().count() == 3
    a = t.alias("src")
    assert a.toDF().select("src.id").count() == 6
    assert a.version() == t.version()


def test_builders_create_if_not_exists_replace(spark, tmp_path):
    loc = tmp_path / "b"
    t = (DeltaTable.create(spark).location(str(loc))
         .addColumn("id", "BIGINT", nullable=False, comment="the id")
         .addColumn("ts", "TIMESTAMP")
         .addColumn("day", "DATE", generatedAlwaysAs="CAST(ts AS DATE)")
         .addColumn("seq", "BIGINT", generatedAlwaysAsIdentity=IdentityGenerator(start=1, step=2))
         .partitionedBy("day").property("delta.appendOnly", "true").comment("raw events").execute())
    assert t.version() == 0
    meta = next(a["metaData"] for a in last_actions(loc) if "metaData" in a)
    fields = {f["name"]: f for f in json.loads(meta["schemaString"])["fields"]}
    assert fields["id"]["nullable"] is False and fields["id"]["metadata"]["comment"] == "the id"
    assert fields["day"]["metadata"]["delta.generationExpression"] == "CAST(ts AS DATE)"
    assert fields["seq"]["metadata"]["delta.identity.start"] == 1 and fields["seq"]["metadata"]["delta.identity.step"] == 2
    assert meta["partitionColumns"] == ["day"] and meta["description"] == "raw events"
    assert meta["configuration"] == {"delta.appendOnly": "true"}
    commit = next(a["commitInfo"] for a in last_actions(loc) if "commitInfo" in a)
    assert commit["operation"] == "CREATE TABLE"
    with pytest.raises(Exception):
        DeltaTable.create(spark).location(str(loc)).addColumn("id", "BIGINT").execute()
    # createIfNotExists on an existing table: nothing written
    DeltaTable.createIfNotExists(spark).location(str(loc)).addColumn("id", "BIGINT").execute()
    assert log_versions(loc) == [0]
    # replace keeps the history: version 1 with the new schema
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    r = DeltaTable.replace(spark).location(str(loc)).addColumns(
        StructType([StructField("k", LongType()), StructField("s", StringType())])).execute()
    assert r.version() == 1 and r.toDF().columns == ["k", "s"]
    assert next(a["commitInfo"] for a in last_actions(loc) if "commitInfo" in a)["operation"] == "REPLACE TABLE"
    assert deltalake.DeltaTable(str(loc)).schema().to_arrow().names == ["k", "s"]


def test_builder_by_name(spark, tmp_path):
    db = "bld_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'wh'}'")
    try:
        t = DeltaTable.createOrReplace(spark).tableName(f"{db}.e").addColumn("id", "BIGINT").execute()
        assert t.version() == 0 and spark.catalog.tableExists(f"{db}.e")
        t2 = DeltaTable.createOrReplace(spark).tableName(f"{db}.e").addColumn("id", "BIGINT") \
            .addColumn("v", "STRING").execute()
        assert t2.version() == 1 and spark.table(f"{db}.e").columns == ["id", "v"]
        with pytest.raises(ValueError):
            DeltaTable.create(spark).addColumn("id", "BIGINT").execute()  # neither name nor location
    finally:
        spark.sql(f"DROP DATABASE {db} CASCADE")


def test_upgrade_protocol_and_add_feature(spark, tmp_path):
    p = tmp_path / "t"
    spark.range(2).write.format("deltalog").save(str(p))
    t = DeltaTable.forPath(spark, str(p))
    t.upgradeTableProtocol(1, 4)
    prot = next(a["protocol"] for a in last_actions(p) if "protocol" in a)
    assert (prot["minReaderVersion"], prot["minWriterVersion"]) == (1, 4)
    t.addFeatureSupport("deletionVectors")
    prot = next(a["protocol"] for a in last_actions(p) if "protocol" in a)
    assert prot["minReaderVersion"] == 3 and prot["minWriterVersion"] == 7
    assert "deletionVectors" in prot["readerFeatures"] and "deletionVectors" in prot["writerFeatures"]
    # (1, 4) implied features stay supported, listed explicitly under (3, 7)
    assert {"changeDataFeed", "generatedColumns", "checkConstraints"} <= set(prot["writerFeatures"])
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_FEATURES_IN_CONFIG|noSuchFeature"):
        t.addFeatureSupport("noSuchFeature")
