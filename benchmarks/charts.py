"""PNG charts of a benchmark run, drawn from its JSON results (matplotlib, Agg backend).

    python benchmarks/charts.py benchmarks/results.json              # -> benchmarks/charts/*.png
    python benchmarks/charts.py /tmp/x/results.json --out-dir /tmp/x/charts

``run.py`` calls ``make_charts`` after writing its report, and ``make bench`` calls this script
last, once ``connector_bench.py --json`` has written ``connector-results.json`` beside
``results.json``. Charts are redrawn from the JSON alone, without rerunning anything:

* ``S1.png`` ... ``S7.png``: one chart per log scenario, the median time of every case per engine
  (grouped bars; log scale when the times differ by more than 20x). A case an engine got wrong is
  marked FAILED instead of a bar; one it did not run is left empty.
* ``size.png``: time against table size (live files), S1 (+0 and +10 commits after the
  checkpoint) and S4, one line per engine, log-log.
* ``connector.png`` (with ``connector-results.json``): S8 planning time per selectivity, and
  the ~1 GB scan and append per format.

Lower is better everywhere; times are seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

ENGINE_ORDER = ("deltalog", "delta-rs", "delta-spark", "floor")
COLORS = {"deltalog": "#1f77b4", "delta-rs": "#ff7f0e", "delta-spark": "#2ca02c",
          "floor": "#9e9e9e", "spark_floor": "#9e9e9e", "parquet": "#9467bd", "delta": "#2ca02c"}
LABELS = {"floor": "floor (pyarrow bound, not a Delta reader)", "spark_floor": "Spark planning floor",
          "parquet": "plain Parquet", "delta": "delta-spark 4.4.0", "delta-spark": "delta-spark 4.4.0"}
TITLES = {"S1": "S1: snapshot load from a checkpoint to the live-file list",
          "S2": "S2: JSON-only log replay",
          "S3": "S3: protocol + metadata only (schema, version)",
          "S4": "S4: checkpoint write from a loaded snapshot",
          "S7": "S7: time travel to 10 % of history (JSON replay)"}
LOG_SPREAD = 20.0  # log y axis when max/min of the plotted times exceeds this


def _plt() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _fmt(t: float) -> str:
    if t < 0.01:
        return f"{t * 1000:.1f} ms"
    if t < 1:
        return f"{t * 1000:.0f} ms"
    return f"{t:.2f} s" if t < 10 else f"{t:.1f} s"


def _engines(data: Dict[str, Any]) -> List[str]:
    ran = data.get("engines") or sorted({r["engine"] for r in data["rows"] if "id" in r})
    return [e for e in ENGINE_ORDER if e in ran]


def _cells(data: Dict[str, Any]) -> Dict[Tuple[str, str], Tuple[Optional[float], str]]:
    """(case id, engine) -> (median seconds or None, state: ok / FAILED / skipped / error)."""
    out = {}
    for r in data["rows"]:
        if "id" not in r:
            continue
        if r.get("status") == "ok":
            out[(r["id"], r["engine"])] = (None, "FAILED") if r.get("problems") else (r["median_s"], "ok")
        else:
            out[(r["id"], r["engine"])] = (None, r.get("status") or "?")
    return out


def _subtitle(data: Dict[str, Any]) -> str:
    info = data.get("info", {})
    bits = [f"{info.get('nproc', '?')} CPUs", f"load {info.get('loadavg_start', ['?'])[0]} at start"]
    if info.get("git_head"):
        bits.append(f"deltalog {info['git_head']}")
    return "median s, lower is better; " + ", ".join(bits)


def scenario_chart(data: Dict[str, Any], scenario: str, path: str) -> bool:
    plt = _plt()
    cases = [c for c in data["cases"] if c["scenario"] == scenario]
    engines = _engines(data)
    cells = _cells(data)
    if not cases or not engines:
        return False
    times = [cells.get((c["id"], e), (None, ""))[0] for c in cases for e in engines]
    times = [t for t in times if t]
    if not times:
        return False
    log = max(times) / min(times) > LOG_SPREAD
    n, k = len(cases), len(engines)
    width = 0.8 / k
    fig, ax = plt.subplots(figsize=(max(7.5, 1.2 + n * (0.45 + 0.42 * k)), 4.8))
    from matplotlib.patches import Patch
    handles = []
    for j, e in enumerate(engines):
        xs, ys = [], []
        for i, c in enumerate(cases):
            t, state = cells.get((c["id"], e), (None, "not run"))
            x = i - 0.4 + width * (j + 0.5)
            if t:
                xs.append(x)
                ys.append(t)
            elif state == "FAILED":
                ax.text(x, 0.02, "FAILED", rotation=90, ha="center", va="bottom", color="red",
                        fontsize=7, transform=ax.get_xaxis_transform())
        handles.append(Patch(color=COLORS.get(e), label=LABELS.get(e, e)))
        bars = ax.bar(xs, ys, width * 0.92, color=COLORS.get(e))
        for b, t in zip(bars, ys):
            ax.annotate(_fmt(t), (b.get_x() + b.get_width() / 2, t), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=6.5, rotation=90)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(min(times) / 2, max(times) * 8)
    else:
        ax.set_ylim(0, max(times) * 1.3)
    ax.set_xticks(range(n))
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xticklabels([_case_label(c) for c in cases], fontsize=8)
    ax.set_ylabel("seconds" + (" (log scale)" if log else ""))
    ax.set_title(TITLES.get(scenario, scenario), fontsize=10, pad=16)
    ax.text(0.5, 1.01, _subtitle(data), transform=ax.transAxes, ha="center", va="bottom", fontsize=7.5,
            color="#555555")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(handles=handles, fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _case_label(c: Dict[str, Any]) -> str:
    """The case id, and the live files for the scenarios whose ids do not say them."""
    exp = c.get("expect", {})
    if c["scenario"] in ("S2", "S7") and "count" in exp:
        return f"{c['id']}\n{exp['count']:,} files"
    return c["id"]


def _size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:g}M"
    return f"{n / 1e3:g}k" if n >= 1000 else str(n)


def _nominal_size(case: Dict[str, Any]) -> int:
    """The table's size class from the case id ("S1 100k +10" -> 100000): +0 and +10 share a
    point on the x axis (the +10 tables hold 800 more files)."""
    for tok in case["id"].split():
        t = tok.lower()
        if t[:-1].isdigit() and t[-1] in "km":
            return int(t[:-1]) * (1000 if t[-1] == "k" else 1_000_000)
    return int(case["expect"]["count"])


def size_chart(data: Dict[str, Any], path: str) -> bool:
    """Time against table size: S1 +0 (solid), S1 +10 (dashed), S4; one line per engine."""
    plt = _plt()
    engines = _engines(data)
    cells = _cells(data)
    panels = []
    s1 = [c for c in data["cases"] if c["scenario"] == "S1"]
    for after, style in ((0, "-o"), (10, "--s")):
        cs = [c for c in s1 if c.get("json_commits") == after]
        if cs:
            panels.append(("S1", f"+{after} commits", style, cs))
    s4 = [c for c in data["cases"] if c["scenario"] == "S4"]
    if s4:
        panels.append(("S4", "", "-o", s4))
    if not panels or not engines:
        return False
    groups = [p[0] for p in panels]
    axes_for = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    fig, axes = plt.subplots(1, len(axes_for), figsize=(5.6 * len(axes_for), 4.6), squeeze=False)
    drawn = False
    ticks: Dict[str, List[int]] = {}
    for group, suffix, style, cs in panels:
        ax = axes[0][axes_for[group]]
        cs = sorted(cs, key=_nominal_size)
        sizes = sorted({_nominal_size(c) for c in cs} | set(ticks.get(group, [])))
        ticks[group] = sizes
        for e in engines:
            pts = [(_nominal_size(c), cells.get((c["id"], e), (None, ""))[0]) for c in cs]
            pts = [(x, t) for x, t in pts if t]
            if not pts:
                continue
            drawn = True
            label = LABELS.get(e, e) + (f", {suffix}" if suffix else "")
            ax.plot([x for x, _ in pts], [t for _, t in pts], style, color=COLORS.get(e), label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([_size(x) for x in sizes])
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        if len(sizes) == 1:
            ax.set_xlim(sizes[0] / 3, sizes[0] * 3)
        ax.set_xlabel("live files in the table (S1 +10 and S4: 800 more)")
        ax.set_ylabel("seconds (log scale)")
        ax.set_title(TITLES[group], fontsize=10)
        ax.grid(which="both", alpha=0.25)
        ax.legend(fontsize=7)
    if not drawn:
        plt.close(fig)
        return False
    fig.suptitle(f"Time against table size ({_subtitle(data)})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def connector_chart(conn: Dict[str, Any], path: str) -> bool:
    """S8 planning time per selectivity; SCAN / APPEND per format."""
    plt = _plt()
    s8, sa = conn.get("s8") or [], conn.get("scan_append")
    panels = (1 if s8 else 0) + (1 if sa and (sa.get("scan") or sa.get("append")) else 0)
    if not panels:
        return False
    fig, axes = plt.subplots(1, panels, figsize=(6.2 * panels, 4.6), squeeze=False)
    i = 0
    if s8:
        ax = axes[0][i]
        i += 1
        sels = [r["selectivity"] for r in s8]
        for e in ("deltalog", "delta-rs", "spark_floor"):
            pts = [(s * 100, r[e]) for s, r in zip(sels, s8) if r.get(e)]
            if pts:
                ax.plot([x for x, _ in pts], [t for _, t in pts], "-", marker="o", color=COLORS[e],
                        label=LABELS.get(e, e))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks([s * 100 for s in sels])
        ax.set_xticklabels([f"{s * 100:g} %" for s in sels])
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xlabel("selectivity (share of the 100k files kept)")
        ax.set_ylabel("seconds (log scale)")
        ax.set_title("S8: data-skipping plan, 100k files", fontsize=10)
        ax.grid(which="both", alpha=0.25)
        ax.legend(fontsize=8)
    if sa and (sa.get("scan") or sa.get("append")):
        ax = axes[0][i]
        kinds = [k for k in ("scan", "append") if sa.get(k)]
        fmts = [f for f in ("deltalog", "parquet", "delta") if any(f in sa[k] for k in kinds)]
        width = 0.8 / len(fmts)
        for j, f in enumerate(fmts):
            xs = [n - 0.4 + width * (j + 0.5) for n, k in enumerate(kinds) if f in sa[k]]
            ys = [sa[k][f] for k in kinds if f in sa[k]]
            bars = ax.bar(xs, ys, width * 0.92, color=COLORS.get(f), label=LABELS.get(f, f))
            for b, t in zip(bars, ys):
                ax.annotate(_fmt(t), (b.get_x() + b.get_width() / 2, t), xytext=(0, 2),
                            textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(kinds)))
        ax.set_xticklabels([f"{'full scan' if k == 'scan' else 'append'}\n{sa.get('rows', 0):,} rows"
                            for k in kinds])
        ax.set_ylabel("seconds")
        ax.set_ylim(0, max(max(sa[k].values()) for k in kinds) * 1.2)
        ax.set_title("SCAN / APPEND, ~1 GB", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    meta = conn.get("meta", {})
    fig.suptitle(f"Spark connector (median seconds, lower is better; {meta.get('date', '')}, "
                 f"load avg {meta.get('load_start', '?')} at start)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def make_charts(results_json: str, out_dir: Optional[str] = None,
                connector_json: Optional[str] = None) -> List[str]:
    """Draw every chart the results allow into ``out_dir`` (default: ``charts/`` beside the
    JSON); returns the files written."""
    with open(results_json) as f:
        data = json.load(f)
    base = os.path.dirname(os.path.abspath(results_json))
    out_dir = out_dir or os.path.join(base, "charts")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for sc in ("S1", "S2", "S3", "S4", "S7"):
        p = os.path.join(out_dir, f"{sc}.png")
        if scenario_chart(data, sc, p):
            written.append(p)
    p = os.path.join(out_dir, "size.png")
    if size_chart(data, p):
        written.append(p)
    connector_json = connector_json or os.path.join(base, "connector-results.json")
    if os.path.exists(connector_json):
        with open(connector_json) as f:
            conn = json.load(f)
        p = os.path.join(out_dir, "connector.png")
        if connector_chart(conn, p):
            written.append(p)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                               "results.json"))
    ap.add_argument("--out-dir", help="default: charts/ beside the results JSON")
    ap.add_argument("--connector", help="connector_bench.py --json output (default: connector-results.json "
                                        "beside the results JSON, if present)")
    a = ap.parse_args(argv)
    for p in make_charts(a.results, a.out_dir, a.connector):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
