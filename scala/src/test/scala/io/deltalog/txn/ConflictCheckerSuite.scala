package io.deltalog.txn

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.exceptions._
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{Protocol, TableFeature}

/** Two transactions on the same snapshot; the first one commits first (the winner). */
class ConflictCheckerSuite {
  import TxnTestSupport._

  /** Table partitioned by p with files a1, a2 (p=a) and b1 (p=b), at version 1. */
  private def partitioned(dl: DeltaLog, conf: Map[String, String] = Map.empty): Unit = {
    create(dl, Seq("p"), conf)
    commitNew(dl, Seq(add("a1", Map("p" -> "a")), add("a2", Map("p" -> "a")), add("b1", Map("p" -> "b"))))
  }

  private def file(dl: DeltaLog, path: String): AddFile = dl.update().allFiles.find(_.path == path).get

  private def pair(dl: DeltaLog): (OptimisticTransaction, OptimisticTransaction) =
    (OptimisticTransaction.start(dl), OptimisticTransaction.start(dl))

  // ------------------------------------------------------------------ no conflict

  @Test def twoBlindAppendsBothCommit(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    assertEquals(2L, winner.commit(Seq(add("w", Map("p" -> "a"))), Operation.write()))
    assertEquals(3L, loser.commit(Seq(add("l", Map("p" -> "a"))), Operation.write()))
    assertEquals(Some(1L), commitInfoOf(dl, 3).readVersion)
    assertEquals(Set("a1", "a2", "b1", "w", "l"), livePaths(dl))
  }

  @Test def deleteInOtherPartitionThanAppendCommits(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    val read = loser.filterFiles(Seq(p("p = 'a'")))
    winner.commit(Seq(add("b2", Map("p" -> "b"))), Operation.write())
    assertEquals(3L, loser.commit(read.map(_.remove(1L)), Operation.delete(Seq("p = 'a'"))))
    assertEquals(Set("b1", "b2"), livePaths(dl))
  }

  // ------------------------------------------------------------------ ConcurrentAppendException

  @Test def appendIntoReadPartitionConflictsUnderSerializable(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    val read = loser.filterFiles(Seq(p("p = 'a'")))
    winner.commit(Seq(add("a3", Map("p" -> "a"))), Operation.write())
    val e = assertThrows(classOf[ConcurrentAppendException],
      () => loser.commit(read.map(_.remove(1L)), Operation.delete(Seq("p = 'a'"))))
    assertEquals("DELTA_CONCURRENT_APPEND", e.errorClass)
    assertEquals(2L, e.winningVersion)
    assertEquals(Some("p=a"), e.partition)
    assertTrue(e.getMessage.contains("a3") && e.getMessage.contains(dl.tablePath.toString), e.getMessage)
    assertFalse(loser.committed)
  }

