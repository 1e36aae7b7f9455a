package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.deltalog.actions.{Action, AddFile}

/**
 * What a file's statistics and partition values prove about a DELETE condition: that every row
 * of the file matches it (the file is removed without being read) or that none does (the file is
 * left alone without being read). Anything the proof does not understand is "unknown" and the file
 * is scanned.
 *
 * Bounds are used as bounds (`min <= value <= max` for every valid row), which also holds for the
 * wide bounds of files with deletion vectors and for truncated string statistics; a comparison
 * only proves "every row" when the column's `nullCount` is known to be 0 (a NULL never matches).
 *
 * @param condition        the resolved condition, columns as top-level attributes of the table
 * @param partitionColumns logical partition columns, lower case
 * @param physicalNames    logical column name (lower case) → physical name (stats and partition keys)
 */
private[commands] final class StatsProof(
    condition: Expression,
    partitionColumns: Set[String],
    physicalNames: Map[String, String],
    sessionTimeZone: String) {

  /** (every row matches, no row matches) for file `f`. */
  def prove(f: AddFile): (Boolean, Boolean) = prove(new FileFacts(f, physicalNames))

  /** [[prove]] over a file's already parsed statistics (built with this proof's `physicalNames`). */
  def prove(facts: FileFacts): (Boolean, Boolean) = {
    val r = eval(condition, facts)
    (r.all, r.none)
  }

  private final case class Result(all: Boolean, none: Boolean)
  private val Unknown = Result(all = false, none = false)

  private def key(a: Attribute): String = a.name.toLowerCase(Locale.ROOT)

  private def onlyPartitions(e: Expression): Boolean =
    e.references.nonEmpty && e.references.forall(a => partitionColumns.contains(key(a))) && e.deterministic

  private def eval(e: Expression, ctx: FileFacts): Result = e match {
    case Literal(true, BooleanType) => Result(all = true, none = false)
    case Literal(false, BooleanType) | Literal(null, _) => Result(all = false, none = true)
    case p if onlyPartitions(p) =>
      StatsProof.evalOnPartition(p, ctx.file.partitionValues, physicalNames, sessionTimeZone) match {
        case Some(true) => Result(all = true, none = false)
        case Some(false) => Result(all = false, none = true)
        case None => Unknown
      }
    case And(l, r) =>
      val (a, b) = (eval(l, ctx), eval(r, ctx)); Result(a.all && b.all, a.none || b.none)
    case Or(l, r) =>
      val (a, b) = (eval(l, ctx), eval(r, ctx)); Result(a.all || b.all, a.none && b.none)
    case IsNull(c: Attribute) => Result(ctx.allNull(key(c)), ctx.noNulls(key(c)))
    case IsNotNull(c: Attribute) => Result(ctx.noNulls(key(c)), ctx.allNull(key(c)))
    case b: BinaryComparison if !b.isInstanceOf[EqualNullSafe] =>
      (column(b.left), literal(b.right), column(b.right), literal(b.left)) match {
        case (Some(c), Some(v), _, _) => compare(b, c, v, ctx, flipped = false)
        case (_, _, Some(c), Some(v)) => compare(b, c, v, ctx, flipped = true)
        case _ => Unknown
      }
    case _ => Unknown
  }

  /** A data column, possibly widened by an order-preserving cast (integral to wider integral / decimal). */
  private def column(e: Expression): Option[Attribute] = e match {
    case a: Attribute if !partitionColumns.contains(key(a)) && StatsProof.comparable(a.dataType) => Some(a)
    case Cast(a: Attribute, to, _, _) if !partitionColumns.contains(key(a)) && StatsProof.integral(a.dataType) &&
        (StatsProof.integral(to) || to.isInstanceOf[DecimalType]) && StatsProof.wider(a.dataType, to) => Some(a)
    case _ => None
  }

  private def literal(e: Expression): Option[Literal] =
    if (e.foldable && e.deterministic && e.references.isEmpty) {
      try Some(Literal(e.eval(InternalRow.empty), e.dataType)) catch { case NonFatal(_) => None }
    } else None

  private def compare(b: BinaryComparison, c: Attribute, lit: Literal, ctx: FileFacts, flipped: Boolean): Result = {
    if (lit.value == null) return Result(all = false, none = true)
    val col = key(c)
    if (ctx.allNull(col)) return Result(all = false, none = true)
    val v = StatsProof.ordered(lit.value, lit.dataType).getOrElse(return Unknown)
    def bound(n: Option[JsonNode]) = n.flatMap(StatsProof.ordered(_, c.dataType))
    val (lo, hi) = (bound(ctx.min(col)), bound(ctx.max(col)))
    // `col op v`, the comparison turned around when the literal is on the left
    val op = (b, flipped) match {
      case (_: EqualTo, _) => "="
      case (_: GreaterThan, false) | (_: LessThan, true) => ">"
      case (_: GreaterThanOrEqual, false) | (_: LessThanOrEqual, true) => ">="
      case (_: LessThan, false) | (_: GreaterThan, true) => "<"
      case (_: LessThanOrEqual, false) | (_: GreaterThanOrEqual, true) => "<="
      case _ => return Unknown
    }
    def cmp(x: Option[Any], f: Int => Boolean): Boolean = x.exists(y => f(StatsProof.compareValues(y, v)))
    val noNulls = ctx.noNulls(col)
    op match {
      case ">" => Result(noNulls && cmp(lo, _ > 0), cmp(hi, _ <= 0))
      case ">=" => Result(noNulls && cmp(lo, _ >= 0), cmp(hi, _ < 0))
      case "<" => Result(noNulls && cmp(hi, _ < 0), cmp(lo, _ >= 0))
      case "<=" => Result(noNulls && cmp(hi, _ <= 0), cmp(lo, _ > 0))
      case "=" => Result(noNulls && cmp(lo, _ == 0) && cmp(hi, _ == 0), cmp(lo, _ > 0) || cmp(hi, _ < 0))
    }
  }
}

