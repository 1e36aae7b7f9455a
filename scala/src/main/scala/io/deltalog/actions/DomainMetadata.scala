package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `domainMetadata` action: named, opaque configuration (`delta.*` domains are
 * system-controlled). All fields are required.
 *
 * @param domain        domain name
 * @param configuration opaque string, usually JSON
 * @param removed       true for a tombstone deleting the domain
 * @param extra         unknown fields and explicit nulls (not part of equality)
 */
final case class DomainMetadata(
    domain: String,
    configuration: String,
    removed: Boolean = false,
    extra: ExtraFields = ExtraFields.empty)
  extends Action with KeepsUnknownFields {

  override def actionName: String = DomainMetadata.ActionName

  /** True for a `delta.`-prefixed (system-controlled) domain. */
  def isSystemDomain: Boolean = domain.startsWith("delta.")

  override def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("domain", domain)
    .string("configuration", configuration)
    .bool("removed", removed)
    .result
}

/** Parsing for [[DomainMetadata]]. */
object DomainMetadata {
  /** Key of this action in a log line. */
  val ActionName: String = "domainMetadata"

  private[actions] def read(r: FieldReader): DomainMetadata = {
    val domain = r.reqString("domain")
    val configuration = r.reqString("configuration")
    val removed = r.reqBool("removed")
    DomainMetadata(domain, configuration, removed, r.extra)
  }
}
