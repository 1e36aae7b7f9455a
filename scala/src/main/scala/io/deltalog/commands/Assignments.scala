package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedExtractValue}
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions.{lit, struct}
import org.apache.spark.sql.types.{DataType, StructField, StructType}

/**
 * The values of a row after an UPDATE assignment list (`SET a = …, s.x = …`) or a MERGE INSERT,
 * as one struct of the table's columns (logical names, table order; [[RowChanges.NewValuesColumn]]).
 *
 *  - Assigned columns (and nested fields) take their value cast to the column's type; an update
 *    keeps every other column's old value.
 *  - Generated columns not assigned are recomputed from the new values (an assigned one is checked
 *    against its expression when the row is written, [[WriteRules.checkAll]]).
 *  - Identity columns cannot be updated; an insert that does not assign one gets the next values.
 *
 * @param key the target column path of an assignment, as written (`Seq("s", "x")` for `s.x`)
 */
private[commands] final class Assignments(spark: ClassicSession, schema: StructType, table: String, statement: String) {
  private def lc(s: String) = s.toLowerCase(Locale.ROOT)

  /** `assignments` checked against the schema: each key names a column or nested field, at most once. */
  def validate(assignments: Seq[(Seq[String], Column)]): Unit = {
    val seen = scala.collection.mutable.Set[String]()
    assignments.foreach { case (key, _) =>
      val shown = key.mkString(".")
      if (!seen.add(lc(shown))) {
        throw new InvalidWriteException("DELTA_MULTIPLE_ASSIGNMENTS", table,
          s"Table $table: column $shown is assigned more than once in the $statement; assign it once.")
      }
      var dt: DataType = schema
      key.foreach { part =>
        dt match {
          case s: StructType => s.fields.find(f => lc(f.name) == lc(part)) match {
            case Some(f) => dt = f.dataType
            case None => throw new InvalidWriteException("DELTA_UNRESOLVED_COLUMN", table,
              s"Table $table: the $statement assigns $shown, which is not a column of the table " +
                s"(${schema.fieldNames.mkString(", ")}).")
          }
          case _ => throw new InvalidWriteException("DELTA_UNRESOLVED_COLUMN", table,
            s"Table $table: the $statement assigns $shown, but ${key.takeWhile(_ != part).mkString(".")} is not a struct.")
        }
      }
    }
    assignments.foreach { case (key, _) =>
      val f = schema.fields.find(f => lc(f.name) == lc(key.head)).get
      if (WriteRules.isIdentity(f)) {
        throw new InvalidWriteException("DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED", table,
          s"Table $table: IDENTITY column ${f.name} cannot be updated by the $statement; leave it out of the assignments.")
      }
    }
    // nested assignment under a column assigned as a whole
    val whole = assignments.filter(_._1.size == 1).map(a => lc(a._1.head)).toSet
    assignments.filter(a => a._1.size > 1 && whole.contains(lc(a._1.head))).foreach { case (key, _) =>
      throw new InvalidWriteException("DELTA_CONFLICTING_ASSIGNMENTS", table,
        s"Table $table: the $statement assigns both ${key.head} and ${key.mkString(".")}; assign one of them.")
    }
  }

  /** The struct of new values of an update: `old(name)` is a column's value before it. */
  def updated(assignments: Seq[(Seq[String], Column)], old: String => Column): Column = {
    validate(assignments)
    val values: Seq[(StructField, Column)] = schema.fields.toSeq.map { f =>
      val mine = assignments.filter(a => lc(a._1.head) == lc(f.name))
      val v = mine.find(_._1.size == 1) match {
        case Some((_, c)) => c.cast(f.dataType)
        case None if mine.nonEmpty => nested(old(f.name), f.dataType, mine.map { case (k, c) => (k.tail, c) })
        case None => old(f.name)
      }
      f -> v
    }
    withGenerated(values, assignments.map(a => lc(a._1.head)).toSet)
  }

  /**
   * The struct of an inserted row: assigned top-level columns, identity columns not assigned get
   * new values, other columns not assigned are null.
   */
  def inserted(assignments: Seq[(String, Column)], identityBase: StructField => Column): Column = {
    val byName = assignments.map { case (k, c) => lc(k) -> c }.toMap
    assignments.foreach { case (k, _) =>
      val f = schema.fields.find(f => lc(f.name) == lc(k)).getOrElse(throw new InvalidWriteException(
        "DELTA_UNRESOLVED_COLUMN", table, s"Table $table: the $statement inserts into $k, which is not a column of " +
          s"the table (${schema.fieldNames.mkString(", ")})."))
      if (WriteRules.isIdentity(f) && !(f.metadata.contains(WriteRules.IdentityAllowExplicit) &&
          f.metadata.getBoolean(WriteRules.IdentityAllowExplicit))) {
        throw new InvalidWriteException("DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", table,
          s"Table $table: the $statement provides values for identity column ${f.name}, which is GENERATED ALWAYS " +
            s"(${WriteRules.IdentityAllowExplicit} is false). Leave the column out and values are assigned.")
      }
    }
    val values = schema.fields.toSeq.map { f =>
      f -> byName.get(lc(f.name)).map(_.cast(f.dataType)).getOrElse(
        if (WriteRules.isIdentity(f)) identityBase(f) else lit(null).cast(f.dataType))
    }
    withGenerated(values, byName.keySet)
  }

  /** Identity columns of the table an insert without their assignment fills in. */
  def identityColumns(assigned: Set[String]): Seq[String] =
    schema.fields.filter(f => WriteRules.isIdentity(f) && !assigned.contains(lc(f.name))).map(_.name).toSeq

  /** `base` (of type `dt`) with nested fields replaced by `paths`' values. */
  private def nested(base: Column, dt: DataType, paths: Seq[(Seq[String], Column)]): Column = dt match {
    case s: StructType =>
      struct(s.fields.toSeq.map { f =>
        val mine = paths.filter(p => lc(p._1.head) == lc(f.name))
        val v = mine.find(_._1.size == 1) match {
          case Some((_, c)) => c.cast(f.dataType)
          case None if mine.nonEmpty => nested(base.getField(f.name), f.dataType, mine.map { case (k, c) => (k.tail, c) })
          case None => base.getField(f.name)
        }
        v.as(f.name)
      }: _*)
    case other => throw new IllegalStateException(s"nested assignment into non-struct type $other")
  }

  /** The struct of `values`, generated columns not in `assigned` computed from the other values. */
  private def withGenerated(values: Seq[(StructField, Column)], assigned: Set[String]): Column = {
    val byName = values.map { case (f, c) => lc(f.name) -> SparkInternals.expression(c) }.toMap
    struct(values.map { case (f, c) =>
      val v = WriteRules.generation(f).filter(_ => !assigned.contains(lc(f.name))) match {
        case Some(g) => SparkInternals.column(substitute(parse(g, f.name), byName)).cast(f.dataType)
        case None => c
      }
      v.as(f.name)
    }: _*)
  }

  private def parse(sql: String, column: String): Expression =
    try spark.sessionState.sqlParser.parseExpression(sql)
    catch {
      case NonFatal(e) => throw new InvalidWriteException("DELTA_INVALID_GENERATED_COLUMN", table,
        s"Table $table: the generation expression of column $column ('$sql') cannot be parsed: ${e.getMessage}")
    }

  /** `e` with references to table columns replaced by those columns' new values. */
  private def substitute(e: Expression, values: Map[String, Expression]): Expression = e.transformUp {
    case UnresolvedAttribute(parts) if values.contains(lc(parts.head)) =>
      parts.tail.foldLeft(values(lc(parts.head))) { (acc, field) =>
        UnresolvedExtractValue(acc, Literal(field))
      }
  }
}
