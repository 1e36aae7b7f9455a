package io.deltalog.txn

import java.io.File

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.exceptions.DeltalogException
import io.deltalog.log.{DeltaLog, FileNames, MetadataCleanup}

/**
 * Log retention after automatic checkpoints (digest §4.5): `delta.enableExpiredLogCleanup`,
 * `delta.logRetentionDuration`, the kept checkpoint and its commit, checkpoint protection and
 * V2 sidecars. Commits are aged by their file times (or in-commit timestamps).
 */
class MetadataCleanupSuite {
  import TxnTestSupport._

  private val Day = 24L * 3600 * 1000
  private def now = System.currentTimeMillis()

  private def logFiles(dl: DeltaLog): Seq[String] =
    new File(dl.logPath.toUri).listFiles().filter(_.isFile).map(_.getName).filterNot(_.startsWith(".")).sorted.toSeq

  private def commits(dl: DeltaLog): Seq[Long] =
    logFiles(dl).filter(_.endsWith(".json")).filterNot(_.contains("checkpoint")).map(_.takeWhile(_ != '.').toLong)

  private def checkpoints(dl: DeltaLog): Seq[Long] =
    logFiles(dl).filter(_.contains(".checkpoint")).map(_.takeWhile(_ != '.').toLong).distinct

  /** Sets the modification time of every log file (and sidecar) of versions <= `upTo`. */
  private def age(dl: DeltaLog, upTo: Long, ms: Long): Unit = {
    val dir = new File(dl.logPath.toUri)
    dir.listFiles().filter(f => f.isFile && f.getName.head.isDigit && f.getName.takeWhile(_ != '.').toLong <= upTo)
      .foreach(f => assertTrue(f.setLastModified(ms)))
  }

  /** Versions 0..`n` (one add each after the create), checkpoint every 10. */
  private def table(d: java.nio.file.Path, n: Int, conf: Map[String, String] = Map.empty,
      clockAt: Long => Clock = _ => Clock.system)(beforeCommit: Long => Unit = _ => ()): DeltaLog = {
    val dl = newLog(d)
    val t0 = OptimisticTransaction.start(dl, clockAt(0))
    t0.updateMetadata(metadata(conf = conf))
    t0.commit(Nil, Operation.createTable())
    (1 to n).foreach { v =>
      beforeCommit(v)
      OptimisticTransaction.start(dl, clockAt(v)).commit(Seq(add(s"f$v")), Operation.write())
    }
    dl
  }

  @Test def expiredCommitsBeforeTheNewestOldCheckpointAreDeleted(): Unit = withDir { d =>
    val dl = table(d, 24)()
    age(dl, 14, now - 40 * Day)          // 0..14 older than 30 days; checkpoints at 10 and 20
    (25 to 30).foreach(v => commitNew(dl, Seq(add(s"f$v"))))
    // newest commit before the cut-off is 14, the newest checkpoint at or before it is 10
    assertEquals(10L to 30L, commits(dl))
    assertEquals(Seq(10L, 20L, 30L), checkpoints(dl))
    val fresh = newLog(d)
    assertEquals((1 to 30).map(v => s"f$v").toSet, fresh.update().allFiles.map(_.path).toSet)
    assertEquals((1 to 10).map(v => s"f$v").toSet, fresh.snapshotAt(10).allFiles.map(_.path).toSet)
    assertThrows(classOf[DeltalogException], () => { fresh.snapshotAt(9); () })
  }

  @Test def nothingIsDeletedWhenDisabledOrWithinRetention(): Unit = withDir { d =>
    val off = table(d.resolve("off"), 24, Map("delta.enableExpiredLogCleanup" -> "false"))()
    age(off, 14, now - 40 * Day)
    (25 to 30).foreach(v => commitNew(off, Seq(add(s"f$v"))))
    assertEquals(0L to 30L, commits(off))
    val long = table(d.resolve("long"), 24, Map("delta.logRetentionDuration" -> "interval 60 days"))()
    age(long, 14, now - 40 * Day)
    (25 to 30).foreach(v => commitNew(long, Seq(add(s"f$v"))))
    assertEquals(0L to 30L, commits(long))
  }

