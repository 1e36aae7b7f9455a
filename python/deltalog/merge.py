"""``DeltaMergeBuilder``: the clauses of a MERGE started by ``DeltaTable.merge`` (delta-spark's API).

Each ``when…`` method returns a new builder with the clause added (the builder itself is not
changed); ``execute()`` runs the MERGE in the JVM (``io.deltalog.api.MergeBuilder``) and returns a
one-row DataFrame ``num_affected_rows, num_updated_rows, num_deleted_rows, num_inserted_rows``
(delta-spark returns that DataFrame too since 3.x). Clause rules are delta-spark's: every clause but
the last of a kind needs a condition; a target row matched by several source rows fails with
``DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE`` and nothing is written.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from deltalog._jvm import api_class
from deltalog._jvm import call as _call

if TYPE_CHECKING:
    from deltalog.tables import DeltaTable

ColumnLike = Union[str, Any]
# (JVM method, condition, assignments or None)
_Clause = Tuple[str, Optional[ColumnLike], Optional[Dict[str, ColumnLike]]]


class DeltaMergeBuilder:
    """Clauses of a MERGE into ``table`` from ``source`` on ``condition`` (see the module doc)."""

    def __init__(self, table: "DeltaTable", source: Any, condition: Any,
                 clauses: Optional[List[_Clause]] = None, schema_evolution: bool = False) -> None:
        self._table = table
        self._source = source
        self._condition = condition
        self._clauses: List[_Clause] = list(clauses or [])
        self._schema_evolution = schema_evolution

    def _with(self, clause: _Clause) -> "DeltaMergeBuilder":
        return DeltaMergeBuilder(self._table, self._source, self._condition, self._clauses + [clause],
                                 self._schema_evolution)

    @staticmethod
    def _set(set: Optional[Dict[str, ColumnLike]], what: str) -> Dict[str, ColumnLike]:
        if not set or not isinstance(set, dict):
            raise ValueError(f"{what} needs a non-empty dict of target column -> value (SQL string or Column)")
        return set

    # ------------------------------------------------------------------ WHEN MATCHED
    def whenMatchedUpdate(self, condition: Optional[ColumnLike] = None,
                          set: Optional[Dict[str, ColumnLike]] = None) -> "DeltaMergeBuilder":
        """``WHEN MATCHED [AND condition] THEN UPDATE SET …``: ``set`` maps target columns to values
        over the target and source rows."""
        return self._with(("whenMatchedUpdate", condition, self._set(set, "whenMatchedUpdate")))

    def whenMatchedUpdateAll(self, condition: Optional[ColumnLike] = None) -> "DeltaMergeBuilder":
        """``WHEN MATCHED [AND condition] THEN UPDATE SET *``: every target column from the source
        column of the same name."""
        return self._with(("whenMatchedUpdateAll", condition, None))

    def whenMatchedDelete(self, condition: Optional[ColumnLike] = None) -> "DeltaMergeBuilder":
        """``WHEN MATCHED [AND condition] THEN DELETE``."""
        return self._with(("whenMatchedDelete", condition, None))

    # ------------------------------------------------------------------ WHEN NOT MATCHED [BY TARGET]
    def whenNotMatchedInsert(self, condition: Optional[ColumnLike] = None,
                             values: Optional[Dict[str, ColumnLike]] = None) -> "DeltaMergeBuilder":
        """``WHEN NOT MATCHED [AND condition] THEN INSERT (…) VALUES (…)``: ``values`` maps target
        columns to values over the source row; columns left out are null (identity and generated
        columns computed)."""
        return self._with(("whenNotMatchedInsert", condition, self._set(values, "whenNotMatchedInsert")))

    def whenNotMatchedInsertAll(self, condition: Optional[ColumnLike] = None) -> "DeltaMergeBuilder":
        """``WHEN NOT MATCHED [AND condition] THEN INSERT *``."""
        return self._with(("whenNotMatchedInsertAll", condition, None))

    # ------------------------------------------------------------------ WHEN NOT MATCHED BY SOURCE
    def whenNotMatchedBySourceUpdate(self, condition: Optional[ColumnLike] = None,
                                     set: Optional[Dict[str, ColumnLike]] = None) -> "DeltaMergeBuilder":
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET …`` (values over the target row)."""
        return self._with(("whenNotMatchedBySourceUpdate", condition,
                           self._set(set, "whenNotMatchedBySourceUpdate")))

    def whenNotMatchedBySourceDelete(self, condition: Optional[ColumnLike] = None) -> "DeltaMergeBuilder":
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE``."""
        return self._with(("whenNotMatchedBySourceDelete", condition, None))

    def withSchemaEvolution(self) -> "DeltaMergeBuilder":
        """Let ``UPDATE SET *`` / ``INSERT *`` add the source's extra columns (and nested fields) to
        the table's schema in the MERGE's commit."""
        return DeltaMergeBuilder(self._table, self._source, self._condition, self._clauses, True)

    def execute(self) -> Any:
        """Run the MERGE (one commit); returns the one-row metrics DataFrame."""
        from pyspark.sql import DataFrame
        from deltalog.tables import _column
        spark = self._table._spark
        api = api_class(spark, "DmlApi")
        builder = _call(api.merge, spark._jsparkSession, self._table._path, self._source._jdf,
                        self._table._alias, self._condition._jc)
        for method, condition, assignments in self._clauses:
            cond = None if condition is None else _column(condition, f"{method} condition")._jc
            target = getattr(builder, method)
            if assignments is None:
                builder = _call(target, cond)
            else:
                keys = list(assignments.keys())
                vals = [_column(v, f"{method} value of {k}")._jc for k, v in assignments.items()]
                builder = _call(target, cond, keys, vals)
        if self._schema_evolution:
            builder = builder.withSchemaEvolution()
        return DataFrame(_call(builder.execute), spark)

    def __repr__(self) -> str:
        return f"DeltaMergeBuilder({self._table._path}, {len(self._clauses)} clauses)"
