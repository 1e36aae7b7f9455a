"""Read predicates: generation from edge constants, rendering per engine dialect (Spark SQL,
DuckDB SQL, DataFusion SQL for delta-rs, Polars expressions) and evaluation under Spark SQL
semantics (three-valued logic; NaN = NaN and NaN above every other double; -0.0 = 0.0)."""
from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal
from typing import Any, Dict, List, Optional

from .generator import POOLS, Pred, UTC

EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_NTZ = dt.datetime(1970, 1, 1)

# column -> type of the columns predicates are generated on
PRED_COLUMNS = {"id": "long", "p": "string", "i": "int", "d": "double", "f": "float", "dec": "decimal(9,2)",
                "big": "decimal(38,10)", "dt": "date", "ts": "timestamp", "tsn": "timestamp_ntz", "s": "string",
                "b": "boolean"}
CMP = ["=", "!=", "<", "<=", ">", ">="]


def family(ctype: str) -> str:
    """The feature a predicate on this type exercises (a column of the interop table)."""
    if ctype in ("double", "float"):
        return "filter: float (NaN, ±0, ±inf)"
    if ctype.startswith("decimal"):
        return "filter: decimal"
    if ctype in ("date", "timestamp", "timestamp_ntz"):
        return "filter: date/timestamp"
    if ctype == "string":
        return "filter: string"
    return "filter: int/bool"


def gen_pred(rng: random.Random, columns: List[str], partitioned: bool) -> Pred:
    cands = [c for c in PRED_COLUMNS if c in columns]
    # weight the float columns and the timestamps: that is where engines disagree
    cands += [c for c in ("d", "f", "d", "ts", "tsn") if c in columns]
    c = rng.choice(cands)
    t = PRED_COLUMNS[c]
    pool = [v for v in POOLS.get(c, []) if v is not None] or [0]
    if c == "id":
        pool = [0, 5, 17, 40]
    if c in ("d", "f"):
        pool = pool + [0.0, -0.0, float("nan"), 1.0]
    r = rng.random()
    if r < 0.12:
        q = Pred(c, t, rng.choice(["isnull", "isnotnull"]))
    elif r < 0.25 and t != "boolean":
        q = Pred(c, t, "in", rng.sample(pool, min(2, len(pool))))
    elif r < 0.35 and t not in ("boolean",):
        a, b = rng.choice(pool), rng.choice(pool)
        q = Pred(c, t, "between", sorted([a, b], key=sort_key))
    else:
        q = Pred(c, t, rng.choice(CMP if t != "boolean" else ["=", "!="]), rng.choice(pool))
    if partitioned and c != "p" and rng.random() < 0.2:
        q.and_ = Pred("p", "string", "=", rng.choice([v for v in POOLS["p"] if v]))
    return q


# ----------------------------------------------------------------------------- Spark semantics
def sort_key(v: Any) -> Any:
    """Spark's ordering of a non-null value (NaN above every number, -0.0 = 0.0)."""
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v + 0.0)
    return (0, v)


def _cmp(a: Any, b: Any) -> int:
    ka, kb = sort_key(a), sort_key(b)
    return (ka > kb) - (ka < kb)


