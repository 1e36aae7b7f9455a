"""``plan_change``: what a property change, ADD FEATURE or DROP FEATURE would do to a protocol.

Nothing is written. The resulting protocol is computed with the steps the engine takes when it
commits the change (``io.deltalog.txn.OptimisticTransaction.updateMetadata`` for an existing
table, mirrored here with the same ``deltalog.protocol`` rules):

1. ``delta.minReaderVersion`` / ``delta.minWriterVersion`` -> ``upgradeTableProtocol``;
2. every ``delta.feature.<name>`` (sorted by name) -> ``addFeatureSupport``;
3. protocol properties are stripped from the configuration, then
   ``upgradeProtocolFromMetadataForExistingTable`` adds what the new metadata enables;
4. the result must not lose a feature (``assertCanUpgradeTo``).

``add_feature=X`` is ``SET TBLPROPERTIES ('delta.feature.X' = 'supported')``; ``drop_feature=X``
is ``Protocol.dropFeatureSupport`` (the protocol side of ``ALTER TABLE ... DROP FEATURE``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from deltalog.advisor.clients import Client, load_clients
from deltalog.advisor.compatibility import CompatibilityReport, compatibility
from deltalog.advisor.drop import PRE_DOWNGRADE_STEPS
from deltalog.exceptions import UnsupportedTableFeatureError
from deltalog.features import MetadataView, TableFeatures
from deltalog.protocol import (
    FEATURE_PROP_PREFIX,
    ClientCapabilities,
    Protocol,
    filterProtocolPropsFromTableProps,
    protocolVersionsFromTableConf,
    supportedFeaturesFromTableConfigs,
)

__all__ = ["ProtocolChangePlan", "AccessChange", "plan_change", "apply_property_changes", "parse_property_changes"]


@dataclass(frozen=True)
class AccessChange:
    """A client version whose read or write access changes (``lost`` or gained)."""

    client: str
    version: str
    access: str  # "read" | "write"
    lost: bool
    missing: Tuple[str, ...] = ()
    certain: bool = True

    def __str__(self) -> str:
        what = ("loses" if self.certain else "may lose") if self.lost else "gains"
        tail = f" (missing {', '.join(self.missing)})" if self.missing else ""
        return f"{self.client} {self.version} {what} {self.access} access{tail}"

    def toJson(self) -> Dict[str, Any]:
        return dataclasses.asdict(self) | {"missing": list(self.missing)}


@dataclass(frozen=True)
class ProtocolChangePlan:
    """The outcome of a planned change (nothing is written)."""

    change: str
    before: Protocol
    after: Protocol
    configurationAfter: Dict[str, str]
    featuresAdded: Tuple[str, ...]
    featuresRemoved: Tuple[str, ...]
    accessChanges: Tuple[AccessChange, ...]
    compatibilityBefore: CompatibilityReport
    compatibilityAfter: CompatibilityReport
    steps: Tuple[str, ...] = ()
    notes: Tuple[str, ...] = ()
    engineRefusal: Optional[str] = None
    oldestVersions: Tuple[Tuple[str, str, Optional[str], Optional[str]], ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def lostRead(self) -> Tuple[AccessChange, ...]:
        return tuple(a for a in self.accessChanges if a.lost and a.access == "read")

    @property
    def lostWrite(self) -> Tuple[AccessChange, ...]:
        return tuple(a for a in self.accessChanges if a.lost and a.access == "write")

    def __str__(self) -> str:
        lines = [f"Plan: {self.change}",
                 f"  protocol: {self.before.simpleString}  ->  {self.after.simpleString}"
                 + ("" if self.changed else "  (unchanged)")]
        if self.featuresAdded:
            lines.append(f"  features added:   {', '.join(self.featuresAdded)}")
        if self.featuresRemoved:
            lines.append(f"  features removed: {', '.join(self.featuresRemoved)}")
        for s in self.steps:
            lines.append(f"  first: {s}")
        lost = [a for a in self.accessChanges if a.lost]
        gained = [a for a in self.accessChanges if not a.lost]
        if lost:
            lines.append("  clients that lose access (latest listed versions):")
            lines += [f"    {NO_MARK} {a}" for a in lost]
        else:
            lines.append("  no listed client (latest version) loses read or write access")
        if gained:
            lines.append("  clients that gain access:")
            lines += [f"    {OK_MARK} {a}" for a in gained]
        if self.oldestVersions:
            lines.append("  oldest listed version with access (before -> after):")
            lines += [f"    {c} {access}: {b or 'none'} -> {a or 'none'}" for c, access, b, a in self.oldestVersions]
        for n in self.notes:
            lines.append(f"  note: {n}")
        if self.engineRefusal:
            lines.append(f"  deltalog cannot commit this change: {self.engineRefusal}")
        return "\n".join(lines)

    def toJson(self) -> Dict[str, Any]:
        return {"change": self.change, "before": self.before.toJsonDict(), "after": self.after.toJsonDict(),
                "changed": self.changed, "configurationAfter": self.configurationAfter,
                "featuresAdded": list(self.featuresAdded), "featuresRemoved": list(self.featuresRemoved),
                "accessChanges": [a.toJson() for a in self.accessChanges], "steps": list(self.steps),
                "notes": list(self.notes), "engineRefusal": self.engineRefusal,
                "oldestVersions": [{"client": c, "access": x, "before": b, "after": a}
                                   for c, x, b, a in self.oldestVersions],
                "compatibilityAfter": self.compatibilityAfter.toJson()}


OK_MARK, NO_MARK = "\u2705", "\u274c"


def parse_property_changes(text: str) -> Dict[str, Optional[str]]:
    """``'k1=v1, k2=v2'`` (also ``;`` separated) -> ``{k1: v1, k2: v2}``; ``'!k'`` or ``'k='``
    (empty value) unsets ``k``. Raises ``InvalidTablePropertyError`` for an entry without ``=``."""
    from deltalog.exceptions import InvalidTablePropertyError
    out: Dict[str, Optional[str]] = {}
    for part in [p.strip() for chunk in text.split(";") for p in chunk.split(",")]:
        if not part:
            continue
        if part.startswith("!"):
            out[part[1:].strip()] = None
            continue
        if "=" not in part:
            raise InvalidTablePropertyError(
                "DELTA_INVALID_TABLE_PROPERTY_VALUE",
                f"'{part}' is not a property assignment; write key=value (e.g. delta.enableDeletionVectors=true) "
                f"or !key to unset a property.")
        k, v = part.split("=", 1)
        k, v = k.strip().strip("'\""), v.strip().strip("'\"")
        out[k] = v if v != "" else None
    return out


def apply_property_changes(current: Protocol, metadata: Any,
                           changes: Mapping[str, Optional[str]]) -> Tuple[Protocol, Dict[str, str]]:
    """The protocol and persisted configuration after ``ALTER TABLE ... SET/UNSET TBLPROPERTIES``
    (None values unset). Same steps as the engine's ``updateMetadata`` on an existing table."""
    m = MetadataView.of(metadata)
    conf = dict(m.configuration)
    for k, v in changes.items():
        if v is None:
            conf.pop(k, None)
        else:
            conf[k] = v
    p = current
    r, w = protocolVersionsFromTableConf(conf)
    if r is not None or w is not None:
        p = p.upgradeTableProtocol(r if r is not None else p.minReaderVersion,
                                   w if w is not None else p.minWriterVersion)
    for f in sorted(supportedFeaturesFromTableConfigs(conf), key=lambda x: x.name):
        p = p.addFeatureSupport(f.name)
    cleaned = filterProtocolPropsFromTableProps(conf)
    view = m.withConfiguration(cleaned)
    upgraded = Protocol.upgradeProtocolFromMetadataForExistingTable(view, p)
    if upgraded is not None:
        p = upgraded
    if p != current:
        current.assertCanUpgradeTo(p)
    # The engine validates the booleans it reads on every commit (appendOnly) the same way.
    view.boolProp("delta.appendOnly")
    return p, cleaned


