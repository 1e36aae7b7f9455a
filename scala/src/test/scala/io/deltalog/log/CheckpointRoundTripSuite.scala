package io.deltalog.log

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.io.LocalInputFile
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.protocol.Protocol
import io.deltalog.log.CheckpointTestSupport._

/** Write → read round trips of every checkpoint flavour. */
class CheckpointRoundTripSuite {

  private def assertSameActions(expected: Seq[Action], actual: Seq[Action]): Unit = {
    assertEquals(expected.size, actual.size, "number of actions")
    expected.zip(actual).zipWithIndex.foreach { case ((e, a), i) =>
      assertEquals(tree(expectedAfterCheckpoint(e)), tree(a), s"action $i")
    }
  }

  private def withoutV2Rows(actions: Seq[Action]): Seq[Action] =
    actions.filterNot(a => a.isInstanceOf[CheckpointMetadata] || a.isInstanceOf[SidecarFile])

  private def visibleFiles(log: java.nio.file.Path): Seq[String] =
    Files.walk(log).iterator().asScala.filter(Files.isRegularFile(_)).map(p => log.relativize(p).toString)
      .toSeq.sorted

  private def roundTrip(protocol: Protocol, options: CheckpointWriteOptions): (CheckpointResult, Seq[Action], Seq[Action]) = {
    val log = tempLogDir("cp-rt")
    val input = reconciled(protocol, 10000)
    val t0 = System.nanoTime()
    val res = CheckpointWriter.write(conf, hadoopPath(log), 12, input.iterator, options)
    val t1 = System.nanoTime()
    val out = readAll(res.files.map(_.getPath), 12)
    val t2 = System.nanoTime()
    println(f"[checkpoint round trip] $options: write ${(t1 - t0) / 1e6}%.0f ms, read ${(t2 - t1) / 1e6}%.0f ms, " +
      s"files ${res.files.map(_.getPath.getName).mkString(",")} sidecars ${res.sidecarFiles.size}")
    // No hidden temp file remains.
    assertTrue(visibleFiles(log).forall(n => !n.split('/').last.startsWith(".")), visibleFiles(log).toString)
    assertEquals(input.count(_.isInstanceOf[AddFile]).toLong, res.numAddFiles)
    assertEquals(res.files.map(_.getLen).sum + res.sidecarFiles.map(_.getLen).sum, res.sizeInBytes)
    (res, input, out)
  }

  @Test def classicLegacyProtocol(): Unit = {
    val (res, input, out) = roundTrip(protocolLegacy, CheckpointWriteOptions())
    assertEquals(Seq("00000000000000000012.checkpoint.parquet"), res.files.map(_.getPath.getName))
    assertEquals(None, res.parts)
    assertEquals(input.size.toLong, res.numActions)
    assertSameActions(input, out)
    assertEquals(None, out.head.asInstanceOf[Protocol].readerFeatures)
  }

  @Test def classicTableFeatures(): Unit = {
    val (_, input, out) = roundTrip(protocolFeatures, CheckpointWriteOptions())
    assertSameActions(input, out)
  }

  @Test def multiPartThreeParts(): Unit = {
    val total = reconciled(protocolLegacy, 10000).size
    val (res, input, out) = roundTrip(protocolLegacy, CheckpointWriteOptions(partSize = Some((total + 2) / 3)))
    assertEquals(Some(3), res.parts)
    assertEquals(Seq(
      "00000000000000000012.checkpoint.0000000001.0000000003.parquet",
      "00000000000000000012.checkpoint.0000000002.0000000003.parquet",
      "00000000000000000012.checkpoint.0000000003.0000000003.parquet"), res.files.map(_.getPath.getName))
    assertEquals(total.toLong, res.numActions)
    assertSameActions(input, out)
  }

  @Test def multiPartThatFitsInOnePartIsClassic(): Unit = {
    val (res, input, out) = roundTrip(protocolLegacy, CheckpointWriteOptions(partSize = Some(1000000)))
    assertEquals(None, res.parts)
    assertEquals(Seq("00000000000000000012.checkpoint.parquet"), res.files.map(_.getPath.getName))
    assertSameActions(input, out)
  }

  @Test def v2ParquetWithTwoSidecars(): Unit = {
    val files = reconciled(protocolFeatures, 10000).count(_.isInstanceOf[FileAction])
    val (res, input, out) = roundTrip(protocolFeatures,
      CheckpointWriteOptions(v2 = true, sidecarSize = (files + 1) / 2))
    assertTrue(res.isV2)
    assertEquals(2, res.sidecarFiles.size)
    assertTrue(res.files.head.getPath.getName.matches("""00000000000000000012\.checkpoint\.[0-9a-f-]{36}\.parquet"""))
    res.sidecarFiles.foreach(s => assertEquals("_sidecars", s.getPath.getParent.getName))
    val sidecarRows = out.collect { case s: SidecarFile => s }
    assertEquals(res.sidecarFiles.map(_.getPath.getName), sidecarRows.map(_.path))
    assertEquals(1, out.count(_.isInstanceOf[CheckpointMetadata]))
    assertEquals(input.size + 3L, res.numActions)
    assertSameActions(input, withoutV2Rows(out))
  }

