"""Liquid clustering: CREATE TABLE … CLUSTER BY (SQL, CTAS, ``writeTo().clusterBy()``, the Python
builder), ALTER TABLE … CLUSTER BY (cols) / NONE, DESCRIBE DETAIL / EXTENDED, SHOW CREATE TABLE, and
OPTIMIZE on clustered tables (SQL and ``DeltaTable.optimize()``), with delta-spark 4.4 as the reference.

Each test looks at what is on disk: the commits (protocol features, the ``delta.clustering`` domain
with physical column paths, ``commitInfo`` parameters as delta-spark writes them, ``clusteringProvider``
and z-cube tags on the adds OPTIMIZE writes), the rows (unchanged by OPTIMIZE, read by every engine),
and the effect of clustering on the files' min/max statistics of the clustering columns.
"""
from __future__ import annotations

import json

import pytest

from test_dml_delete import commit, commit_info, kinds, version_of
from test_reorg_purge import live_files

DOMAIN = "delta.clustering"


def domain(actions: list) -> dict:
    """The configuration of the commit's clustering domain action (parsed)."""
    ds = [d for d in kinds(actions, "domainMetadata") if d["domain"] == DOMAIN]
    assert len(ds) == 1 and ds[0]["removed"] is False
    return json.loads(ds[0]["configuration"])


def protocol(actions: list) -> dict:
    return kinds(actions, "protocol")[0]


def detail(spark, t: str) -> dict:
    return spark.sql(f"DESCRIBE DETAIL {t}").collect()[0].asDict()


def their_log(delta_spark, path) -> list:
    """delta-spark's latest commit of the table at ``path`` (after it ran something there)."""
    return commit(path)


# ------------------------------------------------------------------------------------------ create
def test_create_cluster_by_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ddl = "(a INT, b STRING, c DOUBLE) USING {fmt} CLUSTER BY (a, b)"
    spark.sql(f"CREATE TABLE deltalog.`{ours}` {ddl.format(fmt='deltalog')}")
    delta_spark.run("spark.sql(args['s'])", s=f"CREATE TABLE delta.`{theirs}` {ddl.format(fmt='delta')}")
    o, t = commit(ours, 0), commit(theirs, 0)
    assert domain(o) == domain(t) == {"clusteringColumns": [["a"], ["b"]], "domainName": DOMAIN}
    for p in (protocol(o), protocol(t)):
        assert {"clustering", "domainMetadata"} <= set(p["writerFeatures"]) and p["minWriterVersion"] == 7
    assert "delta.feature.clustering" not in kinds(o, "metaData")[0]["configuration"]
    co, ct = commit_info(o), commit_info(t)
    assert co["operation"] == ct["operation"] == "CREATE TABLE"
    assert co["operationParameters"]["clusterBy"] == ct["operationParameters"]["clusterBy"] == '["a","b"]'
    assert detail(spark, f"deltalog.`{ours}`")["clusteringColumns"] == ["a", "b"]
    # each engine describes the other's table with the same clustering columns
    assert detail(spark, f"deltalog.`{theirs}`")["clusteringColumns"] == ["a", "b"]
    got = delta_spark.run("result = spark.sql(args['s']).collect()[0]['clusteringColumns']",
                          s=f"DESCRIBE DETAIL delta.`{ours}`")
    assert got == ["a", "b"]


def test_create_without_cluster_by_records_empty_cluster_by(spark, tmp_path):
    spark.sql(f"CREATE TABLE deltalog.`{tmp_path}` (a INT) USING deltalog")
    c = commit(tmp_path, 0)
    assert commit_info(c)["operationParameters"]["clusterBy"] == "[]"
    assert not kinds(c, "domainMetadata")
    assert detail(spark, f"deltalog.`{tmp_path}`")["clusteringColumns"] == []


