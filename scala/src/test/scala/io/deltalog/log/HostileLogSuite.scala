package io.deltalog.log

import java.nio.file.{Files, Path => NioPath}

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.{ConformanceCorpus, TestDirs}
import io.deltalog.exceptions.DeltalogException

/**
 * Hostile input (issue: "corrupt, truncated or missing log files ... each either reads correctly
 * or raises a typed error naming the file; never an uncaught NullPointerException"): the logs of
 * corpus tables of every checkpoint kind (delta-rs' uncompressed one, Spark's snappy one,
 * multi-part, V2 with Parquet sidecars, V2 as JSON) are copied and one of their files is damaged
 * at random — cut short, emptied, deleted, or some bytes overwritten — then the snapshot is
 * loaded in full (protocol, metadata, schema, every live file, tombstones, transactions). The
 * load must either succeed or fail with a [[DeltalogException]] that names the table's directory;
 * anything else (a NullPointerException, an index out of bounds from a decoder, a Parquet
 * decoding exception, an out-of-memory from a damaged length) is a failure listed with the table,
 * the file, the damage and the seed. A damaged value that still parses may load a different
 * table: the log has no checksums to tell, so only the kind of outcome is checked — except for a
 * damaged commit older than the snapshot's checkpoint, which replay never reads: the load must
 * then give exactly the undamaged table's result.
 */
class HostileLogSuite {
  import LogTestSupport._

  private val Tables = Seq(
    "delta-rs/simple_table_with_checkpoint", // delta-rs: uncompressed checkpoint, read from its map
    "delta/basic-with-checkpoint", // Spark: snappy checkpoint, commits after it
    "delta-kernel-rs/multi-part-checkpoint",
    "delta-kernel-rs/v2-checkpoint-parquet", // V2 checkpoint with Parquet sidecars
    "delta-kernel-rs/v2-classic-checkpoint-json",
    "delta-kernel-rs/dv-partitioned-with-checkpoint", // deletion vectors, partition values
    "delta-kernel-rs/parsed-stats", // stats_parsed
    "delta-kernel-rs/app-txn-checkpoint", // set transactions
    "delta/kernel-pagination-multi-part-checkpoints",
    "delta-kernel-rs/v2-parquet-sidecars-struct-stats-only",
    "delta-rs/checkpoint_with_partitions",
    "delta/delta-0.1.0", // the oldest writer
    "delta-kernel-rs/with_checkpoint_no_last_checkpoint")


  private def copyLog(from: NioPath, to: NioPath): Unit =
    TestDirs.copyTree(from.resolve("_delta_log"), to.resolve("_delta_log"), keepAttributes = true)

  private def logFiles(table: NioPath): Vector[NioPath] = {
    val s = Files.walk(table.resolve("_delta_log"))
    try s.iterator().asScala.filter(Files.isRegularFile(_)).toVector.sortBy(_.toString) finally s.close()
  }

  /** Damages `file` in one of four ways; returns what was done. */
  private def damage(file: NioPath, rnd: Random): String = {
    val bytes = Files.readAllBytes(file)
    rnd.nextInt(4) match {
      case 0 =>
        val n = if (bytes.isEmpty) 0 else rnd.nextInt(bytes.length)
        Files.write(file, java.util.Arrays.copyOf(bytes, n))
        s"cut to $n of ${bytes.length} bytes"
      case 1 =>
        Files.delete(file)
        "deleted"
      case 2 if bytes.nonEmpty =>
        // a few single bytes: flipped bits in a length, a level, a quote or a digit
        val at = (0 until 1 + rnd.nextInt(4)).map(_ => rnd.nextInt(bytes.length)).sorted
        at.foreach(i => bytes(i) = rnd.nextInt(256).toByte)
        Files.write(file, bytes)
        s"bytes at ${at.mkString(",")} overwritten"
      case 3 if bytes.nonEmpty =>
        val from = rnd.nextInt(bytes.length)
        val n = math.min(bytes.length - from, 1 + rnd.nextInt(64))
        val junk = new Array[Byte](n)
        rnd.nextBytes(junk)
        System.arraycopy(junk, 0, bytes, from, n)
        Files.write(file, bytes)
        s"$n bytes from $from overwritten"
      case _ =>
        Files.write(file, Array[Byte]())
        "emptied"
    }
  }

  /** What a load gave: version, protocol, table id, live paths (sorted), tombstone and transaction counts. */
  private final case class Loaded(version: Long, protocol: String, tableId: String, paths: Seq[String],
      tombstones: Int, txns: Int)

  /** Everything a reader of the snapshot can ask for, forced; with the version of its checkpoint (-1: none). */
  private def loadFully(table: NioPath): (Loaded, Long) = forced(DeltaLog.uncached(table.toString, conf).snapshot())

  private def forced(s: Snapshot): (Loaded, Long) = {
    val protocol = s.protocol.toString
    s.metadata.schemaString
    s.domainMetadata
    s.timestamp
    val paths = s.allFiles.map { a => (a.partitionValues, a.stats, a.deletionVector); a.path }.toVector.sorted
    assertEquals(s.numFiles, paths.size.toLong)
    (Loaded(s.version, protocol, s.metadata.id, paths, s.tombstones.size, s.setTransactions.size),
      s.logSegment.checkpoint.map(_.version).getOrElse(-1L))
  }

  /** A commit older than the snapshot's checkpoint: replay never reads it. */
  private def unused(name: String, checkpointVersion: Long): Boolean =
    FileNames.parseName(name) match {
      case Some(LogFile.Commit(v)) => v < checkpointVersion
      case _ => false
    }

