package io.deltalog.api

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.FileSourceScanExec

/**
 * py4j entry points for looking at how a query over a deltalog table is planned: which data files
 * its file scans keep after partition pruning and data skipping. Planning only: no Spark job runs
 * and no data file is opened, so it also works on log-only tables (benchmarks, tests).
 */
object ScanApi {

  /** Paths (as the scan would open them) of every data file the file scans of `df` would read. */
  def plannedFiles(df: DataFrame): Array[String] = {
    // sparkPlan: the physical plan before adaptive execution wraps it, so the scans are visible.
    df.queryExecution.sparkPlan.collect { case s: FileSourceScanExec => s }
      .flatMap(_.selectedPartitions.filePartitionIterator.flatMap(_.files.map(_.getPath.toString)))
      .toArray
  }

  /** [[plannedFiles]] as one '\n'-separated string (one py4j transfer instead of one per path). */
  def plannedFilesText(df: DataFrame): String = plannedFiles(df).mkString("\n")

  /** Number of data files the file scans of `df` would read. */
  def plannedFileCount(df: DataFrame): Long =
    df.queryExecution.sparkPlan.collect { case s: FileSourceScanExec => s }
      .map(_.selectedPartitions.totalNumberOfFiles).sum
}
