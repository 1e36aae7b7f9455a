package io.deltalog.expressions

import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Instant, LocalDate, LocalDateTime, LocalTime, ZoneOffset}
import java.time.format.DateTimeFormatter

import scala.util.Try

/**
 * Runtime values of the expression language: normalisation, rendering, text parsing and the
 * comparison / coercion rules. Canonical classes are listed on [[Literal]].
 *
 * Coercion (documented choices, close to Spark's implicit casts with a UTC session time zone):
 *  - numerics (Long, BigDecimal, Double) compare numerically: exactly as decimals when both are
 *    finite (a Double by its shortest decimal form, so 0.1 = 0.1BD), NaN equals NaN and is greater
 *    than everything (Spark), -0.0 = 0.0, +/-Infinity order as expected;
 *  - date, timestamp and timestamp_ntz compare as points in time: a date is midnight, and dates /
 *    timestamp_ntz values are read in UTC when compared with a timestamp (Instant);
 *  - strings compare by their UTF-8 bytes (unsigned), i.e. by code point, like Spark's UTF8String;
 *  - binary compares by unsigned bytes; a string compared with binary uses its UTF-8 bytes;
 *  - booleans: FALSE < TRUE;
 *  - a string compared with another type is cast to that type (numbers, dates, timestamps,
 *    booleans 'true'/'false'). If a *literal* cannot be cast, the predicate is wrong for the column
 *    and a [[PredicateEvaluationException]] (`DELTA_PREDICATE_TYPE_MISMATCH`) is thrown; if a
 *    *column value* cannot be cast (e.g. a string partition 'abc' compared with 5) the comparison
 *    is NULL, so the file does not match;
 *  - other combinations (e.g. boolean vs number, date vs number) throw
 *    `DELTA_PREDICATE_TYPE_MISMATCH`.
 */
object Values {

  // ---------------------------------------------------------------- normalisation

  /** The canonical representation of a JVM value (see [[Literal]]); unknown classes are kept. */
  def normalize(v: Any): Any = v match {
    case null => null
    case None => null
    case Some(x) => normalize(x)
    case b: Boolean => b
    case l: Long => l
    case i: Int => i.toLong
    case s: Short => s.toLong
    case b: Byte => b.toLong
    case d: Double => d
    case f: Float => f.toString.toDouble // 0.1f => 0.1, not 0.10000000149011612
    case d: BigDecimal => d
    case d: java.math.BigDecimal => BigDecimal(d)
    case i: BigInt => BigDecimal(i)
    case i: java.math.BigInteger => BigDecimal(BigInt(i))
    case s: String => s
    case c: Char => c.toString
    case d: LocalDate => d
    case t: Instant => t
    case t: LocalDateTime => t
    case d: java.sql.Date => d.toLocalDate
    case t: java.sql.Timestamp => t.toInstant
    case t: java.time.OffsetDateTime => t.toInstant
    case t: java.time.ZonedDateTime => t.toInstant
    case b: Array[Byte] => b
    case i: java.lang.Integer => i.longValue()
    case other => other
  }

  // ---------------------------------------------------------------- rendering

  /** A Spark-SQL string literal: single quotes, `'` doubled, backslash doubled. */
  def quoteString(s: String): String = "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"

  private val TsFormat = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")

  private def fraction(nanos: Int): String =
    if (nanos == 0) ""
    else {
      val s = f"$nanos%09d".reverse.dropWhile(_ == '0').reverse
      "." + s
    }

  /** `yyyy-MM-dd HH:mm:ss[.fraction]` (fraction without trailing zeros). */
  def formatLocalDateTime(t: LocalDateTime): String = TsFormat.format(t) + fraction(t.getNano)

  /** A timestamp in UTC, `yyyy-MM-dd HH:mm:ss[.fraction]Z`. */
  def formatInstant(t: Instant): String = formatLocalDateTime(LocalDateTime.ofInstant(t, ZoneOffset.UTC)) + "Z"

