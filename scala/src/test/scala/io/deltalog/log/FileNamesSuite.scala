package io.deltalog.log

import org.apache.hadoop.fs.Path
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class FileNamesSuite {
  private val log = new Path("file:/tmp/t/_delta_log")
  import LogFile._

  @Test def parsesEveryKnownForm(): Unit = {
    assertEquals(Some(Commit(42)), FileNames.parseName("00000000000000000042.json"))
    assertEquals(Some(Checkpoint.Classic(10)), FileNames.parseName("00000000000000000010.checkpoint.parquet"))
    assertEquals(Some(Checkpoint.MultiPart(4915, 20, 60)),
      FileNames.parseName("00000000000000004915.checkpoint.0000000020.0000000060.parquet"))
    assertEquals(Some(Checkpoint.Uuid(7, "80a083e8-7026-4e79-81be-64bd76c43a11", "json")),
      FileNames.parseName("00000000000000000007.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"))
    assertEquals(Some(Checkpoint.Uuid(7, "abc", "parquet")),
      FileNames.parseName("00000000000000000007.checkpoint.abc.parquet"))
    assertEquals(Some(Compaction(3, 9)), FileNames.parseName("00000000000000000003.00000000000000000009.compacted.json"))
    assertEquals(9L, Compaction(3, 9).version)
    assertEquals(Some(Crc(5)), FileNames.parseName("00000000000000000005.crc"))
    assertEquals(Some(StagedCommit(3, "a1-b2")),
      FileNames.parse(new Path(log, "_staged_commits/00000000000000000003.a1-b2.json")))
  }

  @Test def acceptsAnyDigitCountOnRead(): Unit = {
    assertEquals(Some(Commit(3)), FileNames.parseName("3.json"))
    assertEquals(Some(Commit(12)), FileNames.parseName("000012.json"))
    assertEquals(Some(Checkpoint.Classic(5)), FileNames.parseName("5.checkpoint.parquet"))
    assertEquals(Some(Checkpoint.MultiPart(5, 1, 2)), FileNames.parseName("5.checkpoint.1.2.parquet"))
    assertEquals(Some(Crc(7)), FileNames.parseName("7.crc"))
  }

  @Test def ignoresEverythingElse(): Unit = {
    Seq(
      "_last_checkpoint", "00000000000000000001.crc.tmp", ".00000000000000000001.json.1234-abcd.tmp",
      ".00000000000000000001.json.crc", "00000000000000000001.json.tmp", "abc.json", "-1.json",
      "00000000000000000001.checkpoint", "00000000000000000001.checkpoint.parquet.crc",
      "00000000000000000001.checkpoint.0000000003.0000000002.parquet", // part > numParts
      "00000000000000000001.checkpoint.0000000000.0000000002.parquet", // part 0
      "00000000000000000009.00000000000000000003.compacted.json", // end < start
      "99999999999999999999.json", // beyond Long
      "00000000000000000001.a1-b2.json", // staged name outside _staged_commits
      "_sidecars", "_staged_commits", "", "1.JSON", "1.json.gz", "\u0661.json" // Arabic-Indic digit
    ).foreach(n => assertEquals(None, FileNames.parseName(n), n))
    // Plain commits inside _staged_commits are not commits.
    assertEquals(None, FileNames.parse(new Path(log, "_staged_commits/00000000000000000003.json")))
    // Staged names outside _staged_commits are not staged commits.
    assertEquals(None, FileNames.parse(new Path(log, "00000000000000000003.a1-b2.json")))
  }

  @Test def paddedCommitNamesAreRecognisedWithoutARegex(): Unit = {
    assertTrue(FileNames.isPaddedCommitName("00000000000000000042.json"))
    Seq("0000000000000000042.json", "000000000000000000042.json", "0000000000000000004a.json",
      "00000000000000000042.jsoN", "00000000000000000042.crc", "\u0661000000000000000042.json")
      .foreach(n => assertFalse(FileNames.isPaddedCommitName(n), n))
    // accepted by the name check but beyond Long: not a commit
    assertTrue(FileNames.isPaddedCommitName("99999999999999999999.json"))
    assertEquals(None, FileNames.parseName("99999999999999999999.json"))
    assertEquals(Some(Commit(Long.MaxValue)), FileNames.parseName("09223372036854775807.json"))
  }

  @Test def buildersZeroPad(): Unit = {
    assertEquals(new Path(log, "00000000000000000042.json"), FileNames.deltaFile(log, 42))
    assertEquals(new Path(log, "00000000000000000010.checkpoint.parquet"), FileNames.checkpointFileSingular(log, 10))
    assertEquals(Seq(
      new Path(log, "00000000000000000010.checkpoint.0000000001.0000000003.parquet"),
      new Path(log, "00000000000000000010.checkpoint.0000000002.0000000003.parquet"),
      new Path(log, "00000000000000000010.checkpoint.0000000003.0000000003.parquet")),
      FileNames.checkpointFileWithParts(log, 10, 3))
    val u = FileNames.uuidCheckpoint(log, 4, "json")
    assertTrue(u.getName.matches("""00000000000000000004\.checkpoint\.[0-9a-f-]{36}\.json"""), u.getName)
    assertEquals(new Path(log, "00000000000000000004.checkpoint.abc.parquet"), FileNames.uuidCheckpoint(log, 4, "parquet", "abc"))
    assertThrows(classOf[IllegalArgumentException], () => FileNames.uuidCheckpoint(log, 4, "avro"))
    assertEquals(new Path(log, "_sidecars/s1.parquet"), FileNames.sidecarPath(log, "s1.parquet"))
    assertEquals(new Path(log, "00000000000000000005.crc"), FileNames.crcFile(log, 5))
    assertEquals(new Path(log, "00000000000000000001.00000000000000000004.compacted.json"), FileNames.compactionFile(log, 1, 4))
    assertEquals(new Path(log, "_staged_commits/00000000000000000002.u.json"), FileNames.stagedCommitFile(log, 2, "u"))
    assertEquals(new Path(log, "_last_checkpoint"), FileNames.lastCheckpointFile(log))
    assertEquals("00000000000000000007.", FileNames.listingPrefix(log, 7).getName)
    assertThrows(classOf[IllegalArgumentException], () => FileNames.deltaFile(log, -1))
  }

  @Test def roundTripsBuilders(): Unit = {
    Seq(0L, 1L, 9L, 10L, 123456789L, Long.MaxValue).foreach { v =>
      assertEquals(Some(Commit(v)), FileNames.parse(FileNames.deltaFile(log, v)))
      assertEquals(Some(Checkpoint.Classic(v)), FileNames.parse(FileNames.checkpointFileSingular(log, v)))
      assertEquals(Some(Crc(v)), FileNames.parse(FileNames.crcFile(log, v)))
      assertEquals(Seq(Checkpoint.MultiPart(v, 1, 2), Checkpoint.MultiPart(v, 2, 2)),
        FileNames.checkpointFileWithParts(log, v, 2).flatMap(FileNames.parse(_)))
      assertEquals(Some(Checkpoint.Uuid(v, "u-1", "json")), FileNames.parse(FileNames.uuidCheckpoint(log, v, "json", "u-1")))
      assertEquals(Some(StagedCommit(v, "u")), FileNames.parse(FileNames.stagedCommitFile(log, v, "u")))
      assertEquals(v, FileNames.deltaVersion(FileNames.deltaFile(log, v)))
    }
  }

  @Test def sortOrderWithinOneVersion(): Unit = {
    // Listing order for equal versions: compaction, checkpoint, crc, json (digest §1.2).
    val names = Seq(
      "00000000000000000005.json", "00000000000000000005.crc", "00000000000000000005.checkpoint.parquet",
      "00000000000000000005.00000000000000000007.compacted.json")
    assertEquals(Seq(
      "00000000000000000005.00000000000000000007.compacted.json", "00000000000000000005.checkpoint.parquet",
      "00000000000000000005.crc", "00000000000000000005.json"), names.sorted)
    names.foreach(n => assertTrue(n >= FileNames.listingPrefix(log, 5).getName))
    assertTrue("00000000000000000004.json" < FileNames.listingPrefix(log, 5).getName)
  }

  @Test def keepsPlaceholderHelpers(): Unit = {
    assertTrue(FileNames.isUuidCheckpoint("00000000000000000001.checkpoint.0a1b.json"))
    assertTrue(FileNames.isUuidCheckpoint("00000000000000000001.checkpoint.0a1b.parquet"))
    assertFalse(FileNames.isUuidCheckpoint("00000000000000000001.checkpoint.0000000001.0000000002.parquet"))
    assertFalse(FileNames.isUuidCheckpoint("00000000000000000001.checkpoint.parquet"))
    assertThrows(classOf[IllegalArgumentException], () => FileNames.deltaVersion(new Path(log, "00000000000000000001.crc")))
  }
}
