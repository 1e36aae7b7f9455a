package io.deltalog.expressions

import java.time.{Instant, LocalDate, LocalDateTime}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.function.Executable

import io.deltalog.exceptions.DeltalogException

class PartitionPredicatesSuite {

  /** Does a file whose column `c` (of `tpe`) holds `raw` match `sql`? */
  private def m(sql: String, tpe: String, raw: String): Boolean =
    PartitionPredicates.matches(PredicateParser.parse(sql), Map("c" -> raw), Map("c" -> tpe))

  private def yes(tpe: String, raw: String)(sqls: String*): Unit =
    sqls.foreach(s => assertTrue(m(s, tpe, raw), s"expected '$s' to match $tpe value ${Option(raw).map("'" + _ + "'")}"))

  private def no(tpe: String, raw: String)(sqls: String*): Unit =
    sqls.foreach(s => assertFalse(m(s, tpe, raw), s"expected '$s' not to match $tpe value ${Option(raw).map("'" + _ + "'")}"))

  private def evalError(errorClass: String)(body: => Any): PredicateEvaluationException = {
    val e = assertThrows(classOf[PredicateEvaluationException], new Executable { def execute(): Unit = body })
    assertEquals(errorClass, e.errorClass, e.getMessage)
    e
  }

  // ------------------------------------------------------------------------------- per type

  @Test def stringPartitions(): Unit = {
    yes("string", "eu")("c = 'eu'", "c IN ('us', 'eu')", "c != 'us'", "c > 'a'", "c < 'f'", "c LIKE 'e%'",
      "c IS NOT NULL", "c <=> 'eu'", "c BETWEEN 'a' AND 'z'", "NOT c = 'us'", "c NOT IN ('us')")
    no("string", "eu")("c = 'EU'", "c = 'us'", "c IS NULL", "c LIKE 'u%'", "c NOT LIKE 'eu%'", "c <=> NULL")
    // raw values: no unescaping of Hive-escaped characters
    yes("string", "a:b")("c = 'a:b'", "c LIKE 'a:%'")
    yes("string", "New York")("c = 'New York'", "c LIKE 'New %'")
    no("string", "New York")("c = 'New%20York'")
    yes("string", "100%")("c = '100%'", "c LIKE '100\\%%'", "c LIKE '100%'")
    yes("string", "it's")("c = 'it''s'")
    yes("string", "a\\b")("c = 'a\\\\b'")
    yes("string", " padded ")("c = ' padded '")
    no("string", " padded ")("c = 'padded'")
    yes("string", "ümlaut/日本")("c = 'ümlaut/日本'", "c > 'z'")
    // numbers in a string column compare as strings when both sides are strings
    yes("string", "10")("c < '9'", "c = 10", "c > 9")
    no("string", "abc")("c = 10", "c > 9", "c < 9") // cannot be cast: NULL, never TRUE
  }

  @Test def stringOrderingIsByUtf8Bytes(): Unit = {
    // U+FF21 (fullwidth A, one UTF-16 unit) < U+1F600 (surrogate pair) by code point / UTF-8 bytes,
    // although Java's String.compareTo says otherwise (0xFF21 > 0xD83D).
    yes("string", "\uFF21")("c < '\uD83D\uDE00'")
    assertTrue(Values.compareStrings("\uFF21", "\uD83D\uDE00") < 0)
    assertTrue("\uFF21".compareTo("\uD83D\uDE00") > 0)
    yes("string", "B")("c < 'a'") // case-sensitive, byte order
  }

  @Test def emptyAndNullValues(): Unit = {
    for (tpe <- Seq("string", "integer", "long", "double", "decimal(10,2)", "boolean", "date", "timestamp",
        "timestamp_ntz", "binary"); raw <- Seq(null, "")) {
      yes(tpe, raw)("c IS NULL", "c <=> NULL", "NOT c IS NOT NULL")
      no(tpe, raw)("c IS NOT NULL", "c = NULL", "c != NULL", "NOT (c = NULL)", "c IN (NULL)", "c NOT IN (NULL)")
    }
    yes("string", "")("c IS NULL")
    no("string", "")("c = ''", "c <=> ''", "c LIKE '%'")
    // a missing key is NULL too
    assertTrue(PartitionPredicates.matches(PredicateParser.parse("c IS NULL"), Map.empty, Map("c" -> "string")))
  }

