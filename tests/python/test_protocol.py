"""Unit tests of the pure-Python protocol model beyond the shared vectors."""
from __future__ import annotations

import pytest

from deltalog.exceptions import (
    ActionParseError,
    DeltalogAssertionError,
    DeltalogError,
    InvalidProtocolVersionError,
    ProtocolDowngradeError,
    TableFeatureError,
    UnsupportedTableFeatureError,
)
from deltalog.features import TableFeatures, dependencyClosure, registryAsJson
from deltalog.protocol import ClientCapabilities, Protocol, filterProtocolPropsFromTableProps

# (name, reader-writer?, legacy min (r, w), droppable?) per the Delta protocol's feature list.
REGISTRY = [
    ("appendOnly", False, (0, 2), False), ("invariants", False, (0, 2), False),
    ("checkConstraints", False, (0, 3), True), ("changeDataFeed", False, (0, 4), False),
    ("generatedColumns", False, (0, 4), False), ("columnMapping", True, (2, 5), True),
    ("identityColumns", False, (0, 6), False), ("deletionVectors", True, (3, 7), True),
    ("rowTracking", False, (0, 7), True), ("domainMetadata", False, (0, 7), True),
    ("timestampNtz", True, (3, 7), False), ("v2Checkpoint", True, (3, 7), True),
    ("icebergCompatV1", False, (0, 7), False), ("icebergCompatV2", False, (0, 7), False),
    ("clustering", False, (0, 7), False), ("vacuumProtocolCheck", True, (3, 7), True),
    ("typeWidening", True, (3, 7), True), ("typeWidening-preview", True, (3, 7), True),
    ("variantType", True, (3, 7), False), ("variantShredding", True, (3, 7), False),
    ("inCommitTimestamp", False, (0, 7), True), ("allowColumnDefaults", False, (0, 7), False),
    ("catalogManaged", True, (3, 7), False), ("coordinatedCommits-preview", False, (0, 7), True),
    ("checkpointProtection", False, (0, 7), True), ("materializePartitionColumns", False, (0, 7), True),
    ("geospatial", True, (3, 7), True), ("collations", False, (0, 7), False),
]


@pytest.mark.parametrize("name,rw,versions,droppable", REGISTRY)
def test_registry_entry(name, rw, versions, droppable):
    f = TableFeatures.byName(name)
    assert f is not None and f.name == name
    assert f.isReaderWriterFeature == rw
    assert (f.minReaderVersion, f.minWriterVersion) == versions
    assert f.isLegacyFeature == (versions[1] < 7)
    assert f.isRemovable == droppable
    assert TableFeatures.byName(name.upper()) is f


def test_history_protection_is_for_droppable_reader_writer_features():
    for f in TableFeatures.all():
        if f.requiresHistoryProtection:
            assert f.isRemovable and f.isReaderWriterFeature


def test_registry_json_shape():
    rows = {r["name"]: r for r in registryAsJson()}
    assert rows["rowTracking"]["requiredFeatures"] == ["domainMetadata"]
    assert rows["deletionVectors"]["requiresHistoryProtection"] is True
    assert rows["timestampNtz"]["autoUpdateExisting"] is False


def test_seed_examples():
    # Column mapping is a reader feature: reader version 2 (legacy) or listed in readerFeatures.
    cm = Protocol.forNewTable({"configuration": {"delta.columnMapping.mode": "name",
                                                 "delta.enableDeletionVectors": "true"}})
    assert "columnMapping" in cm.readerFeatures
    # CHECK constraints are writer-only.
    cc = Protocol.forNewTable({"configuration": {"delta.constraints.c": "x > 0"}})
    assert (cc.minReaderVersion, cc.minWriterVersion) == (1, 3)
    # UniForm enables column mapping.
    uni = Protocol.forNewTable({"configuration": {"delta.enableIcebergCompatV2": "true",
                                                  "delta.universalFormat.enabledFormats": "iceberg"}})
    assert uni.isFeatureSupported(TableFeatures.get("columnMapping"))
    # Liquid clustering needs domain metadata (and, on Databricks, v2 checkpoints).
    lc = Protocol.forNewTable({"configuration": {"delta.feature.clustering": "supported",
                                                 "delta.checkpointPolicy": "v2"}})
    assert {"clustering", "domainMetadata", "v2Checkpoint"} <= lc.writerFeatures
    # The seed's demo: an append-only table is writer 2.
    ao = Protocol.forNewTable({"configuration": {"delta.appendOnly": "true"}})
    assert (ao.minReaderVersion, ao.minWriterVersion) == (1, 2)


def test_dependency_closure_is_transitive():
    names = {f.name for f in dependencyClosure([TableFeatures.get("icebergWriterCompatV3")])}
    assert names == {"icebergWriterCompatV3", "icebergCompatV3", "columnMapping", "rowTracking",
                     "domainMetadata"}


