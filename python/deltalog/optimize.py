"""``DeltaTable.optimize()``: the builder of an OPTIMIZE (compaction or Z-order), as delta-spark's
``DeltaOptimizeBuilder``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

from deltalog._jvm import api_class
from deltalog._jvm import call as _call

if TYPE_CHECKING:
    from deltalog.tables import DeltaTable


class DeltaOptimizeBuilder:
    """Built by :meth:`DeltaTable.optimize`; ``where`` restricts the partitions, ``executeCompaction``
    or ``executeZOrderBy`` runs it::

        dt.optimize().executeCompaction()
        dt.optimize().where("date = '2024-01-01'").executeZOrderBy("a", "b")

    Both return delta-spark's one-row result DataFrame: ``path`` (the table's root) and ``metrics``
    (a struct: ``numFilesAdded``, ``numFilesRemoved``, ``filesAdded``/``filesRemoved`` size statistics,
    ``partitionsOptimized``, ``zOrderStats``, ``numBins``, ``totalConsideredFiles``,
    ``totalFilesSkipped``, ``deletionVectorStats``, …).
    """

    def __init__(self, table: "DeltaTable") -> None:
        self._table = table
        self._partition_filter: Optional[str] = None

    def where(self, partitionFilter: str) -> "DeltaOptimizeBuilder":
        """Optimize only the partitions matching ``partitionFilter``, a SQL predicate on partition
        columns (another column is refused with ``DELTA_NON_PARTITION_COLUMN_REFERENCE``)."""
        if not isinstance(partitionFilter, str):
            raise TypeError(f"partitionFilter must be a SQL string, got {type(partitionFilter).__name__}")
        self._partition_filter = partitionFilter
        return self

    def executeCompaction(self) -> Any:
        """Compact the small files into files of about the target size (``delta.targetFileSize``,
        else ``spark.databricks.delta.optimize.maxFileSize``, 1 GiB by default); one commit with
        ``dataChange = false``. On a clustered table (``CLUSTER BY``) it clusters the files not
        clustered yet by the clustering columns instead, as ``OPTIMIZE t`` does (``where`` and
        ``executeZOrderBy`` are refused there, as in delta-spark)."""
        return self._execute([])

    def executeZOrderBy(self, *cols: str) -> Any:
        """Rewrite the files of each partition along the Z curve of ``cols`` (data columns with
        statistics), so that skipping on each of them is effective."""
        names: List[str] = []
        for c in cols:
            if isinstance(c, (list, tuple)):
                names.extend(c)
            else:
                names.append(c)
        if not names or not all(isinstance(n, str) for n in names):
            raise TypeError("executeZOrderBy needs one or more column names (strings)")
        return self._execute(names)

    def _execute(self, zorder: List[str]) -> Any:
        from pyspark.sql import DataFrame
        t = self._table
        t._check_latest("OPTIMIZE")
        api = api_class(t._spark, "OptimizeApi")
        jdf = _call(api.optimize, t._spark._jsparkSession, t._path, self._partition_filter, zorder)
        return DataFrame(jdf, t._spark)
