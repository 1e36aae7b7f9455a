package io.deltalog.log

import java.nio.charset.StandardCharsets
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.exceptions.{StateRecoverException, UnsupportedTableFeatureException}
import io.deltalog.protocol.Protocol

class SnapshotSuite {
  import LogTestSupport._

  private def withTable(body: java.nio.file.Path => Unit): Unit = {
    val t = newTable()
    try body(t) finally deleteRecursively(t)
  }

  private def open(t: java.nio.file.Path): DeltaLog = DeltaLog.uncached(t.toString, conf)

  @Test def protocolAndMetadataWithoutLoadingFiles(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a"), add("b")))
    writeCommit(t, 1, Seq(add("c"), remove("a", 5)))
    val s = open(t).snapshot()
    assertEquals(1L, s.version)
    assertEquals(protocol12, s.protocol)
    assertEquals(meta(), s.metadata)
    assertEquals(schema, s.schemaString)
    assertEquals(Nil, s.partitionColumns)
    assertFalse(s.isStateLoaded, "protocol/metadata must not load the file state")
    assertEquals(2L, s.numFiles)
    assertTrue(s.isStateLoaded)
    assertEquals(Set("b", "c"), s.allFiles.map(_.path).toSet)
    assertEquals(2L, s.sizeInBytes)
    assertEquals(1, s.logSegment.deltas.size - 1)
  }

  @Test def checksumFileGivesProtocolMetadataAndCounts(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    val crcMeta = meta(conf = Map("fromCrc" -> "yes"))
    val crc = s"""{"tableSizeBytes":123,"numFiles":7,"numMetadata":1,"numProtocol":1,
      |"protocol":${protocol12.toJsonNode},"metadata":${crcMeta.toJsonNode}}""".stripMargin.replace("\n", "")
    Files.write(logDir(t).resolve(s"${v20(0)}.crc"), crc.getBytes(StandardCharsets.UTF_8))
    val s = open(t).snapshot()
    assertEquals(crcMeta, s.metadata)
    assertFalse(s.isStateLoaded)
    assertEquals(Some(7L), s.versionChecksum.map(_.numFiles))
    assertEquals(Some(123L), s.versionChecksum.map(_.tableSizeBytes))
    // counts come from replay (a .crc may disagree with the log: conformance crc-full)
    assertEquals(1L, s.numFiles)
    assertEquals(1L, s.sizeInBytes)
    // a malformed crc is ignored
    Files.write(logDir(t).resolve(s"${v20(0)}.crc"), "{not json".getBytes(StandardCharsets.UTF_8))
    val s2 = open(t).snapshot()
    assertEquals(meta(), s2.metadata)
    assertEquals(1L, s2.numFiles)
  }

