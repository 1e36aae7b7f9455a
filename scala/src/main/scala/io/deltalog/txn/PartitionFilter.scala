package io.deltalog.txn

import io.deltalog.expressions.{PartitionPredicates, Predicate}

/**
 * The only place the transaction touches `io.deltalog.expressions` (partition-predicate
 * classification and evaluation against `partitionValues`).
 */
private[txn] object PartitionFilter {
  def isPartitionOnly(p: Predicate, partitionColumns: Seq[String]): Boolean =
    PartitionPredicates.isPartitionOnly(p, partitionColumns)

  def partitionTypes(schemaString: String, partitionColumns: Seq[String]): Map[String, String] =
    PartitionPredicates.partitionTypesFromSchema(schemaString, partitionColumns)

  /** True when the (logical-name keyed) partition values satisfy every predicate. */
  def matchesAll(ps: Seq[Predicate], partitionValues: Map[String, String], types: Map[String, String]): Boolean =
    ps.forall(p => PartitionPredicates.matches(p, partitionValues, types))
}
