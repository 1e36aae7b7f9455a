package io.deltalog.log

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.log.CheckpointTestSupport._

/**
 * Prints (never asserts) write and read times of a large generated checkpoint: 100k adds with
 * ~300-byte stats strings by default (`-Ddeltalog.checkpoint.perf.adds=N` to change).
 */
class CheckpointPerfSuite {
  private val numAdds = Integer.getInteger("deltalog.checkpoint.perf.adds", 100000).intValue

  private def statsOf(i: Int): String =
    s"""{"numRecords":${1000 + i % 977},"minValues":{"id":${i * 10L},"name":"aaaa_$i","ts":"2024-01-01T00:00:00.000Z",""" +
      s""""amount":${i % 1000}.25,"city":"Amsterdam"},"maxValues":{"id":${i * 10L + 9},"name":"zzzz_$i",""" +
      s""""ts":"2024-01-31T23:59:59.999Z","amount":${i % 1000 + 5000}.75,"city":"Zurich"},""" +
      s""""nullCount":{"id":0,"name":${i % 3},"ts":0,"amount":1,"city":0},"tightBounds":true}"""

  private def actions: Iterator[Action] =
    Iterator(protocolLegacy, Metadata(id = "perf", schemaString = SchemaString, partitionColumns = Seq("day"))) ++
      Iterator.range(0, numAdds).map { i =>
        AddFile(s"day=2024-01-${10 + i % 20}/part-${i}-8d1c0b8e-2a7f-4a53-9a55-1b7ee0c6c${i % 1000}.c000.snappy.parquet",
          Map("day" -> s"2024-01-${10 + i % 20}"), 100000L + i, 1700000000000L + i, dataChange = false,
          stats = Some(statsOf(i)))
      }

  private final class Count extends ReplaySink {
    var adds = 0L
    var statsChars = 0L
    override def accept(version: Long, action: Action): Unit = action match {
      case a: AddFile => adds += 1; if (a.stats.isDefined) statsChars += a.stats.get.length
      case _ =>
    }
  }

  @Test def largeCheckpoint(): Unit = {
    val log = tempLogDir("cp-perf")
    val t0 = System.nanoTime()
    val res = CheckpointWriter.write(conf, hadoopPath(log), 100, actions)
    val t1 = System.nanoTime()
    println(f"[checkpoint perf] write $numAdds adds: ${(t1 - t0) / 1e9}%.2f s, ${res.sizeInBytes / 1e6}%.1f MB, " +
      f"avg stats ${statsOf(numAdds / 2).length} chars")
    val cp = CheckpointInstance(100, res.files)
    def timed(label: String, opts: CheckpointReadOptions, runs: Int): Unit = {
      val times = (1 to runs).map { _ =>
        val c = new Count
        val s = System.nanoTime()
        CheckpointReader.read(conf, cp, c, opts)
        val e = System.nanoTime()
        assertEquals(numAdds.toLong, c.adds)
        if (!opts.skipStats) assertTrue(c.statsChars > 0) else assertEquals(0L, c.statsChars)
        (e - s) / 1e9
      }
      println(f"[checkpoint perf] read $numAdds adds ($label): runs ${times.map(t => f"$t%.2f").mkString(", ")} s; " +
        f"best ${times.min}%.2f s")
    }
    timed("default, stats as raw strings", CheckpointReadOptions(), 4)
    timed("skipStats", CheckpointReadOptions(skipStats = true), 3)
    val s = System.nanoTime()
    val (p, m) = CheckpointReader.readProtocolAndMetadata(conf, cp)
    println(f"[checkpoint perf] readProtocolAndMetadata: ${(System.nanoTime() - s) / 1e6}%.1f ms")
    assertTrue(p.isDefined && m.isDefined)
    java.nio.file.Files.delete(java.nio.file.Paths.get(res.files.head.getPath.toUri))
  }

  /** The fast path: the same adds written from a snapshot's columnar state. */
  @Test def largeCheckpointFromState(): Unit = {
    val log = tempLogDir("cp-perf-state")
    java.nio.file.Files.write(log.resolve("00000000000000000000.json"),
      ActionCodec.serialize(actions.map {
        case a: AddFile => a.copy(dataChange = true)
        case other => other
      }.toSeq).getBytes("UTF-8"))
    val snapshot = DeltaLog.uncached(log.getParent.toString, conf).update()
    snapshot.state
    val times = (1 to 3).map { _ =>
      val t0 = System.nanoTime()
      val res = CheckpointWriter.write(conf, hadoopPath(log), 0, Checkpoints.actions(snapshot))
      val t = (System.nanoTime() - t0) / 1e9
      assertEquals(numAdds.toLong, res.numAddFiles)
      java.nio.file.Files.delete(java.nio.file.Paths.get(res.files.head.getPath.toUri))
      t
    }
    println(f"[checkpoint perf] write $numAdds adds from a snapshot's state: runs ${times.map(t => f"$t%.2f").mkString(", ")} s")
  }
}
