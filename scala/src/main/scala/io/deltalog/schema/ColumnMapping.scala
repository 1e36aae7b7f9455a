package io.deltalog.schema

import java.util.Locale

import org.apache.spark.sql.types._

import io.deltalog.actions.{Metadata => DeltaMetadata}
import io.deltalog.protocol.{Protocol, TableFeature}

/** `delta.columnMapping.mode` (digest §6.1). */
sealed abstract class ColumnMappingMode(val name: String) {
  override def toString: String = name
}

object ColumnMappingMode {
  /** `none`: physical name = display name. */
  case object NoMapping extends ColumnMappingMode("none")
  /** `name`: data files use `delta.columnMapping.physicalName`. */
  case object NameMapping extends ColumnMappingMode("name")
  /** `id`: data files are matched by Parquet field id = `delta.columnMapping.id`. */
  case object IdMapping extends ColumnMappingMode("id")

  val all: Seq[ColumnMappingMode] = Seq(NoMapping, NameMapping, IdMapping)

  /** The mode named `s` (case-insensitive), or None. */
  def fromName(s: String): Option[ColumnMappingMode] = all.find(_.name == s.trim.toLowerCase(Locale.ROOT))
}

/**
 * Logical (display) ↔ physical column names and field ids under column mapping (digest §6.1).
 * Shared by reads (Parquet columns, stats and partition-value keys by physical name) and writes
 * (data files written with physical names and field ids).
 */
object ColumnMapping {
  import ColumnMappingMode._

  val ModeKey = "delta.columnMapping.mode"
  val MaxColumnIdKey = "delta.columnMapping.maxColumnId"
  /** Field metadata: the column id (int). */
  val IdKey = "delta.columnMapping.id"
  /** Field metadata: the physical name. */
  val PhysicalNameKey = "delta.columnMapping.physicalName"
  /** Field metadata (IcebergCompatV2): ids of array elements / map keys and values. */
  val NestedIdsKey = "delta.columnMapping.nested.ids"
  /** Spark's Parquet field-id metadata key (`ParquetUtils.FIELD_ID_METADATA_KEY`). */
  val ParquetFieldIdKey = "parquet.field.id"

  /**
   * The mode of a table. The property is honoured only when the protocol supports
   * `columnMapping` (reader 2 / writer 5, or the feature listed); pass `protocol = null` to skip
   * that check.
   *
   * @throws ColumnMappingException for an unknown mode name
   */
  def mode(metadata: DeltaMetadata, protocol: Protocol = null, table: String = null): ColumnMappingMode =
    metadata.configuration.get(ModeKey) match {
      case None => NoMapping
      case Some(v) =>
        val m = fromName(v).getOrElse(throw new ColumnMappingException(table,
          s"unknown column mapping mode '$v' in $ModeKey (expected none, name or id)"))
        if (protocol != null && m != NoMapping && !protocol.isFeatureSupported(TableFeature.ColumnMapping)) NoMapping
        else m
    }

  /** The mode named by a table configuration (`none` when unset or unknown). */
  def fromConfiguration(configuration: Map[String, String]): ColumnMappingMode =
    configuration.get(ModeKey).flatMap(fromName).getOrElse(NoMapping)

  /** Column id of `field` (`delta.columnMapping.id`), if present. */
  def fieldId(field: StructField): Option[Int] = columnId(field).map(_.toInt)

  /**
   * `delta.columnMapping.id` of `field` as the protocol writes it (an integer), if present.
   *
   * @throws ColumnMappingException when it is present but not an integer (e.g. the string "1")
   */
  def columnId(field: StructField): Option[Long] =
    if (!field.metadata.contains(IdKey)) None
    else try Some(field.metadata.getLong(IdKey)) catch {
      case _: ClassCastException => throw new ColumnMappingException(null,
        s"column '${field.name}' has a $IdKey that is not an integer (${field.metadata.json}); the schema " +
          "was written by a writer that breaks the protocol")
    }

  /**
   * Physical name of `field`: its display name in mode `none`, else `delta.columnMapping.physicalName`.
   *
   * @throws ColumnMappingException when the field lacks the physical name in `name`/`id` mode
   */
  def physicalName(field: StructField, mode: ColumnMappingMode): String = mode match {
    case NoMapping => field.name
    case _ =>
      if (field.metadata.contains(PhysicalNameKey)) field.metadata.getString(PhysicalNameKey)
      else throw new ColumnMappingException(null,
        s"column '${field.name}' has no $PhysicalNameKey although column mapping mode is $mode")
  }

