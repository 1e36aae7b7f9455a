package io.deltalog.expressions

import java.time.{Instant, LocalDate, LocalDateTime}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.function.Executable

import io.deltalog.exceptions.DeltalogException

class PredicateParserSuite {

  private def parse(s: String): Predicate = PredicateParser.parse(s)
  private def col(n: String) = Column(n)
  private def lit(v: Any) = Literal(v)

  private def parseError(sql: String): PredicateParseException =
    assertThrows(classOf[PredicateParseException], new Executable {
      def execute(): Unit = PredicateParser.parse(sql)
    })

  /** Parses, renders, re-parses: the tree survives and the rendering is stable. */
  private def roundTrip(sql: String): Predicate = {
    val p = parse(sql)
    val again = parse(p.sql)
    assertEquals(p, again, s"round trip of '$sql' via '${p.sql}'")
    assertEquals(p.sql, again.sql)
    p
  }

  private def literalOf(sql: String): Any = parse(s"c = $sql") match {
    case EqualTo(Column("c"), Literal(v)) => v
    case other => fail(s"unexpected $other")
  }

  // -------------------------------------------------------------------------------- operators

  @Test def comparisonOperators(): Unit = {
    assertEquals(EqualTo(col("a"), lit(1L)), parse("a = 1"))
    assertEquals(EqualTo(col("a"), lit(1L)), parse("a == 1"))
    assertEquals(NotEqualTo(col("a"), lit(1L)), parse("a != 1"))
    assertEquals(NotEqualTo(col("a"), lit(1L)), parse("a <> 1"))
    assertEquals(LessThan(col("a"), lit(1L)), parse("a < 1"))
    assertEquals(LessThanOrEqual(col("a"), lit(1L)), parse("a <= 1"))
    assertEquals(GreaterThan(col("a"), lit(1L)), parse("a > 1"))
    assertEquals(GreaterThanOrEqual(col("a"), lit(1L)), parse("a >= 1"))
    assertEquals(NullSafeEqualTo(col("a"), lit(null)), parse("a <=> NULL"))
    assertEquals(GreaterThan(lit(1L), col("a")), parse("1 > a"))
    assertEquals(EqualTo(col("a"), col("b")), parse("a = b"))
    assertEquals(EqualTo(col("a"), lit(1L)), parse("a=1"))
    assertEquals(LessThanOrEqual(col("a"), lit(-1L)), parse("a<=-1"))
  }

  @Test def inAndNotIn(): Unit = {
    assertEquals(In(col("r"), Seq(lit("eu"), lit("us"))), parse("r IN ('eu','us')"))
    assertEquals(In(col("r"), Seq(lit(1L))), parse("r in (1)"))
    assertEquals(Not(In(col("r"), Seq(lit(1L), lit(null)))), parse("r NOT IN (1, NULL)"))
    assertEquals(In(col("r"), Seq(lit(1L), col("s"))), parse("r IN (1, s)"))
  }

  @Test def isNullAndIsNotNull(): Unit = {
    assertEquals(IsNull(col("a")), parse("a IS NULL"))
    assertEquals(IsNotNull(col("a")), parse("a is not null"))
    assertEquals(Not(IsNull(col("a"))), parse("NOT a IS NULL"))
  }

  @Test def likePrefix(): Unit = {
    assertEquals(StartsWith(col("a"), "abc"), parse("a LIKE 'abc%'"))
    assertEquals(StartsWith(col("a"), "abc"), parse("a LIKE 'abc%%'"))
    assertEquals(StartsWith(col("a"), ""), parse("a LIKE '%'"))
    assertEquals(Not(StartsWith(col("a"), "x")), parse("a NOT LIKE 'x%'"))
    assertEquals(StartsWith(col("a"), "100%"), parse("a LIKE '100\\%%'"))
    assertEquals(StartsWith(col("a"), "100%"), parse("a LIKE '100\\\\%%'"))
    assertEquals(StartsWith(col("a"), "a_b"), parse("a LIKE 'a\\_b%'"))
    // no wildcard at all: an exact match
    assertEquals(EqualTo(col("a"), lit("abc")), parse("a LIKE 'abc'"))
  }