_OFF_VALUES = {"false", "none", "classic"}


def _turned_off_notes(changes: Mapping[str, Optional[str]], after: Protocol) -> List[str]:
    """Turning a feature's property off leaves the feature in the protocol (table-protocol
    guide: only DROP FEATURE downgrades)."""
    from deltalog.advisor.reasons import PROPERTY_KEYS
    by_key = {v: k for k, v in PROPERTY_KEYS.items()}
    out = []
    for key, value in changes.items():
        name = by_key.get(key)
        if name is None and key.lower().startswith("delta.constraints.") and value is None:
            name = "checkConstraints"
        if name is None or not (value is None or value.strip().lower() in _OFF_VALUES):
            continue
        f = TableFeatures.get(name)
        if after.isFeatureSupported(f):
            out.append(f"turning {key} off does not remove {name} from the protocol; "
                       + (f"ALTER TABLE ... DROP FEATURE {name} does" if f.isRemovable
                          else f"{name} cannot be dropped"))
    return out


def _names(p: Protocol) -> set:
    return {f.name for f in p.implicitlyAndExplicitlySupportedFeatures} | set(p.unknownFeatureNames)


def _access_changes(before: CompatibilityReport, after: CompatibilityReport) -> Tuple[AccessChange, ...]:
    out: List[AccessChange] = []
    for b, a in zip(before.clients, after.clients):
        vb, va = b.latest, a.latest
        for access, before_a, after_a in (("read", vb.read, va.read), ("write", vb.write, va.write)):
            if not after_a.applicable or before_a.ok == after_a.ok:
                continue
            if before_a.ok and not after_a.ok:  # lost (for sure, or maybe when now unknown)
                out.append(AccessChange(b.client.id, va.row.version, access, True,
                                        after_a.missing + after_a.unknown, after_a.ok is False))
            elif after_a.ok and before_a.ok is False:
                out.append(AccessChange(b.client.id, va.row.version, access, False))
    return tuple(out)


