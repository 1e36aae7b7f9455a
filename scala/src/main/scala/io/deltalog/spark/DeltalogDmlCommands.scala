package io.deltalog.spark

import org.apache.spark.sql.{Column, Row, SparkSession}
import org.apache.spark.sql.catalyst.analysis.{EliminateSubqueryAliases, UnresolvedAttribute}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSet, Cast, Expression,
  GetStructField, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{Assignment, DeleteAction, InsertAction, InsertStarAction,
  LogicalPlan, MergeAction, MergeIntoTable, SubqueryAlias, UpdateAction, UpdateStarAction, UpdateTable}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.deltalog.commands.{InvalidWriteException, MergeClause, MergeCommand, UpdateCommand}

/**
 * `UPDATE t SET … [WHERE …]` on a deltalog table ([[UpdateCommand]]); one row `num_affected_rows`
 * as delta-spark returns it.
 */
case class DeltalogUpdateCommand(table: DeltalogTable, assignments: Seq[(Seq[String], Expression)],
    condition: Option[Expression]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = Seq(AttributeReference("num_affected_rows", LongType, nullable = false)())

  override def run(session: SparkSession): Seq[Row] = {
    table.assertWritable()
    def column(e: Expression): Column = SparkInternals.column(DeltalogDml.unresolveAll(e))
    val result = new UpdateCommand(session.asInstanceOf[ClassicSession], table.path,
      assignments.map { case (k, v) => (k, column(v)) }, condition.map(column), Some(table.name()), table.options).run()
    DeltalogTable.refreshCaches(session, table.path)
    Seq(Row(result.numUpdatedRows))
  }
}

/**
 * `MERGE [WITH SCHEMA EVOLUTION] INTO t USING s ON … WHEN …` on a deltalog table ([[MergeCommand]]);
 * one row with delta-spark's columns (`num_affected_rows`, `num_updated_rows`, `num_deleted_rows`,
 * `num_inserted_rows`).
 */
case class DeltalogMergeCommand(table: DeltalogTable, alias: String, source: LogicalPlan, condition: Column,
    clauses: Seq[MergeClause], schemaEvolution: Boolean) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = Seq("num_affected_rows", "num_updated_rows", "num_deleted_rows",
    "num_inserted_rows").map(n => AttributeReference(n, LongType, nullable = false)())
  override def innerChildren: Seq[LogicalPlan] = Seq(source)

  override def run(session: SparkSession): Seq[Row] = {
    table.assertWritable()
    val result = new MergeCommand(session.asInstanceOf[ClassicSession], table.path,
      org.apache.spark.sql.deltalog.SparkCatalogInternals.dataFrame(session, source), Some(alias), condition, clauses,
      schemaEvolution, Some(table.name()), table.options).run()
    DeltalogTable.refreshCaches(session, table.path)
    Seq(Row(result.numAffected, result.numUpdated, result.numDeleted, result.numInserted))
  }
}