  @Test def likeOtherPatternsAreRejected(): Unit = {
    for (pat <- Seq("'%abc'", "'a%b'", "'a_c%'", "'_'", "'a%b%'")) {
      val sql = s"a LIKE $pat"
      val e = parseError(sql)
      assertEquals(sql.indexOf('\''), e.position, sql)
      assertTrue(e.getMessage.contains("prefix patterns"), e.getMessage)
      assertEquals("DELTA_INVALID_PREDICATE", e.errorClass)
    }
    val e = parseError("a LIKE 'x%' ESCAPE '!'")
    assertTrue(e.getMessage.contains("ESCAPE"))
  }

  @Test def between(): Unit = {
    assertEquals(And(GreaterThanOrEqual(col("a"), lit(1L)), LessThanOrEqual(col("a"), lit(5L))),
      parse("a BETWEEN 1 AND 5"))
    assertEquals(Not(And(GreaterThanOrEqual(col("d"), lit(LocalDate.of(2024, 1, 1))),
      LessThanOrEqual(col("d"), lit(LocalDate.of(2024, 1, 31))))),
      parse("d NOT BETWEEN DATE '2024-01-01' AND DATE '2024-01-31'"))
    // the AND of BETWEEN binds to BETWEEN, the next AND is a conjunction
    assertEquals(And(And(GreaterThanOrEqual(col("a"), lit(1L)), LessThanOrEqual(col("a"), lit(5L))),
      EqualTo(col("b"), lit(2L))), parse("a BETWEEN 1 AND 5 AND b = 2"))
  }

  @Test def booleanConnectivesAndPrecedence(): Unit = {
    val a = EqualTo(col("a"), lit(1L))
    val b = EqualTo(col("b"), lit(2L))
    val c = EqualTo(col("c"), lit(3L))
    assertEquals(Or(a, And(b, c)), parse("a = 1 OR b = 2 AND c = 3"))
    assertEquals(Or(And(a, b), c), parse("a = 1 AND b = 2 OR c = 3"))
    assertEquals(And(Or(a, b), c), parse("(a = 1 OR b = 2) AND c = 3"))
    assertEquals(Or(Not(a), b), parse("NOT a = 1 OR b = 2"))
    assertEquals(Not(Or(a, b)), parse("NOT (a = 1 OR b = 2)"))
    assertEquals(And(Not(Not(a)), b), parse("not not a = 1 and b = 2"))
    assertEquals(And(And(a, b), c), parse("a = 1 AND b = 2 AND c = 3")) // left-associative
    assertEquals(Or(Or(a, b), c), parse("a = 1 OR b = 2 OR c = 3"))
    assertEquals(a, parse("((a = 1))"))
  }

  @Test def keywordsAreCaseInsensitive(): Unit = {
    assertEquals(parse("a IS NOT NULL AND b IN (1) OR NOT c LIKE 'x%' AND d BETWEEN 1 AND 2"),
      parse("a is NoT nUlL and b in (1) or not c like 'x%' aNd d between 1 and 2"))
    assertEquals(lit(true), Literal(literalOf("tRuE")))
    assertEquals(LocalDate.of(2024, 1, 1), literalOf("date '2024-01-01'"))
  }

  @Test def constantsAndBareColumns(): Unit = {
    assertEquals(AlwaysTrue, parse("TRUE"))
    assertEquals(AlwaysFalse, parse("false"))
    assertEquals(EqualTo(col("flag"), lit(true)), parse("flag"))
    assertEquals(And(EqualTo(col("flag"), lit(true)), AlwaysTrue), parse("flag AND true"))
    assertEquals(EqualTo(lit(true), col("flag")), parse("TRUE = flag"))
  }

