package io.deltalog.log

import scala.collection.mutable

import io.deltalog.exceptions.{CorruptLogFileException, TimestampOutOfRangeException}
import org.apache.hadoop.fs.{FileStatus, Path}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class CommitTimestampsSuite {
  private val log = new Path("file:/tmp/t/_delta_log")

  /** In-memory FileStatus of commit `v` with mtime `m`. */
  private def st(v: Long, m: Long): FileStatus =
    new FileStatus(10L, false, 1, 1L, m, FileNames.deltaFile(log, v))

  private def statuses(mtimes: (Long, Long)*): Seq[FileStatus] = mtimes.map { case (v, m) => st(v, m) }

  @Test def monotonizesMtimes(): Unit = {
    val ct = CommitTimestamps(statuses(0L -> 1000L, 1L -> 2000L, 2L -> 1500L, 3L -> 2001L, 4L -> 2001L, 5L -> 9000L))
    assertEquals(Seq(1000L, 2000L, 2001L, 2002L, 2003L, 9000L), (0L to 5L).map(ct.timestampOf))
    assertEquals(1000L, ct.earliestTimestamp)
    assertEquals(9000L, ct.latestTimestamp)
  }

  @Test def versionAtOrBefore(): Unit = {
    // Files listed in any order; versions start after a cleanup at 3.
    val ct = CommitTimestamps(statuses(5L -> 3000L, 3L -> 1000L, 4L -> 2000L, 6L -> 2500L), table = "tbl")
    assertEquals(Seq(3L, 4L, 5L, 6L), ct.versions)
    assertEquals(3L, ct.versionAtOrBefore(1000L))
    assertEquals(3L, ct.versionAtOrBefore(1999L))
    assertEquals(4L, ct.versionAtOrBefore(2000L))
    assertEquals(5L, ct.versionAtOrBefore(3000L))
    assertEquals(6L, ct.versionAtOrBefore(3001L)) // v6 monotonized to 3001
    val before = assertThrows(classOf[TimestampOutOfRangeException], () => ct.versionAtOrBefore(999L))
    assertEquals((999L, 1000L, 3001L), (before.requestedMs, before.earliestMs, before.latestMs))
    assertEquals("DELTA_TIMESTAMP_OUT_OF_RANGE", before.errorClass)
    assertTrue(before.getMessage.contains("tbl"))
    assertThrows(classOf[TimestampOutOfRangeException], () => ct.versionAtOrBefore(3002L))
    assertEquals(6L, ct.versionAtOrBefore(3002L, allowAfterLatest = true))
    assertEquals(6L, ct.versionAtOrBefore(Long.MaxValue, allowAfterLatest = true))
  }

  @Test def exhaustiveAgainstLinearScan(): Unit = {
    val rnd = new scala.util.Random(42)
    (1 to 50).foreach { _ =>
      val n = 1 + rnd.nextInt(30)
      val ct = CommitTimestamps((0 until n).map(v => st(v.toLong, 1000L + rnd.nextInt(40))))
      val ts = (0 until n).map(v => ct.timestampOf(v.toLong))
      assertTrue(ts.zip(ts.drop(1)).forall { case (a, b) => a < b })
      (ts.head to ts.last).foreach { t =>
        val expected = (0 until n).filter(i => ts(i) <= t).max.toLong
        assertEquals(expected, ct.versionAtOrBefore(t))
      }
    }
  }

  @Test def ictFromCreation(): Unit = {
    // mtimes are meaningless (copied table); ICTs decide.
    val icts = Map(0L -> 100L, 1L -> 200L, 2L -> 300L)
    val calls = mutable.ArrayBuffer.empty[Long]
    val ct = CommitTimestamps(statuses(0L -> 9000L, 1L -> 5L, 2L -> 7L),
      ictOf = v => { calls += v; icts.get(v) },
      ict = IctConfig.fromProperties(Map("delta.enableInCommitTimestamps" -> "true")))
    assertEquals(0L, ct.versionAtOrBefore(100L))
    assertEquals(1L, ct.versionAtOrBefore(299L))
    assertEquals(2L, ct.versionAtOrBefore(300L))
    assertThrows(classOf[TimestampOutOfRangeException], () => ct.versionAtOrBefore(99L))
    assertEquals(300L, ct.timestampOf(2))
    assertTrue(calls.distinct.size == calls.size, "ICTs are read once per version")
  }

  @Test def ictEnabledOnTableWithHistory(): Unit = {
    // v0..v3 by mtime (2 is out of order), ICT from v4 (enablement timestamp 5000).
    val icts = Map(4L -> 5000L, 5L -> 6000L, 6L -> 6001L, 7L -> 8000L)
    val props = Map(
      "delta.enableInCommitTimestamps" -> "true",
      "delta.inCommitTimestampEnablementVersion" -> "4",
      "delta.inCommitTimestampEnablementTimestamp" -> "5000")
    val read = mutable.Set.empty[Long]
    val ct = CommitTimestamps(
      statuses(0L -> 1000L, 1L -> 2000L, 2L -> 1900L, 3L -> 3000L, 4L -> 99999L, 5L -> 1L, 6L -> 2L, 7L -> 3L),
      ictOf = v => { assertTrue(v >= 4, s"ICT read for pre-enablement version $v"); read += v; icts.get(v) },
      ict = IctConfig.fromProperties(props))
    assertEquals(Seq(1000L, 2000L, 2001L, 3000L, 5000L, 6000L, 6001L, 8000L), (0L to 7L).map(ct.timestampOf))
    assertEquals(0L, ct.versionAtOrBefore(1000L))
    assertEquals(2L, ct.versionAtOrBefore(2001L))
    assertEquals(3L, ct.versionAtOrBefore(4999L)) // before the enablement timestamp: mtime side only
    assertEquals(4L, ct.versionAtOrBefore(5000L))
    assertEquals(5L, ct.versionAtOrBefore(6000L))
    assertEquals(7L, ct.versionAtOrBefore(8000L))
    assertThrows(classOf[TimestampOutOfRangeException], () => ct.versionAtOrBefore(8001L))
    assertThrows(classOf[TimestampOutOfRangeException], () => ct.versionAtOrBefore(999L))
  }

  @Test def ictWithPreEnablementHistoryCleanedUp(): Unit = {
    val icts = Map(10L -> 500L, 11L -> 600L)
    val ct = CommitTimestamps(statuses(10L -> 1L, 11L -> 1L), icts.get,
      IctConfig(enabled = true, enablementVersion = Some(4L), enablementTimestamp = Some(100L)))
    assertEquals(10L, ct.versionAtOrBefore(599L))
    assertThrows(classOf[TimestampOutOfRangeException], () => ct.versionAtOrBefore(499L))
  }

  @Test def missingIctIsACorruptLog(): Unit = {
    val ct = CommitTimestamps(statuses(0L -> 1L, 1L -> 2L), _ => None, IctConfig(enabled = true, None, None))
    val e = assertThrows(classOf[CorruptLogFileException], () => ct.versionAtOrBefore(5L))
    assertTrue(e.getMessage.contains("00000000000000000"), e.getMessage)
  }

  @Test def ictConfigFromProperties(): Unit = {
    assertEquals(IctConfig.Disabled, IctConfig.fromProperties(Map.empty))
    assertEquals(None, IctConfig.fromProperties(Map("delta.enableInCommitTimestamps" -> "false")).firstIctVersion)
    assertEquals(Some(7L), IctConfig.fromProperties(Map(
      "delta.enableInCommitTimestamps" -> "TRUE", "delta.inCommitTimestampEnablementVersion" -> "7")).firstIctVersion)
  }

  @Test def worksOnRealFiles(): Unit = {
    import LogTestFiles._
    val (_, logPath) = newTable()
    commit(logPath, 0, mtime = 1_600_000_000_000L)
    commit(logPath, 1, mtime = 1_600_000_000_000L) // same second: monotonized
    commit(logPath, 2, mtime = 1_600_000_100_000L)
    val ct = CommitTimestamps(LogSegmentBuilder.listCommits(fs, logPath))
    assertEquals(1_600_000_000_001L, ct.timestampOf(1))
    assertEquals(1L, ct.versionAtOrBefore(1_600_000_050_000L))
    assertThrows(classOf[IllegalArgumentException], () => CommitTimestamps(Nil))
  }
}
