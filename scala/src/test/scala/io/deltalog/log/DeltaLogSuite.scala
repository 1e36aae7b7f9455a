package io.deltalog.log

import java.nio.file.Files
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.ConformanceCorpus
import io.deltalog.actions._
import io.deltalog.exceptions._

class DeltaLogSuite {
  import LogTestSupport._

  private def withTable(body: java.nio.file.Path => Unit): Unit = {
    val t = newTable()
    try body(t) finally deleteRecursively(t)
  }

  /** Counts checkpoint reads of the default source. */
  private final class CountingSource extends CheckpointSource {
    val reads = new AtomicInteger()
    def read(conf: Configuration, checkpoint: CheckpointInstance, sink: ReplaySink, skipRemoves: Boolean): Unit = {
      reads.incrementAndGet(); CheckpointSource.Files.read(conf, checkpoint, sink, skipRemoves)
    }
    def readProtocolAndMetadata(conf: Configuration, checkpoint: CheckpointInstance) = {
      reads.incrementAndGet(); CheckpointSource.Files.readProtocolAndMetadata(conf, checkpoint)
    }
  }

  @Test def forTableNormalisesPaths(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta()))
    DeltaLog.clearCache()
    val a = DeltaLog.forTable(t.toString, conf)
    val b = DeltaLog.forTable(t.toUri.toString, conf)        // file:/... URI
    val c = DeltaLog.forTable(t.toString + "/", conf)
    assertSame(a, b)
    assertSame(a, c)
    assertEquals("file", a.tablePath.toUri.getScheme)
    assertEquals(0L, a.snapshot().version)
    assertSame(a.snapshot(), a.snapshot(), "latest snapshot is cached")
  }

  @Test def openingAJsonOnlyTableReadsEachCommitOnce(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a"), add("b")))
    (1 to 20).foreach(v => writeCommit(t, v, Seq(add(s"f$v"), remove(if (v == 1) "a" else s"f${v - 1}", v))))
    val reference = DeltaLog.uncached(t.toString, conf).update()
    val expected = reference.allFiles.map(_.path).toSet
    assertEquals(Set("b", "f20"), expected)

    // metadata first (the scan reads every commit: metaData is in commit 0), then the files
    val log = DeltaLog.uncached(t.toString, conf)
    val s = log.update()
    assertEquals(21L, log.commitFilesRead.get(), "the metadata scan read each commit")
    assertEquals(expected, s.allFiles.map(_.path).toSet)
    assertEquals(reference.state.tombstones.map(_.path).toSet, s.state.tombstones.map(_.path).toSet)
    assertEquals(21L, log.commitFilesRead.get(), "the replay reused the bytes the scan read")

    // a scan of another snapshot in between empties the kept bytes: the replay reads again
    val log2 = DeltaLog.uncached(t.toString, conf)
    val s2 = log2.update()
    DeltaLog.uncached(t.toString, conf).update() // another metadata scan
    assertEquals(expected, s2.allFiles.map(_.path).toSet)
    assertEquals(42L, log2.commitFilesRead.get(), "nothing kept: every commit read twice")
  }

  @Test def tableNotFound(): Unit = withTable { t =>
    val missing = t.resolve("nope").toString
    assertThrows(classOf[TableNotFoundException], () => DeltaLog.uncached(missing, conf).snapshot())
    // empty _delta_log
    assertThrows(classOf[TableNotFoundException], () => DeltaLog.uncached(t.toString, conf).snapshot())
  }

  @Test def incrementalUpdateReadsOnlyNewCommits(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a"), add("b")))
    writeCommit(t, 1, Seq(add("c")))
    val forCp = new InMemoryLogReplay(None, None)
    forCp.append(0, Seq(protocol12, meta(), add("a"), add("b")).iterator)
    forCp.append(1, Seq(add("c")).iterator)
    writeJsonCheckpoint(t, 1, forCp.checkpoint.toSeq)
    writeCommit(t, 2, Seq(add("d"), remove("a", 5)))
    val source = new CountingSource
    val log = DeltaLog.uncached(t.toString, conf, source)
    val s1 = log.snapshot()
    assertEquals(3L, s1.numFiles)
    assertEquals(Set(s"${v20(2)}.json"), log.recentCommitReads.names.toSet, "only commit 2 is read (checkpoint at 1)")
    val cpReads = source.reads.get()

    // nothing new: same snapshot
    val readsBefore = log.commitFilesRead.get()
    assertSame(s1, log.update())
    assertEquals(readsBefore, log.commitFilesRead.get())
    log.recentCommitReads.clear()

    writeCommit(t, 3, Seq(add("e"), remove("b", 6)))
    writeCommit(t, 4, Seq(add("a", size = 9), SetTransaction("app", 3, None)))
    val before = log.commitFilesRead.get()
    val s2 = log.update()
    assertEquals(4L, s2.version)
    assertEquals(Set("a", "c", "d", "e"), s2.allFiles.map(_.path).toSet)
    assertEquals(Seq("app"), s2.setTransactions.map(_.appId))
    assertTrue(log.commitFilesRead.get() > before)
    assertEquals(Set(s"${v20(3)}.json", s"${v20(4)}.json"), log.recentCommitReads.names.toSet,
      "only the two new commits are read")
    assertEquals(cpReads, source.reads.get(), "the checkpoint is not read again")
    assertSame(s1.state.chunks.head, s2.state.chunks.head, "unchanged chunk is shared")
    assertEquals(Seq(remove("a", 5), remove("b", 6)).map(_.copy(dataChange = false)).map(_.path).toSet - "a",
      s2.state.tombstones.map(_.path).toSet)

    // same result as a fresh load
    val fresh = DeltaLog.uncached(t.toString, conf).snapshot()
    assertEquals(fresh.allFiles.toSet, s2.allFiles.toSet)
    assertEquals(fresh.state.tombstones.toSet, s2.state.tombstones.toSet)

    // update before the previous state was loaded: full load of the new segment
    writeCommit(t, 5, Seq(add("f")))
    val log2 = DeltaLog.uncached(t.toString, conf)
    log2.snapshot()
    writeCommit(t, 6, Seq(add("g")))
    assertEquals(6L, log2.update().numFiles)
  }

  // ---------------------------------------------------------------------------------------------
  // update(): freshness without listing, and every case where the log changed under the cache

  private def files(s: Snapshot): Set[String] = s.allFiles.map(_.path).toSet

  /** `log.update()` equals a fresh load of the table (version and live files). */
  private def assertFresh(t: java.nio.file.Path, log: DeltaLog): Snapshot = {
    val s = log.update()
    val fresh = DeltaLog.uncached(t.toString, conf).snapshot()
    assertEquals(fresh.version, s.version)
    assertEquals(files(fresh), files(s))
    s
  }

  private def recreateLog(t: java.nio.file.Path): Unit = {
    deleteRecursively(logDir(t))
    Files.createDirectories(logDir(t))
  }

  @Test def commitFileNamesAsFileNamesWritesThem(): Unit = {
    val log = new org.apache.hadoop.fs.Path("/t/_delta_log")
    for (v <- Seq(0L, 7L, 999L, 1234567890123L, Long.MaxValue)) {
      assertEquals(FileNames.deltaFile(log, v).getName, LogStore.commitFileName(v))
    }
    assertThrows(classOf[IllegalArgumentException], () => { LogStore.commitFileName(-1L); () })
  }

  @Test def updateWithoutChangesDoesNotList(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    writeCommit(t, 1, Seq(add("b")))
    val log = DeltaLog.uncached(t.toString, conf)
    val s = log.update()
    val listings = log.updateListings.get()
    for (_ <- 1 to 3) assertSame(s, log.update())
    assertEquals(listings, log.updateListings.get(), "unchanged log: two lookups, no listing")

    // latest version is a checkpoint with no commit after it: same shortcut
    val forCp = new InMemoryLogReplay(None, None)
    forCp.append(0, Seq(protocol12, meta(), add("a")).iterator)
    forCp.append(1, Seq(add("b")).iterator)
    writeJsonCheckpoint(t, 1, forCp.checkpoint.toSeq)
    val fromCheckpoint = DeltaLog.uncached(t.toString, conf)
    val c = fromCheckpoint.update()
    assertEquals(Some(1L), c.logSegment.checkpointVersion)
    assertTrue(c.logSegment.deltas.isEmpty)
    assertSame(c, fromCheckpoint.update())
    assertEquals(0L, fromCheckpoint.updateListings.get())
  }

  @Test def updateFindsCommitsOfOtherWriters(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    val log = DeltaLog.uncached(t.toString, conf)
    val s0 = log.update()
    assertEquals(Set("a"), files(s0))
    writeCommit(t, 1, Seq(add("b")))
    writeCommit(t, 2, Seq(remove("a", 5)))
    val s2 = assertFresh(t, log)
    assertEquals(2L, s2.version)
    assertEquals(Set("b"), files(s2))
    assertEquals(0L, log.updateListings.get(), "a few new commits are looked up, not listed")

    // more new commits than are looked up one by one: listed, same result
    val last = 2 + DeltaLog.MaxLookedUpCommits + 3
    (3 to last).foreach(v => writeCommit(t, v, Seq(add(s"f$v"))))
    assertEquals(last.toLong, assertFresh(t, log).version)
    assertEquals(1L, log.updateListings.get())
    assertSame(log.update(), log.update())
    assertEquals(1L, log.updateListings.get())
  }

  @Test def updateAfterTableRecreatedWithFewerVersions(): Unit = withTable { t =>
    (0 to 3).foreach(v => writeCommit(t, v, if (v == 0) Seq(protocol12, meta(), add("a")) else Seq(add(s"a$v"))))
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(3L, log.update().version)
    recreateLog(t)
    writeCommit(t, 0, Seq(protocol12, meta(), add("x")))
    writeCommit(t, 1, Seq(add("y")))
    val s = assertFresh(t, log)
    assertEquals(1L, s.version)
    assertEquals(Set("x", "y"), files(s))
  }

  @Test def updateAfterTableRecreatedWithSameVersions(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    val c1 = writeCommit(t, 1, Seq(add("b")))
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(Set("a", "b"), files(log.update()))
    val before = Files.getLastModifiedTime(c1)

    // re-created: same versions and commit lengths; a later modification time (the same one is
    // possible only within one tick of the file system clock, and is covered below)
    recreateLog(t)
    writeCommit(t, 0, Seq(protocol12, meta(), add("x")))
    writeCommit(t, 1, Seq(add("y")), mtime = Some(before.toMillis + 5000))
    assertEquals(Set("x", "y"), files(assertFresh(t, log)))

    // replaced by another file of the same length and modification time: the file key differs
    val replacement = logDir(t).resolve(".replacement.tmp")
    Files.write(replacement, ActionCodec.serialize(Seq(add("z"))).getBytes(java.nio.charset.StandardCharsets.UTF_8))
    Files.setLastModifiedTime(replacement, Files.getLastModifiedTime(c1))
    assertEquals(Files.size(c1), Files.size(replacement))
    Files.move(replacement, c1, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
      java.nio.file.StandardCopyOption.ATOMIC_MOVE)
    assertEquals(Set("x", "z"), files(assertFresh(t, log)))
  }

  @Test def updateAfterTableRecreatedWithMoreVersions(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    writeCommit(t, 1, Seq(add("b")))
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(Set("a", "b"), files(log.update()))
    recreateLog(t)
    writeCommit(t, 0, Seq(protocol12, meta(), add("x")))
    writeCommit(t, 1, Seq(add("yy")))
    (2 to 4).foreach(v => writeCommit(t, v, Seq(add(s"y$v"))))
    val s = assertFresh(t, log)
    assertEquals(4L, s.version)
    assertEquals(Set("x", "yy", "y2", "y3", "y4"), files(s), "not the new commits applied to the old table")
  }

  @Test def updateAfterLogCleanup(): Unit = withTable { t =>
    def actions(v: Int): Seq[Action] = if (v == 0) Seq(protocol12, meta(), add("f0")) else Seq(add(s"f$v"))
    def state(upTo: Int): InMemoryLogReplay = {
      val r = new InMemoryLogReplay(None, None)
      (0 to upTo).foreach(v => r.append(v, actions(v).iterator))
      r
    }
    (0 to 2).foreach(v => writeCommit(t, v, actions(v)))
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(2L, log.update().version)

    // cleanup that keeps the cached version's commit: looked up as usual
    writeCommit(t, 3, actions(3))
    writeJsonCheckpoint(t, 3, state(3).checkpoint.toSeq)
    (0 to 1).foreach(v => Files.delete(logDir(t).resolve(s"${v20(v)}.json")))
    assertEquals(3L, assertFresh(t, log).version)

    // cleanup that deletes it: rebuilt from the newest checkpoint
    (4 to 6).foreach(v => writeCommit(t, v, actions(v)))
    writeJsonCheckpoint(t, 5, state(5).checkpoint.toSeq)
    (2 to 4).foreach(v => Files.delete(logDir(t).resolve(s"${v20(v)}.json")))
    val s = assertFresh(t, log)
    assertEquals(6L, s.version)
    assertEquals((0 to 6).map(v => s"f$v").toSet, files(s))
  }

  @Test def updateWhenCheckpointsAppear(): Unit = withTable { t =>
    val replay = new InMemoryLogReplay(None, None)
    def commit(v: Int, actions: Seq[Action]): Unit = { writeCommit(t, v, actions); replay.append(v, actions.iterator) }
    commit(0, Seq(protocol12, meta(), add("a")))
    commit(1, Seq(add("b")))
    val log = DeltaLog.uncached(t.toString, conf)
    val s1 = log.update()
    writeJsonCheckpoint(t, 1, replay.checkpoint.toSeq)
    assertSame(s1, log.update(), "a checkpoint of the cached version changes nothing")
    commit(2, Seq(remove("a", 3)))
    commit(3, Seq(add("c")))
    writeJsonCheckpoint(t, 3, replay.checkpoint.toSeq)
    val s3 = assertFresh(t, log)
    assertEquals(Set("b", "c"), files(s3))
  }

  @Test def updateAfterTableDeleted(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    val log = DeltaLog.uncached(t.toString, conf)
    log.update()
    deleteRecursively(logDir(t))
    assertThrows(classOf[TableNotFoundException], () => log.update())
  }

  @Test def snapshotAtVersion(): Unit = withTable { t =>
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")))
    writeCommit(t, 1, Seq(add("b")))
    writeCommit(t, 2, Seq(remove("a", 1)))
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(Set("a"), log.snapshotAt(0).allFiles.map(_.path).toSet)
    assertEquals(Set("a", "b"), log.snapshotAt(1).allFiles.map(_.path).toSet)
    assertEquals(Set("b"), log.snapshotAt(2).allFiles.map(_.path).toSet)
    val e = assertThrows(classOf[VersionNotFoundException], () => log.snapshotAt(7))
    assertEquals(7L, e.requested)
    val (p, m) = log.readProtocolAndMetadata(Some(0L))
    assertEquals(protocol12, p)
    assertEquals(meta(), m)
  }

  /** Commits 0, 1 and 2 adding a, b, c, with file times 1,000,000 / 2,000,000 / 3,000,000 ms. */
  private def writeTimedCommits(t: java.nio.file.Path): Unit = {
    writeCommit(t, 0, Seq(protocol12, meta(), add("a")), mtime = Some(1000000L))
    writeCommit(t, 1, Seq(add("b")), mtime = Some(2000000L))
    writeCommit(t, 2, Seq(add("c")), mtime = Some(3000000L))
  }

  @Test def snapshotAtTimestampByMtime(): Unit = withTable { t =>
    writeTimedCommits(t)
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(1L, log.snapshotAtTimestamp(2500000L).version)
    assertEquals(2L, log.snapshotAtTimestamp(3000000L).version)
    assertEquals(0L, log.snapshotAtTimestamp(1000000L).version)
    assertThrows(classOf[TimestampOutOfRangeException], () => log.snapshotAtTimestamp(10L))
    assertThrows(classOf[TimestampOutOfRangeException], () => log.snapshotAtTimestamp(9000000L))
    assertEquals(2L, log.snapshotAtTimestamp(9000000L, allowAfterLatest = true).version)
  }

  @Test def snapshotAtTimestampByIct(): Unit = withTable { t =>
    val m = meta(conf = Map("delta.enableInCommitTimestamps" -> "true"))
    // mtimes deliberately disagree with the ICTs
    writeCommit(t, 0, Seq(CommitInfo.empty.withInCommitTimestamp(100L), protocol12, m, add("a")), mtime = Some(9000000L))
    writeCommit(t, 1, Seq(CommitInfo.empty.withInCommitTimestamp(200L), add("b")), mtime = Some(8000000L))
    writeCommit(t, 2, Seq(CommitInfo.empty.withInCommitTimestamp(300L), add("c")), mtime = Some(7000000L))
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(1L, log.snapshotAtTimestamp(250L).version)
    assertEquals(2L, log.snapshotAtTimestamp(300L).version)
    assertEquals(300L, log.snapshot().timestamp)
    assertEquals(200L, log.snapshotAt(1).timestamp)
  }

  @Test def wrongAddCountInLastCheckpointOnlySizesTheState(): Unit = withTable { t =>
    // `_last_checkpoint.numOfAddFiles` sizes the state's arrays; a wrong value must not change it
    writeCommit(t, 0, Seq(protocol12, meta()) ++ (0 until 3000).map(i => add(s"f$i")))
    writeCommit(t, 1, Seq(add("g")))
    val log = DeltaLog.uncached(t.toString, conf)
    val written = log.checkpoint(log.update())
    val logDir = new org.apache.hadoop.fs.Path(new org.apache.hadoop.fs.Path(t.toUri), "_delta_log")
    for (claimed <- Seq(0L, 7L, 3001L, 50000000L)) {
      LastCheckpointInfo.write(LogStore(log.fs), logDir,
        LastCheckpointInfo(1, 3003, None, None, Some(claimed)))
      val s = DeltaLog.uncached(t.toString, conf).update()
      assertEquals(Some(1L), s.logSegment.checkpointVersion)
      assertEquals(3001L, s.numFiles, s"numOfAddFiles $claimed")
      assertEquals(((0 until 3000).map(i => s"f$i") :+ "g").toSet, s.allFiles.map(_.path).toSet)
    }
    assertTrue(written != null)
  }

  @Test def timestampLookupWithoutIctReadsNoLaterCommit(): Unit = withTable { t =>
    writeTimedCommits(t)
    val log = DeltaLog.uncached(t.toString, conf)
    assertEquals(0L, log.snapshotAtTimestamp(1500000L).version)
    // the newest commit has no in-commit timestamp: no protocol/metaData scan of the latest version
    assertEquals(Set(s"${v20(0)}.json"), log.recentCommitReads.names.toSet)
  }

  @Test def ictDisabledAgainUsesFileTimes(): Unit = withTable { t =>
    val on = meta(conf = Map("delta.enableInCommitTimestamps" -> "true"))
    writeCommit(t, 0, Seq(CommitInfo.empty.withInCommitTimestamp(100L), protocol12, on, add("a")), mtime = Some(1000000L))
    writeCommit(t, 1, Seq(CommitInfo.empty.withInCommitTimestamp(200L), add("b")), mtime = Some(2000000L))
    writeCommit(t, 2, Seq(meta(conf = Map("delta.enableInCommitTimestamps" -> "false")), add("c")), mtime = Some(3000000L))
    val log = DeltaLog.uncached(t.toString, conf)
    // ICT is off at the latest version: every version is found by its file time, as delta-spark does
    assertEquals(1L, log.snapshotAtTimestamp(2500000L).version)
    assertThrows(classOf[TimestampOutOfRangeException], () => log.snapshotAtTimestamp(250L))
  }

  // ---------------------------------------------------------------------------------------------
  // Conformance corpus


  @Test def conformanceCorpus(): Unit = {
    val root = ConformanceCorpus.root // fails, with the message saying how to point at it, without the corpus
    val manifest = ConformanceCorpus.manifest
    val failures = Vector.newBuilder[String]
    var passed = 0
    var total = 0
    val t0 = System.nanoTime()
    manifest.foreach { e =>
      total += 1
      val id = e.get("id").asText()
      val path = root.resolve(e.get("table_path").asText()).toString
      val mustFail = e.get("must_fail").asBoolean(false)
      val readerDependent = Option(e.get("exercises")).exists(_.elements().asScala.exists(_.asText() == "outcome-reader-dependent"))
      val outcome: Either[Throwable, (Long, Long, Long)] =
        try {
          val s = DeltaLog.uncached(path, conf).snapshot()
          Right((s.version, s.numFiles, s.allFiles.size.toLong))
        } catch { case ex: Throwable => Left(ex) }
      val problem: Option[String] = (mustFail, outcome) match {
        case (true, Left(_: DeltalogException)) => None
        case (true, Left(ex)) => Some(s"must fail with a DeltalogException, got $ex")
        case (true, Right(r)) => Some(s"must fail (${e.get("fail_reason").asText()}) but loaded $r")
        case (false, Left(_: DeltalogException)) if readerDependent => None
        case (false, Left(ex)) => Some(s"failed: $ex")
        case (false, Right((v, n, iterated))) =>
          val ev = e.get("version").asLong()
          val ef = e.get("live_files").asLong()
          if (v != ev || n != ef || iterated != ef) Some(s"version $v (expected $ev), numFiles $n / iterated $iterated (expected $ef)")
          else None
      }
      problem match {
        case None => passed += 1
        case Some(p) => failures += s"$id: $p"
      }
    }
    val ms = (System.nanoTime() - t0) / 1000000
    val f = failures.result()
    println(s"conformance corpus: $passed / $total passed in $ms ms")
    f.foreach(x => println(s"  FAIL $x"))
    assertTrue(f.isEmpty, s"${f.size} corpus tables failed:\n${f.mkString("\n")}")
  }

  // ---------------------------------------------------------------------------------------------
  // 1M-add synthetic checkpoint (timing and heap printed, nothing asserted about them)

  @Test def millionAddCheckpointLoad(): Unit = withTable { t =>
    val n = Option(System.getProperty("deltalog.test.bigCheckpointFiles")).map(_.toInt).getOrElse(100000)
    val stats = "{\"numRecords\":1000,\"minValues\":{\"id\":1,\"name\":\"aaaaaaaaaaaaaaaaaaaa\",\"ts\":\"2024-01-01T00:00:00.000Z\"}," +
      "\"maxValues\":{\"id\":100000,\"name\":\"zzzzzzzzzzzzzzzzzzzz\",\"ts\":\"2024-12-31T23:59:59.999Z\"}," +
      "\"nullCount\":{\"id\":0,\"name\":0,\"ts\":0},\"tightBounds\":true,\"pad\":\"" + ("x" * 60) + "\"}"
    val head = Iterator[Action](protocol12, meta())
    val files = Iterator.range(0, n).map { i =>
      AddFile(f"part-$i%08d-7c1f0e3a-2b4d-4e8a-9f1b-3c5d7e9a1b2c.c000.snappy.parquet", Map.empty, 1000L + i,
        1700000000000L, dataChange = false, stats = Some(stats.replace("\"id\":100000", s"\"id\":${100000 + i}")))
    }
    val tw = System.nanoTime()
    val logPath = hadoopPath(logDir(t))
    CheckpointWriter.write(conf, logPath, 0L, head ++ files)
    println(s"1M checkpoint: wrote $n adds in ${(System.nanoTime() - tw) / 1000000} ms " +
      s"(stats ${stats.length} chars)")
    val rt = Runtime.getRuntime
    for (round <- 1 to 2) {
      System.gc(); Thread.sleep(200)
      val before = rt.totalMemory() - rt.freeMemory()
      val t0 = System.nanoTime()
      val snap = DeltaLog.uncached(t.toString, conf).snapshot()
      val numFiles = snap.numFiles
      val loadMs = (System.nanoTime() - t0) / 1000000
      System.gc(); Thread.sleep(200)
      val after = rt.totalMemory() - rt.freeMemory()
      assertEquals(n.toLong, numFiles)
      println(s"1M checkpoint: round $round loaded $numFiles files in $loadMs ms; " +
        s"retained heap ~${(after - before) / (1024 * 1024)} MB (used after load ${after / (1024 * 1024)} MB)")
      val ti = System.nanoTime()
      var total = 0L
      snap.allFiles.foreach(a => total += a.size)
      println(s"1M checkpoint: iterated allFiles in ${(System.nanoTime() - ti) / 1000000} ms")
      assertEquals(snap.sizeInBytes, total)
    }
  }
}