  // -------------------------------------------------------------------------------- identifiers

  @Test def identifiers(): Unit = {
    assertEquals(Set("a.b"), parse("a.b = 1").references)
    assertEquals(EqualTo(col("a.b"), lit(1L)), parse("a . b = 1"))
    assertEquals(EqualTo(col("a.b"), lit(1L)), parse("`a`.`b` = 1"))
    assertEquals(EqualTo(col("my col"), lit(1L)), parse("`my col` = 1"))
    assertEquals(EqualTo(col("we`ird"), lit(1L)), parse("`we``ird` = 1"))
    assertEquals(EqualTo(col("and"), lit(1L)), parse("`and` = 1"))
    assertEquals(EqualTo(col("_x9"), lit(1L)), parse("_x9 = 1"))
    // date / timestamp are column names unless followed by a string
    assertEquals(EqualTo(col("date"), lit("2024-01-01")), parse("date = '2024-01-01'"))
    assertEquals(EqualTo(col("timestamp"), col("x")), parse("timestamp = x"))
    assertEquals(Set("a", "b.c", "d"), parse("a = 1 AND (`b.c` IN (1, d) OR a IS NULL)").references)
  }

  @Test def columnRendering(): Unit = {
    assertEquals("a", col("a").sql)
    assertEquals("a.b", col("a.b").sql)
    assertEquals("`my col`", col("my col").sql)
    assertEquals("`and`", col("and").sql)
    assertEquals("`we``ird`", col("we`ird").sql)
    assertEquals("`1a`", col("1a").sql)
    assertEquals("`a.`", col("a.").sql)
    for (n <- Seq("a", "a.b", "my col", "and", "we`ird", "1a", "a.", "Ünïcode", "x y.z"))
      assertEquals(EqualTo(col(n), lit(1L)), parse(s"${col(n).sql} = 1"), n)
  }

  // -------------------------------------------------------------------------------- literals

  @Test def stringLiterals(): Unit = {
    assertEquals("it's", literalOf("'it''s'"))
    assertEquals("it's", literalOf("'it\\'s'"))
    assertEquals("say \"hi\"", literalOf("\"say \"\"hi\"\"\""))
    assertEquals("a\\b", literalOf("'a\\\\b'"))
    assertEquals("tab\there", literalOf("'tab\\there'"))
    assertEquals("\u00e9", literalOf("'\\u00e9'"))
    assertEquals("", literalOf("''"))
    assertEquals("New York", literalOf("'New York'"))
    assertEquals("a:b", literalOf("'a:b'"))
    assertEquals("100%", literalOf("'100%'"))
    assertEquals("日本", literalOf("'日本'"))
  }

  @Test def numericLiterals(): Unit = {
    assertEquals(42L, literalOf("42"))
    assertEquals(-42L, literalOf("-42"))
    assertEquals(42L, literalOf("+42"))
    assertEquals(Long.MaxValue, literalOf("9223372036854775807"))
    assertEquals(Long.MinValue, literalOf("-9223372036854775808"))
    assertEquals(BigDecimal("9223372036854775808"), literalOf("9223372036854775808"))
    assertEquals(classOf[BigDecimal], literalOf("1.10").getClass)
    assertEquals(BigDecimal("1.10"), literalOf("1.10"))
    assertEquals(BigDecimal("-0.5"), literalOf("-.5"))
    assertEquals(1000.0, literalOf("1e3"))
    assertTrue(literalOf("1.5E-2").isInstanceOf[Double])
    assertEquals(0.015, literalOf("1.5E-2"))
    assertEquals(7L, literalOf("7L"))
    assertEquals(7L, literalOf("7S"))
    assertEquals(7L, literalOf("7Y"))
    assertEquals(1.5, literalOf("1.5D"))
    assertEquals(0.1, literalOf("0.1F"))
    assertEquals(BigDecimal(5), literalOf("5BD"))
    assertEquals(classOf[BigDecimal], literalOf("5bd").getClass)
  }

