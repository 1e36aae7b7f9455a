"""Named known-difference rules. Each rule describes one peer behaviour precisely: the readers (or
writers) it applies to, the writers whose files trigger it, and an ``explain`` function that removes
from a diff exactly the rows that behaviour accounts for. A check is a *known difference* only when
the matching rules explain every missing and extra row; anything left fails the matrix. Every rule
has an entry of the same name in integration/KNOWN_DIFFERENCES.md (with a minimal reproduction).
No rule applies to deltalog as a reader or writer (asserted below)."""
from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from .predicates import evaluate
from .reference import canon, row_key

Rows = List[Dict[str, Any]]
FLOAT_TYPES = ("double", "float")
_WK = "_writers"   # reference.WRITERS_KEY
READERS_ALL = ("deltalog", "delta-spark", "delta-rs", "duckdb", "polars")


@dataclass
class Ctx:
    seq: Any
    check: Any
    pred: Any
    state: Any
    rule_writers: Optional[FrozenSet[str]] = frozenset()   # None: any writer
    history: List[Any] = field(default_factory=list)   # states of the versions before this one
    op_versions: List[Any] = field(default_factory=list)   # (op, version it committed) so far
    checkpoints: List[Any] = field(default_factory=list)   # (version, engine that wrote the checkpoint)

    @property
    def writers(self) -> List[str]:
        return self.check.writers


@dataclass
class Rule:
    name: str
    summary: str
    readers: FrozenSet[str]
    writers: FrozenSet[str] = frozenset()          # one of these wrote (part of) the version; empty: any
    explain: Optional[Callable[[Ctx, Rows, Rows], Tuple[Rows, Rows]]] = None
    error: Optional[re.Pattern] = None              # for reader errors: the error text it explains
    when: Optional[Callable[[Ctx], bool]] = None    # further condition on the table / query
    any_writer: bool = False                        # a reader's own bug: whoever wrote the files
    corrupt_data: bool = False                      # a peer writer wrote wrong data: true for every reader
    # A value-substitution behaviour (the reader returns another value in place of some values):
    # (columns it concerns, which reference values it alters, whether a reference row is concerned).
    # These combine: one row may be altered by several such behaviours at once.
    subst: Optional[Tuple[Callable[[Ctx], List[str]], Callable[[Any], bool], Callable[[Ctx, Dict[str, Any]], bool]]] = None

    def applies(self, ctx: Ctx) -> bool:
        if ctx.check.reader not in self.readers:
            return False
        if not self.any_writer and not (set(ctx.writers) & self.writers):
            return False
        return self.when is None or self.when(ctx)


def _written_by(ctx: Ctx, rule_writers: FrozenSet[str], row: Dict[str, Any]) -> bool:
    """The reference row (by id) may sit in a file one of ``rule_writers`` wrote."""
    from .reference import WRITERS_KEY
    if rule_writers is None:
        return True
    ref = next((r for r in ctx.state.rows if r.get("id") == row.get("id")), None)
    return ref is not None and bool(ref.get(WRITERS_KEY, frozenset()) & rule_writers)


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _float_cols(ctx: Ctx) -> List[str]:
    return [c for c, t in ctx.state.columns if t in FLOAT_TYPES]


