package io.deltalog.spark

import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.commands.{StatsSpec, StatsTestAccess}

/** Per-file statistics: truncation, timestamp rounding, NaN, which columns are indexed. */
class ConnectorWriteStatsSuite {
  import ConnectorWriteTestSupport._

  @Test def stringTruncationFollowsTheProtocol(): Unit = {
    assertEquals("abc", StatsTestAccess.truncateMin("abc", 3))
    assertEquals("ab", StatsTestAccess.truncateMin("abc", 2))
    // a surrogate pair is never split
    val emoji = "a\uD83D\uDE00b"
    assertEquals("a\uD83D\uDE00", StatsTestAccess.truncateMin(emoji, 2))
    // the max gets a tie-breaker above the truncated rest: U+007F below it, U+10FFFF otherwise
    assertEquals("ab\u007F", StatsTestAccess.truncateMax("abc", 2))
    assertEquals("ab\uDBFF\uDFFF", StatsTestAccess.truncateMax("ab\u00ffz", 2))
    // max characters cannot be exceeded: the prefix grows past them, up to twice the length
    assertEquals("a\uDBFF\uDFFF\u007F", StatsTestAccess.truncateMax("a\uDBFF\uDFFFbc", 2))
    assertNull(StatsTestAccess.truncateMax("a" + "\uDBFF\uDFFF" * 3 + "c", 2))
    assertEquals("abc", StatsTestAccess.truncateMax("abc", 5))
  }

  @Test def timestampBoundsAreTruncatedToMilliseconds(): Unit = {
    // min and max alike are floored (the reader widens a max by 999 µs), as delta-spark writes them
    assertEquals(1L, StatsTestAccess.millis(1999L))
    assertEquals(1L, StatsTestAccess.millis(1001L))
    assertEquals(1L, StatsTestAccess.millis(1000L))
    assertEquals(-2L, StatsTestAccess.millis(-1001L))
    assertEquals(253402300799999L, StatsTestAccess.millis(253402300799999999L)) // 9999-12-31 23:59:59.999999
  }

  @Test def zeroBoundsAreSignedOutward(): Unit = withTable { t =>
    // a file of -0.0 only and one of +0.0 only: max 0.0 and min -0.0 both times (checked on the text)
    for (z <- Seq("-0.0", "0.0")) {
      spark.sql(s"""select cast('$z' as double) d, cast('$z' as float) f,
        named_struct('x', cast('$z' as double), 'y', cast('$z' as float)) n""").coalesce(1)
        .write.format("deltalog").mode("append").save(t)
    }
    for (v <- 0L to 1L) {
      val text = adds(t, v).head.stats.get
      assertTrue(text.contains(""""minValues":{"d":-0.0,"f":-0.0,"n":{"x":-0.0,"y":-0.0}}"""), text)
      assertTrue(text.contains(""""maxValues":{"d":0.0,"f":0.0,"n":{"x":0.0,"y":0.0}}"""), text)
    }
  }

  @Test def indexedColumnsCountNestedLeavesAndHonourStatsColumns(): Unit = {
    val schema = StructType.fromDDL("a int, s struct<x: int, y: string>, b string, m map<string,int>")
    def names(spec: StatsSpec): Seq[String] = StatsTestAccess.leafPaths(spec)
    assertEquals(Seq("a", "s.x"), names(StatsSpec.forTable(schema, schema,
      Map("delta.dataSkippingNumIndexedCols" -> "2"), "t")))
    assertEquals(Seq("a", "s.x", "s.y", "b", "m"), names(StatsSpec.forTable(schema, schema,
      Map("delta.dataSkippingNumIndexedCols" -> "-1"), "t")))
    assertEquals(Seq("s.y", "b"), names(StatsSpec.forTable(schema, schema,
      Map("delta.dataSkippingStatsColumns" -> "b, s.y"), "t")))
    assertEquals(Seq("s.x", "s.y"), names(StatsSpec.forTable(schema, schema,
      Map("delta.dataSkippingStatsColumns" -> "`s`"), "t")))
  }

  @Test def writtenStatsForEveryTypeAndNaN(): Unit = withTable { t =>
    spark.sql("""select * from values
      (1Y, 2S, 3, 4L, 1.5f, cast('NaN' as double), 1.25BD, date'2024-01-01', timestamp_ntz'2024-01-01 00:00:00.0015',
       true, X'01', array(1), 'zz', cast('Infinity' as double)),
      (-1Y, -2S, -3, -4L, -0.5f, 2.0d, -1.25BD, date'2023-12-31', timestamp_ntz'2023-01-01 00:00:00',
       false, X'02', array(2), 'aa', 1.0d)
      as v(b, s, i, l, f, d, dec, dt, ntz, bo, bin, arr, str, inf)""").coalesce(1)
      .write.format("deltalog").save(t)
    val st = stats(adds(t, 0).head)
    val min = st.get("minValues")
    val max = st.get("maxValues")
    assertEquals(-1, min.get("b").asInt()); assertEquals(1, max.get("b").asInt())
    assertEquals(-4L, min.get("l").asLong()); assertEquals(4L, max.get("l").asLong())
    assertEquals(-0.5, min.get("f").asDouble(), 0.0); assertEquals(1.5, max.get("f").asDouble(), 0.0)
    assertFalse(min.has("d") || max.has("d"), "NaN: no bounds")
    assertFalse(min.has("inf") || max.has("inf"), "infinity: no bounds")
    assertEquals(0, st.get("nullCount").get("inf").asInt())
    assertEquals("-1.25", min.get("dec").decimalValue().toPlainString)
    assertEquals("2023-12-31", min.get("dt").asText()); assertEquals("2024-01-01", max.get("dt").asText())
    assertEquals("2023-01-01T00:00:00.000", min.get("ntz").asText())
    assertEquals("2024-01-01T00:00:00.001", max.get("ntz").asText())
    assertEquals("aa", min.get("str").asText()); assertEquals("zz", max.get("str").asText())
    for (c <- Seq("bo", "bin", "arr")) {
      assertFalse(min.has(c), c)
      assertEquals(0, st.get("nullCount").get(c).asInt(), c)
    }
    assertEquals(2, st.get("numRecords").asInt())
  }
}
