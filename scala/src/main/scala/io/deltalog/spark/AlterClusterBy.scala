package io.deltalog.spark

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.TableChange
import org.slf4j.LoggerFactory

import io.deltalog.commands.{ClusteredTable, InvalidWriteException}
import io.deltalog.log.Snapshot
import io.deltalog.protocol.{Protocol, TableFeature}
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * `ALTER TABLE t CLUSTER BY (c, …)` / `CLUSTER BY NONE`, as delta-spark 4.4: one `CLUSTER BY` commit
 * (parameters `oldClusteringColumns`, `newClusteringColumns`) of the `delta.clustering` domain with the
 * new columns (none for NONE); a table that is not clustered yet gets the `clustering` feature (and
 * `domainMetadata`) in the same commit. CLUSTER BY NONE on a table that is not clustered commits
 * nothing; a partitioned table is refused; the columns are checked as for CREATE ([[ClusteredTable.validate]]).
 * Files already written stay as they are: the next OPTIMIZE clusters by the new columns.
 */
private[spark] final class AlterClusterBy(name: String, spark: SparkSession, start: () => OptimisticTransaction) {
  def apply(change: TableChange.ClusterBy): Unit = {
    val columns = change.clusteringColumns().toSeq.map(_.fieldNames().toSeq)
    val txn = start()
    val m = txn.metadata
    val limit = ClusteredTable.numColumnsLimit(k => spark.conf.getOption(k))
    val schema = ClusteredTable.schemaOf(m)
    if (m.partitionColumns.nonEmpty) {
      throw new InvalidWriteException("DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED", name,
        s"ALTER TABLE $name: ALTER TABLE CLUSTER BY cannot be applied to a partitioned table (partitioned by " +
          s"${m.partitionColumns.mkString(", ")}); nothing was changed. Re-create the table with CLUSTER BY instead.")
    }
    val resolved = ClusteredTable.validate(schema, Nil, m.configuration, columns, limit, name)
    val clustered = ClusteredTable.isClustered(txn.protocol)
    if (resolved.isEmpty && !clustered) {
      AlterClusterBy.log.info(s"ALTER TABLE $name CLUSTER BY NONE: the table is not clustered; nothing committed.")
      return
    }
    val old = ClusteredTable.logicalColumns(txn.snapshot)
    val upgrade = if (clustered) Nil else Seq(Protocol.addFeatureSupport(txn.protocol, TableFeature.Clustering.name))
    txn.commit(upgrade ++ Seq(ClusteredTable.domainFor(schema, resolved)),
      Operation.clusterBy(old, resolved.map(ClusteredTable.displayName)))
  }
}

private[spark] object AlterClusterBy {
  private val log = LoggerFactory.getLogger(classOf[AlterClusterBy])

  /** DROP COLUMN of a clustering column (or of a struct holding one) is refused, as delta-spark. */
  def refuseDroppingClusteringColumns(name: String, snapshot: Snapshot, drops: Seq[TableChange.DeleteColumn]): Unit = {
    val schema = ClusteredTable.schemaOf(snapshot.metadata)
    val clustering = ClusteredTable.domain(snapshot).toSeq.flatMap(ClusteredTable.physicalColumns)
    def lc(p: Seq[String]) = p.map(_.toLowerCase(Locale.ROOT))
    val hit = drops.map(_.fieldNames().toSeq).filter { d =>
      val physical = lc(ClusteredTable.physicalPath(schema, d))
      clustering.exists(c => lc(c).startsWith(physical))
    }
    if (hit.nonEmpty) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN", name,
        s"ALTER TABLE $name: Dropping clustering columns (${hit.map(ClusteredTable.displayName).mkString(", ")}) is " +
          "not allowed; nothing was changed. Change the clustering columns with ALTER TABLE ... CLUSTER BY first.")
    }
  }
}
