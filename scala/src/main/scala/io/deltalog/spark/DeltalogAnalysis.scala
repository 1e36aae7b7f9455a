package io.deltalog.spark

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{EliminateSubqueryAliases, ResolvedTable}
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{AddCheckConstraint, DeleteFromTable, DropConstraint,
  LogicalPlan, MergeIntoTable, OverwritePartitionsDynamic, ShowCreateTable, UpdateTable}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.execution.datasources.{InsertIntoHadoopFsRelationCommand, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

import io.deltalog.commands.{InvalidWriteException, WriteOptions}
import io.deltalog.spark.read.DeltalogReader

/**
 * Resolution rule of the session extension: a read of a [[DeltalogTable]] (a table named in SQL or
 * `spark.table`, ``deltalog.`/path` ``) becomes the connector's file-source relation over the
 * table's snapshot, with the attributes the analyzer already gave the table's columns. A resolved
 * `DELETE`, `UPDATE` and `MERGE` become [[DeltalogDeleteCommand]], [[DeltalogUpdateCommand]] and
 * [[DeltalogMergeCommand]].
 * `ALTER TABLE ... ADD CONSTRAINT ... CHECK` / `DROP CONSTRAINT` become deltalog's commands (matched
 * before the relation inside Spark's `AddCheckConstraint` is turned into a read).
 */
class DeltalogAnalysis(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = {
    // the targets of row-level statements not resolved yet stay V2 relations (their commands need them)
    val targets: Seq[LogicalPlan] = plan.collect {
      case d: DeleteFromTable => EliminateSubqueryAliases(d.table)
      case u: UpdateTable => EliminateSubqueryAliases(u.table)
      case m: MergeIntoTable => EliminateSubqueryAliases(m.targetTable)
    }
    def isTarget(r: LogicalPlan): Boolean = targets.exists(_ eq r)
    rewrite(plan, isTarget)
  }

  private def rewrite(plan: LogicalPlan, isTarget: LogicalPlan => Boolean): LogicalPlan = plan.resolveOperatorsDown {
    case d @ DeleteFromTable(target, cond) if isDeltalog(target) && d.resolved =>
      val table = EliminateSubqueryAliases(target) match { case DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) => t }
      DeltalogDeleteCommand(table, Option(cond).filterNot(_ == Literal.TrueLiteral))
    case u: UpdateTable if u.resolved && isDeltalog(u.table) => DeltalogDml.update(u, DeltalogDml.deltalogTable(u.table).get)
    // under schema evolution Spark leaves assignments to columns the target lacks unresolved (see MergeSchemaEvolution)
    case m: MergeIntoTable if isDeltalog(m.targetTable) && m.targetTable.resolved && m.sourceTable.resolved &&
        (m.resolved || (m.withSchemaEvolution && DeltalogDml.readyForEvolution(m))) =>
      DeltalogDml.merge(m, DeltalogDml.deltalogTable(m.targetTable).get)
    case ShowCreateTable(ResolvedTable(_, _, t: DeltalogTable, _), _, output) => ShowCreateTableCommand(t, output)
    case a: AddCheckConstraint if deltalogTable(a.child).isDefined =>
      AddConstraint.command(deltalogTable(a.child).get, a.checkConstraint)
    case DropConstraint(ResolvedTable(_, _, t: DeltalogTable, _), name, ifExists, _) =>
      DropConstraintCommand(t, name, ifExists)
    // Spark plans a dynamic partition overwrite only for tables with a V2 batch write.
    case o @ OverwritePartitionsDynamic(DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _), query, options, _, _, _)
        if o.resolved =>
      WriteIntoDeltalogCommand(t, query, options + (WriteOptions.PartitionOverwriteMode -> "dynamic"))
    case r: DataSourceV2Relation if isTarget(r) => r
    // readStream.table(t): the table has no V2 streaming read; deltalog's V1 source reads it
    case s: StreamingRelationV2 if s.table.isInstanceOf[DeltalogTable] =>
      DeltalogAnalysis.streamingSource(session, s.table.asInstanceOf[DeltalogTable], s)
    case r @ DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) if DeltalogAnalysis.readsChangeFeed(r) =>
      DeltalogAnalysis.changeFeed(session, t, r)
    case r @ DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) => DeltalogAnalysis.relation(session, t, r.output)
  }

  /** The deltalog table `p` reads (Spark's `AddCheckConstraint` holds a filter over the table). */
  private def deltalogTable(p: LogicalPlan): Option[DeltalogTable] =
    p.collectFirst { case DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) => t }

  private def isDeltalog(p: LogicalPlan): Boolean = EliminateSubqueryAliases(p) match {
    case DataSourceV2Relation(_: DeltalogTable, _, _, _, _, _) => true
    case _ => false
  }
}

