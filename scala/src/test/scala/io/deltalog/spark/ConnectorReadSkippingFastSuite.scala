package io.deltalog.spark

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.AddFile
import io.deltalog.log.{FileChunk, FileChunkBuilder}
import io.deltalog.spark.read.{ChunkStats, DataSkipping, FileStats}
import io.deltalog.schema.ColumnMappingMode

/**
 * The columnar skipping path ([[DataSkipping.forChunk]] on [[ChunkStats]]) against the
 * straightforward one (`FileStats.parse(stats).forall(check.keep)`): same verdict for every file,
 * on random stats (nulls, missing or mistyped values, NaN, truncated strings, repeated keys,
 * malformed JSON) and random predicates.
 */
class ConnectorReadSkippingFastSuite {

  private val schema = StructType.fromDDL(
    "i INT, l LONG, by BYTE, sh SHORT, s STRING, d DATE, ts TIMESTAMP, tn TIMESTAMP_NTZ, dec DECIMAL(10,2), " +
      "dbl DOUBLE, f FLOAT, b BOOLEAN, n STRUCT<x: LONG, y: STRING>")
  private val leafNames = Seq("i", "l", "by", "sh", "s", "d", "ts", "tn", "dec", "dbl", "f", "b")

  private def attr(name: String): AttributeReference = {
    val f = schema(name)
    AttributeReference(f.name, f.dataType)()
  }
  private val nested = attr("n")
  private def nestedField(ordinal: Int): Expression = GetStructField(nested, ordinal)

  private val strings = Seq("", "a", "ab", "abc", "b", "ba", "z", "\u00e9", "\u00e9t\u00e9", "\ud83d\ude00", "a\ud83d\ude00")

  // ------------------------------------------------------------------ random stats strings

  private def q(s: String): String = "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""

  /** A JSON value for a bound of column `name` (sometimes mistyped, null, NaN or out of range). */
  private def boundValue(r: Random, name: String): String = {
    if (r.nextInt(12) == 0) return r.nextInt(6) match {
      case 0 => "null"
      case 1 => q("x")
      case 2 => "1.5"
      case 3 => "{\"x\":1}"
      case 4 => "[1,2]"
      case _ => "true"
    }
    name match {
      case "i" | "by" | "sh" | "x" => r.nextInt(10) match {
        case 0 => "99999999999"
        case 1 => "300"
        case 2 => "-129"
        case _ => (r.nextInt(11) - 5).toString
      }
      case "l" => r.nextInt(10) match {
        case 0 => "123456789012345678901234"
        case 1 => "9223372036854775807"
        case 2 => "-9223372036854775808"
        case _ => (r.nextInt(11) - 5).toString
      }
      case "s" | "y" => q(strings(r.nextInt(strings.size)))
      case "d" => if (r.nextInt(8) == 0) q("not a date") else q(s"2020-01-0${1 + r.nextInt(5)}")
      case "ts" | "tn" =>
        if (r.nextInt(8) == 0) q("garbage") else q(s"2020-01-01T00:00:0${r.nextInt(5)}.${r.nextInt(3)}00Z")
      case "dec" => r.nextInt(5) match {
        case 0 => q("2.50")
        case 1 => "123456789012.5"
        case _ => f"${r.nextInt(9) - 4}.${r.nextInt(100)}%02d"
      }
      case "dbl" | "f" => r.nextInt(8) match {
        case 0 => q("NaN")
        case 1 => "-0.0"
        case 2 => "1e308"
        case 3 => "3"
        case _ => s"${r.nextInt(7) - 3}.5"
      }
      case _ => if (r.nextBoolean()) "true" else "false"
    }
  }

