package io.deltalog.commands

import java.io.StringWriter
import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import java.time.format.DateTimeFormatter

import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator}
import org.apache.spark.sql.types._

/**
 * Renders collected statistics as the `add.stats` JSON string (digest §7.5):
 *
 *  - timestamps with millisecond precision, UTC (`2000-01-01T00:00:00.000Z`, timestamp_ntz without
 *    offset), min and max both truncated (floored) to the millisecond, as delta-spark writes them:
 *    the max of `9999-12-31 23:59:59.999999` stays `9999-12-31T23:59:59.999Z`, a valid timestamp,
 *    and readers widen a timestamp max by under 1 ms (`FileStats`);
 *  - float/double zeros signed outward: a zero max is `0.0` and a zero min `-0.0` (the Parquet
 *    rule), so readers that order `-0.0` below `0.0` keep the file for `x >= 0.0` or `x <= -0.0`;
 *  - dates `yyyy-MM-dd`, decimals as plain JSON numbers;
 *  - strings: min = the first `prefixLength` characters (never splitting a surrogate pair), max =
 *    a prefix plus a tie-breaker (U+007F or U+10FFFF) that keeps it above every truncated value,
 *    or no max at all when no such prefix fits in twice the length;
 *  - a struct appears in minValues / maxValues only when one of its leaves has a bound, in
 *    nullCount only when one of its leaves has a known null count (always, for written files).
 */
private[commands] object StatsJson {
  private val factory = new JsonFactory()
  private val TsFormat = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").withZone(ZoneOffset.UTC)
  private val NtzFormat = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
  private val AsciiMax = "\u007F"
  private val Utf8Max = "\uDBFF\uDFFF"

  def render(numRecords: Long, roots: Seq[Acc], prefixLength: Int): String = {
    val w = new StringWriter(128)
    val g = factory.createGenerator(w)
    g.enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
    g.writeStartObject()
    g.writeNumberField("numRecords", numRecords)
    if (roots.exists(hasBound)) {
      g.writeFieldName("minValues"); writeBounds(g, roots, isMin = true, prefixLength)
      g.writeFieldName("maxValues"); writeBounds(g, roots, isMin = false, prefixLength)
    }
    if (roots.exists(hasNullCount)) { g.writeFieldName("nullCount"); writeNullCounts(g, roots) }
    g.writeBooleanField("tightBounds", true)
    g.writeEndObject()
    g.close()
    w.toString
  }

  private def hasBound(a: Acc): Boolean = a match {
    case s: StructAcc => s.children.exists(hasBound)
    case l: LeafAcc => l.bounds.isDefined
  }

  private def hasNullCount(a: Acc): Boolean = a match {
    case s: StructAcc => s.children.exists(hasNullCount)
    case l: LeafAcc => l.nullCountKnown
  }

  /** The null counts that are known (a struct only when one of its leaves has one). */
  private def writeNullCounts(g: JsonGenerator, accs: Seq[Acc]): Unit = {
    g.writeStartObject()
    accs.foreach {
      case s: StructAcc =>
        if (s.children.exists(hasNullCount)) { g.writeFieldName(s.name); writeNullCounts(g, s.children.toSeq) }
      case l: LeafAcc => if (l.nullCountKnown) g.writeNumberField(l.name, l.nullCount)
    }
    g.writeEndObject()
  }

  private def writeBounds(g: JsonGenerator, accs: Seq[Acc], isMin: Boolean, prefixLength: Int): Unit = {
    g.writeStartObject()
    accs.foreach {
      case s: StructAcc =>
        if (s.children.exists(hasBound)) { g.writeFieldName(s.name); writeBounds(g, s.children.toSeq, isMin, prefixLength) }
      case l: LeafAcc => l.bounds.foreach { case (mn, mx) =>
        writeValue(g, l.name, l.dataType, if (isMin) mn else mx, isMin, prefixLength)
      }
    }
    g.writeEndObject()
  }

  private def writeValue(g: JsonGenerator, name: String, dt: DataType, v: Any, isMin: Boolean, prefix: Int): Unit =
    dt match {
      case TimestampType =>
        g.writeStringField(name, TsFormat.format(Instant.ofEpochMilli(millis(v.asInstanceOf[Long]))))
      case TimestampNTZType =>
        val ms = millis(v.asInstanceOf[Long])
        g.writeStringField(name, NtzFormat.format(LocalDateTime.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC)))
      case DateType => g.writeStringField(name, LocalDate.ofEpochDay(v.asInstanceOf[Long]).toString)
      case _: StringType =>
        val s = v.asInstanceOf[String]
        val t = if (isMin) truncateMin(s, prefix) else truncateMax(s, prefix)
        if (t != null) g.writeStringField(name, t)
      case _: DecimalType => g.writeFieldName(name); g.writeNumber(v.asInstanceOf[java.math.BigDecimal])
      case FloatType => g.writeFieldName(name); g.writeNumber(v.asInstanceOf[Float])
      case DoubleType => g.writeFieldName(name); g.writeNumber(v.asInstanceOf[Double])
      case _ => g.writeNumberField(name, v.asInstanceOf[Long])
    }

  /**
   * Microseconds → milliseconds, floored for min and max alike: a max rounded up could leave the
   * type's range (`+10000-01-01T00:00:00.000Z`); a floored one is widened by the readers.
   */
  private[commands] def millis(micros: Long): Long = Math.floorDiv(micros, 1000L)

  /** The first `len` chars, keeping a surrogate pair whole. */
  private[commands] def truncateMin(s: String, len: Int): String =
    if (s.length <= len) s
    else if (len <= 0) null
    else if (Character.isHighSurrogate(s.charAt(len - 1)) && Character.isLowSurrogate(s.charAt(len))) s.take(len + 1)
    else s.take(len)

  /**
   * A value >= every string that `s` could stand for: a prefix plus U+007F when the next char is
   * below it, else plus U+10FFFF; the prefix grows past max characters (which no tie-breaker can
   * exceed) up to twice `len`; null when that does not suffice.
   */
  private[commands] def truncateMax(s: String, len: Int): String = {
    if (s.length <= len) return s
    if (len <= 0) return null
    val limit = 2 * len
    var cur = truncateMin(s, len).length
    while (cur <= limit) {
      if (cur >= s.length) return s
      if (cur + 1 < s.length && s.substring(cur, cur + 2) == Utf8Max) cur += 2
      else if (s.charAt(cur) < AsciiMax.charAt(0)) return s.take(cur) + AsciiMax
      else return s.take(cur) + Utf8Max
    }
    null
  }
}
