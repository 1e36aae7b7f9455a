"""Report helpers shared by the benchmarks that time deltalog beside delta-spark in peer processes
(history_bench.py, sql_bench.py, dml_bench.py, ...): each timing is a dict with the ``median`` of the warm
runs and the ``first`` run, in seconds."""
from __future__ import annotations

import statistics
from typing import Any, Dict, List, Optional


def cells(ours: Dict[str, float], theirs: Dict[str, float]) -> str:
    """``deltalog s (first) | delta-spark s (first) | ratio`` table cells."""
    return (f"{ours['median']:.3f} ({ours['first']:.3f}) | {theirs['median']:.3f} ({theirs['first']:.3f}) | "
            f"{ours['median'] / theirs['median']:.2f}×")


def runs_table(ours: List[float], theirs: List[float]) -> List[str]:
    """A markdown table of each engine's median and every run (seconds), then the ratio of the medians."""
    mo, mt = statistics.median(ours), statistics.median(theirs)
    return ["| engine | median s | runs s |", "|---|---:|---:|",
            f"| deltalog | {mo:.2f} | {', '.join(f'{x:.2f}' for x in ours)} |",
            f"| delta-spark 4.4 | {mt:.2f} | {', '.join(f'{x:.2f}' for x in theirs)} |",
            f"| **deltalog / delta-spark** | **{mo / mt:.2f}×** | |"]


def emit(lines: List[str], out: Optional[str]) -> None:
    """Prints the report and appends it to ``out`` (e.g. benchmarks/RESULTS.md) when given."""
    report = "\n".join(lines) + "\n"
    print(report)
    if out:
        with open(out, "a") as f:
            f.write(report)


def deltalog_session(driver_memory: str = "4g") -> Any:
    """The benchmarks' deltalog Spark session: local[2], UI off, 2 shuffle partitions, bound to
    127.0.0.1, the jar of ``DELTALOG_JAR`` (else the installed package's)."""
    import os

    from pyspark.sql import SparkSession

    from deltalog import configure_spark_with_deltalog
    b = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", driver_memory).config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.bindAddress", "127.0.0.1"))
    return configure_spark_with_deltalog(b, jar_path=os.environ.get("DELTALOG_JAR")).getOrCreate()
