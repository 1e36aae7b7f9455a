package io.deltalog.txn

import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.exceptions._
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.{Protocol, TableFeature}

class OptimisticTransactionSuite {
  import TxnTestSupport._

  // ------------------------------------------------------------------ table creation

  @Test def createsTableFromVersionMinusOne(): Unit = withDir { d =>
    val dl = newLog(d)
    val txn = OptimisticTransaction.start(dl)
    assertEquals(-1L, txn.readVersion)
    txn.updateMetadata(metadata(Seq("p")))
    assertEquals(0L, txn.commit(Nil, Operation.createTable(Seq("p"))))
    assertTrue(txn.committed)
    val actions = readCommit(dl, 0)
    assertTrue(actions.head.isInstanceOf[CommitInfo], "commitInfo is the first action")
    val ci = actions.head.asInstanceOf[CommitInfo]
    assertEquals(None, ci.readVersion, "no readVersion for a new table")
    assertEquals(Some("CREATE TABLE"), ci.operation)
    assertEquals(Some("Serializable"), ci.isolationLevel)
    assertEquals(Some(true), ci.isBlindAppend)
    assertTrue(ci.engineInfo.exists(e => e.startsWith("Apache-Spark/") && e.endsWith(" deltalog/0.1.0")), ci.engineInfo.toString)
    assertEquals(Some(txn.txnId), ci.txnId)
    assertTrue(ci.timestamp.isDefined)
    assertEquals(Protocol(1, 2), actions.collectFirst { case p: Protocol => p }.get)
    assertEquals(Seq("p"), actions.collectFirst { case m: Metadata => m }.get.partitionColumns)
    assertEquals(0L, dl.update().version)
  }

  @Test def startTransactionExtension(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = dl.startTransaction()
    assertEquals(0L, txn.readVersion)
    assertEquals(1L, txn.commit(Seq(add("a.parquet")), Operation.write()))
    assertEquals(Some(0L), commitInfoOf(dl, 1).readVersion)
  }

  @Test def firstCommitNeedsMetadata(): Unit = withDir { d =>
    val e = assertThrows(classOf[InvalidCommitException],
      () => OptimisticTransaction.start(newLog(d)).commit(Seq(add("a.parquet")), Operation.write()))
    assertEquals("DELTA_METADATA_ABSENT", e.errorClass)
  }

  @Test def newTableProtocolFromPropertiesAndStripped(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.minWriterVersion" -> "4", "delta.feature.deletionVectors" -> "supported", "x" -> "y"))
    val s = dl.update()
    assertTrue(s.protocol.isFeatureSupported(TableFeature.DeletionVectors))
    assertTrue(s.protocol.isFeatureSupported(TableFeature.ChangeDataFeed), "writer 4 features kept")
    assertEquals(Map("x" -> "y"), s.metadata.configuration)
  }

  @Test def sessionDefaultsApplyToNewTables(): Unit = withDir { d =>
    val conf = new Configuration()
    conf.set("spark.databricks.delta.properties.defaults.enableDeletionVectors", "true")
    val dl = newLog(d, conf)
    create(dl)
    val s = dl.update()
    assertEquals(Some("true"), s.metadata.configuration.get("delta.enableDeletionVectors"))
    assertTrue(s.protocol.isFeatureSupported(TableFeature.DeletionVectors))
  }

