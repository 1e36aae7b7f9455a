package io.deltalog.spark

import org.apache.spark.sql.SparkSessionExtensions

/**
 * Entry point named in `spark.sql.extensions`. Spark instantiates it once per session and
 * hands it the extension points: deltalog's SQL parser (DESCRIBE PROTOCOL), the analysis rule that
 * plans reads of catalog tables ([[DeltalogAnalysis]]), the schema evolution of inserts
 * ([[InsertSchemaEvolution]]) and of MERGE ([[MergeSchemaEvolution]]), the change-feed table functions
 * (`table_changes`, `table_changes_by_path`: [[TableChangesFunction]]) and the check that refuses plain file writes
 * into a table's folder ([[DeltalogWriteChecks]]). It first checks that the running Spark is one
 * deltalog was built for, so a mismatch fails at session start with a clear message instead of an
 * obscure linkage error later.
 */
class DeltalogSparkSessionExtension extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    SparkVersionCheck.assertSupported(org.apache.spark.SPARK_VERSION)
    // The first table open of this driver: its classes loaded and its code compiled while the
    // session is still being created.
    io.deltalog.api.ClassPreload.start()
    io.deltalog.spark.read.SparkDistributedReplay.register()
    extensions.injectParser((_, parser) => new DeltalogSqlParser(parser))
    // schema evolution of inserts: before Spark's resolution (analyzed DataFrame writes) and during it (INSERT)
    extensions.injectHintResolutionRule(session => new InsertSchemaEvolution(session))
    extensions.injectResolutionRule(session => new InsertSchemaEvolution(session))
    // MERGE into a deltalog table: its target resolved before Spark's rules (explicit assignments to new columns)
    extensions.injectHintResolutionRule(session => new MergeSchemaEvolution(session))
    extensions.injectResolutionRule(session => new DeltalogAnalysis(session))
    extensions.injectCheckRule(session => new DeltalogWriteChecks(session))
    TableChangesFunction.descriptions.foreach(extensions.injectTableFunction)
  }
}

/** Which Spark versions this build of deltalog runs on. */
object SparkVersionCheck {
  val supportedMajorMinor: Seq[String] = Seq("4.2")

  def assertSupported(sparkVersion: String): Unit = {
    val majorMinor = sparkVersion.split('.').take(2).mkString(".")
    if (!supportedMajorMinor.contains(majorMinor)) {
      throw new IllegalStateException(
        s"deltalog ${io.deltalog.VERSION} is built for Spark ${supportedMajorMinor.mkString(", ")}" +
          s" but this session runs Spark $sparkVersion; install the deltalog build for your Spark.")
    }
  }
}
