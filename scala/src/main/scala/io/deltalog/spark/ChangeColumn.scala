package io.deltalog.spark

import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.connector.catalog.TableChange
import org.apache.spark.sql.connector.catalog.TableChange.{ColumnChange, ColumnPosition}
import org.apache.spark.sql.types.{MetadataBuilder, StructField, StructType}

import io.deltalog.commands.InvalidWriteException
import io.deltalog.spark.read.TypeWidening
import io.deltalog.txn.Operation

/**
 * The schema after `ALTER TABLE ... ALTER COLUMN` (Spark also sends `CHANGE COLUMN` this way):
 * for each column, in the order Spark lists them, a new type ([[TypeChange]]), `DROP NOT NULL`,
 * a comment, a position (`FIRST` / `AFTER c`, within the column's struct) and `SET DEFAULT` /
 * `DROP DEFAULT` (`CURRENT_DEFAULT` field metadata; setting one needs the `allowColumnDefaults`
 * feature). Columns are top-level or nested (`s.f`, `arr.element`, `m.value`).
 *
 * The operation is delta-spark's: `CHANGE COLUMN` with `column` (the column's field JSON after the
 * change, named by its path, the type change not yet in its metadata) and `position` when moved;
 * `CHANGE COLUMNS` with `columns` (those objects, each with its `position`) for several columns.
 *
 * @param defaultsSupported whether the table's protocol supports `allowColumnDefaults`
 */
