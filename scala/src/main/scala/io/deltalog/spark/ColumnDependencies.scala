package io.deltalog.spark

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.types.StructType

import io.deltalog.commands.InvalidWriteException
import io.deltalog.spark.ColumnDefinitions.GenerationExpressionKey

/**
 * Expressions stored in the table that name columns: CHECK constraints
 * (`delta.constraints.<name>` properties) and generated columns (`delta.generationExpression`).
 * Renaming, dropping or retyping a column they reference would leave them meaning something else
 * or nothing, so such a change is refused, as delta-spark refuses it
 * (`DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE`, `DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE`).
 */
private[spark] final class ColumnDependencies(table: String, parser: ParserInterface,
    schema: StructType, configuration: Map[String, String]) {

  private val ConstraintPrefix = "delta.constraints."

  /** Refuses the change of `column` when a constraint or a generated column references it. */
  def check(column: ColumnPath): Unit = {
    val constraints = configuration.toSeq.sortBy(_._1)
      .filter { case (k, _) => k.toLowerCase(Locale.ROOT).startsWith(ConstraintPrefix) }
      .filter { case (_, expr) => references(expr, column.parts) }
    if (constraints.nonEmpty) {
      throw new InvalidWriteException("DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE", table,
        s"ALTER TABLE $table: column ${column.display} is used by CHECK constraint(s) " +
          constraints.map { case (k, v) => s"${k.substring(ConstraintPrefix.length)} ($v)" }.mkString(", ") +
          s"; nothing was changed. Drop the constraint(s) first (ALTER TABLE $table DROP CONSTRAINT <name>).")
    }
    val generated = schema.fields.toSeq
      .filter(f => f.metadata.contains(GenerationExpressionKey))
      .map(f => f.name -> f.metadata.getString(GenerationExpressionKey))
      .filter { case (_, expr) => references(expr, column.parts) }
    if (generated.nonEmpty) {
      throw new InvalidWriteException("DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE", table,
        s"ALTER TABLE $table: column ${column.display} is used by generated column(s) " +
          generated.map { case (n, e) => s"$n (GENERATED ALWAYS AS ($e))" }.mkString(", ") +
          "; nothing was changed. Drop the generated column(s) first.")
    }
  }

  /**
   * True when `expr` names `path`, a field inside it, or a struct that contains it. An expression
   * that cannot be parsed counts as referencing every column (the change is refused).
   */
  private def references(expr: String, path: Seq[String]): Boolean =
    try {
      parser.parseExpression(expr).collect { case a: UnresolvedAttribute => a.nameParts }
        .exists(ref => ColumnPath.isPrefix(path, ref) || ColumnPath.isPrefix(ref, path))
    } catch { case NonFatal(_) => true }
}
