"""The ``deltalog`` command line (no JVM needed).

::

    deltalog protocol PATH                      # protocol + which clients can read / write it
    deltalog protocol PATH --explain            # + why each feature is there, can it be dropped
    deltalog protocol PATH --plan 'delta.enableDeletionVectors=true'
    deltalog protocol PATH --add-feature clustering
    deltalog protocol PATH --drop-feature checkConstraints
    deltalog protocol PATH --json               # the same as one JSON object

Exit status: 0 on success, 1 when the table cannot be read or the change would be refused
(the message names the error class and what to do), 2 for usage errors.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, Optional, Sequence, TextIO

from deltalog.exceptions import DeltalogError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deltalog", description="deltalog command line tools")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p = sub.add_parser("protocol", help="explain a table's protocol and which clients can read or write it",
                       description="Reads the table's latest protocol and metadata from _delta_log in pure "
                                   "Python (no Spark) and reports client compatibility.")
    p.add_argument("path", metavar="PATH", help="table root (local path or file: URI)")
    p.add_argument("--explain", action="store_true", help="why each feature is in the protocol and whether it can be dropped")
    change = p.add_mutually_exclusive_group()
    change.add_argument("--plan", metavar="PROPS",
                        help="plan ALTER TABLE SET TBLPROPERTIES: 'k=v[,k2=v2]'; '!k' unsets k")
    change.add_argument("--add-feature", metavar="FEATURE", help="plan delta.feature.FEATURE = 'supported'")
    change.add_argument("--drop-feature", metavar="FEATURE", help="plan ALTER TABLE ... DROP FEATURE FEATURE")
    p.add_argument("--clients", metavar="IDS", help="comma-separated client ids (default: all)")
    p.add_argument("--all-versions", action="store_true", help="list every known version of each client")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def _protocol_command(args: argparse.Namespace, out: TextIO) -> int:
    from deltalog._log_reader import read_protocol_and_metadata
    from deltalog.advisor import compatibility, explain, load_clients, parse_property_changes, plan_change
    from deltalog.advisor.clients import client

    state = read_protocol_and_metadata(args.path)
    table = load_clients()
    if args.clients:
        table = tuple(client(c.strip(), table) for c in args.clients.split(",") if c.strip())
    report = compatibility(state.protocol, all_versions=args.all_versions, client_table=table)
    shown = str(args.path)  # as the user wrote it; the JSON also carries the resolved path
    explanation = explain(state.protocol, state.metadata, table=shown, version=state.version) \
        if args.explain else None
    plan = None
    if args.plan is not None:
        plan = plan_change(state.protocol, state.metadata, property_changes=parse_property_changes(args.plan),
                           clients=table)
    elif args.add_feature is not None:
        plan = plan_change(state.protocol, state.metadata, add_feature=args.add_feature, clients=table)
    elif args.drop_feature is not None:
        plan = plan_change(state.protocol, state.metadata, drop_feature=args.drop_feature, clients=table)

    if args.json:
        doc: Dict[str, Any] = {"table": shown, "resolvedPath": state.path, "version": state.version,
                               "protocol": state.protocol.toJsonDict(), "compatibility": report.toJson()}
        if explanation is not None:
            doc["explanation"] = explanation.toJson()
        if plan is not None:
            doc["plan"] = plan.toJson()
        out.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        return 0
    if explanation is not None:
        out.write(str(explanation) + "\n\n")
    else:
        out.write(f"Table {shown} (version {state.version}): protocol {state.protocol.simpleString}\n\n")
    out.write(str(report) + "\n")
    if plan is not None:
        out.write("\n" + str(plan) + "\n")
    return 0


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Run the command line; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if args.command == "protocol":
            return _protocol_command(args, out)
    except DeltalogError as e:
        err.write(f"deltalog: error: {e}\n")
        return 1
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
