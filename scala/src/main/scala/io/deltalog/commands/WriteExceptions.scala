package io.deltalog.commands

import io.deltalog.exceptions.DeltalogException

/** A writer option has a value that cannot be used. */
class InvalidWriteOptionException(val option: String, val value: String, expected: String)
  extends DeltalogException("DELTA_INVALID_WRITE_OPTION",
    s"Writer option '$option' = '$value' is invalid: expected $expected.")

/** A write that the table or the options do not allow (save mode, replaceWhere on a new table, ...). */
class InvalidWriteException(errorClass: String, val table: String, message: String)
  extends DeltalogException(errorClass, message)

/**
 * The data's schema does not match the table's.
 *
 * @param columns the columns that differ (as `name: type` descriptions)
 */
class SchemaMismatchException(val table: String, val version: Long, val columns: Seq[String], detail: String)
  extends DeltalogException("DELTA_SCHEMA_MISMATCH",
    s"Table $table (version $version): the data's schema does not match the table's: $detail " +
      s"Mismatching column(s): ${columns.mkString(", ")}. To add new columns use the writer option " +
      "mergeSchema=true; to replace the schema on overwrite use overwriteSchema=true.")

/**
 * A written row breaks a rule of the table (NOT NULL, invariant, CHECK constraint, generated or
 * identity column, replaceWhere predicate). Raised on an executor; nothing is committed.
 *
 * @param rule   e.g. `CHECK constraint positive (id > 0)`
 * @param values `column = value` of the offending row
 */
class ConstraintViolationException(errorClass: String, val table: String, val rule: String, val values: String,
    hint: String)
  extends DeltalogException(errorClass,
    s"Table $table: a written row violates $rule; offending values: $values. Nothing was committed. $hint")
