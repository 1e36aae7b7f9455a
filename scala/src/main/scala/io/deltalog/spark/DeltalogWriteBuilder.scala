package io.deltalog.spark

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.connector.write.{SupportsDynamicOverwrite, SupportsOverwrite, SupportsTruncate, V1Write,
  WriteBuilder}
import org.apache.spark.sql.sources._

import io.deltalog.commands.{InvalidWriteException, WriteOptions}

/**
 * The write of a [[DeltalogTable]] (and of a staged CTAS/RTAS table): Spark calls `truncate`,
 * `overwrite(filters)` or `overwriteDynamicPartitions` to say what the write replaces, then hands
 * the rows to the `InsertableRelation` of the V1 write, which runs one deltalog transaction.
 *
 *  - append: `INSERT INTO`, `insertInto`, `saveAsTable` append, `writeTo(...).append()`;
 *  - truncate / `overwrite(true)`: `INSERT OVERWRITE` of a table, `insertInto` overwrite,
 *    `writeTo(...).overwrite(lit(true))`: every file is replaced;
 *  - `overwrite(filters)`: `INSERT OVERWRITE ... PARTITION (p = v)` (static partitions) and
 *    `writeTo(...).overwrite(cond)`: the rows matching the filters are replaced (`replaceWhere`);
 *  - dynamic: `INSERT OVERWRITE` with `spark.sql.sources.partitionOverwriteMode=dynamic`,
 *    `writeTo(...).overwritePartitions()`: the partitions the data writes to are replaced.
 */
class DeltalogWriteBuilder(
    table: String,
    writeOptions: Map[String, String],
    run: (DataFrame, SaveMode, Map[String, String]) => Unit)
  extends WriteBuilder with SupportsOverwrite with SupportsDynamicOverwrite with SupportsTruncate {

  def this(t: DeltalogTable, writeOptions: Map[String, String]) =
    this(t.name(), writeOptions, (data, mode, params) => {
      t.write(DeltalogWriteBuilder.withoutFilledColumns(data, t.schema), mode, params); ()
    })

  private var mode: SaveMode = SaveMode.Append
  private var params: Map[String, String] = Map.empty

  override def truncate(): WriteBuilder = {
    mode = SaveMode.Overwrite
    params = Map(WriteOptions.PartitionOverwriteMode -> "static")
    this
  }

  override def overwrite(filters: Array[Filter]): WriteBuilder = {
    if (filters.forall(_.isInstanceOf[AlwaysTrue])) return truncate()
    mode = SaveMode.Overwrite
    params = Map(WriteOptions.ReplaceWhere -> filters.map(DeltalogWriteBuilder.sql(_, table)).mkString(" AND "))
    this
  }

  override def overwriteDynamicPartitions(): WriteBuilder = {
    mode = SaveMode.Overwrite
    params = Map(WriteOptions.PartitionOverwriteMode -> "dynamic")
    this
  }

  override def build(): V1Write = {
    val (m, p) = (mode, writeOptions ++ params)
    new V1Write {
      override def toInsertableRelation: InsertableRelation = new InsertableRelation {
        override def insert(data: DataFrame, overwrite: Boolean): Unit = run(data, m, p)
      }
    }
  }
}

object DeltalogWriteBuilder {
  /**
   * `data` without the identity and generated columns Spark filled with NULL because the
   * statement left them out (`INSERT INTO t (id) VALUES ...`, Spark's V2 insert resolution): the
   * writer then assigns identity values and computes generated columns, as for a DataFrame
   * without those columns.
   */
  def withoutFilledColumns(data: DataFrame, schema: org.apache.spark.sql.types.StructType): DataFrame = {
    import org.apache.spark.sql.catalyst.expressions.{Alias, Cast}
    import org.apache.spark.sql.catalyst.plans.logical.Project
    val special = schema.fields.filter(f => f.metadata.contains(ColumnDefinitions.IdentityStartKey) ||
      f.metadata.contains(ColumnDefinitions.GenerationExpressionKey)).map(_.name.toLowerCase(java.util.Locale.ROOT)).toSet
    if (special.isEmpty) return data
    def isNull(e: org.apache.spark.sql.catalyst.expressions.Expression): Boolean = e match {
      case Literal(null, _) => true
      case c: Cast => isNull(c.child)
      case a: Alias => isNull(a.child)
      case _ => false
    }
    val filled = data.queryExecution.analyzed match {
      case Project(list, _) => list.collect {
        case a: Alias if special.contains(a.name.toLowerCase(java.util.Locale.ROOT)) && isNull(a.child) => a.name
      }
      case _ => Nil
    }
    if (filled.isEmpty) data else data.drop(filled: _*)
  }

  private def col(name: String): String = name.split('.').map(p => "`" + p.replace("`", "``") + "`").mkString(".")

  private def lit(v: Any): String = Literal(v).sql

  /** A data-source filter as the Spark SQL predicate `replaceWhere` takes. */
  def sql(f: Filter, table: String): String = f match {
    case EqualTo(a, v) => s"${col(a)} = ${lit(v)}"
    case EqualNullSafe(a, v) => s"${col(a)} <=> ${lit(v)}"
    case GreaterThan(a, v) => s"${col(a)} > ${lit(v)}"
    case GreaterThanOrEqual(a, v) => s"${col(a)} >= ${lit(v)}"
    case LessThan(a, v) => s"${col(a)} < ${lit(v)}"
    case LessThanOrEqual(a, v) => s"${col(a)} <= ${lit(v)}"
    case In(a, vs) if vs.nonEmpty => s"${col(a)} IN (${vs.map(lit).mkString(", ")})"
    case IsNull(a) => s"${col(a)} IS NULL"
    case IsNotNull(a) => s"${col(a)} IS NOT NULL"
    case StringStartsWith(a, v) => s"startswith(${col(a)}, ${lit(v)})"
    case StringEndsWith(a, v) => s"endswith(${col(a)}, ${lit(v)})"
    case StringContains(a, v) => s"contains(${col(a)}, ${lit(v)})"
    case And(l, r) => s"(${sql(l, table)}) AND (${sql(r, table)})"
    case Or(l, r) => s"(${sql(l, table)}) OR (${sql(r, table)})"
    case Not(c) => s"NOT (${sql(c, table)})"
    case AlwaysTrue() => "true"
    case AlwaysFalse() => "false"
    case other => throw new InvalidWriteException("DELTA_UNSUPPORTED_OVERWRITE_CONDITION", table,
      s"Table $table: the overwrite condition $other cannot be applied; overwrite with a condition on columns " +
        "using =, <, <=, >, >=, IN, IS [NOT] NULL, AND, OR, NOT.")
  }
}
