package io.deltalog.commands

import org.apache.spark.sql.types.{DataType, StructType}

import io.deltalog.actions.AddFile
import io.deltalog.log.Snapshot

/**
 * OPTIMIZE on a clustered table (liquid clustering), as delta-spark 4.4 refuses and records it, with
 * deltalog's incremental file choice:
 *
 *  - refused on any clustered table: a WHERE clause (`DELTA_CLUSTERING_WITH_PARTITION_PREDICATE`) and
 *    ZORDER BY (`DELTA_CLUSTERING_WITH_ZORDER_BY`); `FULL` needs clustering columns
 *    (`DELTA_OPTIMIZE_FULL_NOT_SUPPORTED`). Without clustering columns (CLUSTER BY NONE) OPTIMIZE compacts;
 *  - the files rewritten: those not clustered yet ([[ClusteredTable.isUnclustered]]), every file with FULL. Files clustered earlier stay as they are (delta-spark re-merges z-cubes smaller
 *    than 100 GiB with new data; deltalog never rewrites a clustered file without FULL). Files clustered
 *    by other columns (before ALTER TABLE … CLUSTER BY) or by another provider wait for FULL, as in
 *    delta-spark;
 *  - the chosen files form one z-cube: laid out along the Z curve of the clustering columns ([[ZOrder]],
 *    bit interleaving of per-column quantile ranks; delta-spark uses a Hilbert curve) in
 *    `max(1, bytes / maxFileSize)` files, each marked with `clusteringProvider = "liquid"` and the
 *    z-cube tags.
 *
 * @param paths the clustering columns (logical paths; empty: the table is compacted)
 */
private[commands] final case class OptimizeClustering(clustered: Boolean, paths: Seq[Seq[String]], full: Boolean) {
  /** The clustering columns' logical names (as `commitInfo` and the z-cube tags record them). */
  val columns: Seq[String] = paths.map(ClusteredTable.displayName)
  def isClustering: Boolean = paths.nonEmpty

  /** The files to cluster (see the class doc). */
  def candidates(all: Seq[AddFile]): Seq[AddFile] =
    if (full) all else all.filter(ClusteredTable.isUnclustered)

  /** The clustering columns as the Z-order layout takes them: paths in the table schema's spelling, typed. */
  def zColumns(schema: StructType): Seq[(Seq[String], DataType)] = paths.map { path =>
    var dt: DataType = schema
    val resolved = path.map { part =>
      val f = dt.asInstanceOf[StructType].fields.find(_.name.equalsIgnoreCase(part)).get
      dt = f.dataType
      f.name
    }
    resolved -> dt
  }

  /**
   * delta-spark's `clusteringStats` of the result: the considered files with and without z-cube tags,
   * the z-cubes they belong to, the files merged and the z-cubes written (one, or none).
   */
  def stats(considered: Seq[AddFile], merged: Seq[AddFile], committed: Boolean): ClusteringStats = {
    val (cubes, other) = considered.partition(_.tags.exists(_.contains(ClusteredTable.ZCubeIdTag)))
    ClusteringStats(cubes.size, cubes.map(_.size).sum, other.size, other.map(_.size).sum,
      cubes.flatMap(_.tags.flatMap(_.get(ClusteredTable.ZCubeIdTag))).distinct.size,
      merged.size, merged.map(_.size).sum, if (committed) 1 else 0)
  }
}

/** delta-spark's `clusteringStats` struct of the OPTIMIZE result. */
final case class ClusteringStats(inputZCubeFiles: Int, inputZCubeBytes: Long, inputOtherFiles: Int,
    inputOtherBytes: Long, inputNumZCubes: Int, mergedFiles: Int, mergedBytes: Long, numOutputZCubes: Int)

private[commands] object OptimizeClustering {
  /**
   * The clustering of `snapshot` for an OPTIMIZE with these clauses, refused as delta-spark refuses
   * them (see the class doc).
   */
  def apply(snapshot: Snapshot, predicate: Option[String], zOrderBy: Seq[String], full: Boolean,
      table: String): OptimizeClustering = {
    val clustered = ClusteredTable.isClustered(snapshot.protocol)
    val paths = if (clustered) ClusteredTable.logicalPaths(snapshot) else Nil
    val columns = paths.map(ClusteredTable.displayName)
    if (clustered) {
      predicate.foreach { p =>
        throw new InvalidWriteException("DELTA_CLUSTERING_WITH_PARTITION_PREDICATE", table,
          s"Table $table: OPTIMIZE command for Delta table with clustering doesn't support partition predicates. " +
            s"Please remove the predicates: $p. (A clustered table has no partitions; OPTIMIZE clusters the files " +
            "not yet clustered.)")
      }
      if (zOrderBy.nonEmpty) {
        throw new InvalidWriteException("DELTA_CLUSTERING_WITH_ZORDER_BY", table,
          s"Table $table: OPTIMIZE command for Delta table with clustering cannot specify ZORDER BY. Please remove " +
            s"ZORDER BY (${zOrderBy.mkString(", ")}); OPTIMIZE clusters by the clustering columns " +
            s"(${if (columns.isEmpty) "none" else columns.mkString(", ")}).")
      }
    }
    if (full && columns.isEmpty) {
      throw new InvalidWriteException("DELTA_OPTIMIZE_FULL_NOT_SUPPORTED", table,
        s"Table $table: OPTIMIZE FULL is only supported for clustered tables with non-empty clustering columns. " +
          "Run OPTIMIZE without FULL, or set clustering columns with ALTER TABLE ... CLUSTER BY.")
    }
    OptimizeClustering(clustered, paths, full)
  }
}
