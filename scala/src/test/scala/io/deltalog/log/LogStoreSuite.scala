package io.deltalog.log

import java.io.{File, FileNotFoundException, IOException}
import java.nio.charset.StandardCharsets
import java.nio.file.{FileAlreadyExistsException, Files}

import io.deltalog.exceptions.CorruptLogFileException
import org.apache.hadoop.fs.Path
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class LogStoreSuite {
  import LogTestFiles._

  private val store = LogStore(fs)

  private def bytes(s: String) = s.getBytes(StandardCharsets.UTF_8)

  @Test def listFromIsSortedAndStartsAtPrefix(): Unit = {
    val (_, log) = newTable()
    Seq(3L, 1L, 0L, 2L, 10L).foreach(v => commit(log, v))
    classicCheckpoint(log, 2)
    put(log, "00000000000000000002.crc")
    put(log, "_last_checkpoint", """{"version":2,"size":1}""")
    put(log, ".00000000000000000011.json.abc.tmp")
    new File(new File(log.toUri), "_sidecars").mkdirs()
    val names = store.listFrom(log, 2).map(_.getPath.getName).toSeq
    assertEquals(Seq(
      "00000000000000000002.checkpoint.parquet", "00000000000000000002.crc", "00000000000000000002.json",
      "00000000000000000003.json", "00000000000000000010.json", "_last_checkpoint"), names)
    assertEquals(7, store.listFrom(log, 0).count(n => FileNames.parse(n.getPath).isDefined))
    assertEquals(Nil, store.listFrom(log, 11).filter(s => FileNames.parse(s).isDefined).toSeq)
  }

  @Test def listedCommitsAreStattedOnFirstUse(): Unit = {
    val (_, log) = newTable()
    commit(log, 0, mtime = 1000000L)
    put(log, "00000000000000000001.json", "{\"commitInfo\":{\"a\":1}}\n", mtime = 2000000L)
    classicCheckpoint(log, 1, "PAR1PAR1")
    new File(new File(log.toUri), "00000000000000000001.checkpoint.parquet.d").mkdirs()
    val listed = store.listFrom(log, 0).toSeq
    val byName = listed.map(s => LocalLogFile.nameOf(s) -> s).toMap
    assertEquals(Seq("00000000000000000000.json", "00000000000000000001.checkpoint.parquet", "00000000000000000001.json"),
      listed.map(LocalLogFile.nameOf), "directories are not listed")
    val c1 = byName("00000000000000000001.json").asInstanceOf[LocalLogFile]
    assertFalse(c1.isStatted, "a commit is not statted by the listing")
    assertEquals(LocalLogFile.AssumedCommitBytes, LocalLogFile.lengthHint(c1))
    val cp = byName("00000000000000000001.checkpoint.parquet").asInstanceOf[LocalLogFile]
    assertTrue(cp.isStatted, "other files are statted by the listing")
    assertEquals(8L, LocalLogFile.lengthHint(cp))
    // first use: the real values, same as Hadoop's status
    val hadoop = fs.getFileStatus(new Path(log, "00000000000000000001.json"))
    assertEquals(hadoop.getLen, c1.getLen)
    assertEquals(hadoop.getModificationTime, c1.getModificationTime)
    assertTrue(c1.isStatted)
    assertEquals(hadoop.getPath, c1.getPath)
    assertEquals(hadoop, c1, "equal to Hadoop's status of the same file (by path)")
    assertEquals(1000000L, byName("00000000000000000000.json").getModificationTime)
    // reading a commit whole tells its length (sizing estimates use it) without a stat
    val again = store.listFrom(log, 1).toSeq.collectFirst { case l: LocalLogFile if l.name.endsWith(".json") => l }.get
    new CommitReader(fs).read(again)
    assertTrue(again.isLengthKnown)
    assertFalse(again.isStatted)
    assertEquals(hadoop.getLen, LocalLogFile.lengthHint(again))
    assertEquals(hadoop.getModificationTime, again.getModificationTime)
    assertTrue(again.isStatted)
  }

  @Test def listedCommitSerialisesAsAPlainHadoopStatus(): Unit = {
    val (_, log) = newTable()
    commit(log, 0, mtime = 3000000L)
    val c0 = store.listFrom(log, 0).toSeq.head
    assertTrue(c0.isInstanceOf[LocalLogFile])
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(c0)
    out.close()
    val back = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[org.apache.hadoop.fs.FileStatus]
    // stat on the sending side: a lazy status would stat the receiver's own disk (an executor's)
    assertFalse(back.isInstanceOf[LocalLogFile], "arrives as a plain Hadoop status")
    assertEquals(c0.getPath, back.getPath)
    assertEquals(c0.getLen, back.getLen)
    assertEquals(3000000L, back.getModificationTime)
  }

  @Test def commitThatVanishedAfterTheListingFailsWhenRead(): Unit = {
    val (_, log) = newTable()
    commit(log, 0)
    val c0 = store.listFrom(log, 0).toSeq.head
    delete(log, "00000000000000000000.json")
    assertEquals(0L, c0.getLen)
    val e = assertThrows(classOf[CorruptLogFileException], () => new CommitReader(fs).read(c0))
    assertTrue(e.getMessage.contains("00000000000000000000.json"), e.getMessage)
  }

  @Test def listFromMissingDirThrows(): Unit = {
    val (dir, _) = newTable()
    assertThrows(classOf[FileNotFoundException], () => store.listFrom(new Path(new File(dir, "nope").toURI), 0))
  }

  @Test def readLinesToleratesMissingFinalNewlineAndCrLf(): Unit = {
    val (_, log) = newTable()
    put(log, "a.json", "{\"a\":1}\r\n{\"b\":\"é\"}\n\n{\"c\":3}")
    val it = store.readLines(new Path(log, "a.json"))
    assertEquals(Seq("{\"a\":1}", "{\"b\":\"é\"}", "", "{\"c\":3}"), it.toSeq)
    assertFalse(it.hasNext)
    put(log, "empty.json", "")
    assertEquals(Nil, store.readLines(new Path(log, "empty.json")).toSeq)
    put(log, "one.json", "x\n")
    assertEquals(Seq("x"), store.readLines(new Path(log, "one.json")).toSeq)
  }

  @Test def readLinesRejectsInvalidUtf8(): Unit = {
    val (_, log) = newTable()
    val f = new File(new File(log.toUri), "bad.json")
    Files.write(f.toPath, Array[Byte]('{', 0xC3.toByte, 0x28, '}', '\n'))
    val e = assertThrows(classOf[CorruptLogFileException], () => store.readLines(new Path(log, "bad.json")).toSeq)
    assertTrue(e.getMessage.contains("bad.json"))
    assertThrows(classOf[CorruptLogFileException], () => store.readAll(new Path(log, "bad.json")))
  }

  @Test def readBytesAndExists(): Unit = {
    val (_, log) = newTable()
    put(log, "b.bin", "hello")
    assertArrayEquals(bytes("hello"), store.readBytes(new Path(log, "b.bin")))
    assertEquals("hello", store.readAll(new Path(log, "b.bin")))
    assertTrue(store.exists(new Path(log, "b.bin")))
    assertFalse(store.exists(new Path(log, "c.bin")))
    // a missing file is a FileNotFoundException, as through Hadoop (callers treat it as "absent")
    val e = assertThrows(classOf[java.io.FileNotFoundException], () => store.readBytes(new Path(log, "c.bin")))
    assertTrue(e.getMessage.contains("c.bin"), e.getMessage)
    assertThrows(classOf[java.io.FileNotFoundException], () => store.readAll(new Path(log, "c.bin")))
    // through a file: URI too
    assertArrayEquals(bytes("hello"), store.readBytes(new Path(new Path(log, "b.bin").toUri.toString)))
  }

  @Test def writeAtomicallyCreatesAndLeavesNoTemp(): Unit = {
    val (_, log) = newTable()
    val p = FileNames.deltaFile(log, 0)
    store.writeAtomically(p, overwrite = false)(_.write(bytes("v0\n")))
    assertEquals("v0\n", store.readAll(p))
    assertEquals(Seq("00000000000000000000.json"), listNames(log))
  }

  @Test def writeAtomicallyWithoutOverwriteNeverReplaces(): Unit = {
    val (_, log) = newTable()
    val p = FileNames.deltaFile(log, 0)
    store.writeAtomically(p, overwrite = false)(_.write(bytes("first")))
    assertThrows(classOf[FileAlreadyExistsException], () =>
      store.writeAtomically(p, overwrite = false) (_.write(bytes("second"))))
    assertEquals("first", store.readAll(p))
    assertEquals(Seq("00000000000000000000.json"), listNames(log))
    // Target appearing while the temp file is being written (a racing writer) is not replaced either.
    val q = FileNames.deltaFile(log, 1)
    assertThrows(classOf[FileAlreadyExistsException], () =>
      store.writeAtomically(q, overwrite = false) { out =>
        out.write(bytes("loser"))
        Files.write(new File(q.toUri).toPath, bytes("winner"))
      })
    assertEquals("winner", store.readAll(q))
    assertEquals(Seq("00000000000000000000.json", "00000000000000000001.json"), listNames(log))
  }

  @Test def writeAtomicallyOverwriteReplaces(): Unit = {
    val (_, log) = newTable()
    val p = FileNames.lastCheckpointFile(log)
    store.writeAtomically(p, overwrite = true)(_.write(bytes("a")))
    store.writeAtomically(p, overwrite = true)(_.write(bytes("bb")))
    assertEquals("bb", store.readAll(p))
    assertEquals(Seq("_last_checkpoint"), listNames(log))
  }

  @Test def writeAtomicallyRemovesTempOnFailure(): Unit = {
    val (_, log) = newTable()
    val p = FileNames.checkpointFileSingular(log, 3)
    val e = assertThrows(classOf[IOException], () =>
      store.writeAtomically(p, overwrite = false) { out => out.write(bytes("partial")); throw new IOException("boom") })
    assertEquals("boom", e.getMessage)
    assertEquals(Nil, listNames(log))
    assertFalse(store.exists(p))
  }

  @Test def crashedTempFileIsIgnoredByListingAndSegments(): Unit = {
    val (_, log) = newTable()
    commit(log, 0)
    // What a crash mid-write of commit 1 leaves behind.
    put(log, s".${FileNames.deltaFile(log, 1).getName}.0b7e7a5e-1111-2222-3333-444455556666.tmp", "{\"add\":")
    assertEquals(Seq("00000000000000000000.json"), store.listFrom(log, 0).map(_.getPath.getName).toSeq)
    assertEquals(0L, LogSegmentBuilder.build(fs, log, None, None).version)
  }

  @Test def writeAtomicallyCreatesParentDirectory(): Unit = {
    val (_, log) = newTable()
    val p = FileNames.sidecarPath(log, "s.parquet")
    store.writeAtomically(p, overwrite = false)(_.write(bytes("PAR1")))
    assertTrue(store.exists(p))
    assertEquals(Seq("s.parquet"), Option(new File(new File(log.toUri), "_sidecars").list()).get.toSeq)
  }

  @Test def stagedCommitIsOfferedToSuccessiveVersionsUntilOneIsFree(): Unit = {
    val (_, log) = newTable()
    commit(log, 0)
    val dir = new File(log.toUri)
    val staged = store.stage(log, bytes("{\"commitInfo\":{\"a\":1}}\n"), durable = true).get
    def temps = dir.list().filter(_.endsWith(".tmp")).toSeq
    assertEquals(1, temps.size, "one hidden staged file")
    assertFalse(store.publish(staged, FileNames.deltaFile(log, 0)), "version 0 is taken")
    assertEquals("{\"commitInfo\":{}}\n", new String(Files.readAllBytes(new File(dir,
      "00000000000000000000.json").toPath), StandardCharsets.UTF_8), "the existing commit is untouched")
    assertEquals(1, temps.size, "a lost race keeps the staged file for the next attempt")
    assertTrue(store.publish(staged, FileNames.deltaFile(log, 1)))
    assertEquals("{\"commitInfo\":{\"a\":1}}\n",
      new String(Files.readAllBytes(new File(dir, "00000000000000000001.json").toPath), StandardCharsets.UTF_8))
    assertFalse(store.publish(staged, FileNames.deltaFile(log, 1)), "never replaces a commit")
    store.discard(staged)
    assertEquals(Nil, temps, "discard removes the staged file")
  }
}

