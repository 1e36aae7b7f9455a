package io.deltalog.commands

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal, Nondeterministic}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BooleanType, DataType}

/**
 * Evaluates `condition` for a written row and returns true, or throws a
 * [[ConstraintViolationException]] naming the rule and the row's values of `values` when the
 * condition is false or null. Used as a filter that never drops a row; nondeterministic so that
 * the optimizer neither moves nor removes it.
 */
final case class ConstraintCheck(
    condition: Expression,
    values: Seq[Expression],
    valueNames: Seq[String],
    errorClass: String,
    table: String,
    rule: String,
    hint: String) extends Expression with Nondeterministic with CodegenFallback {

  override def children: Seq[Expression] = condition +: values
  override def nullable: Boolean = false
  override def dataType: DataType = BooleanType

  override protected def initializeInternal(partitionIndex: Int): Unit = ()

  override protected def evalInternal(input: InternalRow): Any = {
    val ok = condition.eval(input)
    if (ok == true) true
    else {
      val shown = valueNames.zip(values).map { case (n, e) =>
        val v = e.eval(input)
        s"$n = ${if (v == null) "NULL" else Literal(v, e.dataType).toString}"
      }
      throw new ConstraintViolationException(errorClass, table, rule,
        if (shown.isEmpty) "(none)" else shown.mkString(", "), hint)
    }
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Expression =
    copy(condition = newChildren.head, values = newChildren.tail)

  override def toString: String = s"deltalog_check($rule)"
}
