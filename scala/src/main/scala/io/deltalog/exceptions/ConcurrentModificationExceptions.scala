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
  extends DeltalogException(errorClass, message) {
  /** One-message constructor (`DELTA_CONCURRENT_MODIFICATION`, no table, winning version -1). */
  def this(message: String) = this("DELTA_CONCURRENT_MODIFICATION", null, -1L, message)
}

private[exceptions] object ConflictText {
  def winner(table: String, version: Long): String =
    if (version >= 0) s"Table $table: the concurrent commit at version $version"
    else s"Table $table: a concurrent commit"

  def partition(p: Option[String]): String = p.map(x => s" in partition [$x]").getOrElse("")

  val Retry: String = " Re-run the operation on the new table state."
}

import ConflictText._
import DeltalogException.messageOr

/** A conflict that cannot be retried automatically (e.g. commit attempts exhausted). */
class ConcurrentWriteException protected (table: String, winningVersion: Long, detail: String,
    errorClass: String, verbatim: String)
  extends DeltaConcurrentModificationException(errorClass, table, winningVersion,
    messageOr(verbatim, s"Table $table: $detail.$Retry")) {
  def this(table: String, winningVersion: Long, detail: String, errorClass: String) =
    this(table, winningVersion, detail, errorClass, null)
  def this(table: String, winningVersion: Long, detail: String) =
    this(table, winningVersion, detail, "DELTA_CONCURRENT_WRITE", null)
  def this(message: String) = this(null, -1L, null, "DELTA_CONCURRENT_WRITE", message)
}

/** The commit was retried `deltalog.maxCommitAttempts` times without success. */
class MaxCommitAttemptsExceededException private (table: String, val attempts: Int, val attemptVersion: Long,
    verbatim: String)
  extends ConcurrentWriteException(table, attemptVersion,
    s"gave up after $attempts commit attempts (last attempted version $attemptVersion); concurrent " +
      "writers kept winning. Raise deltalog.maxCommitAttempts or reduce the write concurrency",
    "DELTA_MAX_COMMIT_RETRIES_EXCEEDED", verbatim) {
  def this(table: String, attempts: Int, attemptVersion: Long) = this(table, attempts, attemptVersion, null)
  def this(message: String) = this(null, -1, -1L, message)
}

/** The winner changed the table metadata (schema, properties, partitioning) outside the allow-list. */
class MetadataChangedException private (table: String, winningVersion: Long, detail: String, verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_METADATA_CHANGED", table, winningVersion,
    messageOr(verbatim, s"${winner(table, winningVersion)} changed the table metadata: $detail.$Retry")) {
  def this(table: String, winningVersion: Long, detail: String) = this(table, winningVersion, detail, null)
  def this(message: String) = this(null, -1L, null, message)
}

/** The winner changed the protocol and this transaction changes it too, or a feature was dropped. */
class ProtocolChangedException private (table: String, winningVersion: Long, detail: String, verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_PROTOCOL_CHANGED", table, winningVersion,
    messageOr(verbatim, s"${winner(table, winningVersion)} changed the protocol: $detail.$Retry")) {
  def this(table: String, winningVersion: Long, detail: String) = this(table, winningVersion, detail, null)
  def this(message: String) = this(null, -1L, null, message)
}

/** The winner added files this transaction should have read. */
class ConcurrentAppendException private (table: String, winningVersion: Long, val partition: Option[String],
    val file: String, verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_APPEND", table, winningVersion,
    messageOr(verbatim,
      s"${winner(table, winningVersion)} added file $file${ConflictText.partition(partition)}, which this " +
        "transaction should have read. Make partition predicates explicit to narrow what the transaction " +
        s"reads.$Retry")) {
  def this(table: String, winningVersion: Long, partition: Option[String], file: String) =
    this(table, winningVersion, partition, file, null)
  def this(message: String) = this(null, -1L, None, null, message)
}

/** The winner removed a file this transaction read. */
class ConcurrentDeleteReadException private (table: String, winningVersion: Long, val partition: Option[String],
    val file: Option[String], verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_DELETE_READ", table, winningVersion,
    messageOr(verbatim,
      s"${winner(table, winningVersion)} removed ${file.map(f => s"file $f").getOrElse("files")}" +
        s"${ConflictText.partition(partition)} that this transaction read" +
        s"${if (file.isEmpty) " (it read the whole table)" else ""}.$Retry")) {
  def this(table: String, winningVersion: Long, partition: Option[String], file: Option[String]) =
    this(table, winningVersion, partition, file, null)
  def this(message: String) = this(null, -1L, None, None, message)
}

/** The winner removed a file this transaction removes too. */
class ConcurrentDeleteDeleteException private (table: String, winningVersion: Long, val partition: Option[String],
    val file: String, verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_DELETE_DELETE", table, winningVersion,
    messageOr(verbatim,
      s"${winner(table, winningVersion)} already removed file $file${ConflictText.partition(partition)}, " +
        s"which this transaction removes too.$Retry")) {
  def this(table: String, winningVersion: Long, partition: Option[String], file: String) =
    this(table, winningVersion, partition, file, null)
  def this(message: String) = this(null, -1L, None, null, message)
}

/** The winner touched the same application transaction id or metadata domain. */
class ConcurrentTransactionException private (table: String, winningVersion: Long, detail: String,
    verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_CONCURRENT_TRANSACTION", table, winningVersion,
    messageOr(verbatim, s"${winner(table, winningVersion)} $detail.$Retry")) {
  def this(table: String, winningVersion: Long, detail: String) = this(table, winningVersion, detail, null)
  def this(message: String) = this(null, -1L, null, message)
}

/**
 * A commit breaks a rule of the table or the protocol before it is written (append-only table,
 * partition values not matching the partition columns, duplicate txn app ids, ...).
 */
class InvalidCommitException(errorClass: String, val table: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this(DeltalogException.GenericErrorClass, null, message)
}

/** `delta.appendOnly = true` and the commit removes data. */
class AppendOnlyTableException private (table: String, val file: String, verbatim: String)
  extends InvalidCommitException("DELTA_APPEND_ONLY_TABLE", table, messageOr(verbatim,
    s"Table $table is append-only (delta.appendOnly = true): the commit cannot remove file $file with " +
      "dataChange = true. Only appends and data-preserving rearrangements are allowed; set " +
      "delta.appendOnly = false to allow updates and deletes.")) {
  def this(table: String, file: String) = this(table, file, null)
  def this(message: String) = this(null, null, message)
}

/**
 * The downgrade commit of DROP FEATURE lost to a concurrent commit after which the feature may no
 * longer be dropped (the winner used the feature again, e.g. added a file with a deletion vector).
 * Nothing was written by the downgrade; the table still supports the feature.
 */
class DropFeatureConflictException private (table: String, winningVersion: Long, val feature: String,
    detail: String, verbatim: String)
  extends DeltaConcurrentModificationException("DELTA_FEATURE_DROP_CONFLICT_REVALIDATION_FAIL", table,
    winningVersion, messageOr(verbatim,
      s"${winner(table, winningVersion)} modified the table so that feature '$feature' can no longer be " +
        s"dropped: $detail. The feature was not dropped; run ALTER TABLE ... DROP FEATURE $feature again.")) {
  def this(table: String, winningVersion: Long, feature: String, detail: String) =
    this(table, winningVersion, feature, detail, null)
  def this(message: String) = this(null, -1L, null, null, message)
}