  private def section(r: Random, numRecords: Int, nulls: Boolean): String = {
    val parts = Seq.newBuilder[String]
    for (name <- leafNames if r.nextInt(6) != 0) {
      val v = if (nulls) (if (r.nextInt(10) == 0) q("3") else r.nextInt(numRecords + 2).toString) else boundValue(r, name)
      parts += s"${q(name)}:$v"
      if (r.nextInt(15) == 0) parts += s"${q(name)}:" + (if (nulls) "0" else boundValue(r, name)) // repeated key
    }
    r.nextInt(8) match {
      case 0 => // no nested stats
      case 1 => parts += s"${q("n")}:5"
      case _ =>
        def leaf(k: String) = if (nulls) r.nextInt(numRecords + 1).toString else boundValue(r, k)
        parts += s"""${q("n")}:{${q("x")}:${leaf("x")},${q("y")}:${leaf("y")}}"""
    }
    parts.result().mkString("{", ",", "}")
  }

  private def statsString(r: Random): String = r.nextInt(40) match {
    case 0 => null
    case 1 => ""
    case 2 => "[1,2]"
    case 3 => "{\"numRecords\":3,\"minValues\":{\"i\":1" // truncated JSON
    case 4 => "{\"numRecords\":3,\"minValues\":{\"dbl\":NaN}}" // non-standard token
    case 5 => "{\"numRecords\":3,\"minValues\":{\"i\":1}} trailing"
    case 6 => "{\"numRecords\":3,\"minValues\":7,\"maxValues\":null,\"nullCount\":[1]}"
    case _ =>
      val n = r.nextInt(6)
      val fields = Seq.newBuilder[String]
      r.nextInt(10) match {
        case 0 => // numRecords missing
        case 1 => fields += "\"numRecords\":2.0"
        case 2 => fields += "\"numRecords\":\"2\""
        case _ => fields += s""""numRecords":$n"""
      }
      if (r.nextInt(5) != 0) fields += s""""minValues":${section(r, n, nulls = false)}"""
      if (r.nextInt(5) != 0) fields += s""""maxValues":${section(r, n, nulls = false)}"""
      if (r.nextInt(5) != 0) fields += s""""nullCount":${section(r, n, nulls = true)}"""
      if (r.nextInt(4) == 0) fields += s""""tightBounds":${r.nextBoolean()}"""
      if (r.nextInt(20) == 0) fields += s""""minValues":${section(r, n, nulls = false)}""" // repeated section
      r.shuffle(fields.result()).mkString("{", ",", "}")
  }

  private def chunk(r: Random, n: Int): (FileChunk, IndexedSeq[String]) = {
    val b = new FileChunkBuilder(n)
    val stats = (0 until n).map(_ => statsString(r))
    stats.zipWithIndex.foreach { case (s, k) => b += AddFile(path = s"f$k.parquet", size = 1L, modificationTime = 0L, stats = Option(s)) }
    (b.result(), stats)
  }

  // ------------------------------------------------------------------ random predicates

  private def literal(r: Random, t: DataType): Literal = t match {
    case IntegerType => Literal(r.nextInt(13) - 6)
    case LongType => Literal(if (r.nextInt(10) == 0) Long.MaxValue else (r.nextInt(13) - 6).toLong)
    case ByteType => Literal((r.nextInt(13) - 6).toByte)
    case ShortType => Literal((r.nextInt(13) - 6).toShort)
    case StringType => Literal(UTF8String.fromString(strings(r.nextInt(strings.size))), StringType)
    case DateType => Literal(18261 + r.nextInt(7), DateType) // 2019-12-31 .. 2020-01-06
    case TimestampType | TimestampNTZType =>
      Literal(1577836800000000L + r.nextInt(6) * 1000000L + r.nextInt(4) * 500L, t)
    case d: DecimalType => Literal(Decimal(BigDecimal(r.nextInt(1000) - 500) / 100), d)
    case DoubleType => Literal(r.nextInt(6) match {
      case 0 => Double.NaN
      case 1 => -0.0
      case 2 => 0.0
      case _ => r.nextInt(9) - 4 + (if (r.nextBoolean()) 0.5 else 0.0)
    })
    case FloatType => Literal(r.nextInt(5) match {
      case 0 => Float.NaN
      case 1 => -0.0f
      case _ => (r.nextInt(9) - 4).toFloat + (if (r.nextBoolean()) 0.5f else 0f)
    })
    case BooleanType => Literal(r.nextBoolean())
  }