class LogStorePutIfAbsentGuardSuite {
  import org.apache.hadoop.conf.Configuration
  import org.apache.hadoop.fs.Path
  import org.junit.jupiter.api.Assertions._
  import org.junit.jupiter.api.Test

  @Test def objectStoresAreRefusedUnlessAllowed(): Unit = {
    val p = new Path("s3a://bucket/t/_delta_log/00000000000000000001.json")
    val e = assertThrows(classOf[io.deltalog.exceptions.DeltalogException],
      () => LogStore.assertPutIfAbsentIsAtomic("s3a", new Configuration(), p))
    assertEquals("DELTA_UNSAFE_LOG_STORE", e.errorClass)
    assertTrue(e.getMessage.contains("s3a") && e.getMessage.contains(LogStore.AllowUnsafeKey), e.getMessage)
    val conf = new Configuration()
    conf.setBoolean(LogStore.AllowUnsafeKey, true)
    LogStore.assertPutIfAbsentIsAtomic("s3a", conf, p)
    Seq("file", "hdfs", "abfss").foreach(s => LogStore.assertPutIfAbsentIsAtomic(s, new Configuration(), p))
    assertThrows(classOf[io.deltalog.exceptions.DeltalogException],
      () => LogStore.assertPutIfAbsentIsAtomic("gs", new Configuration(), p))
  }
}
