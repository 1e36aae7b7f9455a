"""``DeltaTableBuilder``: delta-spark's table builder (``DeltaTable.create / createIfNotExists /
replace / createOrReplace``), run as one SQL statement through deltalog's catalog, so the table is
created in one commit exactly as ``CREATE TABLE ... USING deltalog`` creates it::

    from deltalog.tables import DeltaTable
    (DeltaTable.createIfNotExists(spark)
        .tableName("events")                      # and/or .location("/data/events")
        .addColumn("id", "BIGINT", nullable=False, comment="event id")
        .addColumn("ts", "TIMESTAMP")
        .addColumn("day", "DATE", generatedAlwaysAs="CAST(ts AS DATE)")
        .addColumn("seq", "BIGINT", generatedAlwaysAsIdentity=IdentityGenerator(start=1, step=1))
        .partitionedBy("day")                    # or .clusterBy("id", "ts") (liquid clustering)
        .property("delta.enableChangeDataFeed", "true")
        .comment("raw events")
        .execute())

Needs a session configured with ``configure_spark_with_deltalog`` (the catalog and the extension).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

__all__ = ["DeltaTableBuilder", "IdentityGenerator"]


@dataclass(frozen=True)
class IdentityGenerator:
    """``GENERATED ... AS IDENTITY (START WITH start INCREMENT BY step)``, as delta-spark's."""
    start: int = 1
    step: int = 1


def _quote_ident(name: str) -> str:
    return ".".join("`" + p.replace("`", "``") + "`" for p in name.split("."))


def _quote_str(s: str) -> str:
    return "'" + str(s).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _type_sql(dataType: Any) -> str:
    if isinstance(dataType, str):
        return dataType
    simple = getattr(dataType, "simpleString", None)
    if simple is None:
        raise TypeError(f"dataType must be a DDL string or a pyspark DataType, got {type(dataType).__name__}")
    return dataType.simpleString()


class DeltaTableBuilder:
    """Collects a table definition; :meth:`execute` runs it and returns the :class:`DeltaTable`."""

    def __init__(self, sparkSession: Optional[Any], statement: str) -> None:
        if sparkSession is None:
            from pyspark.sql import SparkSession
            sparkSession = SparkSession.getActiveSession()
            if sparkSession is None:
                raise ValueError("no active SparkSession: pass the session to DeltaTable.create(spark)")
        self._spark = sparkSession
        self._statement = statement
        self._name: Optional[str] = None
        self._location: Optional[str] = None
        self._comment: Optional[str] = None
        self._columns: List[str] = []
        self._partitioned: List[str] = []
        self._clustered: List[str] = []
        self._properties: Dict[str, str] = {}

    def tableName(self, identifier: str) -> "DeltaTableBuilder":
        self._name = identifier
        return self

    def location(self, location: str) -> "DeltaTableBuilder":
        self._location = str(location)
        return self

    def comment(self, comment: str) -> "DeltaTableBuilder":
        self._comment = comment
        return self

    def addColumn(self, colName: str, dataType: Any, nullable: bool = True,
                  generatedAlwaysAs: Optional[str] = None,
                  generatedAlwaysAsIdentity: Optional[IdentityGenerator] = None,
                  generatedByDefaultAsIdentity: Optional[IdentityGenerator] = None,
                  comment: Optional[str] = None) -> "DeltaTableBuilder":
        """One column: name, type (DDL string or DataType), NOT NULL, a generation expression or an
        identity generator (not both), a comment."""
        if sum(x is not None for x in (generatedAlwaysAs, generatedAlwaysAsIdentity, generatedByDefaultAsIdentity)) > 1:
            raise ValueError(f"column {colName}: give at most one of generatedAlwaysAs, generatedAlwaysAsIdentity, "
                             "generatedByDefaultAsIdentity")
        sql = f"{_quote_ident(colName)} {_type_sql(dataType)}"
        if not nullable:
            sql += " NOT NULL"
        if generatedAlwaysAs is not None:
            sql += f" GENERATED ALWAYS AS ({generatedAlwaysAs})"
        for kind, gen in (("ALWAYS", generatedAlwaysAsIdentity), ("BY DEFAULT", generatedByDefaultAsIdentity)):
            if gen is not None:
                sql += f" GENERATED {kind} AS IDENTITY (START WITH {int(gen.start)} INCREMENT BY {int(gen.step)})"
        if comment is not None:
            sql += f" COMMENT {_quote_str(comment)}"
        self._columns.append(sql)
        return self

    def addColumns(self, cols: Any) -> "DeltaTableBuilder":
        """Every field of a StructType (or a list of StructFields): name, type, nullability, comment."""
        fields = getattr(cols, "fields", cols)
        for f in fields:
            comment = (f.metadata or {}).get("comment")
            self.addColumn(f.name, f.dataType, nullable=f.nullable, comment=comment)
        return self

    def partitionedBy(self, *cols: Union[str, List[str]]) -> "DeltaTableBuilder":
        for c in cols:
            self._partitioned.extend([c] if isinstance(c, str) else list(c))
        return self

    def clusterBy(self, *cols: Union[str, List[str]]) -> "DeltaTableBuilder":
        """Liquid clustering by ``cols`` (at most 4 columns with statistics; not with ``partitionedBy``):
        ``CLUSTER BY``. ``OPTIMIZE`` then clusters the table's files by them."""
        for c in cols:
            self._clustered.extend([c] if isinstance(c, str) else list(c))
        return self

    def property(self, key: str, value: str) -> "DeltaTableBuilder":
        self._properties[key] = str(value)
        return self

    def _sql(self) -> str:
        if self._name is None and self._location is None:
            raise ValueError("give the table a name (tableName) or a location")
        target = _quote_ident(self._name) if self._name else "deltalog.`" + self._location.replace("`", "``") + "`"
        sql = f"{self._statement} {target}"
        if self._columns:
            sql += " (" + ", ".join(self._columns) + ")"
        sql += " USING deltalog"
        if self._partitioned and self._clustered:
            from deltalog.exceptions import InvalidWriteError
            raise InvalidWriteError(
                "DELTA_CLUSTER_BY_WITH_PARTITIONED_BY",
                f"Table {self._name or self._location}: Clustering and partitioning cannot both be specified "
                f"(partitionedBy {self._partitioned}, clusterBy {self._clustered}). Please remove partitionedBy if "
                "you want to create a Delta table with clustering.")
        if self._partitioned:
            sql += " PARTITIONED BY (" + ", ".join(_quote_ident(c) for c in self._partitioned) + ")"
        if self._clustered:
            sql += " CLUSTER BY (" + ", ".join(_quote_ident(c) for c in self._clustered) + ")"
        if self._name and self._location:
            sql += f" LOCATION {_quote_str(self._location)}"
        if self._comment is not None:
            sql += f" COMMENT {_quote_str(self._comment)}"
        if self._properties:
            sql += " TBLPROPERTIES (" + ", ".join(f"{_quote_str(k)} = {_quote_str(v)}"
                                                  for k, v in self._properties.items()) + ")"
        return sql

    def execute(self) -> Any:
        """Run the statement (one commit) and return the table as a :class:`DeltaTable`."""
        from deltalog.tables import DeltaTable
        self._spark.sql(self._sql())
        if self._name:
            return DeltaTable.forName(self._spark, self._name)
        return DeltaTable.forPath(self._spark, self._location)
