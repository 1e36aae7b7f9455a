package io.deltalog.spark.read

import org.apache.spark.sql.sources._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * The rewritten filters, evaluated with parquet-java's total order (`Double.compare`), keep exactly
 * the values SQL's order keeps for the original filter: every comparison, IN, AND / OR / NOT, over
 * -0.0, +0.0, negatives, positives, infinities and NaN, for doubles and floats.
 */
class SignedZeroFiltersSuite {
  private val doubles: Seq[Double] = Seq(-0.0, 0.0, -1.5, 2.5, Double.NegativeInfinity, Double.PositiveInfinity,
    Double.NaN)

  /** Spark SQL's order on doubles: -0.0 = +0.0, NaN = NaN and above everything. */
  private def sqlCmp(a: Double, b: Double): Int =
    if (a.isNaN && b.isNaN) 0 else if (a.isNaN) 1 else if (b.isNaN) -1
    else if (a == b) 0 else if (a < b) -1 else 1

  private def num(v: Any): Double = v match { case d: Double => d; case f: Float => f.toDouble }

  private def eval(f: Filter, x: Double, cmp: (Double, Double) => Int): Boolean = f match {
    case EqualTo(_, v) => cmp(x, num(v)) == 0
    case EqualNullSafe(_, v) => cmp(x, num(v)) == 0
    case GreaterThan(_, v) => cmp(x, num(v)) > 0
    case GreaterThanOrEqual(_, v) => cmp(x, num(v)) >= 0
    case LessThan(_, v) => cmp(x, num(v)) < 0
    case LessThanOrEqual(_, v) => cmp(x, num(v)) <= 0
    case In(_, vs) => vs.exists(v => cmp(x, num(v)) == 0)
    case And(l, r) => eval(l, x, cmp) && eval(r, x, cmp)
    case Or(l, r) => eval(l, x, cmp) || eval(r, x, cmp)
    case Not(c) => !eval(c, x, cmp)
  }

  private def filters(bound: Any): Seq[Filter] = {
    val base = Seq(EqualTo("x", bound), EqualNullSafe("x", bound), GreaterThan("x", bound),
      GreaterThanOrEqual("x", bound), LessThan("x", bound), LessThanOrEqual("x", bound),
      In("x", Array(bound)), In("x", Array(bound, 2.5)))
    base ++ base.map(Not(_)) ++ base.zip(base.tail).map { case (a, b) => Or(a, Not(b)) }
  }

  @Test def rewrittenFiltersUnderTotalOrderEqualSqlSemantics(): Unit = {
    val bounds: Seq[Any] = Seq(-0.0, 0.0, -0.0f, 0.0f, 1.0, -1.5)
    for (bound <- bounds; f <- filters(bound); x <- doubles) {
      val sql = eval(f, x, sqlCmp)
      val pushed = eval(SignedZeroFilters.rewrite(f), x, (a, b) => java.lang.Double.compare(a, b))
      assertEquals(sql, pushed, s"$f on $x: SQL keeps $sql, the rewritten filter under Double.compare keeps $pushed")
    }
  }

  @Test def withoutTheRewriteTheTotalOrderLosesRows(): Unit = {
    // the reason for the rewrite: parquet-java's order drops -0.0 for x >= 0.0
    val f = GreaterThanOrEqual("x", 0.0)
    assertTrue(eval(f, -0.0, sqlCmp))
    assertFalse(eval(f, -0.0, (a, b) => java.lang.Double.compare(a, b)))
  }

  @Test def otherFiltersAreUnchanged(): Unit = {
    val fs = Seq(EqualTo("x", 1.0), GreaterThan("i", 0), EqualTo("s", "0.0"), IsNull("x"), In("x", Array(1.0, 2.0)))
    assertEquals(fs, SignedZeroFilters.rewrite(fs))
  }
}
