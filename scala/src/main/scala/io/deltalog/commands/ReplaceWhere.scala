package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.functions.{array, coalesce, explode, expr, lit, not, when}
import org.apache.spark.sql.types.{StringType, StructType}

import io.deltalog.actions.{AddFile, Metadata}
import io.deltalog.expressions.PredicateParser
import io.deltalog.txn.OptimisticTransaction

/**
 * `overwrite` with `replaceWhere`: the rows of the table matching the predicate are replaced by
 * the data (which must match it too, see [[WriteRules]]).
 *
 *  - A predicate on partition columns only (that deltalog's predicate parser understands) removes
 *    the files of the matching partitions; nothing is read.
 *  - Otherwise the candidate files (pruned by the partition part of the predicate when possible)
 *    are scanned for matching rows; each file holding one is removed and its rows not matching
 *    the predicate are written again with the new data, in the same job (a file's deletion vector
 *    applied: its deleted rows stay deleted). Files without a matching row stay. With the change data feed on, the replaced rows are recorded as `delete` and the
 *    new rows as `insert` change data (copied rows are not changes).
 */
private[commands] final class ReplaceWhere(
    spark: ClassicSession,
    txn: OptimisticTransaction,
    schema: StructType,
    meta: Metadata,
    predicate: String,
    table: String) {

  private val partitionCols = meta.partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet

  private val referenced: Seq[String] = {
    val e = try spark.sessionState.sqlParser.parseExpression(predicate)
    catch {
      case NonFatal(err) => throw new InvalidWriteException("DELTA_INVALID_REPLACE_WHERE", table,
        s"Table $table: replaceWhere predicate '$predicate' cannot be parsed: ${err.getMessage}")
    }
    e.collect { case a: UnresolvedAttribute => a.nameParts.head }.distinct
  }
  referenced.filterNot(r => schema.fields.exists(_.name.equalsIgnoreCase(r))).headOption.foreach { c =>
    throw new InvalidWriteException("DELTA_INVALID_REPLACE_WHERE", table,
      s"Table $table: replaceWhere predicate '$predicate' refers to column $c, which the table does not have " +
        s"(columns: ${schema.fieldNames.mkString(", ")}).")
  }

  private val parsed = try Some(PredicateParser.parse(predicate)) catch { case NonFatal(_) => None }

  /** True when rows must be read: the predicate touches data columns (or is beyond the partition parser). */
  val isDataPredicate: Boolean =
    parsed.isEmpty || referenced.exists(r => !partitionCols.contains(r.toLowerCase(Locale.ROOT)))

  /** Files whose rows may match (recorded as read by the transaction). */
  lazy val candidates: Seq[AddFile] = parsed match {
    case Some(p) => txn.filterFiles(Seq(p))
    case None => txn.filterFiles()
  }

  /**
   * The rows to write for a data predicate: `newRows` plus the rows of the touched files (those
   * holding a matching row, found by a scan of the candidates) that do not match; with change
   * data, also the replaced rows (`delete`) and the new rows again (`insert`), marked by a flag
   * column that routes them to `_change_data/`. Untouched candidates stay as they are.
   *
   * @return the DataFrame, the name of its change-data flag column (when any), the touched files
   */
  def combine(newRows: DataFrame, withChangeData: Boolean): (DataFrame, Option[String], Seq[AddFile]) = {
    val matches: Column = coalesce(expr(predicate), lit(false))
    val touchedKeys = readRows(candidates, withFile = true).filter(matches).select(FileColumn).distinct()
      .collect().map(_.getString(0)).toSet
    val touched = candidates.filter(f => touchedKeys.contains(fileKey(f)))
    // Rows copied into a new file would get new row ids: the protocol keeps a row's id across rewrites
    // (materialized in the file), which this writer does not write yet.
    if (touched.nonEmpty && io.deltalog.txn.RowTracking.assignsIds(txn.protocol, txn.metadata)) {
      throw new InvalidWriteException("DELTA_REPLACE_WHERE_ROW_TRACKING", table,
        s"Table $table: replaceWhere on data columns would rewrite ${touched.size} file(s) (e.g. ${touched.head.path}) " +
          "and copy their other rows, which would change those rows' row ids (row tracking is on); this writer does " +
          "not preserve row ids in rewritten files yet. Use a predicate on partition columns only.")
    }
    val existing = readRows(touched, withFile = false)
    val kept = existing.filter(not(matches))
    if (!withChangeData) return (newRows.unionByName(kept), None, touched)
    val flag = DataFileWriter.CdcFlag
    val ct = ReplaceWhere.ChangeTypeColumnName
    val inserted = newRows.withColumn(flag, explode(array(lit(false), lit(true))))
      .withColumn(ct, when(org.apache.spark.sql.functions.col(flag), lit("insert")).otherwise(lit(null).cast(StringType)))
    val copied = kept.withColumn(flag, lit(false)).withColumn(ct, lit(null).cast(StringType))
    val deleted = existing.filter(matches).withColumn(flag, lit(true)).withColumn(ct, lit("delete"))
    (inserted.unionByName(copied).unionByName(deleted), Some(flag), touched)
  }

  private val FileColumn = TouchedFiles.FileColumn

  private lazy val reader = new TouchedFiles(spark, txn, schema, meta.partitionColumns, meta.configuration, None)

  private def fileKey(f: AddFile): String = reader.fileKey(f)

  /**
   * The rows of `files` with the table's logical columns (partition values from the log), each
   * file's deletion vector applied ([[TouchedFiles]]).
   */
  private def readRows(files: Seq[AddFile], withFile: Boolean): DataFrame = {
    val rows = reader.read(files).drop(TouchedFiles.RowIndexColumn)
    if (withFile) rows else rows.drop(FileColumn)
  }
}

private[commands] object ReplaceWhere {
  val ChangeTypeColumnName = "_change_type"
}
