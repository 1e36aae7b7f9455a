package io.deltalog.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.types.StructType

/**
 * A fixed list of files of a change-data-feed read, grouped in partition directories whose values
 * are the table's partition values plus the per-commit constants (`_commit_version`, ...).
 * Partition filters are applied here (Spark does not re-apply them to the scanned rows).
 */
final class ChangeFeedFileIndex(
    root: Path,
    override val partitionSchema: StructType,
    directories: Seq[PartitionDirectory]) extends FileIndex {

  override def rootPaths: Seq[Path] = Seq(root)

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    DeltalogFileIndex.bindPartitionFilters(partitionFilters, partitionSchema) match {
      case None => directories
      case Some(p) => directories.filter(d => p.eval(d.values))
    }

  override def inputFiles: Array[String] = directories.flatMap(_.files.map(_.getPath.toString)).toArray

  override def refresh(): Unit = ()

  override def sizeInBytes: Long = directories.flatMap(_.files.map(_.getLen)).sum

  override def toString: String = s"ChangeFeedFileIndex($root, ${directories.map(_.files.size).sum} files)"
}
