package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.types._

import io.deltalog.commands.InvalidWriteException
import io.deltalog.spark.read.TypeWidening

/**
 * `ALTER TABLE t ALTER COLUMN c TYPE t2` (digest §6.8): allowed when the table enables type
 * widening (`delta.enableTypeWidening = true`, the `typeWidening` feature) and the change is one
 * of the protocol's widenings ([[TypeWidening.isSupported]], the rule the reader applies to older
 * files). Nothing is rewritten: the change is recorded in `delta.typeChanges` of the struct field
 * that holds the column (`fieldPath` `element` / `key` / `value`..., dotted, for a change inside an
 * array or map), and readers up-cast the older files. Anything else is refused with
 * `DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP`, as delta-spark refuses it.
 */
private[spark] object TypeChange {
  val EnableKey = "delta.enableTypeWidening"
  private val IcebergCompatKeys = Seq("delta.enableIcebergCompatV1", "delta.enableIcebergCompatV2",
    "delta.enableIcebergCompatV3")

  def enabled(conf: Map[String, String]): Boolean = conf.get(EnableKey).exists(_.trim.equalsIgnoreCase("true"))

  /**
   * Checks the change of `column` (currently `from`) to `to`.
   *
   * @param field the column's current field (for identity / generated columns)
   */
  def check(table: String, conf: Map[String, String], column: ColumnPath, field: StructField,
      from: DataType, to: DataType): Unit = {
    if (field.metadata.contains(ColumnDefinitions.IdentityStartKey)) {
      throw new InvalidWriteException("DELTA_IDENTITY_COLUMNS_ALTER_COLUMN_NOT_SUPPORTED", table,
        s"ALTER TABLE $table: ${column.display} is an identity column; its type cannot be changed.")
    }
    val iceberg = IcebergCompatKeys.exists(k => conf.get(k).exists(_.trim.equalsIgnoreCase("true")))
    val allowed = TypeWidening.isSupported(from, to) && (!iceberg || icebergCompatible(from, to))
    if (!enabled(conf) || !allowed) {
      val how =
        if (!allowed) s"${from.sql} -> ${to.sql} is not a type widening the Delta protocol allows" +
          (if (iceberg) " on a table with IcebergCompat" else "") + " (integer -> wider integer, double or " +
          "decimal with enough integer digits, float -> double, date -> timestamp_ntz, decimal precision and " +
          "scale increases); write the data to a new column instead"
        else s"type widening is not enabled on the table; enable it with ALTER TABLE $table SET TBLPROPERTIES " +
          s"('$EnableKey' = 'true') and run the statement again"
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP", table,
        s"ALTER TABLE $table ALTER COLUMN ${column.display}: cannot change the type from ${from.sql} to " +
          s"${to.sql}: $how. Nothing was changed.")
    }
    if (field.metadata.contains(ColumnDefinitions.GenerationExpressionKey)) {
      throw new InvalidWriteException("DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH", table,
        s"ALTER TABLE $table: ${column.display} is generated as " +
          s"(${field.metadata.getString(ColumnDefinitions.GenerationExpressionKey)}), an expression of type " +
          s"${from.sql}; the column's type cannot become ${to.sql}.")
    }
  }

  /** Widenings Iceberg readers apply too: integers, float -> double, decimal precision. */
  private def icebergCompatible(from: DataType, to: DataType): Boolean = (from, to) match {
    case (ByteType | ShortType | IntegerType, ByteType | ShortType | IntegerType | LongType) => true
    case (LongType, LongType) => true
    case (FloatType, DoubleType) => true
    case (f: DecimalType, t: DecimalType) => f.scale == t.scale && t.precision >= f.precision
    case (a, b) => a == b
  }

  /**
   * The schema with `column` (already checked) of type `to`, the change appended to
   * `delta.typeChanges` of the struct field that holds it.
   */
  def apply(schema: StructType, column: ColumnPath, to: DataType): StructType = {
    val from = column.field(schema).dataType
    val holder = column.holderIndex(schema)
    val fieldPath = column.parts.drop(holder + 1).map(_.toLowerCase(Locale.ROOT))
    val retyped = column.update(schema)(_.copy(dataType = to))
    ColumnPath(column.table, column.parts.take(holder + 1)).update(retyped) { f =>
      f.copy(metadata = withTypeChange(f.metadata, from, to, fieldPath))
    }
  }

  private def withTypeChange(md: Metadata, from: DataType, to: DataType, fieldPath: Seq[String]): Metadata = {
    val b = new MetadataBuilder().putString("toType", to.typeName).putString("fromType", from.typeName)
    if (fieldPath.nonEmpty) b.putString("fieldPath", fieldPath.mkString("."))
    val previous = if (md.contains(TypeWidening.TypeChangesKey)) md.getMetadataArray(TypeWidening.TypeChangesKey) else Array.empty[Metadata]
    new MetadataBuilder().withMetadata(md).putMetadataArray(TypeWidening.TypeChangesKey, previous :+ b.build()).build()
  }
}
