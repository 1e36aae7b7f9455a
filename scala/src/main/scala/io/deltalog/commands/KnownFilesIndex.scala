package io.deltalog.commands

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, FileStatusWithMetadata, PartitionDirectory}
import org.apache.spark.sql.types.StructType

/**
 * A fixed list of data files (path, size and modification time from their `add` actions), without
 * partition columns: a rewrite reads exactly the files the log names, with no file-system listing
 * (`spark.read.parquet(paths)` lists them, in a Spark job of up to one task per path beyond 32 paths).
 */
private[commands] final class KnownFilesIndex(root: Path, files: Seq[FileStatus]) extends FileIndex {
  override def rootPaths: Seq[Path] = Seq(root)
  override def partitionSchema: StructType = new StructType()

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, files.map(f => FileStatusWithMetadata(f, Map.empty))))

  override def inputFiles: Array[String] = files.map(_.getPath.toString).toArray
  override def refresh(): Unit = ()
  override def sizeInBytes: Long = files.map(_.getLen).sum
  override def toString: String = s"KnownFilesIndex($root, ${files.size} files)"
}
