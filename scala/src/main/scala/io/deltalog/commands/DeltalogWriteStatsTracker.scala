package io.deltalog.commands

import scala.collection.mutable

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{WriteJobStatsTracker, WriteTaskStats, WriteTaskStatsTracker}
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.util.SerializableConfiguration

import io.deltalog.schema.PartitionValues

/**
 * A data file written by a task: absolute path, serialized partition values (physical column
 * names, protocol serialization, null for null), size, modification time, stats JSON, rows, and
 * min/max of the tracked identity columns (by physical name).
 */
final case class WrittenFile(
    path: String,
    partitionValues: Map[String, String],
    size: Long,
    modificationTime: Long,
    stats: String,
    numRecords: Long,
    identityBounds: Map[String, (Long, Long)])

final case class DeltalogTaskStats(files: Seq[WrittenFile]) extends WriteTaskStats

/**
 * Gathers, while the executors write, everything an `add` needs: per-file statistics
 * ([[FileStatsCollector]]), the partition values of each file (from Spark's partition row, so they
 * are typed values serialised by `PartitionValues.format`, not parsed back from directory
 * names), and size / modification time once the file is closed.
 *
 * @param partitionSchema  physical partition columns, in order
 * @param identityOrdinals physical name → ordinal in the data row of identity columns whose
 *                         written values must be known (for the high-water mark)
 */
final class DeltalogWriteStatsTracker(
    hadoopConf: SerializableConfiguration,
    statsSpec: StatsSpec,
    partitionSchema: StructType,
    identityOrdinals: Map[String, Int]) extends WriteJobStatsTracker {

  @transient private lazy val collected = mutable.ArrayBuffer.empty[WrittenFile]

  /** The files of every successful task (driver side, after the job). */
  def files: Seq[WrittenFile] = collected.toSeq

  override def newTaskInstance(): WriteTaskStatsTracker =
    new DeltalogTaskStatsTracker(hadoopConf, statsSpec, partitionSchema, identityOrdinals)

  override def processStats(stats: Seq[WriteTaskStats], jobCommitTime: Long): Unit = collected.synchronized {
    stats.foreach {
      case DeltalogTaskStats(fs) => collected ++= fs
      case _ =>
    }
  }
}

private final class DeltalogTaskStatsTracker(
    hadoopConf: SerializableConfiguration,
    statsSpec: StatsSpec,
    partitionSchema: StructType,
    identityOrdinals: Map[String, Int]) extends WriteTaskStatsTracker {

  private final class Open(val partitionValues: Map[String, String]) {
    val stats = new FileStatsCollector(statsSpec)
    val idMin: Array[Long] = Array.fill(identityOrdinals.size)(Long.MaxValue)
    val idMax: Array[Long] = Array.fill(identityOrdinals.size)(Long.MinValue)
  }

  private val partitionTypes: Array[DataType] = partitionSchema.fields.map(_.dataType)
  private val idOrdinals: Array[Int] = identityOrdinals.values.toArray
  private val idNames: Array[String] = identityOrdinals.keys.toArray
  private var currentPartition: Map[String, String] = Map.empty
  private val open = mutable.HashMap.empty[String, Open]
  private var lastPath: String = _
  private var last: Open = _
  private val done = mutable.ArrayBuffer.empty[WrittenFile]

  override def newPartition(partitionValues: InternalRow): Unit = {
    val m = Map.newBuilder[String, String]
    var i = 0
    while (i < partitionTypes.length) {
      val v = if (partitionValues.isNullAt(i)) null else partitionValues.get(i, partitionTypes(i))
      m += partitionSchema.fields(i).name -> { val f = PartitionValues.format(v, partitionTypes(i)); if (f != null && f.isEmpty) null else f }
      i += 1
    }
    currentPartition = m.result()
  }

  override def newFile(filePath: String): Unit = {
    val o = new Open(currentPartition)
    open(filePath) = o
    lastPath = filePath
    last = o
  }

  override def newRow(filePath: String, row: InternalRow): Unit = {
    val o = if (filePath eq lastPath) last else {
      val x = open(filePath); lastPath = filePath; last = x; x
    }
    o.stats.update(row)
    var i = 0
    while (i < idOrdinals.length) {
      if (!row.isNullAt(idOrdinals(i))) {
        val v = row.getLong(idOrdinals(i))
        if (v < o.idMin(i)) o.idMin(i) = v
        if (v > o.idMax(i)) o.idMax(i) = v
      }
      i += 1
    }
  }

  override def closeFile(filePath: String): Unit = open.remove(filePath).foreach { o =>
    if (lastPath == filePath) { lastPath = null; last = null }
    val p = new Path(filePath)
    val status = p.getFileSystem(hadoopConf.value).getFileStatus(p)
    val ids = idNames.indices.collect {
      case i if o.idMin(i) <= o.idMax(i) => idNames(i) -> (o.idMin(i), o.idMax(i))
    }.toMap
    done += WrittenFile(filePath, o.partitionValues, status.getLen, status.getModificationTime, o.stats.toJson,
      o.stats.numRecords, ids)
  }

  override def getFinalStats(taskCommitTime: Long): WriteTaskStats = {
    open.keys.toSeq.foreach(closeFile)
    DeltalogTaskStats(done.toSeq)
  }
}