/**
 * A file's statistics, parsed once, by logical column name (lower case; `physicalNames` maps it to
 * the statistics' key). Values that are NULL or nested are absent.
 */
private[commands] final class FileFacts(val file: AddFile, physicalNames: Map[String, String]) {
  private val stats: Option[JsonNode] =
    file.stats.flatMap(s => try Option(io.deltalog.actions.ExactJson.readTree(s)) catch { case NonFatal(_) => None })
  val numRecords: Option[Long] = stats.flatMap(s => Option(s.get("numRecords"))).filter(_.canConvertToLong)
    .map(_.longValue())
  private def stat(kind: String, col: String): Option[JsonNode] =
    stats.flatMap(s => Option(s.get(kind))).flatMap(n => Option(n.get(physicalNames.getOrElse(col, col))))
      .filter(n => !n.isNull && !n.isContainerNode)
  def min(col: String): Option[JsonNode] = stat("minValues", col)
  def max(col: String): Option[JsonNode] = stat("maxValues", col)
  def nullCount(col: String): Option[Long] = stat("nullCount", col).filter(_.canConvertToLong).map(_.longValue())
  def noNulls(col: String): Boolean = nullCount(col).contains(0L)
  def allNull(col: String): Boolean = (nullCount(col), numRecords) match {
    case (Some(n), Some(r)) => n == r
    case _ => false
  }
  /** The file's partition value of a column, as a Catalyst value of `dataType` (see [[StatsProof.partitionValue]]). */
  def partitionValue(col: String, dataType: DataType, sessionTimeZone: String): Option[Any] =
    file.partitionValues.get(physicalNames.getOrElse(col, col))
      .map(raw => StatsProof.partitionValue(raw, dataType, sessionTimeZone))
}

private[commands] object StatsProof {
  /** A partition value as recorded in the log, cast to `dataType` (NULL for a missing / empty non-string value). */
  def partitionValue(raw: String, dataType: DataType, sessionTimeZone: String): Any =
    if (raw == null || (raw.isEmpty && !dataType.isInstanceOf[StringType])) null
    else Cast(Literal(UTF8String.fromString(raw), StringType), dataType, Some(sessionTimeZone)).eval(InternalRow.empty)

  def integral(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType => true
    case _ => false
  }

  private def width(dt: DataType): Int = dt match {
    case ByteType => 1
    case ShortType => 2
    case IntegerType => 4
    case LongType => 8
    case _ => 100
  }

  def wider(from: DataType, to: DataType): Boolean = to match {
    case d: DecimalType => d.precision - d.scale >= 19
    case _ => width(to) >= width(from)
  }

  /** Types whose statistics the proof compares: integral, decimal, string, date. */
  def comparable(dt: DataType): Boolean = integral(dt) || (dt match {
    case _: DecimalType | DateType => true
    case s: StringType => (s == StringType)
    case _ => false
  })

  /** A literal value or a stats JSON value as a comparable value (BigDecimal, UTF8String, epoch day). */
  def ordered(value: Any, dt: DataType): Option[Any] = try {
    (value, dt) match {
      case (n: JsonNode, t) if integral(t) || t.isInstanceOf[DecimalType] =>
        if (n.isNumber) Some(BigDecimal(n.decimalValue())) else None
      case (n: JsonNode, s: StringType) if (s == StringType) => if (n.isTextual) Some(UTF8String.fromString(n.asText())) else None
      case (n: JsonNode, DateType) =>
        if (n.isTextual) Some(BigDecimal(java.time.LocalDate.parse(n.asText()).toEpochDay)) else None
      case (_: JsonNode, _) => None
      case (x: Byte, ByteType) => Some(BigDecimal(x.toLong))
      case (x: Short, ShortType) => Some(BigDecimal(x.toLong))
      case (x: Int, IntegerType) => Some(BigDecimal(x.toLong))
      case (x: Long, LongType) => Some(BigDecimal(x))
      case (x: Decimal, _: DecimalType) => Some(x.toBigDecimal)
      case (x: UTF8String, s: StringType) if (s == StringType) => Some(x)
      case (x: Int, DateType) => Some(BigDecimal(x.toLong))
      case _ => None
    }
  } catch { case NonFatal(_) => None }

  def compareValues(a: Any, b: Any): Int = (a, b) match {
    case (x: BigDecimal, y: BigDecimal) => x.compare(y)
    case (x: UTF8String, y: UTF8String) => x.compareTo(y)
    case _ => throw new IllegalArgumentException(s"incomparable $a, $b")
  }

  /**
   * `condition` (on partition columns only) evaluated on a file's partition values: Some(true) when
   * it holds, Some(false) when it is false or NULL, None when a value cannot be interpreted.
   */
  def evalOnPartition(condition: Expression, partitionValues: Map[String, String],
      physicalNames: Map[String, String], sessionTimeZone: String): Option[Boolean] = try {
    val bound = condition.transform {
      case a: Attribute =>
        val raw = partitionValues.getOrElse(physicalNames.getOrElse(a.name.toLowerCase(Locale.ROOT), a.name), null)
        Literal(partitionValue(raw, a.dataType, sessionTimeZone), a.dataType)
    }
    Some(bound.eval(InternalRow.empty) == true)
  } catch { case NonFatal(_) => None }
}
