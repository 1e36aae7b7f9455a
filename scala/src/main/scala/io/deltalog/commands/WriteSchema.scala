package io.deltalog.commands

import java.util.Locale

import scala.collection.mutable

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{col, lit, struct, transform}
import org.apache.spark.sql.types._

/**
 * Schema enforcement and evolution for writes into an existing table:
 *
 *  - columns are matched by name, case-insensitively; table columns absent from the data are
 *    written as nulls (NOT NULL / generated / identity rules apply later);
 *  - a data type must equal the table's, or be a narrower integral / floating type (byte → short →
 *    int → long, float → double), which is cast up; structs, arrays and maps are compared field by
 *    field;
 *  - columns (top level or nested) the table does not have are an error unless `mergeSchema`, which
 *    appends them (nullable) to the table schema.
 */
private[commands] object WriteSchema {
  private def lc(s: String) = s.toLowerCase(Locale.ROOT)

  /**
   * The table schema after this write; throws [[SchemaMismatchException]] naming every column
   * whose type differs, or (without `mergeSchema`) that the table lacks.
   */
  def mergedSchema(table: StructType, data: StructType, mergeSchema: Boolean, tablePath: String,
      version: Long): StructType = {
    val mismatches = mutable.ArrayBuffer.empty[String]
    val extra = mutable.ArrayBuffer.empty[String]
    def mergeType(t: DataType, d: DataType, path: String): DataType = (t, d) match {
      case (ts: StructType, ds: StructType) => mergeStruct(ts, ds, path + ".")
      case (ta: ArrayType, da: ArrayType) =>
        ta.copy(elementType = mergeType(ta.elementType, da.elementType, path + ".element"))
      case (tm: MapType, dm: MapType) =>
        tm.copy(keyType = mergeType(tm.keyType, dm.keyType, path + ".key"),
          valueType = mergeType(tm.valueType, dm.valueType, path + ".value"))
      case _ if sameOrUpcast(t, d) => t
      case _ =>
        mismatches += s"$path (table: ${t.simpleString}, data: ${d.simpleString})"
        t
    }
    def mergeStruct(t: StructType, d: StructType, prefix: String): StructType = {
      val byName = d.fields.map(f => lc(f.name) -> f).toMap
      val kept = t.fields.map { tf =>
        byName.get(lc(tf.name)) match {
          case Some(df) => tf.copy(dataType = mergeType(tf.dataType, df.dataType, prefix + tf.name))
          case None => tf
        }
      }
      val tableNames = t.fields.map(f => lc(f.name)).toSet
      val added = d.fields.filterNot(f => tableNames.contains(lc(f.name))).filter { f =>
        val void = WriteIntoDeltalog.voidColumns(f.dataType)
        if (void.nonEmpty) mismatches += s"$prefix${f.name} (void: cast it to a concrete type)"
        void.isEmpty
      }.map { f =>
        extra += s"$prefix${f.name} (${f.dataType.simpleString}, not in the table)"
        f.copy(nullable = true, dataType = nullableDeep(f.dataType))
      }
      StructType(kept ++ added)
    }
    val merged = mergeStruct(table, data, "")
    if (mismatches.nonEmpty) {
      throw new SchemaMismatchException(tablePath, version, mismatches.toSeq ++ extra.toSeq,
        "data types differ and cannot be cast safely.")
    }
    if (extra.nonEmpty && !mergeSchema) {
      throw new SchemaMismatchException(tablePath, version, extra.toSeq, "the data has columns the table does not have.")
    }
    merged
  }

  def nullableDeep(dt: DataType): DataType = dt match {
    case s: StructType => StructType(s.fields.map(f => f.copy(nullable = true, dataType = nullableDeep(f.dataType))))
    case a: ArrayType => a.copy(elementType = nullableDeep(a.elementType), containsNull = true)
    case m: MapType => m.copy(valueType = nullableDeep(m.valueType), valueContainsNull = true)
    case other => other
  }

  private val integralRank: Map[DataType, Int] = Map(ByteType -> 1, ShortType -> 2, IntegerType -> 3, LongType -> 4)

  /** Equal, or safely castable up to the table type. */
  def sameOrUpcast(t: DataType, d: DataType): Boolean = (t, d) match {
    case _ if t == d => true
    case (_, NullType) => true
    case (_: StringType, _: StringType) => true
    case _ if integralRank.contains(t) && integralRank.contains(d) => integralRank(d) <= integralRank(t)
    case (DoubleType, FloatType) => true
    case _ => false
  }

  /**
   * A column with type `target` (logical names) from the data column `source` of type `dt`: struct
   * fields matched by name (missing ones null), narrower numbers cast up.
   */
  def align(source: Column, dt: DataType, target: DataType): Column = (dt, target) match {
    case _ if dt == target => source
    case (ds: StructType, ts: StructType) =>
      val byName = ds.fields.map(f => lc(f.name) -> f).toMap
      val fields = ts.fields.map { tf =>
        byName.get(lc(tf.name)) match {
          case Some(df) => align(source.getField(df.name), df.dataType, tf.dataType).as(tf.name)
          case None => lit(null).cast(tf.dataType).as(tf.name)
        }
      }
      val built = struct(fields.toIndexedSeq: _*)
      org.apache.spark.sql.functions.when(source.isNull, lit(null).cast(ts)).otherwise(built)
    case (da: ArrayType, ta: ArrayType) if needsStructWork(da.elementType, ta.elementType) =>
      transform(source, x => align(x, da.elementType, ta.elementType))
    case _ => source.cast(target)
  }

  private def needsStructWork(d: DataType, t: DataType): Boolean = (d, t) match {
    case (_: StructType, _: StructType) => d != t
    case (a: ArrayType, b: ArrayType) => needsStructWork(a.elementType, b.elementType)
    case _ => false
  }

  /** The data column matching table column `name` (case-insensitive). */
  def findColumn(data: StructType, name: String): Option[StructField] = data.fields.find(f => lc(f.name) == lc(name))

  /** `col(name)` quoting the name. */
  def column(name: String): Column = col("`" + name.replace("`", "``") + "`")
}
