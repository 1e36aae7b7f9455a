"""``deltalog vacuum``: VACUUM through the engine (a local Spark driver started for the command).

The command checks its input before starting Spark (the path must hold a ``_delta_log``), then runs
``io.deltalog.api.VacuumApi`` on a worker thread while the main thread prints a progress line on
stderr (when stderr is a terminal) with what has been listed and deleted.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Dict, Optional, TextIO

from deltalog.exceptions import TableNotFoundError

__all__ = ["run_vacuum", "local_table_root"]


def local_table_root(path: str) -> str:
    """The table root for ``path`` (a local path or ``file:`` URI); refuses a path without ``_delta_log``."""
    p = path[len("file://"):] if path.startswith("file://") else path[len("file:"):] if path.startswith("file:") else path
    if "://" in p:  # another file system: let the engine check it
        return path
    if not os.path.isdir(p):
        raise TableNotFoundError("DELTA_TABLE_NOT_FOUND", f"{path} is not a Delta table: no such directory. "
                                 "Check the path.")
    if not os.path.isdir(os.path.join(p, "_delta_log")):
        raise TableNotFoundError("DELTA_TABLE_NOT_FOUND", f"{path} is not a Delta table: it has no _delta_log "
                                 "directory. Check the path.")
    return os.path.abspath(p)


def _spark() -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    builder = (SparkSession.builder.master(os.environ.get("DELTALOG_CLI_MASTER", "local[*]"))
               .appName("deltalog-vacuum").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    spark = configure_spark_with_deltalog(builder, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_vacuum(path: str, dry_run: bool, retain_hours: Optional[float], lite: bool,
               err: TextIO, spark: Any = None) -> Dict[str, Any]:
    """Run VACUUM on ``path``; returns the engine's summary (``VacuumRun.runJson``)."""
    from deltalog._jvm import api_class, call, translate_jvm_error

    root = local_table_root(path)
    spark = spark or _spark()
    api = api_class(spark, "VacuumApi")
    handle = call(api.start, spark._jsparkSession, root,
                  float("nan") if retain_hours is None else float(retain_hours), bool(dry_run), bool(lite))
    box: Dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = handle.runJson()
        except BaseException as e:  # re-raised on the main thread
            box["error"] = e

    worker = threading.Thread(target=work, name="deltalog-vacuum", daemon=True)
    worker.start()
    show = err.isatty() if hasattr(err, "isatty") else False
    started, shown = time.monotonic(), False
    while worker.is_alive():
        worker.join(0.25)
        if show and worker.is_alive() and time.monotonic() - started > 1.0:
            try:
                phase = str(handle.phase())
                line = (f"\rdeltalog vacuum: {phase}: {int(handle.listed()):,} listed, "
                        f"{int(handle.deleted()):,} of {int(handle.toDelete()):,} deleted")
            except Exception:
                break
            err.write(line.ljust(78))
            err.flush()
            shown = True
    worker.join()
    if shown:
        err.write("\r" + " " * 78 + "\r")
    if "error" in box:
        e = box["error"]
        translated = translate_jvm_error(e) if isinstance(e, Exception) else e
        raise translated
    return json.loads(box["result"])


def summary(result: Dict[str, Any], shown: str) -> str:
    """The text the command prints."""
    lines = []
    n, size = result["numFilesToDelete"], result["sizeOfDataToDelete"]
    dirs = result["numVacuumedDirectories"]
    if result["dryRun"]:
        lines.extend(result["paths"])
        lines.append(f"VACUUM {result['vacuumType']} DRY RUN of {shown}: would delete {n} files and directories "
                     f"({size:,} bytes of files) in a total of {dirs} directories; nothing was deleted.")
    else:
        lines.append(f"VACUUM {result['vacuumType']} of {shown}: deleted {result['numDeletedFiles']} files and "
                     f"directories ({size:,} bytes of files) in a total of {dirs} directories.")
    return "\n".join(lines) + "\n"
