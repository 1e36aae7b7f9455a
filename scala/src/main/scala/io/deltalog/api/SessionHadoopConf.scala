// Lives under io/deltalog/api (TableApi owns it) but in a package below org.apache.spark.sql,
// where the classic session's `private[sql]` SQL configuration can be read.
package org.apache.spark.sql.deltalog

import java.lang.reflect.Field

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.internal.{SessionState, SQLConf}

/**
 * The Hadoop configuration a session's table operations use: what Spark's
 * `sessionState.newHadoopConf()` gives (the context's Hadoop configuration plus every entry of
 * the session's SQL configuration), without creating the session state when it does not exist
 * yet. The state (analyzer, catalogs, the extensions' rules) took 20-40 ms of a fresh driver's
 * first `DeltaTable.forPath`, which needs none of it; the session's SQL configuration, which
 * `spark.conf` reads and writes, exists without it.
 *
 * Nor is the session's SQL configuration created when it does not exist yet (nothing was read or
 * set through `spark.conf`, no state) and the session is the one to create Spark's shared state
 * (a driver's first session): Spark would build it from that shared state, whose creation
 * (warehouse location, SQL status listener, cache manager) took another 10-20 ms of the first
 * open (fresh 100k-file load from Python: forPath 0.065 -> 0.053 s median, 10 drivers each).
 * Its entries are then merged here the way Spark merges them, from the context's Spark
 * configuration and the session's initial options in place of the shared state's copy of them.
 * The one difference, in a driver whose shared state does not exist yet either: the two
 * warehouse-location entries (`spark.sql.warehouse.dir`, `hive.metastore.warehouse.dir`) that
 * the shared state adds when Spark creates it are absent; they name the SQL warehouse and
 * configure no file system. With a `hive-site.xml` on the class path (which the shared state
 * would load) Spark's own way is taken.
 */
object SessionHadoopConf {
  /** A new Hadoop configuration for `session` (see the object comment). */
  def of(session: SparkSession): Configuration = session match {
    case c: ClassicSession =>
      try {
        if (sqlConfPending(c) && !hiveSite) {
          val conf = new Configuration(c.sparkContext.hadoopConfiguration)
          pendingSqlConfEntries(c).forEach((k, v) => if (v != null) conf.set(k, v))
          conf
        } else SessionState.newHadoopConf(c.sparkContext.hadoopConfiguration, c.sqlConf)
      } catch { case _: LinkageError => c.sessionState.newHadoopConf() } // a Spark without `sqlConf`
    case other => new Configuration(other.sparkContext.hadoopConfiguration) // Spark 4 drivers run classic sessions
  }

  /**
   * The entries of the SQL configuration Spark would create for `c`, in the order Spark sets them:
   * the context's Spark configuration with the session's initial options (the shared state's
   * copy), then the non-static entries of both (`SQLConf.mergeSparkConf` and
   * `mergeNonStaticSQLConfigs`, which store each value as given). Built without a `SQLConf`:
   * its setter also checks each value (parsing the session time zone, for one), ~5 ms of a fresh
   * driver's first open; Spark still checks them all when it creates the session state.
   */
  private def pendingSqlConfEntries(c: ClassicSession): java.util.LinkedHashMap[String, String] = {
    val m = new java.util.LinkedHashMap[String, String]()
    val context = c.sparkContext.conf.getAll
    // the shared state keeps the Hive warehouse key in the Hadoop configuration only
    context.foreach { case (k, v) => if (k != HiveWarehouseKey) m.put(k, v) }
    c.initialSessionOptions.foreach { case (k, v) =>
      if (k != HiveWarehouseKey && k != SparkWarehouseKey) m.put(k, v)
    }
    context.foreach { case (k, v) => if (!SQLConf.isStaticConfigKey(k)) m.put(k, v) }
    c.initialSessionOptions.foreach { case (k, v) => if (!SQLConf.isStaticConfigKey(k)) m.put(k, v) }
    m
  }

  private val HiveWarehouseKey = "hive.metastore.warehouse.dir"
  private val SparkWarehouseKey = "spark.sql.warehouse.dir"

  /**
   * True when `c`'s SQL configuration was not created yet and would be built from a shared state
   * that `c` itself is still to create (not one shared with another session, no parent session
   * state): Spark's lazy fields, read by reflection; false when unknown. Public for diagnostics and tests.
   */
  def sqlConfPending(c: ClassicSession): Boolean =
    try {
      Fields != null && Fields("sqlConf").get(c) == null && Fields("sharedState").get(c) == null &&
        Fields("existingSharedState").get(c) == None && Fields("parentSessionState").get(c) == None
    } catch { case NonFatal(_) => false }

  private lazy val Fields: Map[String, Field] =
    try Seq("sqlConf", "sharedState", "existingSharedState", "parentSessionState").map { n =>
        val f = classOf[ClassicSession].getDeclaredField(n); f.setAccessible(true); n -> f
      }.toMap
    catch { case NonFatal(_) => null }

  private lazy val hiveSite: Boolean =
    Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader).getResource("hive-site.xml") != null
}
