package io.deltalog.spark.read

import java.time.ZoneId

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileStatus
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession, SQLContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.execution.datasources.{FileStatusWithMetadata, HadoopFsRelation, PartitionDirectory}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.sources.{BaseRelation, TableScan}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.deltalog.actions.{AddCDCFile, AddFile, DeletionVectorDescriptor, Metadata, RemoveFile}
import io.deltalog.exceptions.VersionNotFoundException
import io.deltalog.log.{CommitReader, DeltaLog, FileNames, LogSegmentBuilder}
import io.deltalog.schema.{ColumnMapping, DeltaSchema, PartitionValues}

/**
 * Change data feed reads (`readChangeFeed=true`, digest §6.4) over versions
 * `startingVersion`/`startingTimestamp` … `endingVersion`/`endingTimestamp` (default: latest).
 *
 * Per commit: when it has `cdc` actions only its change files are read (their `_change_type`
 * column included); otherwise `add`s with `dataChange=true` are inserts and `remove`s deletes.
 * A file that is removed and re-added with a different deletion vector in one commit (a DELETE
 * by DV) contributes the rows newly marked in the DV as deletes (and rows no longer marked as
 * inserts). Rows carry `_change_type`, `_commit_version` and `_commit_timestamp` (ICT or the
 * commit file's monotonized mtime). The schema is that of the ending version. Every commit of the
 * range must have `delta.enableChangeDataFeed=true`.
 */
object ChangeFeedReader {
  val StartingVersion = "startingVersion"
  val EndingVersion = "endingVersion"
  val StartingTimestamp = "startingTimestamp"
  val EndingTimestamp = "endingTimestamp"
  val ChangeType = "_change_type"
  val CommitVersion = "_commit_version"
  val CommitTimestamp = "_commit_timestamp"
  val EnableKey = "delta.enableChangeDataFeed"

  /** One file of the feed: where it comes from and which rows it contributes. */
  private final case class ChangeFile(
      path: String, size: Long, partitionValues: Map[String, String], version: Long, timestampMs: Long,
      changeType: String, deleted: Option[DeletionVectorDescriptor], only: Option[DeletionVectorDescriptor])

