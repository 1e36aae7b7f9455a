package io.deltalog.txn

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration

/**
 * Transaction settings, read from the table's Hadoop configuration, then JVM system properties:
 *
 *  - `deltalog.maxCommitAttempts` (default 10,000,000): commit attempts before giving up;
 *  - `deltalog.commit.durable` (default true): fsync commit files and the log directory;
 *  - `spark.databricks.delta.properties.defaults.*`: session defaults for new tables;
 *  - `spark.databricks.delta.allowArbitraryProperties.enabled` (default false): unknown `delta.*`
 *    table properties are accepted ([[TableProperties]]).
 */
object TxnConf {
  val MaxCommitAttemptsKey = "deltalog.maxCommitAttempts"
  val DefaultMaxCommitAttempts = 10000000
  val DurableKey = "deltalog.commit.durable"
  val SessionDefaultsPrefix = "spark.databricks.delta.properties.defaults."

  private def get(conf: Configuration, key: String): Option[String] =
    Option(conf).flatMap(c => Option(c.get(key))).orElse(Option(System.getProperty(key))).map(_.trim)

  def maxCommitAttempts(conf: Configuration): Int =
    get(conf, MaxCommitAttemptsKey).flatMap(_.toIntOption).filter(_ > 0).getOrElse(DefaultMaxCommitAttempts)

  def durable(conf: Configuration): Boolean =
    get(conf, DurableKey).forall(v => !v.equalsIgnoreCase("false"))

  /** [[TableProperties.AllowArbitraryPropertiesKey]]: true lets unknown `delta.*` table properties through. */
  def allowArbitraryProperties(conf: Configuration): Boolean =
    get(conf, TableProperties.AllowArbitraryPropertiesKey).exists(_.equalsIgnoreCase("true"))

  /** Session defaults (full keys) from the configuration and system properties. */
  def sessionDefaults(conf: Configuration): Map[String, String] = {
    val fromSys = System.getProperties.asScala.collect {
      case (k, v) if k.startsWith(SessionDefaultsPrefix) => k -> v
    }.toMap
    val fromConf = Option(conf).map(_.getPropsWithPrefix(SessionDefaultsPrefix).asScala.map {
      case (k, v) => (SessionDefaultsPrefix + k) -> v
    }.toMap).getOrElse(Map.empty)
    fromSys ++ fromConf
  }
}