  @Test def integralPartitions(): Unit = {
    for (tpe <- Seq("byte", "short", "integer", "long")) {
      yes(tpe, "42")("c = 42", "c = 42.0", "c = 42.0D", "c = '42'", "c > 41", "c >= 42", "c < 43.5",
        "c IN (1, 42)", "c BETWEEN 40 AND 50", "c <=> 42", "c != 7", "c > -1", "c LIKE '4%'")
      no(tpe, "42")("c = 43", "c < 42", "c > 42", "c IN (1, 2)", "c = '43'")
    }
    yes("byte", "-128")("c = -128", "c < 0")
    yes("long", "9223372036854775807")("c = 9223372036854775807", "c < 9223372036854775808")
    yes("long", "-5")("c = -5L")
  }

  @Test def floatingPartitions(): Unit = {
    for (tpe <- Seq("float", "double")) {
      yes(tpe, "1.5")("c = 1.5", "c = 1.50", "c = 1.5D", "c = 1.5F", "c > 1", "c < 2", "c = '1.5'", "c IN (1.5)")
      no(tpe, "1.5")("c = 1", "c > 1.5")
      yes(tpe, "0.1")("c = 0.1", "c = 0.1D", "c = 0.1F")
      yes(tpe, "NaN")("c = 'NaN'", "c > 1e300", "c > 'Infinity'")
      yes(tpe, "Infinity")("c > 1e300", "c = 'Infinity'", "c < 'NaN'")
      yes(tpe, "-Infinity")("c < -1e300")
      yes(tpe, "-0.0")("c = 0", "c = 0.0")
      yes(tpe, "1.0E10")("c = 10000000000")
    }
  }

  @Test def decimalPartitions(): Unit = {
    yes("decimal(10,2)", "1.10")("c = 1.1", "c = 1.10", "c = 1.100", "c = '1.1'", "c > 1", "c < 2",
      "c = 1.1D", "c IN (1.1)", "c <=> 1.1", "c LIKE '1.10%'")
    no("decimal(10,2)", "1.10")("c = 1.11", "c = 1", "c != 1.1")
    yes("decimal(38,0)", "12345678901234567890123456789")("c = 12345678901234567890123456789", "c > 9223372036854775807")
    yes("DECIMAL(5, 2)", "-0.50")("c = -0.5", "c < 0")
    yes("decimal", "7")("c = 7")
  }

  @Test def booleanPartitions(): Unit = {
    yes("boolean", "true")("c = TRUE", "c", "c = 'true'", "c <=> true", "c > FALSE", "c IN (false, true)")
    no("boolean", "true")("c = FALSE", "NOT c", "c = 'false'")
    yes("boolean", "false")("c = FALSE", "NOT c", "c < TRUE")
    no("boolean", "false")("c", "c = TRUE")
    yes("boolean", "TRUE")("c")
  }

  @Test def datePartitions(): Unit = {
    yes("date", "2024-01-01")("c = '2024-01-01'", "c = DATE '2024-01-01'", "c > '2023-12-31'",
      "c < DATE '2024-01-02'", "c BETWEEN '2023-01-01' AND '2024-12-31'", "c IN ('2024-01-01', '2025-01-01')",
      "c = TIMESTAMP '2024-01-01 00:00:00'", "c < TIMESTAMP '2024-01-01 00:00:01'",
      "c = TIMESTAMP_NTZ '2024-01-01 00:00:00'", "c LIKE '2024-01%'", "c = '2024-1-1'")
    no("date", "2024-01-01")("c = '2024-01-02'", "c > DATE '2024-01-01'", "c = TIMESTAMP '2024-01-01 00:00:01'")
  }

