"""The Hadoop configuration deltalog builds in a fresh driver, before Spark created its shared
state, against the one Spark builds once it has (a driver process of its own: the test session's
shared state exists already)."""
import json
import os
import subprocess
import sys

DRIVER = r"""
import json, os
from pyspark.sql import SparkSession
from deltalog import configure_spark_with_deltalog
b = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
     .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
     .config("fs.deltalog.test.option", "from the builder")
     .config("spark.sql.session.timeZone", "Asia/Tokyo"))
spark = configure_spark_with_deltalog(b, jar_path=os.environ.get("DELTALOG_JAR"), class_sharing=False).getOrCreate()
shc = spark._jvm.org.apache.spark.sql.deltalog.SessionHadoopConf
js = spark._jsparkSession

def entries(conf):
    it, out = conf.iterator(), {}
    while it.hasNext():
        e = it.next()
        out[e.getKey()] = e.getValue()
    return out

pending = shc.sqlConfPending(js)
ours = entries(shc.of(js))
still = shc.sqlConfPending(js)
theirs = entries(js.sessionState().newHadoopConf())
print("RESULT " + json.dumps({"pending": pending, "still": still, "ours": ours, "theirs": theirs}))
"""


def test_a_fresh_driver_gets_sparks_entries_without_creating_the_shared_state(tmp_path):
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    r = subprocess.run([sys.executable, "-c", DRIVER], env=env, capture_output=True, text=True, timeout=300,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(next(line for line in r.stdout.splitlines() if line.startswith("RESULT "))[7:])
    # the SQL configuration (and so the shared state) did not exist, and building ours left it so
    assert res["pending"] and res["still"]
    ours, theirs = res["ours"], res["theirs"]
    differing = {k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k)}
    # only the warehouse location, which Spark's shared state adds when it is created
    assert differing <= {"spark.sql.warehouse.dir", "hive.metastore.warehouse.dir"}, \
        {k: (ours.get(k), theirs.get(k)) for k in differing}
    assert "spark.sql.warehouse.dir" in theirs
    assert ours["fs.deltalog.test.option"] == "from the builder"
    assert ours["spark.sql.session.timeZone"] == "Asia/Tokyo"
    assert len(ours) > 100  # the context's Hadoop configuration is there too
