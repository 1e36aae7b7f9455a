package io.deltalog.txn

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.log.{FileNames, LastCheckpointInfo, Snapshot}

class PostCommitSuite {
  import TxnTestSupport._

  private def checkpointExists(dl: io.deltalog.log.DeltaLog, v: Long): Boolean =
    new File(FileNames.checkpointFileSingular(dl.logPath, v).toUri).exists()

  @Test def checkpointAtInterval(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.checkpointInterval" -> "3"))
    (1 to 4).foreach(i => commitNew(dl, Seq(add(s"f$i"))))
    assertFalse(checkpointExists(dl, 0))
    assertTrue(checkpointExists(dl, 3))
    assertFalse(checkpointExists(dl, 4))
    assertEquals(Some(3L), LastCheckpointInfo.read(dl.fs, dl.logPath).map(_.version))
    // A fresh reader uses it.
    val fresh = newLog(d)
    assertEquals(Some(3L), fresh.update().logSegment.checkpointVersion)
    assertEquals(4L, fresh.update().numFiles)
  }

  @Test def defaultIntervalIsTen(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    (1 to 10).foreach(i => commitNew(dl, Seq(add(s"f$i"))))
    assertTrue(checkpointExists(dl, 10))
    assertFalse((1 to 9).exists(v => checkpointExists(dl, v)))
  }

  @Test def failedCheckpointDoesNotFailTheCommit(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.checkpointInterval" -> "1"))
    val txn = OptimisticTransaction.start(dl)
    var called = false
    txn.checkpointer = (_, _) => { called = true; throw new IllegalStateException("disk full") }
    assertEquals(1L, txn.commit(Seq(add("a")), Operation.write()))
    assertTrue(called)
    assertTrue(txn.committed)
    assertFalse(checkpointExists(dl, 1))
    assertEquals(Set("a"), livePaths(dl))
  }

  @Test def hookErrorsGoToHandleError(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val handled = mutable.ArrayBuffer.empty[(String, Long)]
    val ran = mutable.ArrayBuffer.empty[Long]
    val failing = new PostCommitHook {
      val name = "failing"
      def run(txn: OptimisticTransaction, v: Long, s: Snapshot, a: Seq[Action]): Unit = throw new RuntimeException("boom")
      override def handleError(error: Throwable, version: Long): Unit = handled += ((error.getMessage, version))
    }
    val ok = new PostCommitHook {
      val name = "ok"
      def run(txn: OptimisticTransaction, v: Long, s: Snapshot, a: Seq[Action]): Unit = {
        assertEquals(v, s.version)
        ran += v
      }
    }
    val txn = OptimisticTransaction.start(dl)
    txn.registerPostCommitHook(failing)
    txn.registerPostCommitHook(ok)
    assertEquals(1L, txn.commit(Seq(add("a")), Operation.write()))
    assertEquals(Seq(("boom", 1L)), handled.toSeq)
    assertEquals(Seq(1L), ran.toSeq)
  }

  private def read(f: File): Seq[String] =
    new String(Files.readAllBytes(f.toPath), StandardCharsets.UTF_8).linesIterator.toSeq

  @Test def symlinkManifestPartitioned(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, Seq("p"), Map(GenerateSymlinkManifest.EnabledKey -> "true"))
    commitNew(dl, Seq(add("p=a/1.parquet", Map("p" -> "a")), add("p=a/2.parquet", Map("p" -> "a")),
      add("p=b%3Ax/3.parquet", Map("p" -> "b:x"))))
    val root = new File(d.toFile, "_symlink_format_manifest")
    val ma = new File(root, "p=a/manifest")
    assertTrue(ma.exists())
    assertEquals(Seq(s"${dl.tablePath}/p=a/1.parquet", s"${dl.tablePath}/p=a/2.parquet"), read(ma))
    val mb = new File(root, "p=b%3Ax/manifest")
    assertTrue(mb.exists(), root.list().mkString(","))
    assertEquals(Seq(s"${dl.tablePath}/p=b:x/3.parquet"), read(mb))
    // Removing every file of p=b drops its manifest.
    val b = dl.update().allFiles.find(_.path.startsWith("p=b")).get
    commitNew(dl, Seq(b.remove(1L)), Operation.delete())
    assertFalse(mb.exists())
    assertTrue(ma.exists())
  }

  @Test def symlinkManifestUnpartitioned(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map(GenerateSymlinkManifest.EnabledKey -> "true"))
    commitNew(dl, Seq(add("x.parquet"), add("/abs/y.parquet".replace("/abs", d.resolve("abs").toUri.toString.stripSuffix("/")))))
    val m = new File(d.toFile, "_symlink_format_manifest/manifest")
    assertTrue(m.exists())
    val lines = read(m)
    assertEquals(2, lines.size)
    assertTrue(lines.contains(s"${dl.tablePath}/x.parquet"), lines.toString)
  }

  @Test def noManifestWhenDisabled(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    commitNew(dl, Seq(add("x.parquet")))
    assertFalse(new File(d.toFile, "_symlink_format_manifest").exists())
  }
}
