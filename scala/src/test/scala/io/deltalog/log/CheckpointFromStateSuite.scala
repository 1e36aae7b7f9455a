package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths, Path => NioPath}

import scala.jdk.CollectionConverters._

import org.apache.parquet.bytes.ByteBufferInputStream
import org.apache.parquet.column.Encoding
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridDecoder
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.io.LocalInputFile
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}

import io.deltalog.actions._
import io.deltalog.log.CheckpointTestSupport.{protocolFeatures, readAll, stats, tempLogDir, tree, SchemaString}
import io.deltalog.parquet.{LevelRuns, LittleEndianBuffer, ParquetFooterSuite, ParquetLevels}

/**
 * The checkpoint writer's fast path (a snapshot's [[CheckpointActions]] written column-wise
 * from its state) against the reference path (the same actions as a plain iterator, one
 * `Action` per row through parquet-mr's record writer): both must read back as the same
 * actions, for every checkpoint flavour and for a state with every kind of field.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckpointFromStateSuite {
  import LogTestSupport.{conf, deleteRecursively, hadoopPath, logDir, newTable, writeCommit}

  private var table: NioPath = _
  private var snapshot: Snapshot = _

  private val now = System.currentTimeMillis()

  /** One `add` with a little of everything, depending on `i`. */
  private def addAt(i: Int, dataChange: Boolean = true): AddFile = {
    val part = if (i % 11 == 0) null else s"p${i % 5}"
    val dir = if (part == null) "part=__HIVE_DEFAULT_PARTITION__" else s"part=$part"
    val name = if (i % 13 == 0) s"f%C3%BC%20r-$i-ü.parquet" else s"part-$i-0b8a2f5e.c000.snappy.parquet"
    AddFile(
      path = s"$dir/day=2024-01-0${1 + i % 9}/$name",
      partitionValues =
        if (i % 17 == 0) Map("part" -> part, "day" -> null)
        else if (i % 29 == 0) Map.empty
        else Map("part" -> part, "day" -> s"2024-01-0${1 + i % 9}"),
      size = 1000L + i,
      modificationTime = 1700000000000L + i % 100,
      dataChange = dataChange,
      stats = if (i % 19 == 0) None else Some(stats(i)),
      tags = if (i % 3 == 0) Some(Map("INSERTION_TIME" -> s"${1700000000000000L + i}", "ZCUBE_ID" -> "z"))
        else if (i % 31 == 0) Some(Map.empty) else None,
      deletionVector =
        if (i % 5 == 0) Some(DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 36, i % 50 + 1L))
        else if (i % 7 == 0) Some(DeletionVectorDescriptor("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", None, 40, 3L, Some(99L)))
        else None,
      baseRowId = if (i % 4 == 0) Some(i * 100L) else None,
      defaultRowCommitVersion = if (i % 4 == 0 || i % 6 == 1) Some(3L) else None,
      clusteringProvider = if (i % 9 == 0) Some("liquid") else None)
  }

  /** Commit lines of `actions`; every 23rd file action carries a field this version does not know. */
  private def lines(actions: Seq[Action]): String = actions.zipWithIndex.map { case (a, k) =>
    val line = ActionCodec.serialize(Seq(a)).trim
    if (k % 23 != 5) line
    else line.replace("{\"add\":{", "{\"add\":{\"futureField\":{\"x\":[1,2]},")
      .replace("{\"remove\":{", "{\"remove\":{\"futureField\":7,")
  }.mkString("", "\n", "\n")

  private def commit(version: Long, actions: Seq[Action]): Unit =
    Files.write(logDir(table).resolve(f"$version%020d.json"), lines(actions).getBytes(UTF_8))

  private def removeOf(a: AddFile, withDv: Boolean): RemoveFile =
    RemoveFile(a.path, Some(now - 1000), dataChange = true, extendedFileMetadata = Some(true),
      partitionValues = Some(a.partitionValues), size = Some(a.size),
      deletionVector = if (withDv) a.deletionVector else None, baseRowId = a.baseRowId,
      defaultRowCommitVersion = a.defaultRowCommitVersion)

  /**
   * A table whose latest state has several chunks with deleted rows: commits 0-2, a reference
   * checkpoint at 2 (the first chunk), then commits 3 and 4 read incrementally.
   */
  @BeforeAll def buildTable(): Unit = {
    table = newTable()
    val meta = Metadata(id = "7d9c3b2a-0000-4000-8000-0000000000aa", name = Some("rich"),
      format = Format("parquet", Map("k" -> "v")), schemaString = SchemaString, partitionColumns = Seq("part", "day"),
      configuration = Map("delta.enableDeletionVectors" -> "true"), createdTime = Some(1700000000000L))
    commit(0, Seq(protocolFeatures, meta, SetTransaction("app-1", 3, Some(now)),
      DomainMetadata("delta.rowTracking", """{"rowIdHighWaterMark":9}""", removed = false),
      DomainMetadata("user.x", "", removed = false)))
    val first = (0 until 6000).map(i => addAt(i))
    commit(1, first)
    // Replace the DVs of some files (remove with the old DV, add with a new one) and drop others.
    val changed = first.filter(_.deletionVector.isDefined).take(300)
    commit(2, changed.map(a => removeOf(a, withDv = true)) ++ changed.map(a => a.copy(
      deletionVector = Some(DeletionVectorDescriptor("u", "zz^-aqEH.-t@S}K{vb[*k^", Some(5), 40, 4L))))
      ++ first.filter(_.size % 10 == 3).map(a => removeOf(a, withDv = true)) :+ SetTransaction("app-2", 9, None))
    val log = DeltaLog.uncached(table.toString, conf)
    val s2 = log.update()
    val ref = CheckpointWriter.write(conf, hadoopPath(logDir(table)), 2, Checkpoints.actions(s2).toVector.iterator)
    LastCheckpointInfo.write(LogStore(log.fs), hadoopPath(logDir(table)),
      LastCheckpointInfo(2, ref.numActions, None, Some(ref.sizeInBytes), Some(ref.numAddFiles)))
    val log2 = DeltaLog.uncached(table.toString, conf)
    val s2b = log2.update()
    assertTrue(s2b.logSegment.checkpoint.isDefined)
    s2b.state
    commit(3, (6000 until 6400).map(i => addAt(i)) ++ first.filter(_.size % 10 == 7).map(a => removeOf(a, withDv = true)))
    log2.update().state
    commit(4, (6400 until 6500).map(i => addAt(i)) ++ (6000 until 6400 by 9).map(i => removeOf(addAt(i), withDv = true)) :+
      DomainMetadata("user.y", "{}", removed = false))
    snapshot = log2.update()
    assertTrue(snapshot.state.chunkCount >= 2, s"chunks ${snapshot.state.chunkCount}")
  }

  @AfterAll def dropTable(): Unit = if (table != null) deleteRecursively(table)

  // ------------------------------------------------------------------------------ helpers

  private def footer(p: org.apache.hadoop.fs.Path): ParquetMetadata = {
    val r = ParquetFileReader.open(new LocalInputFile(Paths.get(p.toUri)))
    try r.getFooter finally r.close()
  }

  private def withoutV2Rows(actions: Seq[Action]): Seq[Action] =
    actions.filterNot(a => a.isInstanceOf[CheckpointMetadata] || a.isInstanceOf[SidecarFile])

  private def assertSame(expected: Seq[Action], actual: Seq[Action]): Unit = {
    assertEquals(expected.size, actual.size, "number of actions")
    expected.zip(actual).zipWithIndex.foreach { case ((e, a), i) => assertEquals(tree(e), tree(a), s"action $i") }
  }

  /** Writes `snapshot` both ways; returns (fast result, fast rows, reference result, reference rows). */
  private def bothWays(options: CheckpointWriteOptions): (CheckpointResult, Seq[Action], CheckpointResult, Seq[Action]) = {
    val fastLog = tempLogDir("cp-fast")
    val refLog = tempLogDir("cp-ref")
    val fast = CheckpointWriter.write(conf, hadoopPath(fastLog), snapshot.version, Checkpoints.actions(snapshot), options)
    val ref = CheckpointWriter.write(conf, hadoopPath(refLog), snapshot.version,
      Checkpoints.actions(snapshot).toVector.iterator, options)
    val parquetFiles = (fast.files ++ fast.sidecarFiles).filter(_.getPath.getName.endsWith(".parquet"))
    val fastOnly = if (options.v2) fast.sidecarFiles else fast.files
    fastOnly.foreach(f => assertTrue(footer(f.getPath).getFileMetaData.getCreatedBy.startsWith("deltalog"), "fast path used"))
    (ref.files ++ ref.sidecarFiles).filter(_.getPath.getName.endsWith(".parquet")).foreach(f =>
      assertTrue(footer(f.getPath).getFileMetaData.getCreatedBy.startsWith("parquet-mr"), "reference path used"))
    assertTrue(parquetFiles.nonEmpty)
    // both writers' footers decode as parquet-mr decodes them (the reader's footer decoder)
    (parquetFiles ++ (ref.files ++ ref.sidecarFiles).filter(_.getPath.getName.endsWith(".parquet")))
      .foreach(f => ParquetFooterSuite.assertDecodedLikeParquetMr(java.nio.file.Paths.get(f.getPath.toUri)))
    val fastRows = readAll(fast.files.map(_.getPath), snapshot.version)
    val refRows = readAll(ref.files.map(_.getPath), snapshot.version)
    assertEquals(ref.numActions, fast.numActions)
    assertEquals(ref.numAddFiles, fast.numAddFiles)
    assertEquals(snapshot.numFiles, fast.numAddFiles)
    assertEquals(ref.parts, fast.parts)
    assertEquals(ref.files.size, fast.files.size)
    assertEquals(ref.sidecarFiles.size, fast.sidecarFiles.size)
    assertEquals(fast.files.map(_.getLen).sum + fast.sidecarFiles.map(_.getLen).sum, fast.sizeInBytes)
    Seq(fastLog, refLog).foreach(l => deleteRecursively(l.getParent))
    (fast, fastRows, ref, refRows)
  }

  // ------------------------------------------------------------------------------ tests

  @Test def stateHasEveryKindOfField(): Unit = {
    val adds = snapshot.allFiles.toVector
    assertTrue(adds.exists(_.extra.unknown.nonEmpty), "unknown fields")
    assertTrue(adds.exists(_.tags.exists(_.isEmpty)) && adds.exists(_.tags.exists(_.nonEmpty)), "tags")
    assertTrue(adds.exists(_.deletionVector.exists(_.offset.isEmpty)), "inline DV")
    assertTrue(adds.exists(_.stats.isEmpty) && adds.exists(_.partitionValues.isEmpty), "null stats, no partition values")
    assertTrue(adds.exists(a => a.baseRowId.isEmpty && a.defaultRowCommitVersion.isDefined), "row tracking")
    assertTrue(adds.exists(_.partitionValues.values.exists(_ == null)), "null partition value")
    assertTrue(snapshot.tombstones.nonEmpty)
  }

  @Test def classic(): Unit = {
    val (fast, fastRows, _, refRows) = bothWays(CheckpointWriteOptions())
    assertEquals(Seq(f"${snapshot.version}%020d.checkpoint.parquet"), fast.files.map(_.getPath.getName))
    assertSame(refRows, fastRows)
    assertEquals(Checkpoints.actions(snapshot).size, fastRows.size)
  }

  @Test def statsAsStructAndJson(): Unit = {
    val (fast, fastRows, _, refRows) = bothWays(CheckpointWriteOptions(writeStatsAsStruct = true))
    val add = fast.checkpointSchema.getType(fast.checkpointSchema.getFieldIndex("add")).asGroupType()
    assertTrue(add.containsField("stats_parsed") && add.containsField("partitionValues_parsed"))
    assertSame(refRows, fastRows)
  }

  @Test def statsAsStructOnly(): Unit = {
    val (_, fastRows, _, refRows) = bothWays(CheckpointWriteOptions(writeStatsAsJson = false, writeStatsAsStruct = true))
    assertSame(refRows, fastRows)
  }

  @Test def multiPart(): Unit = {
    // Part boundaries inside the live files and the tombstones.
    val total = Checkpoints.actions(snapshot).size
    Seq(2500L, total - 2L).foreach { partSize =>
      val (fast, fastRows, _, refRows) = bothWays(CheckpointWriteOptions(partSize = Some(partSize)))
      assertEquals(Some(((total + partSize - 1) / partSize).toInt), fast.parts)
      assertSame(refRows, fastRows)
    }
  }

  @Test def multiPartThatFitsInOnePart(): Unit = {
    val (fast, fastRows, _, refRows) = bothWays(CheckpointWriteOptions(partSize = Some(1L << 30)))
    assertEquals(None, fast.parts)
    assertSame(refRows, fastRows)
  }

  @Test def v2WithSidecars(): Unit = {
    Seq("parquet", "json").foreach { format =>
      val (fast, fastRows, _, refRows) = bothWays(CheckpointWriteOptions(v2 = true, v2TopLevelFormat = format, sidecarSize = 2000))
      assertTrue(fast.sidecarFiles.size >= 3)
      assertSame(withoutV2Rows(refRows), withoutV2Rows(fastRows))
      val sidecars = fastRows.collect { case s: SidecarFile => s }
      assertEquals(fast.sidecarFiles.map(_.getPath.getName), sidecars.map(_.path))
      assertEquals(fast.sidecarFiles.map(_.getLen), sidecars.map(_.sizeInBytes))
    }
  }

  @Test def readIteratorFallsBackToTheReferencePath(): Unit = {
    val actions = Checkpoints.actions(snapshot)
    val first = actions.next()
    val log = tempLogDir("cp-consumed")
    val res = CheckpointWriter.write(conf, hadoopPath(log), snapshot.version, Iterator(first) ++ actions)
    assertTrue(footer(res.files.head.getPath).getFileMetaData.getCreatedBy.startsWith("parquet-mr"))
    assertEquals(snapshot.numFiles, res.numAddFiles)
    deleteRecursively(log.getParent)
  }

  /** Tiny pages and row groups: page cuts and row-group cuts anywhere in the rows. */
  @Test def manyPagesAndRowGroups(): Unit = {
    val actions = Checkpoints.actions(snapshot).asInstanceOf[CheckpointActions]
    val rows = new CheckpointRows(actions.head, actions.state, actions.tombstones)
    val schema = CheckpointSchema.classic(CheckpointSchema.addType(statsJson = true, None, None))
    val dir = tempLogDir("cp-pages")
    val file = dir.resolve("00000000000000000004.checkpoint.parquet")
    val out = Files.newOutputStream(file)
    try rows.writeFile(out, schema, None, 0, rows.numRows, rowGroupBytes = 200000, pageSize = 4096)
    finally out.close()
    val meta = footer(hadoopPath(file))
    assertTrue(meta.getBlocks.size > 3, s"row groups: ${meta.getBlocks.size}")
    val pathChunk = meta.getBlocks.get(0).getColumns.asScala.find(_.getPath.toDotString == "add.path").get
    assertTrue(pathChunk.getEncodingStats.getNumDataPagesEncodedAs(Encoding.PLAIN) > 3)
    assertEquals(rows.numRows, meta.getBlocks.asScala.map(_.getRowCount).sum)
    val back = readAll(Seq(hadoopPath(file)), 4)
    val refLog = tempLogDir("cp-pages-ref")
    val ref = CheckpointWriter.write(conf, hadoopPath(refLog), 4, Checkpoints.actions(snapshot).toVector.iterator)
    assertSame(readAll(ref.files.map(_.getPath), 4), back)
    Seq(dir, refLog).foreach(l => deleteRecursively(l.getParent))
  }

  /** Files of any row range (as parts are) hold exactly those rows. */
  @Test def anyRowRange(): Unit = {
    val actions = Checkpoints.actions(snapshot).asInstanceOf[CheckpointActions]
    val rows = new CheckpointRows(actions.head, actions.state, actions.tombstones)
    val schema = CheckpointSchema.classic(CheckpointSchema.addType(statsJson = true, None, None))
    val h = actions.head.size.toLong
    val cuts = Seq(0L, 3L, h, h + 5, h + rows.numAdds - 1, rows.numRows - 2, rows.numRows)
    val dir = tempLogDir("cp-ranges")
    val back = cuts.zip(cuts.tail).zipWithIndex.flatMap { case ((from, until), k) =>
      val file = dir.resolve(s"range-$k.parquet")
      val out = Files.newOutputStream(file)
      try rows.writeFile(out, schema, None, from, until) finally out.close()
      assertEquals(until - from, footer(hadoopPath(file)).getBlocks.asScala.map(_.getRowCount).sum)
      readAll(Seq(hadoopPath(file)), 4)
    }
    val refLog = tempLogDir("cp-ranges-ref")
    val ref = CheckpointWriter.write(conf, hadoopPath(refLog), 4, Checkpoints.actions(snapshot).toVector.iterator)
    assertSame(readAll(ref.files.map(_.getPath), 4), back)
    Seq(dir, refLog).foreach(l => deleteRecursively(l.getParent))
  }

  @Test def emptyStateAndNoTombstones(): Unit = {
    val t = newTable()
    try {
      writeCommit(t, 0, Seq(protocolFeatures, Metadata(id = "e", schemaString = SchemaString)))
      val s = DeltaLog.uncached(t.toString, conf).update()
      val log = tempLogDir("cp-empty")
      val res = CheckpointWriter.write(conf, hadoopPath(log), 0, Checkpoints.actions(s))
      assertEquals(2L, res.numActions)
      assertEquals(Seq("protocol", "metaData"), readAll(res.files.map(_.getPath), 0).map(_.actionName))
      deleteRecursively(log.getParent)
    } finally deleteRecursively(t)
  }

  /** Levels in the RLE / bit-packing hybrid encoding decode (with parquet-mr) to what was added. */
  @Test def levelEncodingRoundTrip(): Unit = {
    val rnd = new scala.util.Random(7)
    for (maxLevel <- Seq(1, 2, 3, 4, 7, 9); trial <- 0 until 40) {
      val runs = new LevelRuns
      val expected = scala.collection.mutable.ArrayBuffer.empty[Int]
      (0 until rnd.nextInt(60) + 1).foreach { _ =>
        val v = rnd.nextInt(maxLevel + 1)
        val n = if (rnd.nextInt(4) == 0) rnd.nextInt(40) + 1 else rnd.nextInt(3) + 1
        runs.add(v, n)
        expected ++= Seq.fill(n)(v)
      }
      val width = ParquetLevels.bitWidth(maxLevel)
      val out = new LittleEndianBuffer(16)
      runs.encode(width, out)
      val decoder = new RunLengthBitPackingHybridDecoder(width,
        ByteBufferInputStream.wrap(java.nio.ByteBuffer.wrap(out.bytes, 0, out.pos)))
      val got = expected.indices.map(_ => decoder.readInt())
      assertEquals(expected.toSeq, got, s"max level $maxLevel, trial $trial")
    }
  }

  // ------------------------------------------------------------------------------ other readers

  /** Spark's Parquet reader (as delta-spark reads checkpoints) sees the same rows in both files. */
  @Test def sparkReadsTheSameRows(): Unit = {
    val spark = io.deltalog.spark.SparkTestSession.spark
    val fastLog = tempLogDir("cp-spark-fast")
    val refLog = tempLogDir("cp-spark-ref")
    val opts = CheckpointWriteOptions(writeStatsAsStruct = true)
    val fast = CheckpointWriter.write(conf, hadoopPath(fastLog), snapshot.version, Checkpoints.actions(snapshot), opts)
    val ref = CheckpointWriter.write(conf, hadoopPath(refLog), snapshot.version,
      Checkpoints.actions(snapshot).toVector.iterator, opts)
    val key = "spark.sql.parquet.enableVectorizedReader"
    val before = spark.conf.getOption(key)
    try {
      Seq("true", "false").foreach { vectorized =>
        spark.conf.set(key, vectorized)
        def rows(r: CheckpointResult): Seq[String] =
          spark.read.parquet(r.files.head.getPath.toString).toJSON.collect().toSeq.sorted
        val fastRows = rows(fast)
        assertEquals(fast.numActions, fastRows.size.toLong)
        assertEquals(rows(ref), fastRows, s"vectorized reader: $vectorized")
        assertEquals(snapshot.numFiles, fastRows.count(_.startsWith("{\"add\":")).toLong)
      }
    } finally {
      before match { case Some(v) => spark.conf.set(key, v); case None => spark.conf.unset(key) }
      Seq(fastLog, refLog).foreach(l => deleteRecursively(l.getParent))
    }
  }

  private def python: Option[NioPath] = {
    val p = Paths.get(System.getProperty("deltalog.repo.root", "."), ".venv/bin/python")
    if (Files.isExecutable(p)) Some(p) else { println(s"[checkpoint] $p missing: check skipped"); None }
  }

  private def run(py: NioPath, script: String, args: String*): String = {
    val p = new ProcessBuilder((Seq(py.toString, "-c", script) ++ args).asJava).redirectErrorStream(true).start()
    val text = new String(p.getInputStream.readAllBytes(), UTF_8).trim
    assertEquals(0, p.waitFor(), text)
    text
  }

  /** pyarrow reads the fast path's files; delta-rs opens a table from a fast-path checkpoint. */
  @Test def otherReadersReadTheFastPath(): Unit = python.foreach { py =>
    val log = tempLogDir("cp-pyarrow")
    val classic = CheckpointWriter.write(conf, hadoopPath(log), snapshot.version, Checkpoints.actions(snapshot),
      CheckpointWriteOptions(writeStatsAsStruct = true))
    val v2 = CheckpointWriter.write(conf, hadoopPath(log), snapshot.version + 1, Checkpoints.actions(snapshot),
      CheckpointWriteOptions(v2 = true, sidecarSize = 2500))
    val files = (classic.files ++ v2.sidecarFiles).map(f => Paths.get(f.getPath.toUri).toString)
    val text = run(py,
      """import sys, pyarrow.parquet as pq
        |print(sum(len(pq.read_table(f).column('add').drop_null()) for f in sys.argv[1:]))
        |""".stripMargin, files: _*)
    assertEquals(s"${2 * snapshot.numFiles}", text.split("\n").last)
    deleteRecursively(log.getParent)

    val probe = new ProcessBuilder(py.toString, "-c", "import deltalake").start()
    if (probe.waitFor() != 0) { println("[checkpoint] deltalake not installed: delta-rs check skipped"); return }
    Seq(CheckpointWriteOptions(), CheckpointWriteOptions(writeStatsAsStruct = true)).foreach { opts =>
      // A copy of the table's log up to the snapshot, checkpointed by the fast path.
      val copy = newTable()
      (0L to snapshot.version).foreach { v =>
        Files.copy(logDir(table).resolve(f"$v%020d.json"), logDir(copy).resolve(f"$v%020d.json"))
      }
      val res = CheckpointWriter.write(conf, hadoopPath(logDir(copy)), snapshot.version, Checkpoints.actions(snapshot), opts)
      // Only the checkpoint can give delta-rs the state: the commits are gone.
      (0L to snapshot.version).foreach(v => Files.delete(logDir(copy).resolve(f"$v%020d.json")))
      Files.write(logDir(copy).resolve(f"${snapshot.version}%020d.json"), Files.readAllBytes(
        logDir(table).resolve(f"${snapshot.version}%020d.json")))
      LastCheckpointInfo.write(LogStore(LogTestSupport.fs), hadoopPath(logDir(copy)),
        LastCheckpointInfo(snapshot.version, res.numActions, None, Some(res.sizeInBytes), Some(res.numAddFiles)))
      val out = run(py,
        """import sys
          |import pyarrow as pa
          |from deltalake import DeltaTable
          |dt = DeltaTable(sys.argv[1])
          |t = pa.table(dt.get_add_actions(flatten=True))
          |print(dt.version(), t.num_rows, sum(t.column('size_bytes').to_pylist()))
          |""".stripMargin, copy.toString)
      println(s"[checkpoint] delta-rs on fast path $opts: $out")
      assertEquals(s"${snapshot.version} ${snapshot.numFiles} ${snapshot.sizeInBytes}", out.split("\n").last)
      deleteRecursively(copy)
    }
  }
}
