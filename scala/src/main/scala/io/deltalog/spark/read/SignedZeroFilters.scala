package io.deltalog.spark.read

import org.apache.spark.sql.sources._

/**
 * Filters pushed into the Parquet reader, rewritten so that parquet-java's row-group and dictionary
 * filters, which order doubles and floats with `Double.compare` / `Float.compare` (-0.0 < +0.0),
 * keep every row group SQL's order keeps (-0.0 = +0.0). Without it a dictionary-encoded file whose
 * zeros are all -0.0 loses its rows for `x >= 0.0`, `x = 0.0`, `x IN (0.0)` or `NOT (x < 0.0)`
 * (delta-spark loses them too). Each rewrite is exact under the total order, so it stays right
 * under NOT:
 *
 *  - `x >= ±0` becomes `x >= -0.0`, `x > ±0` becomes `x > +0.0`;
 *  - `x <= ±0` becomes `x <= +0.0`, `x < ±0` becomes `x < -0.0`;
 *  - `x = ±0` and `x <=> ±0` become `-0.0 <= x <= +0.0`; an `IN` list's zeros the same range.
 *
 * Spark re-applies every filter to the rows it reads, so these only decide what is skipped.
 */
object SignedZeroFilters {
  private def isZero(v: Any): Boolean = v match {
    case d: Double => d == 0.0
    case f: Float => f == 0.0f
    case _ => false
  }

  private def negZero(v: Any): Any = v match { case _: Float => -0.0f; case _ => -0.0 }
  private def posZero(v: Any): Any = v match { case _: Float => 0.0f; case _ => 0.0 }

  private def zeroRange(a: String, v: Any): Filter =
    And(GreaterThanOrEqual(a, negZero(v)), LessThanOrEqual(a, posZero(v)))

  def rewrite(filters: Seq[Filter]): Seq[Filter] = filters.map(rewrite)

  def rewrite(f: Filter): Filter = f match {
    case GreaterThanOrEqual(a, v) if isZero(v) => GreaterThanOrEqual(a, negZero(v))
    case GreaterThan(a, v) if isZero(v) => GreaterThan(a, posZero(v))
    case LessThanOrEqual(a, v) if isZero(v) => LessThanOrEqual(a, posZero(v))
    case LessThan(a, v) if isZero(v) => LessThan(a, negZero(v))
    case EqualTo(a, v) if isZero(v) => zeroRange(a, v)
    case EqualNullSafe(a, v) if isZero(v) => zeroRange(a, v)
    case In(a, vs) if vs.exists(isZero) =>
      val zero = zeroRange(a, vs.find(isZero).get)
      val others = vs.filterNot(isZero)
      if (others.isEmpty) zero else Or(In(a, others), zero)
    case And(l, r) => And(rewrite(l), rewrite(r))
    case Or(l, r) => Or(rewrite(l), rewrite(r))
    case Not(c) => Not(rewrite(c))
    case other => other
  }
}