object DeltalogAnalysis {
  /** The file-source relation of `t`, its output keeping the exprIds of `output` (matched by name). */
  def relation(session: SparkSession, t: DeltalogTable, output: Seq[AttributeReference]): LogicalRelation = {
    val rel = DeltalogReader.relation(session, t.snapshot)
    val byName = output.map(a => a.name.toLowerCase(Locale.ROOT) -> a).toMap
    val attrs = rel.schema.fields.toSeq.map { f =>
      byName.get(f.name.toLowerCase(Locale.ROOT)) match {
        case Some(a) => AttributeReference(f.name, f.dataType, f.nullable, f.metadata)(a.exprId, a.qualifier)
        case None => AttributeReference(f.name, f.dataType, f.nullable, f.metadata)()
      }
    }
    LogicalRelation(rel, attrs, t.catalogTable, isStreaming = false, stream = None)
  }

  /**
   * `readStream.table(t)`: Spark's V1 streaming relation over deltalog's source, with the read's
   * options and the attributes the analyzer gave the table's columns.
   */
  def streamingSource(session: SparkSession, t: DeltalogTable, s: StreamingRelationV2): LogicalPlan = {
    t.timeTravel.foreach { tt =>
      throw new io.deltalog.spark.read.InvalidReadOptionException(t.name(), s"a streaming read cannot time travel " +
        s"(${tt.source}); give the first version to stream with startingVersion or startingTimestamp")
    }
    import scala.jdk.CollectionConverters._
    val extra = Option(s.extraOptions).map(_.asCaseSensitiveMap().asScala.toMap).getOrElse(Map.empty)
    org.apache.spark.sql.deltalog.StreamingInternals.v1StreamingRelation(session,
      classOf[DeltalogDataSource].getName, t.options ++ extra + ("path" -> t.path), t.catalogTable, s)
  }

  /** `spark.read.option("readChangeFeed", "true").table(t)`: the read asks for the change data feed. */
  def readsChangeFeed(r: DataSourceV2Relation): Boolean =
    r.options != null && Option(r.options.get(DeltalogReader.ReadChangeFeed)).exists(_.trim.equalsIgnoreCase("true"))

  /** The change-feed relation of `t` with the read's options (`startingVersion`, `endingTimestamp`, ...). */
  def changeFeed(session: SparkSession, t: DeltalogTable, r: DataSourceV2Relation): LogicalRelation = {
    t.timeTravel.foreach { tt =>
      throw new io.deltalog.spark.read.InvalidReadOptionException(t.name(), s"readChangeFeed cannot be combined " +
        s"with time travel (${tt.source}); give the range with startingVersion / endingVersion instead")
    }
    import scala.jdk.CollectionConverters._
    val options = org.apache.spark.sql.catalyst.util.CaseInsensitiveMap(r.options.asCaseSensitiveMap().asScala.toMap)
    LogicalRelation(io.deltalog.spark.read.ChangeFeedReader.createRelation(session, t.path, options,
      DeltalogReader.hadoopConf(session, t.options)))
  }
}

/**
 * A dynamic partition overwrite of a deltalog table (`INSERT OVERWRITE` with
 * `spark.sql.sources.partitionOverwriteMode=dynamic`, `writeTo(...).overwritePartitions()`): one
 * transaction replacing the partitions the rows are written to.
 */
case class WriteIntoDeltalogCommand(table: DeltalogTable, query: LogicalPlan, params: Map[String, String])
    extends org.apache.spark.sql.execution.command.LeafRunnableCommand {
  override def innerChildren: Seq[LogicalPlan] = Seq(query)

  override def run(session: SparkSession): Seq[org.apache.spark.sql.Row] = {
    table.write(org.apache.spark.sql.deltalog.SparkCatalogInternals.dataFrame(session, query),
      org.apache.spark.sql.SaveMode.Overwrite, params)
    Nil
  }
}

/**
 * Check rule of the session extension: Spark's generic file writes (`df.write.parquet(path)`,
 * `format("parquet")`, `INSERT` into a file-source table or a view over deltalog's relation) must
 * not land in a deltalog table's folder: they would add files no commit knows about, and an
 * overwrite would delete `_delta_log`. Refused during analysis, before anything is written.
 */
class DeltalogWriteChecks(session: SparkSession) extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit = plan.foreach {
    case c: InsertIntoHadoopFsRelationCommand if DeltalogWriteChecks.isTableRoot(session, c.outputPath) =>
      val format = c.fileFormat.toString.toLowerCase(Locale.ROOT)
      throw new InvalidWriteException("DELTA_FILE_FORMAT_WRITE_INTO_DELTA_TABLE", c.outputPath.toString,
        s"${c.outputPath} is a Delta table: a plain file write ($format) there would bypass its log " +
          s"(${if (c.mode == org.apache.spark.sql.SaveMode.Overwrite) "an overwrite would delete _delta_log" else "the rows would never be visible"}). " +
          s"Write with df.write.format(\"deltalog\").save(\"${c.outputPath}\") or INSERT INTO deltalog.`${c.outputPath}`.")
    case _ =>
  }
}

object DeltalogWriteChecks {
  def isTableRoot(session: SparkSession, path: Path): Boolean =
    try {
      val log = new Path(path, "_delta_log")
      log.getFileSystem(session.sessionState.newHadoopConf()).exists(log)
    } catch { case NonFatal(_) => false }
}
