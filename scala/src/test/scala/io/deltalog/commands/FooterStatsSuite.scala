package io.deltalog.commands

import java.nio.file.Files

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.MessageTypeParser
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter
import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * [[FooterStats]]: Delta statistics from a Parquet footer (CONVERT TO DELTALOG), for a file that
 * parquet-mr writes here with several row groups, nulls, a nested struct and types whose footer
 * statistics must not become bounds (double, unsigned int, boolean). Every expected value is computed
 * here from the rows written, not read back from the footer.
 */
class FooterStatsSuite {
  private val mapper = new ObjectMapper().enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)

  private val Message = MessageTypeParser.parseMessageType(
    """message m {
      |  required int64 id;
      |  optional binary s (STRING);
      |  optional int32 d (DATE);
      |  optional double x;
      |  optional int64 ts (TIMESTAMP(MILLIS,true));
      |  optional fixed_len_byte_array(5) dec (DECIMAL(10,2));
      |  optional int32 u (INTEGER(32,false));
      |  optional boolean b;
      |  optional group st { optional int32 a; optional binary t (STRING); }
      |}""".stripMargin)

  private val Rows = 3000
  private val Long40 = "z" * 40
  private def s(i: Int): Option[String] = if (i % 10 == 3) None else Some(if (i == 2999) Long40 else f"s$i%05d")
  private def d(i: Int): Option[Int] = if (i % 7 == 0) None else Some(18000 + i)
  private def x(i: Int): Double = if (i == 5) Double.NaN else i * 0.25
  private def ts(i: Int): Long = 1600000000000L + i * 1001L
  private def dec(i: Int): Long = i * 37L - 20000L // unscaled, scale 2

  /** A file of [[Rows]] rows in several row groups (small row-group size). */
  private def write(): Path = {
    val dir = Files.createTempDirectory("footer-stats")
    val path = new Path(dir.resolve("f.parquet").toUri)
    val factory = new SimpleGroupFactory(Message)
    val writer = ExampleParquetWriter.builder(path).withType(Message).withRowGroupSize(4096L)
      .withPageSize(1024).withDictionaryEncoding(false).build()
    try (0 until Rows).foreach { i =>
      val g = factory.newGroup().append("id", i.toLong)
      s(i).foreach(v => g.append("s", v))
      d(i).foreach(v => g.append("d", v))
      g.append("x", x(i)).append("ts", ts(i))
      val bytes = java.math.BigInteger.valueOf(dec(i)).toByteArray
      val fixed = Array.fill[Byte](5)(if (dec(i) < 0) -1 else 0)
      System.arraycopy(bytes, 0, fixed, 5 - bytes.length, bytes.length)
      g.append("dec", Binary.fromConstantByteArray(fixed)).append("u", -i).append("b", i % 2 == 0)
      val st = g.addGroup("st")
      if (i % 4 != 1) st.append("a", i * 3)
      st.append("t", "t")
      writer.write(g)
    } finally writer.close()
    path
  }

  private def summarize(path: Path): FooterSummary = {
    val in = HadoopInputFile.fromPath(path, new Configuration())
    val reader = ParquetFileReader.open(in)
    val footer = try reader.getFooter finally reader.close()
    assertTrue(footer.getBlocks.size > 1, s"several row groups expected, got ${footer.getBlocks.size}")
    val schema = new ParquetToSparkSchemaConverter(new org.apache.spark.sql.internal.SQLConf).convert(footer.getFileMetaData.getSchema)
    FooterStats.summarize(footer, schema)
  }

  private def stats(summary: FooterSummary, table: StructType): JsonNode =
    mapper.readTree(FooterStats.statsJson(summary, StatsSpec.forTable(table, table, Map.empty, "t")))

  @Test def boundsAndNullCountsAreTheRowsOnes(): Unit = {
    val summary = summarize(write())
    val j = stats(summary, summary.schema)
    val idx = 0 until Rows
    assertEquals(Rows.toLong, j.get("numRecords").asLong)
    val min = j.get("minValues")
    val max = j.get("maxValues")
    val nulls = j.get("nullCount")
    assertEquals(0L, min.get("id").asLong)
    assertEquals(Rows - 1L, max.get("id").asLong)
    assertEquals("s00000", min.get("s").asText)
    // the 40-character maximum: truncated to 32 characters plus the tie-breaker, as StatsJson writes it
    assertEquals("z" * 32 + "\u007F", max.get("s").asText)
    assertEquals(idx.count(s(_).isEmpty).toLong, nulls.get("s").asLong)
    val days = idx.flatMap(d)
    assertEquals(java.time.LocalDate.ofEpochDay(days.min).toString, min.get("d").asText)
    assertEquals(java.time.LocalDate.ofEpochDay(days.max).toString, max.get("d").asText)
    assertEquals(idx.count(d(_).isEmpty).toLong, nulls.get("d").asLong)
    assertEquals(java.time.Instant.ofEpochMilli(ts(0)), java.time.Instant.parse(min.get("ts").asText))
    assertEquals(java.time.Instant.ofEpochMilli(ts(Rows - 1)), java.time.Instant.parse(max.get("ts").asText))
    assertEquals(0, new java.math.BigDecimal(java.math.BigInteger.valueOf(dec(0)), 2).compareTo(min.get("dec").decimalValue))
    assertEquals(0, new java.math.BigDecimal(java.math.BigInteger.valueOf(dec(Rows - 1)), 2).compareTo(max.get("dec").decimalValue))
    assertEquals(idx.map(i => i * 3).filter(i => (i / 3) % 4 != 1).min.toLong, min.get("st").get("a").asLong)
    assertEquals(idx.count(_ % 4 == 1).toLong, nulls.get("st").get("a").asLong)
    // no bounds where the footer's are not Delta's: double (NaN left out), unsigned int, boolean
    Seq("x", "u", "b").foreach { c =>
      assertFalse(min.has(c), s"$c has no lower bound")
      assertFalse(max.has(c), s"$c has no upper bound")
      assertEquals(0L, nulls.get(c).asLong, s"$c null count")
    }
  }

  @Test def aColumnTheFileLacksIsNullInEachRowAndArraysHaveNoStats(): Unit = {
    val summary = summarize(write())
    val table = summary.schema
      .add("missing", LongType)
      .add("arr", ArrayType(LongType))
    // `arr` is not in the file either: null in every row; a column the file has as an array would
    // get no null count (its footer counts elements, not rows)
    val j = stats(summary, table)
    assertEquals(Rows.toLong, j.get("nullCount").get("missing").asLong)
    assertEquals(Rows.toLong, j.get("nullCount").get("arr").asLong)
    assertFalse(j.get("minValues").has("missing"))
    val lyingArray = FooterSummary(StructType(Seq(StructField("arr", ArrayType(LongType)))), 10L, Map.empty)
    val k = mapper.readTree(FooterStats.statsJson(lyingArray,
      StatsSpec.forTable(lyingArray.schema, lyingArray.schema, Map.empty, "t")))
    assertFalse(k.has("nullCount"), k.toString)
    assertEquals(10L, k.get("numRecords").asLong)
  }

  @Test def unknownStatisticsAreLeftOutNotGuessed(): Unit = {
    val schema = StructType(Seq(StructField("a", LongType), StructField("b", StringType)))
    val summary = FooterSummary(schema, 5L, Map(
      Seq("a") -> FooterLeafStats(None, Some((1L, 9L))),
      Seq("b") -> FooterLeafStats(Some(2L), None)))
    val j = mapper.readTree(FooterStats.statsJson(summary, StatsSpec.forTable(schema, schema, Map.empty, "t")))
    assertEquals(1L, j.get("minValues").get("a").asLong)
    assertFalse(j.get("minValues").has("b"))
    assertFalse(j.get("nullCount").has("a"))
    assertEquals(2L, j.get("nullCount").get("b").asLong)
  }
}
