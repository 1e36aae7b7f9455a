package io.deltalog.spark.read

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * One file's `add.stats` JSON (digest §7.5; the log rebuilds it from `stats_parsed` when only the
 * struct is present) with typed access by physical column path.
 *
 * Every value that is absent, null or cannot be parsed as the column's type is None: callers must
 * treat None as "unknown" and keep the file. Timestamp (and timestamp_ntz) maxima are widened by
 * 999 µs: writers (deltalog, delta-spark) truncate them to milliseconds, so a max of
 * `23:59:59.999` stands for values up to `23:59:59.999999`; a max rounded up instead (older
 * deltalog) only widens further.
 */
final class FileStats private (root: JsonNode) {

  /** `numRecords` (physical rows, DV-deleted rows included). */
  val numRecords: Option[Long] = long(root.get("numRecords"))

  /** `tightBounds` (true when absent). */
  val tightBounds: Boolean = Option(root.get("tightBounds")).filter(_.isBoolean).forall(_.asBoolean())

  /** Null count of the leaf at `path`. */
  def nullCount(path: Seq[String]): Option[Long] = long(node("nullCount", path))

  /** Lower bound of the leaf at `path` as a Catalyst internal value of `dataType`. */
  def min(path: Seq[String], dataType: DataType): Option[Any] = FileStats.value(node("minValues", path), dataType, isMax = false)

  /** Upper bound of the leaf at `path` as a Catalyst internal value of `dataType`. */
  def max(path: Seq[String], dataType: DataType): Option[Any] = FileStats.value(node("maxValues", path), dataType, isMax = true)

  /** True when the stats prove that every row of the file is null at `path` (0-row files too). */
  def allNull(path: Seq[String]): Boolean = (numRecords, nullCount(path)) match {
    case (Some(n), Some(c)) => c == n
    case _ => false
  }

  /** True when the stats prove that no row of the file is null at `path`. */
  def noNulls(path: Seq[String]): Boolean = nullCount(path).contains(0L)

  private def node(section: String, path: Seq[String]): JsonNode = {
    var n = root.get(section)
    val it = path.iterator
    while (n != null && it.hasNext) n = if (n.isObject) n.get(it.next()) else null
    n
  }

  private def long(n: JsonNode): Option[Long] =
    if (n != null && n.isIntegralNumber && n.canConvertToLong) Some(n.longValue()) else None
}

object FileStats {
  private[read] val mapper: ObjectMapper = new ObjectMapper()

  /** Parses a stats string; None when it is null, empty or not a JSON object. */
  def parse(json: String): Option[FileStats] =
    if (json == null || json.isEmpty) None
    else try {
      val n = io.deltalog.actions.ExactJson.readTree(json)  // decimal bounds exact
      if (n != null && n.isObject) Some(new FileStats(n)) else None
    } catch { case NonFatal(_) => None }

  /** Types whose min/max are used for skipping (digest §7.5). */
  def hasMinMax(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType |
         TimestampType | TimestampNTZType => true
    case _: DecimalType | _: StringType => true
    case _ => false
  }

  /** What a millisecond-truncated timestamp max may hide: up to 999 µs more. */
  private val TruncatedMicros = 999L

  private def widenMax(us: Long): Long = if (us > Long.MaxValue - TruncatedMicros) Long.MaxValue else us + TruncatedMicros

  private[read] def value(n: JsonNode, t: DataType, isMax: Boolean): Option[Any] = {
    if (n == null || n.isNull || n.isContainerNode) return None
    try t match {
      case ByteType if n.canConvertToInt && n.isIntegralNumber && n.intValue().isValidByte => Some(n.intValue().toByte)
      case ShortType if n.canConvertToInt && n.isIntegralNumber && n.intValue().isValidShort => Some(n.intValue().toShort)
      case IntegerType if n.isIntegralNumber && n.canConvertToInt => Some(n.intValue())
      case LongType if n.isIntegralNumber && n.canConvertToLong => Some(n.longValue())
      case FloatType if n.isNumber && !n.floatValue().isNaN => Some(n.floatValue())
      case DoubleType if n.isNumber && !n.doubleValue().isNaN => Some(n.doubleValue())
      case d: DecimalType if n.isNumber || n.isTextual =>
        val dec = Decimal(if (n.isNumber) n.decimalValue() else new java.math.BigDecimal(n.asText()))
        if (dec.changePrecision(d.precision, d.scale)) Some(dec) else None
      case _: StringType if n.isTextual => Some(UTF8String.fromString(n.asText()))
      case DateType if n.isTextual => DateTimeUtils.stringToDate(UTF8String.fromString(n.asText()))
      case TimestampType if n.isTextual =>
        DateTimeUtils.stringToTimestamp(UTF8String.fromString(n.asText()), java.time.ZoneOffset.UTC)
          .map(us => if (isMax) widenMax(us.asInstanceOf[Long]) else us)
      case TimestampNTZType if n.isTextual =>
        DateTimeUtils.stringToTimestampWithoutTimeZone(UTF8String.fromString(n.asText()))
          .map(us => if (isMax) widenMax(us.asInstanceOf[Long]) else us)
      case _ => None
    } catch { case NonFatal(_) => None }
  }
}
