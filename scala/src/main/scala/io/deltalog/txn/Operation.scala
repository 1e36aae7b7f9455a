package io.deltalog.txn

import com.fasterxml.jackson.databind.ObjectMapper

/**
 * What a commit does, recorded in `commitInfo` (`operation`, `operationParameters`,
 * `operationMetrics`, `userMetadata`).
 *
 * @param name        e.g. `WRITE`, `DELETE`
 * @param parameters  values are JSON-encoded strings, as delta-spark writes them (`"[]"`, `"\"Append\""`)
 * @param changesData whether the operation changes data (decides the isolation level of commits
 *                    without data-changing file actions on WriteSerializable tables)
 * @param jsonValuedParameters keys of `parameters` whose value is JSON text written as a JSON value
 *                    (delta-spark writes some parameters as booleans, e.g. DROP FEATURE's `truncateHistory`)
 */
final case class Operation(
    name: String,
    parameters: Map[String, String] = Map.empty,
    metrics: Map[String, String] = Map.empty,
    userMetadata: Option[String] = None,
    changesData: Boolean = true,
    jsonValuedParameters: Set[String] = Set.empty) {
  def withMetrics(m: Map[String, String]): Operation = copy(metrics = m)
  def withUserMetadata(m: String): Operation = copy(userMetadata = Option(m))
}

/** Constructors for common operations (parameter values JSON-encoded). */
object Operation {
  private val mapper = new ObjectMapper()
  private def js(s: String): String = mapper.writeValueAsString(s)
  private def jsSeq(s: Seq[String]): String = s.map(js).mkString("[", ",", "]")
  private def jsMap(m: Map[String, String]): String =
    m.toSeq.sortBy(_._1).map { case (k, v) => s"${js(k)}:${js(v)}" }.mkString("{", ",", "}")

  /** `WRITE` with `mode` (Append, Overwrite, ...) and the partition columns. */
  def write(mode: String = "Append", partitionBy: Seq[String] = Nil, predicate: Option[String] = None): Operation =
    Operation("WRITE", Map("mode" -> mode, "partitionBy" -> jsSeq(partitionBy)) ++
      predicate.map(p => "predicate" -> jsSeq(Seq(p))))

  /** `CREATE TABLE`; `clusterBy` the liquid clustering columns (logical names; `[]` when none, as delta-spark). */
  def createTable(partitionBy: Seq[String] = Nil, properties: Map[String, String] = Map.empty,
      isManaged: Boolean = false, description: Option[String] = None, clusterBy: Seq[String] = Nil): Operation =
    Operation("CREATE TABLE", Map("isManaged" -> isManaged.toString, "partitionBy" -> jsSeq(partitionBy),
      "clusterBy" -> jsSeq(clusterBy), "properties" -> jsMap(properties)) ++ description.map("description" -> _),
      changesData = false)

  /**
   * `CLUSTER BY` (ALTER TABLE … CLUSTER BY): the old and new clustering columns as delta-spark 4.4 logs
   * them, logical names joined by commas (empty for none).
   */
  def clusterBy(oldColumns: Seq[String], newColumns: Seq[String]): Operation =
    Operation("CLUSTER BY", Map("oldClusteringColumns" -> oldColumns.mkString(","),
      "newClusteringColumns" -> newColumns.mkString(",")), changesData = false)

  def delete(predicates: Seq[String] = Nil): Operation =
    Operation("DELETE", Map("predicate" -> jsSeq(predicates)))

  /** `UPDATE` with its condition as delta-spark logs it (none: `[]`). */
  def update(predicates: Seq[String] = Nil): Operation =
    Operation("UPDATE", Map("predicate" -> jsSeq(predicates)))

  /**
   * `MERGE`: the merge condition and, per clause kind, a JSON array of `{"actionType": …[, "predicate": …]}`
   * objects (delta-spark's `matchedPredicates`, `notMatchedPredicates`, `notMatchedBySourcePredicates`).
   */
  def merge(predicate: String, matched: Seq[(String, Option[String])], notMatched: Seq[(String, Option[String])],
      notMatchedBySource: Seq[(String, Option[String])]): Operation = {
    def clauses(cs: Seq[(String, Option[String])]): String = cs.map { case (action, cond) =>
      (cond.map(c => s"${js("predicate")}:${js(c)},").getOrElse("") + s"${js("actionType")}:${js(action)}")
    }.map("{" + _ + "}").mkString("[", ",", "]")
    Operation("MERGE", Map("predicate" -> jsSeq(Seq(predicate)), "matchedPredicates" -> clauses(matched),
      "notMatchedPredicates" -> clauses(notMatched), "notMatchedBySourcePredicates" -> clauses(notMatchedBySource)))
  }

