package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import io.deltalog.commands.GenerateCommand

/** `GENERATE <mode> FOR TABLE <table>` ([[GenerateCommand]]); no rows, as delta-spark. */
case class GenerateTableCommand(target: TableTarget, mode: String) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val (location, name) = target.resolve(spark, "GENERATE")
    GenerateCommand.run(spark.asInstanceOf[ClassicSession], location, name, mode)
    Nil
  }
}
