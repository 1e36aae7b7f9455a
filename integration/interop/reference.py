"""The expected table state after every operation, computed on plain Python lists (no engine).

State = (columns, rows). Partition values: an empty string is null (the protocol's rule), so a
partition column's ``''`` is stored as ``None`` on partitioned tables.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

from .generator import Op, Sequence_
from .predicates import evaluate


# Hidden key of a reference row: the engines that may have written the file now holding it (a
# rewrite by DML/OPTIMIZE may move a row into another engine's file). Rules use it to match only
# rows written by the engine whose files trigger a peer's behaviour. Never compared.
WRITERS_KEY = "_writers"


@dataclass
class State:
    columns: List[Tuple[str, str]]
    rows: List[Dict[str, Any]]

    @property
    def names(self) -> List[str]:
        return [c for c, _ in self.columns]


def _norm_row(r: Dict[str, Any], columns: List[Tuple[str, str]], partitioned: bool) -> Dict[str, Any]:
    out = {c: r.get(c) for c, _ in columns}
    out[WRITERS_KEY] = r.get(WRITERS_KEY, frozenset())
    if partitioned and out.get("p") == "":
        out["p"] = None
    return out


def apply(state: Optional[State], op: Op, partitioned: bool, history: List[State]) -> State:
    """The state after ``op``; ``history[j]`` is the state after op j (for restore)."""
    cols = op.columns
    w = frozenset([op.writer])
    new = [dict(_norm_row(r, cols, partitioned), **{WRITERS_KEY: w}) for r in op.rows]
    old = [] if state is None else [_norm_row(r, cols, partitioned) for r in state.rows]
    k = op.kind
    if k in ("replace_where", "delete", "update", "merge", "optimize"):   # files may be rewritten
        old = [dict(r, **{WRITERS_KEY: r[WRITERS_KEY] | w}) for r in old]
    if k in ("create", "append", "merge_schema"):
        rows = old + new
    elif k == "overwrite":
        rows = new
    elif k in ("replace_where", "delete"):
        rows = [r for r in old if evaluate(op.pred, r) is not True] + (new if k == "replace_where" else [])
    elif k == "dynamic_overwrite":
        parts = {r["p"] for r in new}
        rows = [r for r in old if r["p"] not in parts] + new
    elif k == "update":
        # (an updated row keeps its provenance: its other values were read from the old file)
        rows = [dict(r, **{op.set_col: op.set_value}) if evaluate(op.pred, r) is True else r for r in old]
    elif k == "merge":
        src = {r["id"]: r for r in new}
        rows = [src.pop(r["id"]) if r["id"] in src else r for r in old] + list(src.values())
    elif k in ("checkpoint", "optimize"):
        rows = old
    elif k == "restore":
        target = history[op.restore_to]
        return State(list(target.columns), [dict(r) for r in target.rows])
    else:
        raise ValueError(k)
    return State(list(cols), rows)


# ------------------------------------------------------------------------------ comparison keys
def canon(v: Any, t: str) -> Any:
    """A hashable, exact form of a value of type ``t`` (NaN and -0.0 kept apart as the type allows)."""
    if v is None:
        return None
    if t in ("double", "float"):
        v = float(v)
        if math.isnan(v):
            return "NaN"
        if v == 0.0:
            return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
        return repr(v)
    if t.startswith("decimal"):
        return ("dec", Decimal(v).normalize() if Decimal(v) != 0 else Decimal(0))
    if t == "timestamp":
        if not isinstance(v, datetime):
            return ("bad-timestamp", repr(v))
        if v.tzinfo is None:
            return ("naive-for-timestamp", v.isoformat())
        return ("ts", v.astimezone(timezone.utc).replace(tzinfo=None).isoformat())
    if t == "timestamp_ntz":
        if not isinstance(v, datetime):
            return ("bad-timestamp_ntz", repr(v))
        if v.tzinfo is not None:
            return ("aware-for-ntz", v.isoformat())
        return ("ntz", v.isoformat())
    if t.startswith("array<"):
        inner = t[6:-1]
        return tuple(canon(x, inner) for x in v)
    if t.startswith("map<"):
        kt, vt = _split2(t[4:-1])
        items = v.items() if isinstance(v, dict) else [
            (x["key"], x["value"]) if isinstance(x, dict) else tuple(x) for x in v]
        return ("map", tuple(sorted((canon(a, kt), canon(b, vt)) for a, b in items)))
    if t.startswith("struct<"):
        fields = _struct_fields(t)
        if isinstance(v, dict):
            return tuple(canon(v.get(n), ft) for n, ft in fields)
        return tuple(canon(x, ft) for x, (n, ft) in zip(v, fields))
    if t == "boolean":
        return bool(v)
    if t in ("int", "long"):
        return int(v)
    return v


def _split2(s: str) -> Tuple[str, str]:
    depth = 0
    for i, ch in enumerate(s):
        depth += ch in "<(" 
        depth -= ch in ">)"
        if ch == "," and depth == 0:
            return s[:i], s[i + 1:]
    raise ValueError(s)


def _struct_fields(t: str) -> List[Tuple[str, str]]:
    body, out, depth, start = t[7:-1], [], 0, 0
    for i, ch in enumerate(body + ","):
        depth += ch in "<("
        depth -= ch in ">)"
        if ch == "," and depth == 0:
            name, ft = body[start:i].split(":", 1)
            out.append((name, ft))
            start = i + 1
    return out


def row_key(r: Dict[str, Any], columns: List[Tuple[str, str]]) -> Tuple:
    return tuple(canon(r.get(c), t) for c, t in columns)


def multiset(rows: List[Dict[str, Any]], columns: List[Tuple[str, str]]) -> Counter:
    return Counter(row_key(r, columns) for r in rows)
