package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation
import org.apache.spark.sql.catalyst.plans.logical.{AppendData, InsertIntoStatement, LogicalPlan, OverwriteByExpression,
  OverwritePartitionsDynamic, V2WriteCommand}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.{DataType, StructField, StructType}

import io.deltalog.commands.WriteOptions

/**
 * Schema evolution of an insert into a deltalog table named in SQL or a table API, as delta-spark
 * does it: with `spark.databricks.delta.schema.autoMerge.enabled=true`, the write option
 * `mergeSchema=true` (`writeTo(t).option(...)`, `saveAsTable` append) or `INSERT WITH SCHEMA EVOLUTION`,
 * columns (and nested struct fields) the rows have and the table lacks are added to the table in
 * the write's own commit (one metaData action with the merged schema next to the adds).
 *
 * Spark checks an insert's columns against the target's schema while it analyzes the statement,
 * so the write would fail there. This rule gives the statement a target whose schema already has
 * the new columns ([[EvolvingDeltalogTable]]): Spark then lines the rows up with it (by name or by
 * position, filling, casting) and the write merges that schema into the log. It runs twice:
 *  - among the hint rules, before Spark's resolution, for writes whose rows are already analyzed
 *    (`writeTo(...).append()`, `saveAsTable` append): the target is looked up in the catalog here;
 *  - among the resolution rules for `INSERT INTO` / `insertInto` (an `InsertIntoStatement`): Spark
 *    resolves its target only once its query is resolved and turns it into a write one round later.
 * Without one of the three switches nothing changes: Spark refuses the extra columns.
 */
class InsertSchemaEvolution(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsDown {
    case i: InsertIntoStatement if i.query.resolved && requested(Map.empty, i.withSchemaEvolution) =>
      i.table match {
        case r @ DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) if !t.isInstanceOf[EvolvingDeltalogTable] =>
          val static = i.partitionSpec.collect { case (k, Some(_)) => k.toLowerCase(Locale.ROOT) }.toSet
          val target = StructType(t.schema.fields.filterNot(f => static.contains(f.name.toLowerCase(Locale.ROOT))))
          val evolved = if (i.userSpecifiedCols.nonEmpty) {
            InsertSchemaEvolution.byColumnList(t.schema, i.userSpecifiedCols, i.query.schema)
          } else if (i.byName) InsertSchemaEvolution.byName(t.schema, i.query.schema)
          else InsertSchemaEvolution.byPosition(t.schema, target, i.query.schema)
          evolved.map(s => i.copy(table = InsertSchemaEvolution.relation(r, t, s))).getOrElse(i)
        case _ => i
      }
    // a DataFrame write whose rows were not analyzed yet when the hint rules ran: evolve now, or go back to the table
    case w: V2WriteCommand if w.query.resolved && pending(w.table).isDefined =>
      val (r, t) = pending(w.table).get
      evolve(w, r, t).getOrElse(w.withNewTable(DataSourceV2Relation.create(t, r.catalog, r.identifier, r.options)))
    case w: V2WriteCommand if isInsert(w) && requested(writeOptions(w), withEvolution(w)) =>
      target(w.table) match {
        case Some((r, t)) if w.query.resolved => evolve(w, r, t).getOrElse(if (w.table eq r) w else w.withNewTable(r))
        // Spark would check the rows against the table before this rule sees them resolved: it
        // accepts any rows until then (see AcceptingDeltalogTable)
        case Some((r, t)) => w.withNewTable(DataSourceV2Relation.create(new AcceptingDeltalogTable(t), r.catalog,
          r.identifier, r.options))
        case None => w
      }
  }

  private def evolve(w: V2WriteCommand, r: DataSourceV2Relation, t: DeltalogTable): Option[V2WriteCommand] = {
    val byName = w match {
      case a: AppendData => a.isByName
      case o: OverwriteByExpression => o.isByName
      case o: OverwritePartitionsDynamic => o.isByName
      case _ => true
    }
    val evolved = if (byName) InsertSchemaEvolution.byName(t.schema, w.query.schema)
      else InsertSchemaEvolution.byPosition(t.schema, t.schema, w.query.schema)
    evolved.map(s => w.withNewTable(InsertSchemaEvolution.relation(r, t, s)))
  }

  private def pending(table: LogicalPlan): Option[(DataSourceV2Relation, DeltalogTable)] = table match {
    case r @ DataSourceV2Relation(t: AcceptingDeltalogTable, _, _, _, _, _) => Some((r, t.base))
    case _ => None
  }

  private def isInsert(w: V2WriteCommand): Boolean = w match {
    case _: AppendData | _: OverwriteByExpression | _: OverwritePartitionsDynamic => true
    case _ => false
  }

  private def writeOptions(w: V2WriteCommand): Map[String, String] = w match {
    case a: AppendData => a.writeOptions
    case o: OverwriteByExpression => o.writeOptions
    case o: OverwritePartitionsDynamic => o.writeOptions
    case _ => Map.empty
  }

  private def withEvolution(w: V2WriteCommand): Boolean = w match {
    case a: AppendData => a.withSchemaEvolution
    case o: OverwriteByExpression => o.withSchemaEvolution
    case o: OverwritePartitionsDynamic => o.withSchemaEvolution
    case _ => false
  }

  /** Schema evolution is asked for: by the statement, a `mergeSchema` write option or the session's autoMerge. */
  private def requested(writeOptions: Map[String, String], statement: Boolean): Boolean =
    statement || new WriteOptions(writeOptions, k => session.conf.getOption(k)).mergeSchema

  /** The deltalog table a write goes to: already resolved, or looked up in the catalog (hint phase). */
  private def target(table: LogicalPlan): Option[(DataSourceV2Relation, DeltalogTable)] = table match {
    case r @ DataSourceV2Relation(t: DeltalogTable, _, _, _, _, _) if !t.isInstanceOf[EvolvingDeltalogTable] &&
        !t.isInstanceOf[AcceptingDeltalogTable] => Some((r, t))
    case u: UnresolvedRelation => DeltalogTargets.lookup(session, u)
    case _ => None
  }
}

