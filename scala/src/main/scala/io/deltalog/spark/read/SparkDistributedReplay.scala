package io.deltalog.spark.read

import org.apache.hadoop.conf.Configuration
import org.apache.spark.{HashPartitioner, SparkEnv, TaskContext}
import org.apache.spark.io.LZ4CompressionCodec
import org.apache.spark.rdd.RDD
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
 * ([[ReplayRecords.newer]]), with no map-side combine; when the commits are few, only they are
 * shuffled and their keys broadcast to the checkpoint tasks (see [[replayWith]]). The winners come
 * back as compressed blocks per task and go straight into the state's columnar chunk
 * ([[ReplayAssembler]]): the driver holds the final state, never the checkpoint plus all commits.
 */
object SparkDistributedReplay extends DistributedReplay {

  /** Records per reduce partition (one partition is in the driver at a time). */
  private val RecordsPerPartition = 100000L

  private val jobs = new java.util.concurrent.atomic.AtomicLong()

  /** Loads replayed by a Spark job in this driver so far (a diagnostic counter). */
  def replays: Long = jobs.get()

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

  /** Above this many estimated commit actions, every record goes through the shuffle. */
  val MaxBroadcastCommitActions: Long = 1000000L
  /** A checkpoint file above this size is one task result too large for the driver: shuffle. */
  val MaxUnshuffledCheckpointFileBytes: Long = 256L << 20

  override def replay(segment: LogSegment, tablePath: String, fileKeys: FileKeys, conf: Configuration,
      expectedFiles: Long): SnapshotState =
    replayWith(segment, tablePath, fileKeys, conf, MaxBroadcastCommitActions, MaxUnshuffledCheckpointFileBytes,
      expectedFiles)

  /**
   * The replay, by one of two plans with the same result:
   *
   *  - commits first (the usual case: commits are few next to the checkpoint): the commit records
   *    are reconciled by a shuffle, their winners and keys come to the driver, the keys are
   *    broadcast and each checkpoint task drops the rows a commit superseded (commits are newer
   *    than the checkpoint), so the checkpoint is never shuffled;
   *  - everything shuffled, when the commits' keys are too many to broadcast
   *    (`maxBroadcastCommitActions` estimated actions) or a checkpoint file is too large to come
   *    back as one task result (`maxCheckpointFileBytes`).
   */
  private[deltalog] def replayWith(segment: LogSegment, tablePath: String, fileKeys: FileKeys, conf: Configuration,
      maxBroadcastCommitActions: Long, maxCheckpointFileBytes: Long, expectedFiles: Long = 0L): SnapshotState = {
    val spark = session.getOrElse(throw new IllegalStateException("distributed replay needs an active SparkSession"))
    val sc = spark.sparkContext
    jobs.incrementAndGet()
    val units = unitsOf(segment, conf)
    val (commits, checkpoint) = units.partition(_.kind == ReplayUnit.Commit)
    val commitActions = commits.map(_.length).sum / 250
    val estimated = LogReplay.estimatedActions(segment)
    val confBroadcast = sc.broadcast(new SerializableConfiguration(conf))
    val keys = fileKeys
    def records(us: Seq[ReplayUnit]): RDD[(String, Array[Byte])] =
      sc.parallelize(us, math.max(1, us.size)).mapPartitions { it =>
        val c = confBroadcast.value.value
        it.flatMap(u => new PushIterator[(String, Array[Byte])](emit => ReplayRecords.read(u, c, keys)((k, r) => emit((k, r)))))
      }
    def newest(rdd: RDD[(String, Array[Byte])], actions: Long): RDD[(String, Array[Byte])] =
      rdd.combineByKey[Array[Byte]](
        (r: Array[Byte]) => r,
        (a: Array[Byte], b: Array[Byte]) => ReplayRecords.newer(a, b),
        (a: Array[Byte], b: Array[Byte]) => ReplayRecords.newer(a, b),
        new HashPartitioner(math.max(1L, math.min(2000L, actions / RecordsPerPartition + 1)).toInt),
        mapSideCombine = false)
    // Sized up front like the local replay's state (the caller's count from `_last_checkpoint`,
    // else the estimate): an array grown by doubling at 2M rows would hold both copies at once.
    // A `_last_checkpoint` count far above what the checkpoint's size can hold is not trusted.
    val rows = if (expectedFiles > 0) math.min(expectedFiles, math.max(estimated * 4, 1L << 22)) else estimated
    val assembler = new ReplayAssembler(segment, tablePath, fileKeys, conf, math.min(rows, Int.MaxValue / 2L).toInt)
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(s"deltalog: log replay of $tablePath at version ${segment.version} (${units.size} log files)")
    try {
      val commitsFirst = checkpoint.nonEmpty && commitActions <= maxBroadcastCommitActions &&
        checkpoint.forall(_.length <= maxCheckpointFileBytes)
      if (commitsFirst) {
        val seen = new java.util.HashSet[String]()
        if (commits.nonEmpty) collectInto(sc, newest(records(commits), commitActions)) { (k, r) => seen.add(k); assembler.accept(r) }
        val seenBroadcast = sc.broadcast(seen)
        try {
          val rows = records(checkpoint).mapPartitions { it =>
            val superseded = seenBroadcast.value
            if (superseded.isEmpty) it else it.filter(kr => !superseded.contains(kr._1))
          }
          collectInto(sc, rows)((_, r) => assembler.accept(r))
        } finally seenBroadcast.destroy()
      } else {
        collectInto(sc, newest(records(units), estimated))((_, r) => assembler.accept(r))
      }
      assembler.result()
    } finally {
      sc.setJobDescription(previous)
      confBroadcast.destroy()
    }
  }

