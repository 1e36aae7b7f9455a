package io.deltalog.log

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path => NioPath}

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.actions._
import io.deltalog.exceptions.{ActionParseException, StateRecoverException}
import io.deltalog.protocol.Protocol

/** Helpers for the log tests: hand-built logs in temp dirs. */
object LogTestSupport {
  val conf = new Configuration()

  val protocol12: Protocol = Protocol(1, 2)
  val schema = """{"type":"struct","fields":[{"name":"id","type":"integer","nullable":true,"metadata":{}}]}"""

  def meta(conf: Map[String, String] = Map.empty, partitionColumns: Seq[String] = Nil): Metadata =
    Metadata(id = "00000000-0000-0000-0000-000000000001", schemaString = schema,
      partitionColumns = partitionColumns, configuration = conf, createdTime = Some(1L))

  def add(path: String, size: Long = 1L, stats: Option[String] = None,
      dvd: Option[DeletionVectorDescriptor] = None, pv: Map[String, String] = Map.empty): AddFile =
    AddFile(path, pv, size, 1000L, dataChange = true, stats = stats, deletionVector = dvd)

  def remove(path: String, ts: Long, dvd: Option[DeletionVectorDescriptor] = None): RemoveFile =
    RemoveFile(path, Some(ts), dataChange = true, deletionVector = dvd)

  def dv(id: String): DeletionVectorDescriptor =
    DeletionVectorDescriptor("u", ("dv" + id + "00000000000000000000").take(22), Some(1), 10, 2)

  def newTable(): NioPath = {
    val t = TestDirs.create("deltalog-test")
    Files.createDirectories(t.resolve("_delta_log"))
    t
  }

  def logDir(t: NioPath): NioPath = t.resolve("_delta_log")

  def v20(v: Long): String = f"$v%020d"

  def writeCommit(table: NioPath, version: Long, actions: Seq[Action], mtime: Option[Long] = None): NioPath = {
    val f = logDir(table).resolve(s"${v20(version)}.json")
    Files.write(f, ActionCodec.serialize(actions).getBytes(StandardCharsets.UTF_8))
    mtime.foreach(m => f.toFile.setLastModified(m))
    f
  }

  /** A V2 JSON checkpoint `<v>.checkpoint.<uuid>.json` holding `actions` + checkpointMetadata. */
  def writeJsonCheckpoint(table: NioPath, version: Long, actions: Seq[Action]): NioPath = {
    val f = logDir(table).resolve(s"${v20(version)}.checkpoint.${java.util.UUID.randomUUID()}.json")
    Files.write(f, ActionCodec.serialize(actions :+ CheckpointMetadata(version)).getBytes(StandardCharsets.UTF_8))
    f
  }

  def fs: FileSystem = FileSystem.getLocal(conf)

  def hadoopPath(p: NioPath): Path = new Path(p.toUri)

  def segment(table: NioPath, version: Option[Long] = None): LogSegment =
    LogSegmentBuilder.build(fs, hadoopPath(logDir(table)), table.toString, version, None)

  def newReplay(table: NioPath, counter: java.util.concurrent.atomic.AtomicInteger = null,
      source: CheckpointSource = CheckpointSource.Files): LogReplay =
    new LogReplay(fs, conf, table.toString,
      new CommitReader(fs, _ => if (counter != null) counter.incrementAndGet()), source)

  def deleteRecursively(p: NioPath): Unit = TestDirs.deleteRecursively(p)

