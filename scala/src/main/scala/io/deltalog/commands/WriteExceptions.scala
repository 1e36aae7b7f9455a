package io.deltalog.commands

import io.deltalog.exceptions.DeltalogException
import io.deltalog.exceptions.DeltalogException.messageOr

/** A writer option has a value that cannot be used. */
class InvalidWriteOptionException private (val option: String, val value: String, expected: String,
    verbatim: String)
  extends DeltalogException("DELTA_INVALID_WRITE_OPTION", messageOr(verbatim,
    s"Writer option '$option' = '$value' is invalid: expected $expected.")) {
  def this(option: String, value: String, expected: String) = this(option, value, expected, null)
  def this(message: String) = this(null, null, null, message)
}

/** A write that the table or the options do not allow (save mode, replaceWhere on a new table, ...). */
class InvalidWriteException(errorClass: String, val table: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this(DeltalogException.GenericErrorClass, null, message)
}

/**
 * The data's schema does not match the table's.
 *
 * @param columns the columns that differ (as `name: type` descriptions)
 */
class SchemaMismatchException private (val table: String, val version: Long, val columns: Seq[String],
    detail: String, verbatim: String)
  extends DeltalogException("DELTA_SCHEMA_MISMATCH", messageOr(verbatim,
    s"Table $table (version $version): the data's schema does not match the table's: $detail " +
      s"Mismatching column(s): ${columns.mkString(", ")}. To add new columns use the writer option " +
      "mergeSchema=true; to replace the schema on overwrite use overwriteSchema=true.")) {
  def this(table: String, version: Long, columns: Seq[String], detail: String) =
    this(table, version, columns, detail, null)
  def this(message: String) = this(null, -1L, Seq.empty, null, message)
}

/**
 * A written row breaks a rule of the table (NOT NULL, invariant, CHECK constraint, generated or
 * identity column, replaceWhere predicate). Raised on an executor; nothing is committed.
 *
 * @param rule   e.g. `CHECK constraint positive (id > 0)`
 * @param values `column = value` of the offending row
 */
class ConstraintViolationException private (errorClass: String, val table: String, val rule: String,
    val values: String, hint: String, verbatim: String)
  extends DeltalogException(errorClass, messageOr(verbatim,
    s"Table $table: a written row violates $rule; offending values: $values. Nothing was committed. $hint")) {
  def this(errorClass: String, table: String, rule: String, values: String, hint: String) =
    this(errorClass, table, rule, values, hint, null)
  /** One-message constructor: `DELTA_VIOLATE_CONSTRAINT_WITH_VALUES`. */
  def this(message: String) = this("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", null, null, null, null, message)
}
