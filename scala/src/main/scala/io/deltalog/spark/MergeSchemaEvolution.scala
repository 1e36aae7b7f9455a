package io.deltalog.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation
import org.apache.spark.sql.catalyst.plans.logical.{InsertStarAction, LogicalPlan, MergeIntoTable, SubqueryAlias,
  UpdateStarAction}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.{SupportsSchemaEvolution, TableCapability, TableChange}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

import io.deltalog.commands.MergeCommand

/**
 * Schema evolution of a SQL `MERGE` into a deltalog table through explicit assignments
 * (`UPDATE SET newcol = s.newcol`, `st.newfield = s.st.newfield`, `INSERT (k, newcol) VALUES (...)`),
 * as delta-spark does it, in the MERGE's own commit.
 *
 * Spark's `ResolveReferences` fails an assignment to a column the target lacks unless the MERGE has
 * schema evolution *enabled*: `WITH SCHEMA EVOLUTION` on a target whose table declares
 * `AUTOMATIC_SCHEMA_EVOLUTION`; it then leaves such assignment keys unresolved for its
 * `ResolveSchemaEvolution`, which would apply them through the catalog (`alterTable`: a separate
 * commit). This rule, run among the hint rules (before Spark resolves anything), resolves the target
 * of every MERGE into a deltalog table itself to a [[MergeTargetDeltalogTable]]: a table with that
 * capability that supports no catalog column change (so Spark never alters it) and that remembers
 * whether evolution was asked for (`WITH SCHEMA EVOLUTION` or
 * `spark.databricks.delta.schema.autoMerge.enabled`, read here as delta-spark does) and which clauses
 * were `*`. The statement is marked `withSchemaEvolution` so that Spark leaves unknown keys
 * unresolved; [[DeltalogDml.merge]] then refuses them (delta-spark's `DELTA_MERGE_UNRESOLVED_EXPRESSION`)
 * when evolution was not asked for, and otherwise hands them to [[MergeCommand]], which adds the
 * assigned source columns to the schema in the MERGE's commit.
 */
class MergeSchemaEvolution(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsDown {
    case m: MergeIntoTable if !m.targetTable.resolved =>
      val requested = m.withSchemaEvolution ||
        session.conf.getOption(MergeCommand.AutoMergeKey).exists(_.trim.equalsIgnoreCase("true"))
      val stars = MergeStars(m.matchedActions.zipWithIndex.collect { case (_: UpdateStarAction, i) => i }.toSet,
        m.notMatchedActions.zipWithIndex.collect { case (_: InsertStarAction, i) => i }.toSet)
      target(m.targetTable, requested, stars) match {
        case Some(t) => m.copy(targetTable = t, withSchemaEvolution = true)
        case None => m
      }
  }

  /** The target (under its alias) resolved to a [[MergeTargetDeltalogTable]] when it names a deltalog table. */
  private def target(p: LogicalPlan, requested: Boolean, stars: MergeStars): Option[LogicalPlan] = p match {
    case s @ SubqueryAlias(_, child) => target(child, requested, stars).map(c => s.copy(child = c))
    case u: UnresolvedRelation => DeltalogTargets.lookup(session, u).map { case (r, t) =>
      val rel = DataSourceV2Relation.create(new MergeTargetDeltalogTable(t, requested, stars), r.catalog,
        r.identifier, r.options)
      // qualified as Spark's ResolveRelations qualifies a V2 table (catalog, namespace, name)
      val qualifier = r.catalog.map(_.name()).toSeq ++ r.identifier.toSeq.flatMap(i => i.namespace().toSeq :+ i.name())
      SubqueryAlias(qualifier, rel)
    }
    case _ => None
  }
}

/** Which clauses of a MERGE were written `UPDATE SET *` / `INSERT *` (indexes among the matched / not-matched clauses). */
final case class MergeStars(matched: Set[Int], notMatched: Set[Int])

/**
 * A deltalog table as the target of a SQL MERGE (see [[MergeSchemaEvolution]]): Spark leaves
 * assignments to columns it lacks unresolved and never alters it through the catalog; the MERGE
 * command evolves the schema in its own commit when `evolutionRequested`.
 */
class MergeTargetDeltalogTable(val base: DeltalogTable, val evolutionRequested: Boolean, val stars: MergeStars)
  extends DeltalogTable(base.spark, base.path, base.catalogTable, base.name(), None, base.options)
  with SupportsSchemaEvolution {
  override lazy val snapshot: io.deltalog.log.Snapshot = base.snapshot

  override def capabilities(): java.util.Set[TableCapability] = {
    val c = java.util.EnumSet.copyOf(DeltalogTable.Capabilities)
    c.add(TableCapability.AUTOMATIC_SCHEMA_EVOLUTION)
    c
  }

  /** None: the MERGE adds its columns in its own commit, never through `alterTable`. */
  override def supportsColumnChange(change: TableChange.ColumnChange): Boolean = false
}