# ------------------------------------------------------------------------------------- explainers
def _empty_partition(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """The reader returns the partition value "" where the table (protocol) says null."""
    cols = ctx.state.columns
    state_keys = {row_key(r, cols) for r in ctx.state.rows}
    ok = lambda r: ctx.pred is None or evaluate(ctx.pred, r) is True  # noqa: E731
    left_m, left_e = [], []
    mine = lambda r: _written_by(ctx, ctx.rule_writers, r)  # noqa: E731
    for r in missing:
        if not mine(r):
            left_m.append(r)
            continue
        if r.get("p") is None and not ok(dict(r, p="")):
            continue
        if r.get("p") is None and any(row_key(dict(x, p=None), cols) == row_key(r, cols) for x in extra if x.get("p") == ""):
            continue
        left_m.append(r)
    for r in extra:
        if r.get("p") == "" and row_key(dict(r, p=None), cols) in state_keys and ok(r) and mine(r):
            continue
        left_e.append(r)
    return left_m, left_e


def _nan_rows_dropped(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """A filter on a float column loses rows whose value in that column is NaN (min/max statistics
    that leave NaN out used to skip files or row groups)."""
    fcols = [c for c in ctx.pred.columns() if c in _float_cols(ctx)]
    return [r for r in missing if not (any(_is_nan(r.get(c)) for c in fcols)
                                      and _written_by(ctx, ctx.rule_writers, r))], extra


def _substituted(ctx: Ctx, missing: Rows, extra: Rows, cols_of: Callable[[Ctx], List[str]],
                 affected: Callable[[Any], bool]) -> Tuple[Rows, Rows]:
    """The reader returns some other value in place of a value ``affected`` says it mishandles, in
    a column of ``cols_of``: an extra row is explained when it equals its reference row (same id)
    except in such values; a missing row when such a row came back altered, or when the query's
    predicate reads an affected value of it (the altered value can fail the predicate)."""
    cols = ctx.state.columns
    bad_cols = cols_of(ctx)
    by_id = {r["id"]: r for r in ctx.state.rows}

    def altered(x: Dict[str, Any]) -> bool:
        r = by_id.get(x.get("id"))
        if r is None:
            return False
        diff = [c for c, t in cols if canon(r.get(c), t) != canon(x.get(c), t)]
        return (bool(diff) and all(c in bad_cols and affected(r.get(c)) for c in diff)
                and _written_by(ctx, ctx.rule_writers, r))
    left_e = [x for x in extra if not altered(x)]
    altered_ids = {x["id"] for x in extra if altered(x)}
    pcols = [c for c in (ctx.pred.columns() if ctx.pred is not None else []) if c in bad_cols]
    left_m = [r for r in missing if not (r["id"] in altered_ids or (
        any(affected(r.get(c)) for c in pcols) and _written_by(ctx, ctx.rule_writers, r)))]
    return left_m, left_e


def _nan_or_zero(v: Any) -> bool:
    return isinstance(v, float) and (math.isnan(v) or v == 0.0)


def _replaced_by_constant(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """The reader returns, in place of a NaN or a signed zero, the constant min == max of the
    file's statistics (a number for NaN; the other zero for ±0.0)."""
    return _substituted(ctx, missing, extra, _float_cols, _nan_or_zero)


NS_MIN = datetime(1677, 9, 21, 0, 12, 43, 145225, tzinfo=timezone.utc)   # first microsecond in int64 ns
NS_MAX = datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=timezone.utc)


def _out_of_ns(v: Any) -> bool:
    return isinstance(v, datetime) and not (NS_MIN <= v <= NS_MAX)


def _ts_cols(c: Ctx) -> List[str]:
    return [n for n, t in c.state.columns if t == "timestamp"]


def _int96_as_ns(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """INT96 timestamps outside the int64-nanosecond range come back wrapped or clamped."""
    return _substituted(ctx, missing, extra, _ts_cols, _out_of_ns)


def _signed_zero_pruned(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """A comparison with a zero constant loses rows holding ±0.0: statistics whose bound is the
    other zero are compared with -0.0 < 0.0."""
    q = ctx.pred
    consts = q.value if isinstance(q.value, list) else [q.value]
    if q.col not in _float_cols(ctx) or not any(isinstance(x, float) and x == 0.0 for x in consts):
        return missing, extra
    zero = lambda v: isinstance(v, float) and v == 0.0   # noqa: E731
    return [r for r in missing if not (zero(r.get(q.col)) and _written_by(ctx, ctx.rule_writers, r))], extra


def _rewritten_int96(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """Rows delta-rs rewrote (UPDATE / DELETE / MERGE / OPTIMIZE copy-on-write, overwrite by
    predicate) from a file delta-spark wrote with INT96 timestamps: delta-rs read them as int64
    nanoseconds (wrapped) and wrote the wrapped values back — every reader then reads those."""
    from .reference import WRITERS_KEY
    by_id = {r["id"]: r for r in ctx.state.rows}
    rewritten = lambda r: {"delta-rs", "delta-spark"} <= set(r.get(WRITERS_KEY, ()))  # noqa: E731
    cols = ctx.state.columns
    tcols = _ts_cols(ctx)

    def altered(x: Dict[str, Any]) -> bool:
        r = by_id.get(x.get("id"))
        if r is None or not rewritten(r):
            return False
        diff = [c for c, t in cols if canon(r.get(c), t) != canon(x.get(c), t)]
        return bool(diff) and all(c in tcols and _out_of_ns(r.get(c)) for c in diff)
    left_e = [x for x in extra if not altered(x)]
    ids = {x["id"] for x in extra if altered(x)}
    pcols = [c for c in (ctx.pred.columns() if ctx.pred is not None else []) if c in tcols]
    left_m = [r for r in missing if not (r["id"] in ids or (
        rewritten(r) and any(_out_of_ns(r.get(c)) for c in pcols)))]
    return left_m, left_e


def _pred_on_float(ctx: Ctx) -> bool:
    return ctx.pred is not None and any(c in _float_cols(ctx) for c in ctx.pred.columns())


def _stale_after_reencoded_remove(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """Rows of files a delta-rs commit removed with a percent-encoded path while their add carries
    the raw (non-ASCII) partition directory: readers matching paths literally keep those files.
    A kept row is compared with the earlier row of the same id, except in values the same reader
    mishandles by another rule (DuckDB's column-mapped partition value, INT96 timestamps outside
    the nanosecond range for delta-rs / Polars)."""
    cols = ctx.state.columns
    reader = ctx.check.reader
    earlier: Dict[Any, List[Dict[str, Any]]] = {}
    for st in ctx.history:
        for r in st.rows:
            if isinstance(r.get("p"), str) and not r["p"].isascii():
                earlier.setdefault(r["id"], []).append(r)

    def same(x: Dict[str, Any], r: Dict[str, Any]) -> bool:
        for c, t in cols:
            if canon(x.get(c), t) == canon(r.get(c), t):
                continue
            if c == "p" and reader == "duckdb" and _colmap_partitioned(ctx):
                continue
            if t == "timestamp" and reader in ("delta-rs", "polars") and _out_of_ns(r.get(c)):
                continue
            return False
        return True
    return missing, [x for x in extra if not any(same(x, r) for r in earlier.get(x.get("id"), []))]


def _resurrected(ctx: Ctx) -> bool:
    """Before this version, a delta-rs commit (re-encoded removes) was followed by a delta-spark
    commit that rewrites files (OPTIMIZE / DELETE / UPDATE / MERGE / replaceWhere / dynamic
    overwrite): delta-spark still saw the removed files as live and rewrote their rows into new
    files, so the table now holds them for every reader."""
    ops = [(o, v) for o, v in ctx.op_versions if v <= ctx.check.version]
    for i, (o, v1) in enumerate(ops):
        if o.writer == "delta-rs" and o.kind in ("overwrite", "replace_where", "delete", "update", "merge",
                                                  "optimize", "restore"):
            if any(o2.writer == "delta-spark" and o2.kind in ("optimize", "delete", "update", "merge",
                                                             "replace_where", "dynamic_overwrite")
                   for o2, _ in ops[i + 1:]):
                return True
            # a checkpoint delta-rs or delta-spark wrote after it lists the removed files as live
            if any(v1 <= v2 <= ctx.check.version and w in ("delta-rs", "delta-spark") for v2, w in ctx.checkpoints):
                return True
    return False


def _colmap_partitioned(c: Ctx) -> bool:
    return c.seq.profile.partitioned and "column mapping" in c.seq.profile.features


def _escaped_in_path(v: Any) -> bool:
    """A partition value whose directory name is not plain ASCII: Spark writers percent-encode
    ASCII other than letters, digits and ``-_.`` in the file's path and keep non-ASCII characters
    raw; either way the path is not its own URL-encoded form."""
    return isinstance(v, str) and any(not (ch.isascii() and ch.isalnum()) and ch not in "-_." for ch in v)


def _deleted_row_resurfaces(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """Rows a deletion vector marks deleted in a file whose path is not plain ASCII: the reader
    returns them (equal to the row of an earlier version, in such a partition)."""
    cols = ctx.state.columns
    earlier: Dict[Any, List[Dict[str, Any]]] = {}
    for st in ctx.history:
        for r in st.rows:
            if _escaped_in_path(r.get("p")):
                earlier.setdefault(r["id"], []).append(r)
    int96 = _BY_NAME["int96-timestamp-read-as-nanoseconds"]

    def same(x: Dict[str, Any], r: Dict[str, Any]) -> bool:
        # a resurfaced row of a delta-spark file also carries Polars' clamped INT96 timestamps
        return all(canon(x.get(c), t) == canon(r.get(c), t)
                   or (t == "timestamp" and int96.applies(ctx) and _out_of_ns(r.get(c))
                       and "delta-spark" in r.get(_WK, ()))
                   for c, t in cols)
    return missing, [x for x in extra if not any(same(x, r) for r in earlier.get(x.get("id"), []))]


def _not_a_double(v: Any) -> bool:
    """A decimal a JSON double cannot carry: its shortest double form is another number."""
    return isinstance(v, Decimal) and v.is_finite() and Decimal(repr(float(v))) != v


def _decimal_stats_rounded(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """Rows of delta-rs files lost to file skipping: the predicate compares a decimal column whose
    value in the row a double cannot carry (delta-rs wrote the file's min/max rounded)."""
    dcols = _decimal_compared(ctx)
    return [r for r in missing if not (any(_not_a_double(r.get(c)) for c in dcols)
                                       and _written_by(ctx, ctx.rule_writers, r))], extra


def _decimal_compared(ctx: Ctx) -> List[str]:
    """Decimal columns the predicate compares with values (the comparisons file skipping uses)."""
    types = dict(ctx.state.columns)
    out, q = [], ctx.pred
    while q is not None:
        if q.op not in ("isnull", "isnotnull") and types.get(q.col, "").startswith("decimal"):
            out.append(q.col)
        q = q.and_
    return out


def _pred_on_decimal(ctx: Ctx) -> bool:
    return bool(_decimal_compared(ctx))


def _partition_value_wrong(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    return _substituted(ctx, missing, extra, lambda c: ["p"], lambda v: True)



# ops after which the table still holds every row it held before (no row removed or changed)
_KEEPS_ROWS = ("create", "append", "merge_schema", "checkpoint", "optimize")


def _kept_empty_partition_rows(ctx: Ctx) -> Dict[Any, Dict[str, Any]]:
    """Rows delta-rs wrote with the partition value "" (its add says ``{"p": ""}``, null by the
    protocol) that a later delta-spark dynamic overwrite of the null partition left in place,
    with only row-preserving operations since: {id: the row as delta-rs wrote it}."""
    ops = [(o, v) for o, v in ctx.op_versions if v <= ctx.check.version]
    kept: Dict[Any, Dict[str, Any]] = {}
    for i, (o, _) in enumerate(ops):
        if not (o.writer == "delta-spark" and o.kind == "dynamic_overwrite"
                and any(r.get("p") in (None, "") for r in o.rows)):
            continue
        if not all(o2.kind in _KEEPS_ROWS for o2, _ in ops[i + 1:]):
            continue
        for o1, _ in ops[:i]:
            if o1.writer == "delta-rs":
                kept.update({r["id"]: r for r in o1.rows if r.get("p") == ""})
    return kept


def _deltaspark_overwrite_kept_empty(ctx: Ctx, missing: Rows, extra: Rows) -> Tuple[Rows, Rows]:
    """Extra rows equal to a row delta-rs wrote with p = "" that delta-spark's dynamic overwrite
    of the null partition did not remove (the reader may return p as null or as '')."""
    cols = ctx.state.columns
    kept = _kept_empty_partition_rows(ctx)

    def explained(x: Dict[str, Any]) -> bool:
        r = kept.get(x.get("id"))
        if r is None or x.get("p") not in (None, ""):
            return False
        if any(canon(r.get(c), t) != canon(x.get(c), t) for c, t in cols if c != "p"):
            return False
        return ctx.pred is None or evaluate(ctx.pred, dict(r, p=x.get("p"))) is True
    return missing, [x for x in extra if not explained(x)]



RULES: List[Rule] = [
    Rule("empty-string-partition-read-as-empty",
         "an empty-string partition value (written as \"\" by delta-rs) is read back as '' instead of null",
         readers=frozenset({"delta-rs", "polars", "delta-spark"}), writers=frozenset({"delta-rs"}),
         explain=_empty_partition, when=lambda c: c.seq.profile.partitioned),
    Rule("nan-dropped-by-min-max-skipping",
         "filters on a float column drop NaN rows: file/row-group skipping on min/max statistics that leave NaN out",
         readers=frozenset({"delta-rs", "duckdb", "delta-spark"}), writers=frozenset({"delta-rs"}),
         explain=_nan_rows_dropped, when=_pred_on_float),
    Rule("int96-timestamp-read-as-nanoseconds",
         "INT96 timestamps (delta-spark's default Parquet timestamp type) outside 1677-09-21..2262-04-11 "
         "wrap (delta-rs) or are clamped (Polars): read into int64 nanoseconds",
         readers=frozenset({"delta-rs", "polars"}), writers=frozenset({"delta-spark"}),
         subst=(_ts_cols, _out_of_ns, lambda c, r: _written_by(c, frozenset({"delta-spark"}), r))),
    Rule("duckdb-deltars-signed-zero-stats-pruning",
         "a filter comparing a float column with 0.0 / -0.0 loses rows holding ±0.0 on files whose "
         "min/max statistics (as delta-spark writes them) carry the other zero",
         readers=frozenset({"duckdb", "delta-rs"}), writers=frozenset({"delta-spark", "delta-rs"}),
         explain=_signed_zero_pruned, when=_pred_on_float),
    Rule("deltaspark-signed-zero-parquet-pushdown",
         "delta-spark loses ±0.0 rows of a filter with a zero constant: its Parquet push-down orders "
         "-0.0 below 0.0 (raw signed-zero statistics of delta-rs files; IN (-0.0, 0.0) deduplicated "
         "to one zero and matched exactly against the dictionary of any writer's file)",
         readers=frozenset({"delta-spark"}), any_writer=True,
         explain=_signed_zero_pruned, when=_pred_on_float),
    Rule("deltars-rewrite-corrupts-int96-timestamps",
         "delta-rs rewriting rows of a delta-spark file (INT96 timestamps) writes the timestamps it "
         "misread as nanoseconds: the table then holds wrapped values for every reader",
         readers=frozenset(READERS_ALL), writers=frozenset({"delta-rs"}),
         subst=(_ts_cols, _out_of_ns, lambda c, r: {"delta-rs", "delta-spark"} <= set(r.get(_WK, ()))),
         corrupt_data=True),
    Rule("deltars-remove-path-reencoded",
         "delta-rs removes a file added with a raw non-ASCII path (as Spark writers write it) by a "
         "percent-encoded path; readers that match remove to add literally keep the file live",
         readers=frozenset({"delta-spark", "delta-rs", "duckdb", "polars"}), writers=frozenset({"delta-rs"}),
         explain=_stale_after_reencoded_remove, when=lambda c: c.seq.profile.partitioned),
    Rule("deltars-remove-path-reencoded-resurrected",
         "after delta-rs' re-encoded removes, a delta-spark rewrite (OPTIMIZE, DML) copies the "
         "removed files' rows into new live files, or a checkpoint by delta-rs / delta-spark lists "
         "the removed files as live: the table holds them for every reader",
         readers=frozenset(READERS_ALL), writers=frozenset({"delta-rs"}),
         explain=_stale_after_reencoded_remove, corrupt_data=True,
         when=lambda c: c.seq.profile.partitioned and _resurrected(c)),
    Rule("deltaspark-dynamic-overwrite-keeps-empty-string-partition",
         "delta-spark's dynamic partition overwrite of the null partition removes the files whose "
         "partitionValues say null but keeps those saying \"\" (delta-rs' empty string, null by the "
         "protocol): their rows stay in the table for every reader",
         readers=frozenset(READERS_ALL), writers=frozenset({"delta-spark"}),
         explain=_deltaspark_overwrite_kept_empty, corrupt_data=True,
         when=lambda c: c.seq.profile.partitioned and bool(_kept_empty_partition_rows(c))),
    Rule("duckdb-column-mapping-partition-values",
         "DuckDB's delta extension returns wrong partition values (null or another partition's) on "
         "column-mapped partitioned tables",
         readers=frozenset({"duckdb"}), any_writer=True, when=_colmap_partitioned,
         subst=(lambda c: ["p"], lambda v: True, lambda c, r: True)),
    Rule("polars-column-mapping-unsupported",
         "Polars scan_delta refuses column-mapped tables",
         readers=frozenset({"polars"}), any_writer=True,
         error=re.compile(r"column ?mapping", re.I), when=lambda c: "column mapping" in c.seq.profile.features),
    Rule("polars-dv-ignored-on-escaped-path",
         "Polars ignores the deletion vector of a file whose add path is not plain ASCII (a partition "
         "value with a space, '%', '=', '/' percent-encoded, or a raw non-ASCII character): rows the DV "
         "deletes come back",
         readers=frozenset({"polars"}), any_writer=True, explain=_deleted_row_resurfaces,
         when=lambda c: c.seq.profile.partitioned and "deletion vectors" in c.seq.profile.features),
    Rule("deltars-decimal-stats-rounded",
         "delta-rs writes decimal min/max statistics as JSON doubles: a decimal(38,10) bound with more "
         "digits than a double carries comes out rounded (a min above the file's smallest value, a max "
         "below its largest); readers skipping files on statistics lose the rows holding those values",
         readers=frozenset({"deltalog", "delta-spark"}), writers=frozenset({"delta-rs"}),
         explain=_decimal_stats_rounded, when=_pred_on_decimal, corrupt_data=True),
    Rule("deltars-value-read-as-stats-constant",
         "with a filter, delta-rs returns a file's min == max statistic in place of the values: a NaN "
         "comes back as a number (NaN-blind statistics), a -0.0 as 0.0",
         readers=frozenset({"delta-rs"}), writers=frozenset({"delta-rs", "delta-spark"}),
         when=lambda c: c.pred is not None,
         subst=(_float_cols, _nan_or_zero, lambda c, r: _written_by(c, frozenset({"delta-rs", "delta-spark"}), r))),
]
# Order matters where two behaviours meet in one diff: rows altered in place are paired first.
_ORDER = ["duckdb-column-mapping-partition-values", "deltars-rewrite-corrupts-int96-timestamps",
          "deltars-value-read-as-stats-constant",
          "int96-timestamp-read-as-nanoseconds", "empty-string-partition-read-as-empty"]
RULES.sort(key=lambda r: _ORDER.index(r.name) if r.name in _ORDER else len(_ORDER))
_BY_NAME = {r.name: r for r in RULES}
# A rule may list deltalog as a reader only when a peer *writer* put wrong data into the files
# (corrupt_data): then every reader, deltalog too, must read the wrong value, and the rule
# explains exactly those values. No rule names deltalog as the writer at fault.
assert all(("deltalog" not in r.readers or r.corrupt_data) and "deltalog" not in r.writers for r in RULES), \
    "no rule may excuse deltalog"

@dataclass
class WriteRule:
    """A peer writer's refusal or invalid commit: the op is then applied by another capable writer."""
    name: str
    summary: str
    writer: str
    kinds: FrozenSet[str]
    error: re.Pattern
    when: Optional[Callable[[Any], bool]] = None   # on the sequence

    readers: FrozenSet[str] = frozenset()          # (for the deltalog assertion below)
    writers: FrozenSet[str] = frozenset()


WRITE_RULES: List[WriteRule] = [
    WriteRule("deltars-column-mapping-protocol-missing-feature",
              "delta-rs creates a column-mapped table with a timestamp_ntz column at protocol (3,7) whose "
              "feature lists name timestampNtz but not columnMapping",
              "delta-rs", frozenset({"create"}),
              re.compile(r"lacks (writer|reader) feature columnMapping"),
              when=lambda seq: "column mapping" in seq.profile.features),
    WriteRule("deltars-merge-schema-column-mapping-refused",
              "delta-rs refuses schema evolution (schema_mode='merge') on column-mapped tables",
              "delta-rs", frozenset({"merge_schema"}),
              re.compile(r"Schema evolution on column-mapped tables is not yet supported"),
              when=lambda seq: "column mapping" in seq.profile.features),
]
assert all(r.writer != "deltalog" for r in WRITE_RULES), "no rule may excuse deltalog"


def classify_write(seq, op, error: str) -> Optional[str]:
    for r in WRITE_RULES:
        if (op.writer == r.writer and op.kind in r.kinds and r.error.search(error)
                and (r.when is None or r.when(seq))):
            return r.name
    return None


def classify_error(seq, check, pred, error: str, state=None) -> Optional[str]:
    ctx = Ctx(seq, check, pred, state)
    for r in RULES:
        if r.error is not None and r.applies(ctx) and r.error.search(error):
            return r.name
    return None


def _substitutions(ctx: Ctx, missing: Rows, extra: Rows, used: List[str]) -> Tuple[Rows, Rows]:
    """The value-substitution rules together: an extra row is explained when it equals its
    reference row (same id) except in values some applicable rule alters; a missing row when it
    came back altered, or when the predicate reads a value some applicable rule alters."""
    subs = [(r, r.subst[0](ctx), r.subst[1], r.subst[2]) for r in RULES if r.subst is not None and r.applies(ctx)]
    if not subs:
        return missing, extra
    cols = ctx.state.columns
    by_id = {r["id"]: r for r in ctx.state.rows}

    def cover(c: str, ref: Dict[str, Any]) -> List[str]:
        return [rule.name for rule, cs, aff, ok in subs if c in cs and aff(ref.get(c)) and ok(ctx, ref)]
    hit: List[str] = []
    left_e, altered = [], set()
    for x in extra:
        ref = by_id.get(x.get("id"))
        diff = [] if ref is None else [c for c, t in cols if canon(ref.get(c), t) != canon(x.get(c), t)]
        covers = [cover(c, ref) for c in diff]
        if diff and all(covers):
            altered.add(x["id"])
            hit += [n for cv in covers for n in cv[:1]]
        else:
            left_e.append(x)
    pcols = ctx.pred.columns() if ctx.pred is not None else []
    left_m = []
    for r in missing:
        if r["id"] in altered:
            continue
        via = [cover(c, r) for c in pcols]
        if any(via):
            hit += [n for cv in via for n in cv[:1]]
            continue
        left_m.append(r)
    for n in dict.fromkeys(hit):
        if n not in used:
            used.append(n)
    return left_m, left_e


def classify_diff(seq, check, pred, missing: Rows, extra: Rows, state, history=(),
                  op_versions=(), checkpoints=()) -> Tuple[Optional[str], Rows, Rows]:
    """(rule names joined by '+', or None when rows are left unexplained; the rows left)."""
    ctx = Ctx(seq, check, pred, state, history=list(history), op_versions=list(op_versions),
              checkpoints=list(checkpoints))
    used: List[str] = []
    missing, extra = _substitutions(ctx, missing, extra, used)
    if not missing and not extra and used:
        return "+".join(used), [], []
    for r in RULES:
        if r.explain is None or not r.applies(ctx):
            continue
        ctx.rule_writers = None if r.any_writer else r.writers
        m2, e2 = r.explain(ctx, missing, extra)
        if len(m2) + len(e2) < len(missing) + len(extra):
            used.append(r.name)
            missing, extra = m2, e2
        if not missing and not extra:
            return "+".join(used), [], []
    return None, missing, extra
