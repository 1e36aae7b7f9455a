"""explain(): every feature of the registry, checked against the protocol digest
(../shared/docs/delta-protocol.md §5.1-5.2) and the table-protocol guide in ../shared/seeds/,
not against the registry itself: type (reader-writer / writer-only), the legacy version that
implies it, whether DROP FEATURE removes it, and the property or column that enables it."""
from __future__ import annotations

import json

import pytest

from deltalog.advisor import explain
from deltalog.exceptions import InvalidTablePropertyError
from deltalog.features import TableFeatures
from deltalog.protocol import Protocol

# name -> (type, legacy (reader, writer) pair or None, removable by DROP FEATURE), per the digest.
SPEC = {
    "appendOnly": ("W", (1, 2), False),
    "invariants": ("W", (1, 2), False),
    "checkConstraints": ("W", (1, 3), True),
    "changeDataFeed": ("W", (1, 4), False),
    "generatedColumns": ("W", (1, 4), False),
    "columnMapping": ("RW", (2, 5), True),
    "identityColumns": ("W", (1, 6), False),
    "deletionVectors": ("RW", None, True),
    "rowTracking": ("W", None, True),
    "domainMetadata": ("W", None, True),
    "timestampNtz": ("RW", None, False),
    "v2Checkpoint": ("RW", None, True),
    "icebergCompatV1": ("W", None, False),
    "icebergCompatV2": ("W", None, False),
    "icebergCompatV3": ("W", None, False),
    "icebergWriterCompatV1": ("W", None, False),
    "icebergWriterCompatV3": ("W", None, False),
    "clustering": ("W", None, False),
    "vacuumProtocolCheck": ("RW", None, True),
    "typeWidening": ("RW", None, True),
    "typeWidening-preview": ("RW", None, True),
    "variantType": ("RW", None, False),
    "variantType-preview": ("RW", None, False),
    "variantShredding": ("RW", None, False),
    "variantShredding-preview": ("RW", None, False),
    "inCommitTimestamp": ("W", None, True),
    "allowColumnDefaults": ("W", None, False),
    "catalogManaged": ("RW", None, False),
    "catalogOwned-preview": ("RW", None, False),
    "coordinatedCommits-preview": ("W", None, True),
    "checkpointProtection": ("W", None, True),
    "materializePartitionColumns": ("W", None, True),
    "collations": ("W", None, False),
    "collations-preview": ("W", None, False),
    "geospatial": ("RW", None, True),
    "geospatial-dev": ("RW", None, True),
    "redirectReaderWriter-preview": ("RW", None, True),
    "redirectWriterOnly-preview": ("W", None, True),
    "timestampNanos": ("RW", None, False),
    "adaptiveMetadata-preview": ("RW", None, False),
}


def _schema(*fields):
    return json.dumps({"type": "struct", "fields": list(fields)})


def _field(name, type_="integer", nullable=True, **metadata):
    return {"name": name, "type": type_, "nullable": nullable, "metadata": metadata}


