package io.deltalog.commands

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._

/**
 * Z-ordering of the rows of one bin (one partition's files, or a clustered table's z-cube) by some columns: each column's value
 * becomes its rank among ~[[NumRanges]] approximate quantiles of the bin's values (one aggregation
 * job for every bin), the ranks' bits are interleaved ([[InterleaveBits]]) and the rows are range
 * partitioned by that z-value into the bin's output files and sorted by it within each, so every
 * output file covers a narrow range of each column (min/max statistics that skip on each).
 */
private[commands] object ZOrder {
  /**
   * Ranks per column (delta-spark's `spark.databricks.io.skipping.mdc.rangeId.max` is 1000; a power of
   * two here, so that each bit of a rank halves the rows).
   */
  val NumRanges = 1 << InterleaveBits.BitsPerRank
  val ZColumn = "__deltalog_zvalue"
  private val BinColumn = "__deltalog_bin"

  /** The column at `path` (a top-level column, or a field of nested structs for clustering columns). */
  private def column(path: Seq[String]): Column = col(path.map(p => "`" + p.replace("`", "``") + "`").mkString("."))

  /** Types whose values can be ranked. */
  def rankable(dt: DataType): Boolean = dt match {
    case _: NumericType | BooleanType | DateType | TimestampType | TimestampNTZType | StringType | BinaryType => true
    case _ => false
  }

  /** A double sort key of column `c` that orders like its values (strings and binaries by a 7-byte prefix). */
  private def sortKey(c: Column, dt: DataType): Column = dt match {
    case _: NumericType => c.cast(DoubleType)
    case BooleanType => c.cast(IntegerType).cast(DoubleType)
    case DateType => unix_date(c).cast(DoubleType)
    case TimestampType => unix_micros(c).cast(DoubleType)
    case TimestampNTZType => unix_micros(c.cast(TimestampType)).cast(DoubleType)
    case StringType | BinaryType =>
      conv(rpad(hex(substring(c.cast(BinaryType), 1, 7)), 14, "0"), 16, 10).cast(LongType).cast(DoubleType)
    case other => throw new IllegalArgumentException(s"cannot z-order by a column of type ${other.simpleString}")
  }

  /**
   * The boundaries of each column's ranks in each bin: `bins(i)` read as `reads(i)`; `columns` are
   * (column path, type) of the z-order columns.
   */
  def boundaries(reads: Seq[DataFrame], columns: Seq[(Seq[String], DataType)]): Map[Int, Seq[Array[Double]]] = {
    val keys = reads.zipWithIndex.map { case (df, i) =>
      df.select((lit(i).as(BinColumn) +: columns.zipWithIndex.map { case ((n, dt), j) =>
        sortKey(column(n), dt).as(s"k$j") }): _*)
    }
    val percentages = array((1 until NumRanges).map(p => lit(p.toDouble / NumRanges)): _*)
    val aggs = columns.indices.map(j => percentile_approx(col(s"k$j"), percentages, lit(10000)))
    keys.reduce(_ union _).groupBy(col(BinColumn)).agg(aggs.head, aggs.tail: _*).collect().map { r =>
      r.getInt(0) -> columns.indices.map { j =>
        if (r.isNullAt(j + 1)) Array.empty[Double] else r.getSeq[Double](j + 1).sorted.toArray
      }
    }.toMap
  }

  /**
   * `rows` (one bin) laid out in up to `numFiles` Spark partitions along the Z curve of `columns`,
   * sorted by `sortFirst` (the partition columns) and the z-value within each. The partitions are
   * ranges of whole Z-curve cells (the first `ceil(log2(numFiles))` interleaved bits), so no file
   * straddles a cell's edge by a few rows and stretches its min/max across the neighbouring cell;
   * when the rows fill fewer cells (correlated columns) there are fewer, larger files.
   */
  def layout(rows: DataFrame, columns: Seq[(Seq[String], DataType)], bounds: Seq[Array[Double]], numFiles: Int,
      sortFirst: Seq[String]): DataFrame = {
    val ranks = columns.zip(bounds).map { case ((n, dt), b) =>
      ZOrderRank(SparkInternals.expression(sortKey(column(n), dt)), b)
    }
    val allBits = InterleaveBits.BitsPerRank * ranks.size
    val cellBits = math.min(allBits, math.max(1, 32 - Integer.numberOfLeadingZeros(numFiles - 1)))
    val z = SparkInternals.column(InterleaveBits(ranks, allBits))
    val cell = SparkInternals.column(InterleaveBits(ranks, cellBits))
    rows.withColumn(ZColumn, z).repartitionByRange(numFiles, cell)
      .sortWithinPartitions((sortFirst.map(WriteSchema.column) :+ col(ZColumn)): _*)
  }
}
