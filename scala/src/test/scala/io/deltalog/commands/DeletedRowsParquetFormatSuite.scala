package io.deltalog.commands

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.dv.RoaringBitmapArray
import io.deltalog.spark.SparkTestSession

/**
 * [[DeletedRowsParquetFormat]]: the marker column is 1 exactly for the rows whose physical index is
 * in the file's DV, whether Spark reads columnar batches of consecutive rows, batches with gaps
 * (pages skipped by a pushed filter), or rows (vectorized reader off); a filter on the marker never
 * reaches Parquet (it would read the missing column as NULL and skip every row group).
 */
class DeletedRowsParquetFormatSuite {
  private val spark = SparkTestSession.spark.asInstanceOf[ClassicSession]
  private val Rows = 20000L
  private val deleted = Seq(0L, 5L, 999L, 1000L, 4095L, 4096L, 4097L, 12050L, 15001L, 15099L, 19999L)
  private val Marker = DeletedRowsParquetFormat.DeletedColumn
  private val RowIndex = ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME

  /** One Parquet file of ids 0..Rows-1 in order (id = physical row index), pages of 1000 rows. */
  private lazy val file: FileStatus = {
    val dir = TestDirs.create("deleted-rows").resolve("t").toString
    spark.range(0, Rows, 1, 1).selectExpr("id", "cast(id AS string) AS s").write
      .option("parquet.page.row.count.limit", "1000").option("parquet.page.size", "4096").parquet(dir)
    val fs = new Path(dir).getFileSystem(spark.sessionState.newHadoopConf())
    fs.listStatus(new Path(dir)).filter(_.getPath.getName.endsWith(".parquet")).head
  }

  private def read(): DataFrame = {
    val dvs = Map(file.getPath.toUri.toString -> RoaringBitmapArray.of(deleted: _*))
    val schema = StructType(Seq(StructField("id", LongType), StructField("s", StringType),
      StructField(RowIndex, LongType), StructField(Marker, ByteType)))
    val relation = HadoopFsRelation(new KnownFilesIndex(file.getPath.getParent, Seq(file)), new StructType(), schema,
      None, new DeletedRowsParquetFormat(spark.sparkContext.broadcast(dvs)), Map.empty)(spark)
    spark.baseRelationToDataFrame(relation)
  }

  /** Every row read has row index = id and marker = (id is deleted). */
  private def check(df: DataFrame, expectedRows: Seq[Long]): Unit = {
    val rows = df.select(col("id"), col(RowIndex), col(Marker)).collect().map(r => (r.getLong(0), r.getLong(1), r.getByte(2)))
    assertEquals(expectedRows, rows.map(_._1).toSeq.sorted)
    rows.foreach { case (id, index, marker) =>
      assertEquals(id, index, s"row index of id $id")
      assertEquals(if (deleted.contains(id)) 1 else 0, marker.toInt, s"marker of id $id")
    }
  }

  private def withVectorized[T](on: Boolean)(f: => T): T = {
    val key = "spark.sql.parquet.enableVectorizedReader"
    val before = spark.conf.get(key)
    spark.conf.set(key, on.toString)
    try f finally spark.conf.set(key, before)
  }

  @Test def marksTheDeletedRowsOfConsecutiveBatchesAndOfRows(): Unit = {
    for (vectorized <- Seq(true, false)) withVectorized(vectorized) {
      check(read(), 0L until Rows)
    }
  }

  @Test def marksTheDeletedRowsWhenPagesAreSkipped(): Unit = {
    // the pushed filter keeps two pages of 1000 rows, one batch with a gap of 2000 row indexes
    val ranges = (col("id") >= 12000 && col("id") < 12100) || (col("id") >= 15000 && col("id") < 15100)
    val expected = (12000L until 12100L) ++ (15000L until 15100L)
    for (vectorized <- Seq(true, false)) withVectorized(vectorized) {
      check(read().filter(ranges), expected)
    }
  }

  @Test def aFilterOnTheMarkerDropsExactlyTheDeletedRows(): Unit = {
    for (vectorized <- Seq(true, false)) withVectorized(vectorized) {
      val kept = read().filter(col(Marker) === 0).select("id").collect().map(_.getLong(0)).toSeq.sorted
      assertEquals((0L until Rows).filterNot(deleted.contains), kept)
      assertEquals(deleted.sorted, read().filter(col(Marker) === 1).select("id").collect().map(_.getLong(0)).toSeq.sorted)
    }
  }

  @Test def theRowIndexIsReadAlongWhenOnlyTheMarkerIsRequested(): Unit = {
    for (vectorized <- Seq(true, false)) withVectorized(vectorized) {
      val rows = read().select(col("s"), col(Marker)).collect().map(r => (r.getString(0).toLong, r.getByte(1).toInt))
      assertEquals(Rows, rows.length.toLong)
      rows.foreach { case (id, marker) => assertEquals(if (deleted.contains(id)) 1 else 0, marker, s"marker of id $id") }
      assertEquals(Rows - deleted.size, read().filter(col(Marker) === 0).select("s").count())
    }
  }
}
