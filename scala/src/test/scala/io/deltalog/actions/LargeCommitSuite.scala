package io.deltalog.actions

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** A realistic large commit (10k adds) parses completely and survives a round trip.
 *  (Parse speed is measured in benchmarks/, never asserted here.) */
class LargeCommitSuite {
  @Test def parseTenThousandAdds(): Unit = {
    val sb = new StringBuilder
    sb.append("""{"commitInfo":{"timestamp":1,"operation":"WRITE","operationParameters":{"mode":"Append"}}}""").append('\n')
    for (i <- 0 until 10000) {
      sb.append(s"""{"add":{"path":"date=2024-01-01/part-$i-0b8a2f5e-3a8a-4c1e-9d2b-8a1f1c0b2e3d.c000.snappy.parquet",""" +
        s""""partitionValues":{"date":"2024-01-01"},"size":${1000 + i},"modificationTime":1700000000000,"dataChange":true,""" +
        s""""stats":"{\\"numRecords\\":100,\\"minValues\\":{\\"id\\":$i},\\"maxValues\\":{\\"id\\":${i + 99}},\\"nullCount\\":{\\"id\\":0}}",""" +
        s""""tags":{"INSERTION_TIME":"1700000000000000"}}}""").append('\n')
    }
    val text = sb.toString
    val actions = ActionCodec.parseText(text, "00000000000000000001.json")
    assertEquals(10001, actions.size)
    val adds = actions.collect { case a: AddFile => a }
    assertEquals(10000, adds.size)
    assertEquals((0 until 10000).map(1000L + _).sum, adds.map(_.size).sum)
    assertEquals(10000, adds.map(_.path).distinct.size)
    val again = ActionCodec.parseText(ActionCodec.serialize(actions))
    assertEquals(10001, again.size)
    assertEquals(ActionCodec.reader.readTree(text.linesIterator.toSeq(5000)),
      ActionCodec.reader.readTree(again(5000).json))
  }
}
