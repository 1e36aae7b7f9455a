package io.deltalog.spark.stream

import java.util.Locale

import org.apache.spark.sql.types.{ArrayType, DataType, MapType, NullType, StructType}

import io.deltalog.actions.Metadata
import io.deltalog.exceptions.StreamingSourceException
import io.deltalog.schema.{ColumnMapping, ColumnMappingMode, DeltaSchema}

/**
 * The schema rules of a streaming read. The stream's schema is the table's when the source
 * started (`initMetadata`, version `initVersion`); a `metaData` action met on the way:
 *
 *  - of another table id fails (`DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE`);
 *  - renaming or dropping a column-mapped column (same physical name, other or no logical name)
 *    fails with `DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG`;
 *  - after `initVersion`, any other schema or partitioning than the stream's fails with
 *    `DELTA_SCHEMA_CHANGED_WITH_VERSION` (`..._WITH_STARTING_OPTIONS` when the stream was given a
 *    starting version / timestamp): a restart picks the new schema up;
 *  - at or before `initVersion` (commits older than the stream's schema, read after a restart or
 *    from a starting version), its data must be readable with the stream's schema: every column
 *    still there with the same type (columns added since are read as nulls).
 */
final class SourceSchemaChecks(
    table: String,
    initMetadata: Metadata,
    initVersion: Long,
    hasStartingOption: Boolean) {

  private val readSchema: StructType = SourceSchemaChecks.sparkSchema(initMetadata, table)

  def check(version: Long, m: Metadata): Unit = {
    if (m.id != initMetadata.id) {
      throw new StreamingSourceException("DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE",
        s"The streaming query was reading from an unexpected Delta table (id = '${m.id}' at version $version of " +
          s"$table). It used to read from another Delta table (id = '${initMetadata.id}'). This may happen when " +
          "the table was deleted and re-created. Please delete your streaming query checkpoint to restart from scratch.")
    }
    val (older, newer) = if (version <= initVersion) (m, initMetadata) else (initMetadata, m)
    renamedOrDropped(older, newer).foreach { what =>
      throw new StreamingSourceException("DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG",
        // delta-spark's message, then what happened and what to do with deltalog (no schema tracking log)
        "Streaming read is not supported on tables with read-incompatible schema changes (e.g. rename or drop or " +
          "datatype changes).\nPlease provide a 'schemaTrackingLocation' to enable non-additive schema evolution " +
          s"for Delta stream processing.\nSee ${SourceSchemaChecks.ColumnMappingDocs} for more details.\n" +
          s"Read schema: ${readSchema.json}. Incompatible data schema: ${SourceSchemaChecks.sparkSchema(m, table).json}." +
          s"\nTable $table, version $version: $what. deltalog's streaming source does not implement " +
          "schemaTrackingLocation: start a new stream with a new checkpoint and a startingVersion after " +
          s"$version instead.")
    }
    val dataSchema = SourceSchemaChecks.sparkSchema(m, table)
    val samePartitioning = m.partitionColumns.map(_.toLowerCase(Locale.ROOT)) ==
      initMetadata.partitionColumns.map(_.toLowerCase(Locale.ROOT))
    val compatible =
      if (version > initVersion) SourceSchemaChecks.sameSchema(readSchema, dataSchema)
      else SourceSchemaChecks.readableWith(dataSchema, readSchema)
    if (!compatible || !samePartitioning) {
      val (errorClass, advice) =
        if (hasStartingOption) ("DELTA_SCHEMA_CHANGED_WITH_STARTING_OPTIONS",
          " If the issue persists after changing to a new checkpoint directory, you may need to change the existing " +
            s"'startingVersion' or 'startingTimestamp' option to start from a version newer than $version with a new " +
            "checkpoint directory.")
        else ("DELTA_SCHEMA_CHANGED_WITH_VERSION", "")
      throw new StreamingSourceException(errorClass,
        s"Detected schema change in version $version of table $table: streaming source schema: " +
          s"${readSchema.simpleString} (partitioned by ${initMetadata.partitionColumns.mkString("[", ", ", "]")}), " +
          s"data file schema: ${dataSchema.simpleString} (partitioned by ${m.partitionColumns.mkString("[", ", ", "]")}). " +
          "Please try restarting the query. If this issue repeats across query restarts without making progress, you " +
          "have made an incompatible schema change and need to start your query from scratch using a new checkpoint " +
          "directory." + advice)
    }
  }

  /** A column-mapped top-level column of `older` renamed or dropped in `newer`, described; None if none. */
  private def renamedOrDropped(older: Metadata, newer: Metadata): Option[String] = {
    val oldMode = ColumnMapping.fromConfiguration(older.configuration)
    val newMode = ColumnMapping.fromConfiguration(newer.configuration)
    if (oldMode == ColumnMappingMode.NoMapping || newMode == ColumnMappingMode.NoMapping) return None
    def byPhysical(m: Metadata): Map[String, String] =
      DeltaSchema.tableSchema(m, table).fields.flatMap { f =>
        if (f.metadata.contains(ColumnMapping.PhysicalNameKey)) Some(f.metadata.getString(ColumnMapping.PhysicalNameKey) -> f.name)
        else None
      }.toMap
    val before = byPhysical(older)
    val after = byPhysical(newer)
    before.collectFirst {
      case (phys, name) if !after.contains(phys) => s"column '$name' was dropped"
      case (phys, name) if after(phys) != name => s"column '$name' was renamed to '${after(phys)}'"
    }
  }
}

object SourceSchemaChecks {
  /** The documentation page delta-spark's schema-change errors point to. */
  val ColumnMappingDocs = "https://docs.delta.io/latest/versioning.html#column-mapping"

  /** The schema Spark sees for `m` (void columns and column-mapping metadata dropped). */
  def sparkSchema(m: Metadata, table: String): StructType = {
    val full = DeltaSchema.tableSchema(m, table)
    ColumnMapping.dropInternalMetadata(StructType(full.fields.filterNot(_.dataType == NullType)))
  }

  /** Same column names (case-insensitive), order and types, nullability aside. */
  def sameSchema(a: StructType, b: StructType): Boolean =
    a.length == b.length && a.fields.zip(b.fields).forall { case (x, y) =>
      x.name.equalsIgnoreCase(y.name) && sameType(x.dataType, y.dataType)
    }

  private def sameType(a: DataType, b: DataType): Boolean = (a, b) match {
    case (x: StructType, y: StructType) => sameSchema(x, y)
    case (ArrayType(x, _), ArrayType(y, _)) => sameType(x, y)
    case (MapType(k1, v1, _), MapType(k2, v2, _)) => sameType(k1, k2) && sameType(v1, v2)
    case _ => a == b
  }

  /** Data of schema `data` (older) can be read with `read`: every column of `data` is in `read` with the same type. */
  def readableWith(data: StructType, read: StructType): Boolean =
    data.fields.forall { f =>
      read.fields.find(_.name.equalsIgnoreCase(f.name)).exists(r => (f.dataType, r.dataType) match {
        case (x: StructType, y: StructType) => readableWith(x, y)
        case (x, y) => sameType(x, y)
      })
    }
}
