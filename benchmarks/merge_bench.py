"""MERGE benchmark (issue 27 targets): the merge cases delta-spark and delta-rs use (delta-spark PR 1835,
delta-rs ``crates/benchmarks``), deltalog beside delta-spark 4.4 on the same Spark.

Data: TPC-DS ``store_sales`` generated offline with DuckDB's ``tpcds`` extension (the
``duckdb-extension-tpcds`` wheel; ``CALL dsdgen(sf=…)``, 2.88M rows at sf=1), key
``(ss_item_sk, ss_ticket_number)``, written as 20 Parquet parts in ticket order (the order dsdgen
generates, as the reference suite's ``CREATE TABLE … AS SELECT`` of the generated files keeps it);
each engine writes its target table from the parts, one data file per part, so both tables hold the
same rows in the same files. Each case's source is built as the reference suite builds it
(delta-spark's ``MergeDataLoad``, delta-rs's ``benchmark_merge_tpcds``): a ``files`` fraction of the
target's files is sampled (seeded), then a ``matched`` fraction of their rows (``ss_quantity`` changed)
and a ``not matched`` fraction of their rows with new keys (ticket number + 10^9).

Cases (``MERGE INTO t USING s ON t.ss_item_sk = s.ss_item_sk AND t.ss_ticket_number = s.ss_ticket_number``):
  upsert_<m>      files 0.05, matched fraction m (0.0001, 0.01, 0.1, 0.5) updated, not-matched 0.05 inserted
  delete_only     files 0.05, matched 0.05 deleted  (WHEN MATCHED THEN DELETE)
  insert_only     files 0.05, not-matched 0.05 inserted  (WHEN NOT MATCHED THEN INSERT *)
  update_only     files 0.05, matched 0.05 updated (WHEN MATCHED THEN UPDATE SET *)
  upsert_files_0.5, upsert_files_1.0
                  the reference suite's wide cases: files 0.5 / 1.0, matched 0.01, not-matched 0.001
                  (half / every file rewritten under copy-on-write)
each copy-on-write and with deletion vectors. Each engine writes its own target table once per mode
(its own writer, 20 files); every run merges into a fresh copy of that table's folder. Each engine
runs in its own Spark process (``integration/peers.py``: local[2], UI off, 6 GB driver). Before any
time is reported the merged tables' row count and an order-independent checksum must be equal between
the engines.

    .venv/bin/python benchmarks/merge_bench.py [--sf 1] [--runs 1] [--cases upsert_0.0001,...] [--modes cow,dv]
        [--engines deltalog,delta-spark] [--out benchmarks/RESULTS.md]

``--engines deltalog`` times deltalog alone (no delta-spark process, no checksum comparison, no report
table): for iterating on the engine.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)

import side_by_side  # noqa: E402

KEY = "t.ss_item_sk = s.ss_item_sk AND t.ss_ticket_number = s.ss_ticket_number"
PARTS = 20
UPSERT = "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
CASES = {  # name -> (file fraction, matched fraction, not-matched fraction, clauses)
    "upsert_0.0001": (0.05, 0.0001, 0.05, UPSERT),
    "upsert_0.01": (0.05, 0.01, 0.05, UPSERT),
    "upsert_0.1": (0.05, 0.1, 0.05, UPSERT),
    "upsert_0.5": (0.05, 0.5, 0.05, UPSERT),
    "delete_only": (0.05, 0.05, 0.0, "WHEN MATCHED THEN DELETE"),
    "insert_only": (0.05, 0.0, 0.05, "WHEN NOT MATCHED THEN INSERT *"),
    "update_only": (0.05, 0.05, 0.0, "WHEN MATCHED THEN UPDATE SET *"),
    "upsert_files_0.5": (0.5, 0.01, 0.001, UPSERT),
    "upsert_files_1.0": (1.0, 0.01, 0.001, UPSERT),
}

# one data file per part: a part is never split (parts are far below maxPartitionBytes) nor packed
# with another (each part's open cost alone exceeds a split)
SETUP = """
path, fmt, dv = args["path"], args["fmt"], args["dv"]
spark.conf.set("spark.sql.files.openCostInBytes", str(1 << 30))
try:
    df = spark.read.parquet(args["data"])
    assert df.rdd.getNumPartitions() == args["parts"], df.rdd.getNumPartitions()
    df.write.format(fmt).option("delta.enableDeletionVectors", str(dv).lower()).save(path)
