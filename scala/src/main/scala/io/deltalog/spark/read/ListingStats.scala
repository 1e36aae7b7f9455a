package io.deltalog.spark.read

/**
 * What one [[DeltalogFileIndex.listFiles]] call kept: live files of the snapshot, files left after
 * partition pruning, files left after data skipping (= files read).
 *
 * @param partitionFilters the partition filters applied (SQL form)
 * @param dataFilters      the data filters used for skipping (SQL form)
 */
final case class ListingStats(
    tablePath: String,
    version: Long,
    totalFiles: Long,
    filesAfterPartitionPruning: Long,
    filesAfterDataSkipping: Long,
    partitionFilters: Seq[String],
    dataFilters: Seq[String]) {

  /** Files read by the scan. */
  def filesRead: Long = filesAfterDataSkipping

  override def toString: String =
    s"ListingStats($tablePath@v$version: $totalFiles files, $filesAfterPartitionPruning after partition " +
      s"pruning, $filesAfterDataSkipping after data skipping)"
}
