"""``explain(protocol, metadata)``: every feature of a table's protocol, and why it is there.

For each feature (known or not) the explanation gives the reasons it is in the protocol (the
enabling property, the schema fields, the feature that requires it, the legacy version that
implies it), whether it is reader-writer or writer-only, the legacy ``(reader, writer)`` version
that covers it, and whether it can be dropped. It also gives the lowest protocol with the same
features and the lowest protocol the metadata needs. All rules are ``deltalog.protocol``'s.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from deltalog.advisor.drop import DropInfo, drop_info
from deltalog.advisor.reasons import PREVIEW_OF, Reason, metadata_reasons
from deltalog.features import (
    TABLE_FEATURES_MIN_READER_VERSION,
    TABLE_FEATURES_MIN_WRITER_VERSION,
    MetadataView,
    TableFeature,
    TableFeatures,
    dependencyClosure,
)
from deltalog.protocol import Protocol, SUPPORTED_READER_VERSIONS, SUPPORTED_WRITER_VERSIONS

__all__ = ["FeatureExplanation", "ProtocolExplanation", "explain", "metadata_features"]

# Features some runtimes turn on together with another one (not a protocol dependency).
_COMPANIONS: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "v2Checkpoint": (("clustering", "Databricks enables checkpoint V2 together with liquid clustering "
                                    "(table-protocol guide: 'enabling liquid clustering automatically enables "
                                    "checkpoint V2')"),),
}


@dataclass(frozen=True)
class FeatureExplanation:
    """One feature of the protocol.

    ``kind`` is ``reader-writer``, ``writer-only`` or ``unknown`` (a name deltalog does not know;
    then ``readerWriter`` tells whether it is listed in ``readerFeatures``). ``legacyVersion`` is the
    integer ``(reader, writer)`` pair that implies the feature (legacy features only);
    ``minProtocol`` the lowest protocol that can hold it. ``active`` is True when the metadata
    actually uses the feature (not only supports it).
    """

    name: str
    known: bool
    kind: str
    readerWriter: bool
    legacy: bool
    legacyVersion: Optional[Tuple[int, int]]
    minProtocol: Tuple[int, int]
    requires: Tuple[str, ...]
    reasons: Tuple[Reason, ...]
    active: bool
    implicit: bool
    drop: DropInfo
    enabledBy: str = ""

    def reasonKinds(self) -> Tuple[str, ...]:
        return tuple(r.kind for r in self.reasons)

    def __str__(self) -> str:
        head = f"{self.name} ({self.kind}"
        if self.legacyVersion:
            head += f", legacy: covered by protocol ({self.legacyVersion[0]},{self.legacyVersion[1]})"
        elif self.known:
            head += f", table feature: needs protocol ({self.minProtocol[0]},{self.minProtocol[1]}) with it listed"
        head += ")" + ("" if self.active or not self.known else " [supported, not used by the metadata]")
        lines = [head]
        lines += [f"    why:  {r.detail}" for r in self.reasons]
        if self.requires:
            lines.append(f"    requires: {', '.join(self.requires)}")
        lines.append(f"    drop: {self.drop.how}")
        return "\n".join(lines)

    def toJson(self) -> Dict[str, Any]:
        return {"name": self.name, "known": self.known, "kind": self.kind, "readerWriter": self.readerWriter,
                "legacy": self.legacy, "legacyVersion": list(self.legacyVersion) if self.legacyVersion else None,
                "minProtocol": list(self.minProtocol), "requires": list(self.requires),
                "reasons": [r.toJson() for r in self.reasons], "active": self.active, "implicit": self.implicit,
                "enabledBy": self.enabledBy, "drop": self.drop.toJson()}


@dataclass(frozen=True)
class ProtocolExplanation:
    """The explanation of a whole protocol (``explain``'s result)."""

    protocol: Protocol
    features: Tuple[FeatureExplanation, ...]
    lowestEquivalentProtocol: Protocol
    lowestProtocolForMetadata: Optional[Protocol]
    unusedFeatures: Tuple[str, ...]
    warnings: Tuple[str, ...] = ()
    table: Optional[str] = None
    version: Optional[int] = None

    @property
    def featureNames(self) -> Tuple[str, ...]:
        return tuple(f.name for f in self.features)

    def feature(self, name: str) -> FeatureExplanation:
        """The explanation of ``name`` (case-insensitive); KeyError when the protocol lacks it."""
        low = name.lower()
        for f in self.features:
            if f.name.lower() == low:
                return f
        raise KeyError(f"{name} is not in protocol {self.protocol.simpleString}")

    def __str__(self) -> str:
        p = self.protocol
        where = f"Table {self.table}" + (f" (version {self.version})" if self.version is not None else "") \
            if self.table else "Table"
        lines = [f"{where}: protocol ({p.minReaderVersion},{p.minWriterVersion})"
                 + (f" readerFeatures={sorted(p.readerFeatures)}" if p.readerFeatures is not None else "")
                 + (f" writerFeatures={sorted(p.writerFeatures)}" if p.writerFeatures is not None else "")]
        lines += [f"  ! {w}" for w in self.warnings]
        if not self.features:
            lines.append("  no table features: any Delta client can read and write it")
        for f in self.features:
            lines += ["  " + line for line in str(f).split("\n")]
        lines.append(f"  lowest protocol with the same features: {_pstr(self.lowestEquivalentProtocol)}")
        if self.lowestProtocolForMetadata is not None:
            lines.append(f"  lowest protocol the metadata needs:     {_pstr(self.lowestProtocolForMetadata)}")
        if self.unusedFeatures:
            lines.append(f"  supported but unused by the metadata:   {', '.join(self.unusedFeatures)}")
        return "\n".join(lines)

    def toJson(self) -> Dict[str, Any]:
        return {"table": self.table, "version": self.version, "protocol": self.protocol.toJsonDict(),
                "features": [f.toJson() for f in self.features],
                "lowestEquivalentProtocol": self.lowestEquivalentProtocol.toJsonDict(),
                "lowestProtocolForMetadata": (self.lowestProtocolForMetadata.toJsonDict()
                                              if self.lowestProtocolForMetadata is not None else None),
                "unusedFeatures": list(self.unusedFeatures), "warnings": list(self.warnings)}


def _pstr(p: Protocol) -> str:
    s = f"({p.minReaderVersion},{p.minWriterVersion})"
    if p.readerFeatures is not None:
        s += f" readerFeatures={sorted(p.readerFeatures)}"
    if p.writerFeatures is not None:
        s += f" writerFeatures={sorted(p.writerFeatures)}"
    return s


def metadata_features(metadata: Any, protocol: Protocol) -> frozenset:
    """Features the metadata itself needs, closed over dependencies: the registry predicates
    evaluated against ``protocol``, plus the preview name a table already supports when the
    released feature's condition holds (e.g. ``typeWidening-preview`` with
    ``delta.enableTypeWidening = true``)."""
    m = MetadataView.of(metadata)
    used = [f for f in TableFeatures.all()
            if f.metadataRequiresFeatureToBeEnabled is not None and f.metadataRequiresFeatureToBeEnabled(m, protocol)]
    for preview, base in PREVIEW_OF.items():
        f, b = TableFeatures.get(preview), TableFeatures.get(base)
        pred = b.metadataRequiresFeatureToBeEnabled
        if protocol.isFeatureSupported(f) and pred is not None and pred(m, None):
            used.append(f)
    return dependencyClosure(used)


def _legacy_version(f: TableFeature) -> Optional[Tuple[int, int]]:
    return (max(1, f.minReaderVersion), f.minWriterVersion) if f.isLegacyFeature else None


def _min_protocol(f: TableFeature) -> Tuple[int, int]:
    if f.isLegacyFeature:
        return (max(1, f.minReaderVersion), f.minWriterVersion)
    return (TABLE_FEATURES_MIN_READER_VERSION if f.isReaderWriterFeature else 1, TABLE_FEATURES_MIN_WRITER_VERSION)


def _ordered_names(p: Protocol) -> List[str]:
    """Every feature of ``p``: implied legacy ones (by version), then listed names, sorted."""
    implied = sorted(f.name for f in p.implicitlySupportedFeatures)
    listed = sorted(p.readerAndWriterFeatureNames, key=lambda n: n.lower())
    out: List[str] = []
    seen = set()
    for n in implied + listed:
        if n.lower() not in seen:
            seen.add(n.lower())
            out.append(n)
    return out


def _warnings(p: Protocol) -> List[str]:
    w = []
    if p.minReaderVersion not in SUPPORTED_READER_VERSIONS:
        w.append(f"minReaderVersion {p.minReaderVersion} is not a defined Delta protocol version (1, 2 or 3): "
                 f"no client can read this table")
    if p.minWriterVersion not in SUPPORTED_WRITER_VERSIONS:
        w.append(f"minWriterVersion {p.minWriterVersion} is not a defined Delta protocol version (1 to 7): "
                 f"no client can write this table")
    if p.unknownFeatureNames:
        w.append(f"unknown feature name(s) {', '.join(sorted(p.unknownFeatureNames))}: clients that do not "
                 f"implement them must refuse to " + ("read" if p.unknownFeatureNames & p.readerFeatureNames else "write")
                 + " the table")
    rw_only_in_writer = []
    if p.supportsReaderFeatures:
        for n in sorted(p.writerFeatureNames - p.readerFeatureNames):
            f = TableFeatures.byName(n)
            if f is not None and f.isReaderWriterFeature:
                rw_only_in_writer.append(n)
    if rw_only_in_writer:
        w.append(f"reader-writer feature(s) {', '.join(rw_only_in_writer)} are listed in writerFeatures only; "
                 f"readers that check readerFeatures will not see them")
    return w


def _feature_explanation(p: Protocol, name: str, m: MetadataView, used: frozenset) -> FeatureExplanation:
    f = TableFeatures.byName(name)
    if f is None:
        in_reader = any(n.lower() == name.lower() for n in p.readerFeatureNames)
        where = "readerFeatures and writerFeatures" if in_reader and name in p.writerFeatureNames else \
            ("readerFeatures" if in_reader else "writerFeatures")
        reasons = (Reason("listed", f"listed in {where}; deltalog does not know this feature (not a Delta "
                                    f"table feature name: a writer bug or a private preview), so no client "
                                    f"that follows the protocol can {'read' if in_reader else 'write'} the table",
                          name),)
        return FeatureExplanation(name, False, "unknown", in_reader, False, None,
                                  (TABLE_FEATURES_MIN_READER_VERSION if in_reader else 1, TABLE_FEATURES_MIN_WRITER_VERSION),
                                  (), reasons, False, False, drop_info(p, name, m))
    reasons: List[Reason] = []
    implicit = f in p.implicitlySupportedFeatures
    if implicit:
        versions = (f"reader version {f.minReaderVersion} and writer version {f.minWriterVersion} include it"
                    if f.minReaderVersion > 1 else f"writer version {f.minWriterVersion} includes it")
        reasons.append(Reason("legacy-version", f"implied by protocol ({p.minReaderVersion},{p.minWriterVersion}): "
                                                f"{versions}", f"({p.minReaderVersion},{p.minWriterVersion})"))
    from_metadata = metadata_reasons(f, m, p)
    reasons += from_metadata
    supported = p.implicitlyAndExplicitlySupportedFeatures
    for g in sorted(supported, key=lambda x: x.name):
        if f.name in g.requiredFeatureNames:
            reasons.append(Reason("dependency", f"required by {g.name}", g.name))
    for other, text in _COMPANIONS.get(f.name, ()):
        if p.isFeatureSupported(TableFeatures.get(other)):
            reasons.append(Reason("companion", text, other))
    active = f in used
    if not implicit and not any(r.kind in ("property", "schema", "dependency", "statement") for r in reasons):
        if f.isLegacyFeature:
            text = ("listed explicitly although nothing in the metadata uses it: moving a legacy protocol to "
                    "table features lists every feature the old version implied (the default (1,2) implies "
                    f"appendOnly and invariants), or it was added with delta.feature.{f.name} = 'supported'")
        else:
            text = ("listed in the protocol but nothing in the metadata uses it: added explicitly "
                    f"(delta.feature.{f.name} = 'supported'), by a writer's defaults, or its property was "
                    "turned off later")
        reasons.append(Reason("listed", text, f.name))
    return FeatureExplanation(f.name, True, "reader-writer" if f.isReaderWriterFeature else "writer-only",
                              f.isReaderWriterFeature, f.isLegacyFeature, _legacy_version(f), _min_protocol(f),
                              tuple(sorted(f.requiredFeatureNames)), tuple(reasons), active, implicit,
                              drop_info(p, f.name, m), f.enabledBy)


def explain(protocol: Protocol, metadata: Any = None, table: Optional[str] = None,
            version: Optional[int] = None) -> ProtocolExplanation:
    """Explain every feature of ``protocol`` against ``metadata`` (a ``Metadata``, a mapping with
    ``configuration`` / ``schemaString``, or None when only the protocol is known).

    Raises ``InvalidTablePropertyError`` when the metadata has a malformed property or schema.
    """
    m = MetadataView.of(metadata)
    needed = metadata_features(m, protocol)
    # Features kept by evidence the registry predicates do not cover (CLUSTER BY, DEFAULT values,
    # checkpoint protection, a catalog id) count as used too.
    evidenced = [f for f in protocol.implicitlyAndExplicitlySupportedFeatures
                 if any(r.kind in ("property", "schema", "statement") for r in metadata_reasons(f, m, protocol))]
    used = dependencyClosure(list(needed) + evidenced)
    features = tuple(_feature_explanation(protocol, n, m, used) for n in _ordered_names(protocol))
    if protocol.unknownFeatureNames:
        equivalent = protocol
    else:
        equivalent = protocol.denormalizedNormalized()
    for_metadata: Optional[Protocol] = None
    if metadata is not None:
        for_metadata = Protocol.of(3, 7).withFeatures(sorted(used, key=lambda f: f.name)).normalized()
    supported = {f.name for f in protocol.implicitlyAndExplicitlySupportedFeatures}
    unused = tuple(sorted(n for n in supported if TableFeatures.get(n) not in used)) if metadata is not None else ()
    return ProtocolExplanation(protocol, features, equivalent, for_metadata, unused, tuple(_warnings(protocol)),
                               table, version)
