package io.deltalog.spark.read

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.deltalog.schema.{ColumnMapping, ColumnMappingMode}

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

    /** The columns whose stats this check reads. */
    private[read] def columns: Seq[Col]

    /** This check over the columnar stats `s` of a chunk (its [[columns]] parsed; valid rows only). */
    private[read] def bind(s: ChunkStats): RowCheck

    /**
     * A superset of the valid rows of `s` that this check keeps, found without looking at every
     * row (binary search on sorted bounds), or null when there is no such shortcut.
     */
    private[read] def candidates(s: ChunkStats): Candidates = null
  }

  /** Row indices: the ranges `[from, until)` of some arrays. */
  private[read] final class Candidates(ranges: Seq[(Array[Int], Int, Int)]) {
    val count: Int = ranges.map(r => r._3 - r._2).sum
    def foreach(f: Int => Unit): Unit = ranges.foreach { case (a, from, until) =>
      var k = from
      while (k < until) { f(a(k)); k += 1 }
    }
  }

  /** A check bound to the stats of one chunk: `keep(i)` is false only when row i's stats prove no row matches. */
  abstract class RowCheck {
    def keep(i: Int): Boolean

    /** Clears `mask(i)` for every `i < n` with `mask(i)` set and `!keep(i)` (narrows a candidate mask). */
    def narrow(mask: Array[Boolean], n: Int): Unit = {
      var i = 0
      while (i < n) {
        if (mask(i) && !keep(i)) mask(i) = false
        i += 1
      }
    }
  }

  /**
   * `check` over the rows of `chunk`, on the chunk's cached columnar stats ([[ChunkStats]]): the
   * same verdicts as `FileStats.parse(chunk.statsAt(i)).forall(check.keep)`.
   */
  def forChunk(check: Check, chunk: io.deltalog.log.FileChunk): RowCheck = {
    val kept = keptRows(check, chunk)
    new RowCheck { def keep(i: Int): Boolean = kept.get(i) }
  }

  /** The rows of `chunk` that `check` keeps (rows without usable stats included). */
  def keptRows(check: Check, chunk: io.deltalog.log.FileChunk): java.util.BitSet = {
    val s = ChunkStats.of(chunk)
    s.ensure(check.columns)
    val n = s.length
    val b = check.bind(s)
    val kept = new java.util.BitSet(n)
    val cand = check.candidates(s)
    if (cand != null && cand.count <= n / 8) {
      // selective range on sorted bounds: only the candidate rows are checked
      cand.foreach(r => if (b.keep(r)) kept.set(r))
    } else {
      val mask = new Array[Boolean](n)
      val valid = s.valid
      var i = valid.nextSetBit(0)
      while (i >= 0 && i < n) { mask(i) = true; i = valid.nextSetBit(i + 1) }
      b.narrow(mask, n) // every check evaluated column-wise over the valid rows
      i = 0
      while (i < n) { if (mask(i)) kept.set(i); i += 1 }
    }
    kept.or(s.invalid)
    kept
  }

  private final case class AndCheck(l: Check, r: Check) extends Check {
    def keep(s: FileStats): Boolean = l.keep(s) && r.keep(s)
    private[read] lazy val columns: Seq[Col] = l.columns ++ r.columns
    private[read] def bind(s: ChunkStats): RowCheck = {
      val a = l.bind(s); val b = r.bind(s)
      new RowCheck {
        def keep(i: Int): Boolean = a.keep(i) && b.keep(i)
        override def narrow(mask: Array[Boolean], n: Int): Unit = { a.narrow(mask, n); b.narrow(mask, n) }
      }
    }
    override private[read] def candidates(s: ChunkStats): Candidates = {
      val a = l.candidates(s)
      val b = r.candidates(s)
      if (a == null) b else if (b == null) a else if (a.count <= b.count) a else b
    }
  }
  private final case class OrCheck(l: Check, r: Check) extends Check {
    def keep(s: FileStats): Boolean = l.keep(s) || r.keep(s)
    private[read] lazy val columns: Seq[Col] = l.columns ++ r.columns
    private[read] def bind(s: ChunkStats): RowCheck = {
      val a = l.bind(s); val b = r.bind(s)
      new RowCheck { def keep(i: Int): Boolean = a.keep(i) || b.keep(i) }
    }
  }

  /** An integral Catalyst value as a long (None for other values). */
  private def asLong(v: Any): Option[Long] = v match {
    case b: java.lang.Byte => Some(b.longValue())
    case x: java.lang.Short => Some(x.longValue())
    case x: java.lang.Integer => Some(x.longValue())
    case x: java.lang.Long => Some(x.longValue())
    case _ => None
  }

  /** A resolved leaf column: physical path in the stats and its type. */
  private[read] final case class Col(path: Seq[String], dataType: DataType) {
    lazy val ordering: Ordering[Any] = TypeUtils.getInterpretedOrdering(dataType)
    // computed once: a Col is the key of the per-chunk stats cache, looked up by every listing
    override val hashCode: Int = scala.util.hashing.MurmurHash3.productHash(this)
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
    private[read] def columns: Seq[Col] = Seq(c)
    override private[read] def candidates(s: ChunkStats): Candidates = {
      val col = s.column(c, Nil)
      if (!col.longLike) return null
      val x = asLong(v).getOrElse(return null)
      def below(strict: Boolean) = { // rows whose lower bound admits x, and rows without one
        val sb = col.sortedByMin(s.valid)
        new Candidates(Seq((sb.rows, 0, sb.lowerBound(x, strict)), (sb.missing, 0, sb.missing.length)))
      }
      def above(strict: Boolean) = {
        val sb = col.sortedByMax(s.valid)
        new Candidates(Seq((sb.rows, sb.lowerBound(x, strict), sb.rows.length), (sb.missing, 0, sb.missing.length)))
      }
      op match {
        case Lt => below(strict = false)
        case Le => below(strict = true)
        case Gt => above(strict = true)
        case Ge => above(strict = false)
        case Eq =>
          val a = below(strict = true)
          val b = above(strict = false)
          if (a.count <= b.count) a else b
      }
    }
    private[read] def bind(s: ChunkStats): RowCheck = {
      val col = s.column(c, Nil)
      val hasMin = col.hasMin
      val hasMax = col.hasMax
      val lv = if (col.longLike) asLong(v) else None
      if (lv.isDefined) {
        // long-like column and literal: compare the raw longs (they order like the values)
        val x = lv.get
        val mn = col.minL
        val mx = col.maxL
        val hasNc = col.hasNullCount
        val nc = col.nullCount
        val hasNr = s.hasNumRecords
        val nr = s.numRecords
        if (op != Eq) return new RowCheck {
          // keep(i) unrolled per operator: not all-null, and the bound (when present) admits x
          def keep(i: Int): Boolean = !allNullAt(i) && boundOk(i)
          private def boundOk(i: Int): Boolean = op match {
            case Lt => !hasMin(i) || mn(i) < x
            case Le => !hasMin(i) || mn(i) <= x
            case Gt => !hasMax(i) || mx(i) > x
            case _ => !hasMax(i) || mx(i) >= x
          }
          private def allNullAt(i: Int): Boolean = hasNr(i) && hasNc(i) && nc(i) == nr(i)
          override def narrow(mask: Array[Boolean], n: Int): Unit = {
            var i = 0
            op match {
              case Lt => while (i < n) { if (mask(i) && ((hasMin(i) && mn(i) >= x) || allNullAt(i))) mask(i) = false; i += 1 }
              case Le => while (i < n) { if (mask(i) && ((hasMin(i) && mn(i) > x) || allNullAt(i))) mask(i) = false; i += 1 }
              case Gt => while (i < n) { if (mask(i) && ((hasMax(i) && mx(i) <= x) || allNullAt(i))) mask(i) = false; i += 1 }
              case _ => while (i < n) { if (mask(i) && ((hasMax(i) && mx(i) < x) || allNullAt(i))) mask(i) = false; i += 1 }
            }
          }
        }
        new RowCheck { // Eq
          def keep(i: Int): Boolean = !s.allNull(col, i) && (!hasMin(i) || mn(i) <= x) && (!hasMax(i) || mx(i) >= x)
        }
      } else {
        val ord = c.ordering
        new RowCheck {
          def keep(i: Int): Boolean = {
            if (s.allNull(col, i)) return false
            op match {
              case Lt => !hasMin(i) || ord.lt(col.min(i), v)
              case Le => !hasMin(i) || ord.lteq(col.min(i), v)
              case Gt => !hasMax(i) || ord.gt(col.max(i), v)
              case Ge => !hasMax(i) || ord.gteq(col.max(i), v)
              case Eq => (!hasMin(i) || ord.lteq(col.min(i), v)) && (!hasMax(i) || ord.gteq(col.max(i), v))
            }
          }
        }
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
    private[read] def columns: Seq[Col] = Seq(c)
    private[read] def bind(s: ChunkStats): RowCheck = {
      val col = s.column(c, Nil)
      val ord = c.ordering
      new RowCheck {
        def keep(i: Int): Boolean = {
          if (s.allNull(col, i)) return false
          !(col.hasMin(i) && ord.equiv(col.min(i), v) && col.hasMax(i) && ord.equiv(col.max(i), v))
        }
      }
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
    private[read] def columns: Seq[Col] = Seq(c)
    private[read] def bind(s: ChunkStats): RowCheck = {
      val col = s.column(c, Nil)
      val ord = c.ordering
      new RowCheck {
        def keep(i: Int): Boolean = {
          if (values.isEmpty || s.allNull(col, i)) return false
          val hasLo = col.hasMin(i)
          val hasHi = col.hasMax(i)
          if (!hasLo && !hasHi) return true
          val lo = if (hasLo) col.min(i) else null
          val hi = if (hasHi) col.max(i) else null
          values.exists(v => (!hasLo || ord.lteq(lo, v)) && (!hasHi || ord.gteq(hi, v)))
        }
      }
    }
  }

  private final case class IsNullCheck(c: Col) extends Check {
    def keep(s: FileStats): Boolean = !s.noNulls(c.path)
    private[read] def columns: Seq[Col] = Seq(c)
    private[read] def bind(s: ChunkStats): RowCheck = {
      val col = s.column(c, Nil)
      new RowCheck { def keep(i: Int): Boolean = !s.noNulls(col, i) }
    }
  }
  private final case class IsNotNullCheck(c: Col) extends Check {
    def keep(s: FileStats): Boolean = !s.allNull(c.path)
    private[read] def columns: Seq[Col] = Seq(c)
    private[read] def bind(s: ChunkStats): RowCheck = {
      val col = s.column(c, Nil)
      new RowCheck { def keep(i: Int): Boolean = !s.allNull(col, i) }
    }
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
    private[read] def columns: Seq[Col] = Seq(c)
    private[read] def bind(s: ChunkStats): RowCheck = {
      val col = s.column(c, Nil)
      new RowCheck {
        def keep(i: Int): Boolean = {
          if (s.allNull(col, i)) return false
          val minOk = !col.hasMin(i) || col.min(i).asInstanceOf[UTF8String].substring(0, n).compareTo(prefix) <= 0
          val maxOk = !col.hasMax(i) || col.max(i).asInstanceOf[UTF8String].substring(0, n).compareTo(prefix) >= 0
          minOk && maxOk
        }
      }
    }
  }

  /**
   * Compiles the conjunction of `filters` over `tableSchema` (logical names; stats are looked up
   * by physical name under `mode`). None when no part of the filters can be used.
   */
  def compile(filters: Seq[Expression], tableSchema: StructType, mode: ColumnMappingMode): Option[Check] =
    new Compiler(tableSchema, mode, nanSafe = false).conjunction(filters)

  /**
   * [[compile]] without the float/double upper bounds a NaN row would need ([[io.deltalog.log.NanAwareWriters]]):
   * `>`, `>=`, `= NaN`, `IN (.., NaN)` and `<>` on a float or double column keep every file, the
   * other checks are unchanged (a NaN-blind max is still right for every non-NaN value, and NaN
   * rows never satisfy `<`, `<=` or `=` with a number). For files whose writer may have left NaN
   * out of `maxValues`.
   */
  def compileNanSafe(filters: Seq[Expression], tableSchema: StructType, mode: ColumnMappingMode): Option[Check] =
    new Compiler(tableSchema, mode, nanSafe = true).conjunction(filters)

  private def isFloating(c: Col): Boolean = c.dataType == FloatType || c.dataType == DoubleType

  private def isNaN(v: Any): Boolean = v match {
    case d: Double => d.isNaN
    case f: Float => f.isNaN
    case _ => false
  }

  private final class Compiler(schema: StructType, mode: ColumnMappingMode, nanSafe: Boolean) {

    /** `check`, unless it needs an upper bound that a NaN row could lie above (nanSafe mode). */
    private def unlessNanBlind(c: Col, check: Check): Option[Check] =
      if (!nanSafe || !isFloating(c)) Some(check)
      else check match {
        case Compare(_, Gt | Ge, _) => None
        case Compare(_, Eq, v) if isNaN(v) => None
        case _: NotEq => None
        case InValues(_, vs) if vs.exists(isNaN) => None
        case other => Some(other)
      }

    def conjunction(filters: Seq[Expression]): Option[Check] =
      filters.flatMap(f => compile(f, negated = false)).reduceOption[Check](AndCheck)

    private def and(a: Option[Check], b: Option[Check]): Option[Check] = (a, b) match {
      case (Some(x), Some(y)) => Some(AndCheck(x, y))
      case (x, None) => x
      case (None, y) => y
    }
    private def or(a: Option[Check], b: Option[Check]): Option[Check] =
      for (x <- a; y <- b) yield OrCheck(x, y)

    private def compile(e: Expression, negated: Boolean): Option[Check] = leaf(e, negated) match {
      case Some(c @ Compare(col, _, _)) => unlessNanBlind(col, c)
      case Some(c @ NotEq(col, _)) => unlessNanBlind(col, c)
      case Some(c @ InValues(col, _)) => unlessNanBlind(col, c)
      case other => other
    }

    private def leaf(e: Expression, negated: Boolean): Option[Check] = e match {
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
