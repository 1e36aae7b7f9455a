"""Writer and reader adapters per engine. Readers return, per query, an Arrow table (or the error
text); ``normalize`` turns it into rows of comparable Python values (``reference.canon``)."""
from __future__ import annotations

import base64
import datetime as dt
import io
import os
import pickle
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
from decimal import Context, Decimal

from .generator import Op, Pred, UTC
from .predicates import literal, polars_expr, render

RELOAD = bool(os.environ.get("DELTALOG_INTEROP_RELOAD"))   # development: reload the modules in the peers
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ------------------------------------------------------------------------------------- types
def arrow_type(t: str) -> pa.DataType:
    from .reference import _split2, _struct_fields
    simple = {"long": pa.int64(), "int": pa.int32(), "double": pa.float64(), "float": pa.float32(),
              "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"),
              "string": pa.string(), "boolean": pa.bool_()}
    if t in simple:
        return simple[t]
    if t.startswith("decimal("):
        p, s = t[8:-1].split(",")
        return pa.decimal128(int(p), int(s))
    if t.startswith("array<"):
        return pa.list_(arrow_type(t[6:-1]))
    if t.startswith("map<"):
        k, v = _split2(t[4:-1])
        return pa.map_(arrow_type(k), arrow_type(v))
    if t.startswith("struct<"):
        return pa.struct([pa.field(n, arrow_type(ft)) for n, ft in _struct_fields(t)])
    raise ValueError(t)


def arrow_table(columns: List[Tuple[str, str]], rows: List[Dict[str, Any]]) -> pa.Table:
    def fix(v: Any, t: str) -> Any:
        if v is None:
            return None
        if t.startswith("map<"):
            return list(v.items())
        if t.startswith("decimal("):
            p, s = t[8:-1].split(",")
            return v.quantize(Decimal(1).scaleb(-int(s)), context=Context(prec=int(p)))
        return v
    schema = pa.schema([pa.field(n, arrow_type(t)) for n, t in columns])
    return pa.Table.from_pylist([{n: fix(r.get(n), t) for n, t in columns} for r in rows], schema=schema)


def latest_version(path: str) -> int:
    log = os.path.join(path, "_delta_log")
    if not os.path.isdir(log):
        return -1
    vs = [int(f[:20]) for f in os.listdir(log) if len(f) == 25 and f.endswith(".json") and f[:20].isdigit()]
    return max(vs) if vs else -1


def _pack(x: Any) -> str:
    return base64.b64encode(pickle.dumps(x)).decode()


def _from_ipc(s: str) -> pa.Table:
    return pa.ipc.open_stream(io.BytesIO(base64.b64decode(s))).read_all()


def sql_set(col: str, value: Any, t: str, dialect: str) -> str:
    from .predicates import ident
    return f"{ident(col, dialect)} = {'NULL' if value is None else literal(value, t, dialect)}"


# ------------------------------------------------------------------------------------ writers
def op_payload(op: Op, dialect: str, partition_by: List[str], props: Dict[str, str],
               restore_version: Optional[int]) -> Dict[str, Any]:
    coltypes = dict(op.columns)
    d: Dict[str, Any] = {"kind": op.kind, "columns": op.columns, "rows": op.rows,
                         "partition_by": partition_by, "props": props, "restore_version": restore_version}
    if op.pred is not None:
        d["where"] = render(op.pred, dialect)
    if op.kind == "update":
        d["set_sql"] = sql_set(op.set_col, op.set_value, coltypes[op.set_col], dialect)
        d["set_col"] = op.set_col
        d["set_value_sql"] = "NULL" if op.set_value is None else literal(op.set_value, coltypes[op.set_col], dialect)
    return d


SPARK_SIDE = """
import importlib, sys
if args['repo'] not in sys.path:
    sys.path.insert(0, args['repo'])
from integration.interop import spark_side
if args.get('reload'):
    from integration.interop import generator, predicates, reference, engines
    for m in (generator, predicates, reference, engines, spark_side):
        importlib.reload(m)
result = getattr(spark_side, args['fn'])(spark, args['fmt'], args['path'], args['packed'])
"""


