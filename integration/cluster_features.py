"""More table features through a driver (``cluster_child.py features``), for the cluster-vs-local
comparison of test_cluster.py (full size): each scenario runs operations whose work happens on
the executors (custom expressions, per-file rewrites, deletion vectors, change data) and reports
what it reads back. Every number is deterministic and has a Python reference in the test.
"""
from __future__ import annotations

from typing import Callable, Dict


def _rows(spark, sql: str) -> list:
    return [list(r) for r in spark.sql(sql).collect()]


def features(spark, base: str) -> Dict[str, object]:
    def q(s):
        return spark.sql(s).collect()

    def t(name):
        return f"deltalog.`{base}/{name}`"

    def metrics(row):
        m = row.asDict(recursive=True).get("metrics") or {}
        return [m.get("numFilesAdded"), m.get("numFilesRemoved")]

    out: Dict[str, object] = {}
    cases: Dict[str, Callable[[], object]] = {}

    def zorder():
        spark.range(0, 4000, 1, 4).selectExpr("id", "id % 17 as a", "cast(id * 7 % 101 as string) as b") \
            .write.format("deltalog").save(f"{base}/z")
        m = metrics(q(f"OPTIMIZE {t('z')} ZORDER BY (a, b)")[0])
        return [m[1], _rows(spark, f"SELECT count(*), sum(id), sum(a) FROM {t('z')}")]
    cases["zorder"] = zorder

    def cdf_merge():
        q(f"CREATE TABLE {t('c')} (id BIGINT, v BIGINT) USING deltalog "
          "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
        spark.range(0, 1000, 1, 2).selectExpr("id", "id as v").write.format("deltalog").mode("append").save(f"{base}/c")
        q(f"MERGE INTO {t('c')} t USING (SELECT id FROM range(500, 1500, 1, 2)) s ON t.id = s.id "
          "WHEN MATCHED THEN UPDATE SET v = -1 WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 7)")
        ch = spark.read.format("deltalog").option("readChangeFeed", "true").option("startingVersion", 2) \
            .load(f"{base}/c").groupBy("_change_type").count().collect()
        return sorted([r[0], r[1]] for r in ch)
    cases["cdf_merge"] = cdf_merge

    def generated_identity_check():
        q(f"CREATE TABLE {t('g')} (id BIGINT GENERATED ALWAYS AS IDENTITY, x BIGINT, "
          "y BIGINT GENERATED ALWAYS AS (x * 2)) USING deltalog")
        q(f"ALTER TABLE {t('g')} ADD CONSTRAINT pos CHECK (x >= 0)")
        q(f"INSERT INTO {t('g')} (x) SELECT id FROM range(0, 2000, 1, 4)")
        try:
            q(f"INSERT INTO {t('g')} (x) SELECT id - 5 FROM range(0, 100, 1, 2)")
            refused = None
        except Exception as e:  # the CHECK constraint fails on an executor
            refused = next((c for c in ("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "DELTA_VIOLATE_CONSTRAINT")
                            if c in str(e)), type(e).__name__)
        return [refused, _rows(spark, f"SELECT count(DISTINCT id), sum(y), count(*) FROM {t('g')}")]
    cases["generated_identity_check"] = generated_identity_check

    def column_mapping():
        spark.range(0, 1000, 1, 2).selectExpr("id", "id as v").write.format("deltalog") \
            .option("delta.columnMapping.mode", "name").save(f"{base}/m")
        q(f"ALTER TABLE {t('m')} RENAME COLUMN v TO w")
        q(f"UPDATE {t('m')} SET w = w + 1 WHERE id < 10")
        return _rows(spark, f"SELECT count(*), sum(w) FROM {t('m')}")
    cases["column_mapping"] = column_mapping

    def liquid_clustering():
        q(f"CREATE TABLE {t('lc')} (id BIGINT, k STRING) USING deltalog CLUSTER BY (k)")
        spark.range(0, 3000, 1, 3).selectExpr("id", "cast(id % 13 as string) as k").write.format("deltalog") \
            .mode("append").save(f"{base}/lc")
        m = metrics(q(f"OPTIMIZE {t('lc')}")[0])
        return [m[1], _rows(spark, f"SELECT count(*), sum(id), count(DISTINCT k) FROM {t('lc')}")]
    cases["liquid_clustering"] = liquid_clustering

    def row_tracking_dv_purge():
        q(f"CREATE TABLE {t('rt')} (id BIGINT, v BIGINT) USING deltalog "
          "TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'true')")
        spark.range(0, 2000, 1, 2).selectExpr("id", "id as v").write.format("deltalog").mode("append").save(f"{base}/rt")
        q(f"UPDATE {t('rt')} SET v = 0 WHERE id % 3 = 0")
        filtered = spark.read.format("deltalog").load(f"{base}/rt").where("v > 100").count()
        q(f"REORG TABLE {t('rt')} APPLY (PURGE)")
        return [filtered, _rows(spark, f"SELECT count(*), sum(v) FROM {t('rt')}")]
    cases["row_tracking_dv_purge"] = row_tracking_dv_purge

    def convert_clone_restore():
        spark.range(0, 500, 1, 2).write.parquet(f"{base}/pq")
        q(f"CONVERT TO DELTALOG parquet.`{base}/pq`")
        q(f"CREATE TABLE {t('cl')} DEEP CLONE {t('pq')}")
        spark.range(500, 600).write.format("deltalog").mode("append").save(f"{base}/cl")
        q(f"RESTORE TABLE {t('cl')} TO VERSION AS OF 0")
        return _rows(spark, f"SELECT count(*), sum(id) FROM {t('cl')}")
    cases["convert_clone_restore"] = convert_clone_restore

    def overwrites():
        spark.range(0, 1000, 1, 2).selectExpr("id", "id % 4 as p").write.format("deltalog").partitionBy("p") \
            .save(f"{base}/rw")
        spark.range(0, 10).selectExpr("id", "1 as p").write.format("deltalog").mode("overwrite") \
            .option("replaceWhere", "p = 1").save(f"{base}/rw")
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        try:
            spark.range(0, 10).selectExpr("id", "2 as p").write.format("deltalog").mode("overwrite").save(f"{base}/rw")
        finally:
            spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        return _rows(spark, f"SELECT p, count(*), sum(id) FROM {t('rw')} GROUP BY p ORDER BY p")
    cases["overwrites"] = overwrites

    def stream_source():
        (spark.readStream.format("deltalog").load(f"{base}/c").writeStream.format("deltalog")
         .option("checkpointLocation", f"{base}/ck-c2").trigger(availableNow=True).start(f"{base}/c2")
         .awaitTermination())
        return _rows(spark, f"SELECT count(*), sum(id) FROM {t('c2')}")
    cases["stream_source"] = stream_source

    for name, run in cases.items():
        out[name] = run()
    return out
