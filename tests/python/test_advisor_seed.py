"""The table-protocol guide's examples (../shared/seeds/003_*.txt, "What triggers a protocol
upgrade" and "Lowest possible protocol"), checked through explain / plan_change / compatibility."""
from __future__ import annotations

from deltalog.advisor import compatibility, explain, plan_change
from deltalog.protocol import Protocol

PLAIN = {"configuration": {}, "schemaString": '{"type":"struct","fields":[{"name":"id","type":"long",'
                                                '"nullable":true,"metadata":{}}]}'}


def test_column_mapping_is_a_reader_writer_feature_that_upgrades_both_protocols():
    # "column mapping is a reader feature and requires upgrading both protocols"
    plan = plan_change(Protocol.of(1, 2), PLAIN, property_changes={"delta.columnMapping.mode": "name"})
    assert plan.after.minReaderVersion >= 2 and plan.after.minWriterVersion >= 5
    assert plan.featuresAdded == ("columnMapping",)
    f = explain(plan.after, {**PLAIN, "configuration": plan.configurationAfter}).feature("columnMapping")
    assert f.kind == "reader-writer" and f.legacyVersion == (2, 5)
    assert any(r.kind == "property" and r.source == "delta.columnMapping.mode" for r in f.reasons)
    # readers without column mapping lose read access (not only writers)
    assert any(a.access == "read" and "columnMapping" in a.missing for a in plan.lostRead)


def test_check_constraints_are_writer_only():
    # "Writer features, such as CHECK constraints, only upgrade the write protocol."
    plan = plan_change(Protocol.of(1, 2), PLAIN, property_changes={"delta.constraints.positive": "id > 0"})
    assert plan.after == Protocol.of(1, 3)
    assert plan.after.minReaderVersion == 1
    assert plan.lostRead == ()
    f = explain(plan.after, {**PLAIN, "configuration": plan.configurationAfter}).feature("checkConstraints")
    assert f.kind == "writer-only" and f.legacyVersion == (1, 3)
    assert "positive" in f.reasons[-1].detail or any("positive" in r.detail for r in f.reasons)


def test_uniform_enables_column_mapping():
    # "enabling UniForm automatically enables column mapping"
    changes = {"delta.enableIcebergCompatV2": "true", "delta.universalFormat.enabledFormats": "iceberg"}
    plan = plan_change(Protocol.of(1, 2), PLAIN, property_changes=changes)
    assert {"columnMapping", "icebergCompatV2"} <= set(plan.featuresAdded)
    e = explain(plan.after, {**PLAIN, "configuration": plan.configurationAfter})
    cm = e.feature("columnMapping")
    assert any(r.kind == "dependency" and r.source == "icebergCompatV2" for r in cm.reasons)
    ice = e.feature("icebergCompatV2")
    assert any(r.source == "delta.universalFormat.enabledFormats" for r in ice.reasons)
    assert ice.requires == ("columnMapping",)
    # column mapping cannot be dropped while UniForm needs it
    assert not cm.drop.droppable and "icebergCompatV2" in cm.drop.how


def test_liquid_clustering_needs_domain_metadata_and_checkpoint_v2():
    # "enabling liquid clustering automatically enables checkpoint V2"; clustering requires domainMetadata
    plan = plan_change(Protocol.of(1, 2), PLAIN, add_feature="clustering")
    assert {"clustering", "domainMetadata"} <= set(plan.featuresAdded)
    assert any("v2Checkpoint" in n for n in plan.notes)
    clustered = Protocol.of(1, 2).addFeatureSupport("clustering").addFeatureSupport("v2Checkpoint")
    e = explain(clustered, {**PLAIN, "configuration": {"delta.checkpointPolicy": "v2"}})
    assert any(r.kind == "dependency" and r.source == "clustering" for r in e.feature("domainMetadata").reasons)
    v2 = e.feature("v2Checkpoint")
    assert {"property", "companion"} <= set(v2.reasonKinds())
    assert any(r.source == "clustering" for r in v2.reasons if r.kind == "companion")
    assert v2.kind == "reader-writer"
    assert e.feature("clustering").active


def test_deletion_vectors_by_property_make_legacy_features_explicit():
    # digest §5.5: (1,2) + deletionVectors => (3,7,[deletionVectors],[appendOnly,invariants,deletionVectors])
    plan = plan_change(Protocol.of(1, 2), PLAIN, property_changes={"delta.enableDeletionVectors": "true"})
    assert plan.after.toJsonDict() == {"minReaderVersion": 3, "minWriterVersion": 7,
                                       "readerFeatures": ["deletionVectors"],
                                       "writerFeatures": ["appendOnly", "deletionVectors", "invariants"]}


def test_turning_a_feature_off_does_not_downgrade():
    # "Turning off a table feature does not result in a protocol downgrade"
    p = Protocol.of(1, 2).addFeatureSupport("deletionVectors")
    meta = {**PLAIN, "configuration": {"delta.enableDeletionVectors": "true"}}
    plan = plan_change(p, meta, property_changes={"delta.enableDeletionVectors": "false"})
    assert plan.after == p and not plan.changed
    assert any("DROP FEATURE deletionVectors" in n for n in plan.notes)
    drop = plan_change(p, {**PLAIN, "configuration": {"delta.enableDeletionVectors": "false"}},
                       drop_feature="deletionVectors")
    assert drop.after == Protocol.of(1, 2)
    assert drop.featuresRemoved == ("deletionVectors",)


def test_lowest_possible_protocol_only_lowers_versions():
    # "Delta Lake resolves the table protocol to the lowest version that supports all enabled features"
    p = Protocol.fromJsonDict({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": [],
                               "writerFeatures": ["appendOnly", "invariants", "checkConstraints"]})
    e = explain(p, None)
    low = e.lowestEquivalentProtocol
    assert low == Protocol.of(1, 3)
    assert low.minReaderVersion <= p.minReaderVersion and low.minWriterVersion <= p.minWriterVersion
    assert {f.name for f in low.implicitlyAndExplicitlySupportedFeatures} == set(e.featureNames)
    # lower protocols are readable by more clients
    before, after = compatibility(p), compatibility(low)
    readers_before = sum(bool(c.latest.read.ok) for c in before.clients)
    readers_after = sum(bool(c.latest.read.ok) for c in after.clients)
    assert readers_after >= readers_before
