package io.deltalog.commands

import java.util.{Locale, UUID}

import org.apache.spark.sql.types._

/**
 * Column mapping on write (digest §6.1): new fields get `delta.columnMapping.id` (the next id
 * after `delta.columnMapping.maxColumnId`) and `delta.columnMapping.physicalName` (`col-<uuid>`);
 * data files are written with the physical names and the ids as Parquet field ids.
 */
private[deltalog] object ColumnMappingWriter {
  val ModeKey = "delta.columnMapping.mode"
  val MaxIdKey = "delta.columnMapping.maxColumnId"
  val IdKey = "delta.columnMapping.id"
  val PhysicalNameKey = "delta.columnMapping.physicalName"
  val ParquetFieldIdKey = "parquet.field.id"

  def mode(conf: Map[String, String]): String =
    conf.get(ModeKey).map(_.trim.toLowerCase(Locale.ROOT)).getOrElse("none")

  def enabled(conf: Map[String, String]): Boolean = mode(conf) != "none"

  /**
   * Gives every field without an id an id and a physical name (`col-<uuid>`, or with
   * `keepNames` its current name, as when an existing table turns column mapping on); returns the
   * schema and the new `maxColumnId`. Fields that already have them keep them.
   */
  def assignIds(schema: StructType, conf: Map[String, String], keepNames: Boolean = false): (StructType, Long) = {
    var maxId = math.max(conf.get(MaxIdKey).flatMap(_.trim.toLongOption).getOrElse(0L), maxIdIn(schema))
    def field(f: StructField): StructField = {
      val withId =
        if (f.metadata.contains(IdKey) && f.metadata.contains(PhysicalNameKey)) f
        else {
          maxId += 1
          val md = new MetadataBuilder().withMetadata(f.metadata).putLong(IdKey, maxId)
            .putString(PhysicalNameKey, if (keepNames) f.name else s"col-${UUID.randomUUID()}").build()
          f.copy(metadata = md)
        }
      withId.copy(dataType = dataType(withId.dataType))
    }
    def dataType(dt: DataType): DataType = dt match {
      case s: StructType => StructType(s.fields.map(field))
      case a: ArrayType => a.copy(elementType = dataType(a.elementType))
      case m: MapType => m.copy(keyType = dataType(m.keyType), valueType = dataType(m.valueType))
      case other => other
    }
    val out = StructType(schema.fields.map(field))
    (out, maxId)
  }

  private def maxIdIn(dt: DataType): Long = dt match {
    case s: StructType => s.fields.map { f =>
      val own = io.deltalog.schema.ColumnMapping.columnId(f).getOrElse(0L)
      math.max(own, maxIdIn(f.dataType))
    }.foldLeft(0L)(math.max)
    case a: ArrayType => maxIdIn(a.elementType)
    case m: MapType => math.max(maxIdIn(m.keyType), maxIdIn(m.valueType))
    case _ => 0L
  }

  def physicalName(f: StructField): String =
    if (f.metadata.contains(PhysicalNameKey)) f.metadata.getString(PhysicalNameKey) else f.name

  /**
   * The schema data files are written with: physical names, Parquet field ids (when mapped),
   * no other field metadata.
   */
  def physicalSchema(schema: StructType, mapped: Boolean): StructType = {
    def field(f: StructField): StructField = {
      val md = if (mapped && f.metadata.contains(IdKey)) {
        new MetadataBuilder().putLong(ParquetFieldIdKey, io.deltalog.schema.ColumnMapping.columnId(f).get).build()
      } else Metadata.empty
      StructField(if (mapped) physicalName(f) else f.name, dataType(f.dataType), f.nullable, md)
    }
    def dataType(dt: DataType): DataType = dt match {
      case s: StructType => StructType(s.fields.map(field))
      case a: ArrayType => a.copy(elementType = dataType(a.elementType))
      case m: MapType => m.copy(keyType = dataType(m.keyType), valueType = dataType(m.valueType))
      case other => other
    }
    StructType(schema.fields.map(field))
  }
}
