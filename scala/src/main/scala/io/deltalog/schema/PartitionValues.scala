package io.deltalog.schema

import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Instant, LocalDate, ZoneId, ZoneOffset}
import java.time.format.DateTimeFormatter

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * The protocol's partition-value strings (`add.partitionValues`, digest §7.6) ↔ Catalyst internal
 * values (`UTF8String`, `Int` days, `Long` microseconds, `Decimal`, `Array[Byte]`, boxed primitives).
 *
 * Reading ([[parse]]): null and `""` are null for every type. Dates `yyyy-MM-dd`; timestamps either
 * ISO-8601 with an offset/`Z` (`1970-01-01T00:00:00.123456Z`, recommended) or the legacy
 * zone-less `yyyy-MM-dd HH:mm:ss[.ffffff]` interpreted in `timeZone` (what delta-spark does with
 * the session time zone; delta-rs writes UTC values in that form); timestamp_ntz
 * `yyyy-MM-dd HH:mm:ss[.ffffff]`; decimals, integers and floating point in their string form
 * (`NaN`, `Infinity` accepted); booleans `true`/`false` (any case); binary = the UTF-8 bytes of
 * the string (as delta-spark casts it).
 *
 * Writing ([[format]]): the inverse; timestamps as ISO-8601 UTC with microseconds, decimals in
 * plain (non-scientific) form, null as null.
 */
object PartitionValues {

  /**
   * The internal value of partition-value string `value` for a column of type `dataType`.
   *
   * @param timeZone zone for zone-less `timestamp` values (the session time zone)
   * @param column   column name, for error messages
   * @throws InvalidPartitionValueException when `value` is not a valid value of `dataType`
   */
  def parse(value: String, dataType: DataType, timeZone: ZoneId, column: String = "?"): Any = {
    if (value == null || value.isEmpty) return null
    def bad(detail: String, e: Throwable = null): Nothing =
      throw new InvalidPartitionValueException(column, value, dataType.simpleString, detail, e)
    try dataType match {
      case _: StringType => UTF8String.fromString(value)
      case BooleanType => value.trim.toLowerCase match {
        case "true" => true
        case "false" => false
        case _ => bad("expected true or false")
      }
      case ByteType => value.trim.toByte
      case ShortType => value.trim.toShort
      case IntegerType => value.trim.toInt
      case LongType => value.trim.toLong
      case FloatType => value.trim.toFloat
      case DoubleType => value.trim.toDouble
      case d: DecimalType =>
        val dec = Decimal(new java.math.BigDecimal(value.trim))
        if (!dec.changePrecision(d.precision, d.scale)) bad(s"does not fit ${d.simpleString}")
        dec
      case DateType =>
        DateTimeUtils.stringToDate(UTF8String.fromString(value.trim)).getOrElse(bad("expected yyyy-MM-dd"))
      case TimestampType =>
        DateTimeUtils.stringToTimestamp(UTF8String.fromString(value.trim), timeZone)
          .getOrElse(bad("expected yyyy-MM-dd HH:mm:ss[.ffffff] or ISO-8601"))
      case TimestampNTZType =>
        DateTimeUtils.stringToTimestampWithoutTimeZone(UTF8String.fromString(value.trim))
          .getOrElse(bad("expected yyyy-MM-dd HH:mm:ss[.ffffff]"))
      case BinaryType => value.getBytes(UTF_8)
      case NullType => null
      case other => bad(s"${other.simpleString} cannot be a partition column type")
    } catch {
      case e: InvalidPartitionValueException => throw e
      case NonFatal(e) => bad(e.getMessage, e)
    }
  }

  /**
   * A row of internal partition values for `partitionSchema` taken from `partitionValues`, whose
   * keys are `keys(i)` for field `i` (physical names under column mapping), matched exactly, else
   * case-insensitively. A missing key is null.
   */
  def parseRow(
      partitionValues: Map[String, String],
      partitionSchema: StructType,
      keys: Array[String],
      timeZone: ZoneId): InternalRow = {
    val values = new Array[Any](partitionSchema.length)
    var i = 0
    while (i < values.length) {
      val f = partitionSchema.fields(i)
      val raw = partitionValues.get(keys(i)) match {
        case Some(v) => v
        // keys follow metaData.partitionColumns, whose case may differ from the schema's
        case None => partitionValues.collectFirst { case (k, v) if k.equalsIgnoreCase(keys(i)) => v }.orNull
      }
      values(i) = parse(raw, f.dataType, timeZone, f.name)
      i += 1
    }
    new GenericInternalRow(values)
  }

  private val IsoUtc = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC)

  /**
   * The partition-value string of internal value `value` of type `dataType` (null for null).
   * Inverse of [[parse]]: `parse(format(v, t), t, _) == v`.
   */
  def format(value: Any, dataType: DataType): String = {
    if (value == null) return null
    dataType match {
      case _: StringType => value.toString
      case BooleanType | ByteType | ShortType | IntegerType | LongType => value.toString
      case FloatType => value.asInstanceOf[Float].toString
      case DoubleType => value.asInstanceOf[Double].toString
      case _: DecimalType => value match {
        case d: Decimal => d.toJavaBigDecimal.toPlainString
        case d: java.math.BigDecimal => d.toPlainString
        case d: BigDecimal => d.bigDecimal.toPlainString
        case other => other.toString
      }
      case DateType => LocalDate.ofEpochDay(value.asInstanceOf[Int].toLong).toString
      case TimestampType => IsoUtc.format(microsToInstant(value.asInstanceOf[Long]))
      case TimestampNTZType => ntz(value.asInstanceOf[Long])
      case BinaryType => new String(value.asInstanceOf[Array[Byte]], UTF_8)
      case other => throw new IllegalArgumentException(s"${other.simpleString} cannot be a partition column type")
    }
  }

  /** [[format]] for an external (Row) value: `java.sql.Date`/`LocalDate`, `Timestamp`/`Instant`, ... */
  def formatExternal(value: Any, dataType: DataType): String =
    if (value == null) null
    else format(CatalystTypeConverters.createToCatalystConverter(dataType)(value), dataType)

  private def microsToInstant(us: Long): Instant =
    Instant.ofEpochSecond(Math.floorDiv(us, 1000000L), Math.floorMod(us, 1000000L) * 1000L)

  /** `yyyy-MM-dd HH:mm:ss[.f]` with trailing fraction zeros dropped, as Spark casts it to string. */
  private def ntz(us: Long): String = {
    val t = DateTimeUtils.microsToLocalDateTime(us)
    val base = f"${t.toLocalDate}%s ${t.getHour}%02d:${t.getMinute}%02d:${t.getSecond}%02d"
    val micros = t.getNano / 1000
    if (micros == 0) base else base + "." + f"$micros%06d".reverse.dropWhile(_ == '0').reverse
  }
}
