"""Write the class list ``ClassPreload`` loads ahead of a driver's first table open.

    make preload-list        # = .venv/bin/python scripts/preload_list.py

Starts a fresh Spark driver with ``-Xlog:class+load`` and the preload off, opens a checkpointed
table with JSON commits after the checkpoint and a JSON-only table the way Python users do
(``forPath``, the file state, ``filesArrow``), and keeps every class loaded from a jar from
``TableApi`` (the first open) on, except Spark's own (the session state loads those on the calling
thread anyway) and generated classes (lambdas, hidden classes). Output:
``scala/src/main/resources/io/deltalog/preload-classes.txt``. Rebuild the jar afterwards.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "scala", "src", "main", "resources", "io", "deltalog", "preload-classes.txt")
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

DRIVER = r"""
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
from pyspark.sql import SparkSession
from deltalog.session import configure_spark_with_deltalog
from deltalog.tables import DeltaTable
b = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
     .config("spark.sql.shuffle.partitions", "2")
     .config("spark.driver.extraJavaOptions",
             "-Ddeltalog.preload=false -Xlog:class+load:file=" + sys.argv[2]))  # the open's own loads
spark = configure_spark_with_deltalog(b, sys.argv[3]).getOrCreate()
for p in sys.argv[4:]:
    t = DeltaTable.forPath(spark, p)
    t.schema()
    t.filesArrow()
spark.stop()
"""

# [0.123s][info][class,load] a.b.C source: file:/.../x.jar
LINE = re.compile(r"\]\s(\S+) source: (\S+)")


def tables() -> list:
    import generate as gen
    s1, s2 = gen.standard_specs(with_1m=False, with_c=False, with_d=False)
    ckpt = gen.ensure_checkpoint_table(s1["100k"], after=gen.TAIL)  # one row group above the stats-thread size
    json_only = gen.ensure_json_table(s2["a"])
    return [ckpt, json_only]


def main() -> int:
    jar = os.path.join(REPO, "target", next(f for f in os.listdir(os.path.join(REPO, "target"))
                                            if f.startswith("deltalog-spark_") and f.endswith(".jar")))
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "classes.log")
        subprocess.run([sys.executable, "-c", DRIVER, REPO, log, jar] + tables(), check=True)
        names, seen_api = [], False
        with open(log) as f:
            for line in f:
                m = LINE.search(line)
                if not m:
                    continue
                name, source = m.groups()
                if name.startswith("io.deltalog.api.TableApi"):
                    seen_api = True  # the first open (the session extension loads other api classes earlier)
                if not seen_api or not source.startswith("file:") or not source.endswith(".jar"):
                    continue
                if name.startswith("org.apache.spark.") or "$$Lambda" in name or "/0x" in name:
                    continue
                names.append(name)
    uniq = list(dict.fromkeys(names))
    with open(OUT, "w") as f:
        f.write("# Classes io.deltalog.api.ClassPreload loads ahead of the first table open.\n")
        f.write("# Written by `make preload-list` (scripts/preload_list.py); stale names are skipped.\n")
        f.write("\n".join(uniq) + "\n")
    print(f"{len(uniq)} classes -> {os.path.relpath(OUT, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
