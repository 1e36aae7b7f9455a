package io.deltalog.spark

import org.apache.spark.sql.types.{DataType, StructType}

import io.deltalog.actions.Metadata
import io.deltalog.commands.{ColumnMappingWriter, InvalidWriteException}

/**
 * `ALTER TABLE t SET TBLPROPERTIES ('delta.columnMapping.mode' = ...)` on an existing table
 * (digest §6.1): `none` -> `name` gives every field an id and, as its physical name, its current
 * name (the data files already use it), and sets `delta.columnMapping.maxColumnId`; the commit's
 * protocol upgrade adds columnMapping. Other mode changes would need the data rewritten (`-> none`)
 * or are not allowed (`-> id`), and are refused with `DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE`.
 */
private[spark] object ColumnMappingModeChange {
  private val KnownModes = Set("none", "name", "id")

  /** `next` (the metadata with the new properties) with the field ids a mode change needs. */
  def apply(table: String, before: Metadata, next: Metadata): Metadata = {
    val (from, to) = (ColumnMappingWriter.mode(before.configuration), ColumnMappingWriter.mode(next.configuration))
    // An unknown mode is left to the property validation of the commit (DELTA_INVALID_TABLE_PROPERTY_VALUE).
    if (from == to || !ColumnMappingModeChange.KnownModes.contains(to)) next
    else if (from == "none" && to == "name") {
      val schema = DataType.fromJson(next.schemaString).asInstanceOf[StructType]
      val (mapped, maxId) = ColumnMappingWriter.assignIds(schema, next.configuration, keepNames = true)
      next.copy(schemaString = mapped.json,
        configuration = next.configuration + (ColumnMappingWriter.MaxIdKey -> maxId.toString))
    } else {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE", table,
        s"ALTER TABLE $table: column mapping mode '$from' cannot be changed to '$to' on an existing table " +
          "(only 'none' -> 'name' is possible; 'id' is chosen when the table is created); nothing was changed.")
    }
  }
}
