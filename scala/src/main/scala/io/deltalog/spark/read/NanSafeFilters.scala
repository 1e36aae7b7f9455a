package io.deltalog.spark.read

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.{DataType, DoubleType, FloatType, StructType}

/**
 * Filters pushed into the Parquet reader of a file whose writer may have left NaN out of its
 * float/double min/max ([[io.deltalog.log.NanAwareWriters]]; the Parquet footers delta-rs writes
 * do, as the Parquet spec asks). parquet-java's row-group filter would then drop a row group
 * holding `[1.0, NaN]` for `x > 1.5` although Spark's order puts NaN above 1.5. Such files get the
 * pushed filters without any part that reads a float/double column: conjuncts on other columns
 * still prune, Spark re-applies every filter to the rows it reads.
 */
object NanSafeFilters {

  /** `filters` without the parts that reference a float/double column of `schema` (or a column it cannot resolve). */
  def withoutFloating(filters: Seq[Filter], schema: StructType): Seq[Filter] =
    filters.flatMap(withoutFloating(_, schema))

  def withoutFloating(f: Filter, schema: StructType): Option[Filter] = f match {
    case And(l, r) => (withoutFloating(l, schema), withoutFloating(r, schema)) match {
      case (Some(x), Some(y)) => Some(And(x, y))
      case (x, None) => x
      case (None, y) => y
    }
    case other => if (other.references.exists(a => !knownNonFloating(a, schema))) None else Some(other)
  }

  /** True when any filter references a float/double column of `schema` (or one it cannot resolve). */
  def referencesFloating(filters: Seq[Filter], schema: StructType): Boolean =
    filters.exists(_.references.exists(a => !knownNonFloating(a, schema)))

  private def knownNonFloating(name: String, schema: StructType): Boolean =
    resolve(name, schema).exists(t => t != FloatType && t != DoubleType)

  /** The type of a top-level or dotted nested column name; None when it does not resolve. */
  private def resolve(name: String, schema: StructType): Option[DataType] =
    schema.fields.find(_.name == name).map(_.dataType).orElse {
      val parts = name.split('.')
      if (parts.length < 2) None
      else parts.foldLeft(Option[DataType](schema)) {
        case (Some(s: StructType), p) => s.fields.find(_.name == p).map(_.dataType)
        case _ => None
      }
    }
}