  @Test def writeSerializableIgnoresConcurrentBlindAppends(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl, Map("delta.isolationLevel" -> "WriteSerializable"))
    val (winner, loser) = pair(dl)
    val read = loser.filterFiles(Seq(p("p = 'a'")))
    winner.commit(Seq(add("a3", Map("p" -> "a"))), Operation.write())
    assertEquals(3L, loser.commit(read.map(_.remove(1L)), Operation.delete(Seq("p = 'a'"))))
    assertEquals(Set("a3", "b1"), livePaths(dl))
  }

  @Test def writeSerializableStillConflictsWithNonBlindWinner(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl, Map("delta.isolationLevel" -> "WriteSerializable"))
    val (winner, loser) = pair(dl)
    val read = loser.filterFiles(Seq(p("p = 'a'")))
    winner.filterFiles(Seq(p("p = 'b'")))
    winner.commit(Seq(add("a3", Map("p" -> "a"))), Operation.write()) // not a blind append
    assertThrows(classOf[ConcurrentAppendException],
      () => loser.commit(read.map(_.remove(1L)), Operation.delete()))
  }

  @Test def wholeTableReadConflictsWithAnyAppend(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    loser.readWholeTable()
    winner.commit(Seq(add("b9", Map("p" -> "b"))), Operation.write())
    val e = assertThrows(classOf[ConcurrentAppendException],
      () => loser.commit(Seq(add("x", Map("p" -> "c"))), Operation.write()))
    assertEquals(Some("p=b"), e.partition)
  }

  @Test def unpartitionedReadConflictsWithAppend(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    commitNew(dl, Seq(add("f1")))
    val (winner, loser) = pair(dl)
    val read = loser.filterFiles(Seq(p("id > 3")))
    winner.commit(Seq(add("f2")), Operation.write())
    val e = assertThrows(classOf[ConcurrentAppendException],
      () => loser.commit(read.map(_.remove(1L)), Operation.delete(Seq("id > 3"))))
    assertEquals(None, e.partition)
  }

  @Test def snapshotIsolationForDataChangeFalse(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    val read = loser.filterFiles(Seq(p("p = 'a'")))
    winner.commit(Seq(add("a3", Map("p" -> "a"))), Operation.write())
    val compaction = read.map(_.remove(1L, dataChange = false)) :+ add("a-compacted", Map("p" -> "a"), 2, dataChange = false)
    assertEquals(3L, loser.commit(compaction, Operation.optimize()))
    assertEquals(Some("SnapshotIsolation"), commitInfoOf(dl, 3).isolationLevel)
    assertEquals(Set("a3", "a-compacted", "b1"), livePaths(dl))
  }

  // ------------------------------------------------------------------ ConcurrentDeleteReadException

  @Test def deleteOfReadFileConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    loser.filterFiles(Seq(p("p = 'a'")))
    winner.commit(Seq(file(dl, "a1").remove(1L)), Operation.delete())
    val e = assertThrows(classOf[ConcurrentDeleteReadException],
      () => loser.commit(Seq(add("a9", Map("p" -> "a"))), Operation.write()))
    assertEquals("DELTA_CONCURRENT_DELETE_READ", e.errorClass)
    assertEquals(Some("a1"), e.file)
    assertEquals(Some("p=a"), e.partition)
  }

  @Test def deleteWhileWholeTableReadConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl, Map("delta.isolationLevel" -> "WriteSerializable"))
    val (winner, loser) = pair(dl)
    loser.readWholeTable()
    winner.commit(Seq(file(dl, "b1").remove(1L)), Operation.delete())
    val e = assertThrows(classOf[ConcurrentDeleteReadException],
      () => loser.commit(Seq(add("z", Map("p" -> "z"))), Operation.write()))
    assertEquals(None, e.file)
  }

  // ------------------------------------------------------------------ ConcurrentDeleteDeleteException

  @Test def doubleDeleteConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    partitioned(dl)
    val (winner, loser) = pair(dl)
    val a1 = file(dl, "a1")
    winner.commit(Seq(a1.remove(1L)), Operation.delete())
    // Two compactions of the same file: the loser did not scan through filterFiles.
    val e = assertThrows(classOf[ConcurrentDeleteDeleteException],
      () => loser.commit(Seq(a1.remove(2L, dataChange = false), add("a1c", Map("p" -> "a"), dataChange = false)),
        Operation.optimize()))
    assertEquals("DELTA_CONCURRENT_DELETE_DELETE", e.errorClass)
    assertEquals("a1", e.file)
  }

  // ------------------------------------------------------------------ ConcurrentTransactionException

  @Test def sameAppIdConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = pair(dl)
    assertEquals(-1L, winner.txnVersion("query-1"))
    assertEquals(-1L, loser.txnVersion("query-1"))
    winner.commit(Seq(add("w"), SetTransaction("query-1", 0)), Operation.streamingUpdate("Append", "query-1", 0))
    val e = assertThrows(classOf[ConcurrentTransactionException],
      () => loser.commit(Seq(add("l"), SetTransaction("query-1", 0)), Operation.streamingUpdate("Append", "query-1", 0)))
    assertEquals("DELTA_CONCURRENT_TRANSACTION", e.errorClass)
    assertTrue(e.getMessage.contains("query-1"))
    assertEquals(Set("w"), livePaths(dl), "the batch is applied once")
  }

  @Test def sameDomainConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.feature.domainMetadata" -> "supported"))
    val (winner, loser) = pair(dl)
    winner.commit(Seq(DomainMetadata("app.domain", "1")), Operation.manualUpdate)
    val e = assertThrows(classOf[ConcurrentTransactionException],
      () => loser.commit(Seq(DomainMetadata("app.domain", "2")), Operation.manualUpdate))
    assertTrue(e.getMessage.contains("app.domain"))
    val (w2, l2) = pair(dl)
    w2.commit(Seq(DomainMetadata("d1", "1")), Operation.manualUpdate)
    l2.commit(Seq(DomainMetadata("d2", "2")), Operation.manualUpdate)
  }

  // ------------------------------------------------------------------ MetadataChangedException

  @Test def concurrentMetadataChangesConflict(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = pair(dl)
    winner.updateMetadata(winner.metadata.copy(configuration = Map("a" -> "1")))
    winner.commit(Nil, Operation.setTableProperties(Map("a" -> "1")))
    loser.updateMetadata(loser.metadata.copy(configuration = Map("b" -> "2")))
    val e = assertThrows(classOf[MetadataChangedException],
      () => loser.commit(Nil, Operation.setTableProperties(Map("b" -> "2"))))
    assertEquals("DELTA_METADATA_CHANGED", e.errorClass)
  }

  @Test def winnerPropertyChangeOutsideAllowListConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = pair(dl)
    winner.updateMetadata(winner.metadata.copy(configuration = Map("delta.appendOnly" -> "true")))
    winner.commit(Nil, Operation.setTableProperties(Map("delta.appendOnly" -> "true")))
    val e = assertThrows(classOf[MetadataChangedException],
      () => loser.commit(Seq(add("x")), Operation.write()))
    assertTrue(e.getMessage.contains("delta.appendOnly"), e.getMessage)
  }

  @Test def allowListedEnablementIsAdopted(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = pair(dl)
    winner.updateMetadata(winner.metadata.copy(configuration = Map("delta.enableDeletionVectors" -> "true")))
    winner.commit(Nil, Operation.setTableProperties(Map("delta.enableDeletionVectors" -> "true")))
    assertEquals(2L, loser.commit(Seq(add("x")), Operation.write()))
    assertTrue(dl.update().protocol.isFeatureSupported(TableFeature.DeletionVectors))
  }

  @Test def disallowedMetadataChanges(): Unit = {
    val m = metadata(Seq("p"), Map("k" -> "v"))
    assertEquals(None, ConflictChecker.disallowedMetadataChange(m, m.copy(configuration = m.configuration ++
      Map("delta.enableRowTracking" -> "true", "delta.checkpointPolicy" -> "v2",
        "delta.enableInCommitTimestamps" -> "true", "delta.inCommitTimestampEnablementVersion" -> "3"))))
    assertTrue(ConflictChecker.disallowedMetadataChange(m, m.copy(configuration = Map.empty)).isDefined)
    assertTrue(ConflictChecker.disallowedMetadataChange(m, m.copy(partitionColumns = Nil)).isDefined)
    assertTrue(ConflictChecker.disallowedMetadataChange(m, m.copy(schemaString = schema("id" -> "int", "p" -> "string"))).isDefined)
    assertTrue(ConflictChecker.disallowedMetadataChange(m, m.copy(id = "other")).isDefined)
  }

  // ------------------------------------------------------------------ ProtocolChangedException

  @Test def concurrentProtocolChangesConflict(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = pair(dl)
    winner.commit(Seq(Protocol(1, 3)), Operation.upgradeProtocol("(1,3)"))
    val e = assertThrows(classOf[ProtocolChangedException],
      () => loser.commit(Seq(Protocol(1, 4)), Operation.upgradeProtocol("(1,4)")))
    assertEquals("DELTA_PROTOCOL_CHANGED", e.errorClass)
  }

  @Test def concurrentTableCreationConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    val (winner, loser) = pair(dl)
    assertEquals(-1L, loser.readVersion)
    winner.updateMetadata(metadata())
    winner.commit(Nil, Operation.createTable())
    loser.updateMetadata(metadata())
    assertThrows(classOf[ProtocolChangedException], () => loser.commit(Nil, Operation.createTable()))
  }

  @Test def droppedFeatureConflicts(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.feature.domainMetadata" -> "supported"))
    val loser = OptimisticTransaction.start(dl)
    // The winner drops domainMetadata (a foreign DROP FEATURE).
    writeRaw(dl, 1, Seq(CommitInfo.empty.withOperation("DROP FEATURE"), Protocol(1, 2)))
    val e = assertThrows(classOf[ProtocolChangedException], () => loser.commit(Seq(add("x")), Operation.write()))
    assertTrue(e.getMessage.contains("domainMetadata"), e.getMessage)
  }

  @Test def protocolUpgradeByWinnerIsAdopted(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = pair(dl)
    winner.commit(Seq(Protocol(1, 3)), Operation.upgradeProtocol("(1,3)"))
    assertEquals(2L, loser.commit(Seq(add("x")), Operation.write()))
  }

  // ------------------------------------------------------------------ retries: ICT, row ids, limits

  @Test def ictMonotonicAcrossRetries(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.enableInCommitTimestamps" -> "true"))
    val base = commitInfoOf(dl, 0).inCommitTimestamp.get
    val winner = OptimisticTransaction.start(dl, Clock.fixed(base + 5000))
    val loser = OptimisticTransaction.start(dl, Clock.fixed(base + 10))
    winner.commit(Seq(add("w")), Operation.write())
    assertEquals(2L, loser.commit(Seq(add("l")), Operation.write()))
    assertEquals(Some(base + 5000), commitInfoOf(dl, 1).inCommitTimestamp)
    assertEquals(Some(base + 5001), commitInfoOf(dl, 2).inCommitTimestamp)
  }

  @Test def rowIdsReassignedOnRetry(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.enableRowTracking" -> "true"))
    val (winner, loser) = pair(dl)
    winner.commit(Seq(add("w", numRecords = 100)), Operation.write())
    assertEquals(2L, loser.commit(Seq(add("l", numRecords = 7)), Operation.write()))
    val l = readCommit(dl, 2).collectFirst { case a: AddFile => a }.get
    assertEquals(Some(100L), l.baseRowId)
    assertEquals(Some(2L), l.defaultRowCommitVersion)
    assertEquals(Some(106L), RowTracking.highWaterMark(dl.update().domainMetadata))
  }

  @Test def commitAttemptsAreLimited(): Unit = withDir { d =>
    val conf = new Configuration()
    conf.set(TxnConf.MaxCommitAttemptsKey, "1")
    val dl = newLog(d, conf)
    create(dl)
    val (winner, loser) = pair(dl)
    winner.commit(Seq(add("w")), Operation.write())
    val e = assertThrows(classOf[MaxCommitAttemptsExceededException], () => loser.commit(Seq(add("l")), Operation.write()))
    assertTrue(e.isInstanceOf[ConcurrentWriteException])
    assertEquals("DELTA_MAX_COMMIT_RETRIES_EXCEEDED", e.errorClass)
  }

  @Test def conflictsAreConcurrentModificationExceptions(): Unit = {
    val all: Seq[DeltaConcurrentModificationException] = Seq(
      new ConcurrentWriteException("t", 1, "x"), new MetadataChangedException("t", 1, "x"),
      new ProtocolChangedException("t", 1, "x"), new ConcurrentAppendException("t", 1, None, "f"),
      new ConcurrentDeleteReadException("t", 1, None, None), new ConcurrentDeleteDeleteException("t", 1, None, "f"),
      new ConcurrentTransactionException("t", 1, "x"))
    assertEquals(Seq("DELTA_CONCURRENT_WRITE", "DELTA_METADATA_CHANGED", "DELTA_PROTOCOL_CHANGED",
      "DELTA_CONCURRENT_APPEND", "DELTA_CONCURRENT_DELETE_READ", "DELTA_CONCURRENT_DELETE_DELETE",
      "DELTA_CONCURRENT_TRANSACTION"), all.map(_.errorClass))
    all.foreach(e => assertTrue(e.getMessage.contains("t") && e.isInstanceOf[DeltalogException]))
  }
}
