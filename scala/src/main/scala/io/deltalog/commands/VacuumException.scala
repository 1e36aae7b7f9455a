package io.deltalog.commands

import io.deltalog.exceptions.DeltalogException

/**
 * VACUUM refused (delta-spark 4.4's error classes): `DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT`,
 * `DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE`, `DELTA_CANNOT_VACUUM_LITE`. Nothing was deleted.
 */
class VacuumException(errorClass: String, val table: String, message: String)
  extends DeltalogException(errorClass, message) {
  def this(message: String) = this(DeltalogException.GenericErrorClass, null, message)
}
