package io.deltalog.commands

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, IntegerType}

/**
 * The rank of a value among a column's range boundaries (sorted, distinct approximate quantiles of
 * the column's sort key): 0 for null, else 1 + the number of boundaries below the value. delta-spark
 * computes the same kind of rank with `range_partition_id` (a range partitioner's partition id).
 */
final case class ZOrderRank(child: Expression, bounds: Array[Double]) extends UnaryExpression with CodegenFallback {
  override def dataType: DataType = IntegerType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val v = child.eval(input)
    if (v == null) 0 else {
      val i = java.util.Arrays.binarySearch(bounds, v.asInstanceOf[Double])
      (if (i >= 0) i else -i - 1) + 1
    }
  }

  override protected def withNewChildInternal(newChild: Expression): ZOrderRank = copy(child = newChild)
}

/**
 * The z-value of some ranks (each below 2^16): their bits interleaved, most significant first, as
 * bytes (compared unsigned, so sorting by it sorts rows along the Z curve), as delta-spark's
 * `interleave_bits`.
 */
final case class InterleaveBits(children: Seq[Expression]) extends Expression with CodegenFallback {
  override def dataType: DataType = BinaryType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val n = children.size
    val ranks = new Array[Int](n)
    var c = 0
    while (c < n) { ranks(c) = children(c).eval(input).asInstanceOf[Int]; c += 1 }
    val out = new Array[Byte]((InterleaveBits.BitsPerRank * n + 7) / 8)
    var pos = 0
    var bit = InterleaveBits.BitsPerRank - 1
    while (bit >= 0) {
      c = 0
      while (c < n) {
        if (((ranks(c) >>> bit) & 1) != 0) out(pos >> 3) = (out(pos >> 3) | (0x80 >>> (pos & 7))).toByte
        pos += 1
        c += 1
      }
      bit -= 1
    }
    out
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): InterleaveBits =
    copy(children = newChildren)
}

object InterleaveBits {
  val BitsPerRank = 16
}