  /** Renders a value as a literal that [[PredicateParser]] reads back to the same value. */
  def toSqlLiteral(v: Any): String = normalize(v) match {
    case null => "NULL"
    case true => "TRUE"
    case false => "FALSE"
    case l: Long => l.toString
    case d: Double =>
      if (d.isNaN || d.isInfinite) quoteString(d.toString) // compared with a double column, casts back
      else {
        val s = d.toString // e.g. 1.5, 1.0E10
        if (s.contains("E")) s else s + "D"
      }
    case d: BigDecimal =>
      if (d.scale <= 0) d.bigDecimal.toPlainString + "BD" else d.bigDecimal.toPlainString
    case s: String => quoteString(s)
    case d: LocalDate => s"DATE '$d'"
    case t: Instant => s"TIMESTAMP '${formatInstant(t)}'"
    case t: LocalDateTime => s"TIMESTAMP_NTZ '${formatLocalDateTime(t)}'"
    case b: Array[Byte] => "X'" + b.map(x => f"${x & 0xff}%02X").mkString + "'"
    case other => quoteString(other.toString)
  }

  /**
   * Canonical string form of a value (Spark's cast to string, UTC): used by [[StartsWith]] on
   * non-string values and in messages.
   */
  def toDisplayString(v: Any): String = normalize(v) match {
    case null => "NULL"
    case b: Boolean => b.toString
    case d: BigDecimal => d.bigDecimal.toPlainString
    case t: Instant => formatLocalDateTime(LocalDateTime.ofInstant(t, ZoneOffset.UTC))
    case t: LocalDateTime => formatLocalDateTime(t)
    case b: Array[Byte] => new String(b, UTF_8)
    case other => other.toString
  }

  // ---------------------------------------------------------------- parsing text

  private val DateRe = """(\d{4})-(\d{1,2})-(\d{1,2})""".r
  private val TimeRe = """(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?""".r
  private val OffsetRe = """(?:Z|z|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?(?::?\d{2})?)""".r
  private val TimestampRe =
    ("""\s*(\d{4}-\d{1,2}-\d{1,2})(?:[T ](""" + TimeRe.regex + """)?\s*(""" + OffsetRe.regex + """)?)?\s*""").r

  /** `yyyy-M-d` (Spark also accepts a trailing time part when casting to date). */
  def parseDate(s: String): Option[LocalDate] = {
    val t = s.trim
    val datePart = t.takeWhile(c => c != ' ' && c != 'T')
    datePart match {
      case DateRe(y, m, d) => Try(LocalDate.of(y.toInt, m.toInt, d.toInt)).toOption
      case _ => None
    }
  }

  /**
   * Parses `yyyy-MM-dd[( |T)HH:mm[:ss[.fffffffff]]][offset]` into a local date-time and an optional
   * offset (`Z`, `UTC`, `+01:00`, `+0100`, `-08`, ...).
   */
  def parseDateTime(s: String): Option[(LocalDateTime, Option[ZoneOffset])] = s match {
    case TimestampRe(date, _, hh, mm, ss, frac, off) =>
      for {
        d <- parseDate(date)
        time <- Try {
          if (hh == null) LocalTime.MIDNIGHT
          else LocalTime.of(hh.toInt, mm.toInt, Option(ss).map(_.toInt).getOrElse(0),
            Option(frac).map(f => (f + "000000000").take(9).toInt).getOrElse(0))
        }.toOption
        offset <- Option(off) match {
          case None => Some(None)
          case Some("Z" | "z" | "UTC" | "GMT") => Some(Some(ZoneOffset.UTC))
          case Some(o) => Try(Some(parseOffset(o))).toOption
        }
      } yield (LocalDateTime.of(d, time), offset)
    case _ => None
  }

