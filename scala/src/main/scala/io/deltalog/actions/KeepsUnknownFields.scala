package io.deltalog.actions

import scala.util.hashing.MurmurHash3

/**
 * Mixed into the case classes that carry an [[ExtraFields]] bag (as their last field, so `copy`
 * keeps it). Equality and hash code ignore that bag: two actions are equal when every modelled
 * field is equal, whatever unknown fields or explicit nulls they were read with.
 */
trait KeepsUnknownFields extends Product {
  /** Unknown fields and explicit nulls read with this value; re-emitted on serialization. */
  def extra: ExtraFields

  private def semanticFields: Iterator[Any] = productIterator.filterNot(_.isInstanceOf[ExtraFields])

  override def equals(other: Any): Boolean = other match {
    case o: KeepsUnknownFields =>
      (this eq o) || (o.getClass == getClass && semanticFields.sameElements(o.semanticFields))
    case _ => false
  }

  override def hashCode(): Int = MurmurHash3.orderedHash(semanticFields, productPrefix.hashCode)
}