  /** Asserts that a replayed state equals the reference forward replay. */
  def assertSameState(ref: InMemoryLogReplay, s: SnapshotState, clue: String): Unit = {
    val keys = s.fileKeys
    val live = s.iterator.map(a => keys.key(a) -> a).toMap
    assertEquals(s.numFiles, live.size.toLong, s"$clue: numFiles vs iterator")
    assertEquals(ref.activeFiles, live, s"$clue: live files")
    assertEquals(ref.activeFiles.values.map(_.size).sum, s.sizeInBytes, s"$clue: sizeInBytes")
    val tomb = s.tombstones.map(r => keys.key(r) -> r).toMap
    assertEquals(s.allTombstones.size, tomb.size, s"$clue: duplicate tombstones")
    assertEquals(ref.tombstones, tomb, s"$clue: tombstones")
    assertEquals(ref.transactions, s.setTransactions, s"$clue: txns")
    assertEquals(ref.domainMetadata, s.domainMetadata, s"$clue: domains")
    assertEquals(ref.currentProtocolVersion, s.protocol, s"$clue: protocol")
    assertEquals(ref.currentMetaData, s.metadata, s"$clue: metadata")
  }

  /** Random valid commits (adds/removes/re-adds/DV updates/txns/domains/metadata/protocol). */
  def randomCommits(rnd: Random, n: Int): Vector[Seq[Action]] = {
    val paths = Vector("a", "b", "c", "d", "e", "f", "g", "part=1/h%20i.parquet", "part=2/j.parquet", "k")
    // alternative spellings of the same file, used by removes and re-adds
    def spelling(p: String): String =
      if (p == "part=1/h%20i.parquet" && rnd.nextBoolean()) "part=1/h i.parquet" else p
    val live = scala.collection.mutable.Map.empty[String, Option[DeletionVectorDescriptor]]
    var dvCounter = 0
    var ts = 1000L
    (0 until n).map { v =>
      val out = Vector.newBuilder[Action]
      out += CommitInfo.empty.withTimestamp(ts).withInCommitTimestamp(ts + 5)
      if (v == 0) { out += protocol12; out += meta() }
      else {
        if (rnd.nextInt(8) == 0) out += Protocol(1, 2 + rnd.nextInt(3))
        if (rnd.nextInt(6) == 0) out += meta(conf = Map("v" -> v.toString))
      }
      if (rnd.nextInt(3) == 0) out += SetTransaction(s"app${rnd.nextInt(3)}", rnd.nextInt(10).toLong,
        if (rnd.nextBoolean()) Some(ts) else None)
      if (rnd.nextInt(3) == 0) out += DomainMetadata(s"dom${rnd.nextInt(3)}", s"c$v", removed = rnd.nextInt(3) == 0)
      val touched = rnd.shuffle(paths).take(1 + rnd.nextInt(4))
      touched.foreach { p =>
        live.get(p) match {
          case Some(cur) => rnd.nextInt(5) match {
            case 0 => out += remove(spelling(p), ts - rnd.nextInt(3000), cur); live.remove(p)
            case 1 => // DV update
              dvCounter += 1
              val nd = Some(dv(dvCounter.toString))
              out += remove(spelling(p), ts, cur); out += add(spelling(p), size = v.toLong + 1, dvd = nd)
              live(p) = nd
            case 2 => // re-add of the same logical file (stats refresh, dataChange = false)
              out += add(spelling(p), size = 100 + v.toLong, dvd = cur, stats = Some(s"""{"numRecords":$v}"""))
                .copy(dataChange = false)
            case 3 => // remove of a logical file that is not live (other DV): legal, becomes a tombstone
              dvCounter += 1
              out += remove(p, ts, Some(dv("x" + dvCounter)))
            case _ =>
          }
          case None =>
            val d = if (rnd.nextInt(4) == 0) { dvCounter += 1; Some(dv(dvCounter.toString)) } else None
            out += add(spelling(p), size = v.toLong, dvd = d, pv = if (p.startsWith("part=")) Map("part" -> p.substring(5, 6)) else Map.empty)
            live(p) = d
        }
      }
      ts += 1000
      rnd.shuffle(out.result().drop(1)).+:(out.result().head) // commitInfo first, the rest shuffled
    }.toVector
  }
}

class LogReplaySuite {
  import LogTestSupport._