  @Test def typedLiterals(): Unit = {
    assertNull(literalOf("NULL"))
    assertEquals(true, literalOf("TRUE"))
    assertEquals(false, literalOf("FALSE"))
    assertEquals(LocalDate.of(2024, 1, 1), literalOf("DATE '2024-01-01'"))
    assertEquals(Instant.parse("2024-01-01T00:00:00Z"), literalOf("TIMESTAMP '2024-01-01 00:00:00'"))
    assertEquals(Instant.parse("2024-01-01T00:00:00.123456Z"), literalOf("TIMESTAMP '2024-01-01 00:00:00.123456'"))
    assertEquals(Instant.parse("2023-12-31T23:00:00Z"), literalOf("TIMESTAMP '2024-01-01T00:00:00+01:00'"))
    assertEquals(Instant.parse("2024-01-01T00:00:00Z"), literalOf("TIMESTAMP '2024-01-01'"))
    assertEquals(Instant.parse("2024-01-01T00:00:00Z"), literalOf("TIMESTAMP_LTZ '2024-01-01 00:00:00Z'"))
    assertEquals(LocalDateTime.of(2024, 1, 1, 10, 30, 0), literalOf("TIMESTAMP_NTZ '2024-01-01 10:30:00'"))
    assertArrayEquals(Array[Byte](0x0a, 0xff.toByte), literalOf("X'0AfF'").asInstanceOf[Array[Byte]])
  }

  // -------------------------------------------------------------------------------- rendering

  @Test def sqlRendering(): Unit = {
    assertEquals("((a = 1) AND (b IN ('x', 'y')))", parse("a = 1 AND b IN ('x','y')").sql)
    assertEquals("(NOT (a IS NULL))", parse("NOT a IS NULL").sql)
    assertEquals("(a LIKE 'p\\\\%q%')", parse("a LIKE 'p\\%q%'").sql)
    assertEquals("(d = DATE '2024-01-01')", parse("d = DATE '2024-01-01'").sql)
    assertEquals("(t = TIMESTAMP '2024-01-01 00:00:00.5Z')", parse("t = TIMESTAMP '2024-01-01 00:00:00.500'").sql)
    assertEquals("(s = 'it''s')", parse("s = 'it''s'").sql)
    assertEquals("(a <=> NULL)", parse("a <=> null").sql)
    assertEquals("(a != 1)", parse("a <> 1").sql)
    assertEquals("TRUE", AlwaysTrue.sql)
    assertEquals("(x = X'00FF')", EqualTo(col("x"), lit(Array[Byte](0, -1))).sql)
    assertEquals("(a = 'NaN')", EqualTo(col("a"), lit(Double.NaN)).sql)
  }

