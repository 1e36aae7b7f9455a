"""Tables created and altered through deltalog's SQL read the same in delta-rs and DuckDB (issue 26,
"done when"): a column-mapped table after RENAME / DROP COLUMN / ADD COLUMNS / ALTER COLUMN and a
CHECK constraint, written before and after each change; a table whose deletionVectors feature was
dropped (protocol downgraded, checkpointProtection added); a type-widened table (DuckDB reads it; delta-rs
1.6 refuses the typeWidening feature). delta-spark's reads of the same statements
are compared in test_sql_alter_columns.py / test_drop_feature.py.
"""
from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _rows(table) -> list:
    cols = sorted(table.column_names)
    return sorted((tuple(r[c] for c in cols) for r in table.select(cols).to_pylist()),
                  key=lambda row: tuple((v is not None, v) for v in row)), cols


def _duckdb(path: Path):
    sys.path.insert(0, str(REPO / "integration"))
    from peers import duckdb_connection
    con = duckdb_connection()
    return con.execute(f"SELECT * FROM delta_scan('{path}')").to_arrow_table()


def _delta_rs(path: Path):
    # delta-rs' SQL engine (DataFusion) applies column mapping; `to_pyarrow_table()` of deltalake 1.6
    # reads the physical column names and returns nulls for column-mapped tables.
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder
    return pa.table(QueryBuilder().register("t", DeltaTable(str(path))).execute("SELECT * FROM t").read_all())


def _ours(spark, path: Path):
    import pyarrow as pa
    df = spark.read.format("deltalog").load(str(path))
    return pa.Table.from_pandas(df.toPandas(), preserve_index=False)


def test_altered_column_mapped_table_reads_the_same(spark, tmp_path):
    path = tmp_path / "t"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING, score INT, note STRING) USING deltalog "
              "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'y')")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO label")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN note")
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (extra STRING COMMENT 'new' AFTER id)")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN score COMMENT 'points'")
    spark.sql(f"INSERT INTO {t} (id, extra, label, score) VALUES (3, 'e', 'c', 30)")
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT pos CHECK (score > 0)")
    spark.sql(f"INSERT INTO {t} (id, extra, label, score) VALUES (4, NULL, 'd', 40)")
    ours = _rows(_ours(spark, path))
    assert ours == ([(None, 1, 'a', 10), (None, 2, 'b', 20), (None, 4, 'd', 40), ('e', 3, 'c', 30)],
                    ["extra", "id", "label", "score"])
    assert _rows(_delta_rs(path)) == ours
    assert _rows(_duckdb(path)) == ours


def test_table_after_drop_feature_reads_the_same(spark, tmp_path):
    path = tmp_path / "dv"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) USING deltalog "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"ALTER TABLE {t} DROP FEATURE deletionVectors")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'c')")
    (d,) = spark.sql(f"DESCRIBE DETAIL {t}").collect()
    assert "deletionVectors" not in d.tableFeatures and "checkpointProtection" in d.tableFeatures
    ours = _rows(_ours(spark, path))
    assert ours == ([(1, 'a'), (2, 'b'), (3, 'c')], ["id", "s"])
    assert _rows(_delta_rs(path)) == ours
    assert _rows(_duckdb(path)) == ours


def test_widened_column_reads_the_same(spark, tmp_path):
    """ALTER COLUMN TYPE (type widening): files written before the change hold INT, after it BIGINT."""
    path = tmp_path / "tw"
    t = f"deltalog.`{path}`"
    spark.sql(f"CREATE TABLE {t} (id INT, f FLOAT) USING deltalog TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 1.5), (2, 2.5)")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE BIGINT")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN f TYPE DOUBLE")
    spark.sql(f"INSERT INTO {t} VALUES (3000000000, 0.1)")
    ours = _rows(_ours(spark, path))
    assert ours == ([(0.1, 3000000000), (1.5, 1), (2.5, 2)], ["f", "id"])
    # delta-rs 1.6 does not implement the typeWidening reader feature: it refuses the table (as the
    # protocol asks of a reader without the feature) rather than misreading it.
    with pytest.raises(Exception, match="TypeWidening"):
        _delta_rs(path)
    assert _rows(_duckdb(path)) == ours
