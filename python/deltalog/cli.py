"""The ``deltalog`` command line (no JVM needed, except for ``vacuum``, ``optimize`` and ``convert``).

::

    deltalog protocol PATH                      # protocol + which clients can read / write it
    deltalog protocol PATH --explain            # + why each feature is there, can it be dropped
    deltalog protocol PATH --plan 'delta.enableDeletionVectors=true'
    deltalog protocol PATH --add-feature clustering
    deltalog protocol PATH --drop-feature checkConstraints
    deltalog protocol PATH --json               # the same as one JSON object
    deltalog history PATH [--limit N]           # the commits, newest first (DESCRIBE HISTORY)
    deltalog history PATH --json                # one JSON array, DESCRIBE HISTORY's column names
    deltalog describe PATH [--json]             # DESCRIBE DETAIL: id, location, files, size, features...
    deltalog vacuum PATH [--dry-run] [--retain-hours N] [--lite] [--json]
                                                # VACUUM through the engine (starts a local Spark driver)
    deltalog optimize PATH [--where PRED] [--zorder-by c1,c2]   # OPTIMIZE (local Spark; summary table)
    deltalog convert PATH [--partition-by "p INT, q STRING"] [--no-statistics]
                                                # CONVERT TO DELTALOG: a Parquet directory becomes a table
    deltalog cache info                         # the driver class-data cache: directory, archives, size
    deltalog cache clear                        # delete its archives and notes

``history`` lists ``_delta_log`` once and reads only the commit files it shows (``--limit N``: the
N newest); timestamps are the ones time travel uses (in-commit timestamps where enabled, else
monotonized file modification times), printed in UTC (ISO 8601, ms). ``describe`` replays the
newest checkpoint (file paths and sizes only) and the commits after it.

``vacuum`` checks its arguments and that PATH holds a ``_delta_log`` before it starts Spark, shows
a progress line on stderr while it lists and deletes (when stderr is a terminal) and prints a summary
(with ``--dry-run``, first the paths it would delete).

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
    h = sub.add_parser("history", help="the table's commits, newest first (as DESCRIBE HISTORY)",
                       description="Lists _delta_log once and reads only the commit files shown, in pure "
                                   "Python (no Spark). Timestamps are UTC.")
    h.add_argument("path", metavar="PATH", help="table root (local path or file: URI)")
    h.add_argument("--limit", metavar="N", type=_non_negative, help="only the N newest commits")
    h.add_argument("--json", action="store_true",
                   help="print one JSON array of objects with DESCRIBE HISTORY's column names")
    d = sub.add_parser("describe", help="the table's details (as DESCRIBE DETAIL)",
                       description="Reads the latest version from _delta_log in pure Python (no Spark): "
                                   "id, location, partitioning, clustering, live files and their size, "
                                   "properties, protocol and table features. Timestamps are UTC.")
    d.add_argument("path", metavar="PATH", help="table root (local path or file: URI)")
    d.add_argument("--json", action="store_true",
                   help="print one JSON object with DESCRIBE DETAIL's column names")
    v = sub.add_parser("vacuum", help="delete files no version within the retention references (VACUUM)",
                       description="Runs VACUUM through the deltalog engine in a local Spark driver: deletes the "
                                   "files under PATH that no version within the retention references and that "
                                   "are older than it (never _delta_log or hidden files), then prints a summary.")
    v.add_argument("path", metavar="PATH", help="table root (local path or file: URI)")
    v.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    v.add_argument("--retain-hours", metavar="N", type=_non_negative_float,
                   help="keep what versions of the last N hours need (default: the table's "
                        "delta.deletedFileRetentionDuration, 168)")
    v.add_argument("--lite", action="store_true", help="VACUUM LITE: candidates from the log instead of a listing")
    v.add_argument("--json", action="store_true", help="print one JSON object (paths and delta-spark's metric names)")

    o = sub.add_parser("optimize", help="compact small files (or Z-order them) in one commit (OPTIMIZE; needs Spark)",
                       description="Runs OPTIMIZE on the table in the active SparkSession, or in a local one "
                                   "started with deltalog (Spark's progress bar shows the rewrite), and prints "
                                   "a summary of its result row.")
    o.add_argument("path", metavar="PATH", help="table root (local path or file: URI)")
    o.add_argument("--where", metavar="PRED", help="only partitions matching PRED (a SQL predicate on partition columns)")
    o.add_argument("--zorder-by", metavar="COLS", help="comma-separated data columns to Z-order by")
    cv = sub.add_parser("convert", help="make a directory of Parquet files a Delta table in place (CONVERT TO DELTALOG; "
                                        "needs Spark)")
    cv.add_argument("path", metavar="PATH", help="the Parquet directory (local path or Hadoop URI)")
    cv.add_argument("--partition-by", metavar="SCHEMA",
                    help="the partition columns of its col=value directories, in order, as DDL: 'p INT, q STRING'")
    cv.add_argument("--no-statistics", action="store_true", help="add the files without statistics (NO STATISTICS)")
    c = sub.add_parser("cache", help="show or clear the driver's class-data cache",
                       description="The class-data archives configure_spark_with_deltalog records for the Spark "
                                   "driver JVM (DELTALOG_CLASS_DATA_DIR, default ~/.cache/deltalog/class-data).")
    c_sub = c.add_subparsers(dest="cache_command", metavar="ACTION")
    c_sub.required = True
    info = c_sub.add_parser("info", help="print the directory, its archives and their total size")
    info.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    c_sub.add_parser("clear", help="delete the archives, recordings and notes (drivers then record a new archive)")
    return parser


def _non_negative(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def _non_negative_float(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not n >= 0 or n == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of hours >= 0, got {text}")
    return n


def _utc(ms: Optional[int]) -> Optional[str]:
    """ms since the epoch as UTC ISO 8601 with milliseconds (``2024-05-01T12:00:00.123Z``)."""
    if ms is None:
        return None
    import datetime as dt
    t = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _compact(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _history_command(args: argparse.Namespace, out: TextIO) -> int:
    from deltalog.history import history_row, table_history

    rows = [history_row(e) for e in table_history(args.path, args.limit)]
    for r in rows:
        r["timestamp"] = _utc(r["timestamp"])
    if args.json:
        out.write(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
        return 0
    columns = ("version", "timestamp", "operation", "readVersion", "isBlindAppend", "engineInfo",
               "operationParameters")
    cells = [[_compact(r[c]) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip() + "\n"

    out.write(line(columns))
    out.write(line(["-" * w for w in widths]))
    for row in cells:
        out.write(line(row))
    out.write(f"({len(rows)} commit{'s' if len(rows) != 1 else ''}, newest first; timestamps in UTC)\n")
    return 0


def _describe_command(args: argparse.Namespace, out: TextIO) -> int:
    from deltalog.history import table_detail

    detail = table_detail(args.path)
    detail["createdAt"] = _utc(detail["createdAt"])
    detail["lastModified"] = _utc(detail["lastModified"])
    if args.json:
        out.write(json.dumps(detail, indent=1, ensure_ascii=False) + "\n")
        return 0
    for k, v in detail.items():
        out.write(f"{k}: {'null' if v is None else _compact(v)}\n")
    return 0


def _vacuum_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from deltalog._vacuum_cli import run_vacuum, summary

    try:
        result = run_vacuum(args.path, args.dry_run, args.retain_hours, args.lite, err)
    except DeltalogError as e:  # one line: the engine's messages put what to do on their first line
        err.write(f"deltalog: error: {str(e).splitlines()[0]}\n")
        return 1
    if args.json:
        out.write(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    else:
        out.write(summary(result, str(args.path)))
    return 0


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n} bytes"


def _cache_command(args: argparse.Namespace, out: TextIO) -> int:
    import os
    import time
    from deltalog import _class_data as cd

    directory = cd.archive_dir()
    if args.cache_command == "clear":
        files, freed = cd.clear(directory)
        out.write(f"Removed {files} file(s), {_size(freed)}, from {directory}\n")
        return 0
    entries = cd.cache_files(directory)
    total = sum(int(e["bytes"]) for e in entries)  # type: ignore[call-overload]
    limit = cd.max_archives()
    if args.json:
        doc = {"directory": directory, "maxArchives": limit, "totalBytes": total,
               "enabled": cd.enabled(None),
               "files": [{"name": os.path.basename(str(e["path"])), "kind": e["kind"], "bytes": e["bytes"],
                          "lastUsed": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(float(e["mtime"])))}  # type: ignore[arg-type]
                         for e in entries]}
        out.write(json.dumps(doc, indent=1) + "\n")
        return 0
    out.write(f"Class-data cache: {directory}" + ("" if os.path.isdir(directory) else " (missing)") + "\n")
    out.write(f"Keeps at most {limit} archive(s) ({cd.MAX_ARCHIVES_ENV}); sharing "
              + ("on" if cd.enabled(None) else f"off ({cd.SWITCH_ENV})") + "\n")
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(e["mtime"])))  # type: ignore[arg-type]
        out.write(f"  {e['kind']:<9}  {_size(int(e['bytes'])):>12}  {when}  {os.path.basename(str(e['path']))}\n")  # type: ignore[call-overload]
    n = sum(1 for e in entries if e["kind"] == "archive")
    out.write(f"Total: {_size(total)} in {len(entries)} file(s), {n} archive(s)\n")
    return 0


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


def _optimize_command(args: argparse.Namespace, out: TextIO) -> int:
    import os

    from deltalog.exceptions import TableNotFoundError

    root = args.path[len("file:"):] if args.path.startswith("file:") else args.path
    if not os.path.isdir(os.path.join(root, "_delta_log")):
        raise TableNotFoundError("DELTA_MISSING_DELTA_TABLE",
                                 f"{args.path} is not a Delta table (no _delta_log directory); nothing was optimized.")
    zorder = [c.strip() for c in (args.zorder_by or "").split(",") if c.strip()]
    if args.zorder_by is not None and not zorder:
        raise ValueError("--zorder-by needs one or more comma-separated column names")
    from pyspark.sql import SparkSession

    from deltalog.tables import DeltaTable
    spark = SparkSession.getActiveSession()
    if spark is None:
        from deltalog import configure_spark_with_deltalog
        spark = configure_spark_with_deltalog(
            SparkSession.builder.master("local[*]").appName("deltalog optimize")
            .config("spark.ui.showConsoleProgress", "true")).getOrCreate()
    builder = DeltaTable.forPath(spark, args.path).optimize()
    if args.where:
        builder = builder.where(args.where)
    (row,) = (builder.executeZOrderBy(*zorder) if zorder else builder.executeCompaction()).collect()
    m = row["metrics"]
    added, removed = m["filesAdded"], m["filesRemoved"]
    rows = [("", "files", "bytes", "min size", "max size"),
            ("removed", str(removed["totalFiles"]), str(removed["totalSize"]), str(removed["min"] or "-"),
             str(removed["max"] or "-")),
            ("added", str(added["totalFiles"]), str(added["totalSize"]), str(added["min"] or "-"),
             str(added["max"] or "-"))]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out.write(f"OPTIMIZE {row['path']}" + (f" ZORDER BY ({', '.join(zorder)})" if zorder else "") + "\n")
    for r in rows:
        out.write("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths))).rstrip() + "\n")
    dvs = m["deletionVectorStats"]
    out.write(f"partitions optimized: {m['partitionsOptimized']}, bins: {m['numBins']}, files considered: "
              f"{m['totalConsideredFiles']}, skipped: {m['totalFilesSkipped']}"
              + (f", deletion vectors purged: {dvs['numDeletionVectorsRemoved']} "
                 f"({dvs['numDeletionVectorRowsRemoved']} rows)" if dvs else "") + "\n")
    if m["numFilesRemoved"] == 0:
        out.write("nothing to optimize: no commit\n")
    return 0


def _convert_command(args: argparse.Namespace, out: TextIO) -> int:
    import os

    from pyspark.sql import SparkSession

    root = args.path[len("file:"):] if args.path.startswith("file:") else args.path
    if "://" not in args.path and not os.path.isdir(root):
        raise ValueError(f"{args.path} is not a directory")
    spark = SparkSession.getActiveSession()
    if spark is None:
        from deltalog import configure_spark_with_deltalog
        spark = configure_spark_with_deltalog(
            SparkSession.builder.master("local[*]").appName("deltalog convert")
            .config("spark.ui.showConsoleProgress", "true")).getOrCreate()
    path = args.path.replace("`", "``")
    sql = f"CONVERT TO DELTALOG parquet.`{path}`"
    if args.no_statistics:
        sql += " NO STATISTICS"
    if args.partition_by:
        sql += f" PARTITIONED BY ({args.partition_by})"
    before = os.path.isdir(os.path.join(root, "_delta_log")) and any(
        n.endswith(".json") for n in os.listdir(os.path.join(root, "_delta_log")))
    spark.sql(sql).collect()
    from deltalog.tables import DeltaTable
    table = DeltaTable.forPath(spark, args.path)
    if before:
        out.write(f"{args.path} already is a Delta table (version {table.version()}): nothing converted\n")
        return 0
    snap = table.snapshot()
    parts = snap.metadata.partitionColumns
    out.write(f"converted {args.path}: version {snap.version}, {snap.numFiles} files, {snap.sizeInBytes} bytes"
              + (f", partitioned by {', '.join(parts)}" if parts else "") + "\n")
    return 0


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Run the command line; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if args.command == "protocol":
            return _protocol_command(args, out)
        if args.command == "history":
            return _history_command(args, out)
        if args.command == "describe":
            return _describe_command(args, out)
        if args.command == "vacuum":
            return _vacuum_command(args, out, err)
        if args.command == "cache":
            return _cache_command(args, out)
        if args.command == "optimize":
            return _optimize_command(args, out)
        if args.command == "convert":
            return _convert_command(args, out)
    except DeltalogError as e:
        text = " ".join(str(e).split()) if args.command in ("optimize", "convert") else str(e)
        err.write(f"deltalog: error: {text}\n")
        return 1
    except Exception as e:  # Spark's own errors (e.g. a WHERE that does not parse): one line
        if args.command not in ("optimize", "convert"):
            raise
        err.write(f"deltalog: error: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}\n")
        return 1
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
