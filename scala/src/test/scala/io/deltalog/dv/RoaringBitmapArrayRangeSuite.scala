package io.deltalog.dv

import scala.collection.mutable.ArrayBuffer

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** [[RoaringBitmapArray.foreachInRange]]: the rows of a DV inside `[from, until)`, in order, as a plain filter gives them. */
class RoaringBitmapArrayRangeSuite {
  private def inRange(dv: RoaringBitmapArray, from: Long, until: Long): Seq[Long] = {
    val out = ArrayBuffer[Long]()
    dv.foreachInRange(from, until)(out += _)
    out.toSeq
  }

  private val High = 1L << 32

  @Test def rangesWithinOneWordMatchAFilter(): Unit = {
    val rows = Seq(0L, 1L, 7L, 4095L, 4096L, 10000L, 65535L, 65536L, 70000L, Int.MaxValue.toLong, Int.MaxValue + 1L)
    val dv = RoaringBitmapArray.of(rows: _*)
    for ((from, until) <- Seq((0L, 1L), (0L, 4096L), (1L, 4096L), (4096L, 8192L), (8000L, 65536L), (65536L, 65537L),
        (2L, 7L), (5000L, 6000L), (0L, High), (Int.MaxValue.toLong, Int.MaxValue + 2L), (3L, 3L), (9L, 2L))) {
      assertEquals(rows.filter(r => r >= from && r < until), inRange(dv, from, until), s"[$from, $until)")
    }
  }

  @Test def rangesAcrossHighWordsAndPastTheLastBitmap(): Unit = {
    val rows = Seq(5L, High - 1, High, High + 3, 3 * High + 9)
    val dv = RoaringBitmapArray.of(rows: _*)
    for ((from, until) <- Seq((0L, 10 * High), (High - 1, High + 1), (High + 1, 3 * High + 10), (2 * High, 3 * High),
        (4 * High, 5 * High), (High + 4, 3 * High + 9))) {
      assertEquals(rows.filter(r => r >= from && r < until), inRange(dv, from, until), s"[$from, $until)")
    }
    assertEquals(Nil, inRange(RoaringBitmapArray.of(), 0L, 100L))
  }

  @Test def randomRangesAgreeWithContains(): Unit = {
    val rnd = new scala.util.Random(7)
    val rows = Seq.fill(3000)(rnd.nextInt(200000).toLong).distinct.sorted
    val dv = RoaringBitmapArray.fromIterator(rows.iterator)
    for (_ <- 1 to 200) {
      val from = rnd.nextInt(210000).toLong
      val until = from + rnd.nextInt(9000)
      assertEquals((from until until).filter(dv.contains), inRange(dv, from, until))
    }
  }
}
