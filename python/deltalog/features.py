"""The table-feature registry: every feature of the current Delta protocol.

Mirrors ``io.deltalog.protocol.TableFeature``. The rules are written down in
``docs/protocol-rules.md``; ``tests/vectors/protocol_cases.json`` checks both languages agree.
Pure Python: no JVM, no file system.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Tuple

from deltalog.exceptions import InvalidTablePropertyError

# Protocol versions at which table features start.
TABLE_FEATURES_MIN_READER_VERSION = 3
TABLE_FEATURES_MIN_WRITER_VERSION = 7


class MetadataView:
    """What feature predicates look at: the configuration and the parsed schema.

    Accepts anything with ``configuration`` and ``schemaString`` attributes (an
    ``actions.Metadata``) or a plain mapping with those keys.
    """

    def __init__(self, configuration: Mapping[str, str], schemaString: Optional[str]) -> None:
        self.configuration: Dict[str, str] = dict(configuration or {})
        self.schemaString = schemaString or ""
        self._fields: Optional[List[Tuple[Tuple[str, ...], dict, bool]]] = None

    @staticmethod
    def of(metadata: Any) -> "MetadataView":
        if isinstance(metadata, MetadataView):
            return metadata
        if metadata is None:
            return MetadataView({}, "")
        if isinstance(metadata, Mapping):
            conf = metadata.get("configuration") or {}
            schema = metadata.get("schemaString")
            if schema is None and metadata.get("schema") is not None:
                schema = json.dumps(metadata["schema"], separators=(",", ":"))
            return MetadataView(conf, schema)
        return MetadataView(getattr(metadata, "configuration", None) or {},
                            getattr(metadata, "schemaString", None))

    def withConfiguration(self, configuration: Mapping[str, str]) -> "MetadataView":
        return MetadataView(configuration, self.schemaString)

    # -- configuration helpers -------------------------------------------------------------
    def boolProp(self, key: str) -> bool:
        value = self.configuration.get(key)
        if value is None:
            return False
        low = value.strip().lower()
        if low == "true":
            return True
        if low == "false":
            return False
        raise InvalidTablePropertyError(
            "DELTA_INVALID_TABLE_PROPERTY_VALUE",
            f"Table property {key}={value!r} is not a boolean; use 'true' or 'false'.")

    def enumProp(self, key: str, allowed: Tuple[str, ...], default: str) -> str:
        value = self.configuration.get(key)
        if value is None:
            return default
        low = value.strip().lower()
        if low not in allowed:
            raise InvalidTablePropertyError(
                "DELTA_INVALID_TABLE_PROPERTY_VALUE",
                f"Table property {key}={value!r} is invalid; allowed values: {', '.join(allowed)}.")
        return low

    # -- schema helpers --------------------------------------------------------------------
    def _schema(self) -> Any:
        if not self.schemaString or not self.schemaString.strip():
            return {"type": "struct", "fields": []}
        try:
            return json.loads(self.schemaString)
        except ValueError as e:
            raise InvalidTablePropertyError(
                "DELTA_INVALID_SCHEMA", f"schemaString is not valid JSON: {e}") from e

    def topLevelFields(self) -> List[dict]:
        schema = self._schema()
        if not isinstance(schema, dict) or not isinstance(schema.get("fields", []), list):
            raise InvalidTablePropertyError(
                "DELTA_INVALID_SCHEMA", "schemaString must be a Spark StructType JSON object")
        return [f for f in schema.get("fields", []) if isinstance(f, dict)]

    def fieldsThroughStructs(self) -> Iterator[dict]:
        """Every field reachable through nested structs only (not through arrays or maps)."""
        stack = list(self.topLevelFields())
        while stack:
            f = stack.pop(0)
            yield f
            t = f.get("type")
            if isinstance(t, dict) and t.get("type") == "struct":
                stack.extend(x for x in t.get("fields", []) if isinstance(x, dict))

    def allFields(self) -> Iterator[dict]:
        """Every field anywhere: structs, array elements, map keys and values."""
        def walkType(t: Any) -> Iterator[dict]:
            if isinstance(t, dict):
                kind = t.get("type")
                if kind == "struct":
                    for f in t.get("fields", []):
                        if isinstance(f, dict):
                            yield f
                            yield from walkType(f.get("type"))
                elif kind == "array":
                    yield from walkType(t.get("elementType"))
                elif kind == "map":
                    yield from walkType(t.get("keyType"))
                    yield from walkType(t.get("valueType"))
        schema = self._schema()
        self.topLevelFields()  # validates shape
        yield from walkType(schema)

    def allTypeNames(self) -> Iterator[str]:
        def walkType(t: Any) -> Iterator[str]:
            if isinstance(t, str):
                yield t
            elif isinstance(t, dict):
                kind = t.get("type")
                if kind == "struct":
                    for f in t.get("fields", []):
                        if isinstance(f, dict):
                            yield from walkType(f.get("type"))
                elif kind == "array":
                    yield from walkType(t.get("elementType"))
                elif kind == "map":
                    yield from walkType(t.get("keyType"))
                    yield from walkType(t.get("valueType"))
        self.topLevelFields()
        yield from walkType(self._schema())


def _meta(f: dict) -> dict:
    m = f.get("metadata")
    return m if isinstance(m, dict) else {}


# A predicate gets the metadata view and the protocol being evaluated against.
Predicate = Callable[[MetadataView, Any], bool]


@dataclass(frozen=True)
class TableFeature:
    """One table feature: its versions, dependencies, enablement and drop rules."""

    name: str
    isReaderWriterFeature: bool
    isLegacyFeature: bool
    minReaderVersion: int
    minWriterVersion: int
    requiredFeatureNames: Tuple[str, ...] = ()
    enabledBy: str = "explicit only: delta.feature.<name> = 'supported'"
    metadataRequiresFeatureToBeEnabled: Optional[Predicate] = field(default=None, compare=False)
    autoUpdateExisting: Optional[bool] = None
    isRemovable: bool = False
    historyProtection: Optional[bool] = None

    @property
    def isAutoEnabledByMetadata(self) -> bool:
        return self.metadataRequiresFeatureToBeEnabled is not None

    @property
    def automaticallyUpdateProtocolOfExistingTables(self) -> bool:
        if self.autoUpdateExisting is not None:
            return self.autoUpdateExisting
        return self.isLegacyFeature

    @property
    def requiresHistoryProtection(self) -> bool:
        if not self.isRemovable:
            return False
        if self.historyProtection is not None:
            return self.historyProtection
        return self.isReaderWriterFeature

    @property
    def requiredFeatures(self) -> FrozenSet["TableFeature"]:
        return frozenset(TableFeatures.get(n) for n in self.requiredFeatureNames)

    @property
    def isWriterOnly(self) -> bool:
        return not self.isReaderWriterFeature

    def __repr__(self) -> str:
        return f"TableFeature({self.name})"


def _legacyW(name: str, w: int, enabledBy: str, pred: Predicate, removable: bool = False) -> TableFeature:
    return TableFeature(name, False, True, 0, w, (), enabledBy, pred, None, removable)


def _nonLegacy(name: str, readerWriter: bool, enabledBy: str, pred: Optional[Predicate],
               requires: Tuple[str, ...], removable: bool, autoUpdate: Optional[bool],
               history: Optional[bool]) -> TableFeature:
    # Features enabled by metadata update existing tables automatically unless said otherwise.
    return TableFeature(name, readerWriter, False,
                        TABLE_FEATURES_MIN_READER_VERSION if readerWriter else 0,
                        TABLE_FEATURES_MIN_WRITER_VERSION, requires, enabledBy, pred,
                        autoUpdate if autoUpdate is not None else (True if pred else None),
                        removable, history)


_EXPLICIT = "explicit only: delta.feature.<name> = 'supported'"


def _w(name: str, enabledBy: str = _EXPLICIT, pred: Optional[Predicate] = None,
       requires: Tuple[str, ...] = (), removable: bool = False, autoUpdate: Optional[bool] = None,
       history: Optional[bool] = None) -> TableFeature:
    """A writer-only table feature (writer 7)."""
    return _nonLegacy(name, False, enabledBy, pred, requires, removable, autoUpdate, history)


def _rw(name: str, enabledBy: str = _EXPLICIT, pred: Optional[Predicate] = None,
        requires: Tuple[str, ...] = (), removable: bool = False, autoUpdate: Optional[bool] = None,
        history: Optional[bool] = None) -> TableFeature:
    """A reader-writer table feature (reader 3, writer 7)."""
    return _nonLegacy(name, True, enabledBy, pred, requires, removable, autoUpdate, history)


def _supports(protocol: Any, name: str) -> bool:
    return protocol is not None and protocol.isFeatureSupported(TableFeatures.get(name))


def _anyType(m: MetadataView, test: Callable[[str], bool]) -> bool:
    return any(test(t.strip().lower()) for t in m.allTypeNames())


_ALL: List[TableFeature] = [
    # ---- legacy features (implied by protocol versions below table features) ----
    _legacyW("appendOnly", 2, "delta.appendOnly = true",
             lambda m, p: m.boolProp("delta.appendOnly")),
    # delta-spark also counts NOT NULL columns (the spec only names delta.invariants); Databricks
    # rejects writer-7 tables with NOT NULL columns that do not list invariants.
    _legacyW("invariants", 2, "a NOT NULL column or a column with delta.invariants metadata",
             lambda m, p: any((f.get("nullable") is False) or ("delta.invariants" in _meta(f))
                              for f in m.fieldsThroughStructs())),
    _legacyW("checkConstraints", 3, "a delta.constraints.<name> table property",
             lambda m, p: any(k.lower().startswith("delta.constraints.") for k in m.configuration),
             removable=True),
    _legacyW("changeDataFeed", 4, "delta.enableChangeDataFeed = true",
             lambda m, p: m.boolProp("delta.enableChangeDataFeed")),
    _legacyW("generatedColumns", 4, "a column with delta.generationExpression metadata",
             lambda m, p: any("delta.generationExpression" in _meta(f) for f in m.topLevelFields())),
    TableFeature("columnMapping", True, True, 2, 5, (),
                 "delta.columnMapping.mode = name | id",
                 lambda m, p: m.enumProp("delta.columnMapping.mode", ("none", "name", "id"), "none") != "none",
                 None, True, None),
    _legacyW("identityColumns", 6, "an IDENTITY column (delta.identity.* metadata)",
             lambda m, p: any("delta.identity.start" in _meta(f) for f in m.topLevelFields())),
    # ---- table features (writer 7 / reader 3) ----
    _rw("deletionVectors", "delta.enableDeletionVectors = true",
        lambda m, p: m.boolProp("delta.enableDeletionVectors"), removable=True),
    _w("rowTracking", "delta.enableRowTracking = true",
       lambda m, p: m.boolProp("delta.enableRowTracking"), requires=("domainMetadata",),
       removable=True),
    _w("domainMetadata", "explicit, or as a dependency of rowTracking / clustering",
       removable=True),
    _rw("timestampNtz", "a TIMESTAMP_NTZ column (new tables; existing tables need delta.feature.timestampNtz)",
        lambda m, p: _anyType(m, lambda t: t == "timestamp_ntz"), autoUpdate=False),
    _rw("v2Checkpoint", "delta.checkpointPolicy = v2",
        lambda m, p: m.enumProp("delta.checkpointPolicy", ("classic", "v2"), "classic") == "v2",
        removable=True),
    _w("icebergCompatV1", "delta.enableIcebergCompatV1 = true",
       lambda m, p: m.boolProp("delta.enableIcebergCompatV1"), requires=("columnMapping",)),
    _w("icebergCompatV2", "delta.enableIcebergCompatV2 = true",
       lambda m, p: m.boolProp("delta.enableIcebergCompatV2"), requires=("columnMapping",)),
    _w("icebergCompatV3", "delta.enableIcebergCompatV3 = true",
       lambda m, p: m.boolProp("delta.enableIcebergCompatV3"),
       requires=("columnMapping", "rowTracking")),
    _w("icebergWriterCompatV1", "delta.enableIcebergWriterCompatV1 = true",
       lambda m, p: m.boolProp("delta.enableIcebergWriterCompatV1"), requires=("icebergCompatV2",)),
    _w("icebergWriterCompatV3", "delta.enableIcebergWriterCompatV3 = true",
       lambda m, p: m.boolProp("delta.enableIcebergWriterCompatV3"), requires=("icebergCompatV3",)),
    _w("clustering", "CLUSTER BY at create or ALTER TABLE ... CLUSTER BY",
       requires=("domainMetadata",)),
    _rw("vacuumProtocolCheck", removable=True),
    _rw("typeWidening", "delta.enableTypeWidening = true",
        lambda m, p: m.boolProp("delta.enableTypeWidening")
        and not _supports(p, "typeWidening-preview"), removable=True),
    _rw("typeWidening-preview", removable=True),
    _rw("variantType", "a VARIANT column",
        lambda m, p: _anyType(m, lambda t: t == "variant") and not _supports(p, "variantType-preview")),
    _rw("variantType-preview"),
    _rw("variantShredding", "delta.enableVariantShredding = true",
        lambda m, p: m.boolProp("delta.enableVariantShredding")
        and not _supports(p, "variantShredding-preview"), requires=("variantType",)),
    _rw("variantShredding-preview"),
    _w("inCommitTimestamp", "delta.enableInCommitTimestamps = true",
       lambda m, p: m.boolProp("delta.enableInCommitTimestamps"), removable=True),
    _w("allowColumnDefaults"),
    _rw("catalogManaged", "explicit, by the catalog at CREATE",
        requires=("inCommitTimestamp", "vacuumProtocolCheck")),
    _rw("catalogOwned-preview", requires=("inCommitTimestamp", "vacuumProtocolCheck")),
    _w("coordinatedCommits-preview", "delta.coordinatedCommits.commitCoordinator-preview is set",
       lambda m, p: bool((m.configuration.get("delta.coordinatedCommits.commitCoordinator-preview") or "").strip()),
       requires=("inCommitTimestamp", "vacuumProtocolCheck"), removable=True),
    _w("checkpointProtection", "added by DROP FEATURE of a reader-writer feature", removable=True),
    _w("materializePartitionColumns", "delta.enableMaterializePartitionColumnsFeature = true",
       lambda m, p: m.boolProp("delta.enableMaterializePartitionColumnsFeature"), removable=True),
    _w("collations", "a column with a non-default collation (__COLLATIONS metadata)",
       lambda m, p: any("__COLLATIONS" in _meta(f) for f in m.allFields()),
       requires=("domainMetadata",)),
    _w("collations-preview", "explicit only (older name of collations)", requires=("domainMetadata",)),
    _rw("geospatial", "a GEOMETRY or GEOGRAPHY column",
        lambda m, p: _anyType(m, lambda t: t.startswith("geometry") or t.startswith("geography"))
        and not _supports(p, "geospatial-dev"), removable=True),
    _rw("geospatial-dev", removable=True),
    _rw("redirectReaderWriter-preview", removable=True, history=False),
    _w("redirectWriterOnly-preview", removable=True),
    _rw("timestampNanos", requires=("timestampNtz",)),
    _rw("adaptiveMetadata-preview",
        requires=("catalogManaged", "rowTracking", "domainMetadata", "deletionVectors", "columnMapping")),
]


class TableFeatures:
    """Registry lookups. Names are matched case-insensitively."""

    _byLower: Dict[str, TableFeature] = {f.name.lower(): f for f in _ALL}
    assert len(_byLower) == len(_ALL), "lower-case feature names must be unique"

    @staticmethod
    def all() -> List[TableFeature]:
        return list(_ALL)

    @staticmethod
    def byName(name: str) -> Optional[TableFeature]:
        return TableFeatures._byLower.get(name.lower())

    @staticmethod
    def get(name: str) -> TableFeature:
        f = TableFeatures.byName(name)
        if f is None:
            raise KeyError(name)
        return f

    @staticmethod
    def legacy() -> List[TableFeature]:
        return [f for f in _ALL if f.isLegacyFeature]


def dependencyClosure(features: Iterable[TableFeature]) -> FrozenSet[TableFeature]:
    """The smallest set containing ``features`` and every (transitive) dependency."""
    result = set(features)
    frontier = list(result)
    while frontier:
        f = frontier.pop()
        for dep in f.requiredFeatures:
            if dep not in result:
                result.add(dep)
                frontier.append(dep)
    return frozenset(result)


def dependentsOf(feature: TableFeature) -> FrozenSet[TableFeature]:
    """Registered features that require ``feature`` directly."""
    return frozenset(f for f in _ALL if feature.name in f.requiredFeatureNames)


def registryAsJson() -> List[Dict[str, Any]]:
    """The registry as plain data (same shape as the JVM's ``ProtocolApi.featureRegistryJson``)."""
    return [{
        "name": f.name,
        "readerWriter": f.isReaderWriterFeature,
        "legacy": f.isLegacyFeature,
        "minReaderVersion": f.minReaderVersion,
        "minWriterVersion": f.minWriterVersion,
        "requiredFeatures": sorted(f.requiredFeatureNames),
        "removable": f.isRemovable,
        "requiresHistoryProtection": f.requiresHistoryProtection,
        "autoUpdateExisting": f.automaticallyUpdateProtocolOfExistingTables,
        "enabledBy": f.enabledBy,
    } for f in _ALL]
