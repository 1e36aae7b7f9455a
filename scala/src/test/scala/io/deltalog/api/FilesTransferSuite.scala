package io.deltalog.api

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.actions._
import io.deltalog.log.{Checkpoints, DeltaLog, LogTestSupport, SnapshotState, Utf8Column}

/**
 * [[FilesTransfer]] copies strings a run of consecutive live rows at a time, sliced at segment
 * and batch boundaries: its files must be byte-identical to the row-at-a-time writer's
 * ([[RowWiseFilesTransfer]]), and decode (read here as the Python side does) to the state's live
 * files, for states with deleted rows, null stats, null partition values, chunks longer than
 * one string segment and several chunks, in batches that do not line up with chunks or segments.
 */
class FilesTransferSuite {
  import LogTestSupport._

  private type Row = (String, Seq[(String, String)], Long, Long, String)

  private def plain(v: Int, i: Int, partitioned: Boolean): AddFile = {
    val pv: Map[String, String] =
      if (!partitioned) Map.empty
      else (i % 4) match {
        case 0 => Map("p" -> "a", "q" -> "1")
        case 1 => Map("p" -> null, "q" -> "2")
        case 2 => Map("p" -> "ü€𝄞", "q" -> null)
        case _ => Map("p" -> s"x${i % 50}", "q" -> "3")
      }
    AddFile(s"p=${pv.getOrElse("p", "")}/part-$v-$i-é.parquet", pv, 100L + i, 1000L * v + i, dataChange = true,
      stats = if (i % 3 == 0) None else Some(s"""{"numRecords":$i,"minValues":{"id":"é$i"}}"""))
  }

  /** Batch sizes and rows of a transfer file, read like `deltalog._files_transfer` does. */
  private def decode(file: Path): (Seq[Int], IndexedSeq[Row]) = {
    val bytes = Files.readAllBytes(file)
    val size = bytes.length
    val bb = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    assertEquals(FilesTransfer.Magic, new String(bytes, size - 8, 8, UTF_8))
    val footerLength = bb.getInt(size - 12)
    val footer = new ObjectMapper().readTree(new String(bytes, size - 12 - footerLength, footerLength, UTF_8))
    val batches = footer.get("batches").elements().asScala.toIndexedSeq
    val rows = batches.flatMap { b =>
      val n = b.get("rows").asInt
      val refs = b.get("buffers")
      def buf(name: String): Option[(Int, Int)] = Option(refs.get(name)).map { r: JsonNode =>
        val (off, len) = (r.get(0).asLong.toInt, r.get(1).asLong.toInt)
        assertEquals(0, off % 64, s"$name is 64-byte aligned")
        (off, len)
      }
      def valid(name: String, i: Int): Boolean = buf(name + ".validity").forall { case (off, _) => (bytes(off + i / 8) >> (i % 8) & 1) == 1 }
      def offsets(name: String, len: Int): IndexedSeq[Int] = {
        val (off, l) = buf(name + ".offsets").get
        assertEquals(4 * (len + 1), l, name)
        (0 to len).map(i => bb.getInt(off + 4 * i))
      }
      def utf8(name: String, len: Int): IndexedSeq[String] = {
        val o = offsets(name, len)
        val (data, dataLength) = buf(name + ".data").get
        assertEquals(0, o.head, name)
        assertEquals(dataLength, o.last, name)
        (0 until len).map { i =>
          if (valid(name, i)) new String(bytes, data + o(i), o(i + 1) - o(i), UTF_8)
          else { assertEquals(o(i), o(i + 1), s"$name: a null takes no bytes"); null }
        }
      }
      def longs(name: String): IndexedSeq[Long] = {
        val (off, l) = buf(name).get
        assertEquals(8 * n, l)
        (0 until n).map(i => bb.getLong(off + 8 * i))
      }
      val (dc, dcLength) = buf("dataChange").get
      assertEquals((n + 7) / 8, dcLength)
      (0 until dcLength).foreach(i => assertEquals(0, bytes(dc + i).toInt, "dataChange is false"))
      val pvOffsets = offsets("partitionValues", n)
      val entries = pvOffsets.last
      val (keys, values) =
        if (entries == 0) (IndexedSeq.empty, IndexedSeq.empty)
        else (utf8("partitionValues.key", entries), utf8("partitionValues.value", entries))
      val (paths, stats, sizes, mtimes) = (utf8("path", n), utf8("stats", n), longs("size"), longs("modificationTime"))
      assertTrue(buf("path.validity").isEmpty)
      (0 until n).map { i =>
        val pv = if (!valid("partitionValues", i)) null else (pvOffsets(i) until pvOffsets(i + 1)).map(e => keys(e) -> values(e))
        (paths(i), pv, sizes(i), mtimes(i), stats(i))
      }
    }
    (batches.map(_.get("rows").asInt), rows)
  }