  private def column(r: Random): Expression =
    if (r.nextInt(6) == 0) nestedField(r.nextInt(2)) else attr(leafNames(r.nextInt(leafNames.size)))

  private def leafPredicate(r: Random): Expression = {
    val c = column(r)
    val t = c.dataType
    def lit = literal(r, t)
    r.nextInt(12) match {
      case 0 => EqualTo(c, lit)
      case 1 => EqualTo(lit, c)
      case 2 => LessThan(c, lit)
      case 3 => LessThanOrEqual(lit, c)
      case 4 => GreaterThan(c, lit)
      case 5 => GreaterThanOrEqual(c, lit)
      case 6 => EqualNullSafe(c, lit)
      case 7 => In(c, Seq.fill(r.nextInt(4))(lit))
      case 8 => InSet(c, Seq.fill(r.nextInt(4))(lit.value).toSet)
      case 9 => if (r.nextBoolean()) IsNull(c) else IsNotNull(c)
      case 10 if t == StringType => StartsWith(c, literal(r, StringType))
      case _ => Not(EqualTo(c, lit))
    }
  }

  private def predicate(r: Random, depth: Int): Expression =
    if (depth == 0 || r.nextInt(3) == 0) leafPredicate(r)
    else r.nextInt(3) match {
      case 0 => And(predicate(r, depth - 1), predicate(r, depth - 1))
      case 1 => Or(predicate(r, depth - 1), predicate(r, depth - 1))
      case _ => Not(predicate(r, depth - 1))
    }

  private def assertSameVerdicts(c: FileChunk, stats: IndexedSeq[String], filters: Seq[Expression]): Int = {
    DataSkipping.compile(filters, schema, ColumnMappingMode.NoMapping) match {
      case None => 0
      case Some(check) =>
        val fast = DataSkipping.forChunk(check, c)
        var skipped = 0
        stats.indices.foreach { i =>
          val expected = FileStats.parse(stats(i)).forall(check.keep)
          assertEquals(expected, fast.keep(i), s"file $i, filters ${filters.map(_.sql)}, stats ${stats(i)}")
          if (!expected) skipped += 1
        }
        skipped
    }
  }

  @Test def randomStatsAndPredicatesGiveTheSameVerdicts(): Unit = {
    val r = new Random(20261126L)
    var skipped = 0
    for (_ <- 1 to 40) {
      val (c, stats) = chunk(r, 200)
      // several predicates per chunk: columns are added to the chunk's cache one query at a time
      for (_ <- 1 to 60) skipped += assertSameVerdicts(c, stats, Seq.fill(1 + r.nextInt(2))(predicate(r, 3)))
    }
    assertTrue(skipped > 1000, s"the random cases should skip files too (skipped $skipped)")
  }

  @Test def everyColumnAtOnceMatchesColumnByColumn(): Unit = {
    val r = new Random(7L)
    val (c, stats) = chunk(r, 500)
    val all = leafNames.map(n => IsNotNull(attr(n))) ++ Seq(IsNotNull(nestedField(0)), IsNotNull(nestedField(1)))
    assertSameVerdicts(c, stats, all)
    for (_ <- 1 to 200) assertSameVerdicts(c, stats, Seq(predicate(r, 2)))
  }

  @Test def sortedLongRangesKeepExactlyTheOverlappingFiles(): Unit = {
    val n = 5000
    val b = new FileChunkBuilder(n)
    (0 until n).foreach { k =>
      b += AddFile(path = s"f$k.parquet", size = 1L, modificationTime = 0L, stats = Some(
        s"""{"numRecords":1000,"minValues":{"l":${1000L * k}},"maxValues":{"l":${1000L * k + 999}},"nullCount":{"l":0}}"""))
    }
    val c = b.result()
    val l = attr("l")
    for (x <- Seq(0L, 1L, 999L, 1000L, 12345L, 1000L * n, 1000L * n + 5)) {
      val check = DataSkipping.compile(Seq(GreaterThanOrEqual(l, Literal(0L)), LessThan(l, Literal(x))), schema,
        ColumnMappingMode.NoMapping).get
      val fast = DataSkipping.forChunk(check, c)
      val kept = (0 until n).count(fast.keep)
      assertEquals(math.min(n.toLong, (x + 999) / 1000).toInt, kept, s"id < $x")
    }
  }

