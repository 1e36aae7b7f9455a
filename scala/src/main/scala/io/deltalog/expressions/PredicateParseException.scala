package io.deltalog.expressions

import io.deltalog.exceptions.DeltalogException

/**
 * A predicate's SQL text could not be parsed. `position` is the 0-based character offset in
 * `sql` where parsing failed (`sql.length` for an unexpected end of input); `reason` says what
 * was expected or what is not supported.
 */
class PredicateParseException private (val sql: String, val position: Int, val reason: String, verbatim: String)
  extends DeltalogException(
    "DELTA_INVALID_PREDICATE",
    DeltalogException.messageOr(verbatim, PredicateParseException.render(sql, position, reason))) {
  def this(sql: String, position: Int, reason: String) = this(sql, position, reason, null)
  def this(message: String) = this(null, -1, null, message)
}

object PredicateParseException {
  private[expressions] def render(sql: String, position: Int, reason: String): String = {
    val s = Option(sql).getOrElse("")
    val near =
      if (position >= s.length) "at end of input"
      else {
        val snippet = s.substring(position, math.min(s.length, position + 20))
        s"near '$snippet${if (position + 20 < s.length) "..." else ""}'"
      }
    s"Cannot parse predicate at position $position ($near): $reason. Predicate: $s"
  }
}

/**
 * A predicate could not be evaluated: a literal cannot be coerced to the type it is compared with
 * (`DELTA_PREDICATE_TYPE_MISMATCH`), a referenced column is not a partition column
 * (`DELTA_INVALID_PREDICATE`), or a stored partition value does not parse as its column's type
 * (`DELTA_INVALID_PARTITION_VALUE`).
 */
class PredicateEvaluationException(errorClass: String, message: String, cause: Throwable = null)
  extends DeltalogException(errorClass, message, cause) {
  def this(message: String) = this("DELTA_INVALID_PREDICATE", message)
}
