"""Protocol compatibility advisor: explain a table's protocol and who can still read or write it.

Pure Python (no JVM)::

    from deltalog.advisor import explain, compatibility, plan_change
    from deltalog._log_reader import read_protocol_and_metadata

    state = read_protocol_and_metadata("/data/events")
    print(explain(state.protocol, state.metadata))          # why each feature is there
    print(compatibility(state.protocol))                    # read / write per client
    print(plan_change(state.protocol, state.metadata,
                      property_changes={"delta.enableDeletionVectors": "true"}))

The same answers are available as ``DeltaTable.explainProtocol()`` / ``.compatibility()`` and
the ``deltalog protocol PATH`` command.
"""
from __future__ import annotations

from deltalog.advisor.clients import Client, ClientVersion, load_clients
from deltalog.advisor.compatibility import Access, ClientCompatibility, CompatibilityReport, compatibility
from deltalog.advisor.drop import DropInfo
from deltalog.advisor.explain import FeatureExplanation, ProtocolExplanation, explain
from deltalog.advisor.plan import AccessChange, ProtocolChangePlan, parse_property_changes, plan_change
from deltalog.advisor.reasons import Reason

__all__ = ["Access", "AccessChange", "Client", "ClientCompatibility", "ClientVersion", "CompatibilityReport",
           "DropInfo", "FeatureExplanation", "ProtocolChangePlan", "ProtocolExplanation", "Reason",
           "compatibility", "explain", "load_clients", "parse_property_changes", "plan_change"]
