package io.deltalog.commands

/**
 * The per-row outcome of a row-level statement (UPDATE, MERGE) as columns added to the rows of
 * [[TouchedFiles]]: [[ActionColumn]] says what happens to the row and [[NewValuesColumn]] holds
 * the row after the statement (a struct of the table's columns, logical names; the old values for
 * kept rows). Source rows a MERGE inserts are rows with [[Insert]] whose target columns are null.
 */
private[commands] object RowChanges {
  val ActionColumn = "__deltalog_action"
  val NewValuesColumn = "__deltalog_new"
  /** Optional: true when a MERGE not-matched-by-source clause acted on the row (for its metrics). */
  val BySourceColumn = "__deltalog_by_source"

  /** The row stays as it is. */
  val Keep: Int = 0
  /** The row is replaced by its new values. */
  val Update: Int = 1
  /** The row is deleted. */
  val Delete: Int = 2
  /** A new row (MERGE's not-matched source rows). */
  val Insert: Int = 3
  /** A source row nothing happens to (MERGE without a matching not-matched clause). */
  val Ignore: Int = -1
}