  @Test def reverseReplayEqualsForwardReplay(): Unit = {
    for (seed <- 0 until 60) {
      val rnd = new Random(seed)
      val n = 1 + rnd.nextInt(25)
      val commits = randomCommits(rnd, n)
      val table = newTable()
      try {
        commits.zipWithIndex.foreach { case (c, v) => writeCommit(table, v, c) }
        val cpVersion = if (seed % 3 == 0 || n < 3) None else Some(rnd.nextInt(n - 1).toLong)
        val inMemoryCp = seed % 3 == 2
        var checkpointActions: Seq[Action] = Nil
        cpVersion.foreach { cv =>
          val forCp = new InMemoryLogReplay(None, None)
          (0L to cv).foreach(v => forCp.append(v, commits(v.toInt).iterator))
          checkpointActions = forCp.checkpoint.toSeq
          if (!inMemoryCp) writeJsonCheckpoint(table, cv, checkpointActions)
        }
        val ref = new InMemoryLogReplay(None, None)
        commits.zipWithIndex.foreach { case (c, v) => ref.append(v, c.iterator) }

        val seg = cpVersion match {
          case Some(cv) if inMemoryCp =>
            val full = segment(table)
            full.copy(deltas = full.deltas.filter(d => FileNames.deltaVersion(d) > cv),
              checkpoint = Some(CheckpointInstance(cv, Seq(full.deltas.head))))
          case _ => segment(table)
        }
        assertEquals(cpVersion, seg.checkpointVersion, s"seed $seed")
        val source = new CheckpointSource {
          def read(conf: Configuration, checkpoint: CheckpointInstance, sink: ReplaySink, skipRemoves: Boolean): Unit =
            checkpointActions.foreach(a => sink.accept(checkpoint.version, a))
          def readProtocolAndMetadata(conf: Configuration, checkpoint: CheckpointInstance) =
            (checkpointActions.collectFirst { case p: Protocol => p }, checkpointActions.collectFirst { case m: Metadata => m })
        }
        val replay = newReplay(table, source = if (inMemoryCp) source else CheckpointSource.Files)
        val state = replay.load(seg)
        assertEquals(n - 1L, state.version)
        assertSameState(ref, state, s"seed $seed (checkpoint $cpVersion, inMemory $inMemoryCp)")

        // ICT of every replayed commit
        seg.deltas.foreach { d =>
          val v = FileNames.deltaVersion(d)
          assertEquals(Some(1000L + 1000L * v + 5), state.inCommitTimestamps.get(v))
        }

        // metadata-only path agrees
        val (p, m, _) = replay.protocolAndMetadata(seg)
        assertEquals(Some(ref.currentProtocolVersion), p)
        assertEquals(Some(ref.currentMetaData), m)
        // and a replay told its result (the checkpoint's protocol / metaData rows not read) is the same
        assertSameState(ref, replay.load(seg, Some((p.get, m.get))), s"seed $seed with known protocol/metadata")

        // incremental: load at a middle version, then apply the rest
        if (n >= 2) {
          val mid = rnd.nextInt(n - 1).toLong
          val base = newReplay(table).load(segment(table, Some(mid)))
          val rest = LogSegmentBuilder.listCommits(fs, hadoopPath(logDir(table)), mid + 1)
          assertEquals(n - 1 - mid, rest.size.toLong)
          var s = base
          // apply in one or several steps
          rest.grouped(1 + rnd.nextInt(3)).foreach(g => s = replay.update(s, g))
          assertSameState(ref, s, s"seed $seed incremental from $mid")
        }
      } finally deleteRecursively(table)
    }
  }

  @Test def checkpointRowsAreNotHashedWithoutLaterCommits(): Unit = {
    val table = newTable()
    try {
      writeCommit(table, 0, Seq(protocol12, meta(), add("a"), add("b")))
      val cp = Seq(protocol12, meta(), add("a").copy(dataChange = false), add("b").copy(dataChange = false))
      writeJsonCheckpoint(table, 0, cp)
      val s = newReplay(table).load(segment(table))
      assertEquals(2L, s.numFiles)
      assertEquals(0, s.chunkCount - 1)
    } finally deleteRecursively(table)
  }