  @Test def timestampPartitions(): Unit = {
    // legacy form, read as UTC
    yes("timestamp", "2024-01-01 10:00:00")("c = TIMESTAMP '2024-01-01 10:00:00'", "c = '2024-01-01 10:00:00'",
      "c = TIMESTAMP '2024-01-01T11:00:00+01:00'", "c > DATE '2024-01-01'", "c < DATE '2024-01-02'",
      "c = '2024-01-01T10:00:00Z'", "c LIKE '2024-01-01 10:%'")
    yes("timestamp", "2024-01-01 10:00:00.123456")("c = TIMESTAMP '2024-01-01 10:00:00.123456'",
      "c > TIMESTAMP '2024-01-01 10:00:00.123455'", "c < TIMESTAMP '2024-01-01 10:00:00.123457'")
    // ISO-8601 UTC (recommended form) and offsets
    yes("timestamp", "1970-01-01T00:00:00.123456Z")("c = TIMESTAMP '1970-01-01 00:00:00.123456'")
    yes("timestamp", "2024-01-01T00:00:00.000+01:00")("c = TIMESTAMP '2023-12-31 23:00:00'",
      "c = '2023-12-31T23:00:00Z'", "c < DATE '2024-01-01'")
    yes("timestamp", "2024-01-01T00:00:00-08:00")("c = TIMESTAMP '2024-01-01 08:00:00'")
    yes("timestamp", "2024-01-01 00:00:00+0530")("c = TIMESTAMP '2023-12-31 18:30:00'")
    no("timestamp", "2024-01-01 10:00:00")("c = TIMESTAMP '2024-01-01 10:00:00+01:00'", "c = DATE '2024-01-01'")
  }

  @Test def timestampNtzPartitions(): Unit = {
    yes("timestamp_ntz", "2024-01-01 10:00:00")("c = TIMESTAMP_NTZ '2024-01-01 10:00:00'",
      "c = '2024-01-01 10:00:00'", "c > DATE '2024-01-01'", "c = TIMESTAMP '2024-01-01 10:00:00'")
    yes("timestamp_ntz", "2024-01-01 10:00:00.5")("c > TIMESTAMP_NTZ '2024-01-01 10:00:00'",
      "c = TIMESTAMP_NTZ '2024-01-01 10:00:00.500000'")
    evalError("DELTA_INVALID_PARTITION_VALUE")(m("c IS NULL", "timestamp_ntz", "2024-01-01 10:00:00Z"))
  }

  @Test def binaryPartitions(): Unit = {
    yes("binary", "abc")("c = X'616263'", "c = 'abc'", "c > X'61'", "c < X'62'", "c LIKE 'ab%'")
    no("binary", "abc")("c = X'6162'")
    // unsigned byte order: 0xC3 0xA9 ("é" in UTF-8) > 0x7F
    yes("binary", "\u00e9")("c > X'7F'", "c = X'C3A9'")
  }

  // ------------------------------------------------------------------------------- names

  @Test def columnNamesAreCaseInsensitive(): Unit = {
    val p = PredicateParser.parse("REGION = 'eu' AND Year > 2020")
    assertTrue(PartitionPredicates.matches(p, Map("Region" -> "eu", "YEAR" -> "2024"),
      Map("region" -> "string", "year" -> "integer")))
    assertFalse(PartitionPredicates.matches(p, Map("region" -> "eu", "year" -> "2019"),
      Map("REGION" -> "string", "Year" -> "integer")))
    assertTrue(PartitionPredicates.isPartitionOnly(p, Seq("region", "YEAR")))
    assertFalse(PartitionPredicates.isPartitionOnly(p, Seq("region")))
    assertFalse(PartitionPredicates.isPartitionOnly(PredicateParser.parse("region = 'eu' AND value > 1"),
      Seq("region", "year")))
    assertTrue(PartitionPredicates.isPartitionOnly(AlwaysTrue, Nil))
    assertTrue(PartitionPredicates.isPartitionOnly(PredicateParser.parse("`a.b` = 1"), Seq("A.B")))
  }

  @Test def columnsComparedWithColumns(): Unit = {
    val types = Map("a" -> "integer", "b" -> "long", "s" -> "string")
    def mm(sql: String, vals: (String, String)*) = PartitionPredicates.matches(PredicateParser.parse(sql), vals.toMap, types)
    assertTrue(mm("a = b", "a" -> "1", "b" -> "1"))
    assertTrue(mm("a < b", "a" -> "1", "b" -> "2"))
    assertTrue(mm("a = s", "a" -> "1", "s" -> "1"))
    assertFalse(mm("a = b", "a" -> "1", "b" -> null))
    assertTrue(mm("a <=> b", "a" -> null, "b" -> null))
    assertTrue(mm("a IN (b, 3)", "a" -> "3", "b" -> "4"))
  }

