package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{StringType, StructField, StructType}

import io.deltalog.actions.AddFile

/**
 * The partition predicate of a rewrite that changes no data (`REORG … WHERE`, `OPTIMIZE … WHERE`):
 * only partition columns may be referenced, and the files in scope are those whose partition values
 * satisfy it.
 */
private[commands] object PartitionScope {

  /** Refuses a predicate on a column that is not a partition column (delta-spark's error). */
  def checkPartitionOnly(e: Expression, rw: RowLevelRewrite, table: String, statement: String): Unit = {
    val partitionNames = rw.meta.partitionColumns
    e.references.find(a => !rw.partitionCols.contains(a.name.toLowerCase(Locale.ROOT))).foreach { a =>
      throw new InvalidWriteException("DELTA_NON_PARTITION_COLUMN_REFERENCE", table,
        s"Table $table (version ${rw.txn.readVersion}): predicate references non-partition column '${a.name}'. Only " +
          s"the partition columns may be referenced: [${partitionNames.mkString(", ")}]. $statement changed nothing; " +
          "use a predicate on partition columns only, or none.")
    }
  }

  /** The files of `files` whose partition values satisfy `e` (evaluated by Spark on the distinct values). */
  def matchingPartitions(spark: ClassicSession, files: Seq[AddFile], e: Expression, rw: RowLevelRewrite): Seq[AddFile] = {
    val partitionFields = rw.schema.fields.filter(f => rw.partitionCols.contains(f.name.toLowerCase(Locale.ROOT)))
    val physical = partitionFields.map(f => rw.physicalNames(f.name.toLowerCase(Locale.ROOT)))
    val distinct = files.map(_.partitionValues).distinct
    if (distinct.isEmpty) return files
    val raw = StructType(StructField("__deltalog_key", StringType) +: partitionFields.map(f => StructField(f.name, StringType)).toSeq)
    val rows = distinct.zipWithIndex.map { case (pv, i) => Row.fromSeq(i.toString +: physical.map(pv.getOrElse(_, null))) }
    val typed = spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), raw)
      .select((col("__deltalog_key") +: partitionFields.map(f => WriteSchema.column(f.name).cast(f.dataType).as(f.name)).toSeq): _*)
    val keep = typed.filter(SparkInternals.column(DmlSupport.unresolve(e))).select("__deltalog_key").collect()
      .map(_.getString(0).toInt).map(distinct).toSet
    files.filter(f => keep.contains(f.partitionValues))
  }
}
