package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.LongType

import io.deltalog.commands.DeleteCommand

/**
 * `DELETE FROM t [WHERE condition]` on a deltalog table ([[DeleteCommand]]); one row
 * `num_affected_rows` as delta-spark returns it (-1 when the count is unknown: whole files
 * removed without `numRecords` statistics).
 *
 * @param condition the condition resolved against the table relation (None: every row)
 */
case class DeltalogDeleteCommand(table: DeltalogTable, condition: Option[Expression]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = Seq(AttributeReference("num_affected_rows", LongType, nullable = false)())

  override def run(session: SparkSession): Seq[Row] = {
    table.assertWritable()
    val column = condition.map(e => org.apache.spark.sql.deltalog.SparkInternals.column(DeleteCommand.unresolve(e)))
    val result = new DeleteCommand(session.asInstanceOf[ClassicSession], table.path, column, Some(table.name()),
      table.options).run()
    DeltalogTable.refreshCaches(session, table.path)
    Seq(Row(result.numDeletedRows))
  }
}