# Enabling metadata per the digest's "Enabled / auto-added when" column: (configuration, schema
# fields, the property key or column path the explanation must name).
ENABLE = {
    "appendOnly": ({"delta.appendOnly": "true"}, [], "delta.appendOnly"),
    "invariants": ({}, [_field("a", **{"delta.invariants": '{"expression":{"expression":"a > 0"}}'})], "a"),
    "checkConstraints": ({"delta.constraints.positive": "id > 0"}, [], "delta.constraints.positive"),
    "changeDataFeed": ({"delta.enableChangeDataFeed": "true"}, [], "delta.enableChangeDataFeed"),
    "generatedColumns": ({}, [_field("a"), _field("b", **{"delta.generationExpression": "a + 1"})], "b"),
    "columnMapping": ({"delta.columnMapping.mode": "name"}, [], "delta.columnMapping.mode"),
    "identityColumns": ({}, [_field("id", "long", False, **{"delta.identity.start": 1, "delta.identity.step": 1,
                                                            "delta.identity.allowExplicitInsert": False})], "id"),
    "deletionVectors": ({"delta.enableDeletionVectors": "true"}, [], "delta.enableDeletionVectors"),
    "rowTracking": ({"delta.enableRowTracking": "true"}, [], "delta.enableRowTracking"),
    "timestampNtz": ({}, [_field("s", {"type": "struct", "fields": [_field("ts", "timestamp_ntz")]})], "s.ts"),
    "v2Checkpoint": ({"delta.checkpointPolicy": "v2"}, [], "delta.checkpointPolicy"),
    "icebergCompatV1": ({"delta.enableIcebergCompatV1": "true"}, [], "delta.enableIcebergCompatV1"),
    "icebergCompatV2": ({"delta.enableIcebergCompatV2": "true"}, [], "delta.enableIcebergCompatV2"),
    "icebergCompatV3": ({"delta.enableIcebergCompatV3": "true"}, [], "delta.enableIcebergCompatV3"),
    "icebergWriterCompatV1": ({"delta.enableIcebergWriterCompatV1": "true"}, [], "delta.enableIcebergWriterCompatV1"),
    "icebergWriterCompatV3": ({"delta.enableIcebergWriterCompatV3": "true"}, [], "delta.enableIcebergWriterCompatV3"),
    "typeWidening": ({"delta.enableTypeWidening": "true"}, [], "delta.enableTypeWidening"),
    "variantType": ({}, [_field("v", {"type": "array", "elementType": "variant", "containsNull": True})], "v.element"),
    "variantShredding": ({"delta.enableVariantShredding": "true"}, [], "delta.enableVariantShredding"),
    "inCommitTimestamp": ({"delta.enableInCommitTimestamps": "true"}, [], "delta.enableInCommitTimestamps"),
    "coordinatedCommits-preview": ({"delta.coordinatedCommits.commitCoordinator-preview": "dynamodb"}, [],
                                   "delta.coordinatedCommits.commitCoordinator-preview"),
    "materializePartitionColumns": ({"delta.enableMaterializePartitionColumnsFeature": "true"}, [],
                                    "delta.enableMaterializePartitionColumnsFeature"),
    "collations": ({}, [_field("name", "string", **{"__COLLATIONS": {"name": "spark.UTF8_LCASE"}})], "name"),
    "geospatial": ({}, [_field("g", "geometry(OGC:CRS84)")], "g"),
}


def test_spec_covers_every_registered_feature():
    assert {f.name for f in TableFeatures.all()} == set(SPEC)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_every_feature_is_explained(name):
    kind, legacy, removable = SPEC[name]
    if name in ENABLE:
        conf, fields, _ = ENABLE[name]
        metadata = {"configuration": conf, "schemaString": _schema(*fields)}
        p = Protocol.forNewTable({**metadata, "configuration": {**conf, "delta.ignoreProtocolDefaults": "true"}})
    else:
        metadata = {"configuration": {}, "schemaString": _schema()}
        p = Protocol.of(1, 1).addFeatureSupport(name)
    e = explain(p, metadata)
    f = e.feature(name)
    assert f.known
    assert f.kind == ("reader-writer" if kind == "RW" else "writer-only")
    assert f.legacyVersion == legacy
    assert f.minProtocol == (legacy if legacy else ((3, 7) if kind == "RW" else (1, 7)))
    assert f.reasons, f"{name}: no reason given"
    assert f.drop.droppable == removable, f.drop.how
    if removable:
        assert name not in {x.name for x in f.drop.resultingProtocol.implicitlyAndExplicitlySupportedFeatures}
    assert name in str(e)
    # every feature the protocol supports is named, nothing else
    supported = {x.name for x in p.implicitlyAndExplicitlySupportedFeatures}
    assert set(e.featureNames) == supported


@pytest.mark.parametrize("name", sorted(ENABLE))
def test_enabling_property_or_column_is_named(name):
    conf, fields, source = ENABLE[name]
    metadata = {"configuration": conf, "schemaString": _schema(*fields)}
    p = Protocol.forNewTable(metadata)
    f = explain(p, metadata).feature(name)
    assert f.active
    hits = [r for r in f.reasons if r.kind in ("property", "schema") and r.source == source]
    assert hits, f"{name}: reasons {[str(r) for r in f.reasons]} do not name {source}"