  @Test def v2Json(): Unit = {
    val (res, input, out) = roundTrip(protocolFeatures,
      CheckpointWriteOptions(v2 = true, v2TopLevelFormat = "json", sidecarSize = 4000))
    assertTrue(res.files.head.getPath.getName.endsWith(".json"))
    assertEquals(3, res.sidecarFiles.size)
    assertSameActions(input, withoutV2Rows(out))
    // The metadata-only path does not follow sidecars.
    val (p, m) = CheckpointReader.readProtocolAndMetadata(conf, CheckpointInstance(12, res.files))
    assertEquals(Some(protocolFeatures), p)
    assertEquals(input(1), m.get)
  }

  @Test def readOptions(): Unit = {
    val (res, input, _) = roundTrip(protocolFeatures, CheckpointWriteOptions())
    val noStats = readAll(res.files.map(_.getPath), 12, CheckpointReadOptions(skipStats = true))
    assertEquals(input.size, noStats.size)
    assertTrue(noStats.collect { case a: AddFile => a }.forall(_.stats.isEmpty))
    val noRemoves = readAll(res.files.map(_.getPath), 12, CheckpointReadOptions(skipRemoves = true))
    assertEquals(input.count(!_.isInstanceOf[RemoveFile]), noRemoves.size)
    val pm = readAll(res.files.map(_.getPath), 12, CheckpointReadOptions(onlyProtocolAndMetadata = true))
    assertEquals(Seq("protocol", "metaData"), pm.map(_.actionName))
    val c = new Collect
    CheckpointReader.read(conf, CheckpointInstance(12, res.files), c)
    assertTrue(c.versions.forall(_ == 12L))
  }