  def manualUpdate: Operation = Operation("Manual Update")

  def setTableProperties(properties: Map[String, String]): Operation =
    Operation("SET TBLPROPERTIES", Map("properties" -> jsMap(properties)), changesData = false)

  def unsetTableProperties(keys: Seq[String], ifExists: Boolean): Operation =
    Operation("UNSET TBLPROPERTIES", Map("properties" -> jsSeq(keys), "ifExists" -> ifExists.toString),
      changesData = false, jsonValuedParameters = Set("ifExists"))

  /** `ADD CONSTRAINT`: the name as written, the expression text stored in `delta.constraints.<name>`. */
  def addConstraint(name: String, expr: String): Operation =
    Operation("ADD CONSTRAINT", Map("name" -> name, "expr" -> expr), changesData = false)

  /** `DROP CONSTRAINT`: the name as written, whether it existed and, if so, its expression. */
  def dropConstraint(name: String, expr: Option[String]): Operation =
    Operation("DROP CONSTRAINT", Map("name" -> name, "existed" -> expr.isDefined.toString) ++
      expr.map("expr" -> _), changesData = false)

  def upgradeProtocol(newProtocolJson: String): Operation =
    Operation("UPGRADE PROTOCOL", Map("newProtocol" -> newProtocolJson), changesData = false)

  def streamingUpdate(outputMode: String, queryId: String, epochId: Long): Operation =
    Operation("STREAMING UPDATE", Map("outputMode" -> outputMode, "queryId" -> queryId,
      "epochId" -> epochId.toString))

  /** `DROP FEATURE` (the downgrade commit), with delta-spark's parameters (`truncateHistory` a JSON boolean). */
  def dropFeature(featureName: String, truncateHistory: Boolean): Operation =
    Operation("DROP FEATURE", Map("featureName" -> featureName, "truncateHistory" -> truncateHistory.toString),
      changesData = false, jsonValuedParameters = Set("truncateHistory"))

  /** DROP FEATURE domainMetadata: every domain left removed (delta-spark 4.4's `DOMAIN METADATA CLEANUP`; the count a JSON number). */
  def domainMetadataCleanup(removedCount: Int): Operation =
    Operation("DOMAIN METADATA CLEANUP", Map("domainMetadataRemovedCount" -> removedCount.toString),
      changesData = false, jsonValuedParameters = Set("domainMetadataRemovedCount"))

  /** A commit with no actions but its commitInfo (DROP FEATURE's barrier commits). */
  def emptyCommit: Operation = Operation("Empty Commit", changesData = false)

  /** DROP FEATURE deletionVectors: `remove` actions for deletion-vector files only tombstones still reference. */
  def deletionVectorTombstones: Operation = Operation("Deletion Vector Tombstones", changesData = false)

  /**
   * `REORG TABLE … APPLY (PURGE)` as delta-spark 4.4 logs it: `predicate` (the partition predicates'
   * unresolved expression text, e.g. `('part = a)`) and `applyPurge` (a JSON boolean, always true).
   */
  def reorgPurge(predicates: Seq[String] = Nil): Operation =
    Operation("REORG", Map("predicate" -> jsSeq(predicates), "applyPurge" -> "true"), changesData = false,
      jsonValuedParameters = Set("applyPurge"))

  /**
   * `RESTORE` as delta-spark 4.4 logs it: `version` a JSON number and `timestamp` a JSON string
   * (`java.sql.Timestamp`'s form), the one not given `null`.
   */
  def restore(version: Option[Long], timestamp: Option[String]): Operation =
    Operation("RESTORE", Map("version" -> version.map(_.toString).getOrElse("null"),
      "timestamp" -> timestamp.map(js).getOrElse("null")), jsonValuedParameters = Set("version", "timestamp"))

  /**
   * `CLONE` as delta-spark 4.4 logs it: `source` (the source table's name) and `sourceVersion` (a JSON
   * number), plus `isShallow` (a JSON boolean, as Databricks writes it; delta-spark clones are always
   * shallow). Metrics: [[io.deltalog.commands.CloneResult.metrics]].
   */
  def clone(source: String, sourceVersion: Long, isShallow: Boolean): Operation =
    Operation("CLONE", Map("source" -> source, "sourceVersion" -> sourceVersion.toString,
      "isShallow" -> isShallow.toString), jsonValuedParameters = Set("sourceVersion", "isShallow"))

