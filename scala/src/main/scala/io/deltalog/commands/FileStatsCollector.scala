package io.deltalog.commands

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * Statistics of one data file, updated row by row while the file is written (executor side).
 * Rows are the written data rows (partition columns left out), in the physical column order.
 */
final class FileStatsCollector(spec: StatsSpec) {
  private val roots: Array[Acc] = spec.fields.map(FileStatsCollector.build).toArray
  private var rows = 0L

  def numRecords: Long = rows

  def update(row: InternalRow): Unit = {
    rows += 1
    var i = 0
    while (i < roots.length) { roots(i).update(row); i += 1 }
  }

  /** `{"numRecords":..,"minValues":..,"maxValues":..,"nullCount":..,"tightBounds":true}`. */
  def toJson: String = StatsJson.render(rows, roots.toSeq, spec.stringPrefixLength)
}

/** One node of the accumulator tree. */
private[commands] sealed abstract class Acc(val name: String, val ordinal: Int) {
  def update(row: InternalRow): Unit
  /** Counts a null for every leaf below (the enclosing struct is null). */
  def addNull(): Unit
}

private[commands] final class StructAcc(name: String, ordinal: Int, numFields: Int, val children: Array[Acc])
  extends Acc(name, ordinal) {
  override def update(row: InternalRow): Unit =
    if (row.isNullAt(ordinal)) addNull()
    else {
      val s = row.getStruct(ordinal, numFields)
      var i = 0
      while (i < children.length) { children(i).update(s); i += 1 }
    }
  override def addNull(): Unit = children.foreach(_.addNull())
}

/** A leaf: nullCount always; min/max for skipping-eligible types. */
private[commands] abstract class LeafAcc(name: String, ordinal: Int, val dataType: DataType)
  extends Acc(name, ordinal) {
  var nullCount = 0L
  /** False once a value makes the bounds unusable (NaN). */
  var boundsValid = true
  var hasValue = false
  /** False when the null count is not known (statistics taken from a file footer that lacks it). */
  def nullCountKnown: Boolean = true
  override def addNull(): Unit = nullCount += 1
  override final def update(row: InternalRow): Unit =
    if (row.isNullAt(ordinal)) nullCount += 1 else { value(row); hasValue = true }
  protected def value(row: InternalRow): Unit
  /** (min, max) as Scala values for JSON rendering; None when not recorded. */
  def bounds: Option[(Any, Any)]
}

private[commands] final class NullCountOnly(name: String, ordinal: Int, dt: DataType)
  extends LeafAcc(name, ordinal, dt) {
  protected def value(row: InternalRow): Unit = ()
  def bounds: Option[(Any, Any)] = None
}

private[commands] final class LongAcc(name: String, ordinal: Int, dt: DataType) extends LeafAcc(name, ordinal, dt) {
  private var min = Long.MaxValue
  private var max = Long.MinValue
  private val kind = dt match {
    case ByteType => 0
    case ShortType => 1
    case IntegerType | DateType => 2
    case _ => 3
  }
  protected def value(row: InternalRow): Unit = {
    val v: Long = kind match {
      case 0 => row.getByte(ordinal).toLong
      case 1 => row.getShort(ordinal).toLong
      case 2 => row.getInt(ordinal).toLong
      case _ => row.getLong(ordinal)
    }
    if (v < min) min = v
    if (v > max) max = v
  }
  def bounds: Option[(Any, Any)] = if (hasValue) Some((min, max)) else None
}

/**
 * Float and double. A NaN (which Spark orders above every number, while other engines compare it
 * false with everything) drops both bounds, so no reader can skip a file holding one.
 */
private[commands] final class DoubleAcc(name: String, ordinal: Int, dt: DataType) extends LeafAcc(name, ordinal, dt) {
  private var min = Double.PositiveInfinity
  private var max = Double.NegativeInfinity
  private val isFloat = dt == FloatType
  protected def value(row: InternalRow): Unit = {
    val v = if (isFloat) row.getFloat(ordinal).toDouble else row.getDouble(ordinal)
    if (v.isNaN) boundsValid = false
    else {
      if (v < min || (v == 0.0 && min == 0.0 && 1.0 / v < 0)) min = v
      if (v > max || (v == 0.0 && max == 0.0 && 1.0 / v > 0)) max = v
    }
  }
  /**
   * No bounds with a NaN, or with an infinite bound (which JSON cannot spell as a number). A zero
   * bound is signed outward whatever zeros the file holds (max `+0.0`, min `-0.0`, as Parquet asks
   * of writers): a file of `-0.0` only must not get `maxValues: -0.0`, which readers ordering
   * `-0.0 < 0.0` take as "below 0.0" and skip for `x >= 0.0`.
   */
  def bounds: Option[(Any, Any)] =
    if (!hasValue || !boundsValid || min > max || min.isInfinite || max.isInfinite) None
    else {
      val lo = if (min == 0.0) -0.0 else min
      val hi = if (max == 0.0) 0.0 else max
      if (isFloat) Some((lo.toFloat, hi.toFloat)) else Some((lo, hi))
    }
}

private[commands] final class DecimalAcc(name: String, ordinal: Int, dt: DecimalType)
  extends LeafAcc(name, ordinal, dt) {
  private var min: Decimal = _
  private var max: Decimal = _
  protected def value(row: InternalRow): Unit = {
    val v = row.getDecimal(ordinal, dt.precision, dt.scale)
    if (min == null || v.compare(min) < 0) min = v.clone()
    if (max == null || v.compare(max) > 0) max = v.clone()
  }
  def bounds: Option[(Any, Any)] =
    if (min == null) None else Some((min.toJavaBigDecimal, max.toJavaBigDecimal))
}

/** Strings compare as UTF-8 bytes (= code point order, Spark's ordering). */
private[commands] final class StringAcc(name: String, ordinal: Int, dt: DataType) extends LeafAcc(name, ordinal, dt) {
  private var min: UTF8String = _
  private var max: UTF8String = _
  protected def value(row: InternalRow): Unit = {
    val v = row.getUTF8String(ordinal)
    if (min == null || v.binaryCompare(min) < 0) min = v.copy()
    if (max == null || v.binaryCompare(max) > 0) max = v.copy()
  }
  def bounds: Option[(Any, Any)] = if (min == null) None else Some((min.toString, max.toString))
}

private[commands] object FileStatsCollector {
  def build(node: StatsNode): Acc = node match {
    case StructStatsNode(n, o, nf, kids) => new StructAcc(n, o, nf, kids.map(build).toArray)
    case LeafStatsNode(n, o, dt) => dt match {
      case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType =>
        new LongAcc(n, o, dt)
      case FloatType | DoubleType => new DoubleAcc(n, o, dt)
      case d: DecimalType => new DecimalAcc(n, o, d)
      // Binary (UTF-8 byte) order is the string order only for the default collation.
      case StringType => new StringAcc(n, o, dt)
      case other => new NullCountOnly(n, o, other)
    }
  }
}
