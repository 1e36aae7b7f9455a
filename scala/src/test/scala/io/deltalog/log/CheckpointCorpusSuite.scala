package io.deltalog.log

import java.nio.file.{Files, Paths, StandardCopyOption, Path => NioPath}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.exceptions.CorruptLogFileException
import io.deltalog.parquet.MappedColumnChunk
import io.deltalog.protocol.Protocol
import io.deltalog.log.CheckpointTestSupport._

/** Real checkpoints of the conformance corpus (../shared/conformance). */
class CheckpointCorpusSuite {

  private val corpus: NioPath = io.deltalog.ConformanceCorpus.root

  private def allLogFiles: Seq[NioPath] =
    Files.walk(corpus).iterator().asScala.filter(Files.isRegularFile(_)).toSeq
      .filter(_.toString.contains("_delta_log")).sortBy(_.toString)

  private val Classic = """(\d+)\.checkpoint\.parquet""".r
  private val Part = """(\d+)\.checkpoint\.(\d+)\.(\d+)\.parquet""".r
  private val Uuid = """(\d+)\.checkpoint\.([^.]+)\.(json|parquet)""".r

  /** Every checkpoint of the corpus as (description, instance). Sidecars are reached through them. */
  private def checkpoints: Seq[(String, CheckpointInstance)] = {
    val files = allLogFiles.filter(p => p.getParent.getFileName.toString == "_delta_log")
    val singles = files.flatMap { p =>
      p.getFileName.toString match {
        case Classic(v) => Some(p.toString -> CheckpointInstance(v.toLong, Seq(status(hadoopPath(p)))))
        case Uuid(v, _, _) => Some(p.toString -> CheckpointInstance(v.toLong, Seq(status(hadoopPath(p)))))
        case _ => None
      }
    }
    val multi = files.flatMap { p =>
      p.getFileName.toString match {
        case Part(v, part, n) => Some((p.getParent, v.toLong, n.toInt) -> (part.toInt, p))
        case _ => None
      }
    }.groupBy(_._1).toSeq.map { case ((dir, v, n), parts) =>
      val sorted = parts.map(_._2).sortBy(_._1)
      assertEquals((1 to n).toSeq, sorted.map(_._1), s"incomplete multi-part set in $dir")
      s"$dir@$v" -> CheckpointInstance(v, sorted.map(p => status(hadoopPath(p._2))))
    }
    singles ++ multi
  }

  /** Rows with a non-null `add`, counted with parquet-mr's example Group API. */
  private def groupAddCount(p: NioPath): Long = {
    val reader = ParquetReader.builder(new GroupReadSupport(), hadoopPath(p)).withConf(conf).build()
    try {
      var n = 0L
      var g: Group = reader.read()
      while (g != null) {
        if (g.getType.containsField("add") && g.getFieldRepetitionCount("add") > 0) n += 1
        g = reader.read()
      }
      n
    } finally reader.close()
  }

  @Test def everyCorpusCheckpointReads(): Unit = {
    val all = checkpoints
    assertFalse(all.isEmpty, s"no checkpoint under $corpus")
    var sidecarTotal = 0
    all.foreach { case (name, cp) =>
      val c = new Collect
      CheckpointReader.read(conf, cp, c)
      assertTrue(c.actions.nonEmpty, name)
      sidecarTotal += c.actions.count(_.isInstanceOf[SidecarFile])
      // Adds read = adds in the top-level files + adds in the sidecars (plain Group API count).
      val sidecarFiles = c.actions.collect { case s: SidecarFile => s }.map { s =>
        Paths.get(CheckpointReader.sidecarPath(cp.files.head.getPath.getParent, s.path).toUri)
      }
      val parquetTop = cp.files.map(f => Paths.get(f.getPath.toUri)).filter(_.toString.endsWith(".parquet"))
      val jsonTop = cp.files.map(f => Paths.get(f.getPath.toUri)).filter(_.toString.endsWith(".json"))
        .map(p => ActionCodec.parseText(new String(Files.readAllBytes(p), "UTF-8")).count(_.isInstanceOf[AddFile]).toLong).sum
      val expectedAdds = (parquetTop ++ sidecarFiles).map(groupAddCount).sum + jsonTop
      assertEquals(expectedAdds, c.actions.count(_.isInstanceOf[AddFile]).toLong, name)
      // The metadata-only path agrees with the full read.
      val (p, m) = CheckpointReader.readProtocolAndMetadata(conf, cp)
      assertEquals(c.actions.collectFirst { case x: Protocol => x }, p, name)
      assertEquals(c.actions.collectFirst { case x: Metadata => x }, m, name)
    }
    println(s"[checkpoint corpus] ${all.size} checkpoints read, $sidecarTotal sidecars followed")
    assertTrue(sidecarTotal > 0)
  }

