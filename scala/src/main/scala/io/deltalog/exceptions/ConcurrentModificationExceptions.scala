package io.deltalog.exceptions

/**
 * A concurrent commit won the race for a version and its changes conflict with what this
 * transaction read or wrote (digest §8.3). The transaction was not committed; re-run the operation
 * against the new table state.
 *
 * @param table          table path
 * @param winningVersion the version of the conflicting (winning) commit, or -1 when not known
 */
class DeltaConcurrentModificationException(
    errorClass: String,
    val table: String,
    val winningVersion: Long,
    message: String)
  extends DeltalogException(errorClass, message)

private[exceptions] object ConflictText {
  def winner(table: String, version: Long): String =
    if (version >= 0) s"Table $table: the concurrent commit at version $version"
    else s"Table $table: a concurrent commit"

  def partition(p: Option[String]): String = p.map(x => s" in partition [$x]").getOrElse("")

  val Retry: String = " Re-run the operation on the new table state."
}

import ConflictText._

/** A conflict that cannot be retried automatically (e.g. commit attempts exhausted). */
class ConcurrentWriteException(table: String, winningVersion: Long, detail: String,
    errorClass: String = "DELTA_CONCURRENT_WRITE")
  extends DeltaConcurrentModificationException(errorClass, table, winningVersion,
    s"Table $table: $detail.$Retry")

/** The commit was retried `deltalog.maxCommitAttempts` times without success. */
class MaxCommitAttemptsExceededException(table: String, val attempts: Int, val attemptVersion: Long)
  extends ConcurrentWriteException(table, attemptVersion,
    s"gave up after $attempts commit attempts (last attempted version $attemptVersion); concurrent " +
      "writers kept winning. Raise deltalog.maxCommitAttempts or reduce the write concurrency",
    "DELTA_MAX_COMMIT_RETRIES_EXCEEDED")

/** The winner changed the table metadata (schema, properties, partitioning) outside the allow-list. */
class MetadataChangedException(table: String, winningVersion: Long, detail: String)
  extends DeltaConcurrentModificationException("DELTA_METADATA_CHANGED", table, winningVersion,
    s"${winner(table, winningVersion)} changed the table metadata: $detail.$Retry")

/** The winner changed the protocol and this transaction changes it too, or a feature was dropped. */
class ProtocolChangedException(table: String, winningVersion: Long, detail: String)
  extends DeltaConcurrentModificationException("DELTA_PROTOCOL_CHANGED", table, winningVersion,
    s"${winner(table, winningVersion)} changed the protocol: $detail.$Retry")

/** The winner added files this transaction should have read. */
class ConcurrentAppendException(table: String, winningVersion: Long, val partition: Option[String],
    val file: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_APPEND", table, winningVersion,
    s"${winner(table, winningVersion)} added file $file${ConflictText.partition(partition)}, which this " +
      "transaction should have read. Make partition predicates explicit to narrow what the transaction " +
      s"reads.$Retry")

/** The winner removed a file this transaction read. */
class ConcurrentDeleteReadException(table: String, winningVersion: Long, val partition: Option[String],
    val file: Option[String])
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_DELETE_READ", table, winningVersion,
    s"${winner(table, winningVersion)} removed ${file.map(f => s"file $f").getOrElse("files")}" +
      s"${ConflictText.partition(partition)} that this transaction read" +
      s"${if (file.isEmpty) " (it read the whole table)" else ""}.$Retry")

/** The winner removed a file this transaction removes too. */
class ConcurrentDeleteDeleteException(table: String, winningVersion: Long, val partition: Option[String],
    val file: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_DELETE_DELETE", table, winningVersion,
    s"${winner(table, winningVersion)} already removed file $file${ConflictText.partition(partition)}, " +
      s"which this transaction removes too.$Retry")

/** The winner touched the same application transaction id or metadata domain. */
class ConcurrentTransactionException(table: String, winningVersion: Long, detail: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_TRANSACTION", table, winningVersion,
    s"${winner(table, winningVersion)} $detail.$Retry")

/**
 * A commit breaks a rule of the table or the protocol before it is written (append-only table,
 * partition values not matching the partition columns, duplicate txn app ids, ...).
 */
class InvalidCommitException(errorClass: String, val table: String, message: String)
  extends DeltalogException(errorClass, message)

/** `delta.appendOnly = true` and the commit removes data. */
class AppendOnlyTableException(table: String, val file: String)
  extends InvalidCommitException("DELTA_APPEND_ONLY_TABLE", table,
    s"Table $table is append-only (delta.appendOnly = true): the commit cannot remove file $file with " +
      "dataChange = true. Only appends and data-preserving rearrangements are allowed; set " +
      "delta.appendOnly = false to allow updates and deletes.")