  @Test def statsAsStructOnlyRebuildsStatsJson(): Unit = {
    val (res, input, out) = roundTrip(protocolLegacy,
      CheckpointWriteOptions(writeStatsAsJson = false, writeStatsAsStruct = true))
    val schema = CheckpointReader.fileSchema(conf, res.files.head)
    val add = schema.getType(schema.getFieldIndex("add")).asGroupType()
    assertFalse(add.containsField("stats"))
    assertTrue(add.containsField("stats_parsed"))
    assertTrue(add.containsField("partitionValues_parsed"))
    val inAdds = input.collect { case a: AddFile => a }
    val outAdds = out.collect { case a: AddFile => a }
    assertEquals(inAdds.map(_.path), outAdds.map(_.path))
    inAdds.zip(outAdds).foreach { case (i, o) =>
      assertEquals(i.copy(stats = None), o.copy(stats = None))
      assertEquals(i.stats.isDefined, o.stats.isDefined, i.path)
      i.stats.foreach { s =>
        val want = ActionCodec.reader.readTree(s).deepCopy[com.fasterxml.jackson.databind.node.ObjectNode]()
        // Nested columns are not in the typed struct (documented limitation); booleans have no min/max.
        Seq("minValues", "maxValues", "nullCount").foreach(k => want.get(k).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].remove("nested"))
        assertEquals(want, ActionCodec.reader.readTree(o.stats.get), i.path)
      }
    }
  }

  @Test def statsAsStructAndJson(): Unit = {
    val (_, input, out) = roundTrip(protocolFeatures, CheckpointWriteOptions(writeStatsAsStruct = true))
    assertSameActions(input, out)
  }

  @Test def legacyProtocolFeatureColumnsAreNull(): Unit = {
    val log = tempLogDir("cp-proto")
    val res = CheckpointWriter.write(conf, hadoopPath(log), 1, reconciled(protocolLegacy, 10).iterator)
    val r = ParquetFileReader.open(new LocalInputFile(java.nio.file.Paths.get(res.files.head.getPath.toUri)))
    try {
      val cols = r.getFooter.getBlocks.get(0).getColumns.asScala
      val rows = r.getFooter.getBlocks.get(0).getRowCount
      Seq("protocol.readerFeatures.list.element", "protocol.writerFeatures.list.element").foreach { c =>
        val col = cols.find(_.getPath.toDotString == c).get
        assertEquals(rows, col.getStatistics.getNumNulls, c)
      }
    } finally r.close()
  }

  @Test def failedWriteLeavesNothingVisible(): Unit = {
    def failing(n: Int): Iterator[Action] = reconciled(protocolFeatures, 5000).iterator.zipWithIndex.map {
      case (a, i) => if (i == n) throw new RuntimeException("boom") else a
    }
    Seq(CheckpointWriteOptions(), CheckpointWriteOptions(partSize = Some(1000)),
      CheckpointWriteOptions(v2 = true, sidecarSize = 1000)).foreach { opts =>
      val log = tempLogDir("cp-fail")
      val e = assertThrows(classOf[RuntimeException], () => {
        CheckpointWriter.write(conf, hadoopPath(log), 3, failing(3500), opts); ()
      })
      assertEquals("boom", e.getMessage)
      assertEquals(Nil, visibleFiles(log), opts.toString)
    }
  }

  @Test def unknownActionsAreRejected(): Unit = {
    val log = tempLogDir("cp-bad")
    assertThrows(classOf[IllegalArgumentException], () => {
      CheckpointWriter.write(conf, hadoopPath(log), 1,
        Iterator(protocolLegacy, ActionCodec.parseLine("""{"commitInfo":{"timestamp":1}}""").get)); ()
    })
    assertEquals(Nil, visibleFiles(log))
  }

  @Test def pyarrowCanReadWrittenCheckpoint(): Unit = {
    val python = java.nio.file.Paths.get(System.getProperty("deltalog.repo.root", "."), ".venv/bin/python")
    if (!Files.isExecutable(python)) { println(s"[checkpoint] $python missing: pyarrow check skipped"); return }
    val log = tempLogDir("cp-pyarrow")
    val input = reconciled(protocolFeatures, 1000)
    val classic = CheckpointWriter.write(conf, hadoopPath(log), 5, input.iterator,
      CheckpointWriteOptions(writeStatsAsStruct = true))
    val v2 = CheckpointWriter.write(conf, hadoopPath(log), 6, input.iterator,
      CheckpointWriteOptions(v2 = true, sidecarSize = 600))
    val files = (classic.files ++ v2.files ++ v2.sidecarFiles).map(f => java.nio.file.Paths.get(f.getPath.toUri).toString)
    val script =
      """import sys, pyarrow.parquet as pq
        |for f in sys.argv[1:]:
        |    t = pq.read_table(f)
        |    adds = t.column('add').drop_null() if 'add' in t.column_names else []
        |    print(len(t), len(adds))
        |""".stripMargin
    val pb = new ProcessBuilder((Seq(python.toString, "-c", script) ++ files).asJava).redirectErrorStream(true)
    val p = pb.start()
    val text = new String(p.getInputStream.readAllBytes(), "UTF-8")
    assertEquals(0, p.waitFor(), text)
    val lines = text.trim.split("\n").toSeq
    assertEquals(files.size, lines.size, text)
    assertEquals(s"${input.size} 1000", lines.head)
    assertEquals(1000, lines.drop(2).map(_.split(" ")(1).toInt).sum, text)
    println(s"[checkpoint] pyarrow read ${files.size} files: ${lines.mkString("; ")}")
  }

  /** delta-rs (python `deltalake`, if installed) opens tables whose state is only in our checkpoints. */
  @Test def deltaRsCanLoadFromWrittenCheckpoint(): Unit = {
    val python = java.nio.file.Paths.get(System.getProperty("deltalog.repo.root", "."), ".venv/bin/python")
    if (!Files.isExecutable(python)) return
    val probe = new ProcessBuilder(python.toString, "-c", "import deltalake").start()
    if (probe.waitFor() != 0) { println("[checkpoint] deltalake not installed: delta-rs check skipped"); return }
    val input = reconciled(protocolFeatures, 2000)
    val expectedFiles = input.count(_.isInstanceOf[AddFile])
    Seq(CheckpointWriteOptions(), CheckpointWriteOptions(partSize = None, writeStatsAsStruct = true),
      CheckpointWriteOptions(v2 = true, sidecarSize = 700)).foreach { opts =>
      val log = tempLogDir("cp-deltars")
      // Commit 0 only names the protocol and metadata; the files exist only in the checkpoint at 1.
      Files.write(log.resolve("00000000000000000000.json"),
        (input.take(2).map(_.json).mkString("\n") + "\n").getBytes("UTF-8"))
      Files.write(log.resolve("00000000000000000001.json"),
        ("""{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE"}}""" + "\n").getBytes("UTF-8"))
      CheckpointWriter.write(conf, hadoopPath(log), 1, input.iterator, opts)
      val script =
        """import sys
          |from deltalake import DeltaTable
          |dt = DeltaTable(sys.argv[1])
          |print(dt.version(), len(dt.file_uris()))
          |""".stripMargin
      val p = new ProcessBuilder(python.toString, "-c", script, log.getParent.toString).redirectErrorStream(true).start()
      val text = new String(p.getInputStream.readAllBytes(), "UTF-8").trim
      println(s"[checkpoint] delta-rs on $opts: $text")
      assertEquals(0, p.waitFor(), text)
      assertEquals(s"1 $expectedFiles", text.split("\n").last)
    }
  }
}
