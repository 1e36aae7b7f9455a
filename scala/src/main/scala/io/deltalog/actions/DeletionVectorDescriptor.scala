package io.deltalog.actions

import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * The `deletionVector` struct of `add`/`remove` (protocol §Deletion Vectors).
 *
 * @param storageType    `u` (UUID-named file next to the table), `i` (inline) or `p` (absolute path)
 * @param pathOrInlineDv for `u`: optional random prefix + 20-char Z85 UUID; for `i`: Z85 bitmap;
 *                       for `p`: an absolute URI
 * @param offset         byte offset of the DV's 4-byte size field in its file (absent for `i`)
 * @param sizeInBytes    length of the serialized bitmap
 * @param cardinality    number of deleted rows
 * @param maxRowIndex    optional largest deleted row index (written by some delta-spark versions)
 * @param extra          unknown fields and explicit nulls (not part of equality)
 */
final case class DeletionVectorDescriptor(
    storageType: String,
    pathOrInlineDv: String,
    offset: Option[Int] = None,
    sizeInBytes: Int,
    cardinality: Long,
    maxRowIndex: Option[Long] = None,
    extra: ExtraFields = ExtraFields.empty) extends KeepsUnknownFields {

  /** True for an inline DV (`i`), whose bitmap is in [[pathOrInlineDv]]. */
  def isInline: Boolean = storageType == DeletionVectorDescriptor.Inline

  /** True when the DV lives in a file (`u` or `p`). */
  def isOnDisk: Boolean = !isInline

  /**
   * Identifier of this DV, part of the logical-file key in log replay:
   * `storageType + pathOrInlineDv`, plus `"@" + offset` when an offset is present.
   */
  def uniqueId: String = offset match {
    case Some(o) => s"$storageType$pathOrInlineDv@$o"
    case None => s"$storageType$pathOrInlineDv"
  }

  /** Offset to seek to in the DV file: the stored offset, or 0 when absent. */
  def offsetOrZero: Int = offset.getOrElse(0)

  /**
   * Location of the DV file. For `u`: `<tableRoot>/<prefix>/deletion_vector_<uuid>.bin` (no prefix
   * directory when the prefix is empty); for `p`: the stored absolute URI.
   *
   * @param tableRoot table root URI, e.g. `s3://bucket/table` (a trailing `/` is ignored)
   * @throws IllegalStateException    for inline DVs, which have no file
   * @throws IllegalArgumentException for an unknown storage type or a malformed `u` value
   */
  def absolutePath(tableRoot: String): String = storageType match {
    case DeletionVectorDescriptor.UuidFile =>
      if (pathOrInlineDv.length < 20) {
        throw new IllegalArgumentException(
          s"deletion vector pathOrInlineDv '$pathOrInlineDv' is shorter than a 20-character Z85 UUID")
      }
      val prefix = pathOrInlineDv.substring(0, pathOrInlineDv.length - 20)
      val uuid = Z85.decodeUuid(pathOrInlineDv.substring(pathOrInlineDv.length - 20))
      val root = tableRoot.reverse.dropWhile(_ == '/').reverse
      val dir = if (prefix.isEmpty) root else s"$root/$prefix"
      s"$dir/deletion_vector_$uuid.bin"
    case DeletionVectorDescriptor.AbsolutePath =>
      pathOrInlineDv
    case DeletionVectorDescriptor.Inline =>
      throw new IllegalStateException("an inline deletion vector has no file")
    case other =>
      throw new IllegalArgumentException(s"unknown deletion vector storage type '$other'")
  }

  /** The serialized bitmap of an inline DV (Z85-decoded, truncated to [[sizeInBytes]]). */
  def inlineData: Array[Byte] = {
    if (!isInline) throw new IllegalStateException(s"storage type '$storageType' is not inline")
    Z85.decode(pathOrInlineDv, sizeInBytes)
  }

  /** The JSON object of this descriptor (protocol field order, then unknown fields). */
  def toJsonNode: ObjectNode = new FieldWriter(extra)
    .string("storageType", storageType)
    .string("pathOrInlineDv", pathOrInlineDv)
    .optInt("offset", offset)
    .int("sizeInBytes", sizeInBytes)
    .long("cardinality", cardinality)
    .optLong("maxRowIndex", maxRowIndex)
    .result
}

/** Storage-type constants and parsing for [[DeletionVectorDescriptor]]. */
object DeletionVectorDescriptor {
  /** `u`: file `deletion_vector_<uuid>.bin` under the table root. */
  val UuidFile: String = "u"
  /** `i`: the bitmap is stored inline, Z85-encoded. */
  val Inline: String = "i"
  /** `p`: an absolute path/URI. */
  val AbsolutePath: String = "p"

  /** A `u` descriptor for the file named by `uuid`, under `prefix` (may be empty). */
  def onDisk(
      uuid: java.util.UUID,
      prefix: String,
      offset: Int,
      sizeInBytes: Int,
      cardinality: Long): DeletionVectorDescriptor =
    DeletionVectorDescriptor(UuidFile, prefix + Z85.encodeUuid(uuid), Some(offset), sizeInBytes, cardinality)

  /** An inline descriptor holding the serialized bitmap `data`. */
  def inline(data: Array[Byte], cardinality: Long): DeletionVectorDescriptor =
    DeletionVectorDescriptor(Inline, Z85.encode(data), None, data.length, cardinality)

  private[actions] def read(r: FieldReader): DeletionVectorDescriptor = {
    val d = DeletionVectorDescriptor(
      storageType = r.reqString("storageType"),
      pathOrInlineDv = r.reqString("pathOrInlineDv"),
      offset = r.optInt("offset"),
      sizeInBytes = r.reqInt("sizeInBytes"),
      cardinality = r.reqLong("cardinality"),
      maxRowIndex = r.optLong("maxRowIndex"), r.extra)
    d
  }
}
