package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.connector.catalog.TableChange
import org.apache.spark.sql.types.StructType

import io.deltalog.actions.Metadata
import io.deltalog.commands.{ColumnMappingWriter, InvalidWriteException, StatsSpec}
import io.deltalog.txn.Operation

/**
 * `ALTER TABLE t RENAME COLUMN a TO b` and `ALTER TABLE t DROP COLUMN[S] [IF EXISTS] ...` on a
 * table with column mapping (digest §6.1): data files keep their columns under the physical names,
 * so a rename changes only the field's display name (the physical name and id stay) and a drop
 * only removes the field from the schema; nothing is rewritten. Without column mapping the names
 * in the files are the column names, so both are refused (`DELTA_UNSUPPORTED_RENAME_COLUMN`,
 * `DELTA_UNSUPPORTED_DROP_COLUMN`) with the statement that enables column mapping.
 *
 * As delta-spark: a renamed partition column stays a partition column; partition columns cannot be
 * dropped; a struct (or the table) keeps at least one field; columns that a CHECK constraint or a
 * generated column uses are neither renamed nor dropped; `delta.dataSkippingStatsColumns` follows.
 * Operations `RENAME COLUMN` (`oldColumnPath`, `newColumnPath`) and `DROP COLUMNS` (`columns`).
 */
private[spark] final class RenameDropColumns(table: String, metadata: Metadata, schema: StructType,
    dependencies: ColumnDependencies) {

  private def requireMapping(errorClass: String, statement: String): Unit =
    if (!ColumnMappingWriter.enabled(metadata.configuration)) {
      throw new InvalidWriteException(errorClass, table,
        s"ALTER TABLE $table $statement: the table has no column mapping, so its data files name the columns " +
          "and they cannot be renamed or dropped without rewriting them. Enable column mapping first with " +
          s"ALTER TABLE $table SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name') (readers need protocol " +
          "(2, 5) or table features with columnMapping), then run the statement again. Nothing was changed.")
    }

  /** The metadata after renaming `change.fieldNames` to `change.newName`, and the operation. */
  def rename(change: TableChange.RenameColumn): (Metadata, Operation) = {
    val asked = ColumnPath(table, change.fieldNames().toSeq)
    requireMapping("DELTA_UNSUPPORTED_RENAME_COLUMN", s"RENAME COLUMN ${asked.display}")
    val column = asked.resolved(schema)
    if (column.endsInCollection(schema)) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP", table,
        s"ALTER TABLE $table RENAME COLUMN ${column.display}: array elements and map keys / values have no " +
          "name to change; nothing was changed.")
    }
    val newName = change.newName()
    val target = ColumnPath(table, column.parent :+ newName)
    if (!ColumnPath.same(newName, column.leaf) && target.exists(schema)) {
      throw new InvalidWriteException("FIELD_ALREADY_EXISTS", table,
        s"ALTER TABLE $table RENAME COLUMN ${column.display} TO $newName: a column ${target.display} already " +
          "exists; nothing was changed.")
    }
    dependencies.check(column)
    val renamed = column.update(schema)(_.copy(name = newName))
    val partitionColumns =
      if (column.parent.nonEmpty) metadata.partitionColumns
      else metadata.partitionColumns.map(p => if (ColumnPath.same(p, column.leaf)) newName else p)
    val conf = statsColumns(metadata.configuration) { path =>
      if (ColumnPath.isPrefix(column.parts, path)) Some(target.parts ++ path.drop(column.parts.length)) else Some(path)
    }
    (metadata.copy(schemaString = renamed.json, partitionColumns = partitionColumns, configuration = conf),
      Operation("RENAME COLUMN", Map("oldColumnPath" -> column.display, "newColumnPath" -> target.display),
        changesData = false))
  }

  /**
   * The metadata after dropping the columns (those `IF EXISTS` names that are not there are left
   * out) and the operation; None when nothing is left to drop.
   */
  def drop(changes: Seq[TableChange.DeleteColumn]): Option[(Metadata, Operation)] = {
    val names = changes.map(c => ColumnPath(table, c.fieldNames().toSeq).display).mkString(", ")
    requireMapping("DELTA_UNSUPPORTED_DROP_COLUMN", s"DROP COLUMN $names")
    var s = schema
    val dropped = changes.flatMap { c =>
      val asked = ColumnPath(table, c.fieldNames().toSeq)
      if (!asked.exists(s) && Boolean.unbox(c.ifExists())) None
      else {
        val column = asked.resolved(s)
        if (column.parent.isEmpty && metadata.partitionColumns.exists(p => ColumnPath.same(p, column.leaf))) {
          throw new InvalidWriteException("DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN", table,
            s"ALTER TABLE $table DROP COLUMN ${column.display}: ${column.display} is a partition column, which " +
              "cannot be dropped (the table's files are laid out by it); nothing was changed.")
        }
        if (column.endsInCollection(s)) {
          throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP", table,
            s"ALTER TABLE $table DROP COLUMN ${column.display}: array elements and map keys / values cannot be " +
              "dropped; nothing was changed.")
        }
        s = column.updateParent(s) { parent =>
          if (parent.length <= 1) {
            throw new InvalidWriteException("DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA", table,
              s"ALTER TABLE $table DROP COLUMN ${column.display}: it is the only field " +
                (if (column.parent.isEmpty) "of the table" else s"of ${ColumnPath.display(column.parent)}") +
                ", and a schema or struct needs at least one; nothing was changed.")
          }
          StructType(parent.fields.filterNot(f => ColumnPath.same(f.name, column.leaf)))
        }
        Some(column)
      }
    }
    // As delta-spark: after the columns are taken out one by one, what the table's constraints and
    // generated columns use, as they are before the statement (so a generated column and a column it
    // uses cannot go in one statement).
    dropped.foreach(dependencies.check)
    if (dropped.isEmpty) None
    else {
      val conf = statsColumns(metadata.configuration) { path =>
        if (dropped.exists(d => ColumnPath.isPrefix(d.parts, path))) None else Some(path)
      }
      val columns = dropped.map(d => RenameDropColumns.mapper.writeValueAsString(d.display)).mkString("[", ",", "]")
      Some((metadata.copy(schemaString = s.json, configuration = conf),
        Operation("DROP COLUMNS", Map("columns" -> columns), changesData = false)))
    }
  }

  /** `delta.dataSkippingStatsColumns` with each listed column mapped by `f` (None drops it). */
  private def statsColumns(conf: Map[String, String])(f: Seq[String] => Option[Seq[String]]): Map[String, String] =
    conf.find { case (k, _) => k.toLowerCase(Locale.ROOT) == StatsSpec.StatsColumnsKey.toLowerCase(Locale.ROOT) } match {
      case Some((k, v)) =>
        val listed = v.split(",").map(_.trim).filter(_.nonEmpty).toSeq
        val mapped = listed.flatMap { c =>
          val parts = try UnresolvedAttribute.parseAttributeName(c) catch { case _: Exception => Seq(c) }
          f(parts).map(p => if (p == parts) c else ColumnPath.display(p))
        }
        if (mapped == listed) conf else conf + (k -> mapped.mkString(","))
      case None => conf
    }
}

private object RenameDropColumns {
  private val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
}
