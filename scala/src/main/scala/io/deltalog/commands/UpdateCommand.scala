package io.deltalog.commands

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.functions.{lit, when}
import org.slf4j.LoggerFactory

import io.deltalog.log.DeltaLog
import io.deltalog.txn.Operation

/** The outcome of an UPDATE: rows updated and the committed version (-1: nothing committed). */
final case class UpdateResult(numUpdatedRows: Long, version: Long)

/**
 * `UPDATE t SET col = value, … [WHERE condition]`: one transaction that gives the rows matching
 * `condition` (all rows without one; rows where it is NULL are kept as they are) their new values.
 *
 * Files whose partition values or statistics prove no row matches are not read ([[StatsProof]]);
 * the others are scanned once to find the files holding matching rows, which are then rewritten
 * (copy-on-write) or get deletion vectors with the updated rows written to new files
 * ([[RowLevelRewrite]]). Values are resolved against the table's columns; generated columns follow
 * their inputs, identity columns cannot be assigned.
 *
 * @param assignments (target column path, value) pairs; the value an unresolved Column over the table's columns
 */
final class UpdateCommand(
    spark: ClassicSession,
    path: String,
    assignments: Seq[(Seq[String], Column)],
    condition: Option[Column],
    tableName: Option[String] = None,
    hadoopOptions: Map[String, String] = Map.empty) {
  import RowChanges._

  def run(): UpdateResult = {
    val started = System.nanoTime()
    val DmlSupport.Opened(hadoopConf, deltaLog, table, txn) = DmlSupport.open(spark, path, tableName, hadoopOptions, "UPDATE")
    val rw = new RowLevelRewrite(spark, txn, hadoopConf, table, "UPDATE")
    val resolved = condition.map(c => DmlSupport.resolveCondition(spark, c, rw.schema, table, "UPDATE"))
    val cond = resolved.filterNot(DmlSupport.alwaysTrue)
    val newValues = new Assignments(spark, rw.schema, table, "UPDATE")
      .updated(assignments, name => WriteSchema.column(name))

    val candidates = cond match {
      case None => txn.filterFiles()
      case Some(e) => txn.filterFiles(ReadPredicates.of(e, rw.partitionCols))
    }
    val proof = cond.map(e => new StatsProof(e, rw.partitionCols, rw.physicalNames,
      spark.sessionState.conf.sessionLocalTimeZone))
    val toScan = candidates.filterNot(f => proof.exists(_.prove(f)._2))
    val matches: Column = DmlSupport.rowCondition(cond)
    def changes(rows: DataFrame): DataFrame =
      rows.withColumn(ActionColumn, when(matches, lit(Update)).otherwise(lit(Keep)))
        .withColumn(NewValuesColumn, newValues)

    val scanStart = System.nanoTime()
    // with deletion vectors pass 1 keeps the updated rows for pass 2 (no second scan)
    val outcome = try {
      val touched = rw.findTouched(toScan, changes, keepChanged = true)
      val scanTimeMs = (System.nanoTime() - scanStart) / 1000000L
      val predicate = resolved.map(DmlSupport.predicateText).toSeq
      rw.commit(touched, changes, withInserts = false, identityColumns = Nil,
        scanTimeMs = scanTimeMs,
        op = o => Operation.update(predicate).withMetrics(UpdateCommand.metrics(o, rw.dvMode, started)),
        beforeCommit = () => DeleteCommand.runBeforeCommitHook(path))
    } finally rw.release()
    outcome match {
      case None =>
        UpdateCommand.log.info(s"Table $table: UPDATE matched no rows; nothing committed.")
        UpdateResult(0L, -1L)
      case Some(o) => UpdateResult(o.numUpdated, o.version)
    }
  }
}

object UpdateCommand {
  private val log = LoggerFactory.getLogger(classOf[UpdateCommand])

  /** `commitInfo.operationMetrics` of an UPDATE under delta-spark 4.4's names. */
  private[commands] def metrics(o: RowLevelRewrite#Outcome, dvMode: Boolean, started: Long): Map[String, String] = Map(
    "numRemovedFiles" -> o.removedFiles.size,
    "numAddedFiles" -> o.addedFiles.size,
    "numUpdatedRows" -> o.numUpdated,
    "numCopiedRows" -> o.numCopied,
    "numAddedChangeFiles" -> o.numChangeFiles,
    "numRemovedBytes" -> o.removedFiles.map(_.size).sum,
    "numAddedBytes" -> o.addedFiles.map(_.size).sum,
    "numDeletionVectorsAdded" -> o.dvAdded,
    "numDeletionVectorsRemoved" -> o.dvRemoved,
    "numDeletionVectorsUpdated" -> o.dvUpdated,
    "executionTimeMs" -> (System.nanoTime() - started) / 1000000L,
    "scanTimeMs" -> o.scanTimeMs,
    "rewriteTimeMs" -> o.rewriteTimeMs).map { case (k, v) => k -> v.toString }
}