  @Test def roundTrips(): Unit = {
    val cases = Seq(
      "date = '2024-01-01' AND region IN ('eu','us')",
      "a = 1 OR b = 2 AND NOT c = 3",
      "(a = 1 OR b = 2) AND c <=> NULL",
      "a != 1 AND a <> 2 AND a < 3 AND a <= 4 AND a > 5 AND a >= 6 AND a == 7",
      "x IN (1, 2.5, 1e3, 7L, 5BD, -3) AND y NOT IN ('a', NULL)",
      "a IS NULL OR b IS NOT NULL",
      "p LIKE 'ab\\%c\\_d\\\\%' AND q NOT LIKE '%'",
      "v BETWEEN 1 AND 10 OR v NOT BETWEEN 'a' AND 'b'",
      "d = DATE '2024-02-29' AND t > TIMESTAMP '2024-01-01 12:34:56.123456+02:00' " +
        "AND n < TIMESTAMP_NTZ '2024-01-01 00:00:00.000001'",
      "`my col` = 'it''s' AND `a.b`.c = \"x\\ny\" AND `select` = X'DEADBEEF'",
      "flag AND TRUE OR FALSE",
      "s = '日本' OR s = '\\u0000'"
    )
    cases.foreach(roundTrip)
    // programmatic trees with every literal class
    val tree = Predicate.and(Seq(
      EqualTo(col("l"), lit(-5L)), EqualTo(col("d"), lit(-1.25)), EqualTo(col("e"), lit(1e300)),
      EqualTo(col("bd"), lit(BigDecimal("-12.3400"))), EqualTo(col("bi"), lit(BigDecimal(10).pow(30))),
      EqualTo(col("s"), lit("a'b\\c")), EqualTo(col("dt"), lit(LocalDate.of(1, 1, 1))),
      EqualTo(col("ts"), lit(Instant.parse("1969-12-31T23:59:59.999999999Z"))),
      EqualTo(col("ntz"), lit(LocalDateTime.of(9999, 12, 31, 23, 59, 59))),
      EqualTo(col("b"), lit(Array[Byte](1, 2, 3))), StartsWith(col("p"), "%_\\'"),
      In(col("i"), Seq(lit(null), lit(true), lit(false))), Not(AlwaysFalse)))
    val back = parse(tree.sql)
    assertEquals(tree, back, tree.sql)
    assertEquals(tree.sql, back.sql)
  }

  @Test def predicateHelpers(): Unit = {
    val a = EqualTo(col("a"), lit(1L))
    val b = IsNull(col("b"))
    assertEquals(AlwaysTrue, Predicate.and(Nil))
    assertEquals(AlwaysFalse, Predicate.or(Nil))
    assertEquals(And(a, b), Predicate.and(Seq(a, b)))
    assertEquals(Seq(a, b, a), Predicate.splitConjuncts(And(a, And(b, a))))
    assertEquals(Literal(1L), Literal.of(1))
    assertEquals(classOf[java.lang.Long], Literal.of(1).value.getClass)
    assertEquals(LocalDate.of(2024, 1, 1), Literal.of(java.sql.Date.valueOf("2024-01-01")).value)
    assertEquals(BigDecimal("1.5"), Literal.of(new java.math.BigDecimal("1.5")).value)
    assertEquals(Literal(Array[Byte](1)), Literal(Array[Byte](1)))
    assertEquals(Literal(Array[Byte](1)).hashCode, Literal(Array[Byte](1)).hashCode)
    assertEquals(Literal(Double.NaN), Literal(Double.NaN))
    assertNotEquals(Literal("1"), Literal(1L))
  }

  // -------------------------------------------------------------------------------- errors

  @Test def errorsNamePositionAndExpectation(): Unit = {
    def check(sql: String, pos: Int, fragment: String): Unit = {
      val e = parseError(sql)
      assertEquals(pos, e.position, s"position for '$sql': ${e.getMessage}")
      assertTrue(e.reason.contains(fragment), s"'$fragment' not in: ${e.reason}")
      assertTrue(e.getMessage.contains(s"position $pos"), e.getMessage)
      assertTrue(e.getMessage.startsWith("[DELTA_INVALID_PREDICATE]"), e.getMessage)
      assertEquals(sql, e.sql)
      assertTrue(e.isInstanceOf[DeltalogException])
    }
    check("", 0, "expected a predicate")
    check("   ", 3, "expected a predicate")
    check("a =", 3, "expected a column or a literal")
    check("a = 1 AND", 9, "expected a column or a literal")
    check("a = 1 b = 2", 6, "expected AND, OR or end of input")
    check("(a = 1", 6, "expected ')' to close the '(' at position 0")
    check("a = 1)", 5, "unbalanced ')'")
    check("a IN ()", 6, "at least one value")
    check("a IN (1, 2", 10, "expected ',' or ')'")
    check("a IN 1", 5, "expected '('")
    check("a IS 1", 5, "expected NULL")
    check("a IS NOT 1", 9, "expected NULL")
    check("a NOT = 1", 6, "IN, LIKE or BETWEEN after NOT")
    check("a BETWEEN 1 OR 2", 12, "expected AND in BETWEEN")
    check("a LIKE b", 7, "expected a string pattern")
    check("a = 'abc", 4, "unterminated string literal")
    check("`abc = 1", 0, "unterminated backticked identifier")
    check("`` = 1", 0, "non-empty column name")
    check("a = DATE '2024-13-01'", 9, "invalid DATE literal")
    check("a = TIMESTAMP 'noon'", 14, "invalid TIMESTAMP literal")
    check("a = TIMESTAMP_NTZ '2024-01-01 00:00:00Z'", 18, "without a time zone offset")
    check("a = X'ABC'", 4, "hex digits")
    check("a = 1 AND AND", 10, "keyword AND")
    check("a = 12abc", 4, "malformed number")
    check("a = 1e", 5, "exponent")
    check("a = 300Y", 4, "out of range")
    check("a = 1.5L", 4, "integer suffix")
    check("a # 1", 2, "unexpected character '#'")
    check("a = - b", 6, "a number after unary '-'")
    check("1", 0, "found the value 1 alone")
    check("'x' AND a = 1", 0, "found the value 'x' alone")
    check("a.", 2, "a name after '.'")
    check("a = 1 OR ()", 10, "expected a predicate")
    check("a = 'x\\u12'", 6, "4 hex digits")
  }