  /**
   * The column-wise reading of plain `add` rows (sinks that take them, as replay does) gives the
   * same actions as record assembly, on every corpus checkpoint (dictionary and PLAIN pages,
   * escaped paths, null stats and partition values, several writers and row-group layouts).
   */
  @Test def plainAddColumnsMatchRecordAssembly(): Unit = {
    var plainRows = 0
    checkpoints.foreach { case (name, cp) =>
      val reference = new Collect
      CheckpointReader.read(conf, cp, reference)
      val columnWise = new Collect {
        override def wantsPlainAdds: Boolean = true
        override def acceptPlainAdd(version: Long, row: PlainAddRow): Unit = {
          plainRows += 1
          accept(version, row.toAddFile)
        }
      }
      CheckpointReader.read(conf, cp, columnWise)
      def sorted(c: Collect) = c.actions.map(_.json).sorted
      assertEquals(sorted(reference), sorted(columnWise), name)
    }
    println(s"[checkpoint corpus] $plainRows add rows read column-wise")
    if (checkpoints.nonEmpty) assertTrue(plainRows > 0)
  }

  /**
   * Row groups of local uncompressed checkpoints read in place from the file's map give the same
   * actions as parquet-mr's row-group read, column-wise and by record assembly.
   */
  @Test def mappedRowGroupsMatchParquetMrReads(): Unit = {
    def read(cp: CheckpointInstance, plain: Boolean, mapped: Boolean): Seq[String] = {
      val c = if (!plain) new Collect else new Collect {
        override def wantsPlainAdds: Boolean = true
        override def acceptPlainAdd(version: Long, row: PlainAddRow): Unit = accept(version, row.toAddFile)
      }
      val saved = CheckpointReader.MapRowGroups
      CheckpointReader.MapRowGroups = mapped
      try CheckpointReader.read(conf, cp, c) finally CheckpointReader.MapRowGroups = saved
      c.actions.map(_.json).sorted.toSeq
    }
    val before = MappedColumnChunk.rowGroupsServed.get()
    checkpoints.foreach { case (name, cp) =>
      for (plain <- Seq(true, false)) {
        val viaParquetMr = read(cp, plain, mapped = false)
        assertEquals(viaParquetMr, read(cp, plain, mapped = true), s"$name (column-wise: $plain)")
      }
    }
    val served = MappedColumnChunk.rowGroupsServed.get() - before
    println(s"[checkpoint corpus] $served row groups read in place from a memory map")
    if (checkpoints.nonEmpty) assertTrue(served > 0)
  }

  /**
   * The stats column decoded on a second thread ([[ParallelStatsReader]], here for every row
   * group however small) gives the same rows as one thread, on every corpus checkpoint.
   */
  @Test def parallelStatsMatchOneThread(): Unit = {
    def chunkOf(cp: CheckpointInstance, parallel: Boolean): (IndexedSeq[AddFile], Int) = {
      val sink = new ChunkSink(parallel = parallel)
      CheckpointReader.read(conf, cp, sink)
      (sink.rows, sink.detached)
    }
    val saved = CheckpointReader.ParallelStatsMinRows
    CheckpointReader.ParallelStatsMinRows = 1
    val mappedBefore = MappedColumnChunk.chunksServed.get()
    try {
      var used = 0
      checkpoints.foreach { case (name, cp) =>
        val (one, _) = chunkOf(cp, parallel = false)
        val (two, detached) = chunkOf(cp, parallel = true)
        used += detached
        assertEquals(one, two, name)
      }
      println(s"[checkpoint corpus] $used row groups read with the stats column on a second thread")
      if (checkpoints.nonEmpty) assertTrue(used > 0)
      // delta-rs writes uncompressed checkpoints: their stats chunks are read from a memory map
      val mapped = MappedColumnChunk.chunksServed.get() - mappedBefore
      println(s"[checkpoint corpus] $mapped uncompressed stats chunks read from a memory map")
      if (checkpoints.nonEmpty) assertTrue(mapped > 0)
    } finally CheckpointReader.ParallelStatsMinRows = saved
  }

  @Test def everySidecarFileReads(): Unit = {
    val sidecars = allLogFiles.filter(p => p.getParent.getFileName.toString == "_sidecars")
    sidecars.foreach { p =>
      val actions = readAll(Seq(hadoopPath(p)), 1)
      assertTrue(actions.forall(_.isInstanceOf[FileAction]), p.toString)
      assertEquals(groupAddCount(p), actions.count(_.isInstanceOf[AddFile]).toLong, p.toString)
    }
    println(s"[checkpoint corpus] ${sidecars.size} sidecar files read")
  }

