package io.deltalog.actions

/** An action naming a file by URI-encoded path: `add`, `remove` or `cdc`. */
trait FileAction extends Action {
  /** URI-encoded path, relative to the table root or absolute. */
  def path: String

  /** The file's deletion vector, if any (`cdc` files never have one). */
  def deletionVector: Option[DeletionVectorDescriptor] = None

  /** [[DeletionVectorDescriptor.uniqueId]] of the DV, or None. */
  def deletionVectorUniqueId: Option[String] = deletionVector.map(_.uniqueId)

  /**
   * Key of the logical file in log replay: the canonical path key (see
   * [[PathCodec.canonicalPathKey]]) and the DV unique id.
   */
  def logicalFileKey: (String, Option[String]) = (PathCodec.canonicalPathKey(path), deletionVectorUniqueId)
}