  @Test def shortRetentionKeepsTheCheckpointAndItsCommit(): Unit = withDir { d =>
    val dl = table(d, 24, Map("delta.logRetentionDuration" -> "interval 2 days",
      "delta.deletedFileRetentionDuration" -> "interval 1 days"))()
    age(dl, 24, now - 3 * Day)
    (25 to 30).foreach(v => commitNew(dl, Seq(add(s"f$v"))))
    // all of 0..24 are older than the cut-off: checkpoint 20 and its commit are kept
    assertEquals(20L to 30L, commits(dl))
    assertEquals(Seq(20L, 30L), checkpoints(dl))
    assertEquals((1 to 20).map(v => s"f$v").toSet, newLog(d).snapshotAt(20).allFiles.map(_.path).toSet)
  }

  @Test def inCommitTimestampsDecideWhatIsOld(): Unit = withDir { d =>
    val old = now - 40 * Day
    val dl = table(d, 30, Map("delta.enableInCommitTimestamps" -> "true"),
      clockAt = v => Clock.fixed(if (v <= 14) old + v else now))()
    // file times are all recent; the in-commit timestamps of 0..14 are 40 days old
    assertEquals(10L to 30L, commits(dl))
  }

  @Test def checkpointProtectionKeepsProtectedHistoryWhole(): Unit = withDir { d =>
    val dl = table(d, 24)()
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = Map(MetadataCleanup.ProtectBeforeKey -> "15",
      "delta.feature.checkpointProtection" -> "supported")))
    assertEquals(25L, txn.commit(Nil, Operation.setTableProperties(Map(MetadataCleanup.ProtectBeforeKey -> "15"))))
    age(dl, 14, now - 40 * Day)
    (26 to 30).foreach(v => commitNew(dl, Seq(add(s"f$v"))))
    // the kept checkpoint (10) is before the protected version 15: no partial cleanup
    assertEquals(0L to 30L, commits(dl))
    age(dl, 29, now - 40 * Day)
    (31 to 40).foreach(v => commitNew(dl, Seq(add(s"f$v"))))
    // now checkpoint 20 (>= 15) is kept: everything before the boundary goes at once
    assertEquals(20L to 40L, commits(dl))
  }

  @Test def sidecarsOfDeletedV2CheckpointsAreDeleted(): Unit = withDir { d =>
    val conf = Map("delta.checkpointPolicy" -> "v2", "delta.deletedFileRetentionDuration" -> "interval 1 days")
    val sidecarDir = new File(d.resolve("_delta_log").toFile, FileNames.SidecarDirName)
    def sidecars = Option(sidecarDir.listFiles()).toSeq.flatten.map(_.getName).toSet
    var ofTen = Set.empty[String]
    val dl = table(d, 24, conf)(v => if (v == 11) ofTen = sidecars)
    val all = sidecars
    val ofTwenty = all -- ofTen
    assertTrue(ofTen.nonEmpty && ofTwenty.nonEmpty, s"sidecars: $all")
    age(dl, 24, now - 3 * Day)
    sidecarDir.listFiles().foreach(f => assertTrue(f.setLastModified(now - 3 * Day)))
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = conf + ("delta.logRetentionDuration" -> "interval 1 days")))
    txn.commit(Nil, Operation.setTableProperties(Map("delta.logRetentionDuration" -> "interval 1 days")))
    (26 to 30).foreach(v => commitNew(dl, Seq(add(s"f$v"))))
    assertEquals(20L to 30L, commits(dl))
    val left = sidecars
    // the sidecars of checkpoint 10 are gone, those of 20 (still referenced) and 30 stay
    assertTrue(left.intersect(ofTen).isEmpty && ofTwenty.subsetOf(left) && (left -- all).nonEmpty,
      s"checkpoint 10: $ofTen, 20: $ofTwenty, after: $left")
    assertEquals((1 to 30).filter(_ != 25).map(v => s"f$v").toSet, newLog(d).update().allFiles.map(_.path).toSet)
    assertEquals((1 to 20).map(v => s"f$v").toSet, newLog(d).snapshotAt(20).allFiles.map(_.path).toSet)
  }
}