  /**
   * `schema` with every field (nested in structs, arrays and maps too) renamed to its physical
   * name; in `id` mode each field with a column id also carries [[ParquetFieldIdKey]] so Spark's
   * Parquet reader matches columns by field id (fields without an id are matched by name). Mode
   * `none` returns `schema` unchanged.
   */
  def toPhysical(schema: StructType, mode: ColumnMappingMode): StructType =
    if (mode == NoMapping) schema else physicalStruct(schema, mode)

  private def physicalStruct(s: StructType, mode: ColumnMappingMode): StructType =
    StructType(s.fields.map { f =>
      val meta = mode match {
        case IdMapping =>
          // a field without a column id (e.g. CDF's `_change_type`) is matched by its physical name
          fieldId(f).map(id => new MetadataBuilder().withMetadata(f.metadata).putLong(ParquetFieldIdKey, id).build())
            .getOrElse(f.metadata)
        case _ => f.metadata
      }
      StructField(physicalName(f, mode), physicalType(f.dataType, mode), f.nullable, meta)
    })

  private def physicalType(t: DataType, mode: ColumnMappingMode): DataType = t match {
    case s: StructType => physicalStruct(s, mode)
    case a: ArrayType => a.copy(elementType = physicalType(a.elementType, mode))
    case m: MapType => m.copy(keyType = physicalType(m.keyType, mode), valueType = physicalType(m.valueType, mode))
    case other => other
  }

  /**
   * Physical path of the (possibly nested, through structs only) logical column `logicalPath`,
   * names matched case-insensitively; None when no such column exists.
   */
  def physicalPath(schema: StructType, logicalPath: Seq[String], mode: ColumnMappingMode): Option[Seq[String]] =
    logicalPath match {
      case Seq() => Some(Nil)
      case head +: rest =>
        schema.fields.find(_.name.equalsIgnoreCase(head)).flatMap { f =>
          val name = physicalName(f, mode)
          if (rest.isEmpty) Some(Seq(name))
          else f.dataType match {
            case s: StructType => physicalPath(s, rest, mode).map(name +: _)
            case _ => None
          }
        }
    }

  /** Field metadata keys that describe the storage of a column, not its meaning to users. */
  val InternalMetadataKeys: Seq[String] =
    Seq(IdKey, PhysicalNameKey, NestedIdsKey, ParquetFieldIdKey, "delta.typeChanges")

  /**
   * `schema` without [[InternalMetadataKeys]] (recursively): the schema users see when reading,
   * so a DataFrame read from one table does not carry its column ids / physical names elsewhere.
   */
  def dropInternalMetadata(schema: StructType): StructType = StructType(schema.fields.map { f =>
    val meta = InternalMetadataKeys.foldLeft(new MetadataBuilder().withMetadata(f.metadata))(_.remove(_)).build()
    f.copy(dataType = dropInType(f.dataType), metadata = meta)
  })

  private def dropInType(t: DataType): DataType = t match {
    case s: StructType => dropInternalMetadata(s)
    case a: ArrayType => a.copy(elementType = dropInType(a.elementType))
    case m: MapType => m.copy(keyType = dropInType(m.keyType), valueType = dropInType(m.valueType))
    case other => other
  }

  /**
   * `schema` (e.g. a pruned read schema) with each field's metadata taken from the field of the
   * same name (case-insensitive) in `reference` (the table schema), recursively; fields without a
   * counterpart keep theirs.
   */
  def withMetadataFrom(schema: StructType, reference: StructType): StructType = StructType(schema.fields.map { f =>
    reference.fields.find(_.name.equalsIgnoreCase(f.name)) match {
      case Some(r) => f.copy(dataType = typeWithMetadataFrom(f.dataType, r.dataType), metadata = r.metadata)
      case None => f
    }
  })

  private def typeWithMetadataFrom(t: DataType, ref: DataType): DataType = (t, ref) match {
    case (s: StructType, r: StructType) => withMetadataFrom(s, r)
    case (a: ArrayType, r: ArrayType) => a.copy(elementType = typeWithMetadataFrom(a.elementType, r.elementType))
    case (m: MapType, r: MapType) =>
      m.copy(keyType = typeWithMetadataFrom(m.keyType, r.keyType), valueType = typeWithMetadataFrom(m.valueType, r.valueType))
    case _ => t
  }

  /** Physical names of the top-level columns of `schema`, by logical name (as spelled in the schema). */
  def physicalNames(schema: StructType, mode: ColumnMappingMode): Map[String, String] =
    schema.fields.map(f => f.name -> physicalName(f, mode)).toMap

  /**
   * The key under which `add.partitionValues` holds the logical partition column `column`
   * (its physical name in `name`/`id` mode).
   */
  def partitionValueKey(schema: StructType, column: String, mode: ColumnMappingMode): String =
    schema.fields.find(_.name.equalsIgnoreCase(column)).map(physicalName(_, mode)).getOrElse(column)
}