  private def parseOffset(o: String): ZoneOffset = {
    val sign = if (o.startsWith("-")) -1 else 1
    val digits = o.substring(1).replace(":", "")
    val (h, rest) = if (digits.length % 2 == 1) digits.splitAt(1) else digits.splitAt(2)
    val m = if (rest.length >= 2) rest.substring(0, 2).toInt else 0
    val sec = if (rest.length >= 4) rest.substring(2, 4).toInt else 0
    ZoneOffset.ofHoursMinutesSeconds(sign * h.toInt, sign * m, sign * sec)
  }

  /** A timestamp; without an offset the text is read as UTC (documented choice). */
  def parseTimestamp(s: String): Option[Instant] =
    parseDateTime(s).map { case (ldt, off) => ldt.toInstant(off.getOrElse(ZoneOffset.UTC)) }

  /** A timestamp_ntz; text with an offset is rejected. */
  def parseTimestampNtz(s: String): Option[LocalDateTime] =
    parseDateTime(s).collect { case (ldt, None) => ldt }

  /** Spark-like string to number: Long when integral and in range, else BigDecimal; NaN/Infinity as Double. */
  def parseNumber(s: String): Option[Any] = {
    val t = s.trim
    t.toLowerCase match {
      case "nan" => Some(Double.NaN)
      case "infinity" | "+infinity" | "inf" | "+inf" => Some(Double.PositiveInfinity)
      case "-infinity" | "-inf" => Some(Double.NegativeInfinity)
      case _ =>
        if (t.isEmpty || !t.forall(c => c.isDigit || "+-.eE".indexOf(c) >= 0)) None
        else Try(t.toLong).toOption.orElse(Try(BigDecimal(t)).toOption)
    }
  }

  def parseBoolean(s: String): Option[Boolean] = s.trim.toLowerCase match {
    case "true" | "t" | "yes" | "y" | "1" => Some(true)
    case "false" | "f" | "no" | "n" | "0" => Some(false)
    case _ => None
  }

  // ---------------------------------------------------------------- comparison

  /** A value under evaluation; `fromLiteral` selects the error behaviour of failed casts. */
  final case class Operand(value: Any, fromLiteral: Boolean)

  private def typeName(v: Any): String = v match {
    case _: Boolean => "boolean"
    case _: Long => "bigint"
    case _: Double => "double"
    case _: BigDecimal => "decimal"
    case _: String => "string"
    case _: LocalDate => "date"
    case _: Instant => "timestamp"
    case _: LocalDateTime => "timestamp_ntz"
    case _: Array[Byte] => "binary"
    case other => other.getClass.getSimpleName
  }

  private def mismatch(a: Any, b: Any): Nothing =
    throw new PredicateEvaluationException("DELTA_PREDICATE_TYPE_MISMATCH",
      s"Cannot compare ${typeName(a)} ${toSqlLiteral(a)} with ${typeName(b)} ${toSqlLiteral(b)}.")

  private def isNumeric(v: Any) = v match {
    case _: Long | _: Double | _: BigDecimal => true
    case _ => false
  }
  private def isTemporal(v: Any) = v match {
    case _: LocalDate | _: Instant | _: LocalDateTime => true
    case _ => false
  }

  /** Casts string `s` to the class of `target`; None when it does not parse. */
  private def castString(s: String, target: Any): Option[Any] = target match {
    case _: Long | _: Double | _: BigDecimal => parseNumber(s)
    case _: Boolean => parseBoolean(s)
    case _: LocalDate => parseDate(s).orElse(parseTimestamp(s)) // '2024-01-01 10:00' vs date: as timestamp
    case _: Instant => parseTimestamp(s)
    case _: LocalDateTime => parseTimestampNtz(s).orElse(parseTimestamp(s))
    case _: Array[Byte] => Some(s.getBytes(UTF_8))
    case _ => None
  }

