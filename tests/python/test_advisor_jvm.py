"""The advisor against the JVM engine (session ``spark`` fixture):

* the pure-Python log reader returns the same protocol, metadata and version as
  ``DeltaTable.forPath(...)`` for every table of the conformance corpus;
* ``plan_change`` predicts exactly the protocol (and persisted configuration) the engine commits
  for ``ALTER TABLE ... SET/UNSET TBLPROPERTIES`` and ``delta.feature.X = 'supported'`` — each
  scenario is really committed to a fresh table — and refuses what the engine refuses, with the
  same error class;
* planned DROP FEATURE protocols equal the JVM's ``dropFeatureSupport``;
* ``DeltaTable.explainProtocol()`` / ``.compatibility()`` equal the pure-Python answers.
"""
from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Dict, Optional

import pytest

from conftest import CONFORMANCE
from deltalog._jvm import evaluate_protocol_cases, translate_jvm_error
from deltalog._log_reader import read_protocol_and_metadata
from deltalog.actions import Metadata
from deltalog.advisor import compatibility, explain, plan_change
from deltalog.exceptions import DeltalogError
from deltalog.protocol import Protocol
from deltalog.tables import DeltaTable

ENTRIES = json.loads((CONFORMANCE / "manifest.json").read_text())
SCHEMA = json.dumps({"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]},
                    separators=(",", ":"))
# The engine wants column-mapping metadata on every field when a mapping mode is set.
CM_SCHEMA = json.dumps({"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {
    "delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-1"}}]}, separators=(",", ":"))
CM = {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "1"}


def _metadata_key(m: Metadata) -> dict:
    return {"id": m.id, "schemaString": m.schemaString, "partitionColumns": list(m.partitionColumns),
            "configuration": dict(m.configuration), "provider": m.format.provider}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_pure_python_reader_equals_the_engine(spark, entry):
    path = str(CONFORMANCE / entry["table_path"])
    try:
        DeltaTable.clearCache(spark)
        dt = DeltaTable.forPath(spark, path)
        jvm = (dt.version(), dt.protocol(), dt.metadata())
    except DeltalogError as e:
        jvm_error = e
        jvm = None
    try:
        state = read_protocol_and_metadata(path)
    except DeltalogError as e:
        assert jvm is None, f"pure reader failed ({e}) where the engine read {jvm}"
        return
    if jvm is None:
        # The engine refuses tables it cannot read; the advisor still reads their protocol to
        # explain why: unsupported reader features, or protocol versions the engine's parser
        # rejects outright (reader 5, reader 99), which explain() flags as undefined.
        if jvm_error.errorClass == "DELTA_UNSUPPORTED_FEATURES_FOR_READ":
            with pytest.raises(DeltalogError):
                state.protocol.checkCanRead()
            return
        if jvm_error.errorClass == "DELTA_MALFORMED_LOG_LINE" and "protocol.minReaderVersion" in str(jvm_error):
            assert any("not a defined Delta protocol version" in w for w in explain(state.protocol, None).warnings)
            return
        if "outcome-reader-dependent" in entry["exercises"]:
            # The manifest accepts the recorded result or a typed error from a reader (the engine
            # refuses, test_conformance.py checks that it does so with a typed error); the pure
            # reader has nothing to be compared with.
            assert state.protocol is not None
            return
        if not entry["must_fail"]:
            pytest.fail(f"the engine cannot open a table the manifest says is readable: {jvm_error}")
        pytest.fail(f"engine error {jvm_error} but the pure reader returned {state.protocol.simpleString}")
    version, protocol, metadata = jvm
    assert state.version == version
    assert state.protocol.toJsonDict() == protocol.toJsonDict()
    assert _metadata_key(state.metadata) == _metadata_key(metadata)