  /** The struct-only checkpoint's rebuilt stats equal the JSON stats of the same add in the commits. */
  @Test def statsRebuiltFromStatsParsed(): Unit = {
    Seq("delta-rs/delta-1.2.1-only-struct-stats", "delta-kernel-rs/parsed-stats").foreach { table =>
      val log = corpus.resolve(table).resolve("_delta_log")
      if (Files.isDirectory(log)) {
        val cpFile = Files.list(log).iterator().asScala.find(_.getFileName.toString.endsWith(".checkpoint.parquet")).get
        val v = cpFile.getFileName.toString.takeWhile(_ != '.').toLong
        val fromCommits = Files.list(log).iterator().asScala.filter(_.getFileName.toString.matches("""\d+\.json"""))
          .filter(_.getFileName.toString.takeWhile(_ != '.').toLong <= v).toSeq
          .flatMap(p => ActionCodec.parseText(new String(Files.readAllBytes(p), "UTF-8")))
          .collect { case a: AddFile if a.stats.isDefined => a.path -> a.stats.get }.toMap
        val adds = readAll(Seq(hadoopPath(cpFile)), v).collect { case a: AddFile => a }
        assertTrue(adds.nonEmpty)
        var compared = 0
        adds.foreach { a =>
          fromCommits.get(a.path).foreach { s =>
            val want = ActionCodec.reader.readTree(s)
            val got = ActionCodec.reader.readTree(a.stats.getOrElse(fail(s"no stats for ${a.path}")))
            // The checkpoint struct may lack columns that appear only in the JSON; compare what it has.
            got.fieldNames().asScala.foreach { k =>
              assertEquals(subset(want.get(k), got.get(k)), got.get(k), s"$table ${a.path} $k")
            }
            compared += 1
          }
        }
        println(s"[checkpoint corpus] $table: $compared rebuilt stats strings match the commits")
        assertTrue(compared > 0, table)
      }
    }
  }

  /** `want` restricted to the fields present in `got` (recursively). */
  private def subset(want: com.fasterxml.jackson.databind.JsonNode,
      got: com.fasterxml.jackson.databind.JsonNode): com.fasterxml.jackson.databind.JsonNode =
    if (want == null || !want.isObject || !got.isObject) want
    else {
      val o = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode()
      got.fieldNames().asScala.foreach(k => if (want.has(k)) o.set[com.fasterxml.jackson.databind.JsonNode](k, subset(want.get(k), got.get(k))))
      o
    }

  private def firstClassic: Option[NioPath] =
    allLogFiles.find(p => p.toString.contains("basic-with-checkpoint") && p.getFileName.toString.endsWith(".checkpoint.parquet"))

  @Test def truncatedOrGarbageParquetIsCorruptLogFile(): Unit = {
    val src = firstClassic.getOrElse(fail[NioPath](s"no basic-with-checkpoint checkpoint under $corpus"))
    val bytes = Files.readAllBytes(src)
    val log = tempLogDir("cp-corrupt")
    val cases = Seq(
      "truncated-footer" -> bytes.take(bytes.length - 10),
      "truncated-half" -> bytes.take(bytes.length / 2),
      "garbage" -> "this is not parquet at all".getBytes("UTF-8"),
      "empty" -> Array.emptyByteArray,
      // Valid footer, damaged column data.
      "damaged-pages" -> { val b = bytes.clone(); (4 until math.min(b.length / 2, 4000)).foreach(i => b(i) = 0x55.toByte); b })
    cases.zipWithIndex.foreach { case ((label, content), i) =>
      val p = log.resolve(f"${i + 1}%020d.checkpoint.parquet")
      Files.write(p, content)
      val e = assertThrows(classOf[CorruptLogFileException], () => { readAll(Seq(hadoopPath(p)), i + 1L); () }, label)
      assertTrue(e.getMessage.contains(p.getFileName.toString), s"$label: ${e.getMessage}")
      assertEquals("DELTA_CORRUPT_LOG_FILE", e.errorClass)
    }
  }

  @Test def missingSidecarIsCorruptLogFile(): Unit = {
    val table = corpus.resolve("delta-kernel-rs/v2-checkpoint-parquet/delta/_delta_log")
    if (!Files.isDirectory(table)) return
    val top = Files.list(table).iterator().asScala.find(_.getFileName.toString.matches("""\d+\.checkpoint\.[^.]+\.parquet""")).get
    val log = tempLogDir("cp-nosidecar")
    val copy = log.resolve(top.getFileName)
    Files.copy(top, copy, StandardCopyOption.REPLACE_EXISTING)
    val e = assertThrows(classOf[CorruptLogFileException], () => { readAll(Seq(hadoopPath(copy)), 2); () })
    assertTrue(e.getMessage.contains("_sidecars/"), e.getMessage)
    // The metadata-only path does not need the sidecars.
    val (p, m) = CheckpointReader.readProtocolAndMetadata(conf, CheckpointInstance(2, Seq(status(hadoopPath(copy)))))
    assertTrue(p.isDefined && m.isDefined)
  }

  @Test def sinkExceptionsAreNotWrapped(): Unit = {
    val src = firstClassic.getOrElse(return)
    val cp = CheckpointInstance(10, Seq(status(hadoopPath(src))))
    val e = assertThrows(classOf[IllegalStateException], () => CheckpointReader.read(conf, cp, new ReplaySink {
      override def accept(version: Long, action: Action): Unit = throw new IllegalStateException("sink")
    }))
    assertEquals("sink", e.getMessage)
  }
}