/** Turns Spark's resolved (or, under schema evolution, partly resolved) UPDATE / MERGE plans into deltalog's commands. */
private[spark] object DeltalogDml {
  /** Attribute references turned back into names (the command resolves them against the table's rows). */
  def unresolveAll(e: Expression): Expression =
    e.transform { case a: AttributeReference => UnresolvedAttribute(Seq(a.name)) }

  /** The column path an assignment key names (`a`, `s.x`). */
  def keyPath(e: Expression, targetAlias: Option[String]): Seq[String] = e match {
    case a: AttributeReference => Seq(a.name)
    case GetStructField(child, _, Some(name)) => keyPath(child, targetAlias) :+ name
    case g: GetStructField => keyPath(g.child, targetAlias) :+ g.extractFieldName
    case UnresolvedAttribute(parts) =>
      if (parts.size > 1 && targetAlias.exists(_.equalsIgnoreCase(parts.head))) parts.tail else parts
    case other => throw new InvalidWriteException("DELTA_INVALID_ASSIGNMENT_KEY", "the table",
      s"an assignment target must be a column or a nested field, not ${other.sql}")
  }

  def update(u: UpdateTable, t: DeltalogTable): DeltalogUpdateCommand =
    DeltalogUpdateCommand(t, u.assignments.map(a => keyPath(a.key, None) -> a.value),
      u.condition.filterNot(_ == Literal.TrueLiteral))

  def merge(m: MergeIntoTable, t: DeltalogTable): DeltalogMergeCommand = {
    val alias = m.targetTable match {
      case SubqueryAlias(id, _) => id.name
      case _ => MergeCommand.DefaultTargetAlias
    }
    // a target resolved by MergeSchemaEvolution knows whether evolution was asked for and which clauses were `*`
    val (evolve, stars) = t match {
      case mt: MergeTargetDeltalogTable => (mt.evolutionRequested, Some(mt.stars))
      case _ => (m.withSchemaEvolution, None)
    }
    checkUnresolvedKeys(m, t, alias, evolve, stars)
    val targetAttrs = AttributeSet(EliminateSubqueryAliases(m.targetTable).output)
    // target columns qualified by the alias (the command reads the target itself); source columns stay resolved
    def expr(e: Expression): Expression = e.transform {
      case a: AttributeReference if targetAttrs.contains(a) => UnresolvedAttribute(Seq(alias, a.name))
    }
    def col(e: Expression): Column = SparkInternals.column(expr(e))
    def assignments(as: Seq[Assignment]): Seq[(Seq[String], Column)] =
      as.map(a => keyPath(a.key, Some(alias)) -> col(uncast(a.value)))
    def isStar(kind: String, i: Int): Option[Boolean] = stars.map { s =>
      if (kind == MergeClause.Matched) s.matched(i) else kind == MergeClause.NotMatched && s.notMatched(i)
    }
    def clause(kind: String, a: MergeAction, i: Int): MergeClause = a match {
      case DeleteAction(c) => MergeClause(kind, "delete", c.map(col))
      case UpdateStarAction(c) => MergeClause(kind, "update", c.map(col), star = true)
      case InsertStarAction(c) => MergeClause(kind, "insert", c.map(col), star = true)
      // Spark expanded the `*` (the target declares automatic schema evolution): the command expands it itself
      case UpdateAction(c, _, _) if isStar(kind, i).contains(true) => MergeClause(kind, "update", c.map(col), star = true)
      case InsertAction(c, _) if isStar(kind, i).contains(true) => MergeClause(kind, "insert", c.map(col), star = true)
      case UpdateAction(c, as, _) if isStar(kind, i).isDefined => MergeClause(kind, "update", c.map(col), assignments(as))
      case InsertAction(c, as) if isStar(kind, i).isDefined => MergeClause(kind, "insert", c.map(col), assignments(as))
      case UpdateAction(c, _, true) if m.withSchemaEvolution => MergeClause(kind, "update", c.map(col), star = true)
      case UpdateAction(c, as, _) => MergeClause(kind, "update", c.map(col), assignments(as))
      case InsertAction(c, as) if m.withSchemaEvolution && as.forall(a => sameName(a)) && as.nonEmpty &&
          starLike(m, as) => MergeClause(kind, "insert", c.map(col), star = true)
      case InsertAction(c, as) => MergeClause(kind, "insert", c.map(col), assignments(as))
      case other => throw new InvalidWriteException("DELTA_MERGE_INVALID_CLAUSE", t.name(),
        s"Table ${t.name()}: unsupported MERGE action $other")
    }
    val clauses = m.matchedActions.zipWithIndex.map { case (a, i) => clause(MergeClause.Matched, a, i) } ++
      m.notMatchedActions.zipWithIndex.map { case (a, i) => clause(MergeClause.NotMatched, a, i) } ++
      m.notMatchedBySourceActions.zipWithIndex.map { case (a, i) => clause(MergeClause.NotMatchedBySource, a, i) }
    // held as Columns: the command's expressions stay out of the plan Spark checks (target names are unresolved)
    DeltalogMergeCommand(t, alias, m.sourceTable, col(m.mergeCondition), clauses, evolve)
  }

  /**
   * Every part of a MERGE but the keys of explicit assignments is resolved: the keys Spark left
   * unresolved name columns (or nested fields) the target lacks, which schema evolution may add.
   */
  def readyForEvolution(m: MergeIntoTable): Boolean = m.mergeCondition.resolved &&
    (m.matchedActions ++ m.notMatchedActions ++ m.notMatchedBySourceActions).forall {
      case a: UpdateAction => a.condition.forall(_.resolved) && a.assignments.forall(x => uncast(x.value).resolved)
      case a: InsertAction => a.condition.forall(_.resolved) && a.assignments.forall(x => uncast(x.value).resolved)
      case a => a.condition.forall(_.resolved)
    }

  /**
   * An assignment's value without the cast to the target's struct type Spark puts around it when
   * the source struct is wider (`SET st = s.st`): that cast cannot resolve, and under schema
   * evolution the command widens the struct instead (it aligns values to the columns itself).
   */
  private def uncast(e: Expression): Expression = e match {
    case c: Cast if !c.resolved && c.child.resolved && c.dataType.isInstanceOf[StructType] => c.child
    case other => other
  }

  /**
   * Explicit assignments to a column the target lacks (keys Spark left unresolved): without schema
   * evolution, or qualified by the target's alias (`t.newcol`), refused as delta-spark 4.4 refuses
   * them (`DELTA_MERGE_UNRESOLVED_EXPRESSION`); `*` clauses are expanded by the command.
   */
  private def checkUnresolvedKeys(m: MergeIntoTable, t: DeltalogTable, alias: String, evolve: Boolean,
      stars: Option[MergeStars]): Unit = {
    def explicit(kind: String, a: MergeAction, i: Int): Seq[Assignment] = (a, stars) match {
      case (_: UpdateAction, Some(s)) if kind == MergeClause.Matched && s.matched(i) => Nil
      case (_: InsertAction, Some(s)) if kind == MergeClause.NotMatched && s.notMatched(i) => Nil
      case (_: UpdateAction, None) if a.asInstanceOf[UpdateAction].fromStar => Nil
      case (u: UpdateAction, _) => u.assignments
      case (ins: InsertAction, _) => ins.assignments
      case _ => Nil
    }
    val kinds = Seq(MergeClause.Matched -> m.matchedActions, MergeClause.NotMatched -> m.notMatchedActions,
      MergeClause.NotMatchedBySource -> m.notMatchedBySourceActions)
    val targetSchema = EliminateSubqueryAliases(m.targetTable).schema
    for ((kind, actions) <- kinds; (a, i) <- actions.zipWithIndex; as <- explicit(kind, a, i) if !as.key.resolved) {
      val name = as.key match {
        case UnresolvedAttribute(parts) => parts
        case other => Seq(other.sql)
      }
      val qualified = name.size > 1 && name.head.equalsIgnoreCase(alias)
      val path = if (qualified) name.tail else name
      val clause = MergeClause(kind, if (a.isInstanceOf[InsertAction]) "insert" else "update", None)
      val where = s"in the ${clause.title} ${clause.action.toUpperCase(java.util.Locale.ROOT)} clause"
      // a new field of a struct the target has: Spark's FIELD_NOT_FOUND, as delta-spark raises it
      if (!evolve && path.size > 1 && field(targetSchema, path.take(1)).isDefined) {
        val parent = (1 until path.size).map(path.take).takeWhile(p => field(targetSchema, p).isDefined).last
        val fields = field(targetSchema, parent).map(_.dataType) match {
          case Some(st: StructType) => st.fieldNames.map(n => s"`$n`").mkString(", ")
          case _ => ""
        }
        throw new InvalidWriteException("FIELD_NOT_FOUND", t.name(),
          s"Table ${t.name()}: no such struct field `${path(parent.size)}` in $fields (${path.mkString(".")} $where); " +
            "merge WITH SCHEMA EVOLUTION (or set spark.databricks.delta.schema.autoMerge.enabled=true) to add it from the source.")
      }
      val problem = if (!evolve) Some("the target has no such column: add it (ALTER TABLE ... ADD COLUMNS), or merge " +
          "WITH SCHEMA EVOLUTION (or set spark.databricks.delta.schema.autoMerge.enabled=true) to add it from the source")
        else if (qualified) Some(s"schema evolution adds a column named without the target's alias: write ${path.mkString(".")}")
        else if (kind == MergeClause.NotMatchedBySource) Some("a NOT MATCHED BY SOURCE clause cannot add columns (it has no source row)")
        else if (field(m.sourceTable.schema, path).isEmpty) Some("schema evolution adds only columns (and nested fields) " +
          "the source has, under the same name")
        else None
      problem.foreach { fix =>
        val columns = targetSchema.fieldNames.mkString(", ")
        throw new InvalidWriteException("DELTA_MERGE_UNRESOLVED_EXPRESSION", t.name(),
          s"Table ${t.name()}: cannot resolve ${name.map(n => s"`$n`").mkString(".")} $where given the target " +
            s"columns $columns; $fix.")
      }
    }
  }

  /** The field at `path` of `schema` (names case-insensitive; through structs only). */
  private def field(schema: StructType, path: Seq[String]): Option[StructField] = {
    val f = schema.fields.find(_.name.equalsIgnoreCase(path.head))
    if (path.size == 1) f else f.map(_.dataType) match {
      case Some(st: StructType) => field(st, path.tail)
      case _ => None
    }
  }

  private def sameName(a: Assignment): Boolean = (a.key, a.value) match {
    case (k: Attribute, v: Attribute) => k.name.equalsIgnoreCase(v.name)
    case (UnresolvedAttribute(k), v: Attribute) => k.last.equalsIgnoreCase(v.name)
    case _ => false
  }

  /** An INSERT whose assignments are every source column by name (Spark's expansion of `INSERT *` under evolution). */
  private def starLike(m: MergeIntoTable, as: Seq[Assignment]): Boolean =
    as.size == m.sourceTable.output.size && as.map(_.value).collect { case v: Attribute => v }.size == as.size &&
      AttributeSet(as.map(_.value.asInstanceOf[Attribute])) == m.sourceTable.outputSet

  /** The deltalog table a plan (possibly under aliases) is. */
  def deltalogTable(p: LogicalPlan): Option[DeltalogTable] = EliminateSubqueryAliases(p) match {
    case DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) => Some(t)
    case _ => None
  }
}
