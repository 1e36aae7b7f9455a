package io.deltalog.commands

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}
import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, ColumnPath, ParquetMetadata}
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{GroupType, LogicalTypeAnnotation, MessageType, PrimitiveType, Type}
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * What a Parquet footer says of one leaf column of a file: its null count and its (min, max), each
 * None when the footer does not tell it reliably. Bounds are in [[StatsJson]]'s value kinds: `Long`
 * for integers, dates (days) and timestamps (microseconds), `java.math.BigDecimal`, `String`.
 */
final case class FooterLeafStats(nullCount: Option[Long], bounds: Option[(Any, Any)])

/**
 * One Parquet file as CONVERT sees it: its Spark schema, row count and per-leaf statistics, keyed by
 * the leaf's lower-cased path (names are matched case-insensitively, as the schemas are merged).
 */
final case class FooterSummary(schema: StructType, numRecords: Long, leaves: Map[Seq[String], FooterLeafStats])

/**
 * Delta statistics (`add.stats`) from Parquet footers, without reading data (CONVERT TO DELTALOG).
 *
 * `numRecords` is the sum of the row groups' row counts. Per leaf column (not inside an array or a
 * map), `nullCount` is the sum of the column chunks' null counts (a null struct counts for each
 * leaf below it, as Parquet and the Delta writers count it), known only when every chunk has one.
 * min / max come from the chunks' statistics as parquet-mr decodes them (it drops statistics whose
 * order is not the column type's, e.g. the signed binary order of old writers), only when every
 * chunk with a non-null value has them, and only for types whose footer statistics are exact and
 * ordered as Delta orders them:
 *
 *  - byte, short, int, long (signed integer columns), date, timestamp and timestamp_ntz stored as
 *    INT64 millis or micros, decimal, string (UTF-8, default collation);
 *  - never float / double (a footer's min/max leave NaN out, so a file holding NaN would get bounds
 *    readers skip it by), INT96 or nanosecond timestamps, unsigned integers, boolean, binary;
 *  - no date / timestamp bounds in files Spark wrote in its legacy hybrid calendar
 *    (`org.apache.spark.legacyDateTime`, or Spark before 3.0): those values would need rebasing.
 *
 * A column the file does not have is null in each of its rows. Anything the footer does not tell is
 * left out of the statistics rather than guessed.
 */
object FooterStats {
  private val LegacyDateTimeKey = "org.apache.spark.legacyDateTime"
  private val SparkVersionKey = "org.apache.spark.version"

  private def lower(path: Seq[String]): Seq[String] = path.map(_.toLowerCase(Locale.ROOT))

  /** The summary of a file with footer `footer` whose Spark schema (read from that footer) is `schema`. */
  def summarize(footer: ParquetMetadata, schema: StructType): FooterSummary = {
    val blocks = footer.getBlocks.asScala.toVector
    val numRecords = blocks.iterator.map(_.getRowCount).sum
    val chunks: Vector[Map[ColumnPath, ColumnChunkMetaData]] =
      blocks.map(_.getColumns.asScala.iterator.map(c => c.getPath -> c).toMap)
    val kv = Option(footer.getFileMetaData.getKeyValueMetaData).map(_.asScala.toMap).getOrElse(Map.empty)
    val legacyCalendar = kv.contains(LegacyDateTimeKey) || kv.get(SparkVersionKey).exists(_.trim.startsWith("2."))
    val message = footer.getFileMetaData.getSchema
    val out = Map.newBuilder[Seq[String], FooterLeafStats]

    def walk(st: StructType, group: GroupType, prefix: Seq[String]): Unit = st.fields.foreach { f =>
      val path = prefix :+ f.name
      fieldIn(group, f.name).filter(_.getRepetition != Type.Repetition.REPEATED).foreach { t =>
        (f.dataType, t) match {
          case (s: StructType, g: GroupType) if !t.isPrimitive => walk(s, g, path)
          case (dt, p: PrimitiveType) if !dt.isInstanceOf[StructType] =>
            out += lower(path) -> leafStats(chunks, ColumnPath.get(path: _*), p, dt, legacyCalendar)
          case _ => // arrays, maps, variants: nothing the footer tells for the column as a whole
        }
      }
    }
    walk(schema, message, Nil)
    FooterSummary(schema, numRecords, out.result())
  }

