package io.deltalog.log

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.log.CheckpointTestSupport._

/**
 * A checkpoint's `add.stats` decoded on a second thread ([[ParallelStatsReader]]) against the same
 * read on one thread: a sink that keeps only some rows (as replay does when later commits touched
 * a file), rows without stats, rows that are not plain (deletion vectors, tags) and several row
 * parts, one too small for the second thread.
 */
class ParallelStatsSuite {

  private val metadata = Metadata(id = "parallel-stats", schemaString = SchemaString, partitionColumns = Seq("part"),
    createdTime = Some(1700000000000L))
  private val dv = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 36, 2L)

  private def add(i: Int): AddFile = AddFile(s"part=${i % 3}/f-$i.parquet", Map("part" -> (i % 3).toString),
    1000L + i, 1700000000000L + i, dataChange = false,
    stats = if (i % 13 == 0) None else Some(stats(i)),
    deletionVector = if (i % 101 == 0) Some(dv) else None,
    tags = if (i % 211 == 0) Some(Map("t" -> i.toString)) else None)

  @Test def secondThreadGivesTheSameChunkAsOneThread(): Unit = {
    val n = 90000
    val actions: Seq[Action] = Seq(protocolLegacy, metadata) ++ (0 until n).map(add) ++
      Seq(RemoveFile("gone.parquet", Some(1L), dataChange = false))
    val log = tempLogDir("parallel-stats")
    // three parts: two large enough for the second thread, one too small
    val res = CheckpointWriter.write(conf, hadoopPath(log), 7, actions.iterator, CheckpointWriteOptions(partSize = Some(40000)))
    assertEquals(3, res.files.size)
    val keepAll: String => Boolean = _ => false
    for ((shadow, everyAdd) <- Seq[(String => Boolean, Boolean)]((keepAll, false), (keepAll, true),
        (p => p.hashCode % 17 == 0, false), (p => p.endsWith("7.parquet"), false))) {
      val one = new ChunkSink(shadow, parallel = false)
      CheckpointReader.read(conf, CheckpointInstance(7, res.files), one)
      // everyAdd: the sink keeps every add, so the stats thread appends without waiting for decisions
      val two = new ChunkSink(shadow, parallel = true, keepsEvery = everyAdd)
      CheckpointReader.read(conf, CheckpointInstance(7, res.files), two)
      assertTrue(two.detached >= 1, "the second thread was not used")
      val expected = (0 until n).map(add).filterNot(a => shadow(a.path))
      val a = one.rows
      val b = two.rows
      assertEquals(expected.size, b.size)
      assertEquals(a, b)
      assertEquals(expected.map(_.path).sorted, b.map(_.path).sorted)
      assertEquals(expected.map(a => a.path -> a.stats).toMap, b.map(a => a.path -> a.stats).toMap)
    }
  }

  @Test def replayLoadUsesTheSecondThreadAndMatchesSerialRead(): Unit = {
    // Through DeltaLog: a checkpoint plus a commit that removes and re-adds checkpoint files.
    val n = 40000
    val log = tempLogDir("parallel-stats-replay")
    val res = CheckpointWriter.write(conf, hadoopPath(log), 0,
      (Seq[Action](protocolLegacy, metadata) ++ (0 until n).map(add)).iterator)
    assertEquals(1, res.files.size)
    java.nio.file.Files.writeString(log.resolve("00000000000000000000.json"),
      (Seq[Action](protocolLegacy, metadata) ++ (0 until n).map(add)).map(_.json).mkString("\n") + "\n")
    val commit = (0 until n by 997).map(i => RemoveFile(add(i).path, Some(1L), dataChange = true).json) ++
      (0 until n by 1999).map(i => add(i).copy(stats = Some("""{"numRecords":1}""")).json)
    java.nio.file.Files.writeString(log.resolve("00000000000000000001.json"), commit.mkString("\n") + "\n")
    val snapshot = DeltaLog.uncached(log.getParent.toString, conf).update()
    assertEquals(Some(0L), snapshot.logSegment.checkpoint.map(_.version))
    val live = snapshot.allFiles.map(a => a.path -> a.stats).toMap
    val removed = (0 until n by 997).toSet
    val readded = (0 until n by 1999).toSet
    val expected = (0 until n).filter(i => !removed(i) || readded(i)).map { i =>
      add(i).path -> (if (readded(i)) Some("""{"numRecords":1}""") else add(i).stats)
    }.toMap
    assertEquals(expected, live)
  }

  @Test def failuresStopTheSecondThread(): Unit = {
    val n = 40000
    val log = tempLogDir("parallel-stats-fail")
    val res = CheckpointWriter.write(conf, hadoopPath(log), 3, (Seq[Action](protocolLegacy, metadata) ++
      (0 until n).map(add) ++ Seq(RemoveFile("gone.parquet", Some(1L), dataChange = false))).iterator)
    final class Boom extends RuntimeException("boom")
    // fails before the rows reach the stats thread (a remove, assembled first), then in the middle
    for (failOn <- Seq[Action => Boolean](_.isInstanceOf[RemoveFile], {
      case a: AddFile => a.path.endsWith("-20000.parquet")
      case _ => false
    })) {
      val sink = new ChunkSink(_ => false, parallel = true) {
        override def accept(version: Long, action: Action): Unit = {
          if (failOn(action)) throw new Boom
          super.accept(version, action)
        }
        override def acceptPlainAdd(version: Long, r: PlainAddRow): Unit = {
          if (r.path.endsWith("-20000.parquet") && failOn(AddFile(r.path, Map.empty, 0, 0, dataChange = false))) throw new Boom
          super.acceptPlainAdd(version, r)
        }
      }
      assertThrows(classOf[Boom], () => CheckpointReader.read(conf, CheckpointInstance(3, res.files), sink))
      val pool = CheckpointThreads.executor.asInstanceOf[java.util.concurrent.ThreadPoolExecutor]
      val deadline = System.nanoTime() + 5000000000L
      while (pool.getActiveCount > 0 && System.nanoTime() < deadline) Thread.sleep(10)
      assertEquals(0, pool.getActiveCount, "the stats thread is still running")
    }
  }
}