  /** Selective ranges on unsorted, spread-out bounds: the sorted-bounds shortcut against the plain evaluation. */
  @Test def selectiveRangesOnSpreadBoundsGiveTheSameVerdicts(): Unit = {
    val r = new Random(11L)
    for (round <- 1 to 12) {
      val n = 800
      val mins = Array.fill(n)(r.nextInt(100000).toLong)
      val stats = (0 until n).map { k =>
        val lo = mins(k)
        val hi = lo + r.nextInt(300)
        val nr = 1 + r.nextInt(5)
        def part(key: String, v: String) = if (r.nextInt(15) == 0) "" else s""""$key":$v,"""
        r.nextInt(60) match {
          case 0 => null
          case 1 => "{\"numRecords\":3,\"minValues\":{\"l\":1" // malformed
          case _ =>
            val ts = (x: Long) => "\"" + java.time.Instant.ofEpochMilli(1577836800000L + x).toString + "\""
            "{" + part("numRecords", nr.toString) +
              "\"minValues\":{" + part("l", lo.toString) + part("i", (lo - 50000).toString) + part("ts", ts(lo)) + "\"z\":0}," +
              "\"maxValues\":{" + part("l", hi.toString) + part("i", (hi - 50000).toString) + part("ts", ts(hi)) + "\"z\":0}," +
              "\"nullCount\":{" + part("l", r.nextInt(nr + 1).toString) + part("i", "0") + "\"z\":0}}"
        }
      }
      val b = new FileChunkBuilder(n)
      stats.zipWithIndex.foreach { case (s, k) => b += AddFile(path = s"f$k.parquet", size = 1L, modificationTime = 0L, stats = Option(s)) }
      val c = b.result()
      val sortedMins = mins.sorted
      for (_ <- 1 to 80) {
        val name = Seq("l", "i", "ts")(r.nextInt(3))
        val col = attr(name)
        // near either end of the bounds, on or next to an existing bound: few candidates, exact ties
        val base = if (r.nextBoolean()) sortedMins(r.nextInt(n / 10)) else sortedMins(n - 1 - r.nextInt(n / 10)) + r.nextInt(300)
        val x = base + r.nextInt(3) - 1
        val lit = name match {
          case "l" => Literal(x)
          case "i" => Literal((x - 50000).toInt)
          case _ => Literal((1577836800000L + x) * 1000L + Seq(0L, 500L, 999L)(r.nextInt(3)), TimestampType)
        }
        val leaf: Expression = r.nextInt(9) match {
          case 0 => LessThan(col, lit)
          case 1 => LessThanOrEqual(col, lit)
          case 2 => GreaterThan(col, lit)
          case 3 => GreaterThanOrEqual(col, lit)
          case 4 => EqualTo(col, lit)
          case 5 => GreaterThan(lit, col)
          case 6 => LessThanOrEqual(lit, col)
          case 7 => Not(GreaterThan(col, lit))
          case _ => EqualNullSafe(lit, col)
        }
        val filters = r.nextInt(3) match {
          case 0 => Seq(leaf)
          case 1 => Seq(IsNotNull(col), leaf, GreaterThanOrEqual(attr("l"), Literal(0L)))
          case _ => Seq(And(leaf, LessThan(attr("l"), Literal(sortedMins(r.nextInt(n))))))
        }
        assertSameVerdicts(c, stats, filters)
      }
    }
  }

  @Test def cacheIsPerChunk(): Unit = {
    val r = new Random(3L)
    val (c1, _) = chunk(r, 10)
    val (c2, _) = chunk(r, 10)
    assertSame(ChunkStats.of(c1), ChunkStats.of(c1))
    assertNotSame(ChunkStats.of(c1), ChunkStats.of(c2))
  }
}