# ------------------------------------------------------------------------------ planned = committed
def _create(spark, path: Path, protocol: Protocol, conf: Dict[str, str], schema: str = SCHEMA) -> None:
    txn = DeltaTable.createTransaction(spark, str(path))
    md = Metadata(id=str(uuid.uuid4()), schemaString=schema,
                  configuration={**conf, "delta.ignoreProtocolDefaults": "true"}, createdTime=int(time.time() * 1000))
    txn.commit([md, protocol], "CREATE TABLE", {"isManaged": "false"})
    DeltaTable.clearCache(spark)
    created = DeltaTable.forPath(spark, str(path)).protocol()
    assert created == protocol, f"setup: created {created} instead of {protocol}"


def _alter(spark, path: Path, changes: Dict[str, Optional[str]], schema: str = SCHEMA) -> None:
    dt = DeltaTable.forPath(spark, str(path))
    conf = dict(dt.metadata().configuration)
    for k, v in changes.items():
        if v is None:
            conf.pop(k, None)
        else:
            conf[k] = v
    txn = dt.startTransaction()
    txn.updateMetadata(Metadata(id=dt.metadata().id, schemaString=schema, configuration=conf,
                                createdTime=dt.metadata().createdTime))
    txn.commit([], "SET TBLPROPERTIES")


def _p(body: dict) -> Protocol:
    return Protocol.fromJsonDict(body)


DV_TABLE = Protocol.of(1, 2).addFeatureSupport("deletionVectors")
SCENARIOS = [
    ("deletion vectors", Protocol.of(1, 2), {}, {"delta.enableDeletionVectors": "true"}),
    ("column mapping", Protocol.of(1, 2), {}, CM),
    ("uniform", Protocol.of(1, 2), {}, {"delta.enableIcebergCompatV2": "true", **CM,
                                        "delta.universalFormat.enabledFormats": "iceberg"}),
    ("check constraint", Protocol.of(1, 2), {}, {"delta.constraints.positive": "id > 0"}),
    ("cdf on (1,3)", Protocol.of(1, 3), {"delta.constraints.positive": "id > 0"}, {"delta.enableChangeDataFeed": "true"}),
    ("append only on (1,1)", Protocol.of(1, 1), {}, {"delta.appendOnly": "true"}),
    ("writer version", Protocol.of(1, 2), {}, {"delta.minWriterVersion": "4"}),
    ("both versions", Protocol.of(1, 2), {}, {"delta.minReaderVersion": "2", "delta.minWriterVersion": "5"}),
    ("feature property", Protocol.of(1, 2), {}, {"delta.feature.clustering": "supported"}),
    ("v2 checkpoints", Protocol.of(1, 2), {}, {"delta.feature.v2Checkpoint": "supported", "delta.checkpointPolicy": "v2"}),
    ("row tracking on dv", DV_TABLE, {"delta.enableDeletionVectors": "true"}, {"delta.enableRowTracking": "true"}),
    ("turn dv off", DV_TABLE, {"delta.enableDeletionVectors": "true"}, {"delta.enableDeletionVectors": None}),
    ("in-commit timestamps", Protocol.of(1, 4), {}, {"delta.enableInCommitTimestamps": "true"}),
    ("type widening", Protocol.of(2, 5), CM, {"delta.enableTypeWidening": "true"}),
    ("bad boolean", Protocol.of(1, 2), {}, {"delta.enableDeletionVectors": "yes"}),
    ("bad feature status", Protocol.of(1, 2), {}, {"delta.feature.deletionVectors": "disabled"}),
    ("unknown feature", Protocol.of(1, 2), {}, {"delta.feature.noSuchFeature": "supported"}),
    ("reader 3 writer 5", Protocol.of(1, 2), {}, {"delta.minReaderVersion": "3", "delta.minWriterVersion": "5"}),
]


