"""Hypothesis strategies for protocol cases: random metadata, session defaults and protocols."""
from __future__ import annotations

import json

from hypothesis import strategies as st

from deltalog.features import TableFeatures
from deltalog.protocol import Protocol

FEATURE_NAMES = [f.name for f in TableFeatures.all()]
SD = "spark.databricks.delta.properties.defaults."

BOOL = st.sampled_from(["true"] * 6 + ["false", "TRUE", "False", "yes"])
PROPS = {
    "delta.appendOnly": BOOL,
    "delta.enableChangeDataFeed": BOOL,
    "delta.enableDeletionVectors": BOOL,
    "delta.enableRowTracking": BOOL,
    "delta.enableInCommitTimestamps": BOOL,
    "delta.enableTypeWidening": BOOL,
    "delta.enableVariantShredding": BOOL,
    "delta.enableIcebergCompatV1": BOOL,
    "delta.enableIcebergCompatV2": BOOL,
    "delta.enableIcebergCompatV3": BOOL,
    "delta.enableMaterializePartitionColumnsFeature": BOOL,
    "delta.columnMapping.mode": st.sampled_from(["none", "name", "name", "id", "id", "NAME", "position"]),
    "delta.checkpointPolicy": st.sampled_from(["classic", "v2", "v2", "V2", "v3"]),
    "delta.constraints.c1": st.just("a > 0"),
    "delta.coordinatedCommits.commitCoordinator-preview": st.sampled_from(["", "dynamodb"]),
    "delta.minReaderVersion": st.sampled_from(["1", "2", "3", "4", "x", " 2 ", "+1", "1_0"]),
    "delta.minWriterVersion": st.sampled_from(["1", "2", "3", "4", "5", "6", "7", "8"]),
    "delta.ignoreProtocolDefaults": st.sampled_from(["true", "false"]),
    "delta.logRetentionDuration": st.just("interval 30 days"),
}
FEATURE_PROP = st.tuples(
    st.sampled_from(FEATURE_NAMES + ["noSuchFeature", "DELETIONVECTORS"]),
    st.sampled_from(["supported"] * 6 + ["enabled", "Supported", "disabled"]))

LEAF_TYPES = st.sampled_from(["integer", "string", "long", "timestamp", "timestamp_ntz", "variant",
                              "geometry(OGC:CRS84)", "decimal(10,2)", "date"])
FIELD_METADATA = st.sampled_from([
    {}, {}, {}, {"delta.invariants": "{\"expression\":{\"expression\":\"x > 0\"}}"},
    {"delta.generationExpression": "a + 1"},
    {"delta.identity.start": 1, "delta.identity.step": 1, "delta.identity.allowExplicitInsert": True},
    {"__COLLATIONS": {"s": "ICU.en_US"}}, {"delta.columnMapping.id": 3},
])


def _types():
    return st.recursive(
        LEAF_TYPES,
        lambda inner: st.one_of(
            st.builds(lambda e: {"type": "array", "elementType": e, "containsNull": True}, inner),
            st.builds(lambda k, v: {"type": "map", "keyType": k, "valueType": v, "valueContainsNull": True},
                      LEAF_TYPES, inner),
            st.builds(lambda fs: {"type": "struct", "fields": fs},
                      st.lists(_field(inner), max_size=3)),
        ),
        max_leaves=6)


def _field(types):
    return st.builds(lambda n, t, nullable, md: {"name": n, "type": t, "nullable": nullable, "metadata": md},
                     st.sampled_from(["a", "b", "c", "x", "s"]), types, st.booleans(), FIELD_METADATA)


SCHEMA = st.builds(lambda fs: {"type": "struct", "fields": fs}, st.lists(_field(_types()), max_size=4))


@st.composite
def metadata(draw):
    keys = draw(st.lists(st.sampled_from(sorted(PROPS)), max_size=4, unique=True))
    conf = {k: draw(PROPS[k]) for k in keys}
    for name, status in draw(st.lists(FEATURE_PROP, max_size=1)):
        conf["delta.feature." + name] = status
    schema = draw(SCHEMA)
    return {"configuration": conf, "schemaString": json.dumps(schema, separators=(",", ":"))}