  /** The field named `name` of `group` (exactly, else case-insensitively when unambiguous). */
  private def fieldIn(group: GroupType, name: String): Option[Type] =
    if (group.containsField(name)) Some(group.getType(name))
    else group.getFields.asScala.filter(_.getName.equalsIgnoreCase(name)).toList match {
      case one :: Nil => Some(one)
      case _ => None
    }

  private def leafStats(chunks: Vector[Map[ColumnPath, ColumnChunkMetaData]], path: ColumnPath, p: PrimitiveType,
      dt: DataType, legacyCalendar: Boolean): FooterLeafStats = {
    var nulls = 0L
    var nullsKnown = true
    var boundsKnown = boundsSupported(p, dt, legacyCalendar)
    var min: Any = null
    var max: Any = null
    chunks.foreach { rowGroup =>
      rowGroup.get(path) match {
        case None => nullsKnown = false; boundsKnown = false
        case Some(c) =>
          val s: Statistics[_] = c.getStatistics
          val numNulls = if (s != null && s.isNumNullsSet) Some(s.getNumNulls) else None
          numNulls match {
            case Some(n) => nulls += n
            case None => nullsKnown = false
          }
          val hasValue = s != null && s.hasNonNullValue
          // Values but no min/max (dropped by the writer, e.g. NaN or too long): bounds unknown.
          val mayHaveValues = numNulls.forall(_ < c.getValueCount)
          if (boundsKnown && !hasValue && mayHaveValues) boundsKnown = false
          if (boundsKnown && hasValue) {
            (value(s.genericGetMin, p, dt), value(s.genericGetMax, p, dt)) match {
              case (Some(lo), Some(hi)) =>
                if (min == null || compare(lo, min) < 0) min = lo
                if (max == null || compare(hi, max) > 0) max = hi
              case _ => boundsKnown = false
            }
          }
      }
    }
    FooterLeafStats(if (nullsKnown) Some(nulls) else None,
      if (boundsKnown && min != null) Some((min, max)) else None)
  }

  private def isSignedInt(a: LogicalTypeAnnotation): Boolean = a match {
    case null => true
    case i: IntLogicalTypeAnnotation => i.isSigned
    case _ => false
  }

  private def timestampUnitOk(a: LogicalTypeAnnotation): Boolean = a match {
    case t: TimestampLogicalTypeAnnotation =>
      t.getUnit == TimeUnit.MILLIS || t.getUnit == TimeUnit.MICROS
    case _ => false
  }

  /** Whether min/max of a column stored as `p` and read as `dt` are exact Delta bounds. */
  private[commands] def boundsSupported(p: PrimitiveType, dt: DataType, legacyCalendar: Boolean): Boolean = {
    val a = p.getLogicalTypeAnnotation
    val name = p.getPrimitiveTypeName
    dt match {
      case ByteType | ShortType | IntegerType => name == PrimitiveTypeName.INT32 && isSignedInt(a)
      case LongType => name == PrimitiveTypeName.INT64 && isSignedInt(a)
      case DateType => !legacyCalendar && name == PrimitiveTypeName.INT32 && a.isInstanceOf[DateLogicalTypeAnnotation]
      case TimestampType | TimestampNTZType =>
        !legacyCalendar && name == PrimitiveTypeName.INT64 && timestampUnitOk(a)
      case d: DecimalType => a match {
        case dec: DecimalLogicalTypeAnnotation => dec.getScale == d.scale && (name match {
          case PrimitiveTypeName.INT32 | PrimitiveTypeName.INT64 | PrimitiveTypeName.BINARY |
               PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY => true
          case _ => false
        })
        case _ => false
      }
      // Binary (UTF-8 byte) order is the string order only for the default collation.
      case s: StringType if s == StringType => name == PrimitiveTypeName.BINARY && (a match {
        case null => true
        case _: StringLogicalTypeAnnotation | _: EnumLogicalTypeAnnotation | _: JsonLogicalTypeAnnotation => true
        case _ => false
      })
      case _ => false
    }
  }