@pytest.mark.parametrize("name, start, conf, changes", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_planned_property_change_is_what_the_engine_commits(spark, tmp_path, name, start, conf, changes):
    schema = CM_SCHEMA if "delta.columnMapping.mode" in {**conf, **changes} else SCHEMA
    meta = {"configuration": conf, "schemaString": schema}
    try:
        plan = plan_change(start, meta, property_changes=changes)
        planned_error = None
    except DeltalogError as e:
        plan, planned_error = None, e
    path = tmp_path / "t"
    _create(spark, path, start, conf, schema)
    expected_error = planned_error.errorClass if planned_error else \
        ("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE" if plan.engineRefusal else None)
    if expected_error is not None:
        with pytest.raises(DeltalogError) as info:
            _alter(spark, path, changes, schema)
        assert info.value.errorClass == expected_error
        if plan is not None:  # the refused protocol names the same features
            assert plan.engineRefusal and all(f in plan.engineRefusal for f in info.value.unsupportedFeatures)
        return
    _alter(spark, path, changes, schema)
    DeltaTable.clearCache(spark)
    dt = DeltaTable.forPath(spark, str(path))
    assert dt.protocol().toJsonDict() == plan.after.toJsonDict()
    committed = dict(dt.metadata().configuration)
    if any("inCommitTimestampEnablement" in n for n in plan.notes):  # values only known at commit time
        committed = {k: v for k, v in committed.items() if not k.startswith("delta.inCommitTimestampEnablement")}
    if any("materializedRowIdColumnName" in n for n in plan.notes):  # names generated at commit time
        names = {k: committed.pop(k) for k in list(committed) if k.startswith("delta.rowTracking.materialized")}
        assert names and all(v.startswith(("_row-id-col-", "_row-commit-version-col-")) for v in names.values())
    assert committed == plan.configurationAfter
    # the CLI's reader sees the committed state too
    assert read_protocol_and_metadata(path).protocol == plan.after


@pytest.mark.parametrize("feature", ["deletionVectors", "clustering", "rowTracking", "timestampNtz",
                                     "catalogManaged", "columnMapping", "identityColumns", "allowColumnDefaults"])
def test_planned_add_feature_is_what_the_engine_commits(spark, tmp_path, feature):
    start = Protocol.of(1, 2)
    plan = plan_change(start, {"configuration": {}, "schemaString": SCHEMA}, add_feature=feature)
    path = tmp_path / "t"
    _create(spark, path, start, {})
    if plan.engineRefusal:
        with pytest.raises(DeltalogError) as info:
            _alter(spark, path, {f"delta.feature.{feature}": "supported"})
        assert info.value.errorClass == "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"
        return
    _alter(spark, path, {f"delta.feature.{feature}": "supported"})
    DeltaTable.clearCache(spark)
    assert DeltaTable.forPath(spark, str(path)).protocol().toJsonDict() == plan.after.toJsonDict()


DROPS = [
    (Protocol.of(1, 3), "checkConstraints"),
    (Protocol.of(1, 4), "checkConstraints"),
    (Protocol.of(2, 5), "columnMapping"),
    (Protocol.of(2, 6), "columnMapping"),
    (DV_TABLE, "deletionVectors"),
    (Protocol.of(1, 2).addFeatureSupport("rowTracking"), "rowTracking"),
    (Protocol.of(1, 2).addFeatureSupport("rowTracking"), "domainMetadata"),
    (Protocol.of(1, 2).addFeatureSupport("v2Checkpoint").addFeatureSupport("deletionVectors"), "v2Checkpoint"),
    (Protocol.of(1, 2), "appendOnly"),
    (Protocol.of(1, 2), "deletionVectors"),
    (Protocol.of(1, 2).addFeatureSupport("catalogManaged"), "catalogManaged"),
]


def test_planned_drop_feature_equals_the_jvm_rule(spark):
    cases = [{"name": f"drop {f} from {p.simpleString}", "op": "dropFeatureSupport", "protocol": p.toJsonDict(),
              "feature": f} for p, f in DROPS]
    results = evaluate_protocol_cases(spark, cases)
    for (p, f), jvm in zip(DROPS, results):
        try:
            plan = plan_change(p, None, drop_feature=f)
        except DeltalogError as e:
            assert jvm.get("error") == e.errorClass, (p.simpleString, f, jvm)
            continue
        assert "error" not in jvm, (p.simpleString, f, jvm)
        assert _p(jvm["protocol"]).toJsonDict() == plan.after.toJsonDict(), (p.simpleString, f)


@pytest.mark.parametrize("table", ["delta-rs/table-with-domain-metadata", "delta/table-with-icebegCompatV2Enabled",
                                   "delta-kernel-rs/type-widening", "dat/basic_append/delta"])
def test_delta_table_methods_equal_the_pure_python_answers(spark, table):
    path = str(CONFORMANCE / table)
    dt = DeltaTable.forPath(spark, path)
    state = read_protocol_and_metadata(path)
    pure = explain(state.protocol, state.metadata, table=path, version=state.version)
    assert dt.explainProtocol().toJson() == pure.toJson()
    assert str(dt.explainProtocol()) == str(pure)
    assert dt.compatibility().toJson() == compatibility(state.protocol).toJson()
    assert [c.client.id for c in dt.compatibility(clients=["trino"]).clients] == ["trino"]


# ------------------------------------------------------------------------------ SQL: DESCRIBE PROTOCOL
SQL_TABLES = ["dat/basic_append/delta", "delta-rs/table-with-domain-metadata", "delta/table-with-icebegCompatV2Enabled",
              "delta-kernel-rs/type-widening", "delta-rs/data_err_logs_table_d", "delta-kernel-rs/partition_cm/name"]


def _pair(t):
    return f"({t[0]},{t[1]})" if t else None


@pytest.mark.parametrize("table", SQL_TABLES)
def test_describe_protocol_sql_agrees_with_explain(spark, table):
    path = CONFORMANCE / table
    rows = spark.sql(f"DESCRIBE PROTOCOL '{path}'").collect()
    state = read_protocol_and_metadata(path)
    e = explain(state.protocol, state.metadata)
    assert [r["feature"] for r in rows] == list(e.featureNames)
    for r in rows:
        f = e.feature(r["feature"])
        assert r["type"] == f.kind
        assert r["legacy_version"] == _pair(f.legacyVersion)
        assert r["min_protocol"] == _pair(f.minProtocol)
        assert r["supported_by"].startswith("implied") == f.implicit
        assert (r["requires"] or "") == ",".join(f.requires)
        required_by = sorted(x.source for x in f.reasons if x.kind == "dependency")
        assert (r["required_by"] or "") == ",".join(required_by)
        assert r["droppable"] == f.drop.droppable
        if f.drop.droppable:
            assert r["drop_result"] == f.drop.resultingProtocol.simpleString
        else:
            assert r["drop_result"] == f.drop.errorClass
        assert r["protocol"] == state.protocol.simpleString


def test_describe_protocol_path_table_form_and_other_statements_still_parse(spark):
    path = CONFORMANCE / "delta/table-with-icebegCompatV2Enabled"
    rows = spark.sql(f"DESC PROTOCOL delta.`{path}`").collect()
    assert {r["feature"] for r in rows} == {"appendOnly", "columnMapping", "icebergCompatV2", "invariants"}
    assert spark.sql("SELECT 40 + 2 AS answer").collect()[0]["answer"] == 42
    assert spark.sql("SELECT :x AS v", args={"x": 7}).collect()[0]["v"] == 7  # parameters still reach Spark's parser
    with pytest.raises(Exception) as info:
        spark.sql(f"DESCRIBE PROTOCOL '{path}-missing'").collect()
    # spark.sql surfaces engine errors as py4j errors; deltalog's translator types them
    err = translate_jvm_error(info.value)
    assert isinstance(err, DeltalogError) and err.errorClass == "DELTA_TABLE_NOT_FOUND"
    assert "-missing" in str(err)


# Seeded random combinations of starting protocols and property changes, each really committed.
_STARTS = [Protocol.of(1, 1), Protocol.of(1, 2), Protocol.of(1, 3), Protocol.of(1, 4), Protocol.of(1, 6),
           DV_TABLE, Protocol.of(1, 2).addFeatureSupport("rowTracking"),
           Protocol.of(1, 2).addFeatureSupport("inCommitTimestamp")]
_CHANGES = [("delta.enableDeletionVectors", "true"), ("delta.enableChangeDataFeed", "true"),
            ("delta.appendOnly", "true"), ("delta.appendOnly", "false"), ("delta.constraints.c1", "id > 0"),
            ("delta.checkpointPolicy", "v2"), ("delta.enableRowTracking", "true"),
            ("delta.feature.vacuumProtocolCheck", "supported"), ("delta.feature.checkpointProtection", "supported"),
            ("delta.feature.domainMetadata", "supported"), ("delta.minWriterVersion", "5"),
            ("delta.minReaderVersion", "2"), ("delta.enableTypeWidening", "true"),
            ("delta.feature.v2Checkpoint", "enabled"), ("delta.enableDeletionVectors", None)]


def _random_scenarios(n: int = 16, seed: int = 20261126):
    import random
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        start = rnd.choice(_STARTS)
        changes = dict(rnd.sample(_CHANGES, rnd.randint(1, 3)))
        out.append((f"random-{i}", start, changes))
    return out


@pytest.mark.parametrize("name, start, changes", _random_scenarios(), ids=[s[0] for s in _random_scenarios()])
def test_random_planned_changes_are_what_the_engine_commits(spark, tmp_path, name, start, changes):
    conf = {"delta.enableDeletionVectors": "true"} if start == DV_TABLE else {}
    meta = {"configuration": conf, "schemaString": SCHEMA}
    try:
        plan = plan_change(start, meta, property_changes=changes)
    except DeltalogError as e:
        path = tmp_path / "t"
        _create(spark, path, start, conf)
        with pytest.raises(DeltalogError) as info:
            _alter(spark, path, changes)
        assert info.value.errorClass == e.errorClass
        return
    path = tmp_path / "t"
    _create(spark, path, start, conf)
    if plan.engineRefusal:
        with pytest.raises(DeltalogError) as info:
            _alter(spark, path, changes)
        assert info.value.errorClass == "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"
        return
    _alter(spark, path, changes)
    DeltaTable.clearCache(spark)
    assert DeltaTable.forPath(spark, str(path)).protocol().toJsonDict() == plan.after.toJsonDict(), changes


def test_pure_python_reader_reads_lenient_lines_as_the_engine_does(spark, tmp_path):
    """An unknown action beside the protocol, a metaData key spelled with escapes, file actions
    that mention the names: the pure reader and the engine take the same protocol and metadata;
    a line with two known actions fails both."""
    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    schema = json.dumps({"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]})
    meta = {"id": "lenient", "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
            "partitionColumns": [], "configuration": {}, "createdTime": 1}
    add = {"add": {"path": "protocol", "partitionValues": {}, "size": 1, "modificationTime": 1, "dataChange": True,
                   "stats": "{\"metaData\":1}"}}
    lines0 = [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}, {"metaData": meta}, add]
    (log / "00000000000000000000.json").write_text("\n".join(json.dumps(x) for x in lines0) + "\n")
    newer_meta = json.dumps({"metaData": dict(meta, configuration={"delta.appendOnly": "true"})})
    lines1 = ['{"unknownAction":{"x":1},"protocol":{"minReaderVersion":1,"minWriterVersion":3}}',
              newer_meta.replace('"metaData"', '"\\u006detaData"', 1), json.dumps(add)]
    (log / "00000000000000000001.json").write_text("\n".join(lines1) + "\n")
    path = str(tmp_path / "t")
    DeltaTable.clearCache(spark)
    dt = DeltaTable.forPath(spark, path)
    state = read_protocol_and_metadata(path)
    assert (state.version, state.protocol) == (dt.version(), dt.protocol()) == (1, Protocol(1, 3))
    assert _metadata_key(state.metadata) == _metadata_key(dt.metadata())
    assert dict(state.metadata.configuration) == {"delta.appendOnly": "true"}

    two = '{"commitInfo":{"timestamp":1},"protocol":{"minReaderVersion":1,"minWriterVersion":4}}'
    (log / "00000000000000000002.json").write_text(two + "\n")
    DeltaTable.clearCache(spark)
    with pytest.raises(DeltalogError, match="exactly one top-level key"):
        DeltaTable.forPath(spark, path).protocol()
    with pytest.raises(DeltalogError, match="exactly one top-level key"):
        read_protocol_and_metadata(path)
