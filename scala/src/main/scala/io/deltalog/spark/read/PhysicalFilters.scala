package io.deltalog.spark.read

import org.apache.spark.sql.sources._

/**
 * Data-source filters (pushed into the Parquet reader for row-group pruning) rewritten from
 * logical to physical top-level column names. A filter on a column that has no entry in the
 * mapping (nested or unknown) is dropped: pushed filters only prune, Spark re-applies every
 * filter to the rows it reads.
 */
object PhysicalFilters {

  def rename(filters: Seq[Filter], names: Map[String, String]): Seq[Filter] = filters.flatMap(rename(_, names))

  def rename(f: Filter, names: Map[String, String]): Option[Filter] = {
    def n(a: String): Option[String] = names.get(a)
    f match {
      case EqualTo(a, v) => n(a).map(EqualTo(_, v))
      case EqualNullSafe(a, v) => n(a).map(EqualNullSafe(_, v))
      case GreaterThan(a, v) => n(a).map(GreaterThan(_, v))
      case GreaterThanOrEqual(a, v) => n(a).map(GreaterThanOrEqual(_, v))
      case LessThan(a, v) => n(a).map(LessThan(_, v))
      case LessThanOrEqual(a, v) => n(a).map(LessThanOrEqual(_, v))
      case In(a, vs) => n(a).map(In(_, vs))
      case IsNull(a) => n(a).map(IsNull(_))
      case IsNotNull(a) => n(a).map(IsNotNull(_))
      case StringStartsWith(a, v) => n(a).map(StringStartsWith(_, v))
      case StringEndsWith(a, v) => n(a).map(StringEndsWith(_, v))
      case StringContains(a, v) => n(a).map(StringContains(_, v))
      case And(l, r) => (rename(l, names), rename(r, names)) match {
        case (Some(x), Some(y)) => Some(And(x, y))
        case (x, None) => x
        case (None, y) => y
      }
      case Or(l, r) => for (x <- rename(l, names); y <- rename(r, names)) yield Or(x, y)
      case Not(c) => rename(c, names) match {
        // NOT over a partially renamed AND would widen into a stronger filter: only keep exact renames
        case Some(x) if x == exactRename(c, names) => Some(Not(x))
        case _ => None
      }
      case AlwaysTrue() | AlwaysFalse() => Some(f)
      case _ => None
    }
  }

  private def exactRename(f: Filter, names: Map[String, String]): Filter = {
    val refs = f.references
    if (refs.forall(names.contains)) rename(f, names).orNull else null
  }
}