  /** A footer min/max value in StatsJson's kind for `dt`; None when it cannot be decoded. */
  private def value(v: Any, p: PrimitiveType, dt: DataType): Option[Any] = (dt, v) match {
    case (_: DecimalType, i: java.lang.Integer) => Some(java.math.BigDecimal.valueOf(i.longValue, scale(p)))
    case (_: DecimalType, l: java.lang.Long) => Some(java.math.BigDecimal.valueOf(l.longValue, scale(p)))
    case (_: DecimalType, b: Binary) =>
      val bytes = b.getBytes
      if (bytes.isEmpty) None else Some(new java.math.BigDecimal(new java.math.BigInteger(bytes), scale(p)))
    case (TimestampType | TimestampNTZType, l: java.lang.Long) =>
      p.getLogicalTypeAnnotation match {
        case t: TimestampLogicalTypeAnnotation if t.getUnit == TimeUnit.MILLIS =>
          val ms = l.longValue
          if (math.abs(ms) > Long.MaxValue / 1000) None else Some(ms * 1000L)
        case _ => Some(l.longValue)
      }
    case (_: StringType, b: Binary) => utf8(b)
    case (_, i: java.lang.Integer) => Some(i.longValue)
    case (_, l: java.lang.Long) => Some(l.longValue)
    case _ => None
  }

  private def scale(p: PrimitiveType): Int =
    p.getLogicalTypeAnnotation.asInstanceOf[DecimalLogicalTypeAnnotation].getScale

  private def utf8(b: Binary): Option[String] = {
    val decoder = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
    try Some(decoder.decode(ByteBuffer.wrap(b.getBytes)).toString)
    catch { case _: CharacterCodingException => None }
  }

  /** Delta's order of two bounds of one kind (strings by code point, as UTF-8 bytes compare). */
  private def compare(a: Any, b: Any): Int = (a, b) match {
    case (x: Long, y: Long) => java.lang.Long.compare(x, y)
    case (x: java.math.BigDecimal, y: java.math.BigDecimal) => x.compareTo(y)
    case (x: String, y: String) => UTF8String.fromString(x).binaryCompare(UTF8String.fromString(y))
    case _ => throw new IllegalArgumentException(s"bounds of different kinds: $a, $b")
  }

  // ------------------------------------------------------------------------------- rendering

  /** A leaf whose statistics are given (not collected row by row). */
  private final class GivenLeaf(name: String, dt: DataType, nc: Option[Long], given: Option[(Any, Any)])
    extends LeafAcc(name, -1, dt) {
    nc.foreach(n => nullCount = n)
    override def nullCountKnown: Boolean = nc.isDefined
    protected def value(row: org.apache.spark.sql.catalyst.InternalRow): Unit = ()
    def bounds: Option[(Any, Any)] = given
  }

  /** Whether `dt`'s bounds are rendered from the kinds [[summarize]] produces. */
  private def rendersBounds(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case _: DecimalType => true
    case s: StringType => s == StringType
    case _ => false
  }

  /** Whether `schema` has a field at `path` (case-insensitively, through structs). */
  private def hasPath(schema: StructType, path: Seq[String]): Boolean = {
    val f = schema.fields.find(_.name.equalsIgnoreCase(path.head))
    f.exists(x => path.tail.isEmpty || (x.dataType match {
      case s: StructType => hasPath(s, path.tail)
      case _ => false
    }))
  }

  /**
   * The `add.stats` JSON of the file summarized by `file`, for the table columns that `spec` indexes
   * (built over the table's data schema, the partition columns left out).
   */
  def statsJson(file: FooterSummary, spec: StatsSpec): String = {
    def build(node: StatsNode, prefix: Seq[String]): Acc = node match {
      case StructStatsNode(n, _, nf, kids) => new StructAcc(n, -1, nf, kids.map(build(_, prefix :+ n)).toArray)
      case LeafStatsNode(n, _, dt) =>
        val path = prefix :+ n
        file.leaves.get(lower(path)) match {
          case Some(s) => new GivenLeaf(n, dt, s.nullCount, s.bounds.filter(_ => rendersBounds(dt)))
          case None if !hasPath(file.schema, path) => new GivenLeaf(n, dt, Some(file.numRecords), None)
          case None => new GivenLeaf(n, dt, None, None)
        }
    }
    StatsJson.render(file.numRecords, spec.fields.map(build(_, Nil)), spec.stringPrefixLength)
  }
}
