package io.deltalog.spark

import org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension

/**
 * The catalog set as `spark.sql.catalog.spark_catalog`. It delegates to Spark's session catalog
 * (so non-deltalog tables behave exactly as before); deltalog tables are resolved here once the
 * DataSource V2 table exists.
 */
class DeltalogCatalog extends DelegatingCatalogExtension
