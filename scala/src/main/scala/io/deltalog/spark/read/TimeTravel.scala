package io.deltalog.spark.read

import java.time.{LocalDateTime, ZoneId, ZoneOffset}
import java.time.format.DateTimeFormatter

import scala.util.Try

import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.unsafe.types.UTF8String

/** A time-travel request: exactly one of a version or a timestamp (ms since the epoch). */
final case class TimeTravelSpec(version: Option[Long], timestampMs: Option[Long], source: String)

/**
 * Time travel from read options (`versionAsOf`, `timestampAsOf`) and from the path forms
 * `<path>@v<version>` and `<path>@<yyyyMMddHHmmssSSS>` (UTC), as delta-spark accepts them.
 */
object TimeTravel {
  val VersionAsOf = "versionAsOf"
  val TimestampAsOf = "timestampAsOf"

  private val VersionSuffix = """^(.+)@[vV](\d+)$""".r
  private val TimestampSuffix = """^(.+)@(\d{17})$""".r
  private val PathTimestamp = DateTimeFormatter.ofPattern("yyyyMMddHHmmssSSS")

  /** False when `path` has no `@` and neither option is set: no time travel (cheap test). */
  def requested(path: String, options: Map[String, String]): Boolean =
    path.indexOf('@') >= 0 || options.contains(VersionAsOf) || options.contains(TimestampAsOf)

  /**
   * The table path without any `@` suffix and the requested time travel, if any.
   *
   * @param options read options (looked up case-insensitively by the caller's map)
   * @param zone    zone of zone-less `timestampAsOf` strings (the session time zone)
   * @throws InvalidReadOptionException for two specifications at once or an unparsable value
   */
  def resolve(path: String, options: Map[String, String], zone: ZoneId): (String, Option[TimeTravelSpec]) = {
    val (tablePath, fromPath) = path match {
      case VersionSuffix(p, v) =>
        (p, Some(TimeTravelSpec(Some(parseVersion(v, p, s"path suffix @v$v")), None, s"@v$v")))
      case TimestampSuffix(p, ts) =>
        val ms = Try(LocalDateTime.parse(ts, PathTimestamp).toInstant(ZoneOffset.UTC).toEpochMilli).getOrElse(
          throw new InvalidReadOptionException(p, s"path suffix @$ts is not a timestamp yyyyMMddHHmmssSSS"))
        (p, Some(TimeTravelSpec(None, Some(ms), s"@$ts")))
      case p => (p, None)
    }
    val version = options.get(VersionAsOf).map(v => parseVersion(v, tablePath, s"$VersionAsOf=$v"))
    val timestamp = options.get(TimestampAsOf).map(t => parseTimestamp(t, tablePath, zone))
    val fromOptions = (version, timestamp) match {
      case (Some(_), Some(_)) =>
        throw new InvalidReadOptionException(tablePath,
          s"both $VersionAsOf and $TimestampAsOf are set; give only one of them")
      case (Some(v), None) => Some(TimeTravelSpec(Some(v), None, VersionAsOf))
      case (None, Some(t)) => Some(TimeTravelSpec(None, Some(t), TimestampAsOf))
      case _ => None
    }
    (fromPath, fromOptions) match {
      case (Some(a), Some(b)) =>
        throw new InvalidReadOptionException(tablePath,
          s"time travel is given twice (${a.source} in the path and the ${b.source} option); give only one")
      case (a, b) => (tablePath, a.orElse(b))
    }
  }

  private def parseVersion(v: String, table: String, what: String): Long =
    v.trim.toLongOption.filter(_ >= 0).getOrElse(
      throw new InvalidReadOptionException(table, s"$what is not a version number (a non-negative integer)"))

  /** `timestampAsOf`: a date, a timestamp or an ISO-8601 string (zone-less ones in `zone`). */
  def parseTimestamp(t: String, table: String, zone: ZoneId): Long =
    DateTimeUtils.stringToTimestamp(UTF8String.fromString(t.trim), zone)
      .map(us => Math.floorDiv(us.asInstanceOf[Long], 1000L))
      .getOrElse(throw new InvalidReadOptionException(table,
        s"$TimestampAsOf=$t is not a timestamp (use e.g. 2024-01-31, 2024-01-31 12:00:00 or 2024-01-31T12:00:00Z)"))
}
