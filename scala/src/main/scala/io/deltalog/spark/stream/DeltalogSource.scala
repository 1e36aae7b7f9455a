package io.deltalog.spark.stream

import java.time.ZoneId

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.connector.read.streaming.{CompositeReadLimit, ReadAllAvailable, ReadLimit, ReadMaxBytes,
  ReadMaxFiles, SupportsAdmissionControl, SupportsTriggerAvailableNow, Offset => OffsetV2}
import org.apache.spark.sql.execution.streaming.{Offset, Source}
import org.apache.spark.sql.types.StructType
import org.slf4j.LoggerFactory

import io.deltalog.actions.AddFile
import io.deltalog.exceptions.{StreamingSourceException, VersionNotFoundException}
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.spark.read.{InvalidReadOptionException, TimeTravel}
import io.deltalog.spark.stream.DeltalogSourceOffset.BaseIndex

/**
 * The micro-batch streaming source of a deltalog table (`readStream.format("deltalog")`,
 * `readStream.table(name)`), a Spark V1 `Source` with admission control, as delta-spark's
 * `DeltaSource`.
 *
 * Files are delivered in commit order: first, unless a `startingVersion` / `startingTimestamp`
 * is given, the files of the table's snapshot when the stream started (sorted by modification
 * time, then path), then the `add`s (`dataChange=true`) of every later commit, in the order of
 * the commit's actions. Offsets ([[DeltalogSourceOffset]]) name the last file delivered, so a
 * restarted query neither skips nor repeats a file. A micro-batch takes at most
 * `maxFilesPerTrigger` files (default 1000) and about `maxBytesPerTrigger` bytes (the file that
 * crosses the limit is taken; a batch always takes at least one file); a batch never goes past
 * the end of the initial snapshot, so the first batch of a query can be re-planned after a
 * restart from its end offset alone.
 *
 * Planning reads only the commit files after the last offset, one by one ([[SourceCommits]]);
 * the table's state is read once, for the initial snapshot. `Trigger.AvailableNow` reads up to
 * the version that was the latest when the query started, in batches of the same size.
 */
