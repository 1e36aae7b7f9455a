package io.deltalog.spark

import org.apache.spark.sql.catalyst.TableIdentifier
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.protocol.Protocol

/** `DESCRIBE PROTOCOL` parsing, delegation of every other statement, and the rows it returns. */
class AdvisorSqlParserSuite {
  private lazy val spark = SparkTestSession.spark
  private lazy val parser = new DeltalogSqlParser(spark.sessionState.sqlParser)

  private def corpus(table: String): String = io.deltalog.ConformanceCorpus.resolve(table).toString

  @Test def parsesThePathAndTableForms(): Unit = {
    assertEquals(DescribeProtocolCommand(Some("/data/t"), None), parser.parsePlan("DESCRIBE PROTOCOL '/data/t'"))
    assertEquals(DescribeProtocolCommand(Some("/data/t"), None), parser.parsePlan("desc protocol delta.`/data/t`;"))
    assertEquals(DescribeProtocolCommand(Some("/data/t"), None), parser.parsePlan("DESC PROTOCOL `/data/t`"))
    assertEquals(DescribeProtocolCommand(None, Some(TableIdentifier("events", Some("db")))),
      parser.parsePlan("DESCRIBE PROTOCOL db.events"))
  }

  @Test def delegatesEverythingElse(): Unit = {
    val sql = "SELECT * FROM t WHERE a > 1"
    assertEquals(spark.sessionState.sqlParser.parsePlan(sql), parser.parsePlan(sql))
    assertFalse(parser.parsePlan("DESCRIBE TABLE protocol").isInstanceOf[DescribeProtocolCommand])
    assertEquals(spark.sessionState.sqlParser.parseExpression("a + 1"), parser.parseExpression("a + 1"))
    assertEquals(spark.sessionState.sqlParser.parseDataType("array<int>"), parser.parseDataType("array<int>"))
  }

  @Test def rowsNameEveryFeatureOfAProtocol(): Unit = {
    val p = Protocol.addFeatureSupport(Protocol(1, 2), "rowTracking")
    val rows = DescribeProtocolCommand.rows(p)
    assertEquals(Seq("appendOnly", "domainMetadata", "invariants", "rowTracking"), rows.map(_.getString(0)))
    val dm = rows.find(_.getString(0) == "domainMetadata").get
    assertEquals("rowTracking", dm.getString(5)) // required_by
    assertFalse(dm.getBoolean(8))
    assertEquals("DELTA_FEATURE_DROP_DEPENDENT_FEATURE", dm.getString(9))
    val rt = rows.find(_.getString(0) == "rowTracking").get
    assertEquals("writer-only", rt.getString(1))
    assertTrue(rt.getBoolean(8))
    assertEquals(Protocol.dropFeatureSupport(p, "rowTracking").simpleString, rt.getString(9))
    val legacy = DescribeProtocolCommand.rows(Protocol(2, 5)).find(_.getString(0) == "columnMapping").get
    assertEquals("(2,5)", legacy.getString(2))
    assertEquals("implied by (2,5)", legacy.getString(4))
  }

  @Test def describesACorpusTable(): Unit = {
    val rows = DescribeProtocolCommand(Some(corpus("delta/table-with-icebegCompatV2Enabled")), None).run(spark)
    assertEquals(Seq("appendOnly", "columnMapping", "icebergCompatV2", "invariants"), rows.map(_.getString(0)))
    val cm = rows.find(_.getString(0) == "columnMapping").get
    assertEquals("reader-writer", cm.getString(1))
    assertEquals("icebergCompatV2", cm.getString(5))
  }
}
