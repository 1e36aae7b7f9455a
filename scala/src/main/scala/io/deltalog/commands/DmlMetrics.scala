package io.deltalog.commands

/**
 * What a DELETE did, and its `commitInfo.operationMetrics` under delta-spark's names. delta-spark
 * 4.4 writes the same key set for copy-on-write and deletion-vector deletes (zeros included);
 * `numDeletedRows` only when the count is known (a whole-file delete of files without
 * `numRecords` statistics does not know it).
 */
private[commands] final case class DmlMetrics(
    numRemovedFiles: Long = 0,
    numAddedFiles: Long = 0,
    numDeletedRows: Option[Long] = Some(0),
    numCopiedRows: Long = 0,
    numAddedChangeFiles: Long = 0,
    numRemovedBytes: Long = 0,
    numAddedBytes: Long = 0,
    numDeletionVectorsAdded: Long = 0,
    numDeletionVectorsRemoved: Long = 0,
    numDeletionVectorsUpdated: Long = 0,
    executionTimeMs: Long = 0,
    scanTimeMs: Long = 0,
    rewriteTimeMs: Long = 0) {

  def operationMetrics: Map[String, String] = Map(
    "numRemovedFiles" -> numRemovedFiles,
    "numAddedFiles" -> numAddedFiles,
    "numCopiedRows" -> numCopiedRows,
    "numAddedChangeFiles" -> numAddedChangeFiles,
    "numRemovedBytes" -> numRemovedBytes,
    "numAddedBytes" -> numAddedBytes,
    "numDeletionVectorsAdded" -> numDeletionVectorsAdded,
    "numDeletionVectorsRemoved" -> numDeletionVectorsRemoved,
    "numDeletionVectorsUpdated" -> numDeletionVectorsUpdated,
    "executionTimeMs" -> executionTimeMs,
    "scanTimeMs" -> scanTimeMs,
    "rewriteTimeMs" -> rewriteTimeMs).map { case (k, v) => k -> v.toString } ++
    numDeletedRows.map(n => "numDeletedRows" -> n.toString)
}
