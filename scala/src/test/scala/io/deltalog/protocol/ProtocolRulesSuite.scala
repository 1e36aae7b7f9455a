package io.deltalog.protocol

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.exceptions.{DeltalogAssertionError, ProtocolDowngradeException, UnsupportedTableFeatureException}
import io.deltalog.protocol.ProtocolTestHelpers._

/** The companion-object rules: new tables, metadata-driven upgrades, ALTER operations, clients. */
class ProtocolRulesSuite {
  private val S = Protocol.SESSION_DEFAULTS_PREFIX
  private val dv = p(3, 7, Seq("deletionVectors"), Seq("deletionVectors"))

  // ------------------------------------------------------------------ forNewTable

  @Test def forNewTableDefaultsToOneTwo(): Unit = {
    assertEquals(Protocol(1, 2), Protocol.forNewTable(md()))
    assertEquals(Protocol(1, 2), Protocol.forNewTable(md("delta.appendOnly" -> "true")))
    assertEquals(Protocol(1, 2), Protocol.forNewTable(null))
  }

  @Test def forNewTableWithTableFeatures(): Unit = {
    val p1 = Protocol.forNewTable(md("delta.enableDeletionVectors" -> "true"))
    assertEquals("3,7,[deletionVectors],[appendOnly,deletionVectors,invariants]", p1.simpleString)
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "rowTracking", "domainMetadata")),
      Protocol.forNewTable(md("delta.enableRowTracking" -> "true")))
    // only the features needed: (1,4) would also imply checkConstraints and generatedColumns
    assertEquals(p(1, 7, null, Seq("appendOnly", "changeDataFeed", "invariants")), Protocol.forNewTable(md("delta.enableChangeDataFeed" -> "true")))
    assertEquals(p(2, 7, null, Seq("appendOnly", "columnMapping", "invariants")),
      Protocol.forNewTable(md("delta.columnMapping.mode" -> "name")))
    assertEquals(Protocol(2, 5), Protocol.forNewTable(md("delta.columnMapping.mode" -> "name", "delta.minWriterVersion" -> "4")))
    assertEquals(Protocol(1, 3), Protocol.forNewTable(md("delta.constraints.c" -> "a > 0")))
    assertEquals(p(1, 7, null, Seq("appendOnly", "identityColumns", "invariants")), Protocol.forNewTable(mdSchema(schemaOf(
      field("id", "\"long\"", metadata = """{"delta.identity.start":1}""")))))
    assertEquals("3,7,[timestampNtz],[appendOnly,invariants,timestampNtz]",
      Protocol.forNewTable(mdSchema(schemaOf(field("t", "\"timestamp_ntz\"")))).simpleString)
    assertEquals("2,7,None,[appendOnly,columnMapping,icebergCompatV2,invariants]", Protocol.forNewTable(
      md("delta.enableIcebergCompatV2" -> "true", "delta.columnMapping.mode" -> "name")).simpleString)
  }

  @Test def forNewTableWithVersionProperties(): Unit = {
    assertEquals(Protocol(2, 5), Protocol.forNewTable(md("delta.minReaderVersion" -> "2", "delta.minWriterVersion" -> "5")))
    assertEquals(Protocol(1, 4), Protocol.forNewTable(md("delta.minReaderVersion" -> "2", "delta.minWriterVersion" -> "4")))
    assertEquals(Protocol(1, 1), Protocol.forNewTable(md("delta.minReaderVersion" -> "3", "delta.minWriterVersion" -> "7")))
    assertEquals(Protocol(1, 3), Protocol.forNewTable(md("delta.minWriterVersion" -> "3")))
    // a lower table version than the default wins over the session default
    assertEquals(Protocol(1, 1), Protocol.forNewTable(md("delta.minWriterVersion" -> "1")))
    assertEquals(Protocol(1, 2), Protocol.forNewTable(md("delta.minReaderVersion" -> " 1 ")))
    // the version does not lower what features need
    assertEquals(p(1, 7, null, Seq("appendOnly", "changeDataFeed", "invariants")),
      Protocol.forNewTable(md("delta.minWriterVersion" -> "2", "delta.enableChangeDataFeed" -> "true")))
  }

  @Test def forNewTableWithFeatureProperties(): Unit = {
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "domainMetadata")),
      Protocol.forNewTable(md("delta.feature.domainMetadata" -> "supported")))
    assertEquals(p(3, 7, Seq("vacuumProtocolCheck"), Seq("appendOnly", "invariants", "vacuumProtocolCheck")),
      Protocol.forNewTable(md("delta.feature.VACUUMPROTOCOLCHECK" -> "Enabled")))
    // an explicitly requested preview feature suppresses the stable one
    assertEquals(p(3, 7, Seq("typeWidening-preview"), Seq("appendOnly", "invariants", "typeWidening-preview")),
      Protocol.forNewTable(md("delta.feature.typeWidening-preview" -> "supported", "delta.enableTypeWidening" -> "true")))
    // a legacy feature on top of (1,2)
    assertEquals(Protocol(1, 3), Protocol.forNewTable(md("delta.feature.checkConstraints" -> "supported")))
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "changeDataFeed")),
      Protocol.forNewTable(md("delta.feature.changeDataFeed" -> "supported")).denormalized)
  }

  @Test def forNewTableSessionDefaults(): Unit = {
    assertEquals(Protocol(1, 4), Protocol.forNewTable(md(), Map(s"${S}minWriterVersion" -> "4")))
    assertEquals(Protocol(2, 5), Protocol.forNewTable(md(), Map(s"${S}minReaderVersion" -> "2", s"${S}minWriterVersion" -> "5")))
    assertEquals(p(3, 7, Seq("deletionVectors"), Seq("appendOnly", "invariants", "deletionVectors")),
      Protocol.forNewTable(md(), Map(s"${S}feature.deletionVectors" -> "supported")))
    // table properties win over session defaults
    assertEquals(Protocol(1, 3), Protocol.forNewTable(md("delta.minWriterVersion" -> "3"), Map(s"${S}minWriterVersion" -> "5")))
    // session property defaults (non-protocol) are not applied by forNewTable
    assertEquals(Protocol(1, 2), Protocol.forNewTable(md(), Map(s"${S}enableDeletionVectors" -> "true")))
  }

  @Test def forNewTableIgnoreProtocolDefaults(): Unit = {
    val sd = Map(s"${S}minWriterVersion" -> "5", s"${S}feature.domainMetadata" -> "supported")
    assertEquals(Protocol(1, 1), Protocol.forNewTable(md("delta.ignoreProtocolDefaults" -> "true"), sd))
    assertEquals(Protocol(1, 1), Protocol.forNewTable(md(), sd + (s"${S}ignoreProtocolDefaults" -> "TRUE")))
    assertEquals(p(1, 7, null, Seq("appendOnly")),
      Protocol.forNewTable(md("delta.ignoreProtocolDefaults" -> "true", "delta.appendOnly" -> "true")))
    assertEquals(Protocol(1, 3), Protocol.forNewTable(md("delta.ignoreProtocolDefaults" -> "true",
      "delta.minWriterVersion" -> "3")))
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "checkConstraints", "changeDataFeed",
      "generatedColumns", "domainMetadata")),
      Protocol.forNewTable(md("delta.ignoreProtocolDefaults" -> "false"), sd.updated(s"${S}minWriterVersion", "4")))
    expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(Protocol.forNewTable(md("delta.ignoreProtocolDefaults" -> "1")))
    expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(
      Protocol.forNewTable(md(), Map(s"${S}ignoreProtocolDefaults" -> "yes")))
  }

  @Test def forNewTablePropertyErrors(): Unit = {
    assertMessageContains(expectError("DELTA_PROTOCOL_PROPERTY_NOT_INT")(
      Protocol.forNewTable(md("delta.minWriterVersion" -> "seven"))), "delta.minWriterVersion", "seven")
    expectError("DELTA_PROTOCOL_PROPERTY_NOT_INT")(Protocol.forNewTable(md("delta.minReaderVersion" -> "1.0")))
    expectError("DELTA_PROTOCOL_PROPERTY_NOT_INT")(Protocol.forNewTable(md(), Map(s"${S}minReaderVersion" -> "x")))
    assertMessageContains(expectError("DELTA_INVALID_PROTOCOL_VERSION")(
      Protocol.forNewTable(md("delta.minReaderVersion" -> "4"))), "delta.minReaderVersion")
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol.forNewTable(md("delta.minWriterVersion" -> "8")))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol.forNewTable(md("delta.minWriterVersion" -> "99999999999")))
    assertMessageContains(expectError("DELTA_UNSUPPORTED_FEATURE_STATUS")(
      Protocol.forNewTable(md("delta.feature.deletionVectors" -> "disabled"))), "delta.feature.deletionVectors", "disabled")
    assertMessageContains(expectError("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG")(
      Protocol.forNewTable(md("delta.feature.fooBar" -> "supported"))), "delta.feature.fooBar")
    // status is checked before the name
    expectError("DELTA_UNSUPPORTED_FEATURE_STATUS")(
      Protocol.forNewTable(md("delta.feature.fooBar" -> "supported", "delta.feature.zzz" -> "off")))
    expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(Protocol.forNewTable(md("delta.enableDeletionVectors" -> "on")))
    expectError("DELTA_INVALID_SCHEMA")(Protocol.forNewTable(TableMetadata(Map.empty, "{oops")))
  }

  // ------------------------------------------------------------------ components

  @Test def minProtocolComponentsFromMetadata(): Unit = {
    val (r, w, fs) = Protocol.minProtocolComponentsFromMetadata(md("delta.enableDeletionVectors" -> "true"))
    assertEquals((3, 7, Set("deletionVectors")), (r, w, names(fs)))
    val (r2, w2, fs2) = Protocol.minProtocolComponentsFromMetadata(md("delta.minReaderVersion" -> "2",
      "delta.minWriterVersion" -> "5"))
    assertEquals((2, 5), (r2, w2))
    assertEquals(Set("appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
      "columnMapping"), names(fs2))
    // only one version property: ignored
    assertEquals((1, 1, Set.empty[String]), {
      val (a, b, c) = Protocol.minProtocolComponentsFromMetadata(md("delta.minWriterVersion" -> "4")); (a, b, names(c))
    })
    // (3, 5) from properties is read as (2, 5)
    assertEquals((2, 5), {
      val (a, b, _) = Protocol.minProtocolComponentsFromMetadata(md("delta.minReaderVersion" -> "3",
        "delta.minWriterVersion" -> "5")); (a, b)
    })
  }

  @Test def extractAutomaticallyEnabledFeatures(): Unit = {
    assertEquals(Set("rowTracking", "domainMetadata", "appendOnly"), names(Protocol.extractAutomaticallyEnabledFeatures(
      md("delta.enableRowTracking" -> "true", "delta.appendOnly" -> "true"), Protocol(1, 1))))
    // listed writer features (known ones) are included with dependencies; implicit ones are not
    assertEquals(Set("clustering", "domainMetadata"), names(Protocol.extractAutomaticallyEnabledFeatures(
      md(), p(1, 7, null, Seq("clustering", "unknownThing")))))
    assertEquals(Set.empty, Protocol.extractAutomaticallyEnabledFeatures(md(), Protocol(2, 6)))
  }

  @Test def requiredMinimumProtocol(): Unit = {
    assertEquals((0, 0, Seq()), Protocol.requiredMinimumProtocol(md()))
    assertEquals((0, 2, Seq("appendOnly")), Protocol.requiredMinimumProtocol(md("delta.appendOnly" -> "true")))
    val all = mdSchema(schemaOf(
      field("a", "\"integer\"", nullable = false),
      field("g", "\"integer\"", metadata = """{"delta.generationExpression":"a"}"""),
      field("i", "\"long\"", metadata = """{"delta.identity.start":1}""")),
      "delta.appendOnly" -> "true", "delta.constraints.c" -> "a > 0", "delta.enableChangeDataFeed" -> "true",
      "delta.columnMapping.mode" -> "id")
    assertEquals((2, 6, Seq("invariants", "appendOnly", "checkConstraints", "generatedColumns", "changeDataFeed",
      "identityColumns", "columnMapping")), Protocol.requiredMinimumProtocol(all))
    assertEquals((3, 7, Seq("deletionVectors")), Protocol.requiredMinimumProtocol(md("delta.enableDeletionVectors" -> "true")))
    assertEquals((0, 7, Seq("domainMetadata", "rowTracking")),
      Protocol.requiredMinimumProtocol(md("delta.enableRowTracking" -> "true")))
    assertEquals((2, 7, Seq("appendOnly", "columnMapping", "icebergCompatV1")),
      Protocol.requiredMinimumProtocol(md("delta.appendOnly" -> "true", "delta.enableIcebergCompatV1" -> "true")))
  }

  // ------------------------------------------------------------------ existing tables

  @Test def checkProtocolRequirementsAssertions(): Unit = {
    def assertion(key: String, message: String): Unit = {
      val e = assertThrows(classOf[DeltalogAssertionError], () => Protocol.checkProtocolRequirements(md(key -> "1"), Protocol(1, 2)))
      assertEquals("DELTA_PROTOCOL_PROPERTY_IN_METADATA", e.errorClass)
      assertEquals(message, e.getMessage)
    }
    assertion("delta.minReaderVersion", "Should not have the protocol version (delta.minReaderVersion) as part of table properties")
    assertion("delta.minWriterVersion", "Should not have the protocol version (delta.minWriterVersion) as part of table properties")
    assertion("delta.feature.appendOnly", "Should not have table features (starts with 'delta.feature.') as part of table properties")
    assertion("delta.ignoreProtocolDefaults", "Should not have the table property delta.ignoreProtocolDefaults stored in table metadata")
    assertEquals(None, Protocol.checkProtocolRequirements(md("delta.appendOnly" -> "true"), Protocol(1, 2)))
    assertEquals(Some(p(1, 7, null, Seq("appendOnly", "changeDataFeed", "invariants"))),
      Protocol.checkProtocolRequirements(md("delta.enableChangeDataFeed" -> "true"), Protocol(1, 2)))
    assertEquals(Some(Protocol(1, 4)),
      Protocol.checkProtocolRequirements(md("delta.enableChangeDataFeed" -> "true"), Protocol(1, 3)).map(_.merge(Protocol(1, 4))))
  }

  @Test def upgradeProtocolFromMetadataForExistingTable(): Unit = {
    assertEquals(None, Protocol.upgradeProtocolFromMetadataForExistingTable(md(), Protocol(1, 2)))
    assertEquals(None, Protocol.upgradeProtocolFromMetadataForExistingTable(md("delta.enableDeletionVectors" -> "true"), dv))
    assertEquals(Some(p(3, 7, Seq("deletionVectors"), Seq("appendOnly", "invariants", "deletionVectors"))),
      Protocol.upgradeProtocolFromMetadataForExistingTable(md("delta.enableDeletionVectors" -> "true"), Protocol(1, 2)))
    assertEquals(Some(Protocol(2, 5)),
      Protocol.upgradeProtocolFromMetadataForExistingTable(md("delta.columnMapping.mode" -> "name"), Protocol(1, 4)))
    val ntz = mdSchema(schemaOf(field("t", "\"timestamp_ntz\"")))
    assertMessageContains(expectError("DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT")(
      Protocol.upgradeProtocolFromMetadataForExistingTable(ntz, Protocol(1, 2))), "timestampNtz", "delta.feature.timestampNtz")
    assertEquals(None, Protocol.upgradeProtocolFromMetadataForExistingTable(ntz,
      p(3, 7, Seq("timestampNtz"), Seq("timestampNtz"))))
  }

  // ------------------------------------------------------------------ ALTER operations

  @Test def upgradeTableProtocol(): Unit = {
    assertEquals(Protocol(1, 4), Protocol.upgradeTableProtocol(Protocol(1, 2), 1, 4))
    assertEquals(Protocol(1, 4), Protocol.upgradeTableProtocol(Protocol(1, 4), 1, 2))
    assertEquals(Protocol(1, 2), Protocol.upgradeTableProtocol(Protocol(1, 2), 1, 7))
    assertEquals(Protocol(1, 3), Protocol.upgradeTableProtocol(p(1, 7, null, Seq("appendOnly")), 1, 3))
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "rowTracking", "domainMetadata")),
      Protocol.upgradeTableProtocol(p(1, 7, null, Seq("rowTracking", "domainMetadata")), 1, 2))
    assertEquals(Protocol(1, 2), Protocol.upgradeTableProtocol(Protocol(1, 2), 3, 7))
    assertEquals(Protocol(2, 5), Protocol.upgradeTableProtocol(Protocol(1, 2), 2, 5))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol.upgradeTableProtocol(Protocol(1, 2), 4, 7))
    expectError("DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE")(Protocol.upgradeTableProtocol(Protocol(1, 2), 3, 6))
  }

  @Test def addFeatureSupport(): Unit = {
    assertEquals(p(3, 7, Seq("deletionVectors"), Seq("appendOnly", "invariants", "deletionVectors")),
      Protocol.addFeatureSupport(Protocol(1, 2), "deletionVectors"))
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "rowTracking", "domainMetadata")),
      Protocol.addFeatureSupport(Protocol(1, 2), "ROWTRACKING"))
    assertEquals(Protocol(1, 2), Protocol.addFeatureSupport(Protocol(1, 2), "appendOnly"))
    assertEquals(Protocol(1, 3), Protocol.addFeatureSupport(Protocol(1, 2), "checkConstraints"))
    assertEquals(p(2, 7, null, Seq("appendOnly", "invariants", "columnMapping", "icebergCompatV1")),
      Protocol.addFeatureSupport(Protocol(1, 2), "icebergCompatV1"))
    assertSame(dv, Protocol.addFeatureSupport(dv, "deletionVectors"))
    assertMessageContains(expectError("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG")(
      Protocol.addFeatureSupport(Protocol(1, 2), "warpDrive")), "warpDrive")
  }

  @Test def dropFeatureSupport(): Unit = {
    assertEquals(Protocol(1, 2), Protocol.dropFeatureSupport(
      p(3, 7, Seq("deletionVectors"), Seq("appendOnly", "invariants", "deletionVectors")), "deletionVectors"))
    assertEquals(Protocol(1, 2), Protocol.dropFeatureSupport(Protocol(1, 3), "checkConstraints"))
    assertEquals(Protocol(1, 4), Protocol.dropFeatureSupport(Protocol(2, 5), "columnMapping"))
    assertEquals(Protocol(1, 2), Protocol.dropFeatureSupport(
      p(1, 7, null, Seq("appendOnly", "invariants", "domainMetadata")), "DomainMetadata"))
    // a protocol listing an unknown name is not normalized
    assertEquals(p(3, 7, Seq(), Seq("futureThing")), Protocol.dropFeatureSupport(
      p(3, 7, Seq("vacuumProtocolCheck"), Seq("vacuumProtocolCheck", "futureThing")), "vacuumProtocolCheck"))
    // names listed in another case are removed too
    assertEquals(Protocol(1, 1), Protocol.dropFeatureSupport(p(1, 7, null, Seq("INCOMMITTIMESTAMP")), "inCommitTimestamp"))
  }

  @Test def dropFeatureSupportErrors(): Unit = {
    expectError("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG")(Protocol.dropFeatureSupport(Protocol(1, 2), "nope"))
    assertMessageContains(expectError("DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE")(
      Protocol.dropFeatureSupport(Protocol(1, 2), "appendOnly")), "appendOnly")
    assertMessageContains(expectError("DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT")(
      Protocol.dropFeatureSupport(Protocol(1, 2), "deletionVectors")), "deletionVectors")
    val rt = p(1, 7, null, Seq("rowTracking", "domainMetadata"))
    assertMessageContains(expectError("DELTA_FEATURE_DROP_DEPENDENT_FEATURE")(
      Protocol.dropFeatureSupport(rt, "domainMetadata")), "domainMetadata", "rowTracking")
    val cm = p(3, 7, Seq("catalogManaged", "vacuumProtocolCheck"),
      Seq("catalogManaged", "inCommitTimestamp", "vacuumProtocolCheck"))
    expectError("DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE")(Protocol.dropFeatureSupport(cm, "catalogManaged"))
    expectError("DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE")(Protocol.dropFeatureSupport(Protocol(1, 2), "catalogOwned-preview"))
    expectError("DELTA_FEATURE_DROP_DEPENDENT_FEATURE")(Protocol.dropFeatureSupport(cm, "vacuumProtocolCheck"))
  }

  @Test def assertCanUpgradeTo(): Unit = {
    Protocol.assertCanUpgradeTo(Protocol(1, 2), Protocol(1, 3))
    Protocol.assertCanUpgradeTo(Protocol(1, 2), Protocol(1, 2))
    val e = assertThrows(classOf[ProtocolDowngradeException], () => Protocol.assertCanUpgradeTo(Protocol(1, 4), Protocol(1, 2)))
    assertEquals("DELTA_INVALID_PROTOCOL_DOWNGRADE", e.errorClass)
    assertMessageContains(e, "1,4", "1,2", "changeDataFeed", "checkConstraints", "generatedColumns")
  }

  // ------------------------------------------------------------------ properties

  @Test def filterProtocolPropsFromTableProps(): Unit = {
    val props = Map("delta.minReaderVersion" -> "1", "delta.minWriterVersion" -> "2", "delta.feature.x" -> "supported",
      "delta.ignoreProtocolDefaults" -> "true", "delta.appendOnly" -> "true", "Delta.minReaderVersion" -> "1")
    assertEquals(Map("delta.appendOnly" -> "true", "Delta.minReaderVersion" -> "1"),
      Protocol.filterProtocolPropsFromTableProps(props))
    assertTrue(Protocol.isTableProtocolProperty("delta.feature.anything"))
    assertFalse(Protocol.isTableProtocolProperty("delta.features.x"))
  }

  @Test def sessionDefaultTableProperties(): Unit = {
    val sd = Map(s"${S}enableDeletionVectors" -> "true", s"${S}minReaderVersion" -> "2", s"${S}minWriterVersion" -> "5",
      s"${S}feature.rowTracking" -> "supported", s"${S}ignoreProtocolDefaults" -> "true",
      s"${S}checkpointInterval" -> "20", "spark.sql.shuffle.partitions" -> "4")
    assertEquals(Map("delta.enableDeletionVectors" -> "true", "delta.checkpointInterval" -> "20"),
      Protocol.sessionDefaultTableProperties(sd))
  }

  @Test def supportedFeaturesFromTableConfigs(): Unit = {
    assertEquals(Set("deletionVectors", "appendOnly"), names(Protocol.supportedFeaturesFromTableConfigs(Map(
      "delta.feature.deletionVectors" -> "SUPPORTED", "delta.feature.appendonly" -> "enabled", "other" -> "x"))))
    assertMessageContains(expectError("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG")(Protocol.supportedFeaturesFromTableConfigs(Map(
      "delta.feature.b" -> "supported", "delta.feature.a" -> "supported"))), "delta.feature.a, delta.feature.b")
  }

  @Test def protocolVersionsFromTableConf(): Unit = {
    assertEquals((Some(2), None), Protocol.protocolVersionsFromTableConf(Map("delta.minReaderVersion" -> "2")))
    assertEquals((Some(1), Some(7)), Protocol.protocolVersionsFromTableConf(Map("delta.minReaderVersion" -> "+1",
      "delta.minWriterVersion" -> "7 ")))
    expectError("DELTA_PROTOCOL_PROPERTY_NOT_INT")(Protocol.protocolVersionsFromTableConf(Map("delta.minReaderVersion" -> "")))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol.protocolVersionsFromTableConf(Map("delta.minReaderVersion" -> "0")))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol.protocolVersionsFromTableConf(Map("delta.minWriterVersion" -> "-3")))
  }

  // ------------------------------------------------------------------ clients

  @Test def deltalogCapabilities(): Unit = {
    val c = ClientCapabilities.deltalog
    assertEquals((3, 7), (c.maxReaderVersion, c.maxWriterVersion))
    assertTrue(c.writerFeatures.subsetOf(c.readerFeatures))
    assertTrue(c.writerFeatures.contains("typeWidening")) // ALTER COLUMN TYPE records delta.typeChanges
    assertTrue(c.writerFeatures.contains("variantType")) // unshredded variants, nullCount-only stats
    assertEquals(Set("typeWidening-preview", "variantType-preview", "variantShredding",
      "variantShredding-preview", "geospatial", "geospatial-dev", "catalogManaged", "icebergCompatV1", "icebergCompatV2",
      "collations", "collations-preview", "materializePartitionColumns"), c.readerFeatures -- c.writerFeatures)
    assertTrue(TableFeature.legacy.forall(f => c.writerFeatures.contains(f.name)))
    assertTrue(c.readerFeatures.forall(n => TableFeature.byName(n).exists(_.name == n)))
  }

  @Test def checkCanRead(): Unit = {
    Protocol.checkCanRead(Protocol(1, 2))
    Protocol.checkCanRead(Protocol(2, 5))
    Protocol.checkCanRead(p(3, 7, Seq("typeWidening", "deletionVectors"), Seq("typeWidening", "deletionVectors")))
    // writer-only unknown features do not block reading
    Protocol.checkCanRead(p(1, 7, null, Seq("futureWriterThing")))
    val e = assertThrows(classOf[UnsupportedTableFeatureException], () => Protocol.checkCanRead(
      p(3, 7, Seq("zeta", "timestampNanos"), Seq("zeta", "timestampNanos", "timestampNtz")), ClientCapabilities.deltalog, "db.t"))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_READ", e.errorClass)
    assertEquals(Seq("timestampNanos", "zeta"), e.unsupportedFeatures)
    assertEquals("db.t", e.table)
    assertMessageContains(e, "db.t", "timestampNanos, zeta")
    val noCm = ClientCapabilities(3, 7, Set("appendOnly"), Set("appendOnly"))
    expectError("DELTA_UNSUPPORTED_FEATURES_FOR_READ")(Protocol.checkCanRead(Protocol(2, 5), noCm))
    Protocol.checkCanRead(Protocol(1, 5), noCm)
    expectError("DELTA_UNSUPPORTED_FEATURES_FOR_READ")(Protocol.checkCanRead(Protocol(2, 5), ClientCapabilities(1, 7,
      Set("columnMapping"), Set())))
  }

  @Test def checkCanWrite(): Unit = {
    Protocol.checkCanWrite(Protocol(2, 6))
    Protocol.checkCanWrite(p(1, 7, null, Seq("rowTracking", "domainMetadata", "clustering")))
    Protocol.checkCanWrite(p(3, 7, Seq("typeWidening"), Seq("typeWidening")))
    val e = assertThrows(classOf[UnsupportedTableFeatureException], () => Protocol.checkCanWrite(
      p(3, 7, Seq("typeWidening-preview"), Seq("typeWidening-preview", "futureThing"))))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", e.errorClass)
    assertEquals(Seq("futureThing", "typeWidening-preview"), e.unsupportedFeatures)
    val old = ClientCapabilities(2, 4, Set("appendOnly", "invariants"), Set("appendOnly", "invariants", "checkConstraints",
      "changeDataFeed", "generatedColumns", "identityColumns"))
    expectError("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE")(Protocol.checkCanWrite(Protocol(1, 6), old))
    expectError("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE")(Protocol.checkCanWrite(Protocol(1, 5), old.copy(maxWriterVersion = 4)))
    Protocol.checkCanWrite(Protocol(1, 4), old)
  }
}
