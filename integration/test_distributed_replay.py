"""Log replay as a Spark job on a large generated log (issue 30), in a separate Spark driver process.

The log (benchmarks/large_log.py): a multi-part checkpoint written directly with pyarrow and 100
commits after it that remove checkpoint files, re-add some with new stats, add new files, update a
txn and change the metadata. One driver process (master ``DELTALOG_REPLAY_MASTER`` if set; else, at
full size, the standalone cluster of the ``spark_cluster`` fixture (one master, two one-core workers,
each its own JVM; the executors get the jar through ``spark.jars``), and ``local[2]`` at the bounded
size, so that ``make test`` starts no cluster for it) loads the table fresh twice: with ``spark.deltalog.replay.distributedThreshold=0``
(the replay is a Spark job) and with the threshold above the log (in the driver). Both must equal
the generator's truth, computed from its plan: version, live count, tombstones and the digest of
the live paths.

Sizes: 30k live files in 4 parts by default (1 GB driver; both loads must succeed and be equal);
``DELTALOG_INTEGRATION_FULL=1`` (or ``--full``) uses 2M live files in 20 parts with an 800 MB
driver (``DELTALOG_REPLAY_DRIVER_MEMORY`` overrides): the smallest heap of
benchmarks/replay_heap_bisect.py's list at which the job path loads that log is 784 MB, the
in-driver path's 816 MB (it failed with an OutOfMemoryError at 800 MB; RESULTS.md). There only the
distributed load is required to succeed; the in-driver load must either equal it or fail with an
OutOfMemoryError, and its outcome is printed.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import distributed_replay_bench as bench  # noqa: E402
import large_log  # noqa: E402


def replay_master(request, full: bool) -> str:
    """``DELTALOG_REPLAY_MASTER``; else the session's standalone cluster at full size (started on
    demand: the bounded run never starts one), ``local[2]`` at the bounded size."""
    if os.environ.get("DELTALOG_REPLAY_MASTER"):
        return os.environ["DELTALOG_REPLAY_MASTER"]
    return request.getfixturevalue("spark_cluster").master_url if full else "local[2]"


# The final state of 2M files takes ~662 MB of heap in either path; the job path needs ~30 MB less
# on top of it than the in-driver path (measured on the standalone cluster, RESULTS.md).
FULL_DRIVER_MEMORY = "800m"
# what both loads must have equal: version, file set, tombstones, txns, protocol, metadata
SAME = ("version", "count", "tombstones", "sizeInBytes", "paths_sum_sha256", "txns", "configuration_entries",
        "protocol", "metadata_sha256")


def test_distributed_replay_equals_in_driver_replay_and_truth(tmp_path, full, request):
    files, parts = (2_000_000, 20) if full else (30_000, 4)
    root = os.environ.get("DELTALOG_BENCH_DATA") and os.path.join(os.environ["DELTALOG_BENCH_DATA"], "large")
    table, truth = large_log.ensure(files, parts, 100, root=root or str(tmp_path))
    master = replay_master(request, full)
    memory = os.environ.get("DELTALOG_REPLAY_DRIVER_MEMORY", FULL_DRIVER_MEMORY if full else "1g")
    conf = {"spark.sql.shuffle.partitions": "2"}
    dist = bench.run_engine("deltalog", table, master, memory, 1, "0", conf, timeout=3600)
    assert "error" not in dist[-1], dist
    bench.check_deltalog(dist[0], truth, "distributed replay", True)
    print(f"distributed replay with a {memory} driver on {master}: {dist[-1]}")
    local = bench.run_engine("deltalog", table, master, memory, 1, str(1 << 62), conf, timeout=3600)
    print(f"in-driver replay with a {memory} driver on {master}: {local[-1]}")
    if "error" in local[-1]:
        # at full size the in-driver load may run out of heap (that is what the job path is for),
        # and fail in no other way
        assert full and "OutOfMemoryError" in local[-1]["error"], local
        return
    bench.check_deltalog(local[0], truth, "in-driver replay", False)
    assert {k: dist[0][k] for k in SAME} == {k: local[0][k] for k in SAME}
