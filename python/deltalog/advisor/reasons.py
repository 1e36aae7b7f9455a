"""Why a table feature is in a table's protocol: the evidence in the metadata.

The *decision* whether metadata needs a feature is the registry's
(``TableFeature.metadataRequiresFeatureToBeEnabled``, the same predicate ``forNewTable`` and the
upgrade rules use); this module only names the property or the schema fields behind it, so a
user can see *which* column or property to change.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from deltalog.features import MetadataView, TableFeature, TableFeatures

__all__ = ["Reason", "metadata_reasons", "PROPERTY_KEYS", "PREVIEW_OF", "SCHEMA_FEATURES"]


@dataclass(frozen=True)
class Reason:
    """One reason a feature is in the protocol.

    ``kind``: ``property`` (a table property enables it), ``schema`` (a column needs it),
    ``dependency`` (another supported feature requires it), ``legacy-version`` (implied by the
    protocol's integer versions), ``statement`` (enabled by a SQL clause, e.g. CLUSTER BY),
    ``companion`` (enabled together with another feature by some runtimes) or ``listed``
    (named in the protocol although nothing in the metadata uses it). ``source`` is the property
    key, column path or feature name the reason is about.
    """

    kind: str
    detail: str
    source: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"

    def toJson(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"kind": self.kind, "detail": self.detail}
        if self.source is not None:
            d["source"] = self.source
        return d


# Features enabled by one table property (the key the registry's predicate reads).
PROPERTY_KEYS: Dict[str, str] = {
    "appendOnly": "delta.appendOnly",
    "changeDataFeed": "delta.enableChangeDataFeed",
    "columnMapping": "delta.columnMapping.mode",
    "deletionVectors": "delta.enableDeletionVectors",
    "rowTracking": "delta.enableRowTracking",
    "v2Checkpoint": "delta.checkpointPolicy",
    "icebergCompatV1": "delta.enableIcebergCompatV1",
    "icebergCompatV2": "delta.enableIcebergCompatV2",
    "icebergCompatV3": "delta.enableIcebergCompatV3",
    "icebergWriterCompatV1": "delta.enableIcebergWriterCompatV1",
    "icebergWriterCompatV3": "delta.enableIcebergWriterCompatV3",
    "typeWidening": "delta.enableTypeWidening",
    "variantShredding": "delta.enableVariantShredding",
    "inCommitTimestamp": "delta.enableInCommitTimestamps",
    "coordinatedCommits-preview": "delta.coordinatedCommits.commitCoordinator-preview",
    "materializePartitionColumns": "delta.enableMaterializePartitionColumnsFeature",
}
# Preview / dev names: their metadata evidence is the released feature's.
PREVIEW_OF: Dict[str, str] = {
    "typeWidening-preview": "typeWidening",
    "variantType-preview": "variantType",
    "variantShredding-preview": "variantShredding",
    "geospatial-dev": "geospatial",
    "collations-preview": "collations",
}
SCHEMA_FEATURES = ("invariants", "generatedColumns", "identityColumns", "timestampNtz", "variantType",
                   "collations", "geospatial")


def _schema(m: MetadataView) -> Any:
    m.topLevelFields()  # validates the schema (raises InvalidTablePropertyError)
    return m._schema()


def _walk(schema: Any) -> Iterator[Tuple[str, dict, bool, int]]:
    """(dotted path, field, reached through structs only, depth) for every field."""
    def visit(t: Any, prefix: str, structs_only: bool, depth: int) -> Iterator[Tuple[str, dict, bool, int]]:
        if not isinstance(t, dict):
            return
        kind = t.get("type")
        if kind == "struct":
            for f in t.get("fields", []):
                if isinstance(f, dict):
                    path = f"{prefix}.{f.get('name')}" if prefix else str(f.get("name"))
                    yield path, f, structs_only, depth
                    yield from visit(f.get("type"), path, structs_only, depth + 1)
        elif kind == "array":
            yield from visit(t.get("elementType"), prefix + ".element", False, depth + 1)
        elif kind == "map":
            yield from visit(t.get("keyType"), prefix + ".key", False, depth + 1)
            yield from visit(t.get("valueType"), prefix + ".value", False, depth + 1)
    yield from visit(schema, "", True, 0)


def _types(t: Any, path: str) -> Iterator[Tuple[str, str]]:
    """(path, primitive type name) for every primitive type inside ``t``."""
    if isinstance(t, str):
        yield path, t
    elif isinstance(t, dict):
        kind = t.get("type")
        if kind == "struct":
            for f in t.get("fields", []):
                if isinstance(f, dict):
                    yield from _types(f.get("type"), f"{path}.{f.get('name')}" if path else str(f.get("name")))
        elif kind == "array":
            yield from _types(t.get("elementType"), path + ".element")
        elif kind == "map":
            yield from _types(t.get("keyType"), path + ".key")
            yield from _types(t.get("valueType"), path + ".value")


def _meta(f: dict) -> dict:
    m = f.get("metadata")
    return m if isinstance(m, dict) else {}


def _schema_reasons(name: str, m: MetadataView) -> List[Reason]:
    schema = _schema(m)
    out: List[Reason] = []
    if name == "invariants":
        for path, f, structs_only, _ in _walk(schema):
            if not structs_only:
                continue
            if "delta.invariants" in _meta(f):
                out.append(Reason("schema", f"column {path} has a delta.invariants expression", path))
            elif f.get("nullable") is False:
                out.append(Reason("schema", f"column {path} is NOT NULL (delta-spark enforces NOT NULL "
                                            f"as a column invariant)", path))
    elif name in ("generatedColumns", "identityColumns"):
        for path, f, _, depth in _walk(schema):
            md = _meta(f)
            if depth != 0:
                continue
            if name == "generatedColumns" and "delta.generationExpression" in md:
                out.append(Reason("schema", f"column {path} is GENERATED ALWAYS AS "
                                            f"({md['delta.generationExpression']})", path))
            if name == "identityColumns" and "delta.identity.start" in md:
                how = "ALWAYS" if md.get("delta.identity.allowExplicitInsert") in (False, None) else "BY DEFAULT"
                out.append(Reason("schema", f"column {path} is an IDENTITY column (GENERATED {how}, start "
                                            f"{md.get('delta.identity.start')}, step {md.get('delta.identity.step')})",
                                  path))
    elif name == "collations":
        for path, f, _, _ in _walk(schema):
            c = _meta(f).get("__COLLATIONS")
            if c is not None:
                out.append(Reason("schema", f"column {path} has a non-default collation "
                                            f"({json.dumps(c, separators=(',', ':'))})", path))
    else:
        test = {"timestampNtz": lambda t: t == "timestamp_ntz",
                "variantType": lambda t: t == "variant",
                "geospatial": lambda t: t.startswith("geometry") or t.startswith("geography")}[name]
        label = {"timestampNtz": "TIMESTAMP_NTZ", "variantType": "VARIANT", "geospatial": "a geometry/geography type"}[name]
        for path, t in _types(schema, ""):
            if test(t.strip().lower()):
                out.append(Reason("schema", f"column {path} is {label if name != 'geospatial' else t}", path))
    return out


def _property_reasons(name: str, m: MetadataView) -> List[Reason]:
    conf = m.configuration
    if name == "checkConstraints":
        return [Reason("property", f"CHECK constraint {k[len('delta.constraints.'):]}: {v} (property {k})", k)
                for k, v in sorted(conf.items()) if k.lower().startswith("delta.constraints.")]
    key = PROPERTY_KEYS.get(name)
    if key is None or key not in conf:
        return []
    out = [Reason("property", f"{key} = {conf[key]}", key)]
    if name.startswith("icebergCompat") or name.startswith("icebergWriterCompat"):
        formats = conf.get("delta.universalFormat.enabledFormats")
        if formats:
            out.append(Reason("property", f"UniForm: delta.universalFormat.enabledFormats = {formats} "
                                          f"(Iceberg readers need {name})", "delta.universalFormat.enabledFormats"))
    return out


def _other_reasons(name: str, m: MetadataView) -> List[Reason]:
    conf = m.configuration
    if name == "clustering":
        return [Reason("statement", "liquid clustering: enabled by CLUSTER BY in CREATE or ALTER TABLE (no table "
                                    "property; the clustering columns are kept in the delta.clustering domain)")]
    if name == "checkpointProtection":
        key = "delta.requireCheckpointProtectionBeforeVersion"
        detail = "added by DROP FEATURE of a reader-writer feature (history protection)"
        if key in conf:
            detail += f"; {key} = {conf[key]}"
        return [Reason("statement", detail, key if key in conf else None)]
    if name == "allowColumnDefaults":
        return [Reason("schema", f"column {p} has a DEFAULT value ({_meta(f).get('CURRENT_DEFAULT')})", p)
                for p, f, _, depth in _walk(_schema(m)) if depth == 0 and "CURRENT_DEFAULT" in _meta(f)]
    if name in ("catalogManaged", "catalogOwned-preview"):
        key = "io.unitycatalog.tableId"
        if key in conf:
            return [Reason("property", f"catalog-managed by Unity Catalog ({key} = {conf[key]})", key)]
    return []


def metadata_reasons(feature: TableFeature, m: MetadataView, protocol: Any) -> List[Reason]:
    """Reasons in the metadata (properties, schema, SQL clauses) for ``feature``.

    For features the registry decides from metadata, reasons are only given when the registry's
    predicate holds (so explanation and protocol rules cannot disagree); a preview name gets the
    evidence of its released feature.
    """
    name = PREVIEW_OF.get(feature.name, feature.name)
    base = TableFeatures.get(name)
    pred = base.metadataRequiresFeatureToBeEnabled
    if pred is not None:
        # The released feature's predicate says "unless <preview> is supported": evaluate it
        # without the table's protocol so a preview table still shows its evidence.
        if not pred(m, None):
            return []
        if name in SCHEMA_FEATURES:
            reasons = _schema_reasons(name, m)
        else:
            reasons = _property_reasons(name, m)
        if feature.name != name:
            reasons = [Reason(r.kind, f"{r.detail} (table written while the feature was named {feature.name})",
                              r.source) for r in reasons]
        return reasons or [Reason("property", base.enabledBy)]
    return _other_reasons(name, m)