class SparkEngine:
    """deltalog or delta-spark in its own Spark process (integration.peers.SparkPeer)."""

    def __init__(self, peer: Any):
        self.peer = peer
        self.name = peer.engine
        self.fmt = "delta" if peer.engine == "delta-spark" else "deltalog"
        self.dialect = "spark"

    def apply(self, path: str, payloads: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return self.peer.run(SPARK_SIDE, repo=REPO, reload=RELOAD, fn="apply_ops", fmt=self.fmt, path=path, packed=_pack(payloads))

    def read(self, path: str, queries: List[Dict[str, Any]]) -> Dict[int, Any]:
        qs = []
        for q in queries:
            ts = q.get("timestamp_ms")
            qs.append({"qid": q["qid"], "group": q["group"], "version": q.get("version"),
                       "timestamp": None if ts is None else _ts_text(ts),
                       "where": render(q["pred"], "spark") if q.get("pred") else None})
        res = self.peer.run(SPARK_SIDE, repo=REPO, reload=RELOAD, fn="read_queries", fmt=self.fmt, path=path, packed=_pack(qs))
        out: Dict[int, Any] = {qid: RuntimeError(err) for qid, err in res["errors"].items()}
        out = {int(k): v for k, v in out.items()}
        for g, ipc in res["groups"].items():
            tables = [_from_ipc(x) for x in (ipc if isinstance(ipc, list) else [ipc])]
            for t in tables:
                qcol = t.column("_q").to_pylist()
                for qid in set(qcol):
                    mask = pa.array([x == qid for x in qcol])
                    out[int(qid)] = t.filter(mask).drop_columns(["_q"])
        for q in queries:  # a query whose union part returned no rows
            if q["qid"] not in out:
                out[q["qid"]] = "empty"
        return out


def _ts_text(ms: int) -> str:
    t = dt.datetime.fromtimestamp(ms / 1000, tz=UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _ts_dt(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=UTC)


class DeltaRsEngine:
    name = "delta-rs"
    dialect = "datafusion"

    def apply(self, path: str, payloads: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        out = []
        for p in payloads:
            try:
                self._apply(path, p)
                out.append({"ok": True, "version": latest_version(path)})
            except BaseException:
                out.append({"ok": False, "error": error_text()})
                break
            time.sleep(0.03)
        return out

    def _apply(self, path: str, p: Dict[str, Any]) -> None:
        from deltalake import DeltaTable, write_deltalake
        k = p["kind"]
        if k in ("create", "append", "overwrite", "replace_where", "merge_schema"):
            data = arrow_table(p["columns"], p["rows"])
            kw: Dict[str, Any] = {}
            if k == "create":
                kw = dict(mode="error", partition_by=p["partition_by"] or None, configuration=p["props"])
            elif k == "append":
                kw = dict(mode="append")
            elif k == "merge_schema":
                kw = dict(mode="append", schema_mode="merge")
            elif k == "overwrite":
                kw = dict(mode="overwrite")
            else:
                kw = dict(mode="overwrite", predicate=p["where"])
            write_deltalake(path, data, **kw)
            return
        t = DeltaTable(path)
        if k == "checkpoint":
            t.create_checkpoint()
        elif k == "delete":
            t.delete(p["where"])
        elif k == "update":
            t.update(updates={f'"{p["set_col"]}"': p["set_value_sql"]}, predicate=p["where"])
        elif k == "merge":
            (t.merge(arrow_table(p["columns"], p["rows"]), predicate="t.id = s.id", source_alias="s", target_alias="t")
              .when_matched_update_all().when_not_matched_insert_all().execute())
        elif k == "optimize":
            t.optimize.compact()
        elif k == "restore":
            t.restore(p["restore_version"])
        else:
            raise ValueError(k)

    def read(self, path: str, queries: List[Dict[str, Any]]) -> Dict[int, Any]:
        from deltalake import DeltaTable, QueryBuilder
        out: Dict[int, Any] = {}
        for q in queries:
            try:
                if q.get("timestamp_ms") is not None:
                    t = DeltaTable(path)
                    t.load_as_version(_ts_dt(q["timestamp_ms"]))
                else:
                    t = DeltaTable(path, version=q["version"])
                sql = "SELECT * FROM t" + (f" WHERE {render(q['pred'], 'datafusion')}" if q.get("pred") else "")
                out[q["qid"]] = pa.table(QueryBuilder().register("t", t).execute(sql).read_all())
            except BaseException:
                out[q["qid"]] = RuntimeError(error_text())
        return out


class DuckDBEngine:
    name = "duckdb"
    dialect = "duckdb"

    def __init__(self):
        from integration.peers import duckdb_connection
        self.con = duckdb_connection()

    def read(self, path: str, queries: List[Dict[str, Any]]) -> Dict[int, Any]:
        out: Dict[int, Any] = {}
        for q in queries:
            if q.get("timestamp_ms") is not None:
                out[q["qid"]] = Unsupported("delta_scan has no timestamp parameter (version only)")
                continue
            try:
                sql = f"SELECT * FROM delta_scan('{path}', version={int(q['version'])})"
                if q.get("pred"):
                    sql += f" WHERE {render(q['pred'], 'duckdb')}"
                out[q["qid"]] = self.con.execute(sql).to_arrow_table()
            except BaseException:
                out[q["qid"]] = RuntimeError(error_text())
        return out


class PolarsEngine:
    name = "polars"
    dialect = "polars"

    def read(self, path: str, queries: List[Dict[str, Any]]) -> Dict[int, Any]:
        import polars as pl
        out: Dict[int, Any] = {}
        for q in queries:
            try:
                v = _ts_dt(q["timestamp_ms"]) if q.get("timestamp_ms") is not None else q["version"]
                lf = pl.scan_delta(path, version=v)
                if q.get("pred"):
                    lf = lf.filter(polars_expr(q["pred"]))
                out[q["qid"]] = lf.collect().to_arrow()
            except BaseException:
                out[q["qid"]] = RuntimeError(error_text())
        return out


class Unsupported(Exception):
    """The engine has no way to run this query (a cell marked unsupported, not a pass)."""


def error_text() -> str:
    """The current exception's message first, then the end of its traceback."""
    import sys
    e = sys.exc_info()[1]
    head = "".join(traceback.format_exception_only(type(e), e))
    return head[:2500] + "\n...\n" + traceback.format_exc()[-600:]


def normalize(result: Any, columns: List[Tuple[str, str]]) -> List[Dict[str, Any]]:
    """Rows of a reader's Arrow table, restricted to ``columns`` (an absent column raises)."""
    if isinstance(result, str) and result == "empty":
        return []
    t: pa.Table = result
    names = t.column_names
    missing = [c for c, _ in columns if c not in names]
    if missing:
        raise KeyError(f"columns {missing} absent from the result (has {names})")
    rows = t.select([c for c, _ in columns]).to_pylist()
    return rows
