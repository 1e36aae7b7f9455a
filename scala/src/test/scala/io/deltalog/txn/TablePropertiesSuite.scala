package io.deltalog.txn

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.commands.WriteOptions
import io.deltalog.exceptions.InvalidTablePropertyException
import io.deltalog.protocol.{Protocol, TableFeature}

/**
 * Table property validation ([[TableProperties]]): the values delta-spark's `DeltaConfigs` accept
 * and refuse, unknown `delta.*` names, the escape hatch, and that a transaction checks only what
 * it sets (a table with odd values written by another engine still takes appends).
 */
class TablePropertiesSuite {
  import TxnTestSupport._

  private def invalid(props: (String, String)*): InvalidTablePropertyException =
    assertThrows(classOf[InvalidTablePropertyException],
      () => TableProperties.validate(props.toMap, "/t", allowArbitrary = false))

  private def valid(props: (String, String)*): Unit =
    TableProperties.validate(props.toMap, "/t", allowArbitrary = false)

  // ------------------------------------------------------------------ values

  @Test def checkpointIntervalMustBeAPositiveInteger(): Unit = {
    valid("delta.checkpointInterval" -> "1")
    valid("delta.checkpointInterval" -> "100")
    for (bad <- Seq("0", "-5", "abc", "1.5", "", " 10", "99999999999")) {
      val e = invalid("delta.checkpointInterval" -> bad)
      assertEquals("DELTA_INVALID_TABLE_PROPERTY_VALUE", e.errorClass, bad)
      assertEquals(s"[DELTA_INVALID_TABLE_PROPERTY_VALUE] Table /t: invalid value '$bad' for table property " +
        "delta.checkpointInterval; it accepts a positive integer (e.g. '10').", e.getMessage)
    }
  }

  @Test def booleansAreTrueOrFalseInAnyCase(): Unit = {
    for (k <- Seq("delta.appendOnly", "delta.enableChangeDataFeed", "delta.enableDeletionVectors",
        "delta.checkpoint.writeStatsAsStruct", "delta.enableRowTracking", "delta.autoOptimize.optimizeWrite")) {
      Seq("true", "false", "TRUE", "False").foreach(v => valid(k -> v))
      Seq("yes", "1", "", "t", "true ").foreach { v =>
        val e = invalid(k -> v)
        assertEquals("DELTA_INVALID_TABLE_PROPERTY_VALUE", e.errorClass)
        assertTrue(e.getMessage.contains(s"'$v' for table property $k; it accepts 'true' or 'false'"), e.getMessage)
      }
    }
  }

  @Test def retentionDurationsAreIntervalsWithoutMonthsOrYears(): Unit = {
    for (k <- Seq("delta.logRetentionDuration", "delta.deletedFileRetentionDuration",
        "delta.setTransactionRetentionDuration", "delta.checkpointRetentionDuration")) {
      Seq("interval 1 week", "interval 7 days", "30 days", "INTERVAL 12 HOURS", "1 day 12 hours", "interval 0 seconds")
        .foreach(v => TableProperties.validate(Map(k -> v), "/t", allowArbitrary = false,
          Map("delta.logRetentionDuration" -> "interval 3650 days", "delta.deletedFileRetentionDuration" -> "0 days")))
      Seq("interval 1 month", "1 year", "abc", "", "interval", "-1 days", "7").foreach { v =>
        val e = invalid(k -> v)
        assertEquals("DELTA_INVALID_TABLE_PROPERTY_VALUE", e.errorClass, s"$k=$v")
        assertTrue(e.getMessage.contains("Months and years are not accepted"), e.getMessage)
      }
    }
  }

  @Test def logRetentionNotShorterThanDeletedFileRetention(): Unit = {
    valid("delta.logRetentionDuration" -> "interval 7 days")
    valid("delta.deletedFileRetentionDuration" -> "interval 30 days")
    val e = invalid("delta.logRetentionDuration" -> "interval 1 day")
    assertTrue(e.getMessage.contains("delta.logRetentionDuration (interval 1 day) needs to be greater than or equal " +
      "to delta.deletedFileRetentionDuration (interval 1 week)"), e.getMessage)
    invalid("delta.deletedFileRetentionDuration" -> "interval 31 days")
    valid("delta.deletedFileRetentionDuration" -> "interval 60 days", "delta.logRetentionDuration" -> "interval 60 days")
  }

