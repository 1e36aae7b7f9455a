"""Whether, and how, a feature can be dropped from a table's protocol.

The verdict and the resulting protocol come from ``Protocol.dropFeatureSupport`` (the rule
``ALTER TABLE ... DROP FEATURE`` uses); this module adds what a user must do first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from deltalog.exceptions import TableFeatureError
from deltalog.features import MetadataView, TableFeature, TableFeatures
from deltalog.protocol import Protocol

__all__ = ["DropInfo", "drop_info", "PRE_DOWNGRADE_STEPS"]

# What DROP FEATURE needs done to the table before the protocol may lose the feature.
PRE_DOWNGRADE_STEPS: Dict[str, str] = {
    "deletionVectors": "set delta.enableDeletionVectors = false and rewrite every file that has a deletion "
                       "vector (REORG TABLE ... APPLY (PURGE))",
    "columnMapping": "rewrite the data files with the display column names and set delta.columnMapping.mode = none",
    "typeWidening": "rewrite the files written before a type change and remove delta.typeChanges column metadata",
    "typeWidening-preview": "rewrite the files written before a type change and remove delta.typeChanges column metadata",
    "inCommitTimestamp": "unset delta.enableInCommitTimestamps and its enablement-version properties",
    "rowTracking": "set delta.rowTrackingSuspended = true and unset delta.enableRowTracking (row ids are "
                   "un-backfilled; the delta.rowTracking domain is removed with the downgrade)",
    "domainMetadata": "remove every domain (no feature that needs domains may remain)",
    "v2Checkpoint": "set delta.checkpointPolicy = classic and write a classic checkpoint",
    "checkConstraints": "drop every CHECK constraint (ALTER TABLE ... DROP CONSTRAINT)",
    "materializePartitionColumns": "unset delta.enableMaterializePartitionColumnsFeature",
    "coordinatedCommits-preview": "unset the delta.coordinatedCommits.* properties",
    "checkpointProtection": "wait until the protected history has expired, then DROP FEATURE ... TRUNCATE HISTORY",
    "geospatial": "drop every geometry / geography column",
    "geospatial-dev": "drop every geometry / geography column",
}


@dataclass(frozen=True)
class DropInfo:
    """The answer to "can this feature be dropped?".

    ``resultingProtocol`` is the protocol after ``DROP FEATURE`` (deltalog's rule; ``None`` when
    refused). ``errorClass`` names the refusal. ``steps`` must be done first; ``historyProtection``
    says old readers must be kept from replaying older commits (delta-spark's fast drop adds
    ``checkpointProtection`` in the same commit; the alternative is ``TRUNCATE HISTORY``).
    """

    droppable: bool
    how: str
    resultingProtocol: Optional[Protocol] = None
    errorClass: Optional[str] = None
    steps: Tuple[str, ...] = ()
    historyProtection: bool = False

    def __str__(self) -> str:
        return self.how

    def toJson(self) -> Dict[str, Any]:
        return {"droppable": self.droppable, "how": self.how,
                "resultingProtocol": self.resultingProtocol.toJsonDict() if self.resultingProtocol else None,
                "errorClass": self.errorClass, "steps": list(self.steps),
                "historyProtection": self.historyProtection}


def _steps(f: TableFeature, m: Optional[MetadataView]) -> Tuple[str, ...]:
    step = PRE_DOWNGRADE_STEPS.get(f.name)
    if step is None:
        return ()
    if f.name == "checkConstraints" and m is not None:
        names = sorted(k[len("delta.constraints."):] for k in m.configuration
                       if k.lower().startswith("delta.constraints."))
        if names:
            step += f": {', '.join(names)}"
    return (step,)


def drop_info(protocol: Protocol, name: str, metadata: Optional[MetadataView] = None) -> DropInfo:
    """Can ``name`` be dropped from ``protocol``, with what result and which steps first."""
    f = TableFeatures.byName(name)
    if f is None:
        return DropInfo(False, f"'{name}' is not a feature deltalog knows; it cannot be dropped with deltalog "
                               f"(a client that does not implement it must refuse the table).",
                        errorClass="DELTA_UNSUPPORTED_FEATURES_IN_CONFIG")
    try:
        after = protocol.dropFeatureSupport(f.name)
    except TableFeatureError as e:
        if e.errorClass == "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE":
            if f.isLegacyFeature and f in protocol.implicitlySupportedFeatures:
                how = (f"no: legacy feature implied by writer version {protocol.minWriterVersion} (>= "
                       f"{f.minWriterVersion}); it is not removable and protocol versions are never lowered "
                       f"(only DROP FEATURE of a removable feature downgrades a protocol)")
            else:
                how = "no: DROP FEATURE refuses it (not a removable feature); turning its property off keeps it in the protocol"
        elif e.errorClass == "DELTA_FEATURE_DROP_DEPENDENT_FEATURE":
            how = f"not yet: {e.message}"
        elif e.errorClass == "DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE":
            how = f"no: {e.message}"
        else:
            how = f"no: {e.message}"
        return DropInfo(False, how, errorClass=e.errorClass)
    steps = _steps(f, metadata)
    history = f.requiresHistoryProtection
    how = f"yes: ALTER TABLE ... DROP FEATURE {f.name} gives protocol {after.simpleString}"
    if steps:
        how += f"; first {steps[0]}"
    if history:
        how += ("; history protection needed (delta-spark's fast drop also adds checkpointProtection, or use "
                "TRUNCATE HISTORY after the log retention period)")
    return DropInfo(True, how, after, None, steps, history)
