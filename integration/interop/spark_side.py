"""Code run inside a SparkPeer worker (deltalog or delta-spark): apply write operations, read many
versions / predicates in few Spark jobs. Values travel pickled (base64), results as Arrow IPC."""
from __future__ import annotations

import base64
import io
import pickle
import time
import traceback
from typing import Any, Dict, List


def _unpack(s: str) -> Any:
    return pickle.loads(base64.b64decode(s))


def error_text() -> str:
    """The exception's message first (a Spark error's class and text), then the end of the trace."""
    import sys
    e = sys.exc_info()[1]
    head = "".join(traceback.format_exception_only(type(e), e))
    head = "\n".join(l for l in head.splitlines() if not l.lstrip().startswith("at "))
    return head[:2500] + "\n...\n" + traceback.format_exc()[-800:]


def _df(spark, columns, rows):
    """The rows as a DataFrame of exactly ``columns``' types, built from Arrow (no Python workers)."""
    import pyarrow as pa
    from integration.interop.engines import arrow_table
    ddl = ", ".join(f"`{n}` {t}" for n, t in columns)
    return spark.createDataFrame(arrow_table(columns, rows), schema=ddl)


def _ipc(table) -> str:
    import pyarrow as pa
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return base64.b64encode(sink.getvalue()).decode()


def apply_ops(spark, fmt: str, path: str, packed: str) -> List[Dict[str, Any]]:
    """Apply the ops (dicts: kind, columns, rows, where, set_sql, restore_version, props,
    partition_by); one reply per op: {"ok": bool, "error": str}. Stops at the first error."""
    ops = _unpack(packed)
    out = []
    for op in ops:
        try:
            _apply(spark, fmt, path, op)
            out.append({"ok": True, "version": _latest(path)})
        except BaseException:
            out.append({"ok": False, "error": error_text()})
            break
        time.sleep(0.03)  # commits at least ~30 ms apart: timestamps between commits exist
    return out


def _latest(path: str) -> int:
    import os
    log = os.path.join(path, "_delta_log")
    vs = [int(f[:20]) for f in os.listdir(log) if len(f) == 25 and f.endswith(".json") and f[:20].isdigit()]
    return max(vs) if vs else -1


def _apply(spark, fmt: str, path: str, op: Dict[str, Any]) -> None:
    k = op["kind"]
    tbl = f"{'delta' if fmt == 'delta' else 'deltalog'}.`{path}`"
    if k in ("create", "append", "overwrite", "replace_where", "dynamic_overwrite", "merge_schema"):
        w = _df(spark, op["columns"], op["rows"]).write.format(fmt)
        if k == "create":
            w = w.mode("append").partitionBy(*op["partition_by"])
            for key, v in op["props"].items():
                w = w.option(key, v)
        elif k == "append":
            w = w.mode("append")
        elif k == "merge_schema":
            w = w.mode("append").option("mergeSchema", "true")
        elif k == "overwrite":
            w = w.mode("overwrite")
        elif k == "replace_where":
            w = w.mode("overwrite").option("replaceWhere", op["where"])
        else:
            w = w.mode("overwrite").option("partitionOverwriteMode", "dynamic")
        w.save(path)
    elif k == "checkpoint":
        if fmt == "delta":
            spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path).checkpoint()
        else:
            from deltalog.tables import DeltaTable
            DeltaTable.forPath(spark, path).checkpoint()
    elif k == "delete":
        spark.sql(f"DELETE FROM {tbl} WHERE {op['where']}")
    elif k == "update":
        spark.sql(f"UPDATE {tbl} SET {op['set_sql']} WHERE {op['where']}")
    elif k == "merge":
        _df(spark, op["columns"], op["rows"]).createOrReplaceTempView("interop_src")
        spark.sql(f"MERGE INTO {tbl} t USING interop_src s ON t.id = s.id "
                  "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    elif k == "optimize":
        spark.sql(f"OPTIMIZE {tbl}")
    elif k == "restore":
        spark.sql(f"RESTORE TABLE {tbl} TO VERSION AS OF {op['restore_version']}")
    else:
        raise ValueError(k)


def read_queries(spark, fmt: str, path: str, packed: str) -> Dict[str, Any]:
    """queries: list of dicts {qid, group, version, timestamp, where}. Queries of one group (same
    expected schema) run as one union (one Spark job); a failing group runs query by query.
    Returns {"groups": {group: ipc}, "errors": {qid: traceback}}."""
    from pyspark.sql import functions as F
    queries = _unpack(packed)
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for q in queries:
        groups.setdefault(q["group"], []).append(q)

    bases: Dict[Any, Any] = {}

    def one(q):
        key = (q.get("version"), q.get("timestamp"))
        if key not in bases:   # one DataFrame (one snapshot) per version, filtered per query
            r = spark.read.format(fmt)
            if q.get("version") is not None:
                r = r.option("versionAsOf", q["version"])
            if q.get("timestamp") is not None:
                r = r.option("timestampAsOf", q["timestamp"])
            bases[key] = r.load(path)
        df = bases[key]
        if q.get("where"):
            df = df.where(q["where"])
        return df.withColumn("_q", F.lit(q["qid"]))

    out: Dict[str, Any] = {"groups": {}, "errors": {}}
    for g, qs in groups.items():
        try:
            df = one(qs[0])
            for q in qs[1:]:
                df = df.unionByName(one(q), allowMissingColumns=True)
            out["groups"][g] = _ipc(df.toArrow())
        except BaseException:
            parts = []
            for q in qs:
                try:
                    parts.append(_ipc(one(q).toArrow()))
                except BaseException:
                    out["errors"][q["qid"]] = error_text()
            out["groups"][g] = parts
    return out
