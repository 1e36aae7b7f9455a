package io.deltalog.commands

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{LeafExpression, Nondeterministic}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{DataType, LongType}

/**
 * Values of an identity column (digest §6.5): with `base` = highWaterMark + step (or start when
 * nothing was generated yet), task `i` of `n` yields `base + step * (i + k * n)` for k = 0, 1, ...
 * Values are unique, of the form start + m·step, and beyond the high-water mark; overflow fails
 * the write.
 */
final case class IdentityValues(base: Long, step: Long, table: String, column: String)
  extends LeafExpression with Nondeterministic with CodegenFallback {

  @transient private var next: Long = _
  @transient private var increment: Long = _
  @transient private var first: Boolean = _

  override def nullable: Boolean = false
  override def dataType: DataType = LongType

  override protected def initializeInternal(partitionIndex: Int): Unit = {
    val numPartitions = Option(TaskContext.get()).map(_.numPartitions()).getOrElse(1)
    next = overflowChecked(Math.addExact(base, Math.multiplyExact(partitionIndex.toLong, step)))
    increment = overflowChecked(Math.multiplyExact(numPartitions.toLong, step))
    first = true
  }

  override protected def evalInternal(input: InternalRow): Any = {
    if (!first) next = overflowChecked(Math.addExact(next, increment))
    first = false
    next
  }

  private def overflowChecked(f: => Long): Long =
    try f
    catch {
      case _: ArithmeticException =>
        throw new ConstraintViolationException("DELTA_IDENTITY_OVERFLOW", table,
          s"identity column $column", "the next value overflows a long",
          "Recreate the column with a start / step that leaves room for more values.")
    }

  override def toString: String = s"identity($column)"
}
