package io.deltalog.log

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.deltalog.exceptions.{DeltalogException, TableNotFoundException, VersionNotContiguousException, VersionNotFoundException}
import org.apache.hadoop.fs.Path
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class LogSegmentBuilderSuite {
  import LogTestFiles._

  private def build(log: Path, target: Option[Long] = None, hint: Option[LastCheckpointInfo] = None): LogSegment =
    LogSegmentBuilder.build(fs, log, "tbl", target, hint)

  private def names(seg: LogSegment): Seq[String] = seg.deltas.map(_.getPath.getName)
  private def hint(v: Long) = Some(LastCheckpointInfo(v, 1))

  @Test def commitsOnly(): Unit = {
    val (_, log) = newTable()
    (0L to 3L).foreach(v => commit(log, v, mtime = 1000000L + v * 1000))
    val seg = build(log)
    assertEquals(3L, seg.version)
    assertEquals(Seq(0L, 1L, 2L, 3L), seg.deltaVersions)
    assertEquals(None, seg.checkpoint)
    assertEquals(1003000L, seg.lastCommitTimestamp)
    assertEquals(Seq(0L, 1L), build(log, Some(1)).deltaVersions)
    assertEquals(1001000L, build(log, Some(1)).lastCommitTimestamp)
    assertEquals(log, seg.logPath)
  }

  @Test def classicCheckpointAndTimeTravel(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 5L)
    val cp = classicCheckpoint(log, 2)
    fs.setTimes(new Path(cp.toURI), 777000L, -1L)
    val seg = build(log)
    assertEquals(5L, seg.version)
    assertEquals(Some(2L), seg.checkpointVersion)
    assertEquals(Seq(3L, 4L, 5L), seg.deltaVersions)
    assertFalse(seg.checkpoint.get.isMultiPart)
    val at2 = build(log, Some(2))
    assertEquals(Some(2L), at2.checkpointVersion)
    assertEquals(Nil, at2.deltas)
    assertEquals(777000L, at2.lastCommitTimestamp)
    val at1 = build(log, Some(1))
    assertEquals(None, at1.checkpointVersion)
    assertEquals(Seq(0L, 1L), at1.deltaVersions)
  }

  @Test def incompleteMultiPartFallsBackToOlderCheckpoint(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 6L)
    classicCheckpoint(log, 2)
    multiPart(log, 4, 3, Seq(1, 3)) // part 2 missing
    val seg = build(log)
    assertEquals(Some(2L), seg.checkpointVersion)
    assertEquals(Seq(3L, 4L, 5L, 6L), seg.deltaVersions)
    // With the hint pointing at the broken set, the result is the same.
    assertEquals(Some(2L), build(log, hint = Some(LastCheckpointInfo(4, 10, parts = Some(3)))).checkpointVersion)
    // Completing the set makes it usable.
    multiPart(log, 4, 3, Seq(2))
    val seg2 = build(log)
    assertEquals(Some(4L), seg2.checkpointVersion)
    assertTrue(seg2.checkpoint.get.isMultiPart)
    assertEquals(Seq(
      "00000000000000000004.checkpoint.0000000001.0000000003.parquet",
      "00000000000000000004.checkpoint.0000000002.0000000003.parquet",
      "00000000000000000004.checkpoint.0000000003.0000000003.parquet"),
      seg2.checkpoint.get.files.map(_.getPath.getName))
    assertEquals(Seq(5L, 6L), seg2.deltaVersions)
  }

  @Test def incompleteMultiPartWithoutOlderCheckpointReplaysFromZero(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 4L)
    multiPart(log, 3, 2, Seq(2))
    val seg = build(log, hint = Some(LastCheckpointInfo(3, 5, parts = Some(2))))
    assertEquals(None, seg.checkpoint)
    assertEquals((0L to 4L).toSeq, seg.deltaVersions)
  }

  @Test def severalMultiPartSetsAtOneVersion(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 5L)
    multiPart(log, 5, 3, Seq(1, 2)) // incomplete
    multiPart(log, 5, 2, Seq(1, 2)) // complete
    val seg = build(log)
    assertEquals(Some(5L), seg.checkpointVersion)
    assertEquals(2, seg.checkpoint.get.files.size)
    assertTrue(seg.checkpoint.get.files.forall(_.getPath.getName.endsWith(".0000000002.parquet")))
  }

  @Test def zeroLengthCheckpointIsIgnored(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 3L)
    classicCheckpoint(log, 1)
    classicCheckpoint(log, 3, content = "")
    val seg = build(log, hint = hint(3))
    assertEquals(Some(1L), seg.checkpointVersion)
    assertEquals(Seq(2L, 3L), seg.deltaVersions)
    // Zero-length part of a multi-part set makes the set incomplete.
    multiPart(log, 2, 2, Seq(1))
    put(log, FileNames.checkpointFileWithParts(log, 2, 2)(1).getName, "")
    assertEquals(Some(1L), build(log).checkpointVersion)
  }

  @Test def uuidCheckpoint(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 4L)
    put(log, "00000000000000000003.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json", "{\"checkpointMetadata\":{\"version\":3}}\n")
    val seg = build(log)
    assertEquals(Some(3L), seg.checkpointVersion)
    assertTrue(seg.checkpoint.get.isUuidNamed)
    assertEquals(Seq(4L), seg.deltaVersions)
    // Preferred over a classic checkpoint of the same version (delta-spark order SINGLE < WITH_PARTS < V2).
    classicCheckpoint(log, 3)
    multiPart(log, 3, 2, Seq(1, 2))
    assertTrue(build(log).checkpoint.get.isUuidNamed)
    // Parquet-format V2 top file too.
    put(log, "00000000000000000004.checkpoint.b.parquet", "PAR1")
    val seg4 = build(log)
    assertEquals(Some(4L), seg4.checkpointVersion)
    assertTrue(seg4.checkpoint.get.isUuidNamed)
  }

  @Test def gapsNameTheExactMissingVersions(): Unit = {
    val (_, log) = newTable()
    commits(log, Seq(0L, 1L, 3L, 5L, 6L))
    val e = assertThrows(classOf[VersionNotContiguousException], () => build(log))
    assertEquals(Seq(2L, 4L), e.missingVersions)
    assertTrue(e.getMessage.contains("2, 4"), e.getMessage)
    assertEquals("DELTA_VERSIONS_NOT_CONTIGUOUS", e.errorClass)
    // Before the gap everything is fine.
    assertEquals(1L, build(log, Some(1)).version)
    assertEquals(Seq(2L), assertThrows(classOf[VersionNotContiguousException], () => build(log, Some(3))).missingVersions)
    // A checkpoint after the gaps makes the latest version reconstructable.
    classicCheckpoint(log, 5)
    assertEquals(Seq(6L), build(log).deltaVersions)
  }

  @Test def gapAfterCheckpoint(): Unit = {
    val (_, log) = newTable()
    commits(log, Seq(0L, 1L, 2L, 3L, 6L))
    classicCheckpoint(log, 2)
    val e = assertThrows(classOf[VersionNotContiguousException], () => build(log, hint = hint(2)))
    assertEquals(Seq(4L, 5L), e.missingVersions)
  }

  @Test def withoutCheckpointCommitsMustStartAtZero(): Unit = {
    val (_, log) = newTable()
    commits(log, 2L to 4L)
    val e = assertThrows(classOf[VersionNotContiguousException], () => build(log))
    assertEquals(Seq(0L, 1L), e.missingVersions)
  }

  @Test def versionOutOfRange(): Unit = {
    val (_, log) = newTable()
    commits(log, 5L to 8L)
    classicCheckpoint(log, 5)
    val beyond = assertThrows(classOf[VersionNotFoundException], () => build(log, Some(9)))
    assertEquals((9L, 5L, 8L), (beyond.requested, beyond.earliest, beyond.latest))
    assertEquals("DELTA_VERSION_NOT_FOUND", beyond.errorClass)
    val below = assertThrows(classOf[VersionNotFoundException], () => build(log, Some(3)))
    assertEquals((3L, 5L, 8L), (below.requested, below.earliest, below.latest))
    // Also when listing starts from a hint.
    val beyondHinted = assertThrows(classOf[VersionNotFoundException], () => build(log, Some(20), hint(5)))
    assertEquals((20L, 5L, 8L), (beyondHinted.requested, beyondHinted.earliest, beyondHinted.latest))
    assertThrows(classOf[VersionNotFoundException], () => build(log, Some(-1)))
    assertEquals(5L, build(log, Some(5)).version)
    assertEquals(Seq(6L, 7L), build(log, Some(7)).deltaVersions)
  }

  @Test def targetInsideAHoleIsNotFound(): Unit = {
    val (_, log) = newTable()
    commits(log, (0L to 3L) ++ Seq(100L))
    classicCheckpoint(log, 100)
    assertEquals(100L, build(log).version)
    assertEquals(Nil, build(log).deltas)
    val e = assertThrows(classOf[VersionNotFoundException], () => build(log, Some(50)))
    assertEquals((50L, 0L, 100L), (e.requested, e.earliest, e.latest))
    assertEquals(3L, build(log, Some(3)).version)
  }

  @Test def staleAndDanglingHints(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 9L)
    classicCheckpoint(log, 3)
    classicCheckpoint(log, 6)
    // Stale hint: listing from 3 still finds the newer checkpoint.
    assertEquals(Some(6L), build(log, hint = hint(3)).checkpointVersion)
    // Hint to a deleted checkpoint: falls back to a full listing.
    assertEquals(Some(6L), build(log, hint = hint(8)).checkpointVersion)
    // Hint beyond the end of the log (table re-created).
    assertEquals(9L, build(log, hint = hint(500)).version)
    // Target older than the hint: listed from 0.
    val seg = build(log, Some(4), hint(6))
    assertEquals(Some(3L), seg.checkpointVersion)
    assertEquals(Seq(4L), seg.deltaVersions)
    val seg2 = build(log, Some(2), hint(6))
    assertEquals(None, seg2.checkpointVersion)
    assertEquals(Seq(0L, 1L, 2L), seg2.deltaVersions)
    // Hint whose checkpoint is gone while older ones were cleaned up too: replay from 0.
    delete(log, FileNames.checkpointFileSingular(log, 6).getName)
    delete(log, FileNames.checkpointFileSingular(log, 3).getName)
    val seg3 = build(log, hint = hint(6))
    assertEquals(None, seg3.checkpoint)
    assertEquals((0L to 9L).toSeq, seg3.deltaVersions)
  }

  @Test def hintedListingAfterCleanup(): Unit = {
    val (_, log) = newTable()
    commits(log, 10L to 14L)
    classicCheckpoint(log, 10)
    classicCheckpoint(log, 12)
    val seg = build(log, hint = hint(12))
    assertEquals((Some(12L), Seq(13L, 14L)), (seg.checkpointVersion, seg.deltaVersions))
    assertEquals(VersionRange(10, 14), LogSegmentBuilder.listVersions(fs, log))
  }

  @Test def otherFilesAreIgnored(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 3L)
    put(log, "00000000000000000001.00000000000000000003.compacted.json")
    put(log, "00000000000000000003.crc", "{}")
    put(log, "00000000000000000004.crc", "{}")
    put(log, "00000000000000000002.crc.tmp")
    put(log, ".00000000000000000004.json.1f0e.tmp", "{")
    put(log, "_last_checkpoint", "garbage")
    put(log, "_staged_commits/00000000000000000004.0e8c.json", "{}")
    put(log, "_sidecars/00000000000000000002.checkpoint.0000000001.0000000001.u.parquet", "PAR1")
    put(log, "README")
    val seg = build(log)
    assertEquals(3L, seg.version)
    assertEquals(Seq(
      "00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json",
      "00000000000000000003.json"), names(seg))
  }

  @Test def notATable(): Unit = {
    val (dir, log) = newTable()
    assertThrows(classOf[TableNotFoundException], () => build(log)) // empty _delta_log
    put(log, "_last_checkpoint", """{"version":0,"size":1}""")
    put(log, "00000000000000000000.crc", "{}")
    val e = assertThrows(classOf[TableNotFoundException], () => build(log, hint = hint(0)))
    assertEquals("DELTA_TABLE_NOT_FOUND", e.errorClass)
    assertTrue(e.getMessage.contains("tbl"))
    val missing = new Path(new File(dir, "nothing/_delta_log").toURI)
    assertThrows(classOf[TableNotFoundException], () => build(missing))
    assertThrows(classOf[TableNotFoundException], () => LogSegmentBuilder.listVersions(fs, missing))
  }

  @Test def listVersionsAndListCommits(): Unit = {
    val (_, log) = newTable()
    commits(log, 0L to 4L)
    assertEquals(VersionRange(0, 4), LogSegmentBuilder.listVersions(fs, log))
    delete(log, FileNames.deltaFile(log, 0).getName)
    delete(log, FileNames.deltaFile(log, 1).getName)
    classicCheckpoint(log, 2)
    classicCheckpoint(log, 3)
    assertEquals(VersionRange(2, 4), LogSegmentBuilder.listVersions(fs, log))
    assertEquals(Seq(2L, 3L, 4L), LogSegmentBuilder.listCommits(fs, log).map(FileNames.deltaVersion))
    assertEquals(Seq(4L), LogSegmentBuilder.listCommits(fs, log, 4).map(FileNames.deltaVersion))
  }

  @Test def unpaddedNamesAreAccepted(): Unit = {
    val (_, log) = newTable()
    put(log, "0.json"); put(log, "1.json"); put(log, "2.json"); put(log, "10.json")
    (3 to 9).foreach(v => put(log, s"$v.json"))
    val seg = build(log)
    assertEquals(10L, seg.version)
    assertEquals((0L to 10L).toSeq, seg.deltaVersions)
  }

  // ---------------------------------------------------------------------------------------------
  // Conformance corpus

  private def conformanceRoot: File = io.deltalog.ConformanceCorpus.root.toFile

  @Test def conformanceCorpus(): Unit = {
    val manifest = new ObjectMapper().readTree(new File(conformanceRoot, "manifest.json"))
    val entries = manifest.elements().asScala.toSeq
    assertTrue(entries.size >= 200, s"only ${entries.size} manifest entries")
    assertTrue(entries.count(e => !e.get("must_fail").asBoolean()) >= 200)
    val failures = entries.flatMap(e => checkConformance(e).map(msg => s"${e.get("id").asText()}: $msg"))
    assertTrue(failures.isEmpty, s"${failures.size} of ${entries.size} tables failed:\n" + failures.mkString("\n"))
  }

  private def checkConformance(e: JsonNode): Option[String] = {
    val tableDir = new File(conformanceRoot, e.get("table_path").asText())
    val log = new Path(new File(tableDir, "_delta_log").toURI)
    val mustFail = e.get("must_fail").asBoolean()
    val reason = Option(e.get("fail_reason")).filterNot(_.isNull).map(_.asText()).getOrElse("")
    val expectedError: Option[Class[_ <: DeltalogException]] =
      if (!mustFail) None
      else if (reason.contains("no _delta_log") || reason.contains("no commit or checkpoint")) Some(classOf[TableNotFoundException])
      else if (reason.contains("commit version") && reason.contains("missing")) Some(classOf[VersionNotContiguousException])
      else None // protocol / metadata problems: the segment must still build
    def attempt(h: Option[LastCheckpointInfo]): Either[Throwable, LogSegment] =
      try Right(LogSegmentBuilder.build(fs, log, tableDir.toString, None, h)) catch { case t: Throwable => Left(t) }
    val hint = if (new File(tableDir, "_delta_log").isDirectory) LastCheckpointInfo.read(fs, log) else None
    val results = Seq(attempt(hint), attempt(None))
    expectedError match {
      case Some(cls) =>
        results.collectFirst {
          case Right(seg) => s"expected ${cls.getSimpleName}, built version ${seg.version}"
          case Left(t) if !cls.isInstance(t) => s"expected ${cls.getSimpleName}, got $t"
        }
      case None =>
        val expectedVersion = Option(e.get("version")).filterNot(_.isNull).map(_.asLong())
        results.collectFirst {
          case Left(t) => s"failed: $t"
          case Right(seg) if !mustFail && !expectedVersion.contains(seg.version) =>
            s"version ${seg.version}, manifest says ${expectedVersion.getOrElse("null")}"
        }.orElse {
          // Time travel to the version itself and to the checkpoint version works too.
          val seg = results.head.toOption.get
          val again = LogSegmentBuilder.build(fs, log, tableDir.toString, Some(seg.version), hint)
          if (again != seg) Some(s"build(Some(${seg.version})) differs from build(None)") else None
        }
    }
  }
}
