package io.deltalog.log

import java.math.{BigDecimal => JBigDecimal, RoundingMode}
import java.time.{Instant, LocalDate, LocalDateTime, OffsetDateTime, ZoneOffset}
import java.time.format.DateTimeFormatter
import java.time.temporal.ChronoField

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.JsonNode
import org.apache.parquet.io.api.{Binary, RecordConsumer}
import org.apache.parquet.schema.{GroupType, LogicalTypeAnnotation, Type, Types}
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.parquet.schema.Type.Repetition.OPTIONAL

import io.deltalog.actions.{Action, Metadata}

/**
 * The typed `add.stats_parsed` and `add.partitionValues_parsed` columns written when
 * `writeStatsAsStruct` is on (digest §4.2), derived from the table schema.
 *
 * Scope (documented limitation): only **top-level primitive** columns get typed stats; nested
 * columns still count towards `delta.dataSkippingNumIndexedCols` (as in delta-spark) but are left
 * out of the struct. `delta.dataSkippingStatsColumns` is honoured for top-level names. Min/max
 * are written for numeric, decimal, string, date, timestamp and timestamp_ntz columns; nullCount
 * for every selected column. Field names are physical names (column mapping). Timestamps are
 * written as INT64 microseconds (`TIMESTAMP(MICROS)`), not INT96. A value that cannot be
 * converted is written as null.
 */