  @Test def valueNotInTypesIsReadAsString(): Unit = {
    assertTrue(PartitionPredicates.matches(PredicateParser.parse("p = '01'"), Map("p" -> "01"), Map.empty))
  }

  // ------------------------------------------------------------------------------- 3VL

  @Test def threeValuedLogic(): Unit = {
    // NULL column
    yes("integer", null)("NOT (c = 1) OR TRUE", "c = 1 OR TRUE", "NOT (c = 1 AND FALSE)", "c IS NULL AND TRUE")
    no("integer", null)("c = 1", "NOT (c = 1)", "c != 1", "c = 1 OR c != 1", "NOT (c = 1 OR FALSE)",
      "c IN (1, 2)", "c NOT IN (1, 2)", "c BETWEEN 0 AND 9", "c NOT BETWEEN 0 AND 9", "c LIKE '%'",
      "NOT (c LIKE '%')", "c <=> 1", "c = 1 AND TRUE")
    // IN with a NULL element: TRUE if found, else NULL (never TRUE, also not negated)
    yes("integer", "1")("c IN (1, NULL)", "c IN (NULL, 1)", "NOT (c NOT IN (1, NULL))")
    no("integer", "2")("c IN (1, NULL)", "c NOT IN (1, NULL)", "NOT (c IN (1, NULL))")
    // x = NULL is NULL, NOT NULL is NULL
    no("integer", "1")("c = NULL", "NOT (c = NULL)", "c != NULL", "c > NULL", "NOT (c < NULL)")
    yes("integer", "1")("NOT (c <=> NULL)", "(c = NULL) OR c = 1", "NOT ((c = NULL) AND c = 2)")
    no("integer", "1")("(c = NULL) AND c = 1", "NOT ((c = NULL) AND c = 1)")

    val lookup: String => Option[Any] = Map("n" -> None, "t" -> Some(1L)).apply
    def ev(s: String) = ExpressionEvaluator.eval(PredicateParser.parse(s), lookup)
    assertEquals(None, ev("n = 1"))
    assertEquals(None, ev("NOT n = 1"))
    assertEquals(Some(false), ev("n = 1 AND FALSE"))
    assertEquals(None, ev("n = 1 AND TRUE"))
    assertEquals(Some(true), ev("n = 1 OR TRUE"))
    assertEquals(None, ev("n = 1 OR FALSE"))
    assertEquals(None, ev("t IN (2, NULL)"))
    assertEquals(Some(true), ev("t IN (1, NULL)"))
    assertEquals(Some(false), ev("t IN (2, 3)"))
    assertEquals(None, ev("n IN (2, 3)"))
    assertEquals(Some(false), ExpressionEvaluator.eval(In(Column("n"), Nil), lookup))
    assertEquals(Some(true), ev("n <=> NULL"))
    assertEquals(Some(false), ev("t <=> NULL"))
    assertEquals(None, ev("NULL = NULL"))
    assertEquals(Some(true), ev("1 = 1.0"))
  }

  // ------------------------------------------------------------------------------- errors

  @Test def typeMismatchesAndBadValuesAreTypedErrors(): Unit = {
    evalError("DELTA_PREDICATE_TYPE_MISMATCH")(m("c = 'abc'", "integer", "1"))
    evalError("DELTA_PREDICATE_TYPE_MISMATCH")(m("c = 'not a date'", "date", "2024-01-01"))
    evalError("DELTA_PREDICATE_TYPE_MISMATCH")(m("c = 1", "boolean", "true"))
    evalError("DELTA_PREDICATE_TYPE_MISMATCH")(m("c = 1", "date", "2024-01-01"))
    evalError("DELTA_PREDICATE_TYPE_MISMATCH")(m("c = X'00'", "integer", "1"))
    evalError("DELTA_INVALID_PARTITION_VALUE")(m("c = 1", "integer", "one"))
    evalError("DELTA_INVALID_PARTITION_VALUE")(m("c = 1", "decimal(3,1)", "1,5"))
    evalError("DELTA_INVALID_PARTITION_VALUE")(m("c = TRUE", "boolean", "yes"))
    evalError("DELTA_INVALID_PARTITION_VALUE")(m("c = DATE '2024-01-01'", "date", "2024-02-30"))
    evalError("DELTA_INVALID_PARTITION_VALUE")(m("c IS NULL", "struct", "x"))
    val e = evalError("DELTA_INVALID_PREDICATE")(
      PartitionPredicates.matches(PredicateParser.parse("other = 1"), Map("c" -> "1"), Map("c" -> "integer")))
    assertTrue(e.getMessage.contains("'other' is not a partition column"), e.getMessage)
    assertTrue(e.isInstanceOf[DeltalogException])
    // a NULL value never reaches the cast: no error
    no("integer", null)("c = 'abc'")
  }