  def createRelation(spark: SparkSession, path: String, options: Map[String, String], conf: Configuration): BaseRelation = {
    val zone = ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
    val deltaLog = DeltaLog.forTable(path, conf)
    val latest = deltaLog.update()
    val table = deltaLog.tablePath.toString
    val timestamps = deltaLog.commitTimestamps()
    def version(key: String): Option[Long] = options.get(key).map(v => v.trim.toLongOption.filter(_ >= 0)
      .getOrElse(throw new InvalidReadOptionException(table, s"$key=$v is not a version number")))
    def timestamp(key: String): Option[Long] = options.get(key).map(t => TimeTravel.parseTimestamp(t, table, zone))

    val start = (version(StartingVersion), timestamp(StartingTimestamp)) match {
      case (Some(_), Some(_)) => throw new InvalidReadOptionException(table,
        s"both $StartingVersion and $StartingTimestamp are set; give only one")
      case (Some(v), None) => v
      case (None, Some(ts)) =>
        timestamps.versions.find(v => timestamps.timestampOf(v) >= ts).getOrElse(
          throw new InvalidReadOptionException(table, s"$StartingTimestamp=${options(StartingTimestamp)} is after " +
            s"the latest commit (version ${timestamps.latestVersion})"))
      case (None, None) => throw new InvalidReadOptionException(table,
        s"readChangeFeed needs $StartingVersion or $StartingTimestamp")
    }
    val end = (version(EndingVersion), timestamp(EndingTimestamp)) match {
      case (Some(_), Some(_)) => throw new InvalidReadOptionException(table,
        s"both $EndingVersion and $EndingTimestamp are set; give only one")
      case (Some(v), None) => math.min(v, latest.version)
      case (None, Some(ts)) => timestamps.versionAtOrBefore(ts, allowAfterLatest = true)
      case (None, None) => latest.version
    }
    if (start > end) throw new InvalidReadOptionException(table,
      s"the change data feed range starts at version $start, after its end $end")
    if (start < timestamps.earliestVersion || start > latest.version) {
      throw new VersionNotFoundException(table, start, timestamps.earliestVersion, latest.version)
    }

    val endSnapshot = deltaLog.snapshotAt(end) // checks the reader protocol of the end version
    val metadata = endSnapshot.metadata
    val fullSchema = DeltaSchema.tableSchema(metadata, table)
    val partitionSchema = DeltaSchema.partitionSchema(fullSchema, metadata.partitionColumns, table)
    val dataSchema = StructType(DeltaSchema.dataSchema(fullSchema, metadata.partitionColumns).filterNot(_.dataType == NullType))
    TypeWidening.checkReadable(fullSchema, table)
    val mode = ColumnMapping.mode(metadata, endSnapshot.protocol, table)
    val partitionKeys = partitionSchema.fields.map(f => ColumnMapping.partitionValueKey(fullSchema, f.name, mode))

    val files = changeFiles(deltaLog, table, start, end, v => timestamps.timestampOf(v))
    val tableUri = deltaLog.tablePath.toUri
    val changeTypeField = StructField(ChangeType, StringType, nullable = true,
      new MetadataBuilder().putString(ColumnMapping.PhysicalNameKey, ChangeType).build())
    val format = new DeltalogParquetFileFormat(mode, files.exists(f => f.deleted.isDefined || f.only.isDefined), table,
      StructType(fullSchema.fields :+ changeTypeField), TypeWidening.fallbackColumns(fullSchema))

    def directories(fs: Seq[ChangeFile], withChangeType: Boolean): Seq[PartitionDirectory] =
      fs.groupBy(f => (f.partitionValues, f.version, f.changeType)).toSeq.sortBy(_._1._2).map { case ((pv, v, ct), group) =>
        val parts = PartitionValues.parseRow(pv, partitionSchema, partitionKeys, zone)
        val extra = (if (withChangeType) Seq(UTF8String.fromString(ct)) else Nil) ++
          Seq(v, group.head.timestampMs * 1000L)
        val values: InternalRow = new GenericInternalRow((parts.toSeq(partitionSchema) ++ extra).toArray)
        PartitionDirectory(values, group.map { f =>
          val status = new FileStatus(f.size, false, 0, 1, 0L, DeltalogFileIndex.resolvePath(tableUri, f.path))
          FileStatusWithMetadata(status,
            f.deleted.map(DeltalogFileIndex.dvMetadata(_, DeltalogFileIndex.DeletedRows)).getOrElse(Map.empty) ++
              f.only.map(DeltalogFileIndex.dvMetadata(_, DeltalogFileIndex.OnlyRows)).getOrElse(Map.empty))
        })
      }

    val commitCols = Seq(StructField(CommitVersion, LongType), StructField(CommitTimestamp, TimestampType))
    val (cdcFiles, derived) = files.partition(_.changeType == null)
    def frame(fs: Seq[ChangeFile], cdc: Boolean): DataFrame = {
      val parts = ColumnMapping.dropInternalMetadata(
        StructType(partitionSchema.fields ++ (if (cdc) Nil else Seq(changeTypeField)) ++ commitCols))
      val data = ColumnMapping.dropInternalMetadata(if (cdc) StructType(dataSchema.fields :+ changeTypeField) else dataSchema)
      val index = new ChangeFeedFileIndex(deltaLog.tablePath, parts, directories(fs, withChangeType = !cdc))
      spark.baseRelationToDataFrame(HadoopFsRelation(index, parts, data, None, format, Map.empty)(spark))
    }
    val outputColumns = fullSchema.fields.filterNot(_.dataType == NullType).map(_.name) ++
      Seq(ChangeType, CommitVersion, CommitTimestamp)
    val select = outputColumns.map(c => col("`" + c.replace("`", "``") + "`"))
    val df = frame(derived, cdc = false).select(select: _*)
      .unionAll(frame(cdcFiles, cdc = true).select(select: _*))
    new ChangeFeedRelation(spark.sqlContext, df)
  }