private[log] final class CheckpointStatsStruct(metadata: Metadata) {
  import CheckpointStatsStruct._

  private val schemaFields: Seq[JsonNode] = Try {
    val root = Action.mapper.readTree(metadata.schemaString)
    root.get("fields").elements().asScala.toSeq
  }.getOrElse(Nil)

  private def physicalName(f: JsonNode): String = {
    val md = f.get("metadata")
    val p = if (md != null) md.get("delta.columnMapping.physicalName") else null
    if (p != null && p.isTextual) p.textValue() else f.get("name").textValue()
  }

  private def leafCount(t: JsonNode): Int =
    if (t.isTextual) 1
    else t.get("type").asText() match {
      case "struct" => t.get("fields").elements().asScala.map(f => leafCount(f.get("type"))).sum
      case _ => 1
    }

  private val partitionCols: Set[String] = metadata.partitionColumns.toSet

  /** Selected top-level data columns: (physical name, type) for primitive ones. */
  private val statsColumns: Seq[Column] = {
    val data = schemaFields.filterNot(f => partitionCols.contains(f.get("name").asText()))
    val conf = metadata.configuration
    val selected: Seq[JsonNode] = conf.get("delta.dataSkippingStatsColumns") match {
      case Some(list) =>
        val names = list.split(",").map(_.trim.stripPrefix("`").stripSuffix("`")).toSet
        data.filter(f => names.contains(f.get("name").asText()))
      case None =>
        val n = conf.get("delta.dataSkippingNumIndexedCols").flatMap(v => Try(v.trim.toInt).toOption).getOrElse(32)
        if (n < 0) data
        else {
          var left = n
          data.takeWhile { f => val ok = left > 0; left -= leafCount(f.get("type")); ok }
        }
    }
    selected.flatMap { f =>
      val t = f.get("type")
      if (t.isTextual) kindOf(t.textValue()).map(k => Column(physicalName(f), k)) else None
    }
  }

  private val partitionColumns: Seq[Column] = metadata.partitionColumns.flatMap { name =>
    schemaFields.find(_.get("name").asText() == name).flatMap { f =>
      val t = f.get("type")
      if (t.isTextual) kindOf(t.textValue()).map(k => Column(physicalName(f), k)) else None
    }
  }

  private val minMaxColumns = statsColumns.filter(_.kind.hasMinMax)

  /** `stats_parsed` struct type (always present when stats-as-struct is on). */
  val statsParsedType: GroupType = {
    val fields = Seq[Type](Types.optional(INT64).named("numRecords")) ++
      (if (minMaxColumns.nonEmpty) Seq(
        new GroupType(OPTIONAL, "minValues", minMaxColumns.map(c => c.kind.parquet(c.name)): _*),
        new GroupType(OPTIONAL, "maxValues", minMaxColumns.map(c => c.kind.parquet(c.name)): _*))
      else Nil) ++
      (if (statsColumns.nonEmpty) Seq(new GroupType(OPTIONAL, "nullCount",
        statsColumns.map(c => Types.optional(INT64).named(c.name): Type): _*)) else Nil) ++
      Seq(Types.optional(BOOLEAN).named("tightBounds"))
    new GroupType(OPTIONAL, "stats_parsed", fields: _*)
  }

  /** `partitionValues_parsed` struct type, only for partitioned tables with typeable columns. */
  val partitionValuesParsedType: Option[GroupType] =
    if (partitionColumns.isEmpty) None
    else Some(new GroupType(OPTIONAL, "partitionValues_parsed", partitionColumns.map(c => c.kind.parquet(c.name)): _*))

  // The writers below run once per `add`: plain arrays and loops, no per-row collections.
  private val minMaxArray: Array[Column] = minMaxColumns.toArray
  private val statsArray: Array[Column] = statsColumns.toArray
  private val partitionArray: Array[Column] = partitionColumns.toArray
  private val MinMaxKeys = Array("minValues", "maxValues")

  /** Writes the `stats_parsed` field (index `index` of `add`) from a stats JSON string. */
  def writeStatsParsed(rc: RecordConsumer, index: Int, stats: String): Unit = {
    val node = Try(io.deltalog.actions.ExactJson.readTree(stats)).getOrElse(null)
    if (node == null || !node.isObject) return
    rc.startField("stats_parsed", index)
    rc.startGroup()
    var i = 0
    val nr = node.get("numRecords")
    if (nr != null && nr.canConvertToLong) { rc.startField("numRecords", i); rc.addLong(nr.asLong()); rc.endField("numRecords", i) }
    i += 1
    if (minMaxArray.nonEmpty) {
      var k = 0
      while (k < MinMaxKeys.length) {
        val key = MinMaxKeys(k)
        val obj = node.get(key)
        if (obj != null && obj.isObject) {
          rc.startField(key, i)
          rc.startGroup()
          var j = 0
          while (j < minMaxArray.length) { writeValue(rc, minMaxArray(j), j, obj.get(minMaxArray(j).name)); j += 1 }
          rc.endGroup()
          rc.endField(key, i)
        }
        i += 1
        k += 1
      }
    }
    if (statsArray.nonEmpty) {
      val obj = node.get("nullCount")
      if (obj != null && obj.isObject) {
        rc.startField("nullCount", i)
        rc.startGroup()
        var j = 0
        while (j < statsArray.length) {
          val c = statsArray(j)
          val v = obj.get(c.name)
          if (v != null && v.isIntegralNumber) {
            rc.startField(c.name, j); rc.addLong(v.asLong()); rc.endField(c.name, j)
          }
          j += 1
        }
        rc.endGroup()
        rc.endField("nullCount", i)
      }
      i += 1
    }
    val tb = node.get("tightBounds")
    if (tb != null && tb.isBoolean) { rc.startField("tightBounds", i); rc.addBoolean(tb.booleanValue()); rc.endField("tightBounds", i) }
    rc.endGroup()
    rc.endField("stats_parsed", index)
  }

  /** Writes the `partitionValues_parsed` field from the partition value strings. */
  def writePartitionValuesParsed(rc: RecordConsumer, index: Int, values: Map[String, String]): Unit = {
    rc.startField("partitionValues_parsed", index)
    rc.startGroup()
    var j = 0
    while (j < partitionArray.length) {
      val c = partitionArray(j)
      values.get(c.name) match {
        case Some(v) if v != null => c.kind.fromPartitionString(v).foreach { x => write(rc, c, j, x) }
        case _ =>
      }
      j += 1
    }
    rc.endGroup()
    rc.endField("partitionValues_parsed", index)
  }

  private def writeValue(rc: RecordConsumer, c: Column, j: Int, v: JsonNode): Unit =
    if (v != null && !v.isNull) c.kind.fromJson(v).foreach(x => write(rc, c, j, x))

  private def write(rc: RecordConsumer, c: Column, j: Int, x: Any): Unit = {
    rc.startField(c.name, j)
    x match {
      case i: Int => rc.addInteger(i)
      case l: Long => rc.addLong(l)
      case f: Float => rc.addFloat(f)
      case d: Double => rc.addDouble(d)
      case b: Boolean => rc.addBoolean(b)
      case b: Binary => rc.addBinary(b)
      case other => throw new IllegalStateException(s"unexpected stats value $other")
    }
    rc.endField(c.name, j)
  }
}

