package io.deltalog.txn

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.exceptions._
import io.deltalog.log.DeltaLog

/**
 * Conflict detection with recorded data predicates: a concurrently added file conflicts with a
 * read predicate only when its partition values and stats (min / max / nullCount) may satisfy it.
 */
class DataPredicateConflictSuite {
  import TxnTestSupport._

  private val Schema = schema("id" -> "long", "p" -> "string", "name" -> "string", "d" -> "date",
    "x" -> "double", "ts" -> "timestamp")

  private def statsAdd(path: String, stats: String, partition: Map[String, String] = Map.empty): AddFile =
    AddFile(path = path, partitionValues = partition, size = 10L, modificationTime = 1L, dataChange = true,
      stats = Option(stats))

  private def idRange(lo: Long, hi: Long, nulls: Long = 0, n: Long = 10): String =
    s"""{"numRecords":$n,"minValues":{"id":$lo},"maxValues":{"id":$hi},"nullCount":{"id":$nulls}}"""

  private def table(dl: DeltaLog, partitioned: Boolean, conf: Map[String, String] = Map.empty): Unit = {
    create(dl, if (partitioned) Seq("p") else Nil, conf, Schema)
    val pv = if (partitioned) Map("p" -> "a") else Map.empty[String, String]
    commitNew(dl, Seq(statsAdd("f1", idRange(0, 100), pv)))
  }

  /** The loser reads `predicate`, the winner commits `winnerAdds` (blind unless `winnerReads`), the loser deletes what it read. */
  private def race(dl: DeltaLog, predicate: String, winnerAdds: Seq[AddFile], winnerReads: Boolean = false): Long = {
    val winner = OptimisticTransaction.start(dl)
    val loser = OptimisticTransaction.start(dl)
    val read = loser.filterFiles(Seq(p(predicate)))
    if (winnerReads) winner.filterFiles(Seq(p("id = -1")))
    winner.commit(winnerAdds, Operation.write())
    loser.commit(read.map(_.remove(1L)), Operation.delete(Seq(predicate)))
  }

  private def conflicts(dl: DeltaLog, predicate: String, winnerAdds: Seq[AddFile],
      winnerReads: Boolean = false): ConcurrentAppendException = {
    val e = assertThrows(classOf[ConcurrentAppendException], () => { race(dl, predicate, winnerAdds, winnerReads); () })
    assertEquals("DELTA_CONCURRENT_APPEND", e.errorClass)
    e
  }

  @Test def appendOutsideTheDataPredicateDoesNotConflict(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    assertEquals(3L, race(dl, "id > 200", Seq(statsAdd("w", idRange(0, 200)))))
    assertEquals(Set("w"), livePaths(dl))
    assertEquals(Some(1L), commitInfoOf(dl, 3).readVersion)
  }

  @Test def appendInsideTheDataPredicateConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    val e = conflicts(dl, "id > 200", Seq(statsAdd("w", idRange(150, 201))))
    assertEquals(2L, e.winningVersion)
    assertTrue(e.getMessage.contains("w"), e.getMessage)
    assertEquals(Set("f1", "w"), livePaths(dl))
  }

  @Test def boundaryValuesCount(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    conflicts(dl, "id >= 200", Seq(statsAdd("w", idRange(0, 200))))
    val dl2 = newLog(d.resolve("t2"))
    table(dl2, partitioned = false)
    conflicts(dl2, "id = 7", Seq(statsAdd("w", idRange(7, 7))))
  }

  @Test def fileWithoutStatsOrBoundsConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    conflicts(dl, "id > 200", Seq(statsAdd("w", null)))
    val dl2 = newLog(d.resolve("t2"))
    table(dl2, partitioned = false)
    conflicts(dl2, "id > 200", Seq(statsAdd("w", """{"numRecords":3}""")))
    val dl3 = newLog(d.resolve("t3"))
    table(dl3, partitioned = false)
    conflicts(dl3, "id > 200", Seq(statsAdd("w", "not json")))
  }

  @Test def oneMatchingFileAmongSeveralConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    val e = conflicts(dl, "id < 0", Seq(statsAdd("w1", idRange(0, 5)), statsAdd("w2", idRange(-3, 5))))
    assertTrue(e.getMessage.contains("w2"), e.getMessage)
  }

  @Test def partitionAndDataPredicatesMix(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = true)
    // other partition, rows matching the data part: no conflict
    assertEquals(3L, race(dl, "p = 'a' AND id > 50", Seq(statsAdd("b", idRange(60, 70), Map("p" -> "b")))))
    // same partition, rows outside the data part: no conflict
    assertEquals(5L, race(dl, "p = 'b' AND id > 100", Seq(statsAdd("b2", idRange(0, 100), Map("p" -> "b")))))
    // same partition, rows inside: conflict naming the partition
    val e = conflicts(dl, "p = 'b' AND id > 100", Seq(statsAdd("b3", idRange(90, 110), Map("p" -> "b"))))
    assertEquals(Some("p=b"), e.partition)
  }

  @Test def disjunctionsAndNegations(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = true)
    assertEquals(3L, race(dl, "p = 'b' OR id > 50", Seq(statsAdd("a1", idRange(0, 50), Map("p" -> "a")))))
    conflicts(dl, "p = 'b' OR id > 50", Seq(statsAdd("b1", idRange(0, 50), Map("p" -> "b"))))
    val dl2 = newLog(d.resolve("t2"))
    table(dl2, partitioned = false)
    // NOT (id >= 10): no row of a file with min 10 can satisfy it
    assertEquals(3L, race(dl2, "NOT (id >= 10)", Seq(statsAdd("w", idRange(10, 20)))))
    conflicts(dl2, "NOT (id >= 10)", Seq(statsAdd("w2", idRange(9, 20))))
  }

  @Test def nullsAndInLists(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    assertEquals(3L, race(dl, "id IS NULL", Seq(statsAdd("w", idRange(0, 5)))))
    conflicts(dl, "id IS NULL", Seq(statsAdd("w2", idRange(0, 5, nulls = 1))))
    val dl2 = newLog(d.resolve("t2"))
    table(dl2, partitioned = false)
    assertEquals(3L, race(dl2, "id IN (1, 50)", Seq(statsAdd("w", idRange(2, 40)))))
    conflicts(dl2, "id IN (1, 50)", Seq(statsAdd("w2", idRange(45, 55))))
    // a file whose rows are all NULL cannot satisfy a comparison
    val dl3 = newLog(d.resolve("t3"))
    table(dl3, partitioned = false)
    assertEquals(3L, race(dl3, "id > 5", Seq(statsAdd("w", """{"numRecords":4,"nullCount":{"id":4}}"""))))
  }

  @Test def stringsAndDatesUseStatsFloatsAndTimestampsDoNot(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    val s = """{"numRecords":2,"minValues":{"name":"apple","d":"2024-01-01","x":1.0,"ts":"2024-01-01T00:00:00.000Z"},""" +
      """"maxValues":{"name":"banana","d":"2024-01-31","x":2.0,"ts":"2024-01-01T00:00:00.000Z"},""" +
      """"nullCount":{"name":0,"d":0,"x":0,"ts":0}}"""
    assertEquals(3L, race(dl, "name > 'c'", Seq(statsAdd("w1", s))))
    assertEquals(5L, race(dl, "d >= DATE '2024-02-01'", Seq(statsAdd("w2", s))))
    conflicts(dl, "name = 'b'", Seq(statsAdd("w3", s)))
    // floating point (NaN is outside the bounds) and timestamps (truncated bounds) are not judged by stats
    val dl2 = newLog(d.resolve("t2"))
    table(dl2, partitioned = false)
    conflicts(dl2, "x > 5.0D", Seq(statsAdd("w", s)))
    val dl3 = newLog(d.resolve("t3"))
    table(dl3, partitioned = false)
    conflicts(dl3, "ts > TIMESTAMP '2025-01-01 00:00:00Z'", Seq(statsAdd("w", s)))
  }

  @Test def unknownColumnsConflict(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    conflicts(dl, "nope > 5", Seq(statsAdd("w", idRange(0, 1))))
  }

  @Test def writeSerializableUnchanged(): Unit = withDir { d =>
    val ws = Map("delta.isolationLevel" -> "WriteSerializable")
    val dl = newLog(d)
    table(dl, partitioned = false, ws)
    // a blind append never conflicts, even with rows inside the predicate
    assertEquals(3L, race(dl, "id > 200", Seq(statsAdd("w", idRange(150, 250)))))
    // a winner that read conflicts when its rows may match, not otherwise
    val dl2 = newLog(d.resolve("t2"))
    table(dl2, partitioned = false, ws)
    conflicts(dl2, "id > 200", Seq(statsAdd("w", idRange(150, 250))), winnerReads = true)
    val dl3 = newLog(d.resolve("t3"))
    table(dl3, partitioned = false, ws)
    assertEquals(3L, race(dl3, "id > 200", Seq(statsAdd("w", idRange(150, 160))), winnerReads = true))
  }

  @Test def wholeTableReadStillConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    table(dl, partitioned = false)
    val winner = OptimisticTransaction.start(dl)
    val loser = OptimisticTransaction.start(dl)
    val read = loser.filterFiles()
    winner.commit(Seq(statsAdd("w", idRange(0, 1))), Operation.write())
    assertThrows(classOf[ConcurrentAppendException], () => { loser.commit(read.map(_.remove(1L)), Operation.delete()); () })
  }

  @Test def columnMappingUsesPhysicalNamesAndNestedFields(): Unit = {
    val schemaJson =
      """{"type":"struct","fields":[""" +
        """{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},""" +
        """{"name":"s","type":{"type":"struct","fields":[{"name":"v","type":"integer","nullable":true,""" +
        """"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-3"}}]},"nullable":true,""" +
        """"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]}"""
    val md = metadata(Nil, Map("delta.columnMapping.mode" -> "name"), schemaJson)
    val f = new DataFilter(md)
    def file(stats: String) = statsAdd("f", stats)
    val physical = """{"numRecords":2,"minValues":{"col-1":0,"col-2":{"col-3":0}},"maxValues":{"col-1":5,"col-2":{"col-3":5}},""" +
      """"nullCount":{"col-1":0,"col-2":{"col-3":0}}}"""
    val logical = """{"numRecords":2,"minValues":{"id":0,"s":{"v":0}},"maxValues":{"id":5,"s":{"v":5}}}"""
    assertFalse(f.mayMatchAll(Seq(p("id > 5")), file(physical)))
    assertTrue(f.mayMatchAll(Seq(p("id > 4")), file(physical)))
    assertFalse(f.mayMatchAll(Seq(p("s.v > 5")), file(physical)))
    assertTrue(f.mayMatchAll(Seq(p("s.v = 5")), file(physical)))
    // stats under logical names are not this table's stats: unknown, so the file counts as matching
    assertTrue(f.mayMatchAll(Seq(p("id > 5")), file(logical)))
    assertTrue(f.mayMatchAll(Seq(p("s.v > 5")), file(logical)))
  }
}
