package io.deltalog.spark

import java.nio.file.{Path => NioPath}

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.ConformanceCorpus
import io.deltalog.actions._
import io.deltalog.log._
import io.deltalog.spark.read.SparkDistributedReplay

/**
 * Log replay as a Spark job ([[SparkDistributedReplay]], local[2]) equals the in-driver replay
 * ([[LogReplay.load]]) exactly: version, live files (DV descriptors, stats, tags, row tracking),
 * tombstones, protocol, metadata, txns, domain metadata, in-commit timestamps and the newest
 * commitInfo, on generated logs (multi-part and V2 sidecar checkpoints followed by commits that
 * remove, re-add with and without DVs, change txns, domains, metadata and protocol) and on every
 * table of the conformance corpus.
 */
class DistributedReplaySuite {
  import LogTestSupport._

  private lazy val spark = SparkTestSession.spark

  private def local(table: String, segment: LogSegment): SnapshotState = {
    val fs = new Path(table).getFileSystem(conf)
    new LogReplay(fs, conf, table, new CommitReader(fs)).load(segment)
  }

  /** Both plans of the job: commits first (checkpoint not shuffled), and everything shuffled. */
  private val plans = Seq("commits first" -> Long.MaxValue, "all shuffled" -> -1L)

  private def distributed(table: String, segment: LogSegment, plan: Long): SnapshotState = {
    spark
    val fs = new Path(table).getFileSystem(conf)
    SparkDistributedReplay.replayWith(segment, table, FileKeys.forFileSystem(fs.getUri), conf, plan, plan)
  }

  private def assertSameAsLocal(table: String, segment: LogSegment, clue: String): Unit = {
    val expected = local(table, segment)
    plans.foreach { case (name, plan) => assertSameState(expected, distributed(table, segment, plan), s"$clue, $name") }
  }

  private def assertSameState(expected: SnapshotState, actual: SnapshotState, clue: String): Unit = {
    val keys = expected.fileKeys
    assertEquals(expected.version, actual.version, s"$clue: version")
    val e = expected.iterator.map(a => keys.key(a) -> a).toMap
    val a = actual.iterator.map(a => keys.key(a) -> a).toMap
    assertEquals(expected.numFiles, e.size.toLong, s"$clue: duplicate live files (local)")
    assertEquals(actual.numFiles, a.size.toLong, s"$clue: duplicate live files (distributed)")
    assertEquals(e, a, s"$clue: live files")
    assertEquals(expected.sizeInBytes, actual.sizeInBytes, s"$clue: sizeInBytes")
    val et = expected.tombstones.map(r => keys.key(r) -> r).toMap
    val at = actual.tombstones.map(r => keys.key(r) -> r).toMap
    assertEquals(actual.allTombstones.size, at.size, s"$clue: duplicate tombstones")
    assertEquals(et, at, s"$clue: tombstones")
    assertEquals(expected.protocol, actual.protocol, s"$clue: protocol")
    assertEquals(expected.metadata, actual.metadata, s"$clue: metadata")
    assertEquals(expected.setTransactions, actual.setTransactions, s"$clue: txns")
    assertEquals(expected.domainMetadata, actual.domainMetadata, s"$clue: domain metadata")
    assertEquals(expected.inCommitTimestamps, actual.inCommitTimestamps, s"$clue: in-commit timestamps")
    assertEquals(expected.snapshotCommitInfo, actual.snapshotCommitInfo, s"$clue: commitInfo")
  }

  /**
   * A log of `before` commits, a checkpoint of its last one (`v2`: V2 with sidecars of 7 actions,
   * else multi-part with parts of 5 actions), then `after` commits: random valid commits (see
   * [[LogTestSupport.randomCommits]]) plus, in the first ones, bulk adds of files that later
   * commits remove, re-add unchanged, or re-add with a deletion vector.
   */
  private def generated(seed: Int, before: Int, after: Int, v2: Boolean): (NioPath, LogSegment) = {
    val rnd = new Random(seed)
    val commits = randomCommits(rnd, before + after).zipWithIndex.map { case (c, v) =>
      val bulk: Seq[Action] =
        if (v >= 1 && v <= 3) (0 until 20).map(i => add(s"bulk-$v-$i.parquet", size = i + 1L,
          stats = Some(s"""{"numRecords":$i}""")).copy(tags = if (i % 7 == 0) Some(Map("t" -> s"$i")) else None,
          baseRowId = if (i % 5 == 0) Some(i * 100L) else None))
        else if (v >= before) (0 until 4).map(_ => rnd.nextInt(4) match {
          case 0 => remove(s"bulk-${1 + rnd.nextInt(3)}-${rnd.nextInt(20)}.parquet", 5000L + v)
          case 1 => add(s"bulk-${1 + rnd.nextInt(3)}-${rnd.nextInt(20)}.parquet", size = 1000L + v).copy(dataChange = false)
          case 2 => add(s"bulk-${1 + rnd.nextInt(3)}-${rnd.nextInt(20)}.parquet", size = 2000L + v, dvd = Some(dv(s"b$v")))
          case _ => SetTransaction(s"bulk-app", v.toLong, Some(v * 10L))
        })
        else Nil
      c ++ bulk
    }
    val table = newTable()
    commits.take(before).zipWithIndex.foreach { case (c, v) => writeCommit(table, v, c) }
    val log = DeltaLog.uncached(table.toString, conf)
    val snap = log.update()
    val opts = if (v2) CheckpointWriteOptions(v2 = true, sidecarSize = 7) else CheckpointWriteOptions(partSize = Some(5))
    val written = CheckpointWriter.write(conf, hadoopPath(logDir(table)), snap.version, Checkpoints.actions(snap), opts)
    if (v2) assertTrue(written.sidecarFiles.size > 1, "several sidecars") else assertTrue(written.files.size > 1, "multi-part")
    commits.drop(before).zipWithIndex.foreach { case (c, i) => writeCommit(table, before + i, c) }
    val seg = segment(table)
    assertEquals(Some(before - 1L), seg.checkpointVersion)
    assertEquals(after, seg.deltas.size)
    (table, seg)
  }