  /**
   * Runs `rdd` and hands every `(key, record)` to `consume` on the calling thread. All partitions
   * run at once; each task returns its records as one LZ4-compressed block, queued as it arrives
   * and decoded here while the other tasks still run, so the driver holds the blocks not yet
   * consumed, not the whole result.
   */
  private def collectInto(sc: org.apache.spark.SparkContext, rdd: RDD[(String, Array[Byte])])(
      consume: (String, Array[Byte]) => Unit): Unit = {
    val queue = new java.util.concurrent.LinkedBlockingQueue[Array[Byte]]()
    val job = sc.submitJob[(String, Array[Byte]), Array[Byte], Unit](rdd, (it: Iterator[(String, Array[Byte])]) => {
      val bytes = new java.io.ByteArrayOutputStream(1 << 16)
      val out = new java.io.DataOutputStream(new LZ4CompressionCodec(SparkEnv.get.conf).compressedOutputStream(bytes))
      it.foreach { case (k, r) =>
        val kb = k.getBytes(java.nio.charset.StandardCharsets.UTF_8)
        out.writeInt(kb.length); out.write(kb); out.writeInt(r.length); out.write(r)
      }
      out.writeInt(-1)
      out.close()
      bytes.toByteArray
    }, rdd.partitions.indices, (_: Int, block: Array[Byte]) => queue.put(block), ())
    val codec = new LZ4CompressionCodec(sc.getConf)
    var taken = 0
    try {
      val n = rdd.partitions.length
      while (taken < n) {
        val block = queue.poll(100, java.util.concurrent.TimeUnit.MILLISECONDS)
        if (block != null) {
          taken += 1
          val in = new java.io.DataInputStream(codec.compressedInputStream(new java.io.ByteArrayInputStream(block)))
          var len = in.readInt()
          while (len >= 0) {
            val kb = new Array[Byte](len); in.readFully(kb)
            val r = new Array[Byte](in.readInt()); in.readFully(r)
            consume(new String(kb, java.nio.charset.StandardCharsets.UTF_8), r)
            len = in.readInt()
          }
        } else if (job.isCompleted) {
          // a failed job: rethrow its error (a finished one delivered every block before completing)
          scala.concurrent.Await.result(job, scala.concurrent.duration.Duration.Inf)
          if (queue.isEmpty) throw new IllegalStateException(s"replay job ended with $taken of $n results")
        }
      }
    } catch {
      case e: Throwable => if (!job.isCompleted) job.cancel(); throw e
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