  private def assertTransfers(s: SnapshotState, batchSizes: Seq[Int]): Unit = {
    val expected: IndexedSeq[Row] = s.iterator.map { a =>
      (a.path, Option(a.partitionValues).map(_.toSeq).orNull, a.size, a.modificationTime, a.stats.orNull)
    }.toIndexedSeq
    assertEquals(s.numFiles, expected.size.toLong)
    val dir = TestDirs.create("deltalog-transfer")
    try {
      for (bs <- batchSizes) {
        val fast = dir.resolve(s"fast-$bs")
        val reference = dir.resolve(s"reference-$bs")
        assertTrue(FilesTransfer.write(s, fast.toString, bs))
        assertTrue(RowWiseFilesTransfer.write(s, reference.toString, bs))
        val (batches, rows) = decode(fast)
        assertEquals(if (expected.isEmpty) Seq(0) else expected.grouped(bs).map(_.size).toSeq, batches, s"batch size $bs")
        assertEquals(expected.size, rows.size)
        expected.indices.foreach(i => assertEquals(expected(i), rows(i), s"row $i (batch size $bs)"))
        assertArrayEquals(Files.readAllBytes(reference), Files.readAllBytes(fast), s"same bytes as row-wise (batch size $bs)")
        // An existing file (as the Python side reuses them) is overwritten and cut to size.
        val reused = dir.resolve(s"reused-$bs")
        Files.write(reused, Array.fill[Byte](Files.size(fast).toInt + 4099)(7))
        assertTrue(FilesTransfer.write(s, reused.toString, bs))
        assertArrayEquals(Files.readAllBytes(fast), Files.readAllBytes(reused), s"reused file (batch size $bs)")
        // Written again: through the memory map kept from the write before, no new map.
        val maps = TransferMaps.mapsCreated.get()
        assertTrue(FilesTransfer.write(s, reused.toString, bs))
        assertEquals(maps, TransferMaps.mapsCreated.get(), "kept map used")
        assertArrayEquals(Files.readAllBytes(fast), Files.readAllBytes(reused), s"reused file, kept map (batch size $bs)")
        // An existing file much shorter than the transfer: its map grows while it is written.
        val short = dir.resolve(s"short-$bs")
        Files.write(short, Array[Byte](1, 2, 3))
        assertTrue(FilesTransfer.write(s, short.toString, bs))
        assertArrayEquals(Files.readAllBytes(fast), Files.readAllBytes(short), s"short file grown (batch size $bs)")
      }
    } finally deleteRecursively(dir)
  }

  /** A checkpoint chunk longer than one string segment, with and without deleted rows, plus commits. */
  @Test def checkpointChunkWithDeletedRows(): Unit = {
    val n = Utf8Column.SegmentRows + 4500
    for (partitioned <- Seq(false, true)) {
      val t = newTable()
      try {
        writeCommit(t, 0, Seq(protocol12, meta(partitionColumns = if (partitioned) Seq("p", "q") else Nil)) ++
          (0 until n).map(plain(0, _, partitioned)))
        val log = DeltaLog.uncached(t.toString, conf)
        Checkpoints.write(log, log.snapshot())
        // a full load gives one chunk without deleted rows; updates of it mark rows deleted
        val loaded = DeltaLog.uncached(t.toString, conf)
        val whole = loaded.snapshot()
        assertTrue(whole.logSegment.checkpoint.isDefined, "loaded from the checkpoint")
        // no deleted rows: batches are whole segments, or cut inside and across them
        assertTransfers(whole.state, Seq(Utf8Column.SegmentRows, 1000, 100000))
        // deleted rows: every 7th, a long range across the segment boundary and the first and last
        val removed = ((0 until n by 7) ++ (Utf8Column.SegmentRows - 3000 until Utf8Column.SegmentRows + 2000) ++
          Seq(1, n - 1)).distinct
        writeCommit(t, 1, (0 until 70).map(plain(1, _, partitioned)) ++
          removed.map(i => RemoveFile(plain(0, i, partitioned).path, Some(5L))))
        writeCommit(t, 2, (0 until 30).map(plain(2, _, partitioned)) ++ Seq(RemoveFile(plain(1, 3, partitioned).path, Some(6L))))
        val fresh = loaded.update()
        assertEquals(n.toLong - removed.size + 70 - 1 + 30, fresh.numFiles)
        var longChunkWithDeletedRows = false
        fresh.state.foreachChunk((c, d) => longChunkWithDeletedRows ||= c.length == n && d != null && !d.isEmpty)
        assertTrue(longChunkWithDeletedRows, "the checkpoint's chunk, with deleted rows")
        assertTransfers(fresh.state, Seq(Utf8Column.SegmentRows, 7, 4096, 100000))
      } finally deleteRecursively(t)
    }
  }

