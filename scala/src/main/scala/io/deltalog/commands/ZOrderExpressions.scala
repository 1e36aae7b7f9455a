package io.deltalog.commands

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, IntegerType}

/**
 * The rank of a value among a column's range boundaries (the ~[[ZOrder.NumRanges]] - 1 approximate
 * quantiles of the column's sort key, sorted, repeats kept): the number of boundaries below it, or
 * for a value that equals a run of boundaries (a frequent value) the middle of that run, so that the
 * ranks' high bits halve the rows whatever the column's cardinality. 0 for null. delta-spark computes
 * the same kind of rank with `range_partition_id` (a range partitioner's partition id).
 */
final case class ZOrderRank(child: Expression, bounds: Array[Double]) extends UnaryExpression with CodegenFallback {
  override def dataType: DataType = IntegerType
  override def nullable: Boolean = false

  /** The first index whose boundary is >= v (`strict`: > v). */
  private def search(v: Double, strict: Boolean): Int = {
    var lo = 0
    var hi = bounds.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      val b = bounds(mid)
      if (b < v || (strict && b == v)) lo = mid + 1 else hi = mid
    }
    lo
  }

  override def eval(input: InternalRow): Any = {
    val v = child.eval(input)
    if (v == null) 0 else {
      val d = v.asInstanceOf[Double]
      val lower = search(d, strict = false)
      val upper = search(d, strict = true)
      if (lower == upper) lower else (lower + upper) / 2
    }
  }

  override protected def withNewChildInternal(newChild: Expression): ZOrderRank = copy(child = newChild)
}

/**
 * The z-value of some ranks (each below 2^[[InterleaveBits.BitsPerRank]]): their bits interleaved,
 * most significant first, as bytes (compared unsigned, so sorting by it sorts rows along the Z curve),
 * as delta-spark's `interleave_bits`. With `numBits` below all the bits, only the first `numBits`
 * (the Z curve's cell at that depth, the last byte padded with zeros).
 */
final case class InterleaveBits(children: Seq[Expression], numBits: Int) extends Expression with CodegenFallback {
  override def dataType: DataType = BinaryType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val n = children.size
    val ranks = new Array[Int](n)
    var c = 0
    while (c < n) { ranks(c) = children(c).eval(input).asInstanceOf[Int]; c += 1 }
    val out = new Array[Byte]((numBits + 7) / 8)
    var pos = 0
    var bit = InterleaveBits.BitsPerRank - 1
    while (bit >= 0 && pos < numBits) {
      c = 0
      while (c < n && pos < numBits) {
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
  /** Bits of a rank: ranks are below [[ZOrder.NumRanges]] = 2^10. */
  val BitsPerRank = 10
}
