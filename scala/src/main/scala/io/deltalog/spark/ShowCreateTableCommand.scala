package io.deltalog.spark

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.util.QuotingUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructField

import io.deltalog.spark.ColumnDefinitions._

/**
 * `SHOW CREATE TABLE` of a deltalog table: a statement that re-creates the table's schema,
 * partitioning, liquid clustering (`CLUSTER BY`), comment, location (external tables) and properties, with the column clauses the
 * log records — `NOT NULL`, `GENERATED ALWAYS AS (expr)`,
 * `GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY (START WITH s INCREMENT BY i)`, `DEFAULT`,
 * `COMMENT` — which Spark's generic statement drops. The protocol appears as delta-spark shows it
 * among the properties (`delta.minReaderVersion`, `delta.feature.x = 'supported'`), so the copy
 * gets the same features. (delta-spark 4.4 refuses SHOW CREATE TABLE on Delta tables.)
 */
case class ShowCreateTableCommand(table: DeltalogTable, override val output: Seq[Attribute])
    extends LeafRunnableCommand {

  override def run(session: SparkSession): Seq[Row] = Seq(Row(ShowCreateTableCommand.statement(table)))
}

object ShowCreateTableCommand {
  def statement(table: DeltalogTable): String = {
    val snapshot = table.snapshot
    val m = snapshot.metadata
    val schema = table.schema
    val columns = schema.fields.map(column).mkString(",\n  ")
    val partitions = m.partitionColumns.map(c => QuotingUtils.quoteIfNeeded(
      schema.fieldNames.find(_.equalsIgnoreCase(c)).getOrElse(c)))
    val external = table.catalogTable.forall(_.tableType == org.apache.spark.sql.catalyst.catalog.CatalogTableType.EXTERNAL)
    val clustering = io.deltalog.commands.ClusteredTable.domain(snapshot).toSeq
      .flatMap(io.deltalog.commands.ClusteredTable.physicalColumns)
      .map(p => io.deltalog.commands.ClusteredTable.logicalPath(io.deltalog.commands.ClusteredTable.schemaOf(m), p)
        .map(QuotingUtils.quoteIfNeeded).mkString("."))
    // CLUSTER BY enables the clustering feature (delta-spark refuses it among the properties)
    val props = (m.configuration ++ DeltalogTable.protocolProperties(snapshot.protocol)).toSeq
      .filterNot { case (k, _) => clustering.nonEmpty && k == io.deltalog.commands.ClusteredTable.FeatureProperty }
      .sortBy(_._1)
    val sb = new StringBuilder(s"CREATE TABLE ${table.name()} (\n  $columns)\nUSING ${DeltalogTable.Provider}\n")
    if (partitions.nonEmpty) sb ++= s"PARTITIONED BY (${partitions.mkString(", ")})\n"
    if (clustering.nonEmpty) sb ++= s"CLUSTER BY (${clustering.mkString(", ")})\n"
    m.description.foreach(d => sb ++= s"COMMENT ${literal(d)}\n")
    if (external) sb ++= s"LOCATION ${literal(table.path)}\n"
    if (props.nonEmpty) {
      sb ++= props.map { case (k, v) => s"  ${literal(k)} = ${literal(v)}" }.mkString("TBLPROPERTIES (\n", ",\n", ")\n")
    }
    sb.toString
  }

  private def column(f: StructField): String = {
    val md = f.metadata
    val sb = new StringBuilder(s"${QuotingUtils.quoteIfNeeded(f.name)} ${f.dataType.sql}")
    if (!f.nullable) sb ++= " NOT NULL"
    if (md.contains(GenerationExpressionKey)) sb ++= s" GENERATED ALWAYS AS (${md.getString(GenerationExpressionKey)})"
    if (md.contains(IdentityStartKey)) {
      val byDefault = md.contains(IdentityAllowExplicitInsertKey) && md.getBoolean(IdentityAllowExplicitInsertKey)
      sb ++= s" GENERATED ${if (byDefault) "BY DEFAULT" else "ALWAYS"} AS IDENTITY " +
        s"(START WITH ${md.getLong(IdentityStartKey)} INCREMENT BY ${md.getLong(IdentityStepKey)})"
    }
    f.getCurrentDefaultValue().foreach(d => sb ++= s" DEFAULT $d")
    f.getComment().foreach(c => sb ++= s" COMMENT ${literal(c)}")
    sb.toString
  }

  private def literal(s: String): String = "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"

}
