package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `txn` action: the latest version an application committed (idempotent writes).
 *
 * @param appId       application id; required
 * @param version     application-defined version; required
 * @param lastUpdated ms since the epoch
 * @param extra       unknown fields and explicit nulls (not part of equality)
 */
final case class SetTransaction(
    appId: String,
    version: Long,
    lastUpdated: Option[Long] = None,
    extra: ExtraFields = ExtraFields.empty)
  extends Action with KeepsUnknownFields {

  override def actionName: String = SetTransaction.ActionName

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("appId", appId)
    .long("version", version)
    .optLong("lastUpdated", lastUpdated)
    .result
}

/** Parsing for [[SetTransaction]]. */
object SetTransaction {
  /** Key of this action in a log line. */
  val ActionName: String = "txn"

  private[actions] def read(r: FieldReader): SetTransaction = {
    val appId = r.reqString("appId")
    val version = r.reqLong("version")
    val lastUpdated = r.optLong("lastUpdated")
    SetTransaction(appId, version, lastUpdated, r.extra)
  }
}
