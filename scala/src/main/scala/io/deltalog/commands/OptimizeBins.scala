package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.SparkSession

import io.deltalog.actions.AddFile
import io.deltalog.txn.RowTracking

/**
 * How OPTIMIZE picks and groups files, as delta-spark 4.4:
 *
 *  - a file is a candidate when it is smaller than [[Settings.minFileSize]] or when its deletion
 *    vector deletes more than [[Settings.maxDeletedRowsRatio]] of its rows (a file with a DV but
 *    without `numRecords` always is);
 *  - compaction: per partition, the candidates sorted by size are packed greedily into bins of at
 *    most [[Settings.maxFileSize]] bytes; each bin becomes one file, and a bin of one file is left as
 *    it is (also when it has a deletion vector);
 *  - Z-order: every candidate of a partition is one bin (also a single file), written as
 *    `max(1, bytes / maxFileSize)` files.
 */
private[commands] object OptimizeBins {
  val MaxFileSizeConf = "spark.databricks.delta.optimize.maxFileSize"
  val MinFileSizeConf = "spark.databricks.delta.optimize.minFileSize"
  val MaxDeletedRowsRatioConf = "spark.databricks.delta.optimize.maxDeletedRowsRatio"
  val TargetFileSizeKey = "delta.targetFileSize"
  val DefaultFileSize: Long = 1024L * 1024 * 1024

  /**
   * @param maxFileSize the table's `delta.targetFileSize` when set, else the session's
   *                    `spark.databricks.delta.optimize.maxFileSize` (default 1 GiB)
   */
  final case class Settings(maxFileSize: Long, minFileSize: Long, maxDeletedRowsRatio: Double)

  private val ByteSize = """(?i)\s*([0-9]+)\s*(b|k|kb|m|mb|g|gb|t|tb)?\s*""".r

  /** A size in bytes written as a number with an optional unit (`134217728`, `128mb`). */
  def parseBytes(key: String, v: String, table: String): Long = v match {
    case ByteSize(n, unit) if n.toLongOption.exists(_ > 0) =>
      val shift = Option(unit).map(_.toLowerCase(Locale.ROOT).take(1)) match {
        case Some("k") => 10; case Some("m") => 20; case Some("g") => 30; case Some("t") => 40; case _ => 0
      }
      n.toLong << shift
    case _ => throw new InvalidWriteException("DELTA_INVALID_OPTIMIZE_FILE_SIZE", table,
      s"Table $table: $key = '$v' is not a positive size in bytes (e.g. '134217728' or '128mb'); OPTIMIZE changed " +
        s"nothing. Set $key to a positive size.")
  }

  def settings(spark: SparkSession, tableConf: Map[String, String], table: String): Settings = {
    def conf(key: String): Option[String] = spark.conf.getOption(key).filter(_.trim.nonEmpty)
    val max = tableConf.get(TargetFileSizeKey).map(parseBytes(TargetFileSizeKey, _, table))
      .orElse(conf(MaxFileSizeConf).map(parseBytes(MaxFileSizeConf, _, table))).getOrElse(DefaultFileSize)
    val min = conf(MinFileSizeConf).map(parseBytes(MinFileSizeConf, _, table)).getOrElse(DefaultFileSize)
    val ratio = conf(MaxDeletedRowsRatioConf).map { v =>
      v.trim.toDoubleOption.filter(r => r >= 0 && r <= 1).getOrElse(throw new InvalidWriteException(
        "DELTA_INVALID_OPTIMIZE_DELETED_ROWS_RATIO", table, s"Table $table: $MaxDeletedRowsRatioConf = '$v' is not a " +
          s"ratio between 0 and 1; OPTIMIZE changed nothing. Set $MaxDeletedRowsRatioConf to e.g. 0.05."))
    }.getOrElse(0.05)
    Settings(max, min, ratio)
  }

  /** Whether `f` is worth rewriting (see the object doc). */
  def isCandidate(f: AddFile, s: Settings): Boolean = f.size < s.minFileSize || (f.deletionVector match {
    case None => false
    case Some(dv) => RowTracking.numRecords(f) match {
      case None => true
      case Some(n) => n > 0 && dv.cardinality.toDouble / n > s.maxDeletedRowsRatio
    }
  })

  /** The bins of `candidates` (see the object doc), partitions in first-seen order. */
  def bins(candidates: Seq[AddFile], s: Settings, zOrder: Boolean): Seq[Seq[AddFile]] = {
    val byPartition = scala.collection.mutable.LinkedHashMap.empty[Map[String, String], Vector[AddFile]]
    candidates.foreach(f => byPartition(f.partitionValues) = byPartition.getOrElse(f.partitionValues, Vector.empty) :+ f)
    byPartition.toSeq.flatMap { case (_, files) =>
      if (zOrder) Seq(files)
      else {
        val out = Vector.newBuilder[Seq[AddFile]]
        var current = Vector.empty[AddFile]
        var size = 0L
        files.sortBy(_.size).foreach { f =>
          if (current.nonEmpty && size + f.size > s.maxFileSize) { out += current; current = Vector.empty; size = 0L }
          current :+= f
          size += f.size
        }
        if (current.nonEmpty) out += current
        out.result().filter(_.size > 1)
      }
    }
  }
}
