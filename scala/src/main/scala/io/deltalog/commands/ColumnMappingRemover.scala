package io.deltalog.commands

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.functions.{lit, struct}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, MetadataBuilder, StructType}

import io.deltalog.actions.{Action, Metadata}
import io.deltalog.exceptions.TableFeatureException
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.TableFeature
import io.deltalog.schema.DeltaSchema
import io.deltalog.txn.Operation

/**
 * DROP FEATURE `columnMapping` (digest §6.5), as delta-spark 4.4's `RemoveColumnMappingCommand`:
 * while the mode is not `none` or a field still has column mapping metadata, the pre-downgrade is
 * one `REMOVE COLUMN MAPPING` commit that rewrites every data file with the logical column names as
 * its Parquet names (deleted rows left out, `dataChange = false`, row ids kept under row tracking),
 * removes `delta.columnMapping.mode` and `delta.columnMapping.maxColumnId` and strips the column
 * mapping keys from every field. Refused first (nothing written) when a column name has a
 * character Parquet names cannot hold. A commit of the history uses the feature when its metadata
 * has a mode other than `none`.
 */
private[commands] object ColumnMappingRemover extends FeatureRemover {
  val ModeKey = "delta.columnMapping.mode"
  val MaxIdKey = "delta.columnMapping.maxColumnId"
  /** Field metadata keys of column mapping (delta-spark's `COLUMN_MAPPING_METADATA_KEYS`). */
  val FieldKeys: Seq[String] = Seq("delta.columnMapping.id", "delta.columnMapping.physicalName",
    "delta.columnMapping.nested.ids", "parquet.field.id", "parquet.field.nested.ids")
  private val InvalidChars = " ,;{}()\n\t="

  def feature: TableFeature = TableFeature.ColumnMapping

  private def mode(m: Metadata): String = ColumnMappingWriter.mode(m.configuration)

  private def schemaOf(m: Metadata): StructType = DeltaSchema.fromJson(m.schemaString)

  /** Every field as (path, field), parents first (array elements / map keys and values by their names). */
  private def fields(t: DataType, path: Seq[String]): Seq[(Seq[String], org.apache.spark.sql.types.StructField)] =
    t match {
      case s: StructType => s.fields.toSeq.flatMap(f => (path :+ f.name, f) +: fields(f.dataType, path :+ f.name))
      case a: ArrayType => fields(a.elementType, path :+ "element")
      case m: MapType => fields(m.keyType, path :+ "key") ++ fields(m.valueType, path :+ "value")
      case _ => Nil
    }

  private def hasFieldMetadata(schema: StructType): Boolean =
    fields(schema, Nil).exists { case (_, f) => FieldKeys.exists(f.metadata.contains) }

  def traces(snapshot: Snapshot): Option[String] = {
    val m = snapshot.metadata
    if (mode(m) != "none") Some(s"$ModeKey is ${mode(m)}")
    else if (hasFieldMetadata(schemaOf(m))) Some("fields of the schema still have column mapping metadata")
    else None
  }

  override def checkCanRemove(snapshot: Snapshot, table: String): Unit = {
    if (traces(snapshot).isEmpty) return
    val invalid = fields(schemaOf(snapshot.metadata), Nil).map(_._1)
      .filter(_.last.exists(c => InvalidChars.indexOf(c) >= 0)).map(p => UnresolvedAttribute(p).name)
    if (invalid.nonEmpty) {
      throw new TableFeatureException("DELTA_INVALID_COLUMN_NAMES_WHEN_REMOVING_COLUMN_MAPPING",
        s"Cannot drop columnMapping from table $table: found invalid character(s) among ' ,;{}()\\n\\t=' in the " +
          s"column names of its schema. Invalid column names: ${invalid.mkString(", ")}. Column mapping cannot be " +
          s"removed when there are invalid characters in the column names. Rename the columns (ALTER TABLE $table " +
          "RENAME COLUMN) to remove the invalid characters and run the drop again. Nothing was changed.")
    }
  }

  /** `schema` without the column mapping keys on any field. */
  def withoutFieldMetadata(schema: StructType): StructType = {
    def inType(t: DataType): DataType = t match {
      case s: StructType => StructType(s.fields.map { f =>
        val meta = FieldKeys.foldLeft(new MetadataBuilder().withMetadata(f.metadata))(_.remove(_)).build()
        f.copy(dataType = inType(f.dataType), metadata = meta)
      })
      case a: ArrayType => a.copy(elementType = inType(a.elementType))
      case m: MapType => m.copy(keyType = inType(m.keyType), valueType = inType(m.valueType))
      case other => other
    }
    inType(schema).asInstanceOf[StructType]
  }

  override def preDowngrade(log: DeltaLog, table: String): Boolean = {
    if (traces(log.update()).isEmpty) return false
    val spark = FeatureRemovers.rewriteSession(feature, table,
      "every data file must be rewritten with the logical column names")
    val DmlSupport.Opened(hadoopConf, _, _, txn) =
      DmlSupport.open(spark, log.tablePath.toString, Some(table), Map.empty, "DROP FEATURE", allowAppendOnly = true)
    val old = txn.metadata
    val removed = old.copy(schemaString = DeltaSchema.toJson(withoutFieldMetadata(schemaOf(old))),
      configuration = old.configuration - ModeKey - MaxIdKey)
    val rw = new RowLevelRewrite(spark, txn, hadoopConf, table, "DROP FEATURE", evolved = Some(removed),
      forceCopyOnWrite = true, readAs = Some(old))
    import RowChanges._
    val identity = struct(rw.schema.fieldNames.toSeq.map(n => WriteSchema.column(n).as(n)): _*)
    def keepAll(rows: DataFrame): DataFrame = rows.withColumn(ActionColumn, lit(Keep)).withColumn(NewValuesColumn, identity)
    val files = txn.filterFiles()
    rw.commit(files.map(f => rw.Touched(f, 0L, 0L, None)), keepAll, withInserts = false, identityColumns = Nil,
      scanTimeMs = 0L, op = o => Operation.removeColumnMapping.withMetrics(
        Map("numOutputBytes" -> o.addedFiles.map(_.size).sum.toString)),
      dataChange = false)
    true
  }

  override def actionUsesFeature(action: Action): Boolean = action match {
    case m: Metadata => mode(m) != "none"
    case _ => false
  }
}
