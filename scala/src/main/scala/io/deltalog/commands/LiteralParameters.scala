package io.deltalog.commands

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BinaryArithmetic, BinaryComparison, Cast, Expression,
  GetStructField, LeafExpression, Literal}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types._

/**
 * A literal that Spark's generated code reads from the plan's references instead of spelling it in
 * the code: two DML statements that differ only in such values (`DELETE … WHERE id % 1000 = 7`,
 * then `= 8`) generate the same code, so the second reuses the first's compiled and JIT-optimized
 * class instead of compiling a new one and running it cold (on two cores the JIT compiling a fresh
 * scan loop costs a statement over 10M rows about a third of its time). Not foldable, so the
 * optimizer leaves it in place.
 */
private[commands] final case class ParameterLiteral(value: Any, dataType: DataType) extends LeafExpression {
  override def nullable: Boolean = false
  override def foldable: Boolean = false
  override def eval(input: InternalRow): Any = value

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val javaType = CodeGenerator.javaType(dataType)
    val ref = ctx.addReferenceObj("parameter", value, CodeGenerator.boxedType(dataType))
    val read = if (CodeGenerator.isPrimitiveType(dataType)) s"$ref.${javaType}Value()" else ref
    ev.copy(code = code"$javaType ${ev.value} = $read;", isNull = FalseLiteral)
  }

  override def toString: String = Literal(value, dataType).toString
  override def sql: String = Literal(value, dataType).sql
}

/**
 * Turns the constants of a resolved DML condition that Spark would spell into generated code into
 * [[ParameterLiteral]]s: constant operands (literals, or constant expressions such as the casts the
 * analyzer puts around them) of arithmetic, and of comparisons that are not "column op literal"
 * (those stay literals: Spark pushes them into the Parquet reader to skip row groups). Constants
 * anywhere else (function arguments such as a pattern or a format, IN lists) are left alone, since
 * Spark's functions may require or specialise on them.
 */
private[commands] object LiteralParameters {
  def apply(e: Expression): Expression = e match {
    case a: BinaryArithmetic => a.withNewChildren(a.children.map(operand))
    case c: BinaryComparison if !columnVersusLiteral(c) => c.withNewChildren(c.children.map(operand))
    case other => other.withNewChildren(other.children.map(apply))
  }

  /** An operand: a constant one (a literal, or one the optimizer would fold, such as `cast(5 AS bigint)`) as a parameter. */
  private def operand(e: Expression): Expression =
    if (e.foldable && e.deterministic && parameterizable(e.dataType)) {
      (try Option(e.eval()) catch { case NonFatal(_) => None }) match {
        case Some(v) => ParameterLiteral(v, e.dataType)
        case None => e // NULL, or an error the statement should raise as Spark would
      }
    } else apply(e)

  private def parameterizable(t: DataType): Boolean = t match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType |
         TimestampType | TimestampNTZType | _: DecimalType | _: StringType => true
    case _ => false
  }

  private def columnLike(e: Expression): Boolean = e match {
    case _: Attribute => true
    case g: GetStructField => columnLike(g.child)
    case c: Cast => columnLike(c.child)
    case _ => false
  }

  private def columnVersusLiteral(c: BinaryComparison): Boolean =
    (columnLike(c.left) && c.right.isInstanceOf[Literal]) || (columnLike(c.right) && c.left.isInstanceOf[Literal])
}