  private def compareNumeric(a: Any, b: Any): Int = (a, b) match {
    case (x: Long, y: Long) => java.lang.Long.compare(x, y)
    case (x: Double, y: Double) if x.isNaN || y.isNaN || x.isInfinite || y.isInfinite =>
      if (x.isNaN && y.isNaN) 0 else if (x.isNaN) 1 else if (y.isNaN) -1 else java.lang.Double.compare(x, y)
    case (x: Double, y) if x.isNaN => 1
    case (x: Double, y) if x.isInfinite => if (x > 0) 1 else -1
    case (x, y: Double) if y.isNaN || y.isInfinite => -compareNumeric(y, x)
    case _ => toDecimal(a).compare(toDecimal(b))
  }

  private def toDecimal(v: Any): BigDecimal = v match {
    case l: Long => BigDecimal(l)
    case d: Double => BigDecimal.decimal(d) // 0.1 => 0.1 (shortest repr), -0.0 => 0
    case d: BigDecimal => d
  }

  private def toInstant(v: Any): Instant = v match {
    case d: LocalDate => d.atStartOfDay().toInstant(ZoneOffset.UTC)
    case t: LocalDateTime => t.toInstant(ZoneOffset.UTC)
    case t: Instant => t
  }

  private def compareTemporal(a: Any, b: Any): Int = (a, b) match {
    case (x: LocalDate, y: LocalDate) => x.compareTo(y)
    case (x: LocalDateTime, y: LocalDateTime) => x.compareTo(y)
    case (x: LocalDate, y: LocalDateTime) => x.atStartOfDay().compareTo(y)
    case (x: LocalDateTime, y: LocalDate) => x.compareTo(y.atStartOfDay())
    case _ => toInstant(a).compareTo(toInstant(b))
  }

  /** Compares strings by UTF-8 bytes, which is code-point order. */
  def compareStrings(a: String, b: String): Int = {
    var i = 0
    var j = 0
    while (i < a.length && j < b.length) {
      val ca = a.codePointAt(i)
      val cb = b.codePointAt(j)
      if (ca != cb) return Integer.compare(ca, cb)
      i += Character.charCount(ca)
      j += Character.charCount(cb)
    }
    Integer.compare(a.length - i, b.length - j)
  }

  def compareBytes(a: Array[Byte], b: Array[Byte]): Int = java.util.Arrays.compareUnsigned(a, b)

  /**
   * Compares two operands. `None` when either is NULL or a column value could not be cast to the
   * other side's type; throws `DELTA_PREDICATE_TYPE_MISMATCH` for incompatible types or a literal
   * that cannot be cast.
   */
  def compare(l: Operand, r: Operand): Option[Int] = {
    val a = normalize(l.value)
    val b = normalize(r.value)
    if (a == null || b == null) return None
    (a, b) match {
      case (x: String, y: String) => Some(compareStrings(x, y))
      case (x: String, y) =>
        castString(x, y) match {
          case Some(cx) => compare(Operand(cx, l.fromLiteral), Operand(y, r.fromLiteral))
          case None => if (l.fromLiteral || !castable(y)) mismatch(x, y) else None
        }
      case (x, y: String) => compare(Operand(y, r.fromLiteral), Operand(x, l.fromLiteral)).map(-_)
      case _ if isNumeric(a) && isNumeric(b) => Some(compareNumeric(a, b))
      case _ if isTemporal(a) && isTemporal(b) => Some(compareTemporal(a, b))
      case (x: Boolean, y: Boolean) => Some(java.lang.Boolean.compare(x, y))
      case (x: Array[Byte], y: Array[Byte]) => Some(compareBytes(x, y))
      case _ => mismatch(a, b)
    }
  }

  private def castable(target: Any): Boolean = target match {
    case _: Long | _: Double | _: BigDecimal | _: Boolean | _: LocalDate | _: Instant | _: LocalDateTime |
         _: Array[Byte] => true
    case _ => false
  }
}
