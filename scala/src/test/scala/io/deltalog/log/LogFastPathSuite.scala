package io.deltalog.log

import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.fs.Path
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.actions._
import io.deltalog.log.CheckpointTestSupport._
import io.deltalog.parquet.RowTrimmedPages
import io.deltalog.protocol.Protocol

/**
 * The metadata-only and pruned read paths against the general ones they shortcut (oracles):
 * column-index protocol/metaData reads vs reading every row, the commit line filter vs parsing
 * every line, and projections without absent `add` fields vs the full projection.
 */
class LogFastPathSuite {

  private val metadata = Metadata(id = "fast-path", schemaString = SchemaString, partitionColumns = Seq("part"),
    configuration = Map("delta.appendOnly" -> "false"), createdTime = Some(1700000000000L))

  private def add(i: Int, pv: Map[String, String] = Map.empty, tags: Option[Map[String, String]] = None,
      dv: Option[DeletionVectorDescriptor] = None): AddFile =
    AddFile(s"part-$i.parquet", pv, 100L + i, 1700000000000L + i, dataChange = false, stats = Some(stats(i)),
      tags = tags, deletionVector = dv)

  private def pmFullRead(files: Seq[Path], version: Long): (Option[Protocol], Option[Metadata]) = {
    val all = readAll(files, version)
    (all.collectFirst { case p: Protocol => p }, all.collectFirst { case m: Metadata => m })
  }

  @Test def protocolAndMetadataThroughColumnIndexEqualsFullRead(): Unit = {
    // parquet-mr pages hold at most 20k rows: with 50k adds the P&M rows sit in the last pages
    // (as in delta-rs checkpoints) or in the first ones.
    val adds = (0 until 50000).map(i => add(i))
    for ((order, label) <- Seq(
      (adds ++ Seq(protocolFeatures, metadata), "P&M last"),
      (Seq[Action](protocolFeatures, metadata) ++ adds, "P&M first"),
      (adds.take(30000) ++ Seq(metadata) ++ adds.drop(30000) ++ Seq(protocolLegacy), "split"))) {
      val log = tempLogDir("fast-pm")
      val res = CheckpointWriter.write(conf, hadoopPath(log), 5, order.iterator)
      val files = res.files.map(_.getPath)
      // parquet-mr's page index (the way for files that are not local) and deltalog's decoder of
      // the two columns (local files) both give the full read's actions
      for (decode <- Seq(false, true)) {
        val cutBefore = RowTrimmedPages.pagesCut.get()
        val decodedBefore = ProtocolAndMetadataColumns.filesDecoded.get()
        val fast = withProtocolAndMetadataDecoder(decode) {
          CheckpointReader.readProtocolAndMetadata(conf, CheckpointInstance(5, res.files))
        }
        assertEquals(pmFullRead(files, 5), fast, s"$label decode=$decode")
        assertTrue(fast._1.isDefined && fast._2.isDefined, label)
        assertEquals(if (decode) 1L else 0L, ProtocolAndMetadataColumns.filesDecoded.get() - decodedBefore, s"$label decode=$decode")
        if (label == "P&M last" && !decode) {
          // the pages holding them start rows before them: cut to start at the protocol row
          assertTrue(RowTrimmedPages.pagesCut.get() > cutBefore, "pages of the protocol/metaData leaves were cut")
        }
      }
    }
  }