def test_protocol_json_round_trip_keeps_unknown_fields_and_future_versions():
    body = {"minReaderVersion": 99, "minWriterVersion": 7, "readerFeatures": [], "writerFeatures": [],
            "futureField": {"x": 1}}
    p = Protocol.fromJsonDict(body)
    assert p.toJsonDict() == body
    assert p == Protocol(99, 7, frozenset(), frozenset())  # unknown fields do not affect equality
    with pytest.raises(DeltalogError) as info:
        p.checkCanRead(table="/t")
    assert "99" in str(info.value)


def test_simple_string():
    assert Protocol.of(1, 2).simpleString == "1,2"
    assert Protocol(2, 7, None, frozenset({"columnMapping"})).simpleString == "2,7,None,[columnMapping]"
    assert str(Protocol.of(3, 7)) == "Protocol(3,7,[],[])"


def test_invalid_versions():
    with pytest.raises(InvalidProtocolVersionError):
        Protocol.of(4, 7)
    with pytest.raises(InvalidProtocolVersionError) as info:
        Protocol.of(3, 6)
    assert info.value.errorClass == "DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE"
    with pytest.raises(InvalidProtocolVersionError):
        Protocol(1, 7, None, None)  # writer 7 needs a writerFeatures list


def test_from_json_version_errors_name_the_field():
    for body, fieldName in (({"minReaderVersion": 0, "minWriterVersion": 2}, "protocol.minReaderVersion"),
                            ({"minReaderVersion": 1, "minWriterVersion": 0}, "protocol.minWriterVersion"),
                            ({"minReaderVersion": 5, "minWriterVersion": 2}, "protocol.minReaderVersion")):
        with pytest.raises(ActionParseError) as info:
            Protocol.fromJsonDict(body)
        assert info.value.field == fieldName, body


def test_unsupported_message_names_versions_and_features_together():
    p = Protocol.fromJsonDict({"minReaderVersion": 5, "minWriterVersion": 7, "readerFeatures": ["blahabl"],
                               "writerFeatures": ["blahabl"]})
    with pytest.raises(UnsupportedTableFeatureError) as info:
        p.checkCanRead(table="/t")
    msg = str(info.value)
    assert "needs protocol versions (5,7) above what this client supports (3,7) and reader feature(s) " \
           "this client does not support: blahabl" in msg and info.value.unsupportedFeatures == ["blahabl"]
    w8 = Protocol.fromJsonDict({"minReaderVersion": 1, "minWriterVersion": 8, "writerFeatures": []})
    w8.checkCanRead(table="/t")  # readers check reader versions only
    with pytest.raises(UnsupportedTableFeatureError) as info:
        w8.checkCanWrite(table="/t")
    assert "(1,8) above what this client supports (3,7). A newer Delta client" in str(info.value)


def test_assert_can_upgrade_to_names_lost_features():
    with pytest.raises(ProtocolDowngradeError) as info:
        Protocol.of(1, 3).assertCanUpgradeTo(Protocol.of(1, 2))
    assert "checkConstraints" in str(info.value)
    Protocol.of(1, 2).assertCanUpgradeTo(Protocol.of(1, 3))


def test_seed_assertion_messages():
    with pytest.raises(DeltalogAssertionError, match=r"Should not have the protocol version "
                       r"\(delta.minWriterVersion\) as part of table properties"):
        Protocol.checkProtocolRequirements({"configuration": {"delta.minWriterVersion": "3"}}, Protocol.of(1, 2))
    with pytest.raises(AssertionError):  # also an AssertionError, as in delta-spark
        Protocol.checkProtocolRequirements({"configuration": {"delta.ignoreProtocolDefaults": "true"}},
                                           Protocol.of(1, 2))


def test_unknown_feature_error_lists_known_features():
    with pytest.raises(TableFeatureError) as info:
        Protocol.of(1, 2).addFeatureSupport("deletionVector")
    assert "deletionVectors" in str(info.value)


def test_write_check_names_missing_features_for_another_client():
    old = ClientCapabilities(1, 2, frozenset(), frozenset({"appendOnly", "invariants"}))
    with pytest.raises(DeltalogError) as info:
        Protocol.of(1, 4).checkCanWrite(old, table="s3://b/t")
    assert info.value.unsupportedFeatures == ["changeDataFeed", "checkConstraints", "generatedColumns"]
    assert "s3://b/t" in str(info.value)


def test_filter_protocol_props():
    props = {"delta.minReaderVersion": "1", "delta.feature.x": "supported",
             "delta.ignoreProtocolDefaults": "true", "delta.appendOnly": "true"}
    assert filterProtocolPropsFromTableProps(props) == {"delta.appendOnly": "true"}