finally:
    spark.conf.unset("spark.sql.files.openCostInBytes")
prefix = 'deltalog' if fmt == 'deltalog' else 'delta'
spark.sql(f"ALTER TABLE {prefix}.`{path}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = '{str(dv).lower()}')")
result = spark.read.format(fmt).load(path).count()
"""

MERGE = """
import time
prefix = 'deltalog' if args['fmt'] == 'deltalog' else 'delta'
spark.read.parquet(args["source"]).createOrReplaceTempView("src")
t0 = time.perf_counter()
out = spark.sql(f"MERGE INTO {prefix}.`{args['path']}` t USING src s ON {args['key']} {args['clauses']}").collect()
took = time.perf_counter() - t0
df = spark.read.format(args["fmt"]).load(args["path"])
check = df.selectExpr("count(*) AS n", "sum(hash(ss_item_sk, ss_ticket_number, ss_quantity)) AS h").collect()[0]
result = {"time": took, "out": [list(r) for r in out], "n": check.n, "h": check.h}
"""


def generate(root: Path, sf: float) -> Path:
    """store_sales at scale factor ``sf`` as ``PARTS`` Parquet files in ticket order (DuckDB + tpcds
    extension, offline)."""
    import duckdb
    import duckdb_extension_tpcds
    ext = Path(duckdb_extension_tpcds.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "tpcds.duckdb_extension"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute(f"CALL dsdgen(sf={sf})")
    out = root / "store_sales"
    out.mkdir()
    con.execute("CREATE TABLE ordered AS SELECT *, ntile(%d) OVER (ORDER BY ss_ticket_number, ss_item_sk) - 1 AS part "
                "FROM store_sales" % PARTS)
    for i in range(PARTS):
        con.execute(f"COPY (SELECT * EXCLUDE (part) FROM ordered WHERE part = {i} ORDER BY ss_ticket_number, ss_item_sk) "
                    f"TO '{out / f'part-{i:02d}.parquet'}' (FORMAT PARQUET)")
    return out


def make_source(data: Path, out: Path, files: float, matched: float, not_matched: float, seed: int) -> int:
    """The source of a case, as the reference suite samples it: ``files`` of the target's files
    (at least one), then ``matched`` of their rows (quantity changed) and ``not_matched`` of their
    rows with new ticket numbers."""
    import random
    import duckdb
    parts = sorted(data.glob("part-*.parquet"))
    chosen = random.Random(seed).sample(parts, max(1, round(files * len(parts))))
    rows = "read_parquet([%s])" % ", ".join(f"'{p}'" for p in chosen)
    con = duckdb.connect()
    con.execute(f"SELECT setseed({seed / 1000})")
    selects = []
    if matched:
        selects.append(f"SELECT * REPLACE (coalesce(ss_quantity, 0) + 1 AS ss_quantity) FROM {rows} "
                       f"WHERE random() < {matched}")
    if not_matched:
        selects.append(f"SELECT * REPLACE (ss_ticket_number + 1000000000 AS ss_ticket_number) FROM {rows} "
                       f"WHERE random() < {not_matched}")
    con.execute(f"COPY ({' UNION ALL '.join(selects)}) TO '{out}' (FORMAT PARQUET)")
    return con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--modes", default="cow,dv")
    ap.add_argument("--engines", default="deltalog,delta-spark")
    ap.add_argument("--out", help="append the markdown report to this file")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from contextlib import nullcontext
    from peers import SparkPeer
    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    both = engines == ["deltalog", "delta-spark"]
    assert both or engines == ["deltalog"], "--engines: deltalog,delta-spark or deltalog"
    cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    modes = [m.strip() == "dv" for m in a.modes.split(",")]
    load_start = os.getloadavg()[0]
    res, sizes = {}, {}
    with tempfile.TemporaryDirectory() as tmp, SparkPeer("deltalog", driver_memory="6g") as dl, \
            (SparkPeer("delta-spark", driver_memory="6g") if both else nullcontext()) as ds:
        root = Path(tmp)
        data = generate(root, a.sf)
        sources = {}
        for i, c in enumerate(cases):
            f, m, nm, _ = CASES[c]
            sources[c] = root / f"src-{c}.parquet"
            sizes[c] = make_source(data, sources[c], f, m, nm, seed=i + 1)
        peers = (("deltalog", dl, "deltalog"), ("delta-spark", ds, "delta"))[:len(engines)]
        for dv in modes:
            bases = {}
            for engine, peer, fmt in peers:
                bases[engine] = root / f"{engine}-{'dv' if dv else 'cow'}"
                n_rows = peer.run(SETUP, path=str(bases[engine]), fmt=fmt, dv=dv, data=str(data), parts=PARTS)
            for c in cases:
                for engine, peer, fmt in peers:
                    times, last = [], None
                    for r in range(a.runs):
                        work = root / f"work-{engine}"
                        shutil.rmtree(work, ignore_errors=True)
                        shutil.copytree(bases[engine], work)
                        last = peer.run(MERGE, path=str(work), fmt=fmt, source=str(sources[c]), key=KEY,
                                        clauses=CASES[c][3])
                        times.append(last["time"])
                    res[(c, dv, engine)] = dict(last, times=times)
                o = res[(c, dv, "deltalog")]
                if not both:
                    print(c, "dv" if dv else "cow", f"deltalog {statistics.median(o['times']):.2f}s "
                          f"(runs {', '.join(f'{x:.2f}' for x in o['times'])}), {o['n']:,} rows", flush=True)
                    continue
                t = res[(c, dv, "delta-spark")]
                assert (o["n"], o["h"], o["out"]) == (t["n"], t["h"], t["out"]), (c, dv, o, t)
                print(c, "dv" if dv else "cow", f"{o['time']:.2f}s vs {t['time']:.2f}s", flush=True)
    if not both:
        return 0
    load = f"load average {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"
    lines = ["", "## MERGE, TPC-DS store_sales (benchmarks/merge_bench.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load}; store_sales sf={a.sf:g} "
             f"({n_rows:,} rows in {PARTS} files, ticket order, each engine's own writer); sources sampled as the "
             f"reference suite does (a fraction of the files, then of their rows); median of {a.runs} run(s) per case, each on a "
             "fresh copy of the target (first run in brackets); result rows, row count and checksum equal between "
             f"the engines in every case; command: `python benchmarks/merge_bench.py --sf {a.sf:g} --runs {a.runs}"
             f"{'' if a.cases == ap.get_default('cases') else ' --cases ' + a.cases}"
             f"{'' if a.modes == ap.get_default('modes') else ' --modes ' + a.modes}`", "",
             "| case | files / matched / not matched | source rows | mode | deltalog s | delta-spark s | deltalog / delta-spark |",
             "|---|---|---|---|---|---|---|"]
    for dv in modes:
        for c in cases:
            o, t = res[(c, dv, "deltalog")], res[(c, dv, "delta-spark")]
            cell = side_by_side.cells({"median": statistics.median(o["times"]), "first": o["times"][0]},
                                      {"median": statistics.median(t["times"]), "first": t["times"][0]})
            f, m, nm, _ = CASES[c]
            lines.append(f"| {c} | {f:g} / {m:g} / {nm:g} | {sizes[c]:,} | {'deletion vectors' if dv else 'copy-on-write'} | {cell} |")
    side_by_side.emit(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
