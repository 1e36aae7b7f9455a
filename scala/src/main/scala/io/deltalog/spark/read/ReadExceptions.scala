package io.deltalog.spark.read

import io.deltalog.exceptions.DeltalogException

/** Read options that contradict each other or cannot be parsed (time travel, CDF ranges, path). */
class InvalidReadOptionException private (val table: String, detail: String, verbatim: String)
  extends DeltalogException("DELTA_INVALID_READ_OPTION", DeltalogException.messageOr(verbatim,
    s"Reading table ${Option(table).getOrElse("<no path>")}: $detail.")) {
  def this(table: String, detail: String) = this(table, detail, null)
  def this(message: String) = this(null, null, message)
}
