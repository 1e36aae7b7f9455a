package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.types._

/**
 * The table schema CONVERT infers from the Parquet files' schemas, merged as delta-spark merges them
 * (`SchemaMergingUtils.mergeSchemas` without implicit conversions): fields matched by name
 * case-insensitively, the first spelling kept, new fields appended in the order they are met;
 * structs, arrays and maps merged element-wise; byte, short and int merge to the wider one (Parquet
 * stores them alike); a null-typed column takes the other type; any other difference is refused.
 * Every column becomes nullable. Partition columns replace data columns of the same name and the
 * others are appended (Spark's `mergeDataAndPartitionSchema`).
 */
private[commands] object ConvertSchema {

  /** Why two types do not merge, naming the column. */
  final class Incompatible(val column: String, val detail: String) extends Exception(s"$column: $detail")

  /** `current` and `update` merged; throws [[Incompatible]]. */
  def merge(current: StructType, update: StructType): StructType = mergeStruct(current, update, Nil)

  private def key(s: String) = s.toLowerCase(Locale.ROOT)

  private def mergeStruct(current: StructType, update: StructType, path: Seq[String]): StructType = {
    val seen = scala.collection.mutable.Set.empty[String]
    update.fields.foreach { f =>
      if (!seen.add(key(f.name))) {
        throw new Incompatible((path :+ f.name).mkString("."), "the column appears twice (names differing only in case)")
      }
    }
    val byName = update.fields.map(f => key(f.name) -> f).toMap
    val merged = current.fields.map { c =>
      byName.get(key(c.name)) match {
        case Some(u) => c.copy(dataType = mergeType(c.dataType, u.dataType, path :+ c.name))
        case None => c
      }
    }
    val known = current.fields.map(f => key(f.name)).toSet
    StructType(merged ++ update.fields.filterNot(f => known.contains(key(f.name))))
  }

  private def mergeType(current: DataType, update: DataType, path: Seq[String]): DataType = (current, update) match {
    case (c: StructType, u: StructType) => mergeStruct(c, u, path)
    case (ArrayType(ce, cn), ArrayType(ue, _)) => ArrayType(mergeType(ce, ue, path :+ "element"), cn)
    case (MapType(ck, cv, cn), MapType(uk, uv, _)) =>
      MapType(mergeType(ck, uk, path :+ "key"), mergeType(cv, uv, path :+ "value"), cn)
    case (c, u) if c == u => c
    case (ByteType, ShortType) | (ShortType, ByteType) => ShortType
    case (ByteType | ShortType, IntegerType) | (IntegerType, ByteType | ShortType) => IntegerType
    case (NullType, u) => u
    case (c, NullType) => c
    case (c, u) => throw new Incompatible(path.mkString("."), s"${c.simpleString} and ${u.simpleString} do not merge")
  }

  /** Every field nullable, through structs, arrays and maps (as delta-spark's `asNullable`). */
  def asNullable(dt: DataType): DataType = dt match {
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = asNullable(f.dataType), nullable = true)))
    case ArrayType(e, _) => ArrayType(asNullable(e), containsNull = true)
    case MapType(k, v, _) => MapType(asNullable(k), asNullable(v), valueContainsNull = true)
    case other => other
  }

  /** The table schema: `data` with the partition columns in place of same-named columns, the rest appended. */
  def withPartitionColumns(data: StructType, partition: StructType): StructType = {
    val parts = partition.fields.map(f => key(f.name) -> f).toMap
    val replaced = data.fields.map(f => parts.getOrElse(key(f.name), f))
    val inData = data.fields.map(f => key(f.name)).toSet
    StructType(replaced ++ partition.fields.filterNot(f => inData.contains(key(f.name))))
  }
}
