"""The ``protocol`` action and the rules that decide a table's protocol.

Mirrors ``io.deltalog.protocol.Protocol``; the rules are in ``docs/protocol-rules.md``.
Pure Python: answers without a JVM.

Example::

    from deltalog.protocol import Protocol
    p = Protocol.forNewTable({"configuration": {"delta.enableDeletionVectors": "true"}})
    p.simpleString            # '3,7,[deletionVectors],[appendOnly,deletionVectors,invariants]'
    p.upgradeTableProtocol(3, 7)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from deltalog.exceptions import (
    ActionParseError,
    DeltalogAssertionError,
    InvalidProtocolVersionError,
    InvalidTablePropertyError,
    ProtocolDowngradeError,
    TableFeatureError,
    UnsupportedTableFeatureError,
)
from deltalog.features import (
    TABLE_FEATURES_MIN_READER_VERSION,
    TABLE_FEATURES_MIN_WRITER_VERSION,
    MetadataView,
    TableFeature,
    TableFeatures,
    dependencyClosure,
    dependentsOf,
)

MIN_READER_VERSION_PROP = "delta.minReaderVersion"
MIN_WRITER_VERSION_PROP = "delta.minWriterVersion"
FEATURE_PROP_PREFIX = "delta.feature."
IGNORE_PROTOCOL_DEFAULTS_PROP = "delta.ignoreProtocolDefaults"
SESSION_DEFAULTS_PREFIX = "spark.databricks.delta.properties.defaults."
DEFAULT_FEATURE_PROP_PREFIX = SESSION_DEFAULTS_PREFIX + "feature."
FEATURE_PROP_SUPPORTED = "supported"
FEATURE_PROP_ENABLED = "enabled"  # deprecated synonym of "supported"

SUPPORTED_READER_VERSIONS = (1, 2, 3)
SUPPORTED_WRITER_VERSIONS = (1, 2, 3, 4, 5, 6, 7)


def _checkVersions(r: int, w: int) -> None:
    if r not in SUPPORTED_READER_VERSIONS or w not in SUPPORTED_WRITER_VERSIONS:
        raise InvalidProtocolVersionError(
            "DELTA_INVALID_PROTOCOL_VERSION",
            f"Protocol ({r},{w}) is invalid: minReaderVersion must be 1, 2 or 3 and "
            f"minWriterVersion 1 to 7.")
    if r >= TABLE_FEATURES_MIN_READER_VERSION and w < TABLE_FEATURES_MIN_WRITER_VERSION:
        raise InvalidProtocolVersionError(
            "DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE",
            f"Protocol ({r},{w}) is invalid: reader version {r} (reader table features) requires "
            f"writer version {TABLE_FEATURES_MIN_WRITER_VERSION}; use ({r},7).")


@dataclass(frozen=True)
class Protocol:
    """The ``protocol`` action: minimum reader/writer versions and, from (3,7), feature lists."""

    minReaderVersion: int
    minWriterVersion: int
    readerFeatures: Optional[FrozenSet[str]] = None
    writerFeatures: Optional[FrozenSet[str]] = None
    extra: Dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        r, w = self.minReaderVersion, self.minWriterVersion
        if self.readerFeatures is not None and not isinstance(self.readerFeatures, frozenset):
            object.__setattr__(self, "readerFeatures", frozenset(self.readerFeatures))
        if self.writerFeatures is not None and not isinstance(self.writerFeatures, frozenset):
            object.__setattr__(self, "writerFeatures", frozenset(self.writerFeatures))
        # Only structural checks here: a protocol from a newer writer (e.g. reader 4) must still
        # parse, so that the read/write checks can name what is unsupported.
        if r < 1 or w < 1:
            raise InvalidProtocolVersionError(
                "DELTA_INVALID_PROTOCOL_VERSION",
                f"Protocol ({r},{w}) is invalid: versions start at 1.")
        if r >= TABLE_FEATURES_MIN_READER_VERSION and w < TABLE_FEATURES_MIN_WRITER_VERSION:
            raise InvalidProtocolVersionError(
                "DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE",
                f"Protocol ({r},{w}) is invalid: reader table features (reader version {r}) require "
                f"writer version {TABLE_FEATURES_MIN_WRITER_VERSION}.")
        if (r >= TABLE_FEATURES_MIN_READER_VERSION) != (self.readerFeatures is not None):
            raise InvalidProtocolVersionError(
                "DELTA_INVALID_PROTOCOL_VERSION",
                f"Protocol ({r},{w}): readerFeatures must be present exactly when "
                f"minReaderVersion is {TABLE_FEATURES_MIN_READER_VERSION}.")
        if (w >= TABLE_FEATURES_MIN_WRITER_VERSION) != (self.writerFeatures is not None):
            raise InvalidProtocolVersionError(
                "DELTA_INVALID_PROTOCOL_VERSION",
                f"Protocol ({r},{w}): writerFeatures must be present exactly when "
                f"minWriterVersion is {TABLE_FEATURES_MIN_WRITER_VERSION}.")

    # ---------------------------------------------------------------- construction / JSON
    @staticmethod
    def of(minReaderVersion: int, minWriterVersion: int) -> "Protocol":
        """``Protocol(r, w)`` with empty feature lists where the versions support them."""
        _checkVersions(minReaderVersion, minWriterVersion)
        return Protocol(
            minReaderVersion, minWriterVersion,
            frozenset() if minReaderVersion >= TABLE_FEATURES_MIN_READER_VERSION else None,
            frozenset() if minWriterVersion >= TABLE_FEATURES_MIN_WRITER_VERSION else None)

    actionName = "protocol"

    @staticmethod
    def fromJsonDict(d: Any) -> "Protocol":
        """Parse a protocol action body; errors name the field (file/line added by the caller)."""
        if not isinstance(d, dict):
            raise ActionParseError(None, 0, "protocol", "expected a JSON object")

        def intField(name: str) -> int:
            if name not in d or d[name] is None:
                raise ActionParseError(None, 0, f"protocol.{name}", "required field is missing")
            v = d[name]
            if isinstance(v, bool) or not isinstance(v, int):
                raise ActionParseError(None, 0, f"protocol.{name}", f"expected an integer, got {v!r}")
            return v

        def listField(name: str) -> Optional[FrozenSet[str]]:
            v = d.get(name)
            if v is None:
                return None
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ActionParseError(None, 0, f"protocol.{name}",
                                       f"expected an array of strings, got {v!r}")
            return frozenset(v)

        r, w = intField("minReaderVersion"), intField("minWriterVersion")
        rf, wf = listField("readerFeatures"), listField("writerFeatures")
        extra = {k: v for k, v in d.items()
                 if k not in ("minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures")}
        try:
            return Protocol(r, w, rf, wf, extra)
        except InvalidProtocolVersionError as e:
            fieldName = "protocol.minReaderVersion"
            if "writerFeatures" in e.message:
                fieldName = "protocol.writerFeatures"
            elif "readerFeatures" in e.message:
                fieldName = "protocol.readerFeatures"
            elif r >= 1 and w < 1:
                fieldName = "protocol.minWriterVersion"
            raise ActionParseError(None, 0, fieldName, e.message) from e

    def toJsonDict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"minReaderVersion": self.minReaderVersion,
                             "minWriterVersion": self.minWriterVersion}
        if self.readerFeatures is not None:
            d["readerFeatures"] = sorted(self.readerFeatures)
        if self.writerFeatures is not None:
            d["writerFeatures"] = sorted(self.writerFeatures)
        for k, v in self.extra.items():
            d[k] = v
        return d

    def json(self) -> str:
        import json as _json
        return _json.dumps({"protocol": self.toJsonDict()}, separators=(",", ":"), ensure_ascii=False)

    def _copy(self, readerFeatures: Optional[FrozenSet[str]],
              writerFeatures: Optional[FrozenSet[str]]) -> "Protocol":
        return Protocol(self.minReaderVersion, self.minWriterVersion,
                        readerFeatures, writerFeatures, dict(self.extra))

    # ---------------------------------------------------------------- structure
    @property
    def supportsReaderFeatures(self) -> bool:
        return self.minReaderVersion >= TABLE_FEATURES_MIN_READER_VERSION

    @property
    def supportsWriterFeatures(self) -> bool:
        return self.minWriterVersion >= TABLE_FEATURES_MIN_WRITER_VERSION

    @property
    def readerFeatureNames(self) -> FrozenSet[str]:
        return self.readerFeatures or frozenset()

    @property
    def writerFeatureNames(self) -> FrozenSet[str]:
        return self.writerFeatures or frozenset()

    @property
    def readerAndWriterFeatureNames(self) -> FrozenSet[str]:
        return self.readerFeatureNames | self.writerFeatureNames

    @property
    def readerAndWriterFeatures(self) -> FrozenSet[TableFeature]:
        """Known features named in the lists (unknown names are not included)."""
        return frozenset(f for f in (TableFeatures.byName(n) for n in self.readerAndWriterFeatureNames)
                         if f is not None)

    @property
    def unknownFeatureNames(self) -> FrozenSet[str]:
        return frozenset(n for n in self.readerAndWriterFeatureNames if TableFeatures.byName(n) is None)

    @property
    def implicitlySupportedFeatures(self) -> FrozenSet[TableFeature]:
        if self.supportsReaderFeatures and self.supportsWriterFeatures:
            return frozenset()
        return frozenset(
            f for f in TableFeatures.legacy()
            if not (self.supportsReaderFeatures or self.minReaderVersion < f.minReaderVersion)
            and not (self.supportsWriterFeatures or self.minWriterVersion < f.minWriterVersion))

    @property
    def implicitlyAndExplicitlySupportedFeatures(self) -> FrozenSet[TableFeature]:
        return self.readerAndWriterFeatures | self.implicitlySupportedFeatures

    def _lists(self, name: str) -> bool:
        """Whether ``name`` is listed (feature names match case-insensitively)."""
        low = name.lower()
        return any(n.lower() == low for n in self.readerAndWriterFeatureNames)

    def isFeatureSupported(self, feature: TableFeature) -> bool:
        return ((feature.isLegacyFeature and feature in self.implicitlySupportedFeatures)
                or self._lists(feature.name))

    @property
    def simpleString(self) -> str:
        if not self.supportsReaderFeatures and not self.supportsWriterFeatures:
            return f"{self.minReaderVersion},{self.minWriterVersion}"
        rf = "[" + ",".join(sorted(self.readerFeatures)) + "]" if self.readerFeatures is not None else "None"
        wf = "[" + ",".join(sorted(self.writerFeatures)) + "]" if self.writerFeatures is not None else "None"
        return f"{self.minReaderVersion},{self.minWriterVersion},{rf},{wf}"

    def __str__(self) -> str:
        return f"Protocol({self.simpleString})"

    # ---------------------------------------------------------------- feature arithmetic
    def _withFeatureName(self, name: str, toReader: bool, toWriter: bool) -> "Protocol":
        if toReader and not self.supportsReaderFeatures:
            raise TableFeatureError(
                "DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION",
                f"Feature '{name}' needs reader version {TABLE_FEATURES_MIN_READER_VERSION} "
                f"(the protocol has {self.minReaderVersion}); upgrade the protocol first.")
        if toWriter and not self.supportsWriterFeatures:
            raise TableFeatureError(
                "DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION",
                f"Feature '{name}' needs writer version {TABLE_FEATURES_MIN_WRITER_VERSION} "
                f"(the protocol has {self.minWriterVersion}); upgrade the protocol first.")
        rf = self.readerFeatures | {name} if toReader and self.readerFeatures is not None else self.readerFeatures
        wf = self.writerFeatures | {name} if toWriter and self.writerFeatures is not None else self.writerFeatures
        return self._copy(rf, wf)

    def withReaderFeatures(self, names: Iterable[str]) -> "Protocol":
        p = self
        for n in names:
            p = p._withFeatureName(n, True, False)
        return p

    def withWriterFeatures(self, names: Iterable[str]) -> "Protocol":
        p = self
        for n in names:
            p = p._withFeatureName(n, False, True)
        return p

    def withFeature(self, feature: TableFeature | str) -> "Protocol":
        """This protocol with ``feature`` (and its dependencies) supported."""
        if isinstance(feature, str):
            f = TableFeatures.byName(feature)
            if f is None:
                raise _unknownFeature([feature])
            feature = f
        toReader = feature.isReaderWriterFeature
        toWriter = True
        if feature.isLegacyFeature:
            if feature.isReaderWriterFeature:
                if self.supportsReaderFeatures:
                    toReader = True
                elif feature.minReaderVersion <= self.minReaderVersion:
                    toReader = False
                else:
                    raise TableFeatureError(
                        "DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION",
                        f"Feature '{feature.name}' needs reader version {feature.minReaderVersion} "
                        f"(the protocol has {self.minReaderVersion}); upgrade the protocol first.")
            if self.supportsWriterFeatures:
                toWriter = True
            elif feature.minWriterVersion <= self.minWriterVersion:
                toWriter = False
            else:
                raise TableFeatureError(
                    "DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION",
                    f"Feature '{feature.name}' needs writer version {feature.minWriterVersion} "
                    f"(the protocol has {self.minWriterVersion}); upgrade the protocol first.")
        withDeps = self.withFeatures(sorted(feature.requiredFeatures, key=lambda f: f.name))
        return withDeps._withFeatureName(feature.name, toReader, toWriter)

    def withFeatures(self, features: Iterable[TableFeature | str]) -> "Protocol":
        p = self
        for f in features:
            p = p.withFeature(f)
        return p

    def normalized(self) -> "Protocol":
        """The weakest equivalent form: legacy versions when the feature set is a legacy set."""
        if not self.supportsWriterFeatures or self.unknownFeatureNames:
            return self
        feats = self.readerAndWriterFeatures
        r, w = minimumRequiredVersions(feats)
        candidate = Protocol.of(r, w)
        if self.implicitlyAndExplicitlySupportedFeatures == candidate.implicitlyAndExplicitlySupportedFeatures:
            return candidate
        return Protocol.of(r, TABLE_FEATURES_MIN_WRITER_VERSION).withFeatures(_sorted(feats))

    def denormalized(self) -> "Protocol":
        """The equivalent table-features protocol of a legacy protocol."""
        if self.supportsWriterFeatures:
            return self
        implicit = self.implicitlySupportedFeatures
        r, _ = minimumRequiredVersions(implicit)
        return Protocol.of(r, TABLE_FEATURES_MIN_WRITER_VERSION).withFeatures(_sorted(implicit))

    def denormalizedNormalized(self) -> "Protocol":
        return self.denormalized().normalized()

    def merge(self, *others: "Protocol") -> "Protocol":
        """Highest versions plus every feature supported by any of the protocols, normalized."""
        ps = (self,) + tuple(others)
        r = max(p.minReaderVersion for p in ps)
        w = max(p.minWriterVersion for p in ps)
        readerNames = sorted(set().union(*(p.readerFeatureNames for p in ps)))
        writerNames = sorted(set().union(*(p.writerFeatureNames for p in ps)))
        implicit = set().union(*(p.implicitlySupportedFeatures for p in ps))
        merged = (Protocol.of(r, w).withReaderFeatures(readerNames)
                  .withWriterFeatures(writerNames).withFeatures(_sorted(implicit)))
        return merged.denormalizedNormalized()

    def canUpgradeTo(self, to: "Protocol") -> bool:
        return (self.implicitlyAndExplicitlySupportedFeatures <= to.implicitlyAndExplicitlySupportedFeatures
                and self.unknownFeatureNames <= to.unknownFeatureNames)

    # ---------------------------------------------------------------- table-level operations
    def upgradeTableProtocol(self, readerVersion: int, writerVersion: int) -> "Protocol":
        """Raise to at least (readerVersion, writerVersion); lower versions are a no-op."""
        _checkVersions(readerVersion, writerVersion)
        return self.merge(Protocol.of(readerVersion, writerVersion))

    def addFeatureSupport(self, featureName: str) -> "Protocol":
        """Support ``featureName`` (``delta.feature.<name> = 'supported'``)."""
        f = TableFeatures.byName(featureName)
        if f is None:
            raise _unknownFeature([featureName])
        if self._lists(f.name):
            return self
        closure = dependencyClosure([f])
        r = (TABLE_FEATURES_MIN_READER_VERSION if any(x.isReaderWriterFeature for x in closure)
             else self.minReaderVersion)
        if r >= TABLE_FEATURES_MIN_READER_VERSION:
            r = TABLE_FEATURES_MIN_READER_VERSION
        return Protocol.of(r, TABLE_FEATURES_MIN_WRITER_VERSION).withFeature(f).merge(self)

    def dropFeatureSupport(self, featureName: str) -> "Protocol":
        """The protocol without ``featureName`` (the protocol side of DROP FEATURE)."""
        f = TableFeatures.byName(featureName)
        if f is None:
            raise _unknownFeature([featureName])
        if f.name in ("catalogManaged", "catalogOwned-preview"):
            raise TableFeatureError(
                "DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE",
                f"Dropping feature '{f.name}' is not supported.")
        if not f.isRemovable:
            raise TableFeatureError(
                "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE",
                f"Feature '{f.name}' cannot be dropped from a table once supported.")
        if not self.isFeatureSupported(f):
            raise TableFeatureError(
                "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT",
                f"Feature '{f.name}' is not supported by protocol {self.simpleString}; nothing to drop.")
        dependents = sorted(d.name for d in dependentsOf(f) if self.isFeatureSupported(d))
        if dependents:
            raise TableFeatureError(
                "DELTA_FEATURE_DROP_DEPENDENT_FEATURE",
                f"Feature '{f.name}' cannot be dropped while {', '.join(dependents)} "
                f"depend(s) on it; drop those first.")
        d = self.denormalized()
        low = f.name.lower()
        rf = (frozenset(n for n in d.readerFeatures if n.lower() != low)
              if (f.isReaderWriterFeature and d.readerFeatures is not None) else d.readerFeatures)
        wf = frozenset(n for n in d.writerFeatures if n.lower() != low) if d.writerFeatures is not None else None
        return d._copy(rf, wf).normalized()

    def assertCanUpgradeTo(self, new: "Protocol") -> None:
        if not self.canUpgradeTo(new):
            lost = sorted(x.name for x in self.implicitlyAndExplicitlySupportedFeatures
                          - new.implicitlyAndExplicitlySupportedFeatures)
            raise ProtocolDowngradeError(
                f"Protocol cannot be downgraded from {self.simpleString} to {new.simpleString}: "
                f"it would drop {', '.join(lost) or 'unknown features'}. Use DROP FEATURE to remove a feature.")

    # ---------------------------------------------------------------- metadata-driven rules
    @staticmethod
    def forNewTable(metadata: Any = None, sessionDefaults: Optional[Mapping[str, str]] = None) -> "Protocol":
        """The lowest protocol supporting everything the metadata needs, for a new table."""
        m = MetadataView.of(metadata)
        sd = dict(sessionDefaults or {})
        tableConf = m.configuration
        ignore = (_boolValue(IGNORE_PROTOCOL_DEFAULTS_PROP, tableConf.get(IGNORE_PROTOCOL_DEFAULTS_PROP))
                  or _boolValue(SESSION_DEFAULTS_PREFIX + "ignoreProtocolDefaults",
                                sd.get(SESSION_DEFAULTS_PREFIX + "ignoreProtocolDefaults")))
        if ignore:
            base = {MIN_READER_VERSION_PROP: "1", MIN_WRITER_VERSION_PROP: "1"}
            override: Dict[str, str] = {}
        else:
            base = {MIN_READER_VERSION_PROP: sd.get(SESSION_DEFAULTS_PREFIX + "minReaderVersion", "1"),
                    MIN_WRITER_VERSION_PROP: sd.get(SESSION_DEFAULTS_PREFIX + "minWriterVersion", "2")}
            override = {FEATURE_PROP_PREFIX + k[len(DEFAULT_FEATURE_PROP_PREFIX):]: v
                        for k, v in sd.items() if k.startswith(DEFAULT_FEATURE_PROP_PREFIX)}
        merged = {**base, **override, **tableConf}
        r, w, feats = Protocol.minProtocolComponentsFromMetadata(m.withConfiguration(merged))
        return Protocol.of(r, w).withFeatures(_sorted(feats)).denormalizedNormalized()

    @staticmethod
    def minProtocolComponentsFromMetadata(metadata: Any) -> Tuple[int, int, FrozenSet[TableFeature]]:
        m = MetadataView.of(metadata)
        conf = m.configuration
        propFeatures = supportedFeaturesFromTableConfigs(conf)
        metaFeatures = Protocol.extractAutomaticallyEnabledFeatures(
            m, Protocol.of(3, 7).withFeatures(_sorted(propFeatures)))
        allFeatures = set(propFeatures) | set(metaFeatures)
        rConf, wConf = protocolVersionsFromTableConf(conf)
        implicitFromConf: FrozenSet[TableFeature] = frozenset()
        if rConf is not None and wConf is not None:
            r0 = rConf if wConf >= TABLE_FEATURES_MIN_WRITER_VERSION else min(2, rConf)
            implicitFromConf = Protocol.of(r0, wConf).implicitlySupportedFeatures
        minProtocol = Protocol.of(3, 7).withFeatures(_sorted(allFeatures | implicitFromConf)).normalized()
        return (minProtocol.minReaderVersion, minProtocol.minWriterVersion,
                minProtocol.implicitlyAndExplicitlySupportedFeatures)

    @staticmethod
    def extractAutomaticallyEnabledFeatures(metadata: Any, protocol: "Protocol") -> FrozenSet[TableFeature]:
        """Features already listed in ``protocol`` plus those the metadata enables, closed over deps."""
        m = MetadataView.of(metadata)
        listed = [f for f in (TableFeatures.byName(n) for n in protocol.writerFeatureNames) if f is not None]
        fromMeta = [f for f in TableFeatures.all()
                    if f.metadataRequiresFeatureToBeEnabled is not None
                    and f.metadataRequiresFeatureToBeEnabled(m, protocol)]
        return dependencyClosure(listed + fromMeta)

    @staticmethod
    def requiredMinimumProtocol(metadata: Any) -> Tuple[int, int, List[str]]:
        """The seed's legacy computation: (minReaderVersion, minWriterVersion, featuresUsed).

        Differences from the seed: appendOnly needs writer 2 (the current protocol; the seed
        says 3); identity columns need writer 6 and are supported (the seed throws).
        Table features beyond the legacy ones need (3,7) (reader-writer) or (·,7) (writer-only).
        """
        m = MetadataView.of(metadata)
        r, w = 0, 0
        used: List[str] = []
        order = ["invariants", "appendOnly", "checkConstraints", "generatedColumns",
                 "changeDataFeed", "identityColumns", "columnMapping"]
        probe = Protocol.of(3, 7)
        for name in order:
            f = TableFeatures.get(name)
            assert f.metadataRequiresFeatureToBeEnabled is not None
            if f.metadataRequiresFeatureToBeEnabled(m, probe):
                r, w = max(r, f.minReaderVersion), max(w, f.minWriterVersion)
                used.append(name)
        for f in TableFeatures.all():
            if f.isLegacyFeature or f.metadataRequiresFeatureToBeEnabled is None:
                continue
            if f.metadataRequiresFeatureToBeEnabled(m, probe):
                for g in _sorted(dependencyClosure([f])):
                    if g.name not in used:
                        used.append(g.name)
                    r, w = max(r, g.minReaderVersion), max(w, g.minWriterVersion)
        return r, w, used

    @staticmethod
    def checkProtocolRequirements(metadata: Any, current: "Protocol") -> Optional["Protocol"]:
        """Assert no protocol property is left in the metadata, then the upgrade it needs (if any)."""
        m = MetadataView.of(metadata)
        assertMetadataContainsNoProtocolProps(m.configuration)
        return Protocol.upgradeProtocolFromMetadataForExistingTable(m, current)

    @staticmethod
    def upgradeProtocolFromMetadataForExistingTable(metadata: Any, current: "Protocol") -> Optional["Protocol"]:
        m = MetadataView.of(metadata)
        required = Protocol.of(3, 7).withFeatures(
            _sorted(Protocol.extractAutomaticallyEnabledFeatures(m, current))).normalized()
        if required.canUpgradeTo(current):
            return None
        missing = (required.implicitlyAndExplicitlySupportedFeatures
                   - current.implicitlyAndExplicitlySupportedFeatures)
        manual = sorted(f.name for f in missing
                        if f.isAutoEnabledByMetadata and not f.automaticallyUpdateProtocolOfExistingTables)
        if manual:
            raise TableFeatureError(
                "DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT",
                f"The table metadata needs feature(s) {', '.join(manual)} that cannot be added "
                f"automatically to an existing table; first run ALTER TABLE ... SET TBLPROPERTIES "
                + ", ".join(f"'delta.feature.{n}' = 'supported'" for n in manual) + ".")
        return required.merge(current)

    # ---------------------------------------------------------------- client support
    def checkCanRead(self, client: "ClientCapabilities | None" = None, table: Optional[str] = None) -> None:
        c = client or ClientCapabilities.deltalog()
        supported = {n.lower() for n in c.readerFeatures}
        missing = sorted(n for n in readerFeaturesNeeded(self) if n.lower() not in supported)
        if self.minReaderVersion > c.maxReaderVersion or missing:
            raise _unsupported(self, "read", missing, table, c)

    def checkCanWrite(self, client: "ClientCapabilities | None" = None, table: Optional[str] = None) -> None:
        c = client or ClientCapabilities.deltalog()
        needed = {f.name for f in self.implicitlyAndExplicitlySupportedFeatures} | set(self.unknownFeatureNames)
        supported = {n.lower() for n in c.writerFeatures}
        missing = sorted(n for n in needed if n.lower() not in supported)
        if self.minWriterVersion > c.maxWriterVersion or self.minReaderVersion > c.maxReaderVersion or missing:
            raise _unsupported(self, "write", missing, table, c)


def readerFeaturesNeeded(p: Protocol) -> FrozenSet[str]:
    """Names of the features a reader must implement to read a table with protocol ``p``."""
    if p.supportsReaderFeatures:
        return frozenset(p.readerFeatureNames)
    if p.minReaderVersion >= 2:
        return frozenset({"columnMapping"})
    return frozenset()


@dataclass(frozen=True)
class ClientCapabilities:
    """What a Delta client implements: the highest versions and the features it supports."""

    maxReaderVersion: int
    maxWriterVersion: int
    readerFeatures: FrozenSet[str]
    writerFeatures: FrozenSet[str]

    @staticmethod
    def fromJsonDict(d: Mapping[str, Any]) -> "ClientCapabilities":
        return ClientCapabilities(int(d.get("maxReaderVersion", 3)), int(d.get("maxWriterVersion", 7)),
                                  frozenset(d.get("readerFeatures", [])), frozenset(d.get("writerFeatures", [])))

    @staticmethod
    def deltalog() -> "ClientCapabilities":
        """What this version of deltalog supports. Later issues extend these sets."""
        legacy = {"appendOnly", "invariants", "checkConstraints", "changeDataFeed",
                  "generatedColumns", "columnMapping", "identityColumns"}
        common = legacy | {"deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck",
                           "domainMetadata", "rowTracking", "inCommitTimestamp", "checkpointProtection",
                           "clustering", "allowColumnDefaults"}
        # Reading also covers features whose data Spark 4.2 reads natively (variants, shredding,
        # geometry) and catalog-managed tables through their published commits.
        reader = common | {"typeWidening", "typeWidening-preview", "variantType", "variantType-preview",
                           "variantShredding", "variantShredding-preview", "geospatial", "geospatial-dev",
                           "catalogManaged", "icebergCompatV1", "icebergCompatV2", "collations",
                           "collations-preview", "materializePartitionColumns"}
        # typeWidening: writers change a column type only by ALTER COLUMN TYPE (recorded in delta.typeChanges).
        # variantType: variants are written unshredded, with a nullCount and no min/max statistics.
        return ClientCapabilities(3, 7, frozenset(reader), frozenset(common | {"typeWidening", "variantType"}))


# -------------------------------------------------------------------- helpers (module level)
def minimumRequiredVersions(features: Iterable[TableFeature]) -> Tuple[int, int]:
    fs = list(features)
    return (max([1] + [f.minReaderVersion for f in fs]), max([1] + [f.minWriterVersion for f in fs]))


def _sorted(features: Iterable[TableFeature]) -> List[TableFeature]:
    return sorted(features, key=lambda f: f.name)


def _boolValue(key: str, value: Optional[str]) -> bool:
    if value is None:
        return False
    low = value.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    raise InvalidTablePropertyError(
        "DELTA_INVALID_TABLE_PROPERTY_VALUE", f"Property {key}={value!r} is not a boolean; use 'true' or 'false'.")


def _unknownFeature(names: Sequence[str]) -> TableFeatureError:
    return TableFeatureError(
        "DELTA_UNSUPPORTED_FEATURES_IN_CONFIG",
        f"Unknown table feature(s): {', '.join(sorted(names))}. Known features: "
        f"{', '.join(sorted(f.name for f in TableFeatures.all()))}.")


def _unsupported(p: Protocol, access: str, missing: List[str], table: Optional[str],
                 c: ClientCapabilities) -> UnsupportedTableFeatureError:
    where = f"Table {table}" if table else "The table"
    tooNew = p.minReaderVersion > c.maxReaderVersion or (access == "write" and p.minWriterVersion > c.maxWriterVersion)
    needs = []
    if tooNew:
        needs.append(f"protocol versions ({p.minReaderVersion},{p.minWriterVersion}) above what this client "
                     f"supports ({c.maxReaderVersion},{c.maxWriterVersion})")
    if missing:
        needs.append(f"{access}er feature(s) this client does not support: {', '.join(missing)}")
    advice = ("Use a client that supports them, or remove the feature(s) with ALTER TABLE ... DROP FEATURE "
              "where possible." if missing else
              "A newer Delta client upgraded the table; use a client that supports these protocol versions.")
    return UnsupportedTableFeatureError(
        table, access, missing, f"{where} (protocol {p.simpleString}) needs {' and '.join(needs)}. {advice}")


def supportedFeaturesFromTableConfigs(conf: Mapping[str, str]) -> FrozenSet[TableFeature]:
    """Features requested through ``delta.feature.<name> = supported|enabled``."""
    found = set()
    unknown = []
    for key, value in conf.items():
        if not key.startswith(FEATURE_PROP_PREFIX):
            continue
        name = key[len(FEATURE_PROP_PREFIX):]
        status = (value or "").lower()
        if status not in (FEATURE_PROP_SUPPORTED, FEATURE_PROP_ENABLED):
            raise TableFeatureError(
                "DELTA_UNSUPPORTED_FEATURE_STATUS",
                f"{key}={value!r}: a feature can only be set to 'supported' (features cannot be "
                f"removed this way; use ALTER TABLE ... DROP FEATURE).")
        f = TableFeatures.byName(name)
        if f is None:
            unknown.append(key)
        else:
            found.add(f)
    if unknown:
        raise TableFeatureError(
            "DELTA_UNSUPPORTED_FEATURES_IN_CONFIG",
            f"Unknown table feature(s) in properties: {', '.join(sorted(unknown))}. Known features: "
            f"{', '.join(sorted(f.name for f in TableFeatures.all()))}.")
    return frozenset(found)


def _versionProp(conf: Mapping[str, str], key: str) -> Optional[int]:
    v = conf.get(key)
    if v is None:
        return None
    text = str(v).strip()
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    else:
        raise InvalidTablePropertyError(
            "DELTA_PROTOCOL_PROPERTY_NOT_INT",
            f"{key}={v!r} is not an integer; set it to a protocol version number.") from None


def protocolVersionsFromTableConf(conf: Mapping[str, str]) -> Tuple[Optional[int], Optional[int]]:
    r, w = _versionProp(conf, MIN_READER_VERSION_PROP), _versionProp(conf, MIN_WRITER_VERSION_PROP)
    if r is not None and r not in SUPPORTED_READER_VERSIONS:
        raise InvalidProtocolVersionError(
            "DELTA_INVALID_PROTOCOL_VERSION", f"{MIN_READER_VERSION_PROP}={r} is invalid; use 1, 2 or 3.")
    if w is not None and w not in SUPPORTED_WRITER_VERSIONS:
        raise InvalidProtocolVersionError(
            "DELTA_INVALID_PROTOCOL_VERSION", f"{MIN_WRITER_VERSION_PROP}={w} is invalid; use 1 to 7.")
    return r, w


def isTableProtocolProperty(key: str) -> bool:
    return (key in (MIN_READER_VERSION_PROP, MIN_WRITER_VERSION_PROP, IGNORE_PROTOCOL_DEFAULTS_PROP)
            or key.startswith(FEATURE_PROP_PREFIX))


def filterProtocolPropsFromTableProps(props: Mapping[str, str]) -> Dict[str, str]:
    return {k: v for k, v in props.items() if not isTableProtocolProperty(k)}


def sessionDefaultTableProperties(sessionDefaults: Mapping[str, str]) -> Dict[str, str]:
    """Non-protocol table properties set as session defaults (``…defaults.<prop>``)."""
    out = {}
    for k, v in sessionDefaults.items():
        if k.startswith(SESSION_DEFAULTS_PREFIX):
            prop = "delta." + k[len(SESSION_DEFAULTS_PREFIX):]
            if not isTableProtocolProperty(prop) and not k.startswith(DEFAULT_FEATURE_PROP_PREFIX):
                out[prop] = v
    return out


def assertMetadataContainsNoProtocolProps(conf: Mapping[str, str]) -> None:
    if MIN_READER_VERSION_PROP in conf:
        raise DeltalogAssertionError(
            "DELTA_PROTOCOL_PROPERTY_IN_METADATA",
            f"Should not have the protocol version ({MIN_READER_VERSION_PROP}) as part of table properties")
    if MIN_WRITER_VERSION_PROP in conf:
        raise DeltalogAssertionError(
            "DELTA_PROTOCOL_PROPERTY_IN_METADATA",
            f"Should not have the protocol version ({MIN_WRITER_VERSION_PROP}) as part of table properties")
    if any(k.startswith(FEATURE_PROP_PREFIX) for k in conf):
        raise DeltalogAssertionError(
            "DELTA_PROTOCOL_PROPERTY_IN_METADATA",
            f"Should not have table features (starts with '{FEATURE_PROP_PREFIX}') as part of table properties")
    if IGNORE_PROTOCOL_DEFAULTS_PROP in conf:
        raise DeltalogAssertionError(
            "DELTA_PROTOCOL_PROPERTY_IN_METADATA",
            f"Should not have the table property {IGNORE_PROTOCOL_DEFAULTS_PROP} stored in table metadata")