  @Test def enumerations(): Unit = {
    Seq("none", "id", "name", "NAME").foreach(v => valid("delta.columnMapping.mode" -> v))
    val cm = invalid("delta.columnMapping.mode" -> "names")
    assertTrue(cm.getMessage.endsWith("invalid value 'names' for table property delta.columnMapping.mode; it " +
      "accepts 'none', 'id' or 'name'."), cm.getMessage)

    Seq("classic", "v2").foreach(v => valid("delta.checkpointPolicy" -> v))
    Seq("v3", "V2", "").foreach(v => invalid("delta.checkpointPolicy" -> v)) // delta-spark matches the name exactly

    Seq("Serializable", "WriteSerializable", "writeserializable").foreach(v => valid("delta.isolationLevel" -> v))
    val iso = invalid("delta.isolationLevel" -> "SnapshotIsolation")
    assertEquals("DELTA_INVALID_ISOLATION_LEVEL", iso.errorClass)
    assertTrue(iso.getMessage.contains("'Serializable' or 'WriteSerializable'"), iso.getMessage)

    Seq("", "iceberg", "iceberg,hudi").foreach(v => valid("delta.universalFormat.enabledFormats" -> v))
    Seq("iceberg,iceberg", "parquet", "iceberg, hudi").foreach(v => invalid("delta.universalFormat.enabledFormats" -> v))
  }

  @Test def numbers(): Unit = {
    Seq("-1", "0", "32").foreach(v => valid("delta.dataSkippingNumIndexedCols" -> v))
    val e = invalid("delta.dataSkippingNumIndexedCols" -> "-2")
    assertTrue(e.getMessage.contains("an integer >= -1"), e.getMessage)
    valid("delta.dataSkippingStringPrefixLength" -> "0")
    invalid("delta.dataSkippingStringPrefixLength" -> "-1")
    valid("delta.randomPrefixLength" -> "2")
    invalid("delta.randomPrefixLength" -> "0")
    Seq("33554432", "128mb", "1GB").foreach(v => valid("delta.targetFileSize" -> v))
    Seq("0", "big", "-1").foreach(v => invalid("delta.targetFileSize" -> v))
  }

  // ------------------------------------------------------------------ names

  @Test def unknownDeltaNamesRefusedUnlessAllowed(): Unit = {
    val e = invalid("delta.foo" -> "1")
    assertEquals("DELTA_UNKNOWN_CONFIGURATION", e.errorClass)
    assertEquals("[DELTA_UNKNOWN_CONFIGURATION] Table /t: unknown configuration was specified: delta.foo. Table " +
      "properties starting with 'delta.' must be ones Delta defines (a user property needs another prefix). To " +
      "disable this check, set spark.databricks.delta.allowArbitraryProperties.enabled=true in the Spark session " +
      "configuration.", e.getMessage)
    TableProperties.validate(Map("delta.foo" -> "1"), "/t", allowArbitrary = true)
    // A typo of a known name is unknown; a known name in another case is known.
    assertEquals("DELTA_UNKNOWN_CONFIGURATION", invalid("delta.checkpointIntervals" -> "10").errorClass)
    valid("DELTA.CHECKPOINTINTERVAL" -> "10")
    invalid("DELTA.CHECKPOINTINTERVAL" -> "0")
    // Without a table the message starts with the problem.
    val noTable = assertThrows(classOf[InvalidTablePropertyException],
      () => TableProperties.validate(Map("delta.foo" -> "1"), null, allowArbitrary = false))
    assertTrue(noTable.getMessage.startsWith("[DELTA_UNKNOWN_CONFIGURATION] unknown configuration"), noTable.getMessage)
  }

  @Test def userPropertiesConstraintsFeaturesAndUniformConfigAllowed(): Unit = {
    valid("owner" -> "me", "checkpointInterval" -> "abc", "comment" -> "", "deltax.y" -> "z")
    valid("delta.constraints.positive" -> "id > 0", "delta.universalFormat.config.iceberg.foo" -> "x")
    // Protocol properties are the protocol rules' business.
    valid("delta.feature.deletionVectors" -> "supported", "delta.feature.noSuchFeature" -> "supported",
      "delta.minReaderVersion" -> "x", "delta.ignoreProtocolDefaults" -> "maybe")
  }