private[spark] final class ChangeColumn(table: String, conf: Map[String, String], defaultsSupported: Boolean,
    dependencies: ColumnDependencies) {

  def apply(schema0: StructType, changes: Seq[ColumnChange]): (StructType, Operation) = {
    val groups = changes.groupBy(_.fieldNames().toSeq)
    val order = changes.map(_.fieldNames().toSeq).distinct
    var schema = schema0
    val params = order.map { names =>
      val column = ColumnPath(table, names).resolved(schema)
      val original = column.field(schema)
      var position: Option[String] = None
      groups(names).foreach { change =>
        schema = change match {
          case c: TableChange.UpdateColumnType => retype(schema, column, c)
          case c: TableChange.UpdateColumnNullability => nullability(schema, column, c.nullable())
          case c: TableChange.UpdateColumnComment =>
            refuseInCollection(schema, column, "COMMENT_MAP_ARRAY", "a comment")
            column.update(schema)(f => f.copy(metadata =
              new MetadataBuilder().withMetadata(f.metadata).putString("comment", c.newComment()).build()))
          case c: TableChange.UpdateColumnPosition =>
            val (moved, text) = move(schema, column, c.position())
            position = Some(text)
            moved
          case c: TableChange.UpdateColumnDefaultValue => default(schema, column, c)
          case other => throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", table,
            s"ALTER TABLE $table: ${other.getClass.getSimpleName} is not supported; nothing was changed.")
        }
      }
      (columnJson(schema, column, original), position)
    }
    val op =
      if (params.size == 1) {
        val (json, position) = params.head
        Operation("CHANGE COLUMN", Map("column" -> ChangeColumn.mapper.writeValueAsString(json)) ++
          position.map("position" -> _), changesData = false)
      } else {
        val arr = ChangeColumn.mapper.createArrayNode()
        params.foreach { case (json, position) =>
          position.foreach(p => json.put("position", p))
          arr.add(json)
        }
        Operation("CHANGE COLUMNS", Map("columns" -> ChangeColumn.mapper.writeValueAsString(arr)), changesData = false)
      }
    (schema, op)
  }

  private def retype(schema: StructType, column: ColumnPath, c: TableChange.UpdateColumnType): StructType = {
    val field = column.field(schema)
    val holder = ColumnPath(table, column.parts.take(column.holderIndex(schema) + 1)).field(schema)
    if (field.dataType == c.newDataType()) schema
    else {
      TypeChange.check(table, conf, column, holder, field.dataType, c.newDataType())
      dependencies.check(column)
      TypeChange(schema, column, c.newDataType())
    }
  }

  private def nullability(schema: StructType, column: ColumnPath, nullable: Boolean): StructType =
    column.update(schema) { f =>
      if (!nullable && f.nullable) {
        throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP", table,
          s"ALTER TABLE $table ALTER COLUMN ${column.display} SET NOT NULL: the column is nullable and existing " +
            "rows may hold NULL; a nullable column cannot become NOT NULL. Add a CHECK constraint " +
            s"(${column.display} IS NOT NULL) instead. Nothing was changed.")
      }
      f.copy(nullable = nullable)
    }

  private def default(schema: StructType, column: ColumnPath, c: TableChange.UpdateColumnDefaultValue): StructType = {
    refuseInCollection(schema, column, "ALTER_TABLE_CHANGE_COL_OP", "a default")
    val value = Option(c.newCurrentDefault()).map(_.getSql)
    if (value.isDefined && !defaultsSupported) {
      throw new InvalidWriteException("WRONG_COLUMN_DEFAULTS_FOR_DELTA_FEATURE_NOT_ENABLED", table,
        s"ALTER TABLE $table ALTER COLUMN ${column.display} SET DEFAULT needs the allowColumnDefaults table " +
          s"feature; enable it with ALTER TABLE $table SET TBLPROPERTIES ('delta.feature.allowColumnDefaults' = " +
          "'supported') and run the statement again. Nothing was changed.")
    }
    column.update(schema) { f =>
      val md = value match {
        case Some(sql) => new MetadataBuilder().withMetadata(f.metadata)
          .putString(ColumnDefinitions.CurrentDefaultKey, sql).build()
        case None => ColumnPath.without(f.metadata, ColumnDefinitions.CurrentDefaultKey)
      }
      f.copy(metadata = md)
    }
  }

  /** The column moved within its struct; and the `position` parameter (`FIRST`, `AFTER c`). */
  private def move(schema: StructType, column: ColumnPath, position: ColumnPosition): (StructType, String) = {
    refuseInCollection(schema, column, "ALTER_TABLE_CHANGE_COL_OP", "a position")
    var text = ""
    val moved = column.updateParent(schema) { parent =>
      val me = parent.fields.find(f => ColumnPath.same(f.name, column.leaf)).get
      val rest = parent.fields.filterNot(_ eq me)
      val at = position match {
        case _: TableChange.First => text = "FIRST"; 0
        case a: TableChange.After =>
          val j = rest.indexWhere(f => ColumnPath.same(f.name, a.column()))
          if (j < 0) {
            throw new InvalidWriteException("DELTA_COLUMN_NOT_FOUND", table,
              s"ALTER TABLE $table ALTER COLUMN ${column.display} AFTER ${a.column()}: no column ${a.column()} " +
                s"beside ${column.display} (columns there: ${rest.map(_.name).mkString(", ")}); nothing was changed.")
          }
          text = s"AFTER ${rest(j).name}"
          j + 1
        case other => throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", table,
          s"ALTER TABLE $table: position $other is not supported; nothing was changed.")
      }
      StructType((rest.take(at) :+ me) ++ rest.drop(at))
    }
    (moved, text)
  }

  private def refuseInCollection(schema: StructType, column: ColumnPath, errorSuffix: String, what: String): Unit =
    if (column.endsInCollection(schema)) {
      throw new InvalidWriteException(s"DELTA_UNSUPPORTED_$errorSuffix", table,
        s"ALTER TABLE $table: ${column.display} is an array element or a map key / value, which cannot have " +
          s"$what; nothing was changed.")
    }

  /**
   * The column after the change as delta-spark records it: named by its path, with the metadata
   * of the change except the type change just recorded (`delta.typeChanges` as before).
   */
  private def columnJson(schema: StructType, column: ColumnPath, original: StructField): ObjectNode = {
    val now = column.field(schema)
    val key = TypeWidening.TypeChangesKey
    val md = if (original.metadata.contains(key)) {
      new MetadataBuilder().withMetadata(now.metadata).putMetadataArray(key, original.metadata.getMetadataArray(key)).build()
    } else ColumnPath.without(now.metadata, key)
    val json = StructType(Seq(now.copy(name = column.display, metadata = md))).json
    ChangeColumn.mapper.readTree(json).get("fields").get(0).asInstanceOf[ObjectNode]
  }
}

private[spark] object ChangeColumn {
  private val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
}
