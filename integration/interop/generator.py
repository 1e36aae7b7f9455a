"""Seeded operation sequences and their data (pure Python, no engine).

A *sequence* is a table profile (partitioning, table features), a writer mode (one engine, or
``mixed``) and a list of operations. Each operation names the engines able to apply it
(``CAPABLE``); the sequence's writer applies it when it can, otherwise one of the capable engines
does (recorded on the op). Adding deltalog to DELETE/UPDATE/MERGE/OPTIMIZE/RESTORE once those
land is one line in ``CAPABLE``.

Values reach every edge the issue lists: nulls, NaN, ±0.0, ±inf, decimals at their precision,
dates 0001-01-01 / 9999-12-31 / before 1900 and around the Julian/Gregorian switch, timestamps
and timestamp_ntz at both ends, before 1900 and outside the nanosecond range, empty strings and
unicode (also in partition values), nested structs / arrays / maps.
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Dict, List, Optional, Sequence, Tuple

UTC = dt.timezone.utc

WRITERS = ("deltalog", "delta-spark", "delta-rs")
WRITER_MODES = WRITERS + ("mixed",)
READERS = ("deltalog", "delta-spark", "delta-rs", "duckdb", "polars")

# Which engines can apply each operation. deltalog gets DML/OPTIMIZE/RESTORE by adding its name here.
CAPABLE: Dict[str, Tuple[str, ...]] = {
    "create": WRITERS,
    "append": WRITERS,
    "overwrite": WRITERS,
    "replace_where": WRITERS,
    "dynamic_overwrite": ("deltalog", "delta-spark"),     # delta-rs: predicate overwrite only
    "merge_schema": WRITERS,
    "checkpoint": WRITERS,
    "delete": ("deltalog", "delta-spark", "delta-rs"),
    "update": ("deltalog", "delta-spark", "delta-rs"),
    "merge": ("deltalog", "delta-spark", "delta-rs"),
    "optimize": ("deltalog", "delta-spark", "delta-rs"),
    "restore": ("deltalog", "delta-spark", "delta-rs"),
}
# Operations that change no data and may commit nothing (checkpoint never commits).
NO_DATA_CHANGE = {"checkpoint", "optimize"}

# ---------------------------------------------------------------------------------------- schema
BASE_COLUMNS: List[Tuple[str, str]] = [
    ("id", "long"),
    ("p", "string"),            # the partition column of partitioned profiles
    ("i", "int"),
    ("d", "double"),
    ("f", "float"),
    ("dec", "decimal(9,2)"),
    ("big", "decimal(38,10)"),
    ("dt", "date"),
    ("ts", "timestamp"),
    ("tsn", "timestamp_ntz"),
    ("s", "string"),
    ("b", "boolean"),
    ("st", "struct<a:int,b:array<string>>"),
    ("arr", "array<double>"),
    ("m", "map<string,int>"),
]
EVOLVED_COLUMN = ("x2", "string")   # added by the merge_schema operation

F32_MAX = 3.4028234663852886e38
BIG = Decimal("9999999999999999999999999999.9999999999")

POOLS: Dict[str, List[Any]] = {
    "p": ["a", "b c", "ü日本", "", None, "x=1%/y"],
    "i": [None, 0, 1, -1, 2147483647, -2147483648, 42, 7],
    "d": [None, float("nan"), 0.0, -0.0, float("inf"), float("-inf"), 1.5, -2.5, 1.7976931348623157e308, 5e-324],
    "f": [None, float("nan"), 0.0, -0.0, float("inf"), float("-inf"), 1.5, -0.25, F32_MAX],
    "dec": [None, Decimal("9999999.99"), Decimal("-9999999.99"), Decimal("0.00"), Decimal("-0.05"), Decimal("0.01")],
    "big": [None, BIG, BIG.copy_negate(), Decimal("0E-10"), Decimal("1E-10"), Decimal("-1E-10")],
    "dt": [None, dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1899, 12, 31), dt.date(1582, 10, 4),
           dt.date(1970, 1, 1), dt.date(2024, 2, 29)],
    "ts": [None, dt.datetime(1, 1, 1, tzinfo=UTC), dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
           dt.datetime(1899, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
           dt.datetime(1677, 9, 21, 0, 12, 43, 145224, tzinfo=UTC),
           dt.datetime(2262, 4, 11, 23, 47, 16, 854776, tzinfo=UTC),
           dt.datetime(1970, 1, 1, tzinfo=UTC), dt.datetime(2024, 6, 1, 12, 34, 56, 789012, tzinfo=UTC)],
    "tsn": [None, dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
            dt.datetime(1850, 6, 15, 8, 0, 0, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            dt.datetime(2024, 6, 1, 12, 34, 56, 789012)],
    "s": [None, "", "a", "ü日本🙂", " ", "z" * 40 + "a", "z" * 40],
    "b": [None, True, False],
    "st": [None, {"a": None, "b": None}, {"a": 1, "b": []}, {"a": -2, "b": ["x", None, "", "ü"]}],
    "arr": [None, [], [float("nan"), -0.0, None, float("inf")], [1.0]],
    "m": [None, {}, {"k": 1, "ü": None}, {"": 0}],
    "x2": [None, "", "new", "ü"],
}


@dataclass
class Profile:
    name: str
    partitioned: bool
    properties: Dict[str, str]
    dml: bool = False          # DELETE/UPDATE/MERGE/OPTIMIZE/RESTORE in the op mix

    @property
    def features(self) -> List[str]:
        out = ["partitioned"] if self.partitioned else ["unpartitioned"]
        if self.properties.get("delta.columnMapping.mode"):
            out.append("column mapping")
        if self.properties.get("delta.enableDeletionVectors") == "true":
            out.append("deletion vectors")
        if self.properties.get("delta.enableChangeDataFeed") == "true":
            out.append("CDF")
        return out


PROFILES: List[Profile] = [
    Profile("partitioned", True, {"delta.checkpointInterval": "3"}),
    Profile("dv-cdf", True, {"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"}, dml=True),
    Profile("column-mapping", True, {"delta.columnMapping.mode": "name"}),
    Profile("unpartitioned-dml", False, {"delta.enableDeletionVectors": "true"}, dml=True),
]


@dataclass
class Pred:
    """A predicate: ``op`` in = != < <= > >= isnull isnotnull in between; ``value`` a Python value
    (a list for in, a pair for between); ``and_`` an optional second predicate (AND)."""
    col: str
    ctype: str
    op: str
    value: Any = None
    and_: Optional["Pred"] = None

    def describe(self) -> str:
        def one(q: "Pred") -> str:
            if q.op in ("isnull", "isnotnull"):
                return f"{q.col} {'IS NULL' if q.op == 'isnull' else 'IS NOT NULL'}"
            return f"{q.col} {q.op} {q.value!r}"
        return one(self) + (f" AND {one(self.and_)}" if self.and_ else "")

    def columns(self) -> List[str]:
        return [self.col] + (self.and_.columns() if self.and_ else [])


@dataclass
class Op:
    kind: str
    writer: str = ""
    rows: List[Dict[str, Any]] = field(default_factory=list)
    columns: List[Tuple[str, str]] = field(default_factory=list)   # schema of rows (after the op)
    pred: Optional[Pred] = None          # replace_where / delete / update condition
    set_col: str = ""                    # update: column and value
    set_value: Any = None
    restore_to: int = -1                 # restore: index of the op whose version is restored

    def describe(self) -> str:
        extra = ""
        if self.pred:
            extra += f" where {self.pred.describe()}"
        if self.kind == "update":
            extra += f" set {self.set_col}={self.set_value!r}"
        if self.kind == "restore":
            extra += f" to the version of op {self.restore_to}"
        if self.rows:
            extra += f" ({len(self.rows)} rows)"
        return f"{self.kind}[{self.writer}]{extra}"


@dataclass
class Sequence_:
    seed: int
    profile: Profile
    writer_mode: str
    ops: List[Op]

    @property
    def partition_by(self) -> List[str]:
        return ["p"] if self.profile.partitioned else []

    def writers(self) -> List[str]:
        return sorted({o.writer for o in self.ops})


def sequence_params(seed: int) -> Tuple[Profile, str]:
    """Writer mode and profile of a seed: every block of 4 seeds has each writer mode once and, over
    4 blocks, every (writer mode, profile) pair occurs."""
    mode = WRITER_MODES[seed % len(WRITER_MODES)]
    profile = PROFILES[(seed + seed // len(WRITER_MODES)) % len(PROFILES)]
    return profile, mode


class _Gen:
    def __init__(self, seed: int, profile: Profile, mode: str, n_ops: int):
        self.rng = random.Random(seed)
        self.profile = profile
        self.mode = mode
        self.n_ops = n_ops
        self.next_id = 0
        self.columns = list(BASE_COLUMNS)
        self.edge_cursor = 0

    def pick_writer(self, kind: str) -> str:
        capable = CAPABLE[kind]
        if self.mode != "mixed" and self.mode in capable:
            return self.mode
        return self.rng.choice(capable)

    def row(self, edge: bool, p: Any = "__any__") -> Dict[str, Any]:
        r: Dict[str, Any] = {"id": self.next_id}
        self.next_id += 1
        for name, _t in self.columns:
            if name == "id":
                continue
            pool = POOLS[name]
            if edge:  # walk every pool in step, so every edge value occurs in the first rows
                v = pool[self.edge_cursor % len(pool)]
            else:
                v = self.rng.choice(pool)
            r[name] = v
        if edge:
            self.edge_cursor += 1
        if p != "__any__":
            r["p"] = p
        return r

    def rows(self, n: int, edges: bool = False, p: Any = "__any__") -> List[Dict[str, Any]]:
        out = []
        if edges:
            width = max(len(POOLS[c]) for c, _ in self.columns if c in POOLS)
            out = [self.row(True, p) for _ in range(width)]
        out += [self.row(False, p) for _ in range(n)]
        return out

    def partition_pred(self) -> Pred:
        vals = [v for v in POOLS["p"] if v not in ("", None)]
        if self.rng.random() < 0.5:
            return Pred("p", "string", "=", self.rng.choice(vals))
        return Pred("p", "string", "in", self.rng.sample(vals, 2))

    def data_pred(self) -> Pred:
        """Conditions for replaceWhere / DELETE / UPDATE: on int, string, date and partition columns
        only (their SQL semantics agree in Spark and DataFusion)."""
        c = self.rng.choice(["i", "dt", "id", "s"] + (["p"] if self.profile.partitioned else []))
        if c == "i":
            return Pred("i", "int", self.rng.choice(["<", ">=", "="]), self.rng.choice([0, 1, 42, -1]))
        if c == "id":
            return Pred("id", "long", "<", self.rng.randrange(max(self.next_id, 1)))
        if c == "dt":
            return Pred("dt", "date", self.rng.choice(["<", ">"]), dt.date(1970, 1, 1))
        if c == "s":
            return Pred("s", "string", "isnull")
        return self.partition_pred()

    def op(self, kind: str, first: bool = False) -> Op:
        rng = self.rng
        w = self.pick_writer(kind)
        o = Op(kind, w)
        if kind in ("create", "append", "overwrite"):
            o.rows = self.rows(rng.randint(3, 8), edges=first or rng.random() < 0.3)
        elif kind == "merge_schema":
            self.columns = self.columns + [EVOLVED_COLUMN]
            o.rows = self.rows(rng.randint(3, 6))
        elif kind == "replace_where":
            if self.profile.partitioned:
                o.pred = self.partition_pred()
                vals = o.pred.value if o.pred.op == "in" else [o.pred.value]
                o.rows = [self.row(False, rng.choice(vals)) for _ in range(rng.randint(2, 6))]
            else:
                # a data predicate: rows written must satisfy it
                o.pred = Pred("i", "int", ">=", 42)
                o.rows = [dict(self.row(False), i=rng.choice([42, 2147483647])) for _ in range(rng.randint(2, 6))]
        elif kind == "dynamic_overwrite":
            vals = rng.sample(POOLS["p"], 2)
            o.rows = [self.row(False, rng.choice(vals)) for _ in range(rng.randint(2, 6))]
        elif kind in ("delete", "update"):
            o.pred = self.data_pred()
            if kind == "update":
                o.set_col, o.set_value = rng.choice([("i", 7), ("s", "upd ü"), ("i", None)])
        elif kind == "merge":
            # updates some existing ids, inserts new ones
            old = rng.sample(range(self.next_id), min(self.next_id, rng.randint(1, 4))) if self.next_id else []
            o.rows = [dict(self.row(False), id=k) for k in old] + self.rows(rng.randint(1, 3))
        o.columns = list(self.columns)
        return o


def generate(seed: int, n_ops: Optional[int] = None, writer_mode: Optional[str] = None,
             max_ops: Optional[int] = None) -> Sequence_:
    profile, mode = sequence_params(seed)
    if writer_mode is not None:
        assert writer_mode in WRITER_MODES, writer_mode
        mode = writer_mode
    rng = random.Random(seed * 7919 + 1)
    n = n_ops if n_ops is not None else rng.randint(5, 8)
    if max_ops is not None:
        n = min(n, max_ops)
    g = _Gen(seed, profile, mode, n)
    ops = [g.op("create", first=True)]
    kinds = ["append", "append", "overwrite", "replace_where", "merge_schema", "checkpoint"]
    if profile.partitioned:
        kinds.append("dynamic_overwrite")
    if profile.dml:
        kinds += ["delete", "delete", "update", "merge", "optimize", "restore"]
    evolved = False
    cols_after: List[List[Tuple[str, str]]] = [list(g.columns)]
    for k in range(n - 1):
        kind = g.rng.choice(kinds)
        if kind == "merge_schema" and evolved:
            kind = "append"
        if kind == "restore":
            targets = [j for j, o in enumerate(ops[:-1]) if o.kind not in NO_DATA_CHANGE and o.kind != "restore"]
            if not targets or ops[-1].kind in NO_DATA_CHANGE | {"restore"}:
                kind = "append"
        if kind == "restore":
            j = g.rng.choice(targets)
            g.columns = list(cols_after[j])
            evolved = any(c == EVOLVED_COLUMN for c in g.columns)
            o = g.op("restore")
            o.restore_to = j   # the version op j committed (the runner resolves it)
        else:
            if kind == "merge_schema":
                evolved = True
            o = g.op(kind)
        ops.append(o)
        cols_after.append(list(g.columns))
    return Sequence_(seed, profile, mode, ops)
