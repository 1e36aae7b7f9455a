"""python -m integration.interop --seeds 200 [--report]   (make interop SEEDS=200)
python -m integration.interop --seed 17 --only writer=delta-rs,reader=duckdb   (one failure alone)

Seeds: --seeds N (0..N-1) or a list "0-9,17"; default DELTALOG_INTEROP_SEEDS or 4. --only
writer=MODE overrides the seed's writer mode (deltalog, delta-spark, delta-rs, mixed);
reader=A+B restricts the readers. Exit status 1 when any check fails (known differences and
unsupported cells do not fail). --report writes integration/INTEROP.md and the README table."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter

from .generator import READERS, WRITER_MODES
from .runner import parse_seeds
from .session import open_matrix

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def main(argv=None) -> int:
    os.environ["TZ"] = "UTC"   # every engine reads and writes in UTC (Spark peers and DuckDB set it too)
    time.tzset()
    ap = argparse.ArgumentParser(prog="python -m integration.interop", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default=os.environ.get("DELTALOG_INTEROP_SEEDS", "4"))
    ap.add_argument("--seed", type=int, action="append", help="run only this seed (repeatable)")
    ap.add_argument("--only", default="", help="writer=MODE,reader=A+B")
    ap.add_argument("--preds", type=int, default=4, help="generated predicates per version and reader")
    ap.add_argument("--asof", type=int, default=3, help="timestamps between commits read per sequence")
    ap.add_argument("--max-ops", type=int, default=None, help="at most this many operations per sequence")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--report", action="store_true", help="write integration/INTEROP.md and the README table")
    ap.add_argument("--command", default=None, help="the command recorded in the report")
    a = ap.parse_args(argv)
    only = dict(kv.split("=", 1) for kv in a.only.split(",") if kv)
    writer = only.get("writer")
    assert writer is None or writer in WRITER_MODES, f"writer must be one of {WRITER_MODES}"
    readers = only["reader"].split("+") if "reader" in only else list(READERS)
    assert all(r in READERS for r in readers), f"readers must be among {READERS}"
    seeds = a.seed or parse_seeds(a.seeds)
    workdir = a.workdir or tempfile.mkdtemp(prefix="deltalog-interop-")
    t0 = time.time()
    checks = []
    with open_matrix(workdir, seeds, writer, readers, n_preds=a.preds, asof_pairs=a.asof, log=print,
                     max_ops=a.max_ops) as m:
        for s in seeds:
            try:
                checks += m.run_seed(s, writer_mode=writer, readers=readers)
            except Exception as e:  # a sequence no writer could complete: a failure of its own
                print(f"seed {s}: sequence aborted: {e}")
                from .runner import Check
                checks.append(Check(s, "?", writer or "?", "write", -1, "write", "sequence aborted", [], "fail",
                                    detail=str(e)[-3000:]))
    secs = time.time() - t0
    fails = [c for c in checks if c.status == "fail"]
    for c in fails:
        print("FAIL " + c.header())
        print(c.detail)
    st = Counter(c.status for c in checks)
    print(f"{len(seeds)} seeds, {len(checks)} checks: pass {st['pass']}, known {st['known']}, fail {st['fail']}, "
          f"unsupported {st['unsupported']} ({secs:.0f} s)")
    rules = Counter(n for c in checks if c.rule for n in c.rule.split("+"))
    for n, k in sorted(rules.items()):
        print(f"  known difference {n}: {k} checks")
    if a.report:
        from . import report
        command = a.command or "python -m integration.interop " + " ".join(argv if argv is not None else sys.argv[1:])
        with open(os.path.join(REPO, "integration", "INTEROP.md"), "w", encoding="utf-8") as f:
            f.write(report.interop_md(checks, command, secs))
        report.rewrite_readme(os.path.join(REPO, "README.md"), report.readme_table(checks, command))
        print("wrote integration/INTEROP.md and README.md's interop table")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
