"""Report helpers shared by the benchmarks that time deltalog beside delta-spark in peer processes
(history_bench.py, sql_bench.py, dml_bench.py): each timing is a dict with the ``median`` of the warm
runs and the ``first`` run, in seconds."""
from __future__ import annotations

from typing import Dict, List, Optional


def cells(ours: Dict[str, float], theirs: Dict[str, float]) -> str:
    """``deltalog s (first) | delta-spark s (first) | ratio`` table cells."""
    return (f"{ours['median']:.3f} ({ours['first']:.3f}) | {theirs['median']:.3f} ({theirs['first']:.3f}) | "
            f"{ours['median'] / theirs['median']:.2f}×")


def emit(lines: List[str], out: Optional[str]) -> None:
    """Prints the report and appends it to ``out`` (e.g. benchmarks/RESULTS.md) when given."""
    report = "\n".join(lines) + "\n"
    print(report)
    if out:
        with open(out, "a") as f:
            f.write(report)