  @Test def longFlatChainsAreNotNesting(): Unit = {
    val n = 20000
    val p = parse((1 to n).map(i => s"c = $i").mkString(" OR "))
    assertEquals(n, Predicate.splitDisjuncts(p).size)
    assertEquals(Set("c"), p.references)
    assertEquals(p, parse(p.sql))
    assertEquals(p.hashCode, parse(p.sql).hashCode)
    assertTrue(p.sql.startsWith("((c = 1) OR (c = 2) OR "), p.sql.take(50))
    assertTrue(PartitionPredicates.matches(p, Map("c" -> "19999"), Map("c" -> "integer")))
    assertFalse(PartitionPredicates.matches(p, Map("c" -> "0"), Map("c" -> "integer")))
    val conj = Predicate.and((1 to n).map(i => NotEqualTo(col("c"), lit(i.toLong))))
    assertEquals(n, Predicate.splitConjuncts(conj).size)
    assertEquals(conj, parse(conj.sql))
    assertTrue(PartitionPredicates.matches(conj, Map("c" -> "0"), Map("c" -> "integer")))
  }

  @Test def nestingIsBounded(): Unit = {
    val m = PredicateParser.MaxNesting
    // at the limit: parses, renders within the limit, and round-trips
    val deepParens = parse("(" * m + "a = 1" + ")" * m)
    assertEquals(EqualTo(col("a"), lit(1L)), deepParens)
    val nots = parse("NOT " * ((m - 1) / 2) + "a = 1")
    assertEquals(m - 1, Predicate.sqlDepth(nots))
    assertEquals(nots, parse(nots.sql))
    val alternating = parse((1 until m).foldLeft("a = 1")((acc, i) =>
      if (i % 2 == 0) s"a = 1 AND ($acc)" else s"a = 2 OR $acc"))
    assertEquals(alternating, parse(alternating.sql))
    // beyond: a typed error, never a StackOverflowError
    val e1 = parseError("(" * (m + 1) + "a = 1" + ")" * (m + 1))
    assertEquals(m, e1.position)
    assertTrue(e1.reason.contains(s"at most $m levels"), e1.reason)
    parseError("(" * 100000 + "a = 1" + ")" * 100000)
    parseError("NOT " * 100000 + "a = 1")
    val e2 = parseError("NOT " * ((m - 1) / 2 + 1) + "a = 1") // fine as text, too deep as rendered
    assertTrue(e2.reason.contains("when rendered"), e2.reason)
  }

  @Test def nullInputIsATypedError(): Unit = {
    val e = parseError(null)
    assertEquals(0, e.position)
  }
}