  @Test def missingProtocolOrMetadata(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(meta(), add("a")))
    val e = assertThrows(classOf[StateRecoverException], () => open(t).snapshot())
    assertTrue(e.getMessage.contains("protocol"), e.getMessage)
    writeCommit(t, 0, Seq(protocol12, add("a")))
    val e2 = assertThrows(classOf[StateRecoverException], () => open(t).snapshot())
    assertTrue(e2.getMessage.contains("metaData"), e2.getMessage)
  }

  @Test def unsupportedReaderFeatureIsRefused(): Unit = withTable { t =>
    val f = logDir(t).resolve(s"${v20(0)}.json")
    Files.write(f, ("""{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["fancyNewThing"],"writerFeatures":["fancyNewThing"]}}""" +
      "\n" + meta().json + "\n").getBytes(StandardCharsets.UTF_8))
    val e = assertThrows(classOf[UnsupportedTableFeatureException], () => open(t).snapshot())
    assertTrue(e.getMessage.contains("fancyNewThing"), e.getMessage)
    assertEquals(Seq("fancyNewThing"), e.unsupportedFeatures)
  }

  @Test def newerProtocolVersionIsRefusedNotCorrupt(): Unit = withTable { t =>
    // A newer client's protocol parses; the read check names the table and the versions.
    val f = logDir(t).resolve(s"${v20(0)}.json")
    Files.write(f, ("""{"protocol":{"minReaderVersion":5,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}}""" +
      "\n" + meta().json + "\n" + add("a").json + "\n").getBytes(StandardCharsets.UTF_8))
    val e = assertThrows(classOf[UnsupportedTableFeatureException], () => open(t).snapshot().numFiles)
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_READ", e.errorClass)
    assertTrue(e.getMessage.contains(s"Table ${open(t).tablePath}") &&
      e.getMessage.contains("needs protocol versions (5,7) above what this client supports (3,7)"), e.getMessage)
    // Writer 8 only: readable, as readers check reader versions.
    Files.write(f, ("""{"protocol":{"minReaderVersion":1,"minWriterVersion":8,"writerFeatures":[]}}""" +
      "\n" + meta().json + "\n" + add("a").json + "\n").getBytes(StandardCharsets.UTF_8))
    val s = open(t).snapshot()
    assertEquals((1, 8), (s.protocol.minReaderVersion, s.protocol.minWriterVersion))
    assertEquals(1L, s.numFiles)
  }

  @Test def checkpointOfATableWithAnUnsupportedWriterFeatureIsRefused(): Unit = withTable { t =>
    // A checkpoint is a write to the log: refused, like a commit, before anything is written.
    for (p <- Seq("""{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["madeUpWriterFeature"]}""",
        """{"minReaderVersion":1,"minWriterVersion":8,"writerFeatures":[]}""")) {
      Files.write(logDir(t).resolve(s"${v20(0)}.json"), (s"""{"protocol":$p}""" + "\n" + meta().json + "\n" +
        add("a").json + "\n").getBytes(StandardCharsets.UTF_8))
      val log = open(t)
      assertEquals(1L, log.snapshot().numFiles, "readable")
      val e = assertThrows(classOf[UnsupportedTableFeatureException], () => log.checkpoint())
      assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", e.errorClass)
      assertTrue(e.getMessage.contains(log.tablePath.toString), e.getMessage)
      val names = Files.list(logDir(t)).iterator().asScala.map(_.getFileName.toString).toSeq
      assertEquals(Seq(s"${v20(0)}.json"), names.filterNot(_.endsWith(".crc")), "nothing written")
    }
  }

  @Test def timestampIsLastCommitMtimeOrIct(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")), mtime = Some(1000000L))
    writeCommit(t, 1, Seq(add("b")), mtime = Some(2000000L))
    assertEquals(2000000L, open(t).snapshot().timestamp)
    val ict = meta(conf = Map("delta.enableInCommitTimestamps" -> "true"))
    writeCommit(t, 2, Seq(CommitInfo.empty.withInCommitTimestamp(5555L), ict), mtime = Some(3000000L))
    writeCommit(t, 3, Seq(CommitInfo.empty.withInCommitTimestamp(7777L), add("c")), mtime = Some(4000000L))
    val s = open(t).snapshot()
    assertEquals(7777L, s.timestamp, "ICT of the snapshot version, before the state is loaded")
    val s2 = open(t).snapshot()
    s2.numFiles
    assertEquals(7777L, s2.timestamp, "ICT of the snapshot version, after the state is loaded")
  }

  @Test def tombstoneRetention(): Unit = withTable { t =>
    val day = 24L * 3600 * 1000
    val now = 100L * day
    writeCommit(t, 0, Seq(protocol12, meta(conf = Map("delta.deletedFileRetentionDuration" -> "interval 1 day")),
      add("a"), add("b"), add("c"), add("d")))
    writeCommit(t, 1, Seq(remove("a", now - 2 * day), remove("b", now - 3600 * 1000),
      remove("c", 0).copy(deletionTimestamp = None), remove("d", now - day)), mtime = Some(now))
    val s = open(t).snapshot()
    assertEquals(now - day, s.minFileRetentionTimestamp)
    assertEquals(Set("b"), s.tombstones.map(_.path).toSet)
    assertTrue(s.tombstones.forall(!_.dataChange))
    assertEquals(4, s.state.tombstones.size)
    // default retention: one week
    writeCommit(t, 0, Seq(protocol12, meta(), add("a"), add("b"), add("c"), add("d")))
    val s2 = open(t).snapshot()
    assertEquals(now - 7 * day, s2.minFileRetentionTimestamp)
    assertEquals(Set("a", "b", "d"), s2.tombstones.map(_.path).toSet)
  }

  @Test def setTransactionRetention(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(conf = Map("delta.setTransactionRetentionDuration" -> "interval 1 hour")),
      SetTransaction("old", 1, Some(1000L)), SetTransaction("none", 1, None)))
    writeCommit(t, 1, Seq(SetTransaction("new", 2, Some(10000000L)), DomainMetadata("d", "x")), mtime = Some(10000000L))
    val s = open(t).snapshot()
    assertEquals(Seq("new"), s.setTransactions.map(_.appId))
    assertEquals(Seq(DomainMetadata("d", "x")), s.domainMetadata)
  }

  @Test def intervalParsing(): Unit = {
    val day = 86400000L
    assertEquals(Some(7 * day), IntervalProperty.parseMillis("interval 1 week"))
    assertEquals(Some(7 * day), IntervalProperty.parseMillis("interval 7 days"))
    assertEquals(Some(7 * day), IntervalProperty.parseMillis("168 hours"))
    assertEquals(Some(7 * day), IntervalProperty.parseMillis("  INTERVAL 168 HOURS "))
    assertEquals(Some(day + 12 * 3600000L), IntervalProperty.parseMillis("interval 1 day 12 hours"))
    assertEquals(Some(30 * 60000L), IntervalProperty.parseMillis("interval 30 minutes"))
    assertEquals(Some(1500L), IntervalProperty.parseMillis("1500 milliseconds"))
    assertEquals(None, IntervalProperty.parseMillis("forever"))
    assertEquals(None, IntervalProperty.parseMillis("interval 2 months"))
    assertEquals(7 * day, IntervalProperty.millis(Map("k" -> "bogus"), "k", 7 * day))
  }

  @Test def dvUpdateThroughSnapshot(): Unit = withTable { t =>
    val d1 = dv("1"); val d2 = dv("2")
    writeCommit(t, 0, Seq(protocol12, meta(), add("p", dvd = Some(d1))))
    writeCommit(t, 1, Seq(remove("p", 10, Some(d1)), add("p", dvd = Some(d2))))
    val s = open(t).snapshot()
    assertEquals(Seq(Some(d2)), s.allFiles.map(_.deletionVector).toSeq)
    assertEquals(Seq(Some(d1)), s.state.tombstones.map(_.deletionVector).toSeq)
  }
}