object InsertSchemaEvolution {
  private def key(n: String): String = n.toLowerCase(Locale.ROOT)

  private def newField(f: StructField): StructField = f.copy(nullable = true)

  /**
   * `table` with the fields of `source` it lacks, matched by name (case-insensitively), nested
   * struct fields too; new fields go to the end of their struct. None when nothing is added.
   */
  def byName(table: StructType, source: StructType): Option[StructType] = {
    val merged = mergeByName(table, source)
    if (merged == table) None else Some(merged)
  }

  private def mergeByName(table: StructType, source: StructType): StructType = {
    val src = source.fields.map(f => key(f.name) -> f).toMap
    val existing = table.fields.map { f =>
      (f.dataType, src.get(key(f.name)).map(_.dataType)) match {
        case (t: StructType, Some(s: StructType)) => f.copy(dataType = mergeByName(t, s))
        case _ => f
      }
    }
    val names = table.fields.map(f => key(f.name)).toSet
    StructType(existing ++ source.fields.filterNot(f => names.contains(key(f.name))).map(newField))
  }

  /**
   * By position: the rows' columns after the `target` ones (the table's columns without static
   * partition columns) are new columns named as in the rows; nested struct fields past a table
   * struct's last field are added to it. None when nothing is added or a new name is taken.
   */
  def byPosition(table: StructType, target: StructType, source: StructType): Option[StructType] = {
    if (source.length < target.length) return None
    val nested = target.fields.zip(source.fields).map { case (t, s) => t.name -> mergeByPosition(t.dataType, s.dataType) }.toMap
    val updated = table.fields.map(f => nested.get(f.name).map(dt => f.copy(dataType = dt)).getOrElse(f))
    val extra = source.fields.drop(target.length).map(newField)
    val names = updated.map(f => key(f.name)) ++ extra.map(f => key(f.name))
    if (names.distinct.length != names.length) return None
    val merged = StructType(updated ++ extra)
    if (merged == table) None else Some(merged)
  }

  private def mergeByPosition(table: DataType, source: DataType): DataType = (table, source) match {
    case (t: StructType, s: StructType) if s.length >= t.length =>
      val fields = t.fields.zip(s.fields).map { case (tf, sf) => tf.copy(dataType = mergeByPosition(tf.dataType, sf.dataType)) }
      StructType(fields ++ s.fields.drop(t.length).map(newField))
    case _ => table
  }

  /** `INSERT INTO t (a, b, c) ...`: the listed columns the table lacks, typed as the rows' columns at their place. */
  def byColumnList(table: StructType, columns: Seq[String], source: StructType): Option[StructType] = {
    if (columns.length != source.length) return None
    val names = table.fields.map(f => key(f.name)).toSet
    val listed = columns.zip(source.fields).map { case (c, f) => f.copy(name = c) }
    byName(table, StructType(listed.filter(f => names.contains(key(f.name))) ++
      listed.filterNot(f => names.contains(key(f.name)))))
  }

  /** The write target `r` with `t` evolved to `schema` (its output follows the new schema). */
  def relation(r: DataSourceV2Relation, t: DeltalogTable, schema: StructType): DataSourceV2Relation = {
    val evolved = new EvolvingDeltalogTable(t, schema)
    DataSourceV2Relation.create(evolved, r.catalog, r.identifier, r.options)
  }
}

/**
 * A deltalog table as an insert with schema evolution sees it: its schema has the columns the
 * rows add; its write merges that schema into the log (`mergeSchema`) in the write's commit.
 */
class EvolvingDeltalogTable(base: DeltalogTable, evolved: StructType)
  extends DeltalogTable(base.spark, base.path, base.catalogTable, base.name(), None,
    base.options + (WriteOptions.MergeSchema -> "true")) {
  override lazy val snapshot: io.deltalog.log.Snapshot = base.snapshot
  override lazy val schema: StructType = evolved
}

/**
 * A deltalog table as the target of a DataFrame write with schema evolution while its rows are
 * not analyzed yet: it accepts any schema (`ACCEPT_ANY_SCHEMA`) so that Spark does not check the
 * rows before [[InsertSchemaEvolution]] sees them; that rule then replaces it by the table itself
 * or an [[EvolvingDeltalogTable]]. It is never written through.
 */
class AcceptingDeltalogTable(val base: DeltalogTable)
  extends DeltalogTable(base.spark, base.path, base.catalogTable, base.name(), None, base.options) {
  override lazy val snapshot: io.deltalog.log.Snapshot = base.snapshot
  override def capabilities(): java.util.Set[org.apache.spark.sql.connector.catalog.TableCapability] = {
    val c = java.util.EnumSet.copyOf(DeltalogTable.Capabilities)
    c.add(org.apache.spark.sql.connector.catalog.TableCapability.ACCEPT_ANY_SCHEMA)
    c
  }
  override def newWriteBuilder(info: org.apache.spark.sql.connector.write.LogicalWriteInfo)
      : org.apache.spark.sql.connector.write.WriteBuilder =
    throw new IllegalStateException(s"table ${name()}: the write was planned before its schema evolution was resolved")
}
