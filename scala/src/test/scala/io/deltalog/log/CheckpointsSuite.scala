package io.deltalog.log

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.protocol.Protocol

class CheckpointsSuite {
  import LogTestSupport._

  private def withTable(body: java.nio.file.Path => Unit): Unit = {
    val t = newTable()
    try body(t) finally deleteRecursively(t)
  }

  private def buildLog(t: java.nio.file.Path, m: Metadata = meta(), p: Protocol = protocol12): Unit = {
    val now = System.currentTimeMillis()
    writeCommit(t, 0, Seq(p, m, add("a", stats = Some("{\"numRecords\":1}")), add("b"), add("c", dvd = Some(dv("1"))),
      SetTransaction("app", 4, Some(now)), DomainMetadata("dom", "cfg")))
    writeCommit(t, 1, Seq(remove("a", now), add("d", pv = Map.empty), remove("c", now, Some(dv("1"))),
      add("c", dvd = Some(dv("2")))))
    writeCommit(t, 2, Seq(remove("b", 0), add("e")))
  }

  private def logFiles(t: java.nio.file.Path): Seq[String] =
    Files.list(logDir(t)).iterator().asScala.map(_.getFileName.toString).toSeq.sorted

  /** The state after a checkpoint equals the state before it. */
  private def assertRoundTrip(t: java.nio.file.Path, before: Snapshot): Unit = {
    val after = DeltaLog.uncached(t.toString, conf).snapshot()
    assertEquals(before.version, after.version)
    assertTrue(after.logSegment.checkpoint.isDefined, "the new snapshot uses the checkpoint")
    assertTrue(after.logSegment.deltas.isEmpty)
    assertEquals(before.allFiles.toSet, after.allFiles.toSet)
    assertEquals(before.tombstones.toSet, after.tombstones.toSet)
    assertEquals(before.setTransactions, after.setTransactions)
    assertEquals(before.domainMetadata, after.domainMetadata)
    assertEquals(before.protocol, after.protocol)
    assertEquals(before.metadata, after.metadata)
  }

  @Test def classicCheckpoint(): Unit = withTable { t =>
    buildLog(t)
    val log = DeltaLog.uncached(t.toString, conf)
    val snap = log.snapshot()
    val out = log.checkpoint(snap)
    assertEquals(2L, out.version)
    assertFalse(out.result.isV2)
    assertTrue(logFiles(t).contains(s"${v20(2)}.checkpoint.parquet"), logFiles(t).toString)
    val lc = LastCheckpointInfo.read(fs, hadoopPath(logDir(t))).get
    assertEquals(2L, lc.version)
    assertEquals(Some(3L), lc.numOfAddFiles)
    // protocol, metadata, txn, domain, 3 adds (c, d, e), 2 live tombstones (a, c with DV 1);
    // b has deletionTimestamp 0: expired
    assertEquals(9L, lc.size)
    assertRoundTrip(t, snap)
  }

  @Test def multiPartCheckpoint(): Unit = withTable { t =>
    buildLog(t)
    val log = DeltaLog.uncached(t.toString, conf)
    val snap = log.snapshot()
    val out = log.checkpoint(snap, Some(3L))
    assertEquals(Some(3), out.result.parts)
    assertEquals(Some(3), out.lastCheckpoint.parts)
    assertEquals(3, logFiles(t).count(_.matches("""\d{20}\.checkpoint\.\d{10}\.\d{10}\.parquet""")))
    assertRoundTrip(t, snap)
  }

  @Test def partSizeFromConfiguration(): Unit = withTable { t =>
    buildLog(t)
    val c = new org.apache.hadoop.conf.Configuration(conf)
    c.set(Checkpoints.PartSizeKey, "5")
    val log = DeltaLog.uncached(t.toString, c)
    assertEquals(Some(2), log.checkpoint().result.parts)
  }

  @Test def v2CheckpointWhenPolicyIsV2(): Unit = withTable { t =>
    val p = Protocol(3, 7).withFeature("v2Checkpoint")
    buildLog(t, meta(conf = Map("delta.checkpointPolicy" -> "v2")), p)
    val log = DeltaLog.uncached(t.toString, conf)
    val snap = log.snapshot()
    val out = log.checkpoint(snap)
    assertTrue(out.result.isV2)
    assertTrue(out.result.files.head.getPath.getName.matches("""\d{20}\.checkpoint\.[0-9a-f-]{36}\.parquet"""))
    assertTrue(out.result.sidecarFiles.nonEmpty)
    assertRoundTrip(t, snap)
  }

  @Test def v2PolicyWithoutFeatureStaysClassic(): Unit = {
    val o = Checkpoints.writeOptions(protocol12, meta(conf = Map("delta.checkpointPolicy" -> "v2")), Some(10L))
    assertFalse(o.v2)
    assertEquals(Some(10L), o.partSize)
    val o2 = Checkpoints.writeOptions(Protocol(3, 7).withFeature("v2Checkpoint"),
      meta(conf = Map("delta.checkpointPolicy" -> "V2", "delta.checkpoint.writeStatsAsStruct" -> "true")), Some(10L))
    assertTrue(o2.v2)
    assertEquals(None, o2.partSize, "multi-part naming is not used for V2")
    assertTrue(o2.writeStatsAsStruct)
  }

  @Test def checkpointThenMoreCommits(): Unit = withTable { t =>
    buildLog(t)
    val log = DeltaLog.uncached(t.toString, conf)
    log.checkpoint()
    writeCommit(t, 3, Seq(remove("d", System.currentTimeMillis()), add("f")))
    val ref = new InMemoryLogReplay(None, None)
    (0 to 3).foreach { v =>
      ref.append(v, ActionCodec.parseText(new String(Files.readAllBytes(logDir(t).resolve(s"${v20(v)}.json")))).iterator)
    }
    val s = DeltaLog.uncached(t.toString, conf).snapshot()
    assertEquals(Some(2L), s.logSegment.checkpointVersion)
    assertEquals(ref.activeFiles.values.toSet, s.allFiles.toSet)
    // the expired tombstone (b) is gone from the checkpoint; the others survive
    assertEquals(Set("a", "c", "d"), s.tombstones.map(_.path).toSet)
  }
}