@pytest.mark.parametrize("name", sorted(n for n, (_, _, _) in SPEC.items()
                                        if TableFeatures.get(n).requiredFeatureNames))
def test_dependencies_are_explained_as_required_by(name):
    p = Protocol.of(1, 1).addFeatureSupport(name)
    e = explain(p, {"configuration": {}})
    for dep in TableFeatures.get(name).requiredFeatureNames:
        reasons = e.feature(dep).reasons
        assert any(r.kind == "dependency" and r.source == name for r in reasons), [str(r) for r in reasons]
        # a feature something else needs cannot be dropped before its dependent
        assert not e.feature(dep).drop.droppable
        if SPEC[dep][2]:
            assert e.feature(dep).drop.errorClass == "DELTA_FEATURE_DROP_DEPENDENT_FEATURE"
            assert name in e.feature(dep).drop.how


def test_legacy_features_are_implied_by_versions():
    e = explain(Protocol.of(2, 6), None)
    # (2,6) implies all seven legacy features (digest §5.1)
    assert set(e.featureNames) == {"appendOnly", "invariants", "checkConstraints", "changeDataFeed",
                                   "generatedColumns", "columnMapping", "identityColumns"}
    for f in e.features:
        assert f.implicit and f.reasons[0].kind == "legacy-version"
    assert not e.feature("appendOnly").drop.droppable
    assert "writer version 6" in e.feature("appendOnly").drop.how


def test_supported_but_unused_features_and_lowest_protocols():
    # (1,7) with changeDataFeed listed but the property turned off again
    p = Protocol.fromJsonDict({"minReaderVersion": 1, "minWriterVersion": 7,
                               "writerFeatures": ["appendOnly", "changeDataFeed", "invariants"]})
    e = explain(p, {"configuration": {"delta.enableChangeDataFeed": "false"}})
    cdf = e.feature("changeDataFeed")
    assert not cdf.active and cdf.reasons[-1].kind == "listed"
    assert "changeDataFeed" in e.unusedFeatures
    assert e.lowestProtocolForMetadata == Protocol.of(1, 1)
    # the same feature set has no lower form: (1,4) would also imply checkConstraints
    assert e.lowestEquivalentProtocol == p


def test_lowest_equivalent_protocol_normalizes_a_legacy_set():
    # digest §5.5: (1,7,[appendOnly,invariants,checkConstraints]) is written as (1,3)
    p = Protocol.fromJsonDict({"minReaderVersion": 1, "minWriterVersion": 7,
                               "writerFeatures": ["appendOnly", "checkConstraints", "invariants"]})
    assert explain(p, None).lowestEquivalentProtocol == Protocol.of(1, 3)


def test_unknown_feature_names_are_explained_not_dropped():
    p = Protocol.fromJsonDict({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["liquid2"],
                               "writerFeatures": ["liquid2", "appendOnly"]})
    e = explain(p, None)
    f = e.feature("liquid2")
    assert not f.known and f.kind == "unknown" and f.readerWriter
    assert not f.drop.droppable
    assert any("liquid2" in w for w in e.warnings)


def test_invalid_metadata_is_a_typed_error():
    with pytest.raises(InvalidTablePropertyError) as info:
        explain(Protocol.of(1, 2), {"configuration": {"delta.appendOnly": "yes"}})
    assert "delta.appendOnly" in str(info.value)


def test_json_form_round_trips_through_json():
    conf, fields, _ = ENABLE["identityColumns"]
    metadata = {"configuration": conf, "schemaString": _schema(*fields)}
    e = explain(Protocol.forNewTable(metadata), metadata, table="/t", version=3)
    doc = json.loads(json.dumps(e.toJson()))
    assert doc["table"] == "/t" and doc["version"] == 3
    assert {f["name"] for f in doc["features"]} == set(e.featureNames)
