package io.deltalog.spark.read

import io.deltalog.exceptions.DeltalogException

/** Read options that contradict each other or cannot be parsed (time travel, CDF ranges, path). */
class InvalidReadOptionException(val table: String, detail: String)
  extends DeltalogException("DELTA_INVALID_READ_OPTION",
    s"Reading table ${Option(table).getOrElse("<no path>")}: $detail.")
