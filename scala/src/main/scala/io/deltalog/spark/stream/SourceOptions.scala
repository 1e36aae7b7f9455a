package io.deltalog.spark.stream

import java.util.Locale
import java.util.regex.PatternSyntaxException

import scala.util.matching.Regex

import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap

import io.deltalog.exceptions.StreamingSourceException
import io.deltalog.spark.read.InvalidReadOptionException

/**
 * The options of a streaming read (delta-spark's names): where to start (`startingVersion` —
 * a version or `latest` — or `startingTimestamp`; default: the current snapshot, then new
 * commits), how much per micro-batch (`maxFilesPerTrigger`, default 1000; `maxBytesPerTrigger`),
 * what to do with commits that change or delete data (`skipChangeCommits`, and the deprecated
 * `ignoreDeletes` / `ignoreChanges`), `readChangeFeed` and `excludeRegex` (files whose `add.path`
 * contains a match are not delivered; they still count against the rate limits, as in delta-spark).
 */
final case class SourceOptions(
    startingVersion: Option[String],
    startingTimestamp: Option[String],
    maxFilesPerTrigger: Option[Int],
    maxBytesPerTrigger: Option[Long],
    skipChangeCommits: Boolean,
    ignoreDeletes: Boolean,
    ignoreChanges: Boolean,
    readChangeFeed: Boolean,
    excludeRegex: Option[Regex] = None) {

  def hasStartingOption: Boolean = startingVersion.isDefined || startingTimestamp.isDefined

  /** Commits with data-changing removes and adds are allowed (skipped or their adds delivered). */
  def allowsChanges: Boolean = ignoreChanges || skipChangeCommits

  /** Commits that only remove data are allowed (nothing is delivered for them). */
  def allowsDeletes: Boolean = allowsChanges || ignoreDeletes

  /** False for a file `excludeRegex` excludes. */
  def delivers(addPath: String): Boolean = excludeRegex.forall(_.findFirstIn(addPath).isEmpty)
}

object SourceOptions {
  val StartingVersion = "startingVersion"
  val StartingTimestamp = "startingTimestamp"
  val MaxFilesPerTrigger = "maxFilesPerTrigger"
  val MaxBytesPerTrigger = "maxBytesPerTrigger"
  val SkipChangeCommits = "skipChangeCommits"
  val IgnoreDeletes = "ignoreDeletes"
  val IgnoreChanges = "ignoreChanges"
  val ReadChangeFeed = "readChangeFeed"
  val ExcludeRegex = "excludeRegex"

  val DefaultMaxFilesPerTrigger = 1000

  def apply(parameters: Map[String, String], table: String): SourceOptions = {
    val o = CaseInsensitiveMap(parameters)
    def bool(key: String): Boolean = o.get(key).map(_.trim.toLowerCase(Locale.ROOT)) match {
      case None => false
      case Some("true") => true
      case Some("false") => false
      case Some(v) => throw new InvalidReadOptionException(table, s"$key=$v must be true or false")
    }
    val maxFiles = o.get(MaxFilesPerTrigger).map { v =>
      v.trim.toIntOption.filter(_ > 0).getOrElse(throw new InvalidReadOptionException(table,
        s"$MaxFilesPerTrigger=$v must be a positive integer"))
    }
    val maxBytes = o.get(MaxBytesPerTrigger).map { v =>
      val n = try JavaUtils.byteStringAsBytes(v.trim) catch {
        case _: NumberFormatException => -1L
      }
      if (n <= 0) throw new InvalidReadOptionException(table,
        s"$MaxBytesPerTrigger=$v must be a positive size (bytes, or with a unit: 10m, 1g)")
      n
    }
    val startingVersion = o.get(StartingVersion).map(_.trim)
    startingVersion.foreach { v =>
      if (!v.equalsIgnoreCase("latest") && !v.toLongOption.exists(_ >= 0)) {
        throw new InvalidReadOptionException(table, s"$StartingVersion=$v must be a version number or 'latest'")
      }
    }
    val startingTimestamp = o.get(StartingTimestamp)
    if (startingVersion.isDefined && startingTimestamp.isDefined) {
      throw new InvalidReadOptionException(table,
        s"Please either provide '$StartingVersion' or '$StartingTimestamp' (both are set)")
    }
    val excludeRegex = o.get(ExcludeRegex).map { v =>
      try v.r catch {
        case e: PatternSyntaxException => throw new StreamingSourceException("DELTA_REGEX_OPT_SYNTAX_ERROR",
          s"Please recheck your syntax for '$ExcludeRegex' (table $table): '$v' is not a valid regular expression " +
            s"(${e.getDescription}).")
      }
    }
    if (excludeRegex.isDefined && bool(ReadChangeFeed)) {
      throw new InvalidReadOptionException(table, s"$ExcludeRegex is not supported together with $ReadChangeFeed " +
        s"by deltalog's streaming source; drop one of the two options")
    }
    SourceOptions(startingVersion, startingTimestamp, maxFiles, maxBytes, bool(SkipChangeCommits),
      bool(IgnoreDeletes), bool(IgnoreChanges), bool(ReadChangeFeed), excludeRegex)
  }
}