def test_column_mapping_stores_physical_names_and_nested_paths(spark, tmp_path, delta_spark):
    spark.sql(f"CREATE TABLE deltalog.`{tmp_path}` (id BIGINT, s STRUCT<x: INT, y: STRING>) USING deltalog "
              "CLUSTER BY (s.x, id) TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    c = commit(tmp_path, 0)
    schema = json.loads(kinds(c, "metaData")[0]["schemaString"])
    phys = {f["name"]: f["metadata"]["delta.columnMapping.physicalName"] for f in schema["fields"]}
    s_fields = next(f for f in schema["fields"] if f["name"] == "s")["type"]["fields"]
    x_phys = next(f for f in s_fields if f["name"] == "x")["metadata"]["delta.columnMapping.physicalName"]
    assert phys["id"].startswith("col-") and x_phys.startswith("col-")
    assert domain(c)["clusteringColumns"] == [[phys["s"], x_phys], [phys["id"]]]
    assert detail(spark, f"deltalog.`{tmp_path}`")["clusteringColumns"] == ["s.x", "id"]
    got = delta_spark.run("result = spark.sql(args['s']).collect()[0]['clusteringColumns']",
                          s=f"DESCRIBE DETAIL delta.`{tmp_path}`")
    assert got == ["s.x", "id"]


def test_ctas_and_writeto_cluster_by(spark, tmp_path):
    src = spark.range(0, 50).selectExpr("id", "cast(id % 7 as int) AS k", "concat('n', id) AS name")
    src.createOrReplaceTempView("clu_src")
    spark.sql(f"CREATE TABLE deltalog.`{tmp_path / 'ctas'}` USING deltalog CLUSTER BY (k) AS SELECT * FROM clu_src")
    c = commit(tmp_path / "ctas", 0)
    assert domain(c)["clusteringColumns"] == [["k"]]
    assert commit_info(c)["operation"] == "CREATE TABLE AS SELECT"
    assert commit_info(c)["operationParameters"]["clusterBy"] == '["k"]'
    assert spark.read.format("deltalog").load(str(tmp_path / "ctas")).count() == 50
    src.writeTo(f"deltalog.`{tmp_path / 'v2'}`").using("deltalog").clusterBy("name", "id").create()
    c = commit(tmp_path / "v2", 0)
    assert domain(c)["clusteringColumns"] == [["name"], ["id"]]
    assert spark.read.format("deltalog").load(str(tmp_path / "v2")).count() == 50


def test_builder_cluster_by(spark, tmp_path):
    from deltalog.tables import DeltaTable
    (DeltaTable.create(spark).location(str(tmp_path)).addColumn("a", "INT").addColumn("b", "STRING")
     .clusterBy("b", "a").execute())
    c = commit(tmp_path, 0)
    assert domain(c)["clusteringColumns"] == [["b"], ["a"]]
    assert "clustering" in protocol(c)["writerFeatures"]


def test_replace_without_cluster_by_clears_the_domain(spark, tmp_path):
    t = f"deltalog.`{tmp_path}`"
    spark.sql(f"CREATE TABLE {t} (a INT, b INT) USING deltalog CLUSTER BY (a)")
    spark.sql(f"REPLACE TABLE {t} (a INT, b INT) USING deltalog")
    assert domain(commit(tmp_path))["clusteringColumns"] == []
    assert detail(spark, t)["clusteringColumns"] == []
    spark.sql(f"REPLACE TABLE {t} (a INT, b INT) USING deltalog CLUSTER BY (b)")
    assert domain(commit(tmp_path))["clusteringColumns"] == [["b"]]
    with pytest.raises(Exception, match="DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE"):
        spark.sql(f"REPLACE TABLE {t} (a INT, b INT) USING deltalog PARTITIONED BY (a)")
    assert domain(commit(tmp_path))["clusteringColumns"] == [["b"]]


@pytest.mark.parametrize("ddl, error", [
    ("(a INT, b INT, c INT, d INT, e INT) USING deltalog CLUSTER BY (a, b, c, d, e)",
     "DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS"),
    ("(a INT, m MAP<STRING, INT>) USING deltalog CLUSTER BY (m)", "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED"),
    ("(a INT, b INT, c INT) USING deltalog CLUSTER BY (c) TBLPROPERTIES ('delta.dataSkippingNumIndexedCols' = '1')",
     "DELTA_CLUSTERING_COLUMN_MISSING_STATS"),
    ("(a INT, b INT, c INT) USING deltalog CLUSTER BY (b) TBLPROPERTIES ('delta.dataSkippingStatsColumns' = 'a,c')",
     "DELTA_CLUSTERING_COLUMN_MISSING_STATS"),
    # Spark's analyzer checks CLUSTER BY names before the catalog sees the statement
    ("(a INT) USING deltalog CLUSTER BY (nope)", "Couldn't find column nope"),
])
def test_create_refusals(spark, tmp_path, ddl, error):
    with pytest.raises(Exception, match=error):
        spark.sql(f"CREATE TABLE deltalog.`{tmp_path}` {ddl}")
    assert not (tmp_path / "_delta_log").exists() or version_of(tmp_path) < 0


def test_stats_columns_that_include_the_clustering_column_are_accepted(spark, tmp_path):
    spark.sql(f"CREATE TABLE deltalog.`{tmp_path}` (a INT, b INT, c INT) USING deltalog CLUSTER BY (c) "
              "TBLPROPERTIES ('delta.dataSkippingStatsColumns' = 'c')")
    assert domain(commit(tmp_path, 0))["clusteringColumns"] == [["c"]]


def test_builder_partition_and_cluster_refused(spark, tmp_path):
    from deltalog.tables import DeltaTable
    with pytest.raises(Exception, match="DELTA_CLUSTER_BY_WITH_PARTITIONED_BY"):
        (DeltaTable.create(spark).location(str(tmp_path)).addColumn("a", "INT").addColumn("b", "STRING")
         .partitionedBy("b").clusterBy("a").execute())
    assert not (tmp_path / "_delta_log").exists()


# ------------------------------------------------------------------------------------------ alter
def test_alter_cluster_by_like_delta_spark(spark, tmp_path, delta_spark):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stmts = ["CREATE TABLE {t} (a INT, b STRING, c DOUBLE) USING {fmt}", "ALTER TABLE {t} CLUSTER BY (a)",
             "ALTER TABLE {t} CLUSTER BY (c, b)", "ALTER TABLE {t} CLUSTER BY NONE"]
    for s in stmts:
        spark.sql(s.format(t=f"deltalog.`{ours}`", fmt="deltalog"))
    delta_spark.run("for s in args['s']:\n    spark.sql(s)",
                    s=[s.format(t=f"delta.`{theirs}`", fmt="delta") for s in stmts])
    # the table becomes clustered with its first ALTER … CLUSTER BY
    assert "clustering" not in (protocol(commit(ours, 0)).get("writerFeatures") or [])
    for path in (ours, theirs):
        v1 = commit(path, 1)
        assert {"clustering", "domainMetadata"} <= set(protocol(v1)["writerFeatures"])
        assert domain(v1)["clusteringColumns"] == [["a"]]
        assert domain(commit(path, 2))["clusteringColumns"] == [["c"], ["b"]]
        assert domain(commit(path, 3))["clusteringColumns"] == []
    for v in (1, 2, 3):
        co, ct = commit_info(commit(ours, v)), commit_info(commit(theirs, v))
        assert co["operation"] == ct["operation"] == "CLUSTER BY"
        assert co["operationParameters"] == ct["operationParameters"]
    assert commit_info(commit(ours, 2))["operationParameters"] == {"oldClusteringColumns": "a",
                                                                   "newClusteringColumns": "c,b"}
    assert detail(spark, f"deltalog.`{ours}`")["clusteringColumns"] == []
    assert version_of(ours) == 3


def test_alter_cluster_by_none_on_unclustered_table_commits_nothing(spark, tmp_path):
    t = f"deltalog.`{tmp_path}`"
    spark.sql(f"CREATE TABLE {t} (a INT) USING deltalog")
    spark.sql(f"ALTER TABLE {t} CLUSTER BY NONE")
    assert version_of(tmp_path) == 0


def test_alter_refusals(spark, tmp_path):
    part, clu = f"deltalog.`{tmp_path / 'part'}`", f"deltalog.`{tmp_path / 'clu'}`"
    spark.sql(f"CREATE TABLE {part} (a INT, b INT) USING deltalog PARTITIONED BY (b)")
    with pytest.raises(Exception, match="DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED"):
        spark.sql(f"ALTER TABLE {part} CLUSTER BY (a)")
    spark.sql(f"CREATE TABLE {clu} (a INT, b INT, c INT, d INT, e INT, m MAP<INT, INT>) USING deltalog "
              "CLUSTER BY (a) TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    with pytest.raises(Exception, match="DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS"):
        spark.sql(f"ALTER TABLE {clu} CLUSTER BY (a, b, c, d, e)")
    with pytest.raises(Exception, match="DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED"):
        spark.sql(f"ALTER TABLE {clu} CLUSTER BY (m)")
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN"):
        spark.sql(f"ALTER TABLE {clu} DROP COLUMN a")
    assert version_of(tmp_path / "part") == 0 and version_of(tmp_path / "clu") == 0
    spark.sql(f"ALTER TABLE {clu} DROP COLUMN b")  # not a clustering column
    assert version_of(tmp_path / "clu") == 1


# ------------------------------------------------------------------------------------------ describe
def test_describe_extended_and_show_create_table(spark, tmp_path):
    spark.sql(f"CREATE TABLE clu_show (a INT, `b c` STRING, d DOUBLE) USING deltalog LOCATION '{tmp_path}' "
              "CLUSTER BY (`b c`, a)")
    try:
        rows = {r[0]: r[1] for r in spark.sql("DESCRIBE TABLE EXTENDED clu_show").collect()}
        # delta-spark 4.4 shows the clustering columns among the table properties (JSON paths)
        assert 'clusteringColumns=[["b c"],["a"]]' in rows["Table Properties"]
        ddl = spark.sql("SHOW CREATE TABLE clu_show").collect()[0][0]
        assert "CLUSTER BY (`b c`, a)" in ddl and "delta.feature.clustering" not in ddl
        spark.sql("DROP TABLE clu_show")
        spark.sql(ddl.replace(str(tmp_path), str(tmp_path / "copy")).replace("clu_show", "clu_show2"))
        assert domain(commit(tmp_path / "copy", 0))["clusteringColumns"] == [["b c"], ["a"]]
        assert detail(spark, "clu_show2")["clusteringColumns"] == ["b c", "a"]
    finally:
        spark.sql("DROP TABLE IF EXISTS clu_show")
        spark.sql("DROP TABLE IF EXISTS clu_show2")


# ------------------------------------------------------------------------------------------ optimize
MAX_FILE_SIZE = "spark.databricks.delta.optimize.maxFileSize"


@pytest.fixture
def small_files(spark):
    """OPTIMIZE writes files of a few KB, so a small table is clustered into several files."""
    spark.conf.set(MAX_FILE_SIZE, "6000")
    yield
    spark.conf.unset(MAX_FILE_SIZE)


def insert_spread(spark, t: str, seed: int, n: int = 400) -> None:
    """One commit whose file covers the whole range of a and b (so files overlap before clustering)."""
    spark.sql(f"INSERT INTO {t} SELECT CAST(rand({seed}) * 1000 AS INT) AS a, CAST(rand({seed + 100}) * 1000 AS INT) "
              f"AS b, uuid() AS payload FROM range({n})")


def widths(path, column: str) -> list:
    """Each live file's [min, max] width of ``column``, relative to the table's whole range."""
    stats = [json.loads(a["stats"]) for a in live_files(path).values()]
    lo = min(s["minValues"][column] for s in stats)
    hi = max(s["maxValues"][column] for s in stats)
    return [(s["maxValues"][column] - s["minValues"][column]) / (hi - lo) for s in stats]


def live_paths(path) -> set:
    return {a["path"] for a in live_files(path).values()}


def rows(spark, path) -> list:
    return sorted(tuple(r) for r in spark.read.format("deltalog").load(str(path)).collect())


def optimize_params(path) -> dict:
    return commit_info(commit(path))["operationParameters"]


def test_optimize_clusters_incrementally(spark, tmp_path, small_files):
    t = f"deltalog.`{tmp_path}`"
    spark.sql(f"CREATE TABLE {t} (a INT, b INT, payload STRING) USING deltalog CLUSTER BY (a, b)")
    for seed in range(4):
        insert_spread(spark, t, seed)
    before_rows = rows(spark, tmp_path)
    before = {c: widths(tmp_path, c) for c in ("a", "b")}
    assert all(min(w) > 0.9 for w in before.values())  # every file spans (nearly) the whole range
    old_paths = live_paths(tmp_path)

    result = spark.sql(f"OPTIMIZE {t}").collect()[0]["metrics"]
    c = commit(tmp_path)
    assert commit_info(c)["operation"] == "OPTIMIZE"
    assert optimize_params(tmp_path) == {"predicate": "[]", "zOrderBy": "[]", "clusterBy": '["a","b"]',
                                         "auto": False, "isFull": False}
    adds, removes = kinds(c, "add"), kinds(c, "remove")
    assert {r["path"] for r in removes} == old_paths and len(adds) >= 3
    assert all(a["dataChange"] is False and a["clusteringProvider"] == "liquid" for a in adds)
    assert len({a["tags"]["ZCUBE_ID"] for a in adds}) == 1
    assert all(a["tags"]["ZCUBE_ZORDER_BY"] == '["a","b"]' for a in adds)
    assert result["numFilesRemoved"] == len(old_paths) and result["numFilesAdded"] == len(adds)
    cs = result["clusteringStats"]
    assert cs["inputOtherFiles"]["numFiles"] == cs["mergedFiles"]["numFiles"] == len(old_paths)
    assert cs["inputZCubeFiles"]["numFiles"] == 0 and cs["numOutputZCubes"] == 1
    assert rows(spark, tmp_path) == before_rows
    # skipping: each file now covers a narrower range of each clustering column
    after = {col: widths(tmp_path, col) for col in ("a", "b")}
    for col in ("a", "b"):
        assert sum(after[col]) / len(after[col]) < 0.75 * sum(before[col]) / len(before[col])
    # a filter on a clustering column can now skip files by their statistics (before: none)
    hit = [a for a in adds if json.loads(a["stats"])["minValues"]["a"] < 100]
    assert 0 < len(hit) <= len(adds) // 2

    # nothing new: nothing rewritten, nothing committed
    v = version_of(tmp_path)
    again = spark.sql(f"OPTIMIZE {t}").collect()[0]["metrics"]
    assert version_of(tmp_path) == v and again["numFilesRemoved"] == 0 and again["numFilesAdded"] == 0

    # an append: only the new file is clustered, the clustered files stay
    clustered = live_paths(tmp_path)
    insert_spread(spark, t, 9)
    new = live_paths(tmp_path) - clustered
    spark.sql(f"OPTIMIZE {t}")
    c = commit(tmp_path)
    assert {r["path"] for r in kinds(c, "remove")} == new
    assert clustered <= live_paths(tmp_path)
    assert all(a["clusteringProvider"] == "liquid" for a in kinds(c, "add"))

    # FULL: every file re-clustered
    live = live_paths(tmp_path)
    spark.sql(f"OPTIMIZE {t} FULL")
    c = commit(tmp_path)
    assert {r["path"] for r in kinds(c, "remove")} == live
    assert optimize_params(tmp_path)["isFull"] is True
    assert len({a["tags"]["ZCUBE_ID"] for a in kinds(c, "add")}) == 1
    assert len(rows(spark, tmp_path)) == len(before_rows) + 400


def test_alter_cluster_by_then_optimize(spark, tmp_path, small_files):
    t = f"deltalog.`{tmp_path}`"
    spark.sql(f"CREATE TABLE {t} (a INT, b INT, payload STRING) USING deltalog CLUSTER BY (a)")
    for seed in range(3):
        insert_spread(spark, t, seed)
    spark.sql(f"OPTIMIZE {t}")
    spark.sql(f"ALTER TABLE {t} CLUSTER BY (b)")
    # files clustered by the old columns wait for FULL (as delta-spark)
    v = version_of(tmp_path)
    spark.sql(f"OPTIMIZE {t}")
    assert version_of(tmp_path) == v
    spark.sql(f"OPTIMIZE {t} FULL")
    c = commit(tmp_path)
    assert optimize_params(tmp_path)["clusterBy"] == '["b"]'
    assert all(a["tags"]["ZCUBE_ZORDER_BY"] == '["b"]' for a in kinds(c, "add"))
    assert sum(widths(tmp_path, "b")) / len(widths(tmp_path, "b")) < 0.75
    # CLUSTER BY NONE: OPTIMIZE compacts (files smaller than minFileSize), records no clustering
    spark.sql(f"ALTER TABLE {t} CLUSTER BY NONE")
    spark.conf.set(MAX_FILE_SIZE, str(1 << 30))
    spark.sql(f"OPTIMIZE {t}")
    c = commit(tmp_path)
    assert optimize_params(tmp_path) == {"predicate": "[]", "zOrderBy": "[]", "clusterBy": "[]", "auto": False}
    assert len(kinds(c, "add")) == 1 and all(a.get("clusteringProvider") is None for a in kinds(c, "add"))
    with pytest.raises(Exception, match="DELTA_OPTIMIZE_FULL_NOT_SUPPORTED"):
        spark.sql(f"OPTIMIZE {t} FULL")


def test_optimize_refusals(spark, tmp_path):
    clu, plain = f"deltalog.`{tmp_path / 'clu'}`", f"deltalog.`{tmp_path / 'plain'}`"
    spark.sql(f"CREATE TABLE {clu} (a INT, b INT) USING deltalog CLUSTER BY (a)")
    spark.sql(f"INSERT INTO {clu} VALUES (1, 2)")
    spark.sql(f"CREATE TABLE {plain} (a INT, b INT) USING deltalog")
    for sql, error in ((f"OPTIMIZE {clu} ZORDER BY (b)", "DELTA_CLUSTERING_WITH_ZORDER_BY"),
                       (f"OPTIMIZE {clu} WHERE a > 1", "DELTA_CLUSTERING_WITH_PARTITION_PREDICATE"),
                       (f"OPTIMIZE {plain} FULL", "DELTA_OPTIMIZE_FULL_NOT_SUPPORTED")):
        with pytest.raises(Exception, match=error):
            spark.sql(sql)
    assert version_of(tmp_path / "clu") == 1 and version_of(tmp_path / "plain") == 0
    from deltalog.tables import DeltaTable
    with pytest.raises(Exception, match="DELTA_CLUSTERING_WITH_ZORDER_BY"):
        DeltaTable.forPath(spark, str(tmp_path / "clu")).optimize().executeZOrderBy("b")


def test_python_optimize_clusters(spark, tmp_path, small_files):
    from deltalog.tables import DeltaTable
    (DeltaTable.create(spark).location(str(tmp_path)).addColumn("a", "INT").addColumn("b", "INT")
     .addColumn("payload", "STRING").clusterBy("b").execute())
    t = f"deltalog.`{tmp_path}`"
    for seed in range(3):
        insert_spread(spark, t, seed)
    before = rows(spark, tmp_path)
    m = DeltaTable.forPath(spark, str(tmp_path)).optimize().executeCompaction().collect()[0]["metrics"]
    assert m["numFilesRemoved"] == len(kinds(commit(tmp_path), "remove")) >= 3
    assert m["clusteringStats"]["numOutputZCubes"] == 1
    c = commit(tmp_path)
    assert optimize_params(tmp_path)["clusterBy"] == '["b"]'
    assert all(a["clusteringProvider"] == "liquid" for a in kinds(c, "add"))
    assert rows(spark, tmp_path) == before
    assert sum(widths(tmp_path, "b")) / len(widths(tmp_path, "b")) < 0.75


# ------------------------------------------------------------------------------------------ interop
def test_delta_spark_continues_clustering_a_deltalog_table(spark, tmp_path, delta_spark, small_files):
    from test_dml_delete import ROWS, assert_all_engines_read, create, expected
    create(spark, tmp_path, props="CLUSTER BY (id, p)")
    spark.sql(f"OPTIMIZE deltalog.`{tmp_path}`")
    ours = commit(tmp_path)
    assert all(a["clusteringProvider"] == "liquid" for a in kinds(ours, "add"))
    clustered = live_paths(tmp_path)
    # delta-spark: the deltalog-clustered files form one z-cube; after an append it clusters again
    got = delta_spark.run(
        "spark.sql(f\"INSERT INTO delta.`{args['p']}` VALUES (100, 'n100', 0)\")\n"
        "spark.sql(f\"OPTIMIZE delta.`{args['p']}`\")\n"
        "result = spark.sql(f\"DESCRIBE DETAIL delta.`{args['p']}`\").collect()[0]['clusteringColumns']",
        p=str(tmp_path))
    assert got == ["id", "p"]
    theirs = commit(tmp_path)
    assert commit_info(theirs)["operationParameters"]["clusterBy"] == \
        commit_info(ours)["operationParameters"]["clusterBy"] == '["id","p"]'
    assert commit_info(theirs)["operationParameters"] == commit_info(ours)["operationParameters"]
    assert all(a["clusteringProvider"] == "liquid" for a in kinds(theirs, "add"))
    want = sorted(expected(lambda r: True) + [(100, "n100", 0)], key=lambda r: (r[0] is None, r[0] or 0))
    from test_dml_delete import srt
    assert_all_engines_read(spark, delta_spark, tmp_path, srt(want))
    # delta-spark re-merges small z-cubes with new data: it rewrote deltalog's clustered files too
    assert clustered <= {r["path"] for r in kinds(theirs, "remove")}


def test_deltalog_optimizes_a_delta_spark_clustered_table(spark, tmp_path, delta_spark, small_files):
    from test_dml_delete import assert_all_engines_read, create_delta_spark, expected
    create_delta_spark(delta_spark, tmp_path, props="CLUSTER BY (id)")
    assert detail(spark, f"deltalog.`{tmp_path}`")["clusteringColumns"] == ["id"]
    spark.sql(f"OPTIMIZE deltalog.`{tmp_path}`")
    c = commit(tmp_path)
    assert len(kinds(c, "remove")) >= 3
    assert all(a["clusteringProvider"] == "liquid" and a["tags"]["ZCUBE_ZORDER_BY"] == '["id"]'
               for a in kinds(c, "add"))
    assert_all_engines_read(spark, delta_spark, tmp_path, expected(lambda r: True))
    # delta-spark sees one z-cube and no unclustered file: its OPTIMIZE has nothing to do
    v = version_of(tmp_path)
    delta_spark.run("spark.sql(f\"OPTIMIZE delta.`{args['p']}`\")", p=str(tmp_path))
    assert version_of(tmp_path) == v
