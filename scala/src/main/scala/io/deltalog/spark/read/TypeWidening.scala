package io.deltalog.spark.read

import scala.util.Try

import org.apache.spark.sql.types._

import io.deltalog.exceptions.DeltalogException

/** A column's recorded type change cannot be read (Spark's Parquet readers cannot up-cast it). */
class UnsupportedTypeChangeException private (val table: String, val column: String, val fromType: String,
    val toType: String, verbatim: String)
  extends DeltalogException("DELTA_UNSUPPORTED_TYPE_CHANGE_FOR_READ", DeltalogException.messageOr(verbatim,
    s"Table $table: column '$column' was changed from $fromType to $toType, which is not a type widening " +
      "this reader can apply to older data files (the protocol allows integer -> wider integer / double / " +
      "decimal(10+k1,k2), long -> decimal(20+k1,k2), float -> double, date -> timestamp_ntz and decimal " +
      "precision/scale increases). Rewrite the old files with the new type (e.g. REORG TABLE ... APPLY " +
      "(PURGE) in delta-spark) or read the table with its writer.")) {
  def this(table: String, column: String, fromType: String, toType: String) =
    this(table, column, fromType, toType, null)
  def this(message: String) = this(null, null, null, null, message)
}

/**
 * Type widening on read (digest §6.8): files written before a type change keep their narrow
 * physical type and are up-cast by Spark's Parquet readers to the table type. This checks, before
 * any file is read, that every change recorded in `delta.typeChanges` is one of the widenings the
 * protocol defines (all of which Spark 4 reads) or, for top-level columns, an integer -> decimal
 * change the reader casts itself ([[isCastable]]); any other change is refused with a typed error.
 */
object TypeWidening {
  val TypeChangesKey = "delta.typeChanges"

  /** True when `from` → `to` is a protocol type widening. */
  def isSupported(from: DataType, to: DataType): Boolean = (from, to) match {
    case (a, b) if a == b => true
    case (ByteType, ShortType | IntegerType | LongType | DoubleType) => true
    case (ShortType, IntegerType | LongType | DoubleType) => true
    case (IntegerType, LongType | DoubleType) => true
    case (FloatType, DoubleType) => true
    case (DateType, TimestampNTZType) => true
    case (f: DecimalType, t: DecimalType) => t.scale >= f.scale && t.precision - t.scale >= f.precision - f.scale
    case (ByteType | ShortType | IntegerType, t: DecimalType) => t.precision - t.scale >= 10
    case (LongType, t: DecimalType) => t.precision - t.scale >= 20
    case _ => false
  }

  /**
   * Integer -> decimal changes with enough integer digits for every value of the integer type
   * (typeWidening-preview allowed e.g. byte -> decimal(4,1)); Spark does not up-cast them from
   * Parquet itself, so the reader casts (see [[TypeChangeFallback]]). Top-level columns only.
   */
  def isCastable(from: DataType, to: DataType): Boolean = (from, to) match {
    case (ByteType, t: DecimalType) => t.precision - t.scale >= 3
    case (ShortType, t: DecimalType) => t.precision - t.scale >= 5
    case (IntegerType, t: DecimalType) => t.precision - t.scale >= 10
    case (LongType, t: DecimalType) => t.precision - t.scale >= 19
    case _ => false
  }

  /**
   * Top-level columns (lower-cased names) with a change that only [[isCastable]]: the older types
   * their files may hold, newest first.
   */
  def fallbackColumns(schema: StructType): Map[String, Seq[DataType]] = schema.fields.flatMap { f =>
    val changes = typeChanges(f)
    if (changes.exists { case (from, to, path) => path.isEmpty && !isSupported(from, to) && isCastable(from, to) }) {
      Some(f.name.toLowerCase(java.util.Locale.ROOT) -> changes.filter(_._3.isEmpty).map(_._1).reverse.distinct)
    } else None
  }.toMap

  private def typeChanges(f: StructField): Seq[(DataType, DataType, Option[String])] =
    if (!f.metadata.contains(TypeChangesKey)) Nil
    else f.metadata.getMetadataArray(TypeChangesKey).toSeq.flatMap { c =>
      def str(k: String) = if (c.contains(k)) Option(c.getString(k)) else None
      for (a <- str("fromType").flatMap(parse); b <- str("toType").flatMap(parse)) yield (a, b, str("fieldPath"))
    }

  /** @throws UnsupportedTypeChangeException for the first unreadable change recorded in `schema` */
  def checkReadable(schema: StructType, table: String): Unit = check(schema, Nil, table)

  private def check(s: StructType, prefix: Seq[String], table: String): Unit = s.fields.foreach { f =>
    val path = prefix :+ f.name
    if (f.metadata.contains(TypeChangesKey)) {
      f.metadata.getMetadataArray(TypeChangesKey).foreach { change =>
        def str(k: String) = if (change.contains(k)) change.getString(k) else null
        val (from, to) = (str("fromType"), str("toType"))
        val topLevel = prefix.isEmpty && str("fieldPath") == null
        val ok = for (a <- parse(from); b <- parse(to)) yield isSupported(a, b) || (topLevel && isCastable(a, b))
        if (!ok.contains(true)) {
          val where = Option(str("fieldPath")).map(p => s"${path.mkString(".")}.$p").getOrElse(path.mkString("."))
          throw new UnsupportedTypeChangeException(table, where, from, to)
        }
      }
    }
    nested(f.dataType, path, table)
  }

  private def nested(t: DataType, path: Seq[String], table: String): Unit = t match {
    case st: StructType => check(st, path, table)
    case a: ArrayType => nested(a.elementType, path :+ "element", table)
    case m: MapType => nested(m.keyType, path :+ "key", table); nested(m.valueType, path :+ "value", table)
    case _ => ()
  }

  private def parse(name: String): Option[DataType] =
    Option(name).flatMap(n => Try(DataType.fromJson("\"" + n + "\"")).toOption)
}
