package io.deltalog.spark.read

import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * What one [[DeltalogFileIndex.listFiles]] call kept: live files of the snapshot, files left after
 * partition pruning, files left after data skipping (= files read).
 *
 * @param partitionFilterExpressions the partition filters applied
 * @param dataFilterExpressions      the data filters used for skipping
 */
final class ListingStats(
    val tablePath: String,
    val version: Long,
    val totalFiles: Long,
    val filesAfterPartitionPruning: Long,
    val filesAfterDataSkipping: Long,
    partitionFilterExpressions: Seq[Expression],
    dataFilterExpressions: Seq[Expression]) {

  /** The partition filters applied (SQL form; rendered on first use, not by every listing). */
  lazy val partitionFilters: Seq[String] = partitionFilterExpressions.map(_.sql)

  /** The data filters used for skipping (SQL form). */
  lazy val dataFilters: Seq[String] = dataFilterExpressions.map(_.sql)

  /** Files read by the scan. */
  def filesRead: Long = filesAfterDataSkipping

  override def toString: String =
    s"ListingStats($tablePath@v$version: $totalFiles files, $filesAfterPartitionPruning after partition " +
      s"pruning, $filesAfterDataSkipping after data skipping)"
}
