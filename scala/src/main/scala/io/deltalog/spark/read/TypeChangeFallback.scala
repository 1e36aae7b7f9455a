package io.deltalog.spark.read

import scala.annotation.tailrec

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Expression, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.types.DataType

/**
 * Reading files whose physical type of a column is an older type that Spark's Parquet readers
 * cannot up-cast to the table type themselves (e.g. `typeWidening-preview`'s byte -> decimal(4,1)).
 *
 * The table-type reader is tried first; when it refuses the file's column type, the readers built
 * for the older types (newest first) are tried, and their rows are cast to the table types.
 */
private[read] object TypeChangeFallback {

  /** A reader and the types of the rows it produces. */
  final case class Alternate(read: PartitionedFile => Iterator[InternalRow], rowTypes: Seq[DataType])

  def wrap(primary: PartitionedFile => Iterator[InternalRow], targetTypes: Seq[DataType],
      alternates: Seq[Alternate], timeZoneId: String): PartitionedFile => Iterator[InternalRow] = {
    (file: PartitionedFile) => attempt(file, primary) match {
      case Right(rows) => rows
      case Left(first) =>
        val it = alternates.iterator
        var result: Iterator[InternalRow] = null
        while (result == null && it.hasNext) {
          val alt = it.next()
          attempt(file, alt.read) match {
            case Right(rows) =>
              val exprs: Seq[Expression] = alt.rowTypes.zip(targetTypes).zipWithIndex.map { case ((from, to), i) =>
                val ref = BoundReference(i, from, nullable = true)
                if (from == to) ref else Cast(ref, to, Some(timeZoneId))
              }
              val project = UnsafeProjection.create(exprs)
              result = rows.map(project)
            case Left(e) => first.addSuppressed(e)
          }
        }
        if (result == null) throw first
        result
    }
  }

  /** The reader's rows (first row fetched), or the type-conversion error it raised. */
  private def attempt(file: PartitionedFile, read: PartitionedFile => Iterator[InternalRow]): Either[Throwable, Iterator[InternalRow]] =
    try {
      val rows = read(file)
      rows.hasNext
      Right(rows)
    } catch {
      case e: Throwable if isConversionError(e) => Left(e)
    }

  @tailrec private def isConversionError(e: Throwable): Boolean = e match {
    case null => false
    case _: org.apache.spark.sql.execution.datasources.SchemaColumnConvertNotSupportedException => true
    case _: org.apache.parquet.io.ParquetDecodingException => true
    case other if other.getClass.getName.endsWith("SparkException") &&
      String.valueOf(other.getMessage).contains("PARQUET_COLUMN_DATA_TYPE_MISMATCH") => true
    case other => if (other.getCause eq other) false else isConversionError(other.getCause)
  }
}