  @Test def missingProtocolOrMetadataIsStateRecoverError(): Unit = {
    val table = newTable()
    try {
      writeCommit(table, 0, Seq(meta(), add("a")))
      val e = assertThrows(classOf[StateRecoverException], () => newReplay(table).load(segment(table)))
      assertTrue(e.getMessage.contains("protocol"), e.getMessage)
      writeCommit(table, 0, Seq(protocol12, add("a")))
      assertThrows(classOf[StateRecoverException], () => newReplay(table).load(segment(table)))
    } finally deleteRecursively(table)
  }

  @Test def commitReaderFastPathEqualsCodec(): Unit = {
    val lines = Seq(
      """{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true}}""",
      """{"add":{"path":"a%20b","partitionValues":{"x":null,"y":"1"},"size":1,"modificationTime":2,"dataChange":false,"stats":"{\"numRecords\":3}","tags":{"t":"v"},"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2},"baseRowId":4,"defaultRowCommitVersion":5,"clusteringProvider":"liquid"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"unknown":{"x":1}}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":null}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"tags":{"t":null}}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"deletionVector":{"storageType":"i","pathOrInlineDv":"xyz","sizeInBytes":4,"cardinality":1,"maxRowIndex":9,"extra":true}}}""",
      """{"remove":{"path":"a","deletionTimestamp":5,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{"p":null},"size":7,"stats":"s","tags":{},"baseRowId":1,"defaultRowCommitVersion":2}}""",
      """{"remove":{"path":"a"}}""",
      """{"remove":{"path":"a","deletionTimestamp":12345678901234567890}}""",
      """{"add":{"path":"a","size":1.5,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1,"size":2,"modificationTime":2}}""",
      """{"add":{"path":"a","partitionValues":{"k":"1","k":"2"},"size":1,"modificationTime":2}}""",
      """{"add":{"path":"a","modificationTime":2}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2}} x""",
      """{"add":{"path":"a","size":1,"modificationTime":2},"remove":{"path":"b"}}""",
      """{"remove":{"path":"a","deletionVector":{"storageType":"u","pathOrInlineDv":"p","offset":3000000000,"sizeInBytes":1,"cardinality":1}}}""",
      """{"txn":{"appId":"a","version":1}}""",
      """{"commitInfo":{"timestamp":1,"inCommitTimestamp":7}}""",
      """{"add":[1]}""",
      // stats strings decoded from the raw bytes (fast path) or by Jackson (fallback)
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"{\"a\":\"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\"}"}}""",
      "{\"add\":{\"path\":\"a\",\"size\":1,\"modificationTime\":2,\"stats\":\"{\\\"a\\\":\\\"\\u00e9\\u0041\\\"}\"}}",
      "{\"add\":{\"path\":\"a\",\"size\":1,\"modificationTime\":2,\"stats\":\"{\\\"é\\\":\\\"日本\\\"}\"}}",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"\/\\"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":""}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"bad \q escape"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"unterminated}}""",
      "{\"add\":{\"path\":\"a\",\"size\":1,\"modificationTime\":2,\"stats\":\"tab\there\"}}",
      """not json""")
    lines.foreach { line =>
      val bytes = line.getBytes(StandardCharsets.UTF_8)
      val expected = scala.util.Try(ActionCodec.parseLine(line, "f.json", 3).orNull)
      val got = scala.util.Try(CommitReader.parseLine(bytes, 0, bytes.length, "f.json", 3))
      (expected, got) match {
        case (scala.util.Success(e), scala.util.Success(g)) =>
          assertEquals(e, g, line)
          if (e != null) assertEquals(e.json, g.json, line)
        case (scala.util.Failure(e: ActionParseException), scala.util.Failure(g: ActionParseException)) =>
          assertEquals(e.getMessage, g.getMessage, line)
        case other => fail(s"$line: codec and reader differ: $other")
      }
    }
  }

  @Test def commitReaderErrorsNameFileAndLine(): Unit = {
    val table = newTable()
    try {
      val f = logDir(table).resolve(s"${v20(0)}.json")
      Files.write(f, (ActionCodec.serialize(Seq(protocol12, meta())) + "\n" +
        """{"add":{"path":"a","size":"x","modificationTime":1}}""" + "\n").getBytes(StandardCharsets.UTF_8))
      val e = assertThrows(classOf[ActionParseException], () => newReplay(table).load(segment(table)))
      assertEquals(4, e.lineNumber, "the blank line counts")
      assertTrue(e.file.endsWith(s"${v20(0)}.json"), e.file)
      assertEquals("add.size", e.field)
    } finally deleteRecursively(table)
  }

  @Test def commitReaderHandlesCrLfBlankLinesAndNoTrailingNewline(): Unit = {
    val text = ActionCodec.serialize(Seq(protocol12, meta())).replace("\n", "\r\n") + "\r\n\r\n" +
      add("x").json
    val actions = CommitReader.parseBytes(text.getBytes(StandardCharsets.UTF_8), "t.json")
    assertEquals(Seq(protocol12, meta(), add("x")), actions.toSeq)
    // long lines (beyond the read buffer)
    val big = add("y", stats = Some("s" * 200000))
    assertEquals(Seq(big), CommitReader.parseBytes(big.json.getBytes(StandardCharsets.UTF_8), "t.json").toSeq)
  }

  @Test def parallelReadDeliversInGivenOrder(): Unit = {
    val table = newTable()
    try {
      (0 until 40).foreach(v => writeCommit(table, v, (if (v == 0) Seq(protocol12, meta()) else Nil) ++
        (0 until 50).map(i => add(s"f$v-$i"))))
      val files = segment(table).deltas
      val seen = Vector.newBuilder[Long]
      new CommitReader(fs).readInOrder(files.reverse)(c => seen += c.version)
      assertEquals((0L until 40L).reverse, seen.result())
      val s = newReplay(table).load(segment(table))
      assertEquals(2000L, s.numFiles)
    } finally deleteRecursively(table)
  }

  @Test def fileChunkIndexAndSharing(): Unit = {
    val b = new FileChunkBuilder(4)
    (0 until 100).foreach(i => b += add(s"p$i", size = i.toLong, dvd = if (i % 7 == 0) Some(dv(i.toString)) else None,
      pv = Map("k" -> (i % 3).toString)))
    val c = b.result()
    assertEquals(100, c.length)
    assertEquals((0 until 100).sum.toLong, c.totalSize)
    val keys = FileKeys.Local
    (0 until 100).foreach(i => assertEquals(i, c.indexOf(keys.key(c.get(i)), keys)))
    assertEquals(-1, c.indexOf("nope", keys))
    // partition maps are interned
    assertSame(c.get(0).partitionValues, c.get(3).partitionValues)
    assertEquals(add("p7", size = 7, dvd = Some(dv("7")), pv = Map("k" -> "1")).copy(dataChange = false), c.get(7))
  }

  @Test def fileKeys(): Unit = {
    val k = FileKeys.Local
    assertEquals(k.pathKey("/a/b%20c"), k.pathKey("file:/a/b%20c"))
    assertEquals(k.pathKey("/a/b%20c"), k.pathKey("file:///a/b%20c"))
    assertEquals(k.pathKey("/a/b%20c"), k.pathKey("file:/a/b c"))
    assertEquals(k.pathKey("x/a%20b"), k.pathKey("x/a b"))
    assertNotEquals(k.pathKey("/a/b"), k.pathKey("s3://bucket/a/b"))
    val s3 = new FileKeys("s3", "bucket")
    assertEquals(s3.pathKey("/a/b"), s3.pathKey("s3://bucket/a/b"))
    assertNotEquals(s3.pathKey("/a/b"), s3.pathKey("s3://other/a/b"))
    assertNotEquals(k.key("a", null), k.key("a", "u1@1"))
    // malformed escapes do not throw
    assertEquals("a%zz", k.pathKey("a%zz"))
  }
}
