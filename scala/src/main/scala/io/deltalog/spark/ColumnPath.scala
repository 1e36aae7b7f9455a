package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.types.{ArrayType, DataType, MapType, Metadata, MetadataBuilder, StructField, StructType}

import io.deltalog.commands.InvalidWriteException

/**
 * A column of an ALTER TABLE statement, as Spark resolves it: the names from the top-level field
 * down, where `element` steps into an array and `key` / `value` into a map
 * (`arr.element.x`, `m.value`). Reads and rewrites the schema at that path.
 *
 * @param table the table's name, for errors
 */
private[spark] final case class ColumnPath(table: String, parts: Seq[String]) {
  require(parts.nonEmpty, "empty column path")

  /** `a.b.c`, parts with dots in backquotes (as delta-spark writes paths in operation parameters). */
  def display: String = ColumnPath.display(parts)

  def parent: Seq[String] = parts.init
  def leaf: String = parts.last

  /**
   * The index in `parts` of the last struct field on the path (the field that holds the column's
   * metadata, e.g. `arr` for `arr.element`); the parts after it are array / map steps.
   */
  def holderIndex(schema: StructType): Int = {
    var last = -1
    walk(schema) { (i, step) => if (step.isLeft) last = i }
    last
  }

  /** True when the path ends in an array element or a map key / value rather than a struct field. */
  def endsInCollection(schema: StructType): Boolean = holderIndex(schema) != parts.length - 1

  /**
   * The column as a field: a struct field itself, or for an array element / map key / value a
   * field named after the step (nullable as the collection allows) without metadata.
   */
  def field(schema: StructType): StructField = {
    var out: StructField = null
    walk(schema) { (_, step) => out = step.fold(identity, identity) }
    out
  }

  /** The path spelled as the schema spells each name. */
  def resolved(schema: StructType): ColumnPath = {
    val names = Seq.newBuilder[String]
    walk(schema) { (_, step) => names += step.fold(_.name, _.name) }
    copy(parts = names.result())
  }

  /** True when the path names an existing column. */
  def exists(schema: StructType): Boolean =
    try { field(schema); true } catch { case _: InvalidWriteException => false }

  /** The schema with the column replaced by `f(column)` (see [[field]] for collection steps). */
  def update(schema: StructType)(f: StructField => StructField): StructType =
    updateIn(schema, parts, f).asInstanceOf[StructType]

  /** The schema with the struct that holds the column (its parent) replaced by `f(parent)`. */
  def updateParent(schema: StructType)(f: StructType => StructType): StructType =
    if (parent.isEmpty) f(schema)
    else ColumnPath(table, parent).update(schema) { p =>
      p.dataType match {
        case s: StructType => p.copy(dataType = f(s))
        case other => throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP", table,
          s"ALTER TABLE $table: $display is inside ${ColumnPath.display(parent)} of type ${other.simpleString}, " +
            "not a struct; only struct fields can be moved, renamed or dropped.")
      }
    }

  private def notFound(prefix: Seq[String], s: Option[StructType]): Nothing =
    throw new InvalidWriteException("DELTA_COLUMN_NOT_FOUND", table,
      s"ALTER TABLE $table: no column ${ColumnPath.display(prefix)}" +
        s.map(st => s" (columns there: ${st.fieldNames.mkString(", ")})").getOrElse("") + "; nothing was changed.")

  /** Calls `visit(i, Left(structField) | Right(collection step as field))` for each part. */
  private def walk(schema: StructType)(visit: (Int, Either[StructField, StructField]) => Unit): Unit = {
    var current: DataType = schema
    parts.zipWithIndex.foreach { case (name, i) =>
      val prefix = parts.take(i + 1)
      current match {
        case s: StructType =>
          val f = s.fields.find(x => ColumnPath.same(x.name, name)).getOrElse(notFound(prefix, Some(s)))
          visit(i, Left(f))
          current = f.dataType
        case a: ArrayType if ColumnPath.same(name, "element") =>
          visit(i, Right(StructField("element", a.elementType, a.containsNull)))
          current = a.elementType
        case m: MapType if ColumnPath.same(name, "key") =>
          visit(i, Right(StructField("key", m.keyType, nullable = false)))
          current = m.keyType
        case m: MapType if ColumnPath.same(name, "value") =>
          visit(i, Right(StructField("value", m.valueType, m.valueContainsNull)))
          current = m.valueType
        case _ => notFound(prefix, None)
      }
    }
  }

  private def updateIn(dt: DataType, rest: Seq[String], f: StructField => StructField): DataType = {
    val name = rest.head
    def step(field: StructField): StructField =
      if (rest.tail.isEmpty) f(field) else field.copy(dataType = updateIn(field.dataType, rest.tail, f))
    dt match {
      case s: StructType =>
        val i = s.fields.indexWhere(x => ColumnPath.same(x.name, name))
        if (i < 0) notFound(parts.take(parts.length - rest.length + 1), Some(s))
        StructType(s.fields.updated(i, step(s.fields(i))))
      case a: ArrayType if ColumnPath.same(name, "element") =>
        val e = step(StructField("element", a.elementType, a.containsNull))
        ArrayType(e.dataType, e.nullable)
      case m: MapType if ColumnPath.same(name, "key") =>
        val k = step(StructField("key", m.keyType, nullable = false))
        m.copy(keyType = k.dataType)
      case m: MapType if ColumnPath.same(name, "value") =>
        val v = step(StructField("value", m.valueType, m.valueContainsNull))
        m.copy(valueType = v.dataType, valueContainsNull = v.nullable)
      case _ => notFound(parts.take(parts.length - rest.length + 1), None)
    }
  }
}

private[spark] object ColumnPath {
  def same(a: String, b: String): Boolean = a.toLowerCase(Locale.ROOT) == b.toLowerCase(Locale.ROOT)

  def display(parts: Seq[String]): String =
    parts.map(p => if (p.contains(".") || p.contains("`")) "`" + p.replace("`", "``") + "`" else p).mkString(".")

  /** True when `prefix` is a prefix of `path` (case-insensitive). */
  def isPrefix(prefix: Seq[String], path: Seq[String]): Boolean =
    prefix.length <= path.length && prefix.zip(path).forall { case (a, b) => same(a, b) }

  /** Field metadata without `key`. */
  def without(md: Metadata, key: String): Metadata =
    if (!md.contains(key)) md else new MetadataBuilder().withMetadata(md).remove(key).build()
}