@st.composite
def session_defaults(draw):
    sd = {}
    if draw(st.booleans()):
        sd[SD + "minReaderVersion"] = draw(st.sampled_from(["1", "2", "3"]))
    if draw(st.booleans()):
        sd[SD + "minWriterVersion"] = draw(st.sampled_from(["1", "2", "3", "4", "5", "6", "7"]))
    if draw(st.integers(0, 3)) == 0:
        sd[SD + "feature." + draw(st.sampled_from(FEATURE_NAMES))] = "supported"
    if draw(st.integers(0, 5)) == 0:
        sd[SD + "ignoreProtocolDefaults"] = "true"
    if draw(st.integers(0, 3)) == 0:
        sd[SD + "enableDeletionVectors"] = "true"
    return sd


@st.composite
def protocols(draw):
    """A valid protocol body: a legacy pair or a table-features protocol with random features."""
    if draw(st.booleans()):
        r = draw(st.sampled_from([1, 2]))
        w = draw(st.integers(1, 6))
        return {"minReaderVersion": r, "minWriterVersion": w}
    names = draw(st.lists(st.sampled_from(FEATURE_NAMES), max_size=4, unique=True))
    feats = [TableFeatures.get(n) for n in names]
    needsReader = any(f.isReaderWriterFeature and not f.isLegacyFeature for f in feats) or \
        any(d.isReaderWriterFeature and not d.isLegacyFeature for f in feats for d in f.requiredFeatures)
    r = 3 if needsReader or draw(st.booleans()) else draw(st.sampled_from([1, 2]))
    p = Protocol.of(r, 7)
    for f in feats:
        try:
            p = p.withFeature(f)
        except Exception:
            pass
    body = p.toJsonDict()
    if draw(st.integers(0, 4)) == 0:
        # Feature names match case-insensitively: list one in an unusual case on both sides.
        names = sorted(set(body.get("writerFeatures", [])))
        if names:
            victim = draw(st.sampled_from(names))
            odd = victim.upper()
            for key in ("readerFeatures", "writerFeatures"):
                if key in body:
                    body[key] = sorted(odd if n == victim else n for n in body[key])
    return body


@st.composite
def cases(draw):
    op = draw(st.sampled_from([
        "forNewTable", "forNewTable", "forNewTable", "minProtocolComponentsFromMetadata",
        "requiredMinimumProtocol", "extractAutomaticallyEnabledFeatures",
        "upgradeProtocolFromMetadataForExistingTable", "checkProtocolRequirements",
        "upgradeTableProtocol", "addFeatureSupport", "dropFeatureSupport", "merge", "normalized",
        "denormalized", "checkCanRead", "checkCanWrite", "canUpgradeTo"]))
    case = {"name": "generated", "op": op}
    if op in ("forNewTable", "minProtocolComponentsFromMetadata", "requiredMinimumProtocol",
              "extractAutomaticallyEnabledFeatures", "upgradeProtocolFromMetadataForExistingTable",
              "checkProtocolRequirements"):
        case["metadata"] = draw(metadata())
    if op == "forNewTable":
        case["sessionDefaults"] = draw(session_defaults())
    if op not in ("forNewTable", "minProtocolComponentsFromMetadata", "requiredMinimumProtocol"):
        case["protocol"] = draw(protocols())
    if op == "upgradeTableProtocol":
        case["readerVersion"] = draw(st.integers(1, 4))
        case["writerVersion"] = draw(st.integers(1, 8))
    if op in ("addFeatureSupport", "dropFeatureSupport"):
        case["feature"] = draw(st.sampled_from(FEATURE_NAMES + ["noSuchFeature"]))
    if op == "merge":
        case["others"] = draw(st.lists(protocols(), max_size=2))
    if op == "canUpgradeTo":
        case["to"] = draw(protocols())
    if op in ("checkCanRead", "checkCanWrite"):
        case["client"] = "deltalog"
    return case
