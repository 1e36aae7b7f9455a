package io.deltalog.spark

import java.util.Locale

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.connector.catalog.TableChange
import org.apache.spark.sql.types.{MetadataBuilder, StructField, StructType}

import io.deltalog.commands.InvalidWriteException

/**
 * The schema after `ALTER TABLE ... ADD COLUMNS`: each new column (top level or in a struct,
 * `FIRST` / `AFTER c` / last) is nullable, as existing rows have no value for it; a comment is
 * kept. NOT NULL and DEFAULT are refused (existing rows would break them). Also returns the
 * `columns` operation parameter delta-spark records.
 */
object AddColumns {
  private val mapper = new ObjectMapper()

  def apply(table: String, schema: StructType, adds: Seq[TableChange.AddColumn]): (StructType, String) = {
    val params = adds.map { a =>
      val path = a.fieldNames().toSeq
      val colName = path.mkString(".")
      if (!a.isNullable) {
        throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", table,
          s"ALTER TABLE $table ADD COLUMNS: $colName is NOT NULL; a column added to a table with rows must be " +
            "nullable. Add it nullable, fill it, then make it NOT NULL with a CHECK constraint.")
      }
      if (a.defaultValue() != null) {
        throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", table,
          s"ALTER TABLE $table ADD COLUMNS: $colName has a DEFAULT; add the column, then set its default.")
      }
      val md = new MetadataBuilder()
      Option(a.comment()).foreach(md.putString("comment", _))
      val field = StructField(path.last, a.dataType(), nullable = true, md.build())
      (path, field, a.position())
    }
    var out = schema
    params.foreach { case (path, field, position) => out = add(table, out, path.init, field, position) }
    val json = params.map { case (path, field, position) =>
      val column = mapper.readTree(StructType(Seq(field.copy(name = path.mkString(".")))).json).get("fields").get(0)
      val o = mapper.createObjectNode()
      o.set[com.fasterxml.jackson.databind.JsonNode]("column", column)
      Option(position).foreach(p => o.put("position", p match {
        case _: TableChange.First => "FIRST"
        case a: TableChange.After => s"AFTER ${a.column()}"
        case other => other.toString
      }))
      o
    }
    (out, mapper.writeValueAsString(json.foldLeft(mapper.createArrayNode())((arr, o) => arr.add(o))))
  }

  private def same(a: String, b: String): Boolean = a.toLowerCase(Locale.ROOT) == b.toLowerCase(Locale.ROOT)

  private def add(table: String, s: StructType, parent: Seq[String], field: StructField,
      position: TableChange.ColumnPosition): StructType =
    if (parent.nonEmpty) {
      val i = s.fields.indexWhere(f => same(f.name, parent.head))
      if (i < 0) notFound(table, parent.head, s)
      s.fields(i).dataType match {
        case inner: StructType =>
          StructType(s.fields.updated(i, s.fields(i).copy(dataType = add(table, inner, parent.tail, field, position))))
        case other => throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", table,
          s"ALTER TABLE $table ADD COLUMNS: ${s.fields(i).name} is ${other.simpleString}, not a struct; columns can be " +
            "added to structs only.")
      }
    } else {
      if (s.fields.exists(f => same(f.name, field.name))) {
        throw new InvalidWriteException("DELTA_DUPLICATE_COLUMNS_FOUND", table,
          s"ALTER TABLE $table ADD COLUMNS: column ${field.name} already exists.")
      }
      val at = position match {
        case null => s.length
        case _: TableChange.First => 0
        case a: TableChange.After =>
          val j = s.fields.indexWhere(f => same(f.name, a.column()))
          if (j < 0) notFound(table, a.column(), s)
          j + 1
        case _ => s.length
      }
      StructType((s.fields.take(at) :+ field) ++ s.fields.drop(at))
    }

  private def notFound(table: String, name: String, s: StructType): Nothing =
    throw new InvalidWriteException("DELTA_COLUMN_NOT_FOUND", table,
      s"ALTER TABLE $table ADD COLUMNS: no column $name (columns: ${s.fieldNames.mkString(", ")}).")
}
