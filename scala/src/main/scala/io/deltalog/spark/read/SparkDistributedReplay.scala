package io.deltalog.spark.read

import org.apache.hadoop.conf.Configuration
import org.apache.spark.{HashPartitioner, TaskContext}
import org.apache.spark.sql.SparkSession
import org.apache.spark.util.SerializableConfiguration

import io.deltalog.log._

/**
 * Log replay as a Spark job, for logs above `spark.deltalog.replay.distributedThreshold`
 * estimated actions ([[LogReplay.estimatedActions]]).
 *
 * Every log file of the segment is one task: checkpoint parts, V2 sidecars (and their top-level
 * file) and JSON commits are read on the executors with the driver's parsers
 * ([[ReplayRecords.read]]), each action keyed by its logical file `(path, dvId)` (or by
 * protocol / metadata / txn app id / domain). A shuffle keeps the newest record per key
 * ([[ReplayRecords.newer]]), with no map-side combine (a checkpoint's keys are distinct). The
 * winners come back one reduce partition at a time (`toLocalIterator`) and go straight into the
 * state's columnar chunk ([[ReplayAssembler]]): the driver holds the final state only, never the
 * checkpoint plus all commits.
 */
object SparkDistributedReplay extends DistributedReplay {

  /** Records per reduce partition (one partition is in the driver at a time). */
  private val RecordsPerPartition = 100000L

  /** Installs this implementation (idempotent; called when deltalog meets a SparkSession). */
  def register(): Unit = if (LogReplay.distributedReplay.isEmpty) LogReplay.distributedReplay = Some(this)

  private def session: Option[SparkSession] =
    if (TaskContext.get() != null) None // inside a task: never start a job from an executor
    else SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).filterNot(_.sparkContext.isStopped)

  // Cheap on purpose (every snapshot load asks): a thread-local look-up and one conf entry.
  override def threshold(conf: Configuration): Long =
    if (TaskContext.get() != null || SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).isEmpty) {
      Long.MaxValue
    } else LogReplay.distributedThreshold(conf)

  override def replay(segment: LogSegment, tablePath: String, fileKeys: FileKeys, conf: Configuration): SnapshotState = {
    val spark = session.getOrElse(throw new IllegalStateException("distributed replay needs an active SparkSession"))
    val sc = spark.sparkContext
    val units = unitsOf(segment, conf)
    val estimated = LogReplay.estimatedActions(segment)
    val reducePartitions = math.max(1L, math.min(2000L, estimated / RecordsPerPartition + 1)).toInt
    val confBroadcast = sc.broadcast(new SerializableConfiguration(conf))
    val keys = fileKeys
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(s"deltalog: log replay of $tablePath at version ${segment.version} " +
      s"(${units.size} log files)")
    try {
      val records = sc.parallelize(units, math.max(1, units.size)).mapPartitions { it =>
        val c = confBroadcast.value.value
        it.flatMap(u => new PushIterator[(String, Array[Byte])](emit => ReplayRecords.read(u, c, keys)((k, r) => emit((k, r)))))
      }
      val winners = records.combineByKey[Array[Byte]](
        (r: Array[Byte]) => r,
        (a: Array[Byte], b: Array[Byte]) => ReplayRecords.newer(a, b),
        (a: Array[Byte], b: Array[Byte]) => ReplayRecords.newer(a, b),
        new HashPartitioner(reducePartitions),
        mapSideCombine = false)
      val assembler = new ReplayAssembler(segment, tablePath, fileKeys, conf,
        math.min(estimated, Int.MaxValue / 2L).toInt)
      winners.values.toLocalIterator.foreach(assembler.accept)
      assembler.result()
    } finally {
      sc.setJobDescription(previous)
      confBroadcast.destroy()
    }
  }

  /** The segment's files as tasks; the sidecars of a V2 checkpoint are listed from its top file. */
  private[read] def unitsOf(segment: LogSegment, conf: Configuration): Seq[ReplayUnit] = {
    val commits = segment.deltas.map(d =>
      ReplayUnit(ReplayUnit.Commit, d.getPath.toUri.toString, d.getLen, CommitReader.versionOf(d)))
    val checkpoint = segment.checkpoint.toSeq.flatMap { cp =>
      val files = cp.files.map(f => ReplayUnit(ReplayUnit.CheckpointFile, f.getPath.toUri.toString, f.getLen, cp.version))
      val sidecars = if (cp.isMultiPart) Nil else {
        val found = Vector.newBuilder[io.deltalog.actions.SidecarFile]
        CheckpointReader.read(conf, cp, new ReplaySink {
          override def accept(version: Long, action: io.deltalog.actions.Action): Unit = action match {
            case s: io.deltalog.actions.SidecarFile => found += s
            case _ =>
          }
        }, CheckpointReadOptions(onlySidecars = true))
        val logPath = cp.files.head.getPath.getParent
        found.result().map { s =>
          val p = CheckpointReader.sidecarPath(logPath, s.path)
          ReplayUnit(ReplayUnit.Sidecar, p.toUri.toString, s.sizeInBytes, cp.version)
        }
      }
      files ++ sidecars
    }
    // Big files first, so that the longest tasks start first.
    (checkpoint ++ commits).sortBy(u => -u.length)
  }
}