def evaluate(q: Pred, row: Dict[str, Any]) -> Optional[bool]:
    """Three-valued result of ``q`` on ``row`` under Spark SQL semantics."""
    v = row.get(q.col)
    if q.op == "isnull":
        res: Optional[bool] = v is None
    elif q.op == "isnotnull":
        res = v is not None
    elif v is None:
        res = None
    elif q.op == "in":
        res = any(_cmp(v, x) == 0 for x in q.value)
    elif q.op == "between":
        res = _cmp(v, q.value[0]) >= 0 and _cmp(v, q.value[1]) <= 0
    else:
        c = _cmp(v, q.value)
        res = {"=": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[q.op]
    if q.and_ is None:
        return res
    other = evaluate(q.and_, row)
    if res is False or other is False:
        return False
    if res is None or other is None:
        return None
    return True


# ----------------------------------------------------------------------------------- rendering
def _micros(v: dt.datetime) -> int:
    base = EPOCH if v.tzinfo else EPOCH_NTZ
    d = v - base
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _float_text(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def literal(v: Any, t: str, dialect: str) -> str:
    if isinstance(v, bool) or t == "boolean":
        return "TRUE" if v else "FALSE"
    if t in ("int", "long"):
        return str(v)
    if t in ("double", "float"):
        sql_t = "DOUBLE" if t == "double" else "FLOAT"
        return f"CAST('{_float_text(v)}' AS {sql_t})"
    if t.startswith("decimal"):
        return f"CAST('{v:f}' AS {t.upper()})"
    if t == "string":
        return "'" + v.replace("'", "''") + "'"
    if t == "date":
        return f"DATE '{v.isoformat()}'" if dialect != "datafusion" else f"CAST('{v.isoformat()}' AS DATE)"
    if t == "timestamp":
        text = v.strftime("%Y-%m-%d %H:%M:%S.%f").rjust(26, "0")
        if dialect == "spark":
            return f"TIMESTAMP '{text}+00:00'"
        if dialect == "duckdb":
            return f"TIMESTAMPTZ '{text}+00'"
        return f"arrow_cast({_micros(v)}, 'Timestamp(Microsecond, Some(\"UTC\"))')"
    if t == "timestamp_ntz":
        text = v.strftime("%Y-%m-%d %H:%M:%S.%f").rjust(26, "0")
        if dialect == "spark":
            return f"TIMESTAMP_NTZ '{text}'"
        if dialect == "duckdb":
            return f"TIMESTAMP '{text}'"
        return f"arrow_cast({_micros(v)}, 'Timestamp(Microsecond, None)')"
    raise ValueError(t)


def ident(c: str, dialect: str) -> str:
    return f"`{c}`" if dialect == "spark" else f'"{c}"'


def render(q: Pred, dialect: str) -> str:
    """``q`` as SQL of ``dialect``: spark, duckdb or datafusion."""
    col = ident(q.col, dialect)
    if q.op == "isnull":
        s = f"{col} IS NULL"
    elif q.op == "isnotnull":
        s = f"{col} IS NOT NULL"
    elif q.op == "in":
        s = f"{col} IN ({', '.join(literal(x, q.ctype, dialect) for x in q.value)})"
    elif q.op == "between":
        s = f"{col} BETWEEN {literal(q.value[0], q.ctype, dialect)} AND {literal(q.value[1], q.ctype, dialect)}"
    else:
        op = "<>" if q.op == "!=" else q.op
        s = f"{col} {op} {literal(q.value, q.ctype, dialect)}"
    if q.and_ is not None:
        s = f"({s}) AND ({render(q.and_, dialect)})"
    return s


def polars_expr(q: Pred):
    import polars as pl

    def lit(v: Any):
        t = q.ctype
        if t == "double":
            return pl.lit(v, dtype=pl.Float64)
        if t == "float":
            return pl.lit(v, dtype=pl.Float32)
        if t.startswith("decimal"):
            p, s = t[8:-1].split(",")
            return pl.lit(v, dtype=pl.Decimal(int(p), int(s)))
        if t == "timestamp":
            return pl.lit(v, dtype=pl.Datetime("us", "UTC"))
        if t == "timestamp_ntz":
            return pl.lit(v, dtype=pl.Datetime("us"))
        if t == "date":
            return pl.lit(v, dtype=pl.Date)
        if t == "int":
            return pl.lit(v, dtype=pl.Int32)
        if t == "long":
            return pl.lit(v, dtype=pl.Int64)
        return pl.lit(v)

    c = pl.col(q.col)
    if q.op == "isnull":
        e = c.is_null()
    elif q.op == "isnotnull":
        e = c.is_not_null()
    elif q.op == "in":
        e = pl.any_horizontal([c == lit(x) for x in q.value])
    elif q.op == "between":
        e = (c >= lit(q.value[0])) & (c <= lit(q.value[1]))
    else:
        x = lit(q.value)
        e = {"=": c == x, "!=": c != x, "<": c < x, "<=": c <= x, ">": c > x, ">=": c >= x}[q.op]
    if q.and_ is not None:
        e = e & polars_expr(q.and_)
    return e