  /**
   * DROP FEATURE typeWidening: the `delta.typeChanges` metadata removed from the schema, as delta-spark
   * 4.4's `UpdateColumnMetadata("DROP FEATURE", …)`: `columns` is a JSON array with, per field that
   * had the metadata, its (quoted, dotted) path as `name`, its type name, nullability and metadata.
   */
  def dropFeatureColumnMetadata(columnsJson: String): Operation =
    Operation("DROP FEATURE", Map("columns" -> columnsJson), changesData = false)

  /** DROP FEATURE columnMapping: every file rewritten under the logical column names (no parameters). */
  def removeColumnMapping: Operation = Operation("REMOVE COLUMN MAPPING", changesData = false)

  /** DROP FEATURE rowTracking: files re-added without `baseRowId` / `defaultRowCommitVersion`, by batch. */
  def rowTrackingUnBackfill(batchId: Int): Operation =
    Operation("ROW TRACKING UNBACKFILL", Map("batchId" -> batchId.toString), changesData = false)

  /**
   * `VACUUM START` (a commit of its commitInfo only) as delta-spark 4.4 writes it: parameters
   * `retentionCheckEnabled` (JSON boolean), `defaultRetentionMillis` and, for a RETAIN clause,
   * `specifiedRetentionMillis` (JSON numbers); metrics `numFilesToDelete`, `sizeOfDataToDelete`.
   */
  def vacuumStart(retentionCheckEnabled: Boolean, specifiedRetentionMillis: Option[Long],
      defaultRetentionMillis: Long, numFilesToDelete: Long, sizeOfDataToDelete: Long): Operation =
    Operation("VACUUM START", Map("retentionCheckEnabled" -> retentionCheckEnabled.toString,
      "defaultRetentionMillis" -> defaultRetentionMillis.toString) ++
      specifiedRetentionMillis.map("specifiedRetentionMillis" -> _.toString),
      metrics = Map("numFilesToDelete" -> numFilesToDelete.toString, "sizeOfDataToDelete" -> sizeOfDataToDelete.toString),
      changesData = false,
      jsonValuedParameters = Set("retentionCheckEnabled", "defaultRetentionMillis", "specifiedRetentionMillis"))

  /**
   * `VACUUM END`: `status` `COMPLETED` with metrics `numDeletedFiles`, `numVacuumedDirectories`, or
   * `FAILED` (deletion threw) without metrics, as delta-spark 4.4.
   */
  def vacuumEnd(deleted: Option[(Long, Long)]): Operation =
    Operation("VACUUM END", Map("status" -> (if (deleted.isDefined) "COMPLETED" else "FAILED")),
      metrics = deleted.map { case (files, dirs) =>
        Map("numDeletedFiles" -> files.toString, "numVacuumedDirectories" -> dirs.toString)
      }.getOrElse(Map.empty), changesData = false)

  /**
   * `CONVERT` as delta-spark 4.4 logs it: `numFiles` (a JSON number), `partitionedBy` (the partition
   * columns), `collectStats` (a JSON boolean: false for NO STATISTICS) and `sourceFormat` (`parquet`);
   * metric `numConvertedFiles`.
   */
  def convert(numFiles: Long, partitionedBy: Seq[String], collectStats: Boolean,
      sourceFormat: String = "parquet"): Operation =
    Operation("CONVERT", scala.collection.immutable.ListMap("numFiles" -> numFiles.toString,
      "partitionedBy" -> jsSeq(partitionedBy), "collectStats" -> collectStats.toString, "sourceFormat" -> sourceFormat),
      metrics = Map("numConvertedFiles" -> numFiles.toString),
      jsonValuedParameters = Set("numFiles", "collectStats"))

  /**
   * `OPTIMIZE` as delta-spark 4.4 logs it: `predicate` (the partition predicates' unresolved text),
   * `zOrderBy` (the columns as written; `[]` when clustering), `clusterBy` (the clustering columns of a
   * clustered table, `[]` otherwise), `auto` (a JSON boolean, false for a user's OPTIMIZE) and, only when
   * clustering, `isFull` (a JSON boolean: `OPTIMIZE … FULL`).
   */
  def optimize(predicates: Seq[String] = Nil, zOrderBy: Seq[String] = Nil, auto: Boolean = false,
      clusterBy: Seq[String] = Nil, isFull: Boolean = false): Operation =
    Operation("OPTIMIZE", Map("predicate" -> jsSeq(predicates),
      "zOrderBy" -> jsSeq(if (clusterBy.isEmpty) zOrderBy else Nil),
      "clusterBy" -> jsSeq(clusterBy), "auto" -> auto.toString) ++
      (if (clusterBy.nonEmpty) Map("isFull" -> isFull.toString) else Map.empty),
      changesData = false, jsonValuedParameters = Set("auto", "isFull"))
}
