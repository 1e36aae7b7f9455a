package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions.{Attribute, Literal}
import org.apache.spark.sql.types.DataType

/**
 * The distinct values a MERGE source gives one side of an equality `target.k = source.k` of the
 * merge condition, sorted: a target file whose statistics bound `k` to `[min, max]` with no source
 * value in between holds no row the condition can match, so MERGE neither reads nor rewrites it.
 * This is the per-file form of pruning "by the source keys' range": a source whose keys are spread
 * (new keys beside updated ones) still skips every file none of its keys falls into.
 *
 * A NULL key matches nothing (`=`), so NULL source values are left out. A file without bounds for
 * `k` is kept, unless its `nullCount` equals its `numRecords` (no row can match). For a partition
 * column the file's partition value must be one of the source values.
 *
 * @param column        the target column, logical name
 * @param dataType      its type (one [[StatsProof.comparable]] accepts)
 * @param sorted        the source's distinct non-NULL values, as [[StatsProof.ordered]] gives them, ascending
 * @param partition     the column is a partition column
 */
private[commands] final class SourceKeys(column: String, dataType: DataType, sorted: IndexedSeq[Any],
    partition: Boolean, sessionTimeZone: String) {
  private val col = column.toLowerCase(Locale.ROOT)

  /** True when the file's statistics (or partition value) prove that no source value can equal its `k`. */
  def excludes(f: FileFacts): Boolean = if (partition) excludesPartition(f) else {
    if (f.allNull(col)) return true
    (f.min(col).flatMap(StatsProof.ordered(_, dataType)), f.max(col).flatMap(StatsProof.ordered(_, dataType))) match {
      case (Some(lo), Some(hi)) =>
        val i = firstAtLeast(lo)
        i == sorted.length || StatsProof.compareValues(sorted(i), hi) > 0
      case _ => false
    }
  }

  private def excludesPartition(f: FileFacts): Boolean =
    (try f.partitionValue(col, dataType, sessionTimeZone) catch { case NonFatal(_) => return false }) match {
      case None => false // no value recorded
      case Some(null) => true // NULL equals no key
      case Some(value) => StatsProof.ordered(value, dataType) match {
        case Some(v) =>
          val i = firstAtLeast(v)
          i == sorted.length || StatsProof.compareValues(sorted(i), v) != 0
        case None => false
      }
    }

  /** The index of the first value >= `v` (`sorted.length` when none). */
  private def firstAtLeast(v: Any): Int = {
    var (lo, hi) = (0, sorted.length)
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (StatsProof.compareValues(sorted(mid), v) < 0) lo = mid + 1 else hi = mid
    }
    lo
  }

  def size: Int = sorted.length
}

private[commands] object SourceKeys {
  /**
   * At most this many source rows are collected to the driver for per-file key pruning (their key
   * columns only); a larger source prunes by its keys' overall range instead. 0 turns it off.
   */
  val LimitKey = "spark.deltalog.merge.sourceKeysLimit"
  val DefaultLimit = 1000000

  /**
   * The sorted distinct non-NULL values of each `(target, source)` attribute pair from `rows` (the
   * collected source key columns, in the pairs' order); pairs whose values cannot be ordered are left out.
   */
  def of(pairs: Seq[(Attribute, Attribute)], rows: Seq[org.apache.spark.sql.Row],
      partitionColumns: Set[String], sessionTimeZone: String): Seq[SourceKeys] =
    pairs.zipWithIndex.flatMap { case ((target, _), i) =>
      val values = rows.iterator.map(_.get(i)).filter(_ != null)
        .map(v => StatsProof.ordered(Literal.create(v, target.dataType).value, target.dataType))
      val ordered = values.toVector
      if (ordered.exists(_.isEmpty)) None
      else {
        val sorted = ordered.flatten.sortWith((a, b) => StatsProof.compareValues(a, b) < 0)
        val distinct = Vector.newBuilder[Any]
        sorted.indices.foreach { j => if (j == 0 || StatsProof.compareValues(sorted(j - 1), sorted(j)) != 0) distinct += sorted(j) }
        Some(new SourceKeys(target.name, target.dataType, distinct.result(),
          partitionColumns.contains(target.name.toLowerCase(Locale.ROOT)), sessionTimeZone))
      }
    }
}
