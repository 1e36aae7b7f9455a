package io.deltalog.spark.read

import com.fasterxml.jackson.databind.node.JsonNodeFactory
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.sources
import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.CommitInfo
import io.deltalog.log.NanAwareWriters
import io.deltalog.schema.ColumnMappingMode

/**
 * Skipping on NaN-blind stats (min/max of the non-NaN values, as delta-rs writes them): for every
 * small set of doubles (NaN, ±0.0, ±inf, numbers) and every predicate form, the NaN-safe check
 * keeps the file whenever one of its values satisfies the predicate under Spark's semantics,
 * while the plain check (right for NaN-counting writers) would drop some of those files.
 */
class NanBlindStatsSuite {
  private val values = Seq(Double.NaN, -0.0, 0.0, 1.0, 2.5, Double.PositiveInfinity, Double.NegativeInfinity)
  private val schema = StructType(Seq(StructField("x", DoubleType)))
  private val attr = AttributeReference("x", DoubleType)()

  private def predicates(c: Expression): Seq[Expression] = {
    val consts = Seq(0.0, -0.0, 1.0, 1.5, Double.NaN, Double.PositiveInfinity)
    val base = consts.flatMap { v =>
      val l = Literal(v)
      Seq(GreaterThan(c, l), GreaterThanOrEqual(c, l), LessThan(c, l), LessThanOrEqual(c, l), EqualTo(c, l),
        EqualNullSafe(c, l), GreaterThan(l, c), LessThanOrEqual(l, c), In(c, Seq(l, Literal(7.0))))
    }
    base ++ base.map(Not(_)) ++ base.zip(base.tail).map { case (a, b) => Or(a, Not(b)) }
  }

  /** Subsets of `values` of size 1..3. */
  private def files: Seq[Seq[Double]] =
    (1 to 3).flatMap(k => values.indices.combinations(k).map(_.map(values)))

  /** NaN-blind stats JSON: bounds over non-NaN values; infinite bounds are left out (JSON has no infinity). */
  private def blindStats(vs: Seq[Double]): FileStats = {
    val f = JsonNodeFactory.instance
    val root = f.objectNode()
    root.put("numRecords", vs.size)
    root.putObject("nullCount").put("x", 0)
    val finite = vs.filterNot(_.isNaN)
    if (finite.nonEmpty) {
      val lo = finite.min; val hi = finite.max
      if (!lo.isInfinite) root.putObject("minValues").put("x", lo)
      if (!hi.isInfinite) root.putObject("maxValues").put("x", hi)
    }
    FileStats.parse(root.toString).get
  }

  @Test def nanSafeChecksKeepEveryFileWithAMatchingValue(): Unit = {
    val bound = BoundReference(0, DoubleType, nullable = true)
    var plainWouldDrop = 0
    predicates(attr).zip(predicates(bound)).foreach { case (p, e) =>
      val safe = DataSkipping.compileNanSafe(Seq(p), schema, ColumnMappingMode.NoMapping)
      val plain = DataSkipping.compile(Seq(p), schema, ColumnMappingMode.NoMapping)
      files.foreach { vs =>
        val matches = vs.exists(v => e.eval(InternalRow(v)) == true)
        val stats = blindStats(vs)
        if (matches) {
          assertTrue(safe.forall(_.keep(stats)), s"$p dropped a file holding ${vs.mkString("[", ", ", "]")}")
          if (!plain.forall(_.keep(stats))) plainWouldDrop += 1
        }
      }
    }
    assertTrue(plainWouldDrop > 0, "the plain checks never dropped a matching NaN-blind file: the suite tests nothing")
  }

  @Test def nanSafeChecksStillSkipOnMinAndOnOtherColumns(): Unit = {
    val s2 = StructType(Seq(StructField("x", DoubleType), StructField("n", LongType)))
    val n = AttributeReference("n", LongType)()
    val stats = FileStats.parse("""{"numRecords":2,"minValues":{"x":1.0,"n":5},"maxValues":{"x":1.0,"n":9},"nullCount":{"x":0,"n":0}}""").get
    def safeKeeps(e: Expression) = DataSkipping.compileNanSafe(Seq(e), s2, ColumnMappingMode.NoMapping).forall(_.keep(stats))
    assertFalse(safeKeeps(LessThan(attr, Literal(0.5))))
    assertFalse(safeKeeps(EqualTo(attr, Literal(2.0))))
    assertFalse(safeKeeps(And(GreaterThan(attr, Literal(1.5)), GreaterThan(n, Literal(100L)))))
    assertTrue(safeKeeps(GreaterThan(attr, Literal(1.5))))
  }

  @Test def pushedFiltersLoseOnlyFloatingParts(): Unit = {
    val s = StructType(Seq(StructField("x", DoubleType), StructField("f", FloatType), StructField("n", LongType),
      StructField("s", StructType(Seq(StructField("d", DoubleType), StructField("k", IntegerType))))))
    import sources._
    val in = Seq(And(GreaterThan("x", 1.5), EqualTo("n", 3L)), Or(GreaterThan("f", 1.0f), EqualTo("n", 1L)),
      Not(LessThan("s.d", 0.0)), GreaterThan("s.k", 2), IsNotNull("unknown"))
    assertEquals(Seq(EqualTo("n", 3L), GreaterThan("s.k", 2)), NanSafeFilters.withoutFloating(in, s))
    assertTrue(NanSafeFilters.referencesFloating(in, s))
    assertFalse(NanSafeFilters.referencesFloating(Seq(EqualTo("n", 1L), GreaterThan("s.k", 2)), s))
  }

  @Test def writersKnownToCountNaN(): Unit = {
    def ci(json: String) = Some(CommitInfo(io.deltalog.actions.Action.mapper.readTree(json)
      .asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]))
    assertTrue(NanAwareWriters.countsNaN(ci("""{"engineInfo":"Apache-Spark/3.5.0 Delta-Lake/3.1.0"}""")))
    assertTrue(NanAwareWriters.countsNaN(ci("""{"engineInfo":"Apache-Spark/4.2.0 deltalog/0.1.0"}""")))
    assertTrue(NanAwareWriters.countsNaN(ci("""{"engineInfo":"Databricks-Runtime/13.3.x"}""")))
    assertTrue(NanAwareWriters.countsNaN(ci("""{"operation":"WRITE"}"""))) // delta-spark before engineInfo
    assertFalse(NanAwareWriters.countsNaN(ci("""{"engineInfo":"delta-rs:py-1.6.6","clientVersion":"delta-rs.py-1.6.6"}""")))
    assertFalse(NanAwareWriters.countsNaN(ci("""{"clientVersion":"delta-rs.0.8.0"}""")))
    assertFalse(NanAwareWriters.countsNaN(ci("""{"engineInfo":"Kernel-3.2.0/test-engine"}""")))
    assertFalse(NanAwareWriters.countsNaN(None))
  }
}