final class DeltalogSource(
    spark: SparkSession,
    deltaLog: DeltaLog,
    hadoopConf: Configuration,
    options: SourceOptions,
    initSnapshot: Snapshot) extends Source with SupportsAdmissionControl with SupportsTriggerAvailableNow {

  import DeltalogSource._

  private val table = deltaLog.tablePath.toString
  private val tableId = initSnapshot.metadata.id
  private val frames = new SourceBatchFrames(spark, deltaLog, initSnapshot)
  private val schemaChecks = new SourceSchemaChecks(table, initSnapshot.metadata, initSnapshot.version,
    options.hasStartingOption)
  private[stream] val commits = new SourceCommits(deltaLog, table, options, schemaChecks.check)

  override val schema: StructType = if (options.readChangeFeed) frames.changeFeedSchema else frames.schema

  /** Where a query without a checkpoint starts. */
  private lazy val initialPosition: DeltalogSourceOffset = {
    val latest = initSnapshot.version
    val startVersion: Option[Long] = options.startingVersion.map { v =>
      if (v.equalsIgnoreCase("latest")) latest + 1
      else {
        val n = v.toLong
        if (n > latest) throw new VersionNotFoundException(table, n, 0L, latest)
        if (commits.get(n).isEmpty) {
          throw new VersionNotFoundException(table, n, deltaLog.commitTimestamps().earliestVersion, latest)
        }
        n
      }
    }.orElse(options.startingTimestamp.map { t =>
      val zone = ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
      val ts = TimeTravel.parseTimestamp(t, table, zone)
      val timestamps = deltaLog.commitTimestamps()
      timestamps.versions.find(v => timestamps.timestampOf(v) >= ts).getOrElse(
        throw new StreamingSourceException("DELTA_TIMESTAMP_GREATER_THAN_COMMIT",
          s"Timestamp $t (startingTimestamp) is after the latest version ${timestamps.latestVersion} of table $table " +
            s"(committed at ${new java.sql.Timestamp(timestamps.latestTimestamp)}). Use a timestamp at or before " +
            s"${new java.sql.Timestamp(timestamps.latestTimestamp)}, or startingVersion=latest."))
    })
    startVersion match {
      case Some(v) => DeltalogSourceOffset(tableId, v, BaseIndex, isInitialSnapshot = false)
      case None => DeltalogSourceOffset(tableId, latest, BaseIndex, isInitialSnapshot = true)
    }
  }

  /** Last version `Trigger.AvailableNow` reads (set when such a query starts). */
  @volatile private var availableNowEnd: Option[Long] = None

  /** The files of the initial snapshot (one version), in delivery order. */
  @volatile private var snapshotFiles: (Long, IndexedSeq[AddFile]) = _

  private def initialSnapshotFiles(version: Long): IndexedSeq[AddFile] = {
    val cached = snapshotFiles
    if (cached != null && cached._1 == version) return cached._2
    val snapshot = if (version == initSnapshot.version) initSnapshot else {
      val s = try deltaLog.snapshotAt(version) catch {
        case e: io.deltalog.exceptions.DeltalogException => throw new StreamingSourceException(
          "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE", s"The stream's initial snapshot (version $version of " +
            s"table $table) can no longer be read (${e.getMessage}). Please delete its checkpoint to restart from scratch.")
      }
      schemaChecks.check(version, s.metadata)
      s
    }
    val files = snapshot.allFiles.toArray.sortWith { (a, b) =>
      a.modificationTime < b.modificationTime || (a.modificationTime == b.modificationTime && a.path < b.path)
    }.toIndexedSeq
    snapshotFiles = (version, files)
    files
  }

  override def getDefaultReadLimit: ReadLimit = {
    val files = ReadLimit.maxFiles(options.maxFilesPerTrigger.getOrElse(DefaultMaxFiles))
    options.maxBytesPerTrigger match {
      case None => files
      case Some(b) if options.maxFilesPerTrigger.isEmpty => ReadLimit.maxBytes(b)
      case Some(b) => ReadLimit.compositeLimit(Array(files, ReadLimit.maxBytes(b)))
    }
  }

  override def prepareForTriggerAvailableNow(): Unit = {
    availableNowEnd = Some(deltaLog.update().version)
  }

  override def getOffset: Option[Offset] =
    throw new UnsupportedOperationException("latestOffset(Offset, ReadLimit) should be called instead of this method")

  override def latestOffset(startOffset: OffsetV2, limit: ReadLimit): OffsetV2 = {
    val from = if (startOffset == null) initialPosition else DeltalogSourceOffset(tableId, table, startOffset)
    val end = nextOffset(from, Limits(limit))
    if (end == from) startOffset else end
  }

  /** The offset after the files admitted by `limits` from `from`. */
  private def nextOffset(from: DeltalogSourceOffset, limits: Limits): DeltalogSourceOffset = {
    if (from.isInitialSnapshot) {
      val files = initialSnapshotFiles(from.reservoirVersion)
      var i = math.max(from.index + 1, 0L).toInt
      while (i < files.length && limits.admit(files(i).size)) i += 1
      if (i >= files.length) DeltalogSourceOffset(tableId, from.reservoirVersion + 1, BaseIndex, isInitialSnapshot = false)
      else if (i - 1 > from.index) from.copy(index = i - 1)
      else from
    } else {
      var version = from.reservoirVersion
      var index = from.index
      var done = false
      while (!done && availableNowEnd.forall(version <= _) && !limits.exhausted) {
        commits.get(version) match {
          case None =>
            done = true
            checkNotCleanedUp(version)
          case Some(c) if options.readChangeFeed =>
            if (limits.admitCommit(c.changeFiles, c.changeBytes)) { version += 1; index = BaseIndex }
            else done = true
          case Some(c) =>
            val rest = c.adds.iterator.filter(_.index > index)
            var last = index
            var stopped = false
            while (!stopped && rest.hasNext) {
              val f = rest.next()
              if (limits.admit(f.add.size)) last = f.index else stopped = true
            }
            if (stopped) { index = last; done = true }
            else { version += 1; index = BaseIndex }
        }
      }
      DeltalogSourceOffset(tableId, version, index, isInitialSnapshot = false)
    }
  }

  /** Fails when the commit file of `version` is missing although the table is newer (log cleanup). */
  private def checkNotCleanedUp(version: Long): Unit = {
    val latest = deltaLog.update().version
    if (latest >= version && commits.get(version).isEmpty) throw commits.missing(version)
  }

  override def getBatch(start: Option[Offset], end: Offset): DataFrame = {
    val to = DeltalogSourceOffset(tableId, table, end)
    val from = start.map(DeltalogSourceOffset(tableId, table, _)).getOrElse(firstBatchStart(to))
    log.info(s"getBatch for table $table from $from to $to")
    if (options.readChangeFeed) changeFeedBatch(from, to)
    else frames.files(filesBetween(from, to).filter(a => options.delivers(a.path)))
  }

  /**
   * Where the first batch of a query starts, from its end offset (after a restart the initial
   * position cannot be computed again: the table moved on). A first batch inside or at the end of
   * the initial snapshot started at that snapshot.
   */
  private def firstBatchStart(end: DeltalogSourceOffset): DeltalogSourceOffset =
    if (end.isInitialSnapshot) DeltalogSourceOffset(tableId, end.reservoirVersion, BaseIndex, isInitialSnapshot = true)
    else if (options.hasStartingOption) initialPosition
    else DeltalogSourceOffset(tableId, end.reservoirVersion - 1, BaseIndex, isInitialSnapshot = true)

  /** The files after `from` up to and including `to`. */
  private def filesBetween(from: DeltalogSourceOffset, to: DeltalogSourceOffset): Seq[AddFile] = {
    val out = Vector.newBuilder[AddFile]
    val commitsFrom =
      if (from.isInitialSnapshot) {
        val files = initialSnapshotFiles(from.reservoirVersion)
        val until = if (to.isInitialSnapshot) math.min(to.index + 1, files.length.toLong).toInt else files.length
        var i = math.max(from.index + 1, 0L).toInt
        while (i < until) { out += files(i); i += 1 }
        DeltalogSourceOffset(tableId, from.reservoirVersion + 1, BaseIndex, isInitialSnapshot = false)
      } else from
    if (!to.isInitialSnapshot) {
      var v = commitsFrom.reservoirVersion
      while (v < to.reservoirVersion || (v == to.reservoirVersion && to.index != BaseIndex)) {
        commits.require(v).adds.foreach { f =>
          if (!commitsFrom.covers(v, f.index) && to.covers(v, f.index)) out += f.add
        }
        v += 1
      }
    }
    out.result()
  }

  private def changeFeedBatch(from: DeltalogSourceOffset, to: DeltalogSourceOffset): DataFrame = {
    if (from.isInitialSnapshot) {
      val version = from.reservoirVersion
      val ts = deltaLog.commitTimestamps().timestampOf(version)
      frames.snapshotInserts(filesBetween(from, to), version, ts)
    } else {
      val first = from.reservoirVersion
      val last = to.reservoirVersion - 1 // change-feed offsets always end on a commit boundary
      if (last < first) frames.snapshotInserts(Nil, first, 0L)
      else {
        (first to last).foreach(commits.require(_)) // checks the commits' metadata
        frames.changes(first, last, hadoopConf)
      }
    }
  }

  override def commit(end: Offset): Unit = {
    val o = DeltalogSourceOffset(tableId, table, end)
    if (!o.isInitialSnapshot) { snapshotFiles = null; commits.forgetBefore(o.reservoirVersion) }
  }

  override def stop(): Unit = ()

  override def toString: String = s"DeltalogSource[$table]"
}