  /** The files of versions `start` to `end` and the rows each contributes. */
  private def changeFiles(deltaLog: DeltaLog, table: String, start: Long, end: Long,
      timestampOf: Long => Long): Seq[ChangeFile] = {
    val reader = new CommitReader(deltaLog.fs)
    var config = deltaLog.readProtocolAndMetadata(Some(start))._2.configuration
    val commits = LogSegmentBuilder.listCommits(deltaLog.fs, deltaLog.logPath, start)
      .filter(s => FileNames.deltaVersion(s) <= end).sortBy(s => FileNames.deltaVersion(s))
    val expected = start to end
    val found = commits.map(s => FileNames.deltaVersion(s))
    if (found != expected) {
      throw new io.deltalog.exceptions.VersionNotContiguousException(table, expected.filterNot(found.toSet))
    }
    val out = ArrayBuffer[ChangeFile]()
    commits.foreach { status =>
      val commit = reader.read(status)
      val v = commit.version
      val ts = timestampOf(v)
      commit.actions.collect { case m: Metadata => m }.lastOption.foreach(m => config = m.configuration)
      if (!config.get(EnableKey).exists(_.trim.equalsIgnoreCase("true"))) {
        throw new InvalidReadOptionException(table, s"the change data feed is not enabled at version $v " +
          s"($EnableKey is not true); read a range of versions where it was enabled")
      }
      val cdcs = commit.actions.collect { case c: AddCDCFile => c }
      if (cdcs.nonEmpty) {
        cdcs.foreach(c => out += ChangeFile(c.path, c.size, c.partitionValues, v, ts, null, None, None))
      } else {
        val adds = commit.actions.collect { case a: AddFile if a.dataChange => a }
        val removes = commit.actions.collect { case r: RemoveFile if r.dataChange => r }
        val removedByPath = removes.groupBy(_.path)
        val addedPaths = adds.map(_.path).toSet
        adds.foreach { a =>
          removedByPath.get(a.path).flatMap(_.headOption) match {
            case None =>
              out += ChangeFile(a.path, a.size, a.partitionValues, v, ts, "insert", a.deletionVector, None)
            case Some(r) if r.deletionVector != a.deletionVector =>
              // the same data file with a new DV: rows newly marked are deleted, unmarked ones re-inserted
              a.deletionVector.foreach(dv => out += ChangeFile(a.path, a.size, a.partitionValues, v, ts, "delete",
                r.deletionVector, Some(dv)))
              r.deletionVector.foreach(dv => out += ChangeFile(a.path, a.size, a.partitionValues, v, ts, "insert",
                a.deletionVector, Some(dv)))
            case Some(_) => () // re-added unchanged: no row changed
          }
        }
        lazy val previous = deltaLog.snapshotAt(v - 1).allFiles.map(a => a.path -> a).toMap
        removes.filterNot(r => addedPaths.contains(r.path)).foreach { r =>
          // removes without extended file metadata: size and partition values of the removed add
          val size = r.size.orElse(previous.get(r.path).map(_.size)).getOrElse(
            deltaLog.fs.getFileStatus(DeltalogFileIndex.resolvePath(deltaLog.tablePath.toUri, r.path)).getLen)
          val partitionValues = r.partitionValues.orElse(previous.get(r.path).map(_.partitionValues)).getOrElse(Map.empty)
          out += ChangeFile(r.path, size, partitionValues, v, ts, "delete", r.deletionVector, None)
        }
      }
    }
    out.toSeq
  }
}

/** The change feed as a relation: rows of an internal plan (no conversion). */
final class ChangeFeedRelation(override val sqlContext: SQLContext, df: DataFrame) extends BaseRelation with TableScan {
  override def schema: StructType = df.schema
  override def needConversion: Boolean = false
  override def buildScan(): RDD[Row] = df.queryExecution.toRdd.asInstanceOf[RDD[Row]]
}