  @Test def canonicalSpelling(): Unit = {
    assertEquals("delta.appendOnly", TableProperties.canonicalKey("delta.appendonly"))
    assertEquals("delta.checkpointInterval", TableProperties.canonicalKey("DELTA.CHECKPOINTINTERVAL"))
    assertEquals("delta.feature.deletionVectors", TableProperties.canonicalKey("delta.feature.deletionvectors"))
    assertEquals("delta.minWriterVersion", TableProperties.canonicalKey("delta.minwriterversion"))
    assertEquals("delta.foo", TableProperties.canonicalKey("delta.foo"))
    assertEquals("owner", TableProperties.canonicalKey("owner"))
    // WriteOptions uses the same list.
    assertEquals(TableProperties.knownKeys, WriteOptions.KnownTableProperties)
    assertEquals("delta.enableChangeDataFeed", WriteOptions.canonicalKey("delta.enablechangedatafeed"))
    assertEquals(Map("delta.appendOnly" -> "true", "delta.bar" -> "1"),
      new WriteOptions(Map("delta.appendonly" -> "true", "delta.bar" -> "1", "mergeSchema" -> "true")).tableProperties)
  }

  @Test def everyFeatureEnablingPropertyIsKnown(): Unit = {
    // The properties TableFeature's predicates read must be settable.
    val text = new String(Files.readAllBytes(java.nio.file.Paths.get(System.getProperty("deltalog.repo.root", "."),
      "scala/src/main/scala/io/deltalog/protocol/TableFeature.scala")), "UTF-8")
    val keys = "\"(delta\\.[A-Za-z0-9.-]+)\"".r.findAllMatchIn(text).map(_.group(1))
      .filterNot(k => k.endsWith(".") || k == "delta.invariants" || k.startsWith("delta.generationExpression") ||
        k.startsWith("delta.identity.")).toSet
    assertTrue(keys.contains("delta.enableDeletionVectors"), keys.toString)
    keys.foreach(k => assertTrue(TableProperties.get(k).isDefined, s"$k is not a known table property"))
  }

  // ------------------------------------------------------------------ transactions

  @Test def newTableWithInvalidValueIsRefusedAndNothingWritten(): Unit = withDir { d =>
    val dl = newLog(d)
    val e = assertThrows(classOf[InvalidTablePropertyException],
      () => create(dl, conf = Map("delta.checkpointInterval" -> "0")))
    assertEquals("DELTA_INVALID_TABLE_PROPERTY_VALUE", e.errorClass)
    assertTrue(e.getMessage.contains(s"Table ${dl.tablePath}: invalid value '0' for table property " +
      "delta.checkpointInterval"), e.getMessage)
    assertFalse(Files.exists(d.resolve("_delta_log")), "nothing written")
    assertThrows(classOf[InvalidTablePropertyException], () => create(dl, conf = Map("delta.checkpointInterval" -> "abc")))
    assertThrows(classOf[InvalidTablePropertyException], () => create(dl, conf = Map("delta.foo" -> "1")))
    assertFalse(Files.exists(d.resolve("_delta_log")), "nothing written")
  }