  @Test def skippingProtocolAndMetadataReadsEverythingElse(): Unit = {
    val dv = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 36, 2L)
    val actions: Seq[Action] = Seq(protocolFeatures, metadata, SetTransaction("app", 3, None),
      DomainMetadata("d", "{}", removed = false)) ++ (0 until 40000).map(i => add(i, dv = if (i % 7 == 0) Some(dv) else None)) ++
      Seq(RemoveFile("gone.parquet", Some(5L), dataChange = false))
    val log = tempLogDir("fast-skip-pm")
    val res = CheckpointWriter.write(conf, hadoopPath(log), 5, actions.iterator)
    val all = readAll(res.files.map(_.getPath), 5)
    val rest = readAll(res.files.map(_.getPath), 5, CheckpointReadOptions(skipProtocolAndMetadata = true))
    def norm(xs: Seq[Action]) = xs.map(_.json).sorted
    assertEquals(norm(all.filterNot(a => a.isInstanceOf[Protocol] || a.isInstanceOf[Metadata])), norm(rest))
    assertEquals(2, all.size - rest.size)
  }

  @Test def checkpointWithoutProtocolOrMetadataRows(): Unit = {
    val log = tempLogDir("fast-pm-none")
    val res = CheckpointWriter.write(conf, hadoopPath(log), 5, (0 until 30000).map(i => add(i): Action).iterator)
    assertEquals((None, None), CheckpointReader.readProtocolAndMetadata(conf, CheckpointInstance(5, res.files)))
  }

  @Test def absentAddFieldsAreLeftOutWithoutChangingTheActions(): Unit = {
    val dv = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 36, 2L)
    val cases: Seq[(String, Int => AddFile)] = Seq(
      "nothing optional" -> (i => add(i)),
      "empty tags everywhere" -> (i => add(i, tags = Some(Map.empty))),
      "tags on one row" -> (i => add(i, tags = if (i == 777) Some(Map("a" -> "b")) else None)),
      "empty tags on one row" -> (i => add(i, tags = if (i == 777) Some(Map.empty) else None)),
      "partition values on one row" -> (i => add(i, pv = if (i == 3) Map("part" -> "x") else Map.empty)),
      "null partition value" -> (i => add(i, pv = Map("part" -> null))),
      "a deletion vector on one row" -> (i => add(i, dv = if (i == 5) Some(dv) else None)))
    for ((label, mk) <- cases) {
      val log = tempLogDir("fast-absent")
      val input: Seq[Action] = Seq(protocolLegacy, metadata) ++ (0 until 2000).map(mk) ++
        Seq(RemoveFile("gone.parquet", Some(1L), dataChange = false))
      val res = CheckpointWriter.write(conf, hadoopPath(log), 3, input.iterator)
      val out = readAll(res.files.map(_.getPath), 3)
      assertEquals(input.size, out.size, label)
      input.zip(out).foreach { case (e, a) => assertEquals(tree(expectedAfterCheckpoint(e)), tree(a), label) }
    }
  }

  @Test def lineFilterKeepsEveryProtocolMetadataAndCommitInfoLine(): Unit = {
    val p = """{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"""
    val m = metadata.json
    val a = """{"add":{"path":"x","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,"stats":"{\"protocol\":1}"}}"""
    val ci = """{"commitInfo":{"timestamp":5,"inCommitTimestamp":9}}"""
    val texts = Seq(
      Seq(ci, a, p, m, a),
      Seq(a, a, a),
      Seq(a, """{ "protocol" : {"minReaderVersion":1,"minWriterVersion":3} }""", ""),
      Seq("{\"\\u0070rotocol\":{\"minReaderVersion\":1,\"minWriterVersion\":4}}", a),
      Seq("""{"other":1,"protocol":{"minReaderVersion":1,"minWriterVersion":5}}"""),
      Seq("""{"protocol":{"minReaderVersion":"bad"}}""", p),
      Seq(a.replace("\"x\"", "\"protocol\""), m),
      Seq(ci + "\r", a + "\r", m + "\r", "\r"),
      // An add whose value is null is no add: the line is not skipped for its head.
      Seq("{\"add\":null," + m.drop(1), a),
      Seq(a.replace("\"x\"", "\"\\u00e9\""), """{"remove":{"path":"protocol","deletionTimestamp":1,"dataChange":true}}""", p),
      Seq(" " + m, a.replace("{\"add\":", "{\"add\" :")),
      Seq(a, m, a.take(5)),
      // An add line that also holds a metaData: the full reading rejects it (two actions on one
      // line); the filter skips it for its head, as it skips every line it need not read.
      Seq(a, a.dropRight(1) + ",\"metaData\":" + m.drop(12)))
    val skippedCorruptLines = Set(texts.size - 2, texts.size - 1)
    val dir = TestDirs.create("fast-lines")
    val fs = hadoopPath(dir).getFileSystem(conf)
    val reader = new CommitReader(fs)
    texts.zipWithIndex.foreach { case (lines, n) =>
      val f = dir.resolve(f"$n%020d.json")
      Files.write(f, lines.mkString("\n").getBytes(StandardCharsets.UTF_8))
      val st = status(hadoopPath(f))
      def pmc(actions: Seq[Action]) = actions.filter {
        case _: Protocol | _: Metadata | _: CommitInfo | _: MalformedAction => true
        case _ => false
      }
      val full = scala.util.Try(pmc(reader.read(st).actions.toSeq))
      val filtered = scala.util.Try(pmc(reader.readProtocolAndMetadata(st, withCommitInfo = true).actions.toSeq))
      (full, filtered) match {
        case (scala.util.Success(e), scala.util.Success(g)) => assertEquals(e.map(_.toString), g.map(_.toString), s"text $n")
        case (scala.util.Failure(e), scala.util.Failure(g)) => assertEquals(e.getMessage, g.getMessage, s"text $n")
        case (scala.util.Failure(e), scala.util.Success(g)) if skippedCorruptLines(n) =>
          assertTrue(e.getMessage.contains("line " + lines.size), s"text $n: ${e.getMessage}")
          assertEquals(lines.filter(_.startsWith("{\"metaData\"")).size, g.size, s"text $n")
        case other => fail(s"text $n: $other")
      }
    }
  }

  @Test def lineFilterFindsLineEndsAndCandidatesLikeAByteWiseScan(): Unit = {
    val rnd = new scala.util.Random(7)
    val pieces = Seq("{\"add\":{", "{\"remove\":{", "{\"add\":", "\"protocol\"", "\"metaData\"", "\"commitInfo\"",
      "\\u", "\\", "\"", "x", "abcdefgh", "\r", "{", "}", "é")
    def reference(text: Array[Byte], needles: Seq[String]): Seq[Int] = {
      val s = new String(text, StandardCharsets.ISO_8859_1)
      val out = Seq.newBuilder[Int]
      var start = 0
      while (start <= s.length) {
        val nl = s.indexOf('\n', start)
        val end = if (nl < 0) s.length else nl
        val line = s.substring(start, end)
        val fileHead = line.startsWith("{\"add\":{") || line.startsWith("{\"remove\":{")
        if (start < s.length && !fileHead && (needles.map("\"" + _ + "\"") :+ "\\u").exists(line.contains)) out += start
        start = end + 1
      }
      out.result()
    }
    for (round <- 0 until 3000) {
      val lines = Seq.fill(1 + rnd.nextInt(6))(Seq.fill(rnd.nextInt(12))(pieces(rnd.nextInt(pieces.size))).mkString)
      val text = lines.mkString("\n").getBytes(StandardCharsets.UTF_8)
      // Read from a larger array: the scan must stop at `len`, not at the array's end.
      val padded = java.util.Arrays.copyOf(text, text.length + rnd.nextInt(9))
      if (padded.length > text.length) padded(text.length) = '"'.toByte
      for ((filter, names) <- Seq(CommitReader.PmLines -> Seq("protocol", "metaData"),
          CommitReader.PmAndCommitInfoLines -> Seq("protocol", "metaData", "commitInfo")))
        assertEquals(reference(text, names), filter.candidateLines(padded, text.length).toSeq, s"round $round: ${lines.mkString(" | ")}")
    }
  }

  @Test def batchedParallelReadKeepsOrderStopsEarlyAndFailsAtTheBadFile(): Unit = {
    val dir = TestDirs.create("fast-batches")
    val fs = hadoopPath(dir).getFileSystem(conf)
    val reader = new CommitReader(fs)
    val n = 100
    val bad = 37
    val files = (0 until n).map { v =>
      val f = dir.resolve(f"$v%020d.json")
      val text = if (v == bad) "not json\n" else add(v).json + "\n"
      Files.write(f, text.getBytes(StandardCharsets.UTF_8))
      status(hadoopPath(f))
    }
    // in order, up to the bad file, whose error is then raised
    val seen = scala.collection.mutable.ArrayBuffer.empty[Long]
    val e = assertThrows(classOf[io.deltalog.exceptions.DeltalogException],
      () => reader.readInOrder(files)(c => seen += c.version))
    assertTrue(e.getMessage.contains(f"$bad%020d.json"), e.getMessage)
    assertEquals((0 until bad).map(_.toLong), seen.toSeq)
    // stopping before the bad file: its error (parsed ahead in the same batch) is not raised
    seen.clear()
    reader.readInOrderUntil(files, reader.read) { c => seen += c.version; c.version < bad - 1 }
    assertEquals((0 until bad).map(_.toLong), seen.toSeq)
  }

  @Test def snapshotProtocolAndMetadataAgreeWithTheLoadedState(): Unit = {
    val log = tempLogDir("fast-snapshot")
    val logPath = hadoopPath(log)
    // checkpoint at 2 with P&M rows last, then commits 3 and 4 (4 changes the metadata)
    val ckpt = CheckpointWriter.write(conf, logPath, 2, ((0 until 25000).map(i => add(i): Action) ++
      Seq(protocolLegacy, metadata)).iterator)
    LastCheckpointInfo.write(LogStore(logPath.getFileSystem(conf)), logPath,
      LastCheckpointInfo(version = 2, size = ckpt.numActions, parts = None))
    Files.write(log.resolve(f"${3}%020d.json"), (add(90001).json + "\n").getBytes(StandardCharsets.UTF_8))
    val m2 = metadata.copy(configuration = Map("delta.appendOnly" -> "true"))
    Files.write(log.resolve(f"${4}%020d.json"), (Seq(add(90002).json, m2.json).mkString("\n") + "\n")
      .getBytes(StandardCharsets.UTF_8))
    for (v <- Seq(2L, 3L, 4L)) {
      val metadataOnly = DeltaLog.uncached(log.getParent.toString, conf).snapshotAt(v)
      val (p, m) = (metadataOnly.protocol, metadataOnly.metadata)
      val loaded = DeltaLog.uncached(log.getParent.toString, conf).snapshotAt(v)
      val st = loaded.state
      assertEquals(st.protocol, p, s"v$v")
      assertEquals(st.metadata, m, s"v$v")
      assertEquals((p, m), DeltaLog.uncached(log.getParent.toString, conf).readProtocolAndMetadata(Some(v)), s"v$v")
    }
  }
}
