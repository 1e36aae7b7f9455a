package io.deltalog.spark.read

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.deltalog.spark.schema.{ColumnMapping, ColumnMappingMode}

/**
 * Data skipping on per-file min/max/nullCount statistics (digest §7.5).
 *
 * A data filter is compiled once into a [[DataSkipping.Check]] tree; `keep(stats)` is false only
 * when the stats prove that no row of the file can satisfy the filter. Supported: `=`, `<=>` with
 * a non-null literal, `<`, `<=`, `>`, `>=` (either operand order), `IN` / `InSet`, `IS NULL`,
 * `IS NOT NULL`, `StartsWith`, `AND`, `OR`, `NOT` (pushed down to the leaves) on top-level or
 * struct-nested columns of the data schema. Anything else, a missing or unparsable statistic, or a
 * literal whose type differs from the column's, keeps the file.
 *
 * Bounds are valid as wide bounds, so `tightBounds: false` files (DVs added without recomputing
 * stats) are handled: min ≤ every live value ≤ max still holds, and null counts are only used
 * when they are 0 or equal `numRecords`.
 */
object DataSkipping {

  /** A compiled skipping check. */
  sealed trait Check {
    /** False only when `stats` prove no row matches. */
    def keep(stats: FileStats): Boolean
  }

  private final case class AndCheck(l: Check, r: Check) extends Check {
    def keep(s: FileStats): Boolean = l.keep(s) && r.keep(s)
  }
  private final case class OrCheck(l: Check, r: Check) extends Check {
    def keep(s: FileStats): Boolean = l.keep(s) || r.keep(s)
  }

  /** A resolved leaf column: physical path in the stats and its type. */
  private final case class Col(path: Seq[String], dataType: DataType) {
    lazy val ordering: Ordering[Any] = TypeUtils.getInterpretedOrdering(dataType)
  }

  private sealed trait Op
  private case object Lt extends Op
  private case object Le extends Op
  private case object Gt extends Op
  private case object Ge extends Op
  private case object Eq extends Op

  private final case class Compare(c: Col, op: Op, v: Any) extends Check {
    def keep(s: FileStats): Boolean = {
      if (s.allNull(c.path)) return false
      val ord = c.ordering
      op match {
        case Lt => s.min(c.path, c.dataType).forall(m => ord.lt(m, v))
        case Le => s.min(c.path, c.dataType).forall(m => ord.lteq(m, v))
        case Gt => s.max(c.path, c.dataType).forall(m => ord.gt(m, v))
        case Ge => s.max(c.path, c.dataType).forall(m => ord.gteq(m, v))
        case Eq =>
          s.min(c.path, c.dataType).forall(m => ord.lteq(m, v)) &&
            s.max(c.path, c.dataType).forall(m => ord.gteq(m, v))
      }
    }
  }

  /** `NOT (c = v)`: skip only when every non-null value equals v (min = max = v). */
  private final case class NotEq(c: Col, v: Any) extends Check {
    def keep(s: FileStats): Boolean = {
      if (s.allNull(c.path)) return false
      val ord = c.ordering
      !(s.min(c.path, c.dataType).exists(m => ord.equiv(m, v)) && s.max(c.path, c.dataType).exists(m => ord.equiv(m, v)))
    }
  }

  private final case class InValues(c: Col, values: Seq[Any]) extends Check {
    def keep(s: FileStats): Boolean = {
      if (values.isEmpty || s.allNull(c.path)) return false
      (s.min(c.path, c.dataType), s.max(c.path, c.dataType)) match {
        case (Some(lo), Some(hi)) => values.exists(v => c.ordering.lteq(lo, v) && c.ordering.gteq(hi, v))
        case (Some(lo), None) => values.exists(v => c.ordering.lteq(lo, v))
        case (None, Some(hi)) => values.exists(v => c.ordering.gteq(hi, v))
        case _ => true
      }
    }
  }

  private final case class IsNullCheck(c: Col) extends Check {
    def keep(s: FileStats): Boolean = !s.noNulls(c.path)
  }
  private final case class IsNotNullCheck(c: Col) extends Check {
    def keep(s: FileStats): Boolean = !s.allNull(c.path)
  }

  /** `c LIKE 'prefix%'`: the file's values, cut to the prefix length, lie in [min, max] cut likewise. */
  private final case class StartsWithCheck(c: Col, prefix: UTF8String) extends Check {
    private val n = prefix.numChars()
    def keep(s: FileStats): Boolean = {
      if (s.allNull(c.path)) return false
      val minOk = s.min(c.path, c.dataType).forall(m => m.asInstanceOf[UTF8String].substring(0, n).compareTo(prefix) <= 0)
      val maxOk = s.max(c.path, c.dataType).forall(m => m.asInstanceOf[UTF8String].substring(0, n).compareTo(prefix) >= 0)
      minOk && maxOk
    }
  }

  /**
   * Compiles the conjunction of `filters` over `tableSchema` (logical names; stats are looked up
   * by physical name under `mode`). None when no part of the filters can be used.
   */
  def compile(filters: Seq[Expression], tableSchema: StructType, mode: ColumnMappingMode): Option[Check] =
    new Compiler(tableSchema, mode).conjunction(filters)