object DeltalogSource {
  private val log = LoggerFactory.getLogger(classOf[DeltalogSource])

  val DefaultMaxFiles: Int = SourceOptions.DefaultMaxFilesPerTrigger

  /** What is left to admit in one micro-batch. */
  final class Limits(private var files: Long, private var bytes: Long) {
    def exhausted: Boolean = files <= 0 || bytes <= 0

    /** Takes one file of `size` bytes when room is left (the first file of a batch always fits). */
    def admit(size: Long): Boolean =
      if (exhausted) false else { files -= 1; bytes -= size; true }

    /** Takes a whole commit of `n` files and `size` bytes when room is left. */
    def admitCommit(n: Int, size: Long): Boolean =
      if (exhausted) false else { files -= n; bytes -= size; true }
  }

  object Limits {
    def apply(limit: ReadLimit): Limits = {
      val l = new Limits(Long.MaxValue, Long.MaxValue)
      def add(r: ReadLimit): Unit = r match {
        case f: ReadMaxFiles => l.files = math.min(l.files, f.maxFiles().toLong)
        case b: ReadMaxBytes => l.bytes = math.min(l.bytes, b.maxBytes())
        case c: CompositeReadLimit => c.getReadLimits.foreach(add)
        case _: ReadAllAvailable => ()
        case null => ()
        case other => throw new InvalidReadOptionException(null, s"unknown read limit $other for a deltalog stream")
      }
      add(limit)
      l
    }
  }
}