private[log] object CheckpointStatsStruct {
  final case class Column(name: String, kind: Kind)

  /** A Spark primitive type and its Parquet form. */
  sealed abstract class Kind(val hasMinMax: Boolean) {
    def parquet(name: String): Type
    def fromJson(v: JsonNode): Option[Any]
    def fromPartitionString(s: String): Option[Any]
  }

  private final case class IntKind(bits: Int) extends Kind(true) {
    def parquet(name: String): Type = Types.optional(INT32).as(LogicalTypeAnnotation.intType(bits, true)).named(name)
    def fromJson(v: JsonNode): Option[Any] = if (v.canConvertToInt) Some(v.asInt()) else None
    def fromPartitionString(s: String): Option[Any] = Try(s.trim.toInt).toOption
  }
  private case object LongKind extends Kind(true) {
    def parquet(name: String): Type = Types.optional(INT64).named(name)
    def fromJson(v: JsonNode): Option[Any] = if (v.canConvertToLong) Some(v.asLong()) else None
    def fromPartitionString(s: String): Option[Any] = Try(s.trim.toLong).toOption
  }
  private case object FloatKind extends Kind(true) {
    def parquet(name: String): Type = Types.optional(FLOAT).named(name)
    def fromJson(v: JsonNode): Option[Any] =
      if (v.isNumber) Some(v.floatValue()) else Try(v.asText().toFloat).toOption
    def fromPartitionString(s: String): Option[Any] = Try(s.trim.toFloat).toOption
  }
  private case object DoubleKind extends Kind(true) {
    def parquet(name: String): Type = Types.optional(DOUBLE).named(name)
    def fromJson(v: JsonNode): Option[Any] =
      if (v.isNumber) Some(v.doubleValue()) else Try(v.asText().toDouble).toOption
    def fromPartitionString(s: String): Option[Any] = Try(s.trim.toDouble).toOption
  }
  private case object BoolKind extends Kind(false) {
    def parquet(name: String): Type = Types.optional(BOOLEAN).named(name)
    def fromJson(v: JsonNode): Option[Any] = if (v.isBoolean) Some(v.booleanValue()) else None
    def fromPartitionString(s: String): Option[Any] = s.trim.toLowerCase match {
      case "true" => Some(true)
      case "false" => Some(false)
      case _ => None
    }
  }
  private case object StringKind extends Kind(true) {
    def parquet(name: String): Type = Types.optional(BINARY).as(LogicalTypeAnnotation.stringType()).named(name)
    def fromJson(v: JsonNode): Option[Any] = if (v.isTextual) Some(Binary.fromString(v.textValue())) else None
    def fromPartitionString(s: String): Option[Any] = Some(Binary.fromString(s))
  }
  private case object BinaryKind extends Kind(false) {
    def parquet(name: String): Type = Types.optional(BINARY).named(name)
    def fromJson(v: JsonNode): Option[Any] = None
    def fromPartitionString(s: String): Option[Any] = Some(Binary.fromString(s))
  }
  private case object DateKind extends Kind(true) {
    def parquet(name: String): Type = Types.optional(INT32).as(LogicalTypeAnnotation.dateType()).named(name)
    def fromJson(v: JsonNode): Option[Any] = if (v.isTextual) fromPartitionString(v.textValue()) else None
    def fromPartitionString(s: String): Option[Any] = Try(LocalDate.parse(s.trim).toEpochDay.toInt).toOption
  }
  private final case class TimestampKind(utc: Boolean) extends Kind(true) {
    def parquet(name: String): Type =
      Types.optional(INT64).as(LogicalTypeAnnotation.timestampType(utc, TimeUnit.MICROS)).named(name)
    def fromJson(v: JsonNode): Option[Any] = if (v.isTextual) parseTimestampMicros(v.textValue()) else None
    def fromPartitionString(s: String): Option[Any] = parseTimestampMicros(s)
  }
  private final case class DecimalKind(precision: Int, scale: Int) extends Kind(true) {
    def parquet(name: String): Type = {
      val ann = LogicalTypeAnnotation.decimalType(scale, precision)
      if (precision <= 9) Types.optional(INT32).as(ann).named(name)
      else if (precision <= 18) Types.optional(INT64).as(ann).named(name)
      else Types.optional(FIXED_LEN_BYTE_ARRAY).length(bytesFor(precision)).as(ann).named(name)
    }
    private def encode(d: JBigDecimal): Option[Any] = Try {
      val unscaled = d.setScale(scale, RoundingMode.UNNECESSARY).unscaledValue()
      if (unscaled.abs().toString.length > precision) throw new ArithmeticException("precision")
      if (precision <= 9) unscaled.intValueExact(): Any
      else if (precision <= 18) unscaled.longValueExact(): Any
      else {
        val n = bytesFor(precision)
        val raw = unscaled.toByteArray
        val out = new Array[Byte](n)
        val pad: Byte = if (unscaled.signum() < 0) -1 else 0
        java.util.Arrays.fill(out, 0, n - raw.length, pad)
        System.arraycopy(raw, 0, out, n - raw.length, raw.length)
        Binary.fromConstantByteArray(out): Any
      }
    }.toOption
    def fromJson(v: JsonNode): Option[Any] =
      if (v.isNumber) encode(v.decimalValue()) else Try(new JBigDecimal(v.asText())).toOption.flatMap(encode)
    def fromPartitionString(s: String): Option[Any] = Try(new JBigDecimal(s.trim)).toOption.flatMap(encode)
  }

  private def bytesFor(precision: Int): Int = {
    var n = 1
    while (BigInt(2).pow(8 * n - 1) <= BigInt(10).pow(precision)) n += 1
    n
  }

  private val Decimal = """decimal\((\d+),\s*(\d+)\)""".r

  def kindOf(t: String): Option[Kind] = t match {
    case "byte" => Some(IntKind(8))
    case "short" => Some(IntKind(16))
    case "integer" => Some(IntKind(32))
    case "long" => Some(LongKind)
    case "float" => Some(FloatKind)
    case "double" => Some(DoubleKind)
    case "boolean" => Some(BoolKind)
    case "string" => Some(StringKind)
    case "binary" => Some(BinaryKind)
    case "date" => Some(DateKind)
    case "timestamp" => Some(TimestampKind(utc = true))
    case "timestamp_ntz" => Some(TimestampKind(utc = false))
    case Decimal(p, s) => Some(DecimalKind(p.toInt, s.toInt))
    case _ => None
  }

  private val LocalFormat = new java.time.format.DateTimeFormatterBuilder()
    .appendPattern("yyyy-MM-dd[ ]['T']HH:mm:ss")
    .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
    .toFormatter()

  /**
   * Microseconds since the epoch of a stats or partition timestamp: ISO-8601 with an offset or
   * `Z`, or a zone-less `yyyy-MM-dd[ T]HH:mm:ss[.f]` taken as UTC.
   */
  def parseTimestampMicros(s: String): Option[Long] = {
    val t = s.trim
    def micros(i: Instant): Long = Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), i.getNano / 1000L)
    Try(micros(OffsetDateTime.parse(t, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant))
      .orElse(Try(micros(LocalDateTime.parse(t, LocalFormat).toInstant(ZoneOffset.UTC))))
      .toOption
  }
}