  private final class Compiler(schema: StructType, mode: ColumnMappingMode) {

    def conjunction(filters: Seq[Expression]): Option[Check] =
      filters.flatMap(f => compile(f, negated = false)).reduceOption[Check](AndCheck)

    private def and(a: Option[Check], b: Option[Check]): Option[Check] = (a, b) match {
      case (Some(x), Some(y)) => Some(AndCheck(x, y))
      case (x, None) => x
      case (None, y) => y
    }
    private def or(a: Option[Check], b: Option[Check]): Option[Check] =
      for (x <- a; y <- b) yield OrCheck(x, y)

    private def compile(e: Expression, negated: Boolean): Option[Check] = e match {
      case And(l, r) =>
        if (negated) or(compile(l, true), compile(r, true)) else and(compile(l, false), compile(r, false))
      case Or(l, r) =>
        if (negated) and(compile(l, true), compile(r, true)) else or(compile(l, false), compile(r, false))
      case Not(c) => compile(c, !negated)
      case IsNull(ColumnRef(c)) => Some(if (negated) IsNotNullCheck(c) else IsNullCheck(c))
      case IsNotNull(ColumnRef(c)) => Some(if (negated) IsNullCheck(c) else IsNotNullCheck(c))
      case EqualTo(ColumnRef(c), Lit(c2, v)) if same(c, c2) => if (negated) notEq(c, v) else Some(Compare(c, Eq, v))
      case EqualTo(Lit(c2, v), ColumnRef(c)) if same(c, c2) => if (negated) notEq(c, v) else Some(Compare(c, Eq, v))
      case EqualNullSafe(ColumnRef(c), Lit(c2, v)) if same(c, c2) && !negated => Some(Compare(c, Eq, v))
      case EqualNullSafe(Lit(c2, v), ColumnRef(c)) if same(c, c2) && !negated => Some(Compare(c, Eq, v))
      case LessThan(ColumnRef(c), Lit(c2, v)) if same(c, c2) => Some(Compare(c, if (negated) Ge else Lt, v))
      case LessThan(Lit(c2, v), ColumnRef(c)) if same(c, c2) => Some(Compare(c, if (negated) Le else Gt, v))
      case LessThanOrEqual(ColumnRef(c), Lit(c2, v)) if same(c, c2) => Some(Compare(c, if (negated) Gt else Le, v))
      case LessThanOrEqual(Lit(c2, v), ColumnRef(c)) if same(c, c2) => Some(Compare(c, if (negated) Lt else Ge, v))
      case GreaterThan(ColumnRef(c), Lit(c2, v)) if same(c, c2) => Some(Compare(c, if (negated) Le else Gt, v))
      case GreaterThan(Lit(c2, v), ColumnRef(c)) if same(c, c2) => Some(Compare(c, if (negated) Ge else Lt, v))
      case GreaterThanOrEqual(ColumnRef(c), Lit(c2, v)) if same(c, c2) => Some(Compare(c, if (negated) Lt else Ge, v))
      case GreaterThanOrEqual(Lit(c2, v), ColumnRef(c)) if same(c, c2) => Some(Compare(c, if (negated) Gt else Le, v))
      case In(ColumnRef(c), list) if !negated && list.forall(_.isInstanceOf[Literal]) &&
          list.forall(l => l.dataType == c.dataType) =>
        Some(InValues(c, list.map(_.asInstanceOf[Literal].value).filter(_ != null)))
      case InSet(ColumnRef(c), set) if !negated =>
        Some(InValues(c, set.toSeq.filter(_ != null)))
      case StartsWith(ColumnRef(c), Literal(p: UTF8String, _: StringType)) if !negated && c.dataType.isInstanceOf[StringType] =>
        Some(StartsWithCheck(c, p))
      case _ => None
    }

    /** Strings are excluded: truncated string bounds never prove that all values are equal. */
    private def notEq(c: Col, v: Any): Option[Check] =
      if (c.dataType.isInstanceOf[StringType]) None else Some(NotEq(c, v))

    private def same(c: Col, t: DataType): Boolean = c.dataType == t

    private object Lit {
      def unapply(e: Expression): Option[(DataType, Any)] = e match {
        case Literal(v, t) if v != null => Some((t, v))
        case _ => None
      }
    }

    /** A (possibly struct-nested) column with min/max-capable or null-countable type. */
    private object ColumnRef {
      def unapply(e: Expression): Option[Col] = logicalPath(e).flatMap { case (path, dt) =>
        if (dt.isInstanceOf[StructType] || dt.isInstanceOf[ArrayType] || dt.isInstanceOf[MapType]) None
        // collated strings do not order like the binary (UTF-8) order of the stats
        else if (dt.isInstanceOf[StringType] && dt != StringType) None
        else ColumnMapping.physicalPath(schema, path, mode).map(Col(_, dt))
      }
    }

    private def logicalPath(e: Expression): Option[(Seq[String], DataType)] = e match {
      case a: AttributeReference => Some((Seq(a.name), a.dataType))
      case GetStructField(child, ordinal, _) =>
        logicalPath(child).flatMap {
          case (p, s: StructType) => Some((p :+ s(ordinal).name, s(ordinal).dataType))
          case _ => None
        }
      case _ => None
    }
  }
}
