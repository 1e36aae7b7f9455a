"""Start the engines a run needs: each Spark engine once (both at the same time, warmed up in
parallel), delta-rs / DuckDB / Polars in this process."""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
from typing import Dict, List, Optional

from .generator import generate

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

WARMUP = """
import sys
if args['fmt'] == 'delta':
    # one partition for delta-spark's log-state jobs (50 by default: ~5x slower per read on 2 cores);
    # expressions interpreted (codegen of each new plan costs more than these tiny tables take).
    # Neither changes what is read: skipping, pruning and Parquet push-down stay on.
    spark.conf.set('spark.databricks.delta.snapshotPartitions', '1')
    spark.conf.set('spark.sql.codegen.wholeStage', 'false')
    spark.conf.set('spark.sql.codegen.factoryMode', 'NO_CODEGEN')
if args['repo'] not in sys.path:
    sys.path.insert(0, args['repo'])
from integration.interop import spark_side
spark.range(3).write.format(args['fmt']).mode('overwrite').save(args['path'])
result = spark.read.format(args['fmt']).load(args['path']).where('id > 0').count()
"""


def start_peers(names: List[str], workdir: str) -> Dict[str, object]:
    """SparkPeer per name, started (and warmed up: first write and read) in parallel threads."""
    from integration.peers import SparkPeer
    peers: Dict[str, object] = {}
    errors: List[BaseException] = []

    def start(n: str) -> None:
        try:
            p = SparkPeer(n)
            peers[n] = p
            fmt = "delta" if n == "delta-spark" else "deltalog"
            p.run(WARMUP, repo=REPO, fmt=fmt, path=os.path.join(workdir, f"warmup-{n}"))
        except BaseException as e:
            errors.append(e)
    ts = [threading.Thread(target=start, args=(n,)) for n in names]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        for p in peers.values():
            p.close()
        raise errors[0]
    return peers


def needed_spark(seeds: List[int], writer: Optional[str], readers: List[str], max_ops: Optional[int] = None) -> List[str]:
    need = {r for r in readers if r in ("deltalog", "delta-spark")}
    for s in seeds:
        need |= {o.writer for o in generate(s, writer_mode=writer, max_ops=max_ops).ops if o.writer in ("deltalog", "delta-spark")}
    return sorted(need)


@contextlib.contextmanager
def open_matrix(workdir: str, seeds: List[int], writer: Optional[str], readers: List[str], peers=None, **kw):
    from .runner import Matrix
    own = peers is None
    if own:
        peers = start_peers(needed_spark(seeds, writer, readers, kw.get('max_ops')), workdir)
    try:
        yield Matrix(workdir, peers, readers=readers, **kw)
    finally:
        if own:
            for p in peers.values():
                p.close()
