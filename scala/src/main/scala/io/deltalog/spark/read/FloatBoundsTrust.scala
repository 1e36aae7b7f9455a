package io.deltalog.spark.read

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, GetStructField}
import org.apache.spark.sql.execution.datasources.{FileStatusWithMetadata, PartitionedFile}
import org.apache.spark.sql.types.{DataType, DoubleType, FloatType}

import io.deltalog.exceptions.InvalidTablePropertyException
import io.deltalog.log.{NanBlindFiles, Snapshot}

/**
 * Whether a scan may rely on the float/double upper bounds of a table's files (README, "Reading
 * right where the peers do not"). A NaN-blind max ([[io.deltalog.log.NanAwareWriters]]) would let
 * data skipping and Parquet's row-group filter drop NaN rows for `x > c`, `x >= c`, `x = NaN`,
 * `x <> c`; such files are kept by skipping ([[DataSkipping.compileNanSafe]]) and read without
 * float/double filters pushed into Parquet ([[NanSafeFilters]]).
 *
 * Table property [[Property]] (else session conf [[SessionConf]]): `auto` (default: the writer of
 * the commit that added each file decides, [[io.deltalog.log.StatsProvenance]]), `true` (every
 * file's bounds are trusted: no commit is read, as delta-spark does) or `false` (none is).
 */
sealed trait FloatBoundsTrust {
  def nanBlindFiles(snapshot: Snapshot): NanBlindFiles
}

object FloatBoundsTrust {
  val Property = "deltalog.skipping.trustFloatMaxStats"
  val SessionConf = "spark.deltalog.skipping.trustFloatMaxStats"

  /** Constant file metadata of a file read without float/double filters pushed into Parquet. */
  val MetadataKey = "deltalog_nan_blind_stats"

  case object Trusted extends FloatBoundsTrust {
    def nanBlindFiles(snapshot: Snapshot): NanBlindFiles = NanBlindFiles.None
  }
  case object Untrusted extends FloatBoundsTrust {
    def nanBlindFiles(snapshot: Snapshot): NanBlindFiles = NanBlindFiles.All
  }
  case object ByWriter extends FloatBoundsTrust {
    def nanBlindFiles(snapshot: Snapshot): NanBlindFiles =
      snapshot.deltaLog.statsProvenance.nanBlindFiles(snapshot)
  }

  /** The table's setting, else the session's, else `auto`. */
  def of(spark: SparkSession, snapshot: Snapshot): FloatBoundsTrust = {
    val (value, where) = snapshot.metadata.configuration.get(Property) match {
      case Some(v) => (v, s"table property $Property of ${snapshot.deltaLog.tablePath}")
      case None => (spark.conf.getOption(SessionConf).getOrElse("auto"), s"Spark configuration $SessionConf")
    }
    value.trim.toLowerCase(Locale.ROOT) match {
      case "auto" => ByWriter
      case "true" => Trusted
      case "false" => Untrusted
      case other => throw new InvalidTablePropertyException("DELTA_INVALID_TABLE_PROPERTY_VALUE",
        s"invalid value '$other' for $where; it accepts 'auto', 'true' or 'false'.")
    }
  }

  private def floating(t: DataType): Boolean = t == FloatType || t == DoubleType

  /** True when a filter reads a float/double column (top-level or nested), i.e. may be pushed on one. */
  def referencesFloating(filters: Seq[Expression]): Boolean = filters.exists(_.exists {
    case a: org.apache.spark.sql.catalyst.expressions.AttributeReference => floating(a.dataType)
    case g: GetStructField => floating(g.dataType)
    case _ => false
  })

  def flagged(status: FileStatusWithMetadata): FileStatusWithMetadata =
    status.copy(metadata = status.metadata + (MetadataKey -> true))

  def isFlagged(file: PartitionedFile): Boolean = file.otherConstantMetadataColumnValues.contains(MetadataKey)
}
