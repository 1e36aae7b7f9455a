package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class Utf8ColumnSuite {
  private def value(i: Int, len: Int): Array[Byte] = {
    val s = f"v$i%07d-"
    (s * (len / s.length + 1)).take(len).getBytes(UTF_8)
  }

  /** Distinct data arrays of the column, with the bytes each holds. */
  private def segments(c: Utf8Column): Seq[(Int, Int)] =
    (0 until c.length by Utf8Column.SegmentRows).map { first =>
      val last = math.min(c.length, first + Utf8Column.SegmentRows) - 1
      (c.segmentData(first).length, c.end(last))
    }

  @Test def valuesNullsAndSegmentsRoundTrip(): Unit = {
    val b = new Utf8ColumnBuilder(8, 10)
    val n = Utf8Column.SegmentRows * 2 + 123
    (0 until n).foreach(i => if (i % 7 == 3) b.addNull() else b.add(value(i, 5 + i % 40), 0, 5 + i % 40))
    val c = b.result()
    assertEquals(n, c.length)
    (0 until n).foreach { i =>
      if (i % 7 == 3) assertTrue(c.isNull(i), s"row $i")
      else assertEquals(new String(value(i, 5 + i % 40), UTF_8), c.string(i), s"row $i")
    }
    assertEquals((0 until n).count(_ % 7 == 3), c.nullCount)
    val noNulls = new Utf8ColumnBuilder()
    noNulls.add("a"); noNulls.add("")
    assertEquals(0, noNulls.result().nullCount)
  }

  @Test def partitionValuesEmptyInEveryRow(): Unit = {
    def chunk(pvs: Map[String, String]*): FileChunk = {
      val b = new FileChunkBuilder()
      pvs.zipWithIndex.foreach { case (pv, i) =>
        b += io.deltalog.actions.AddFile(s"f$i", pv, 1L, 0L, dataChange = true)
      }
      b.result()
    }
    assertTrue(chunk(Map.empty, Map.empty).hasNoPartitionValues)
    assertTrue(chunk().hasNoPartitionValues)
    assertFalse(chunk(Map.empty, Map("p" -> "1")).hasNoPartitionValues)
    assertFalse(chunk(Map("p" -> null)).hasNoPartitionValues)
  }

  @Test def expectedSizesGiveSegmentsWithoutSlack(): Unit = {
    // 100,000 rows of 70 bytes, announced up front: two segments, each close to its bytes
    val rows = 100000
    val b = new Utf8ColumnBuilder(96, rows)
    b.expectBytesPerRow(74) // e.g. a checkpoint chunk: 70 bytes + a 4-byte length per value
    (0 until rows).foreach(i => b.add(value(i, 70), 0, 70))
    val c = b.result()
    val segs = segments(c)
    assertEquals(2, segs.size)
    segs.foreach { case (capacity, used) =>
      assertTrue(capacity >= used && capacity <= used + used / 8 + 1024, s"capacity $capacity for $used bytes")
    }
    // the second segment is sized for the rows still expected, not for a full segment
    assertEquals((rows - Utf8Column.SegmentRows) * 70, segs(1)._2)
    assertEquals(0L, b.copiedBytes, "no segment was grown or trimmed")

    // the default guess (96 bytes a row) leaves too much room: each segment is trimmed (copied)
    val unhinted = new Utf8ColumnBuilder(96, rows)
    (0 until rows).foreach(i => unhinted.add(value(i, 70), 0, 70))
    unhinted.result()
    assertTrue(unhinted.copiedBytes >= Utf8Column.SegmentRows * 70L, s"${unhinted.copiedBytes}")
  }

  @Test def expectedRowsSizeTheLastSegment(): Unit = {
    // built for 200,000 rows, told before the first value that 100,000 come: no trim at the end
    val rows = 100000
    val b = new Utf8ColumnBuilder(96, 2 * rows)
    b.expectBytesPerRow(72)
    b.expectRows(rows + 16)
    (0 until rows).foreach(i => b.add(value(i, 70), 0, 70))
    b.result()
    assertEquals(0L, b.copiedBytes)
    val unhinted = new Utf8ColumnBuilder(96, 2 * rows)
    unhinted.expectBytesPerRow(72)
    (0 until rows).foreach(i => unhinted.add(value(i, 70), 0, 70))
    unhinted.result()
    assertTrue(unhinted.copiedBytes > 0, "the second segment, sized for 65,536 rows, is trimmed")
  }

  @Test def aLateHintIsIgnored(): Unit = {
    val b = new Utf8ColumnBuilder(4, 100)
    b.add(value(0, 10), 0, 10)
    b.expectBytesPerRow(1 << 20) // ignored: the first segment exists already
    (1 until 100).foreach(i => b.add(value(i, 10), 0, 10))
    val c = b.result()
    assertTrue(c.segmentData(0).length < (1 << 16), s"${c.segmentData(0).length}")
    assertEquals(1000L, c.totalBytes)
  }
}
