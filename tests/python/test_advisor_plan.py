"""plan_change(): resulting protocols per the protocol digest (§5.5, §5.8) and refusals with
typed errors. (Python-vs-JVM equality of planned protocols is in test_advisor_jvm.py.)"""
from __future__ import annotations

import json

import pytest

from deltalog.advisor import parse_property_changes, plan_change
from deltalog.exceptions import (
    InvalidProtocolVersionError,
    InvalidTablePropertyError,
    TableFeatureError,
)
from deltalog.protocol import Protocol

META = {"configuration": {}, "schemaString": '{"type":"struct","fields":[{"name":"id","type":"long",'
                                             '"nullable":true,"metadata":{}}]}'}
NTZ_META = {"configuration": {}, "schemaString": '{"type":"struct","fields":[{"name":"ts","type":"timestamp_ntz",'
                                                 '"nullable":true,"metadata":{}}]}'}


def test_exactly_one_change_is_planned():
    with pytest.raises(ValueError):
        plan_change(Protocol.of(1, 2), META)
    with pytest.raises(ValueError):
        plan_change(Protocol.of(1, 2), META, add_feature="clustering", drop_feature="checkConstraints")


def test_dependencies_are_added_transitively():
    # digest §5.5: adding rowTracking also adds domainMetadata
    plan = plan_change(Protocol.of(1, 2), META, property_changes={"delta.enableRowTracking": "true"})
    assert set(plan.featuresAdded) == {"rowTracking", "domainMetadata"}
    assert plan.after.minReaderVersion == 1  # writer-only features keep reader 1


def test_version_properties_upgrade_and_never_downgrade():
    up = plan_change(Protocol.of(1, 2), META, property_changes={"delta.minWriterVersion": "4"})
    assert up.after == Protocol.of(1, 4)
    down = plan_change(Protocol.of(1, 4), META, property_changes={"delta.minWriterVersion": "2"})
    assert down.after == Protocol.of(1, 4) and not down.changed
    assert "delta.minWriterVersion" not in down.configurationAfter  # protocol properties are not persisted


def test_adding_a_supported_feature_is_a_no_op():
    p = Protocol.of(1, 2).addFeatureSupport("deletionVectors")
    plan = plan_change(p, META, add_feature="deletionVectors")
    assert plan.after == p and plan.featuresAdded == () and plan.accessChanges == ()


def test_feature_supported_but_not_enabled_note():
    plan = plan_change(Protocol.of(1, 2), META, add_feature="deletionVectors")
    assert "deletionVectors" in plan.featuresAdded
    assert any("delta.enableDeletionVectors" in n for n in plan.notes)


def test_drop_check_constraints_lowers_the_legacy_version_and_lists_constraints_to_drop():
    meta = {**META, "configuration": {"delta.constraints.positive": "id > 0"}}
    plan = plan_change(Protocol.of(1, 3), meta, drop_feature="checkConstraints")
    assert plan.after == Protocol.of(1, 2)
    assert plan.featuresRemoved == ("checkConstraints",)
    assert "positive" in plan.steps[0]
    # from (1,4) the remaining set is not a legacy set: explicit writer features (digest §5.5 normalization)
    plan4 = plan_change(Protocol.of(1, 4), META, drop_feature="checkConstraints")
    assert plan4.after.toJsonDict() == {"minReaderVersion": 1, "minWriterVersion": 7,
                                        "writerFeatures": ["appendOnly", "changeDataFeed", "generatedColumns",
                                                           "invariants"]}


def test_dropping_a_reader_writer_feature_mentions_history_protection_and_regains_readers():
    p = Protocol.of(1, 2).addFeatureSupport("deletionVectors")
    plan = plan_change(p, META, drop_feature="deletionVectors")
    assert plan.after == Protocol.of(1, 2)
    assert any("checkpointProtection" in n for n in plan.notes)
    gained = [a for a in plan.accessChanges if not a.lost and a.access == "read"]
    assert any(a.client == "deltalake-pyarrow" for a in gained)


@pytest.mark.parametrize("kwargs, error, error_class, mention", [
    ({"drop_feature": "appendOnly"}, TableFeatureError, "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE", "appendOnly"),
    ({"drop_feature": "deletionVectors"}, TableFeatureError, "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT", "deletionVectors"),
    ({"drop_feature": "noSuchFeature"}, TableFeatureError, "DELTA_UNSUPPORTED_FEATURES_IN_CONFIG", "noSuchFeature"),
    ({"add_feature": "noSuchFeature"}, TableFeatureError, "DELTA_UNSUPPORTED_FEATURES_IN_CONFIG", "noSuchFeature"),
    ({"property_changes": {"delta.feature.deletionVectors": "disabled"}}, TableFeatureError,
     "DELTA_UNSUPPORTED_FEATURE_STATUS", "delta.feature.deletionVectors"),
    ({"property_changes": {"delta.enableDeletionVectors": "yes"}}, InvalidTablePropertyError,
     "DELTA_INVALID_TABLE_PROPERTY_VALUE", "delta.enableDeletionVectors"),
    ({"property_changes": {"delta.minWriterVersion": "seven"}}, InvalidTablePropertyError,
     "DELTA_PROTOCOL_PROPERTY_NOT_INT", "delta.minWriterVersion"),
    ({"property_changes": {"delta.minReaderVersion": "3", "delta.minWriterVersion": "5"}},
     InvalidProtocolVersionError, "DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE", "(3,5)"),
])
def test_refused_changes_raise_typed_errors_naming_the_culprit(kwargs, error, error_class, mention):
    with pytest.raises(error) as info:
        plan_change(Protocol.of(1, 2), META, **kwargs)
    assert info.value.errorClass == error_class
    assert mention in str(info.value)


def test_timestamp_ntz_on_an_existing_table_needs_manual_enablement():
    # digest §5.2: timestampNtz is auto-added for new tables only
    with pytest.raises(TableFeatureError) as info:
        plan_change(Protocol.of(1, 2), NTZ_META, property_changes={"delta.appendOnly": "false"})
    assert info.value.errorClass == "DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT"
    assert "delta.feature.timestampNtz" in str(info.value)
    ok = plan_change(Protocol.of(1, 2), NTZ_META, add_feature="timestampNtz")
    assert "timestampNtz" in ok.featuresAdded


def test_parse_property_changes():
    assert parse_property_changes("delta.enableDeletionVectors=true, delta.appendOnly = 'false'") == \
        {"delta.enableDeletionVectors": "true", "delta.appendOnly": "false"}
    assert parse_property_changes("!delta.enableChangeDataFeed; delta.x=") == \
        {"delta.enableChangeDataFeed": None, "delta.x": None}
    with pytest.raises(InvalidTablePropertyError) as info:
        parse_property_changes("delta.enableDeletionVectors")
    assert "key=value" in str(info.value)


def test_plan_text_and_json():
    plan = plan_change(Protocol.of(1, 2), META, property_changes={"delta.enableDeletionVectors": "true"})
    text = str(plan)
    assert "SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')" in text
    assert "loses read access" in text
    doc = json.loads(json.dumps(plan.toJson()))
    assert doc["after"]["readerFeatures"] == ["deletionVectors"] and doc["changed"]