  @Test def newTableWithValidValuesAndCanonicalKeys(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.checkpointinterval" -> "5", "delta.APPENDONLY" -> "true", "owner" -> "me",
      "delta.constraints.positive" -> "id > 0"))
    assertEquals(Map("delta.checkpointInterval" -> "5", "delta.appendOnly" -> "true", "owner" -> "me",
      "delta.constraints.positive" -> "id > 0"), dl.update().metadata.configuration)
    assertEquals(5, OptimisticTransaction.checkpointInterval(dl.update().metadata))
  }

  @Test def escapeHatchFromHadoopConfOrTransaction(): Unit = withDir { d =>
    val conf = new Configuration()
    conf.set(TableProperties.AllowArbitraryPropertiesKey, "true")
    val dl = newLog(d.resolve("a"), conf)
    create(dl, conf = Map("delta.foo" -> "1"))
    assertEquals(Some("1"), dl.update().metadata.configuration.get("delta.foo"))
    // The escape hatch lets unknown names through, never invalid values of known ones.
    assertThrows(classOf[InvalidTablePropertyException],
      () => create(newLog(d.resolve("b"), conf), conf = Map("delta.checkpointInterval" -> "0")))

    val dl2 = newLog(d.resolve("c"))
    val txn = OptimisticTransaction.start(dl2)
    assertFalse(txn.allowArbitraryProperties)
    txn.allowArbitraryProperties = true
    txn.updateMetadata(metadata(conf = Map("delta.bar" -> "x")))
    txn.commit(Nil, Operation.createTable(Nil))
    assertEquals(Some("x"), dl2.update().metadata.configuration.get("delta.bar"))
  }

  @Test def changedPropertiesOfAnExistingTableAreChecked(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    def set(props: (String, String)*): Unit = {
      val txn = OptimisticTransaction.start(dl)
      txn.updateMetadata(txn.metadata.copy(configuration = txn.metadata.configuration ++ props))
      txn.commit(Nil, Operation.setTableProperties(props.toMap))
    }
    val e = assertThrows(classOf[InvalidTablePropertyException], () => set("delta.deletedFileRetentionDuration" -> "1 month"))
    assertTrue(e.getMessage.contains("delta.deletedFileRetentionDuration"), e.getMessage)
    assertThrows(classOf[InvalidTablePropertyException], () => set("delta.columnMapping.mode" -> "position"))
    assertEquals("DELTA_UNKNOWN_CONFIGURATION",
      assertThrows(classOf[InvalidTablePropertyException], () => set("delta.nope" -> "1")).errorClass)
    assertEquals(0L, dl.update().version, "nothing committed")
    set("delta.logRetentionDuration" -> "interval 60 days", "delta.enablechangedatafeed" -> "true")
    assertEquals(Some("true"), dl.update().metadata.configuration.get("delta.enableChangeDataFeed"))
    assertTrue(dl.update().protocol.isFeatureSupported(TableFeature.ChangeDataFeed))
  }

  @Test def metadataActionInCommitIsChecked(): Unit = withDir { d =>
    val dl = newLog(d)
    val e = assertThrows(classOf[InvalidTablePropertyException], () => OptimisticTransaction.start(dl)
      .commit(Seq(Protocol(1, 2), metadata(conf = Map("delta.checkpointInterval" -> "-1"))), Operation.createTable(Nil)))
    assertEquals("DELTA_INVALID_TABLE_PROPERTY_VALUE", e.errorClass)
    assertFalse(Files.exists(d.resolve("_delta_log")))
  }

  @Test def oddValuesWrittenByAnotherEngineStillLoadAndTakeAppends(): Unit = withDir { d =>
    val dl = newLog(d)
    val odd = Map("delta.checkpointInterval" -> "0", "delta.someOtherEngine.flag" -> "on",
      "delta.logRetentionDuration" -> "interval 1 month", "delta.rowTracking.preserved" -> "false")
    writeRaw(dl, 0, Seq(Protocol(1, 2), metadata(conf = odd)))
    assertEquals(odd, dl.update().metadata.configuration)
    assertEquals(OptimisticTransaction.DefaultCheckpointInterval, OptimisticTransaction.checkpointInterval(dl.update().metadata))
    assertEquals(1L, commitNew(dl, Seq(add("a.parquet"))))
    // A metadata change that leaves them alone keeps them, and checks only what it sets.
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(txn.metadata.copy(configuration = txn.metadata.configuration + ("delta.appendOnly" -> "false")))
    assertEquals(2L, txn.commit(Nil, Operation.setTableProperties(Map("delta.appendOnly" -> "false"))))
    assertEquals(odd + ("delta.appendOnly" -> "false"), dl.update().metadata.configuration)
    // Replacing one of them with another bad value is refused.
    val t2 = OptimisticTransaction.start(dl)
    assertThrows(classOf[InvalidTablePropertyException],
      () => t2.updateMetadata(t2.metadata.copy(configuration = t2.metadata.configuration + ("delta.checkpointInterval" -> "-3"))))
  }

  @Test def sessionDefaultsAreCheckedAndUnknownOnesIgnored(): Unit = withDir { d =>
    val bad = new Configuration()
    bad.set("spark.databricks.delta.properties.defaults.checkpointInterval", "zero")
    val e = assertThrows(classOf[InvalidTablePropertyException], () => create(newLog(d.resolve("a"), bad)))
    assertTrue(e.getMessage.contains("delta.checkpointInterval"), e.getMessage)
    // A table property overrides the default (which is then not checked).
    create(newLog(d.resolve("b"), bad), conf = Map("delta.checkpointInterval" -> "7"))

    val unknown = new Configuration()
    unknown.set("spark.databricks.delta.properties.defaults.noSuchProperty", "1")
    unknown.set("spark.databricks.delta.properties.defaults.appendonly", "true")
    val dl = newLog(d.resolve("c"), unknown)
    create(dl)
    assertEquals(Map("delta.appendOnly" -> "true"), dl.update().metadata.configuration)
  }
}
