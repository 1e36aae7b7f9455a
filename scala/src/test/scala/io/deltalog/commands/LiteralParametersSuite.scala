package io.deltalog.commands

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, GenerateUnsafeProjection}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * [[LiteralParameters]]: which constants of a DML condition become parameters of the generated code
 * (so that statements differing only in them share compiled code), which stay literals, and that
 * the condition's value does not change.
 */
class LiteralParametersSuite {
  private val id = AttributeReference("id", LongType)()
  private val s = AttributeReference("s", StringType)()

  private def parameters(e: Expression): Seq[Any] = e.collect { case p: ParameterLiteral => p.value }
  private def literals(e: Expression): Seq[Any] = e.collect { case l: Literal => l.value }
  private def row(idValue: Long, sValue: String) = InternalRow(idValue, UTF8String.fromString(sValue))
  private def bind(e: Expression) = BindReferences.bindReference(e, Seq(id, s))

  /** The generated code of `e` (bound to the row `id, s`) and its reference count. */
  private def code(e: Expression): (String, Int) = {
    val ctx = new CodegenContext
    val ev = bind(e).genCode(ctx)
    (ev.code.toString + ctx.declareMutableStates() + ctx.declareAddedFunctions(), ctx.references.size)
  }

  private def cond(k: Long): Expression =
    EqualTo(Remainder(id, Cast(Literal(1000), LongType)), Add(Literal(k), Literal(500L)))

  @Test def arithmeticOperandsAndFoldedCastsBecomeParameters(): Unit = {
    val p = LiteralParameters(cond(7))
    assertEquals(Seq(1000L, 507L), parameters(p)) // the cast and the sum folded to the values Spark would use
    assertEquals(Nil, literals(p))
    for (i <- Seq(0L, 7L, 507L, 1507L, 2508L)) {
      assertEquals(bind(cond(7)).eval(row(i, "x")), bind(p).eval(row(i, "x")), s"id=$i")
    }
  }

  @Test def conditionsDifferingInConstantsGenerateTheSameCode(): Unit = {
    val (a, refsA) = code(LiteralParameters(cond(7)))
    val (b, refsB) = code(LiteralParameters(cond(8)))
    assertEquals(a, b)
    assertEquals(refsA, refsB)
    assertNotEquals(code(cond(7))._1, code(cond(8))._1) // as Spark generates them: the values are in the code
  }

  @Test def columnVersusLiteralComparisonsStayPushable(): Unit = {
    for (e <- Seq(EqualTo(id, Literal(5L)), LessThan(Literal(3L), id), GreaterThanOrEqual(Cast(id, DoubleType), Literal(2.5)),
        EqualTo(s, Literal(UTF8String.fromString("a"))))) {
      assertEquals(e, LiteralParameters(e), e.toString)
    }
    val both = And(EqualTo(id, Literal(5L)), GreaterThan(Add(id, Literal(1L)), Literal(10L)))
    val p = LiteralParameters(both)
    assertEquals(Seq(5L), literals(p))
    assertEquals(Seq(1L, 10L), parameters(p))
  }

  @Test def functionArgumentsListsAndNullsAreLeftAlone(): Unit = {
    val like = Like(s, Literal(UTF8String.fromString("a%")), '\\')
    assertEquals(like, LiteralParameters(like))
    val in = In(Add(id, Literal(1L)), Seq(Literal(2L), Literal(3L)))
    assertEquals(Seq(1L), parameters(LiteralParameters(in)))
    assertEquals(Seq(2L, 3L), literals(LiteralParameters(in)))
    val nullOperand = EqualTo(Add(id, Literal(null, LongType)), Add(id, Literal(1L)))
    assertEquals(Seq(null), literals(LiteralParameters(nullOperand)))
    val substr = EqualTo(Substring(s, Literal(1), Literal(2)), Literal(UTF8String.fromString("ab")))
    val ps = LiteralParameters(substr)
    assertEquals(Seq(UTF8String.fromString("ab")), parameters(ps))
    assertEquals(Seq(1, 2), literals(ps))
    assertEquals(true, bind(ps).eval(row(1L, "abc")))
  }

  @Test def parametersOfEveryTypeReadTheirValueInGeneratedCode(): Unit = {
    val values: Seq[(Any, DataType)] = Seq((true, BooleanType), (3.toByte, ByteType), (4.toShort, ShortType), (5, IntegerType),
      (6L, LongType), (1.5f, FloatType), (2.5, DoubleType), (19000, DateType), (1700000000000000L, TimestampType),
      (Decimal(BigDecimal("12.34"), 10, 2), DecimalType(10, 2)), (UTF8String.fromString("z"), StringType))
    for ((v, t) <- values) {
      val projection = GenerateUnsafeProjection.generate(Seq(ParameterLiteral(v, t))) // generated code only
      assertEquals(InternalRow(v).get(0, t), projection(InternalRow.empty).get(0, t), t.toString)
    }
  }
}
