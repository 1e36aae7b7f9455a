package io.deltalog.log

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.protocol.Protocol

class InMemoryLogReplaySuite {
  import LogTestSupport._

  private def replay(commits: Seq[Action]*): InMemoryLogReplay = {
    val r = new InMemoryLogReplay(None, None)
    commits.zipWithIndex.foreach { case (c, v) => r.append(v, c.iterator) }
    r
  }

  @Test def appendAssertsContiguousVersions(): Unit = {
    val r = new InMemoryLogReplay(None, None)
    assertEquals(-1L, r.currentVersion)
    r.append(5, Iterator(protocol12)) // the first append may start anywhere (a checkpoint)
    r.append(6, Iterator.empty)
    val e = assertThrows(classOf[AssertionError], () => r.append(8, Iterator.empty))
    assertEquals("Attempted to replay version 8, but state is at 6", e.getMessage)
    val e2 = assertThrows(classOf[AssertionError], () => r.append(6, Iterator.empty))
    assertEquals("Attempted to replay version 6, but state is at 6", e2.getMessage)
    assertEquals(6L, r.currentVersion)
  }

  @Test def latestProtocolAndMetadataWin(): Unit = {
    val m1 = meta()
    val m2 = meta(conf = Map("k" -> "v"))
    val p2 = Protocol(1, 3)
    val r = replay(Seq(protocol12, m1), Seq(p2), Seq(m2))
    assertEquals(p2, r.currentProtocolVersion)
    assertEquals(m2, r.currentMetaData)
    assertNull(new InMemoryLogReplay(None, None).currentMetaData)
  }

  @Test def transactionsLatestOccurrenceWinsAndExpire(): Unit = {
    val r = new InMemoryLogReplay(None, Some(1000L))
    r.append(0, Iterator(SetTransaction("a", 5, Some(2000)), SetTransaction("b", 1, None),
      SetTransaction("c", 1, Some(500))))
    r.append(1, Iterator(SetTransaction("a", 3, Some(3000)))) // version goes down: still wins
    assertEquals(Map("a" -> SetTransaction("a", 3, Some(3000))), r.transactions)
    val all = replay(Seq(SetTransaction("a", 5, None)), Seq(SetTransaction("a", 3, None)))
    assertEquals(3L, all.transactions("a").version)
  }

  @Test def domainMetadataLatestWinsAndRemovedIsDropped(): Unit = {
    val r = replay(
      Seq(DomainMetadata("d1", "{1}"), DomainMetadata("d2", "{2}")),
      Seq(DomainMetadata("d1", "{1b}"), DomainMetadata("d2", "{2}", removed = true)),
      Seq(DomainMetadata("d3", "x")))
    assertEquals(Map("d1" -> DomainMetadata("d1", "{1b}"), "d3" -> DomainMetadata("d3", "x")), r.domainMetadata)
  }

  @Test def addRemoveReAdd(): Unit = {
    val r = replay(
      Seq(add("a"), add("b")),
      Seq(remove("a", 100)),
      Seq(add("c", size = 7), CommitInfo.empty, AddCDCFile("_change_data/x", Map.empty, 1)),
      Seq(add("a", size = 42)))
    assertEquals(Set("a", "b", "c"), r.activeFiles.values.map(_.path).toSet)
    assertEquals(42L, r.activeFiles.values.find(_.path == "a").get.size)
    assertTrue(r.tombstones.isEmpty, "re-add cancels the tombstone")
    assertTrue(r.activeFiles.values.forall(!_.dataChange), "surviving adds have dataChange = false")
    val r2 = replay(Seq(add("a")), Seq(remove("a", 100)))
    assertTrue(r2.activeFiles.isEmpty)
    assertEquals(Seq(remove("a", 100).copy(dataChange = false)), r2.tombstones.values.toSeq)
  }

  @Test def addWithDataChangeFalseStillReplaces(): Unit = {
    val r = replay(Seq(add("a", stats = Some("{\"numRecords\":1}"))),
      Seq(add("a", stats = Some("{\"numRecords\":2}")).copy(dataChange = false)))
    assertEquals(Some("{\"numRecords\":2}"), r.activeFiles.values.head.stats)
  }

  @Test def deletionVectorUpdate(): Unit = {
    val d1 = dv("d1"); val d2 = dv("d2")
    val r = replay(Seq(add("p")), Seq(remove("p", 10), add("p", dvd = Some(d1))),
      Seq(remove("p", 20, dvd = Some(d1)), add("p", dvd = Some(d2))))
    assertEquals(Seq(Some(d2)), r.activeFiles.values.map(_.deletionVector).toSeq)
    assertEquals(Set(None, Some(d1)), r.tombstones.values.map(_.deletionVector).toSet)
    // The same path is live with d2 and a tombstone with d1: keys are (path, dvId).
    val keys = r.activeFiles.keySet ++ r.tombstones.keySet
    assertEquals(3, keys.size)
    // A remove of (p, d1) does not touch (p, d2).
    r.append(3, Iterator(remove("p", 30, dvd = Some(d1))))
    assertEquals(1, r.activeFiles.size)
  }

  @Test def dvUniqueIdWithOffsetParticipates(): Unit = {
    val a = dv("x").copy(offset = Some(1)); val b = dv("x").copy(offset = Some(9))
    val r = replay(Seq(add("p", dvd = Some(a))), Seq(remove("p", 5, dvd = Some(b))))
    assertEquals(1, r.activeFiles.size, "different offsets are different logical files")
  }

  @Test def pathCanonicalisation(): Unit = {
    // decoded remove cancels an encoded add
    val r = replay(Seq(add("a%20b/c.parquet")), Seq(remove("a b/c.parquet", 5)))
    assertTrue(r.activeFiles.isEmpty)
    // file: URIs cancel scheme-less absolute paths (conformance canonicalized-paths-*)
    for (rm <- Seq("file:/x/with%20space/p@%23h", "file:///x/with%20space/p@%23h")) {
      val r2 = replay(Seq(add("/x/with%20space/p@%23h")), Seq(remove(rm, 5)))
      assertTrue(r2.activeFiles.isEmpty, rm)
      assertEquals(1, r2.tombstones.size)
    }
    // a different scheme does not match
    val r3 = replay(Seq(add("/x/y")), Seq(remove("s3://bucket/x/y", 5)))
    assertEquals(1, r3.activeFiles.size)
  }

  @Test def checkpointOrderAndTombstoneExpiry(): Unit = {
    val r = new InMemoryLogReplay(Some(100L), None)
    val m = meta()
    r.append(0, Iterator(protocol12, m, add("z"), add("b"), add("y"), add("x"), SetTransaction("app", 1, Some(5)),
      DomainMetadata("dom", "c")))
    r.append(1, Iterator(remove("y", 100), remove("x", 101), remove("b", 0).copy(deletionTimestamp = None),
      add("a")))
    val out = r.checkpoint.toSeq
    assertEquals(protocol12, out(0))
    assertEquals(m, out(1))
    assertEquals(SetTransaction("app", 1, Some(5)), out(2))
    assertEquals(DomainMetadata("dom", "c"), out(3))
    val files = out.drop(4)
    // y expired (100 is not > 100), b expired (missing timestamp = 0), x kept
    assertEquals(Seq("a", "x", "z"), files.map(_.asInstanceOf[FileAction].path))
    assertTrue(files(1).isInstanceOf[RemoveFile])
    assertTrue(files.forall {
      case a: AddFile => !a.dataChange
      case rm: RemoveFile => !rm.dataChange
      case _ => false
    })
    assertEquals(Set("x"), r.tombstones.values.map(_.path).toSet)
  }
}