  /** The outcomes of one test's rounds: failures listed, outcome names counted. */
  private final class Rounds(title: String) {
    val rounds: Int = Integer.getInteger("deltalog.test.hostileRounds", 40).intValue()
    val seed: Long = java.lang.Long.getLong("deltalog.test.hostileSeed", 20261127L).longValue()
    val rnd = new Random(seed)
    private val failures = Vector.newBuilder[String]
    private var outcomes = Map.empty[String, Int]

    def fail(message: String): Unit = failures += message
    def count(outcome: String): Unit = outcomes = outcomes.updated(outcome, outcomes.getOrElse(outcome, 0) + 1)

    /** Runs `body`: "loaded", or the typed error's class (which must name `table`); anything else fails. */
    def typed(table: NioPath, context: String)(body: => Unit): Unit = count(
      try { body; "loaded" }
      catch {
        case e: DeltalogException =>
          val m = String.valueOf(e.getMessage)
          if (!m.contains(table.toString) && !m.contains(table.toUri.getPath.stripSuffix("/"))) {
            fail(s"$context: ${e.getClass.getSimpleName} does not name the table: $m")
          }
          e.getClass.getSimpleName
        case e: Throwable =>
          val frames = e.getStackTrace
          val at = (frames.take(2) ++ frames.filter(_.getClassName.startsWith("io.deltalog.")).take(3)).mkString(" < ")
          fail(s"$context: untyped ${e.getClass.getName}: ${e.getMessage} at $at")
          "untyped"
      })

    def check(extra: String = ""): Unit = {
      println(s"$title (seed $seed, $rounds rounds a table): ${outcomes.toSeq.sortBy(-_._2).mkString(", ")}$extra")
      val f = failures.result()
      assertTrue(f.isEmpty, s"${f.size} damaged logs gave an untyped or unnamed error (seed $seed):\n${f.mkString("\n")}")
    }
  }

  /** The corpus tables of [[Tables]]: (id, table directory). */
  private def corpusTables(): Seq[(String, NioPath)] = {
    val paths = ConformanceCorpus.manifest.map(e => e.get("id").asText() -> e.get("table_path").asText()).toMap
    Tables.map(id => id -> ConformanceCorpus.resolve(paths.getOrElse(id, fail(s"$id is not in the corpus manifest"))))
  }

  @Test def damagedLogFilesLoadOrFailWithATypedError(): Unit = {
    val r = new Rounds("hostile log files")
    var unusedRounds = 0
    // the second-thread stats decoder too, on these small checkpoints
    val minRows = CheckpointReader.ParallelStatsMinRows
    CheckpointReader.ParallelStatsMinRows = 1
    try corpusTables().foreach { case (id, source) =>
      val (baseline, checkpointVersion) = loadFully(source)
      (0 until r.rounds).foreach { round =>
        val table = newTable()
        try {
          copyLog(source, table)
          val files = logFiles(table)
          val file = files(r.rnd.nextInt(files.size))
          val context = s"$id round $round, ${table.relativize(file)} ${damage(file, r.rnd)}"
          if (unused(file.getFileName.toString, checkpointVersion)) {
            unusedRounds += 1
            r.count(
              try { if (loadFully(table)._1 != baseline) r.fail(s"$context: a commit replay does not read changed the result"); "loaded" }
              catch { case e: Throwable => r.fail(s"$context: a commit replay does not read made the load fail: $e"); "failed" })
          } else r.typed(table, context)(loadFully(table))
        } finally deleteRecursively(table)
      }
    } finally CheckpointReader.ParallelStatsMinRows = minRows
    r.check(s"; $unusedRounds damaged commits older than the checkpoint")
    assertTrue(unusedRounds > 0, "no round damaged a commit older than the checkpoint: that check never ran")
  }

  /**
   * The other ways into a damaged log: a cached snapshot updated with a damaged new commit (the
   * incremental path reads only it), and time travel to a random version of the damaged log.
   */
  @Test def damagedNewCommitsAndTimeTravelFailTyped(): Unit = {
    val r = new Rounds("hostile new commits / time travel, half as many rounds")
    def version(f: NioPath): Option[Long] = FileNames.parseName(f.getFileName.toString).collect { case LogFile.Commit(v) => v }
    corpusTables().foreach { case (id, source) =>
      (0 until r.rounds / 2).foreach { round =>
        val table = newTable()
        try {
          copyLog(source, table)
          val newest = logFiles(table).filter(version(_).isDefined).maxBy(version(_).get)
          val held = Files.readAllBytes(newest)
          Files.delete(newest)
          val log = DeltaLog.uncached(table.toString, conf)
          val before = try Some(log.snapshot()) catch { case _: DeltalogException => None } // e.g. only a checkpoint left
          Files.write(newest, held)
          val what = damage(newest, r.rnd)
          if (before.isDefined) r.typed(table, s"$id round $round, update with ${newest.getFileName} $what")(forced(log.update()))
          val latest = before.map(_.version + 1).getOrElse(0L)
          val v = if (latest <= 0) 0L else r.rnd.nextLong(latest + 1)
          r.typed(table, s"$id round $round, version $v after ${newest.getFileName} $what")(
            forced(DeltaLog.uncached(table.toString, conf).snapshotAt(v)))
        } finally deleteRecursively(table)
      }
    }
    r.check()
  }
}
