package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `format` of a table's `metaData`: the data-file provider and its options.
 * In practice always `{"provider":"parquet","options":{}}`.
 *
 * @param extra unknown fields and explicit nulls (not part of equality)
 */
final case class Format(
    provider: String = "parquet",
    options: Map[String, String] = Map.empty,
    extra: ExtraFields = ExtraFields.empty) extends KeepsUnknownFields {

  /** The JSON object of this format (protocol field order, then unknown fields). */
  def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("provider", provider)
    .stringMapOr("options", options)
    .result
}

/** Parsing for [[Format]]. */
object Format {
  /** Lenient: a missing provider means "parquet", missing options mean `{}`. */
  private[actions] def read(r: FieldReader): Format = {
    val provider = r.optString("provider").getOrElse("parquet")
    val options = r.stringMapOr("options")
    Format(provider, options, r.extra)
  }
}