  @Test def existingTableUpgradesProtocolFromMetadata(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = Map("delta.enableDeletionVectors" -> "true")))
    assertTrue(txn.protocol.isFeatureSupported(TableFeature.DeletionVectors))
    txn.commit(Nil, Operation.setTableProperties(Map("delta.enableDeletionVectors" -> "true")))
    assertTrue(dl.update().protocol.isFeatureSupported(TableFeature.DeletionVectors))
    assertTrue(readCommit(dl, 1).exists(_.isInstanceOf[Protocol]))

    val t2 = OptimisticTransaction.start(dl)
    t2.updateMetadata(t2.metadata.copy(configuration = t2.metadata.configuration ++
      Map("delta.feature.domainMetadata" -> "supported")))
    t2.commit(Nil, Operation.setTableProperties(Map.empty))
    val s = dl.update()
    assertTrue(s.protocol.isFeatureSupported(TableFeature.DomainMetadata))
    assertFalse(s.metadata.configuration.keys.exists(_.startsWith("delta.feature.")))
  }

  @Test def existingTableVersionProperties(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = Map("delta.minWriterVersion" -> "3")))
    txn.commit(Nil, Operation.setTableProperties(Map.empty))
    assertEquals(Protocol(1, 3), dl.update().protocol)
    assertEquals(Map.empty[String, String], dl.update().metadata.configuration)
  }

  // ------------------------------------------------------------------ seed assertions

  @Test def updateMetadataAfterWriteFails(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    txn.markWritten()
    val e = assertThrows(classOf[AssertionError], () => txn.updateMetadata(metadata()))
    assertEquals("Cannot update the metadata in a transaction that has already written data.", e.getMessage)
    val t2 = OptimisticTransaction.start(dl)
    t2.registerWrittenFiles(Seq(add("x.parquet")))
    assertThrows(classOf[AssertionError], () => t2.updateMetadata(metadata()))
  }

  @Test def updateMetadataTwiceFails(): Unit = withDir { d =>
    val txn = OptimisticTransaction.start(newLog(d))
    txn.updateMetadata(metadata())
    val e = assertThrows(classOf[AssertionError], () => txn.updateMetadata(metadata()))
    assertEquals("Cannot change the metadata more than once in a transaction.", e.getMessage)
  }

  @Test def metadataInActionsPlusUpdateMetadataFails(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = Map("a" -> "1")))
    val e = assertThrows(classOf[AssertionError],
      () => txn.commit(Seq(txn.metadata.copy(configuration = Map("a" -> "2"))), Operation.manualUpdate))
    assertEquals("Cannot change the metadata more than once in a transaction.", e.getMessage)
    val t2 = OptimisticTransaction.start(dl)
    val m = t2.metadata
    val e2 = assertThrows(classOf[AssertionError], () => t2.commit(Seq(m, m.copy(name = Some("x"))), Operation.manualUpdate))
    assertEquals("Cannot change the metadata more than once in a transaction.", e2.getMessage)
  }

  @Test def metadataActionInCommitIsProcessed(): Unit = withDir { d =>
    val dl = newLog(d)
    val v = OptimisticTransaction.start(dl).commit(
      Seq(metadata(conf = Map("delta.minWriterVersion" -> "3", "k" -> "v"))), Operation.createTable())
    assertEquals(0L, v)
    assertEquals(Protocol(1, 3), dl.update().protocol)
    assertEquals(Map("k" -> "v"), dl.update().metadata.configuration)
  }

  @Test def commitTwiceFails(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    txn.commit(Seq(add("a.parquet")), Operation.write())
    val e = assertThrows(classOf[AssertionError], () => txn.commit(Seq(add("b.parquet")), Operation.write()))
    assertEquals("Transaction already committed.", e.getMessage)
  }

  @Test def postCommitHooksBeforeCommitFail(): Unit = withDir { d =>
    val txn = OptimisticTransaction.start(newLog(d))
    val e = assertThrows(classOf[AssertionError], () => txn.runPostCommitHooks(0L, Nil))
    assertEquals("Can't call post commit hooks before committing", e.getMessage)
  }

  @Test def committedVersionBehindCurrentVersionFails(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    // The commit file vanishes before the log is updated (a broken store).
    txn.afterCommitFileWritten = v => Files.delete(commitFile(dl, v).toPath)
    val e = assertThrows(classOf[IllegalStateException], () => txn.commit(Seq(add("a.parquet")), Operation.write()))
    assertEquals("The committed version is 1 but the current version is 0.", e.getMessage)
  }

  // ------------------------------------------------------------------ verifyNewMetadata

  @Test def invalidSchemaRejected(): Unit = withDir { d =>
    val txn = OptimisticTransaction.start(newLog(d))
    val e = assertThrows(classOf[InvalidTablePropertyException],
      () => txn.updateMetadata(metadata(schemaString = "{not json")))
    assertEquals("DELTA_INVALID_SCHEMA", e.errorClass)
  }

  @Test def partitionColumnMustExist(): Unit = withDir { d =>
    val txn = OptimisticTransaction.start(newLog(d))
    val e = assertThrows(classOf[InvalidCommitException], () => txn.updateMetadata(metadata(Seq("nope"))))
    assertEquals("DELTA_PARTITION_COLUMN_NOT_FOUND", e.errorClass)
    assertTrue(e.getMessage.contains("nope"))
  }

  @Test def protocolPropertiesMayNotRemain(): Unit = withDir { d =>
    val txn = OptimisticTransaction.start(newLog(d))
    val e = assertThrows(classOf[DeltalogAssertionError],
      () => txn.verifyNewMetadata(metadata(conf = Map("delta.minReaderVersion" -> "1"))))
    assertEquals("Should not have the protocol version (delta.minReaderVersion) as part of table properties", e.getMessage)
  }

  @Test def columnMappingMetadataChecked(): Unit = withDir { d =>
    val txn = OptimisticTransaction.start(newLog(d))
    val conf = Map("delta.columnMapping.mode" -> "name", "delta.columnMapping.maxColumnId" -> "1")
    val e = assertThrows(classOf[InvalidCommitException], () => txn.verifyNewMetadata(metadata(conf = conf)))
    assertEquals("DELTA_INVALID_COLUMN_MAPPING_METADATA", e.errorClass)
    val mapped = """{"type":"struct","fields":[""" +
      """{"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},""" +
      """{"name":"b","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]}"""
    val e2 = assertThrows(classOf[InvalidCommitException],
      () => txn.verifyNewMetadata(metadata(conf = conf, schemaString = mapped)))
    assertTrue(e2.getMessage.contains("maxColumnId"), e2.getMessage)
    txn.verifyNewMetadata(metadata(conf = conf.updated("delta.columnMapping.maxColumnId", "2"), schemaString = mapped))
  }

  @Test def columnMappedPartitionValuesUsePhysicalNames(): Unit = withDir { d =>
    val dl = newLog(d)
    val mapped = """{"type":"struct","fields":[""" +
      """{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},""" +
      """{"name":"p","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]}"""
    create(dl, Seq("p"), Map("delta.columnMapping.mode" -> "name", "delta.columnMapping.maxColumnId" -> "2"), mapped)
    commitNew(dl, Seq(add("a.parquet", Map("col-2" -> "a")), add("b.parquet", Map("col-2" -> "b"))))
    val txn = OptimisticTransaction.start(dl)
    assertEquals(Seq("a.parquet"), txn.filterFiles(Seq(p("p = 'a'"))).map(_.path))
    val e = assertThrows(classOf[InvalidCommitException],
      () => commitNew(dl, Seq(add("c.parquet", Map("p" -> "a")))))
    assertEquals("DELTA_INVALID_PARTITIONING_SCHEMA", e.errorClass)
  }

  // ------------------------------------------------------------------ prepareCommit checks

  @Test def unsupportedWriterFeatureRejected(): Unit = withDir { d =>
    val dl = newLog(d)
    writeRaw(dl, 0, Seq(Protocol.fromJson("""{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["madeUpFeature"]}"""),
      metadata()))
    val e = assertThrows(classOf[UnsupportedTableFeatureException],
      () => commitNew(dl, Seq(add("a.parquet"))))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", e.errorClass)
  }

  @Test def appendOnlyRejectsDataChangingRemoves(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.appendOnly" -> "true"))
    commitNew(dl, Seq(add("a.parquet")))
    val f = dl.update().allFiles.next()
    val e = assertThrows(classOf[AppendOnlyTableException],
      () => commitNew(dl, Seq(f.remove(5L)), Operation.delete()))
    assertEquals("DELTA_APPEND_ONLY_TABLE", e.errorClass)
    assertTrue(e.getMessage.contains(dl.tablePath.toString), e.getMessage)
    // Rearrangements are fine.
    commitNew(dl, Seq(f.remove(5L, dataChange = false), add("b.parquet", dataChange = false)), Operation.optimize())
    assertEquals(Set("b.parquet"), livePaths(dl))
  }

  @Test def duplicateTxnAppIds(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val e = assertThrows(classOf[InvalidCommitException],
      () => commitNew(dl, Seq(SetTransaction("app", 1), SetTransaction("app", 2))))
    assertEquals("DELTA_DUPLICATE_TXN_APP_ID", e.errorClass)
    val v = commitNew(dl, Seq(SetTransaction("app", 1), SetTransaction("app", 1)))
    assertEquals(1, readCommit(dl, v).count(_.isInstanceOf[SetTransaction]))
  }

  @Test def partitionValuesMustMatchPartitionColumns(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, Seq("p"))
    val e = assertThrows(classOf[InvalidCommitException], () => commitNew(dl, Seq(add("a.parquet"))))
    assertEquals("DELTA_INVALID_PARTITIONING_SCHEMA", e.errorClass)
    assertThrows(classOf[InvalidCommitException],
      () => commitNew(dl, Seq(add("a.parquet", Map("p" -> "x", "q" -> "y")))))
    commitNew(dl, Seq(add("a.parquet", Map("p" -> null))))
  }

  @Test def duplicateAddsRejected(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val e = assertThrows(classOf[InvalidCommitException],
      () => commitNew(dl, Seq(add("a.parquet"), add("a.parquet"))))
    assertEquals("DELTA_DUPLICATE_ACTIONS_FOUND", e.errorClass)
  }

  @Test def domainMetadataNeedsFeature(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val e = assertThrows(classOf[InvalidCommitException],
      () => commitNew(dl, Seq(DomainMetadata("my.domain", "{}"))))
    assertEquals("DELTA_DOMAIN_METADATA_NOT_SUPPORTED", e.errorClass)

    val d2 = newLog(d.resolve("t2"))
    create(d2, conf = Map("delta.feature.domainMetadata" -> "supported"))
    commitNew(d2, Seq(DomainMetadata("my.domain", """{"k":1}""")))
    assertEquals(Seq("my.domain"), d2.update().domainMetadata.map(_.domain))
  }

  // ------------------------------------------------------------------ isolation level / blind append

  @Test def isolationLevels(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val v1 = commitNew(dl, Seq(add("a.parquet")))
    assertEquals(Some("Serializable"), commitInfoOf(dl, v1).isolationLevel)
    val f = dl.update().allFiles.next()
    val v2 = commitNew(dl, Seq(f.remove(1L, dataChange = false), add("b.parquet", dataChange = false)), Operation.optimize())
    assertEquals(Some("SnapshotIsolation"), commitInfoOf(dl, v2).isolationLevel)

    val dw = newLog(d.resolve("ws"))
    create(dw, conf = Map("delta.isolationLevel" -> "WriteSerializable"))
    val w1 = commitNew(dw, Seq(add("a.parquet")))
    assertEquals(Some("WriteSerializable"), commitInfoOf(dw, w1).isolationLevel)

    val e = assertThrows(classOf[InvalidTablePropertyException],
      () => create(newLog(d.resolve("bad")), conf = Map("delta.isolationLevel" -> "SnapshotIsolation")))
    assertEquals("DELTA_INVALID_ISOLATION_LEVEL", e.errorClass)
  }

  @Test def blindAppendFlag(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val v1 = commitNew(dl, Seq(add("a.parquet")))
    assertEquals(Some(true), commitInfoOf(dl, v1).isBlindAppend)
    val txn = OptimisticTransaction.start(dl)
    txn.filterFiles()
    val v2 = txn.commit(Seq(add("b.parquet")), Operation.write())
    assertEquals(Some(false), commitInfoOf(dl, v2).isBlindAppend)
    assertEquals(Some(v1), commitInfoOf(dl, v2).readVersion)
  }

  @Test def operationFieldsInCommitInfo(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val op = Operation.write("Append", Seq("p")).withMetrics(Map("numFiles" -> "1")).withUserMetadata("hello")
    val v = commitNew(dl, Seq(add("a.parquet")), op)
    val ci = commitInfoOf(dl, v)
    assertEquals(Some("WRITE"), ci.operation)
    assertEquals(Some(Map("mode" -> "Append", "partitionBy" -> "[\"p\"]")), ci.operationParameters)
    assertEquals(Some(Map("numFiles" -> "1")), ci.operationMetrics)
    assertEquals(Some("hello"), ci.userMetadata)
  }

  // ------------------------------------------------------------------ reads

  @Test def filterFilesRecordsPartitionAndDataPredicates(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, Seq("p"))
    commitNew(dl, Seq(add("a1", Map("p" -> "a")), add("a2", Map("p" -> "a")), add("b1", Map("p" -> "b"))))
    val txn = OptimisticTransaction.start(dl)
    val files = txn.filterFiles(Seq(p("p = 'a'"), p("id > 5")))
    assertEquals(Set("a1", "a2"), files.map(_.path).toSet, "data predicates do not prune")
    assertEquals(Seq(Seq(p("p = 'a'"), p("id > 5"))), txn.recordedReadPredicates)
    assertEquals(Set("a1", "a2"), txn.recordedReadFiles.map(_.path).toSet)
    assertFalse(txn.readsWholeTable)
    assertEquals(3, txn.filterFiles().size)
    assertTrue(txn.readsWholeTable)
  }

  @Test def txnVersionAndIdempotentWrites(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    def writeOnce(appId: String, version: Long, file: String): Boolean = {
      val txn = OptimisticTransaction.start(dl)
      if (txn.txnVersion(appId) >= version) false
      else {
        txn.commit(Seq(add(file), SetTransaction(appId, version, Some(1L))), Operation.streamingUpdate("Append", appId, version))
        true
      }
    }
    val t0 = OptimisticTransaction.start(dl)
    assertEquals(-1L, t0.txnVersion("app"))
    assertEquals(Set("app"), t0.readAppIds)
    assertTrue(writeOnce("app", 1, "f1"))
    assertFalse(writeOnce("app", 1, "f1-again"))
    assertTrue(writeOnce("app", 2, "f2"))
    assertEquals(Set("f1", "f2"), livePaths(dl))
    assertEquals(2L, OptimisticTransaction.start(dl).txnVersion("app"))
  }

  // ------------------------------------------------------------------ put-if-absent / durable

  @Test def putIfAbsentNeverOverwrites(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl)
    // A foreign writer takes version 1 after the transaction started.
    writeRaw(dl, 1, Seq(CommitInfo.empty.withOperation("FOREIGN").withIsBlindAppend(true), add("foreign.parquet")))
    val before = Files.readAllBytes(commitFile(dl, 1).toPath)
    assertEquals(2L, txn.commit(Seq(add("mine.parquet")), Operation.write()))
    assertArrayEquals(before, Files.readAllBytes(commitFile(dl, 1).toPath))
    assertEquals(Set("foreign.parquet", "mine.parquet"), livePaths(dl))
    assertFalse(new java.io.File(dl.logPath.toUri).list().exists(_.endsWith(".tmp")), "no temp files left")
  }

  @Test def nonDurableModeWorks(): Unit = withDir { d =>
    val conf = new Configuration()
    conf.set(TxnConf.DurableKey, "false")
    val dl = newLog(d, conf)
    create(dl)
    assertEquals(1L, commitNew(dl, Seq(add("a"))))
  }

  // ------------------------------------------------------------------ ICT / row tracking

  @Test def inCommitTimestampsAreMonotonic(): Unit = withDir { d =>
    val dl = newLog(d)
    val clock = new ManualClock(10000L)
    val t0 = OptimisticTransaction.start(dl, clock)
    t0.updateMetadata(metadata(conf = Map("delta.enableInCommitTimestamps" -> "true")))
    t0.commit(Nil, Operation.createTable())
    assertTrue(dl.update().protocol.isFeatureSupported(TableFeature.InCommitTimestamp))
    assertEquals(Some(10000L), commitInfoOf(dl, 0).inCommitTimestamp)
    clock.set(500L) // the clock goes back
    OptimisticTransaction.start(dl, clock).commit(Seq(add("a")), Operation.write())
    assertEquals(Some(10001L), commitInfoOf(dl, 1).inCommitTimestamp)
    val firstKey = {
      val line = new String(Files.readAllBytes(commitFile(dl, 1).toPath), StandardCharsets.UTF_8).linesIterator.next()
      line.substring(0, 40)
    }
    assertTrue(firstKey.startsWith("""{"commitInfo":{"inCommitTimestamp":"""), firstKey)
  }

  @Test def enablingIctOnExistingTableStampsEnablement(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val txn = OptimisticTransaction.start(dl, Clock.fixed(System.currentTimeMillis() + 60000))
    txn.updateMetadata(txn.metadata.copy(configuration = Map("delta.enableInCommitTimestamps" -> "true")))
    val v = txn.commit(Nil, Operation.setTableProperties(Map("delta.enableInCommitTimestamps" -> "true")))
    val conf = dl.update().metadata.configuration
    assertEquals(Some(v.toString), conf.get("delta.inCommitTimestampEnablementVersion"))
    assertEquals(commitInfoOf(dl, v).inCommitTimestamp.map(_.toString), conf.get("delta.inCommitTimestampEnablementTimestamp"))
  }

  @Test def rowTrackingAssignsIds(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.enableRowTracking" -> "true"))
    assertTrue(dl.update().protocol.isFeatureSupported(TableFeature.RowTracking))
    val v1 = commitNew(dl, Seq(add("a", numRecords = 10), add("b", numRecords = 5)))
    val adds = readCommit(dl, v1).collect { case a: AddFile => a.path -> a }.toMap
    assertEquals(Some(0L), adds("a").baseRowId)
    assertEquals(Some(10L), adds("b").baseRowId)
    assertEquals(Some(v1), adds("a").defaultRowCommitVersion)
    assertEquals(Some(14L), RowTracking.highWaterMark(dl.update().domainMetadata))
    val v2 = commitNew(dl, Seq(add("c", numRecords = 3)))
    assertEquals(Some(15L), readCommit(dl, v2).collectFirst { case a: AddFile => a.baseRowId }.flatten)
    assertEquals(Some(17L), RowTracking.highWaterMark(dl.update().domainMetadata))
    val e = assertThrows(classOf[InvalidCommitException],
      () => commitNew(dl, Seq(AddFile(path = "nostats", size = 1, modificationTime = 1))))
    assertEquals("DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS", e.errorClass)
  }

  // ------------------------------------------------------------------ materialized row tracking columns

  private val RowIdName = RowTracking.MaterializedRowIdColumnNameKey
  private val CommitVersionName = RowTracking.MaterializedRowCommitVersionColumnNameKey
  private val Uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

  private def materializedNames(dl: DeltaLog): (Option[String], Option[String]) = {
    val c = dl.update().metadata.configuration
    (c.get(RowIdName), c.get(CommitVersionName))
  }

  private def assertFreshNames(dl: DeltaLog): (String, String) = materializedNames(dl) match {
    case (Some(id), Some(cv)) =>
      assertTrue(id.matches(s"_row-id-col-$Uuid"), id)
      assertTrue(cv.matches(s"_row-commit-version-col-$Uuid"), cv)
      (id, cv)
    case other => fail(s"materialized column names missing: $other")
  }

  @Test def rowTrackingAtCreateAssignsMaterializedColumnNamesOnce(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.enableRowTracking" -> "true"))
    val names = assertFreshNames(dl)
    // Names of another table (a different uuid) are not taken from a later metadata update.
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = Map("delta.enableRowTracking" -> "true", "k" -> "v",
      RowIdName -> "_row-id-col-other", CommitVersionName -> "_row-commit-version-col-other")))
    txn.commit(Nil, Operation.setTableProperties(Map("k" -> "v")))
    assertEquals((Some(names._1), Some(names._2)), materializedNames(dl))
    assertEquals(Some("v"), dl.update().metadata.configuration.get("k"))
    // Appends do not touch them.
    commitNew(dl, Seq(add("a", numRecords = 2)))
    assertEquals((Some(names._1), Some(names._2)), materializedNames(dl))
    // A second table gets names of its own.
    withDir { d2 =>
      val other = newLog(d2)
      create(other, conf = Map("delta.enableRowTracking" -> "true"))
      val names2 = assertFreshNames(other)
      assertNotEquals(names._1, names2._1)
      assertNotEquals(names._2, names2._2)
    }
  }

  @Test def rowTrackingEnabledLaterOrOnlySupportedAssignsNames(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    assertEquals((None, None), materializedNames(dl))
    commitNew(dl, Seq(add("a", numRecords = 2)))
    assertEquals((None, None), materializedNames(dl))
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = Map("delta.enableRowTracking" -> "true")))
    val v = txn.commit(Nil, Operation.setTableProperties(Map("delta.enableRowTracking" -> "true")))
    assertTrue(dl.update().protocol.isFeatureSupported(TableFeature.RowTracking))
    assertFreshNames(dl)
    // Backfill: the live file is re-added (no data change) with row ids in the enabling commit.
    val readded = readCommit(dl, v).collect { case a: AddFile => a }
    assertEquals(Seq(("a", false, Some(0L), Some(v))),
      readded.map(a => (a.path, a.dataChange, a.baseRowId, a.defaultRowCommitVersion)))
    assertEquals(Some(1L), RowTracking.highWaterMark(dl.update().domainMetadata))
    assertEquals(Set(Some(0L)), dl.update().allFiles.map(_.baseRowId).toSet)
    assertEquals(Some(false), commitInfoOf(dl, v).isBlindAppend)

    withDir { d2 => // the feature without the property (supported, not enabled), as delta-spark does
      val dl2 = newLog(d2)
      create(dl2, conf = Map("delta.feature.rowTracking" -> "supported"))
      assertFreshNames(dl2)
    }
    withDir { d4 => // a file appended concurrently with the enabling commit would miss the backfill: conflict
      val dl4 = newLog(d4)
      create(dl4)
      commitNew(dl4, Seq(add("a", numRecords = 2)))
      val (winner, loser) = (OptimisticTransaction.start(dl4), OptimisticTransaction.start(dl4))
      winner.commit(Seq(add("b", numRecords = 3)), Operation.write())
      loser.updateMetadata(loser.metadata.copy(configuration = Map("delta.enableRowTracking" -> "true")))
      assertThrows(classOf[ConcurrentAppendException],
        () => loser.commit(Nil, Operation.setTableProperties(Map("delta.enableRowTracking" -> "true"))))
    }
    withDir { d3 => // a protocol-only commit that adds the feature also names the columns
      val dl3 = newLog(d3)
      create(dl3)
      val p = Protocol.addFeatureSupport(dl3.update().protocol, "rowTracking")
      commitNew(dl3, Seq(p), Operation.upgradeProtocol("rowTracking"))
      assertTrue(dl3.update().protocol.isFeatureSupported(TableFeature.RowTracking))
      assertFreshNames(dl3)
    }
  }

  @Test def materializedColumnNamesCollideWithNoColumn(): Unit = withDir { d =>
    // Names given at create are kept when they name no column.
    val dl = newLog(d)
    create(dl, conf = Map("delta.enableRowTracking" -> "true", RowIdName -> "rid", CommitVersionName -> "rcv"))
    assertEquals((Some("rid"), Some("rcv")), materializedNames(dl))
    // A schema change that adds a column with one of the names is refused.
    val txn = OptimisticTransaction.start(dl)
    val e = assertThrows(classOf[InvalidCommitException], () =>
      txn.updateMetadata(txn.metadata.copy(schemaString = schema("id" -> "long", "p" -> "string", "RID" -> "int"))))
    assertEquals("DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED", e.errorClass)
    // ... and so is a name that is a column at create, logical or physical (column mapping).
    withDir { d2 =>
      val e2 = assertThrows(classOf[InvalidCommitException], () => create(newLog(d2),
        conf = Map("delta.enableRowTracking" -> "true", RowIdName -> "id")))
      assertEquals("DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED", e2.errorClass)
    }
    withDir { d3 =>
      val mapped = """{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":""" +
        """{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-phys"}}]}"""
      val e3 = assertThrows(classOf[InvalidCommitException], () => create(newLog(d3), schemaString = mapped,
        conf = Map("delta.enableRowTracking" -> "true", "delta.columnMapping.mode" -> "name",
          "delta.columnMapping.maxColumnId" -> "1", CommitVersionName -> "col-phys")))
      assertEquals("DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED", e3.errorClass)
    }
    // Generated names avoid the columns (a column with a generated-looking name does not matter).
    val m = metadata(schemaString = schema("id" -> "long"))
    val named = RowTracking.withMaterializedColumnNames(Protocol.addFeatureSupport(Protocol(1, 2), "rowTracking"),
      None, m, "t")
    RowTracking.checkMaterializedColumnNames(named, "t")
    assertEquals(m, RowTracking.withMaterializedColumnNames(Protocol(1, 2), None, m, "t"))
  }
}
