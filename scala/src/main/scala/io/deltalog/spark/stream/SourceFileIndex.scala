package io.deltalog.spark.stream

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, FileStatusWithMetadata, PartitionDirectory}
import org.apache.spark.sql.types.StructType

import io.deltalog.schema.ColumnMappingMode
import io.deltalog.spark.read.{DataSkipping, DeltalogFileIndex, FileStats, FloatBoundsTrust}

/**
 * The files of one micro-batch of the streaming source, as Spark's file index: the query's
 * partition filters prune whole partitions and its data filters drop files whose `add` stats
 * prove that no row matches ([[DataSkipping]], as the batch reader's [[DeltalogFileIndex]]).
 * Spark hands both kinds of filters to `listFiles` when it plans the batch's scan, as it does for
 * delta-spark's streaming batches.
 *
 * Unless every file's float/double upper bounds are trusted ([[FloatBoundsTrust]] `true`), the
 * checks that need them are left out and files are flagged so that no float/double filter is
 * pushed into Parquet (a NaN-blind writer's max may hide NaN rows).
 *
 * @param partitionSchema the table's partition columns (with column-mapping metadata)
 * @param tableSchema     the table's schema (with column-mapping metadata), for stats lookup
 * @param directories     the batch's files by partition, each with its `add.stats` (may be null)
 */
final class SourceFileIndex(
    root: Path,
    override val partitionSchema: StructType,
    tableSchema: StructType,
    mode: ColumnMappingMode,
    floatBoundsTrusted: Boolean,
    directories: Seq[(InternalRow, Seq[(FileStatusWithMetadata, String)])]) extends FileIndex {

  override def rootPaths: Seq[Path] = Seq(root)

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] = {
    val partitions = DeltalogFileIndex.bindPartitionFilters(partitionFilters, partitionSchema) match {
      case None => directories
      case Some(p) => directories.filter { case (row, _) => p.eval(row) }
    }
    val skipping =
      if (floatBoundsTrusted) DataSkipping.compile(dataFilters, tableSchema, mode)
      else DataSkipping.compileNanSafe(dataFilters, tableSchema, mode)
    val flag = !floatBoundsTrusted && FloatBoundsTrust.referencesFloating(dataFilters)
    partitions.flatMap { case (row, files) =>
      val kept = files.iterator
        .filter { case (_, stats) => skipping.forall(c => FileStats.parse(stats).forall(c.keep)) }
        .map { case (status, _) => if (flag) FloatBoundsTrust.flagged(status) else status }
        .toSeq
      if (kept.isEmpty && partitionSchema.nonEmpty) None else Some(PartitionDirectory(row, kept))
    }
  }

  override def inputFiles: Array[String] = directories.flatMap(_._2.map(_._1.getPath.toString)).toArray

  override def refresh(): Unit = ()

  override def sizeInBytes: Long = directories.flatMap(_._2.map(_._1.getLen)).sum

  override def toString: String = s"SourceFileIndex($root, ${directories.map(_._2.size).sum} files)"
}
