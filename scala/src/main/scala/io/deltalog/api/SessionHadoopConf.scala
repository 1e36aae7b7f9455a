// Lives under io/deltalog/api (TableApi owns it) but in a package below org.apache.spark.sql,
// where the classic session's `private[sql]` SQL configuration can be read.
package org.apache.spark.sql.deltalog

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.internal.SessionState

/**
 * The Hadoop configuration a session's table operations use: exactly what Spark's
 * `sessionState.newHadoopConf()` gives (the context's Hadoop configuration plus every entry of
 * the session's SQL configuration), without creating the session state when it does not exist
 * yet. The state (analyzer, catalogs, the extensions' rules) took 20-40 ms of a fresh driver's
 * first `DeltaTable.forPath`, which needs none of it; the session's SQL configuration, which
 * `spark.conf` reads and writes, exists without it.
 */
object SessionHadoopConf {
  /** A new Hadoop configuration for `session` (see the object comment). */
  def of(session: SparkSession): Configuration = session match {
    case c: ClassicSession =>
      try SessionState.newHadoopConf(c.sparkContext.hadoopConfiguration, c.sqlConf)
      catch { case _: LinkageError => c.sessionState.newHadoopConf() } // a Spark without `sqlConf`
    case other => new Configuration(other.sparkContext.hadoopConfiguration) // Spark 4 drivers run classic sessions
  }
}
