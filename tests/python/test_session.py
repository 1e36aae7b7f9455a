"""configure_spark_with_deltalog appends to what the user set and the JVM side loads."""
from __future__ import annotations

import warnings

from pyspark.sql import SparkSession

from deltalog.session import CATALOG_CLASS, EXTENSION_CLASS, bundled_jar_path, configure_spark_with_deltalog


def test_appends_to_existing_jars_and_extensions():
    b = (SparkSession.builder.config("spark.jars", "/opt/other.jar")
         .config("spark.sql.extensions", "com.example.Ext"))
    b = configure_spark_with_deltalog(b, jar_path="/opt/deltalog.jar")
    assert b._options["spark.jars"] == "/opt/other.jar,/opt/deltalog.jar"
    assert b._options["spark.sql.extensions"] == f"com.example.Ext,{EXTENSION_CLASS}"
    assert b._options["spark.sql.catalog.spark_catalog"] == CATALOG_CLASS


def test_idempotent_and_keeps_a_user_catalog():
    b = SparkSession.builder.config("spark.sql.catalog.spark_catalog", "com.example.Catalog")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b = configure_spark_with_deltalog(configure_spark_with_deltalog(b, jar_path="/j.jar"), jar_path="/j.jar")
    assert b._options["spark.jars"] == "/j.jar"
    assert b._options["spark.sql.extensions"] == EXTENSION_CLASS
    assert b._options["spark.sql.catalog.spark_catalog"] == "com.example.Catalog"
    assert any("keeping it" in str(w.message) for w in caught)


def test_bundled_jar_is_inside_the_installed_package():
    path = bundled_jar_path()
    assert path.endswith(".jar") and "/deltalog/jars/" in path


def test_live_session_has_the_extension_and_engine(spark):
    assert EXTENSION_CLASS in spark.conf.get("spark.sql.extensions")
    assert spark.conf.get("spark.sql.catalog.spark_catalog") == CATALOG_CLASS
    registry = spark._jvm.io.deltalog.api.ProtocolApi.featureRegistryJson()
    assert "deletionVectors" in registry