  /** Incremental updates: several small chunks with deleted rows; tiny batches (nulls and no nulls per batch). */
  @Test def severalChunksInSmallBatches(): Unit = {
    val t = newTable()
    try {
      writeCommit(t, 0, Seq(protocol12, meta(partitionColumns = Seq("p", "q"))) ++ (0 until 500).map(plain(0, _, partitioned = true)))
      val log = DeltaLog.uncached(t.toString, conf)
      log.snapshot().state // loaded, so that updates add chunks
      writeCommit(t, 1, (0 until 40).map(plain(1, _, partitioned = true)) ++
        (0 until 500 by 3).map(i => RemoveFile(plain(0, i, partitioned = true).path, Some(5L))))
      log.update().state
      writeCommit(t, 2, (0 until 20).map(plain(2, _, partitioned = true)) ++
        (0 until 40 by 2).map(i => RemoveFile(plain(1, i, partitioned = true).path, Some(6L))))
      val s = log.update()
      assertTrue(s.state.chunkCount > 1, "incremental update: several chunks")
      assertTransfers(s.state, Seq(1, 2, 7, 333, 65536))
      // no live files: one empty batch
      writeCommit(t, 3, s.allFiles.map(a => RemoveFile(a.path, Some(8L))).toSeq)
      val empty = log.update()
      assertEquals(0L, empty.numFiles)
      assertTransfers(empty.state, Seq(7))
    } finally deleteRecursively(t)
  }

  /** One reused file alternately given a large and a small state: each write leaves exactly its own bytes. */
  @Test def keptMapsOfReusedFilesLeaveExactlyTheNewContent(): Unit = {
    val t = newTable()
    val dir = TestDirs.create("deltalog-transfer-kept")
    try {
      writeCommit(t, 0, Seq(protocol12, meta()) ++ (0 until 30000).map(plain(0, _, partitioned = false)))
      val big = DeltaLog.uncached(t.toString, conf).snapshot().state
      writeCommit(t, 1, (0 until 30000 by 2).map(i => RemoveFile(plain(0, i, partitioned = false).path, Some(5L))))
      val small = DeltaLog.uncached(t.toString, conf).snapshot().state
      def channelBytes(s: SnapshotState, name: String): Array[Byte] = {
        val f = dir.resolve(name)
        assertTrue(FilesTransfer.write(s, f.toString))
        Files.readAllBytes(f)
      }
      val bigBytes = channelBytes(big, "big")
      val smallBytes = channelBytes(small, "small")
      assertTrue(bigBytes.length > 2 * FilesTransfer.BufferBytes, "several map windows")
      val reused = dir.resolve("reused")
      Files.write(reused, Array[Byte](0))
      for ((s, expected, label) <- Seq((small, smallBytes, "small"), (big, bigBytes, "big"), (small, smallBytes, "small"),
          (small, smallBytes, "small"), (big, bigBytes, "big"))) {
        assertTrue(FilesTransfer.write(s, reused.toString))
        assertArrayEquals(expected, Files.readAllBytes(reused), label)
      }
      // a file replaced under the same name is mapped anew, not written through the old map
      val maps = TransferMaps.mapsCreated.get()
      val replacement = dir.resolve("replacement")
      Files.write(replacement, Array.fill[Byte](bigBytes.length + FilesTransfer.BufferBytes)(9)) // no growth needed
      Files.move(replacement, reused, java.nio.file.StandardCopyOption.REPLACE_EXISTING)
      assertTrue(FilesTransfer.write(small, reused.toString))
      assertEquals(maps + 1, TransferMaps.mapsCreated.get())
      assertArrayEquals(smallBytes, Files.readAllBytes(reused))
    } finally { deleteRecursively(t); deleteRecursively(dir) }
  }

  @Test def statesWithTagsAreLeftToArrowIpc(): Unit = {
    val t = newTable()
    try {
      writeCommit(t, 0, Seq(protocol12, meta(), plain(0, 1, partitioned = false).copy(tags = Some(Map("k" -> "v")))))
      val s = DeltaLog.uncached(t.toString, conf).snapshot().state
      val f = t.resolve("x.files")
      assertFalse(FilesTransfer.write(s, f.toString))
      assertFalse(Files.exists(f))
    } finally deleteRecursively(t)
  }
}