def _oldest_versions(before: CompatibilityReport, after: CompatibilityReport
                     ) -> Tuple[Tuple[str, str, Optional[str], Optional[str]], ...]:
    out = []
    for b, a in zip(before.clients, after.clients):
        if b.firstReadable != a.firstReadable:
            out.append((b.client.id, "read", b.firstReadable, a.firstReadable))
        if b.firstWritable != a.firstWritable:
            out.append((b.client.id, "write", b.firstWritable, a.firstWritable))
    return tuple(out)


def plan_change(protocol: Protocol, metadata: Any = None, property_changes: Optional[Mapping[str, Optional[str]]] = None,
                add_feature: Optional[str] = None, drop_feature: Optional[str] = None,
                clients: Optional[Tuple[Client, ...]] = None) -> ProtocolChangePlan:
    """Plan exactly one change: ``property_changes`` (``{key: value}``, None = unset),
    ``add_feature`` or ``drop_feature``. Raises the error the change itself would raise
    (``TableFeatureError``, ``InvalidTablePropertyError``, ``InvalidProtocolVersionError``,
    ``ProtocolDowngradeError``) so a refused change is refused before it is tried."""
    given = [x is not None for x in (property_changes, add_feature, drop_feature)]
    if sum(given) != 1:
        raise ValueError("plan_change needs exactly one of property_changes, add_feature, drop_feature")
    m = MetadataView.of(metadata)
    steps: List[str] = []
    notes: List[str] = []
    if drop_feature is not None:
        f = TableFeatures.byName(drop_feature)
        after = protocol.dropFeatureSupport(drop_feature)
        assert f is not None  # dropFeatureSupport raised for unknown names
        change = f"ALTER TABLE ... DROP FEATURE {f.name}"
        conf = dict(m.configuration)
        if f.name in PRE_DOWNGRADE_STEPS:
            steps.append(PRE_DOWNGRADE_STEPS[f.name])
        if f.name == "checkConstraints":
            left = sorted(k for k in conf if k.lower().startswith("delta.constraints."))
            if left:
                steps[-1] += ": " + ", ".join(k[len("delta.constraints."):] for k in left)
        if f.requiresHistoryProtection:
            fast = after.addFeatureSupport("checkpointProtection")
            notes.append("history protection: delta-spark's default fast drop also adds checkpointProtection "
                         f"in the same commit, giving {fast.simpleString}; DROP FEATURE ... TRUNCATE HISTORY "
                         "(after the log retention period) gives the protocol above")
    else:
        if add_feature is not None:
            f = TableFeatures.byName(add_feature)
            key = FEATURE_PROP_PREFIX + (f.name if f is not None else add_feature)
            changes: Mapping[str, Optional[str]] = {key: "supported"}
            change = f"ALTER TABLE ... SET TBLPROPERTIES ('{key}' = 'supported')"
        else:
            changes = dict(property_changes or {})
            sets = [f"'{k}' = '{v}'" for k, v in changes.items() if v is not None]
            unsets = [f"'{k}'" for k, v in changes.items() if v is None]
            parts = []
            if sets:
                parts.append(f"SET TBLPROPERTIES ({', '.join(sets)})")
            if unsets:
                parts.append(f"UNSET TBLPROPERTIES ({', '.join(unsets)})")
            change = "ALTER TABLE ... " + " / ".join(parts) if parts else "no property change"
        after, conf = apply_property_changes(protocol, m, changes)
        notes += _turned_off_notes(changes, after)
        if add_feature is not None:
            fa = TableFeatures.byName(add_feature)
            if fa is not None and fa.isAutoEnabledByMetadata and not fa.isLegacyFeature:
                notes.append(f"'{fa.name}' is now supported but not enabled: {fa.enabledBy} turns it on")
    if "delta.enableInCommitTimestamps" in conf and m.boolProp("delta.enableInCommitTimestamps") is False \
            and MetadataView.of({"configuration": conf}).boolProp("delta.enableInCommitTimestamps"):
        notes.append("enabling in-commit timestamps on an existing table also records "
                     "delta.inCommitTimestampEnablementVersion / -Timestamp in the same commit")
    if "rowTracking" in _names(after) - _names(protocol):
        notes.append("supporting row tracking also records delta.rowTracking.materializedRowIdColumnName / "
                     "-RowCommitVersionColumnName (_row-id-col-<uuid> / _row-commit-version-col-<uuid>) in the same "
                     "commit, and re-adds the table's files with row ids (backfill)")
    if "clustering" in _names(after) - _names(protocol):
        notes.append("Databricks Runtime also enables v2Checkpoint when liquid clustering is enabled; "
                     "delta-spark and deltalog only add its dependency domainMetadata")
    refusal = None
    if after != protocol:
        try:
            after.checkCanWrite(ClientCapabilities.deltalog())
        except UnsupportedTableFeatureError as e:
            refusal = f"[{e.errorClass}] {e.message}"
    table = clients if clients is not None else load_clients()
    before_c = compatibility(protocol, client_table=table)
    after_c = compatibility(after, client_table=table)
    added = tuple(sorted(_names(after) - _names(protocol)))
    removed = tuple(sorted(_names(protocol) - _names(after)))
    return ProtocolChangePlan(change, protocol, after, conf, added, removed, _access_changes(before_c, after_c),
                              before_c, after_c, tuple(steps), tuple(notes), refusal,
                              _oldest_versions(before_c, after_c))
