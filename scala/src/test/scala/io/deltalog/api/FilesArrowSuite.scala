package io.deltalog.api

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.ipc.ArrowStreamReader
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.log.{DeltaLog, LogTestSupport, SnapshotState}

/** The columnar `addsFromState` path writes the same Arrow content as the `AddFile` path. */
class FilesArrowSuite {
  import LogTestSupport._

  /** Schema and all rows (every column's value, nulls as "null") of an Arrow IPC stream. */
  private def content(bytes: Array[Byte]): (String, Seq[Seq[String]], Int) = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val reader = new ArrowStreamReader(new ByteArrayInputStream(bytes), allocator)
      try {
        val root = reader.getVectorSchemaRoot
        val rows = ArrayBuffer.empty[Seq[String]]
        var batches = 0
        while (reader.loadNextBatch()) {
          batches += 1
          val vecs = root.getFieldVectors.asScala.toSeq
          for (i <- 0 until root.getRowCount)
            rows += vecs.map(v => if (v.isNull(i)) "null" else String.valueOf(v.getObject(i)))
        }
        (root.getSchema.toJson, rows.toSeq, batches)
      } finally reader.close()
    } finally allocator.close()
  }

  private def fromState(s: SnapshotState, batchSize: Int): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    FilesArrow.writeAddsFromState(s, out, batchSize)
    out.toByteArray
  }

  private def assertSame(s: SnapshotState): Unit = {
    val expected = FilesArrow.adds(s.iterator)
    val (schema, rows, _) = content(expected)
    assertEquals(s.numFiles, rows.size.toLong)
    val direct = FilesArrow.addsFromState(s)
    assertArrayEquals(expected, direct, "default batch size: identical IPC bytes")
    for (bs <- Seq(1, 7, 1000, 4096)) {
      val (schema2, rows2, batches) = content(fromState(s, bs))
      assertEquals(schema, schema2)
      assertEquals(math.max(1L, (s.numFiles + bs - 1) / bs), batches.toLong, s"batch size $bs")
      assertEquals(rows.size, rows2.size)
      rows.indices.foreach(i => assertEquals(rows(i), rows2(i), s"row $i (batch size $bs)"))
    }
  }

  private def file(v: Int, i: Int): AddFile = {
    val pv: Map[String, String] = (i % 5) match {
      case 0 => Map("p" -> "a", "q" -> "1")
      case 1 => Map("p" -> null, "q" -> "2")
      case 2 => Map("p" -> "ü€𝄞", "q" -> null)
      case 3 => Map("p" -> s"x$i", "q" -> "3") // distinct maps
      case _ => Map("p" -> "a", "q" -> "1")
    }
    AddFile(
      path = s"p=${pv("p")}/part-$v-$i-é.parquet",
      partitionValues = pv,
      size = 100L + i,
      modificationTime = 1000L * v + i,
      dataChange = true,
      stats = if (i % 3 == 0) None else Some(s"""{"numRecords":$i,"minValues":{"id":"é$i"}}"""),
      tags = if (i % 4 == 0) Some(Map("t" -> s"v$i", "n" -> "ü")) else if (i % 4 == 1) Some(Map.empty) else None,
      deletionVector = if (i % 6 == 0) Some(DeletionVectorDescriptor("u", ("dv" + i + "x" * 22).take(22),
        if (i % 12 == 0) Some(1) else None, 10 + i, i.toLong, if (i % 12 == 0) Some(i.toLong) else None)) else None,
      baseRowId = if (i % 2 == 0) Some(10L * i) else None,
      defaultRowCommitVersion = if (i % 3 == 1) Some(v.toLong) else None,
      clusteringProvider = if (i % 7 == 0) Some("liquid") else None)
  }

  @Test def directPathMatchesAddFilePath(): Unit = {
    val t = newTable()
    try {
      val m = meta(partitionColumns = Seq("p", "q"))
      writeCommit(t, 0, Seq(protocol12, m) ++ (0 until 5000).map(file(0, _)))
      writeCommit(t, 1, (0 until 300).map(file(1, _)) ++ (0 until 5000 by 3).map(i => RemoveFile(file(0, i).path, Some(5L))))
      val log = DeltaLog.uncached(t.toString, conf)
      val s1 = log.snapshot()
      assertSame(s1.state)
      writeCommit(t, 2, (0 until 200).map(file(2, _)) ++ (1 until 300 by 2).map(i => RemoveFile(file(1, i).path, Some(6L))))
      writeCommit(t, 3, Seq(file(3, 5), file(3, 6)) ++ (0 until 100 by 5).map(i => RemoveFile(file(2, i).path, Some(7L))))
      val s3 = log.update()
      assertEquals(3L, s3.version)
      assertTrue(s3.state.chunkCount > 1, "incremental update: several chunks")
      assertSame(s3.state)
      // no live files: one empty batch, as on the AddFile path
      writeCommit(t, 4, s3.allFiles.map(a => RemoveFile(a.path, Some(8L), deletionVector = a.deletionVector)).toSeq)
      val s4 = log.update()
      assertEquals(0L, s4.numFiles)
      assertSame(s4.state)
    } finally deleteRecursively(t)
  }

  /** Plain files (no tags, DVs, row tracking): the export's all-null and all-empty-map columns. */
  @Test def plainFilesFromCheckpointAndCommits(): Unit = {
    for (partitioned <- Seq(false, true)) {
      val t = newTable()
      try {
        def plain(v: Int, i: Int): AddFile = {
          val a = file(v, i)
          AddFile(a.path, if (partitioned) a.partitionValues else Map.empty, a.size, a.modificationTime,
            dataChange = true, stats = a.stats)
        }
        val m = meta(partitionColumns = if (partitioned) Seq("p", "q") else Nil)
        writeCommit(t, 0, Seq(protocol12, m) ++ (0 until 3000).map(plain(0, _)))
        val log = DeltaLog.uncached(t.toString, conf)
        io.deltalog.log.Checkpoints.write(log, log.snapshot())
        writeCommit(t, 1, (0 until 70).map(plain(1, _)) ++ (0 until 3000 by 7).map(i => RemoveFile(plain(0, i).path, Some(5L))))
        val fresh = DeltaLog.uncached(t.toString, conf).snapshot()
        assertTrue(fresh.logSegment.checkpoint.isDefined, "loaded from the checkpoint")
        assertEquals(3000L - (0 until 3000 by 7).size + 70, fresh.numFiles)
        assertSame(fresh.state)
      } finally deleteRecursively(t)
    }
  }
}
