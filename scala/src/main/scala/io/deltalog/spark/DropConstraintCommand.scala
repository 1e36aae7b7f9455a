package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import io.deltalog.commands.InvalidWriteException
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{ClientCapabilities, Protocol}
import io.deltalog.spark.read.DeltalogReader
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * `ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name` on a deltalog table (planned by
 * [[DeltalogAnalysis]] from Spark's `DropConstraint`): one metadata commit without
 * `delta.constraints.<lower-case name>`, operation `DROP CONSTRAINT` with delta-spark's parameters
 * (`name` as written, `existed`, and `expr` when it existed). As in delta-spark, a missing
 * constraint is an error (`DELTA_CONSTRAINT_DOES_NOT_EXIST`) unless IF EXISTS is given (or
 * [[DropConstraintCommand.AssumeIfExists]] is set), and then the commit is still made, with the
 * metadata unchanged. The protocol keeps `checkConstraints` (dropping a feature is its own statement).
 * Nothing is read, so concurrent appends do not conflict; a concurrent metadata change does
 * (MetadataChangedException: this commit has a metadata action too).
 */
case class DropConstraintCommand(table: DeltalogTable, name: String, ifExists: Boolean) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val tableName = table.name()
    val txn = OptimisticTransaction.start(DeltaLog.uncached(table.path, DeltalogReader.hadoopConf(spark, table.options)))
    Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, tableName)
    val m = txn.metadata
    val k = AddConstraint.key(name)
    val existing = m.configuration.find(_._1.toLowerCase(Locale.ROOT) == k)
    if (existing.isEmpty && !ifExists &&
        !spark.conf.getOption(DropConstraintCommand.AssumeIfExists).exists(_.trim.equalsIgnoreCase("true"))) {
      throw new InvalidWriteException("DELTA_CONSTRAINT_DOES_NOT_EXIST", tableName,
        s"Cannot drop nonexistent constraint $name from table $tableName. To avoid " +
          "throwing an error, provide the parameter IF EXISTS or set the SQL session configuration " +
          s"${DropConstraintCommand.AssumeIfExists} to true.")
    }
    txn.updateMetadata(m.copy(configuration = m.configuration -- existing.map(_._1)))
    txn.commit(Nil, Operation.dropConstraint(name, existing.map(_._2)))
    DeltalogTable.refreshCaches(spark, table.path)
    Nil
  }
}

object DropConstraintCommand {
  /** delta-spark's switch making every DROP CONSTRAINT behave as DROP CONSTRAINT IF EXISTS. */
  val AssumeIfExists = "spark.databricks.delta.constraints.assumesDropIfExists.enabled"
}