  // ------------------------------------------------------------------------------- schema

  @Test def partitionTypesFromSchema(): Unit = {
    val schema =
      """{"type":"struct","fields":[
        |{"name":"id","type":"long","nullable":true,"metadata":{}},
        |{"name":"Region","type":"string","nullable":true,"metadata":{}},
        |{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
        |{"name":"day","type":"date","nullable":true,"metadata":{}},
        |{"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}},
        |{"name":"a.b","type":"integer","nullable":true,"metadata":{}},
        |{"name":"s","type":{"type":"struct","fields":[]},"nullable":true,"metadata":{}}]}""".stripMargin
    assertEquals(Map("region" -> "string", "amount" -> "decimal(10,2)", "DAY" -> "date", "ts" -> "timestamp_ntz",
      "a.b" -> "integer"),
      PartitionPredicates.partitionTypesFromSchema(schema, Seq("region", "amount", "DAY", "ts", "a.b")))
    assertEquals(Map("s" -> "struct"), PartitionPredicates.partitionTypesFromSchema(schema, Seq("s")))
    assertEquals(Map.empty, PartitionPredicates.partitionTypesFromSchema(schema, Nil))
    assertEquals(Map.empty, PartitionPredicates.partitionTypesFromSchema("not even json", Nil))

    val types = PartitionPredicates.partitionTypesFromSchema(schema, Seq("Region", "amount", "day"))
    assertTrue(PartitionPredicates.matches(
      PredicateParser.parse("region = 'eu' AND amount = 1.1 AND day >= '2024-01-01'"),
      Map("Region" -> "eu", "amount" -> "1.10", "day" -> "2024-06-01"), types))

    def schemaError(body: => Any): Unit = {
      val e = assertThrows(classOf[DeltalogException], new Executable { def execute(): Unit = body })
      assertEquals("DELTA_INVALID_SCHEMA", e.errorClass)
    }
    schemaError(PartitionPredicates.partitionTypesFromSchema(schema, Seq("missing")))
    schemaError(PartitionPredicates.partitionTypesFromSchema("{oops", Seq("a")))
    schemaError(PartitionPredicates.partitionTypesFromSchema("[]", Seq("a")))
    schemaError(PartitionPredicates.partitionTypesFromSchema(null, Seq("a")))
  }

  @Test def parsePartitionValueCanonicalClasses(): Unit = {
    import PartitionPredicates.parsePartitionValue
    assertEquals(5L, parsePartitionValue("5", "integer"))
    assertEquals(1.5, parsePartitionValue("1.5", "double"))
    assertEquals(BigDecimal("1.10"), parsePartitionValue("1.10", "decimal(4,2)"))
    assertEquals(LocalDate.of(2024, 2, 29), parsePartitionValue("2024-02-29", "date"))
    assertEquals(Instant.parse("2024-01-01T00:00:00Z"), parsePartitionValue("2024-01-01 00:00:00", "timestamp"))
    assertEquals(LocalDateTime.of(2024, 1, 1, 0, 0, 0, 1000), parsePartitionValue("2024-01-01 00:00:00.000001", "timestamp_ntz"))
    assertArrayEquals("ab".getBytes("UTF-8"), parsePartitionValue("ab", "binary").asInstanceOf[Array[Byte]])
    assertNull(parsePartitionValue("", "string"))
    assertNull(parsePartitionValue(null, "integer"))
  }
}
