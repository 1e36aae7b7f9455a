package io.deltalog.commands

import io.deltalog.actions.{AddFile, Metadata}
import io.deltalog.expressions._
import io.deltalog.txn.OptimisticTransaction

/**
 * Dynamic partition overwrite: the files of exactly the partitions the write produced are
 * removed. They are read through a partition predicate (`(p = v1 AND q IS NULL) OR ...`), so the
 * transaction depends on those partitions only and concurrent appends elsewhere do not conflict.
 */
private[commands] object DynamicPartitions {
  /**
   * @param touched        partition values of the written files (physical keys)
   * @param logicalToPhysical logical → physical name of each partition column
   */
  def filesToRemove(txn: OptimisticTransaction, meta: Metadata, touched: Set[Map[String, String]],
      logicalToPhysical: Map[String, String]): Seq[AddFile] = {
    if (touched.isEmpty) return Nil
    val types = PartitionPredicates.partitionTypesFromSchema(meta.schemaString, meta.partitionColumns)
    val perPartition: Seq[Predicate] = touched.toSeq.map { pv =>
      meta.partitionColumns.map { c =>
        val raw = pv.getOrElse(logicalToPhysical.getOrElse(c, c), null)
        val value = PartitionPredicates.parsePartitionValue(raw, types.getOrElse(c, "string"), c)
        if (value == null) IsNull(Column(c)): Predicate else EqualTo(Column(c), Literal.of(value))
      }.reduce[Predicate](And(_, _))
    }
    // Evaluated on typed values, so files whose values are spelled differently (another writer's
    // timestamp format, `1.0` vs `1`) are matched too.
    txn.filterFiles(Seq(perPartition.reduce[Predicate](Or(_, _))))
  }
}