  @Test def multiPartCheckpointAndCommitsEqualTheLocalReplay(): Unit =
    (1 to 4).foreach { seed =>
      val (table, seg) = generated(seed, before = 12, after = 10, v2 = false)
      assertSameAsLocal(table.toString, seg, s"seed $seed (multi-part)")
    }

  @Test def v2CheckpointWithSidecarsAndCommitsEqualTheLocalReplay(): Unit =
    (5 to 7).foreach { seed =>
      val (table, seg) = generated(seed, before = 10, after = 8, v2 = true)
      assertSameAsLocal(table.toString, seg, s"seed $seed (V2 sidecars)")
    }

  @Test def commitsOnlyEqualTheLocalReplay(): Unit = {
    val table = newTable()
    randomCommits(new Random(42), 30).zipWithIndex.foreach { case (c, v) => writeCommit(table, v, c) }
    val seg = segment(table)
    assertSameAsLocal(table.toString, seg, "commits only")
  }

  /** Every corpus table: the same state, or the same error (class and message). */
  @Test def conformanceCorpusTablesEqualTheLocalReplay(): Unit = {
    var compared = 0
    ConformanceCorpus.manifest.foreach { entry =>
      val id = entry.get("id").asText()
      val table = ConformanceCorpus.resolve(entry.get("table_path").asText()).toString
      val fs = new Path(table).getFileSystem(conf)
      val seg = scala.util.Try(LogSegmentBuilder.build(fs, new Path(new Path(table), "_delta_log"), table, None, None))
      seg.foreach { s =>
        val expected = scala.util.Try(local(table, s))
        plans.foreach { case (name, plan) =>
          val actual = scala.util.Try(distributed(table, s, plan))
          (expected, actual) match {
            case (scala.util.Success(e), scala.util.Success(a)) => assertSameState(e, a, s"$id, $name"); compared += 1
            case (scala.util.Failure(e), scala.util.Failure(a)) =>
              assertEquals(e.getClass, rootCause(a).getClass, s"$id, $name: error class ($a)")
              assertEquals(e.getMessage, rootCause(a).getMessage, s"$id, $name: error message")
            case _ => fail(s"$id, $name: local replay gave $expected, distributed gave $actual")
          }
        }
      }
    }
    assertTrue(compared > 300, s"compared $compared corpus table replays (two plans each)")
  }

  /** An executor's exception reaches the driver wrapped in a SparkException (its cause kept). */
  private def rootCause(t: Throwable): Throwable = t match {
    case s: org.apache.spark.SparkException if s.getCause != null => rootCause(s.getCause)
    case other => other
  }

  /**
   * Registered with the session, the Spark job runs for a snapshot load above
   * `spark.deltalog.replay.distributedThreshold` (read from the table's Hadoop configuration) and
   * not below it.
   */
  @Test def thresholdRoutesSnapshotLoads(): Unit = {
    val (table, _) = generated(11, before = 8, after = 6, v2 = false)
    // Replay jobs by the job group of the load that started them (listener events arrive in order).
    val groups = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val listener = new SparkListener {
      override def onJobStart(e: SparkListenerJobStart): Unit = Option(e.properties).foreach { p =>
        if (Option(p.getProperty("spark.job.description")).exists(_.startsWith("deltalog: log replay"))) {
          groups.add(String.valueOf(p.getProperty("spark.jobGroup.id")))
        }
      }
    }
    val sc = spark.sparkContext
    sc.addSparkListener(listener)
    val saved = LogReplay.distributedReplay
    try {
      SparkDistributedReplay.register()
      assertEquals(Some(SparkDistributedReplay), LogReplay.distributedReplay)
      def load(threshold: String): SnapshotState = {
        val c = new Configuration(conf)
        c.set(LogReplay.DistributedThresholdKey, threshold)
        sc.setJobGroup(s"threshold-$threshold", "test load")
        try DeltaLog.uncached(table.toString, c).update().state finally sc.clearJobGroup()
      }
      val localState = load(Long.MaxValue.toString)
      val distState = load("0")
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (!groups.contains("threshold-0") && System.nanoTime() < deadline) Thread.sleep(20)
      assertTrue(groups.contains("threshold-0"), s"a replay job above the threshold: $groups")
      assertFalse(groups.contains(s"threshold-${Long.MaxValue}"), s"no replay job below the threshold: $groups")
      assertSameState(localState, distState, "threshold routing")
    } finally {
      LogReplay.distributedReplay = saved
      sc.removeSparkListener(listener)
    }
  }
}
