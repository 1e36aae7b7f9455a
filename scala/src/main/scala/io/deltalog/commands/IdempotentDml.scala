package io.deltalog.commands

import org.apache.spark.sql.SparkSession
import org.slf4j.LoggerFactory

import io.deltalog.actions.SetTransaction
import io.deltalog.exceptions.DeltalogException
import io.deltalog.txn.OptimisticTransaction

/**
 * Idempotent MERGE (delta-spark's session configurations `spark.databricks.delta.write.txnAppId` /
 * `spark.databricks.delta.write.txnVersion`): with both set, a MERGE whose (appId, version) the table
 * already recorded in a `txn` action is skipped, otherwise its commit carries that `txn` action. This
 * is what makes a `foreachBatch` MERGE exactly-once: set the version to the batch id. With
 * `spark.databricks.delta.write.txnVersion.autoReset.enabled=true` the version is unset after use.
 */
object IdempotentDml {
  val TxnAppIdConf = "spark.databricks.delta.write.txnAppId"
  val TxnVersionConf = "spark.databricks.delta.write.txnVersion"
  val AutoResetConf = "spark.databricks.delta.write.txnVersion.autoReset.enabled"

  private val log = LoggerFactory.getLogger(getClass)

  /** (appId, version) from the session, None when neither is set; an error when only one is or the version is bad. */
  def fromSession(spark: SparkSession): Option[(String, Long)] = {
    val app = spark.conf.getOption(TxnAppIdConf).map(_.trim).filter(_.nonEmpty)
    val version = spark.conf.getOption(TxnVersionConf).map(_.trim).filter(_.nonEmpty)
    (app, version) match {
      case (None, None) => None
      case (Some(a), Some(v)) =>
        Some(a -> v.toLongOption.filter(_ >= 0).getOrElse(throw new InvalidWriteOptionException(
          TxnVersionConf, v, "a non-negative whole number")))
      case _ => throw new DeltalogException("DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS",
        s"Both $TxnAppIdConf and $TxnVersionConf must be specified for idempotent Delta writes " +
          s"(only ${if (app.isDefined) TxnAppIdConf else TxnVersionConf} is set).")
    }
  }

  /** True when the table already has the session's (appId, version): the statement is then skipped. */
  def hasBeenExecuted(spark: SparkSession, txn: OptimisticTransaction, table: String, statement: String): Boolean =
    fromSession(spark).exists { case (app, v) =>
      val applied = txn.txnVersion(app)
      val done = applied >= v
      if (done) {
        log.info(s"Table $table: $statement with txnAppId $app version $v already applied (latest $applied); skipped.")
        autoReset(spark)
      }
      done
    }

  /** The `txn` action the statement's commit carries (the version is unset afterwards with autoReset). */
  def setTransaction(spark: SparkSession): Option[SetTransaction] = {
    val t = fromSession(spark).map { case (app, v) => SetTransaction(app, v, Some(System.currentTimeMillis())) }
    if (t.isDefined) autoReset(spark)
    t
  }

  private def autoReset(spark: SparkSession): Unit =
    if (spark.conf.getOption(AutoResetConf).exists(_.trim.equalsIgnoreCase("true"))) spark.conf.unset(TxnVersionConf)
}
