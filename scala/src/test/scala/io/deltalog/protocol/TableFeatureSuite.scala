package io.deltalog.protocol

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.protocol.ProtocolTestHelpers._

class TableFeatureSuite {
  private val probe = Protocol(3, 7)
  private def enabled(f: TableFeature, m: MetadataLike, protocol: Protocol = probe): Boolean =
    f.metadataRequiresFeatureToBeEnabled(m, protocol)

  @Test def registryHasEveryFeatureOfTheSpec(): Unit = {
    val expected = Seq("appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
      "columnMapping", "identityColumns", "deletionVectors", "rowTracking", "domainMetadata", "timestampNtz",
      "v2Checkpoint", "icebergCompatV1", "icebergCompatV2", "icebergCompatV3", "icebergWriterCompatV1",
      "icebergWriterCompatV3", "clustering", "vacuumProtocolCheck", "typeWidening", "typeWidening-preview",
      "variantType", "variantType-preview", "variantShredding", "variantShredding-preview", "inCommitTimestamp",
      "allowColumnDefaults", "catalogManaged", "catalogOwned-preview", "coordinatedCommits-preview",
      "checkpointProtection", "materializePartitionColumns", "collations", "collations-preview", "geospatial",
      "geospatial-dev", "redirectReaderWriter-preview", "redirectWriterOnly-preview", "timestampNanos",
      "adaptiveMetadata-preview")
    assertEquals(expected, TableFeature.all.map(_.name))
    assertEquals(Seq("appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
      "columnMapping", "identityColumns"), TableFeature.legacy.map(_.name))
  }

  @Test def lookupIsCaseInsensitive(): Unit = {
    assertSame(TableFeature.DeletionVectors, TableFeature.byName("DELETIONVECTORS").get)
    assertSame(TableFeature.TypeWideningPreview, TableFeature.byName("typewidening-PREVIEW").get)
    assertEquals(None, TableFeature.byName("noSuchFeature"))
    assertEquals(None, TableFeature.byName(null))
    assertThrows(classOf[NoSuchElementException], () => TableFeature.get("nope"))
  }

  @Test def versionsFollowTheKindOfFeature(): Unit = {
    TableFeature.all.foreach { f =>
      val expected =
        if (f.name == "columnMapping") (2, 5)
        else if (f.isLegacyFeature) (0, f.minWriterVersion)
        else if (f.isReaderWriterFeature) (3, 7)
        else (0, 7)
      assertEquals(expected, (f.minReaderVersion, f.minWriterVersion), f.name)
    }
    assertEquals(Seq(2, 2, 3, 4, 4, 5, 6), TableFeature.legacy.map(_.minWriterVersion))
  }

  @Test def readerWriterFeatures(): Unit = {
    val rw = TableFeature.all.filter(_.isReaderWriterFeature).map(_.name).toSet
    assertEquals(Set("columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck",
      "typeWidening", "typeWidening-preview", "variantType", "variantType-preview", "variantShredding",
      "variantShredding-preview", "catalogManaged", "catalogOwned-preview", "geospatial", "geospatial-dev",
      "redirectReaderWriter-preview", "timestampNanos", "adaptiveMetadata-preview"), rw)
    assertTrue(TableFeature.AppendOnly.isWriterOnly)
    assertFalse(TableFeature.ColumnMapping.isWriterOnly)
  }

  @Test def requiredFeatures(): Unit = {
    def req(n: String) = TableFeature.get(n).requiredFeatureNames.toSet
    assertEquals(Set("domainMetadata"), req("rowTracking"))
    assertEquals(Set("columnMapping"), req("icebergCompatV1"))
    assertEquals(Set("columnMapping"), req("icebergCompatV2"))
    assertEquals(Set("columnMapping", "rowTracking"), req("icebergCompatV3"))
    assertEquals(Set("icebergCompatV2"), req("icebergWriterCompatV1"))
    assertEquals(Set("icebergCompatV3"), req("icebergWriterCompatV3"))
    assertEquals(Set("domainMetadata"), req("clustering"))
    assertEquals(Set("variantType"), req("variantShredding"))
    assertEquals(Set("inCommitTimestamp", "vacuumProtocolCheck"), req("catalogManaged"))
    assertEquals(Set("inCommitTimestamp", "vacuumProtocolCheck"), req("catalogOwned-preview"))
    assertEquals(Set("inCommitTimestamp", "vacuumProtocolCheck"), req("coordinatedCommits-preview"))
    assertEquals(Set("domainMetadata"), req("collations"))
    assertEquals(Set("domainMetadata"), req("collations-preview"))
    assertEquals(Set("timestampNtz"), req("timestampNanos"))
    assertEquals(Set("catalogManaged", "rowTracking", "domainMetadata", "deletionVectors", "columnMapping"),
      req("adaptiveMetadata-preview"))
    assertEquals(Set.empty, req("deletionVectors"))
    assertEquals(Set(TableFeature.DomainMetadata), TableFeature.RowTracking.requiredFeatures)
  }

  @Test def dependencyClosureIsTransitive(): Unit = {
    assertEquals(Set("icebergWriterCompatV3", "icebergCompatV3", "columnMapping", "rowTracking", "domainMetadata"),
      names(TableFeature.dependencyClosure(Seq(TableFeature.IcebergWriterCompatV3))))
    assertEquals(Set.empty, TableFeature.dependencyClosure(Nil))
    assertEquals(Set("icebergCompatV3", "adaptiveMetadata-preview"),
      names(TableFeature.dependentsOf(TableFeature.RowTracking)))
    assertEquals(Set.empty, TableFeature.dependentsOf(TableFeature.AppendOnly))
  }

  @Test def removableAndHistoryProtection(): Unit = {
    val removable = TableFeature.all.filter(_.isRemovable).map(_.name).toSet
    assertEquals(Set("checkConstraints", "columnMapping", "deletionVectors", "rowTracking", "domainMetadata",
      "v2Checkpoint", "vacuumProtocolCheck", "typeWidening", "typeWidening-preview", "inCommitTimestamp",
      "coordinatedCommits-preview", "checkpointProtection", "materializePartitionColumns", "geospatial",
      "geospatial-dev", "redirectReaderWriter-preview", "redirectWriterOnly-preview"), removable)
    val history = TableFeature.all.filter(_.requiresHistoryProtection).map(_.name).toSet
    assertEquals(Set("columnMapping", "deletionVectors", "v2Checkpoint", "vacuumProtocolCheck", "typeWidening",
      "typeWidening-preview", "geospatial", "geospatial-dev"), history)
  }

  @Test def autoUpdateOfExistingTables(): Unit = {
    val auto = TableFeature.all.filter(_.automaticallyUpdateProtocolOfExistingTables).map(_.name).toSet
    assertEquals(Set("appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
      "columnMapping", "identityColumns", "deletionVectors", "rowTracking", "v2Checkpoint", "icebergCompatV1",
      "icebergCompatV2", "icebergCompatV3", "icebergWriterCompatV1", "icebergWriterCompatV3", "typeWidening",
      "variantType", "variantShredding", "inCommitTimestamp", "coordinatedCommits-preview",
      "materializePartitionColumns", "collations", "geospatial"), auto)
    assertFalse(TableFeature.TimestampNtz.automaticallyUpdateProtocolOfExistingTables)
    assertTrue(TableFeature.TimestampNtz.isAutoEnabledByMetadata)
    assertFalse(TableFeature.DomainMetadata.isAutoEnabledByMetadata)
  }

  @Test def booleanPropertyPredicates(): Unit = {
    val props = Seq(
      TableFeature.AppendOnly -> "delta.appendOnly",
      TableFeature.ChangeDataFeed -> "delta.enableChangeDataFeed",
      TableFeature.DeletionVectors -> "delta.enableDeletionVectors",
      TableFeature.RowTracking -> "delta.enableRowTracking",
      TableFeature.IcebergCompatV1 -> "delta.enableIcebergCompatV1",
      TableFeature.IcebergCompatV2 -> "delta.enableIcebergCompatV2",
      TableFeature.IcebergCompatV3 -> "delta.enableIcebergCompatV3",
      TableFeature.IcebergWriterCompatV1 -> "delta.enableIcebergWriterCompatV1",
      TableFeature.IcebergWriterCompatV3 -> "delta.enableIcebergWriterCompatV3",
      TableFeature.TypeWidening -> "delta.enableTypeWidening",
      TableFeature.VariantShredding -> "delta.enableVariantShredding",
      TableFeature.InCommitTimestamp -> "delta.enableInCommitTimestamps",
      TableFeature.MaterializePartitionColumns -> "delta.enableMaterializePartitionColumnsFeature")
    props.foreach { case (f, key) =>
      assertTrue(enabled(f, md(key -> "true")), key)
      assertTrue(enabled(f, md(key -> "TRUE")), key)
      assertTrue(enabled(f, md(key -> " True ")), key)
      assertFalse(enabled(f, md(key -> "false")), key)
      assertFalse(enabled(f, md(key -> "FaLsE")), key)
      assertFalse(enabled(f, md()), key)
      // keys are case-sensitive
      assertFalse(enabled(f, md(key.toUpperCase -> "true")), key)
      val e = expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(enabled(f, md(key -> "yes")))
      assertMessageContains(e, key, "yes")
    }
  }

  @Test def enumPropertyPredicates(): Unit = {
    assertTrue(enabled(TableFeature.ColumnMapping, md("delta.columnMapping.mode" -> "name")))
    assertTrue(enabled(TableFeature.ColumnMapping, md("delta.columnMapping.mode" -> "ID")))
    assertFalse(enabled(TableFeature.ColumnMapping, md("delta.columnMapping.mode" -> "None")))
    assertFalse(enabled(TableFeature.ColumnMapping, md()))
    assertMessageContains(expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(
      enabled(TableFeature.ColumnMapping, md("delta.columnMapping.mode" -> "physical"))),
      "delta.columnMapping.mode", "physical")
    assertTrue(enabled(TableFeature.V2Checkpoint, md("delta.checkpointPolicy" -> "V2")))
    assertFalse(enabled(TableFeature.V2Checkpoint, md("delta.checkpointPolicy" -> "classic")))
    assertFalse(enabled(TableFeature.V2Checkpoint, md()))
    expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(
      enabled(TableFeature.V2Checkpoint, md("delta.checkpointPolicy" -> "v3")))
  }

  @Test def otherConfigurationPredicates(): Unit = {
    assertTrue(enabled(TableFeature.CheckConstraints, md("delta.constraints.positive" -> "x > 0")))
    assertTrue(enabled(TableFeature.CheckConstraints, md("Delta.Constraints.positive" -> "x > 0")))
    assertFalse(enabled(TableFeature.CheckConstraints, md("delta.constraintsX" -> "x")))
    val cc = "delta.coordinatedCommits.commitCoordinator-preview"
    assertTrue(enabled(TableFeature.CoordinatedCommitsPreview, md(cc -> "dynamodb")))
    assertFalse(enabled(TableFeature.CoordinatedCommitsPreview, md(cc -> "  ")))
    assertFalse(enabled(TableFeature.CoordinatedCommitsPreview, md()))
  }

  @Test def featuresWithoutPredicateAreNeverAutoEnabled(): Unit = {
    val everything = md(TableFeature.all.map(f => s"delta.feature.${f.name}" -> "supported"): _*)
    Seq(TableFeature.DomainMetadata, TableFeature.Clustering, TableFeature.VacuumProtocolCheck,
      TableFeature.AllowColumnDefaults, TableFeature.CatalogManaged, TableFeature.CheckpointProtection,
      TableFeature.TimestampNanos, TableFeature.CollationsPreview).foreach(f => assertFalse(enabled(f, everything), f.name))
  }

  @Test def previewSupportSuppressesTheStableFeature(): Unit = {
    val tw = md("delta.enableTypeWidening" -> "true")
    assertTrue(enabled(TableFeature.TypeWidening, tw))
    assertFalse(enabled(TableFeature.TypeWidening, tw, p(3, 7, Seq("typeWidening-preview"), Seq("typeWidening-preview"))))
    val vs = md("delta.enableVariantShredding" -> "true")
    assertTrue(enabled(TableFeature.VariantShredding, vs))
    assertFalse(enabled(TableFeature.VariantShredding, vs,
      p(3, 7, Seq("variantShredding-preview"), Seq("variantShredding-preview"))))
    val variant = mdSchema(schemaOf(field("v", "\"variant\"")))
    assertTrue(enabled(TableFeature.VariantType, variant))
    assertFalse(enabled(TableFeature.VariantType, variant, p(3, 7, Seq("variantType-preview"), Seq("variantType-preview"))))
    val geo = mdSchema(schemaOf(field("g", "\"geometry(OGC:CRS84)\"")))
    assertTrue(enabled(TableFeature.Geospatial, geo))
    assertTrue(enabled(TableFeature.Geospatial, mdSchema(schemaOf(field("g", "\"geography\"")))))
    assertFalse(enabled(TableFeature.Geospatial, geo, p(3, 7, Seq("geospatial-dev"), Seq("geospatial-dev"))))
    // the property is validated even when the preview feature is supported
    expectError("DELTA_INVALID_TABLE_PROPERTY_VALUE")(enabled(TableFeature.TypeWidening,
      md("delta.enableTypeWidening" -> "maybe"), p(3, 7, Seq("typeWidening-preview"), Seq("typeWidening-preview"))))
  }

  @Test def invariantsPredicate(): Unit = {
    assertTrue(enabled(TableFeature.Invariants, mdSchema(schemaOf(field("a", "\"integer\"", nullable = false)))))
    assertTrue(enabled(TableFeature.Invariants, mdSchema(schemaOf(
      field("a", "\"integer\"", metadata = """{"delta.invariants":"{\"expression\":{\"expression\":\"a > 0\"}}"}""")))))
    assertFalse(enabled(TableFeature.Invariants, mdSchema(schemaOf(field("a", "\"integer\"")))))
    // recursion into structs
    val nested = schemaOf(field("s", schemaOf(field("x", "\"long\"", nullable = false))))
    assertTrue(enabled(TableFeature.Invariants, mdSchema(nested)))
    // but not into arrays or maps
    val inArray = schemaOf(field("a",
      s"""{"type":"array","elementType":${schemaOf(field("x", "\"long\"", nullable = false))},"containsNull":true}"""))
    assertFalse(enabled(TableFeature.Invariants, mdSchema(inArray)))
    val inMap = schemaOf(field("m",
      s"""{"type":"map","keyType":"string","valueType":${schemaOf(field("x", "\"long\"", nullable = false))},"valueContainsNull":true}"""))
    assertFalse(enabled(TableFeature.Invariants, mdSchema(inMap)))
  }

  @Test def topLevelColumnPredicates(): Unit = {
    val gen = field("g", "\"integer\"", metadata = """{"delta.generationExpression":"a + 1"}""")
    assertTrue(enabled(TableFeature.GeneratedColumns, mdSchema(schemaOf(gen))))
    assertFalse(enabled(TableFeature.GeneratedColumns, mdSchema(schemaOf(field("s", schemaOf(gen))))))
    val id = field("id", "\"long\"", metadata = """{"delta.identity.start":1,"delta.identity.step":1}""")
    assertTrue(enabled(TableFeature.IdentityColumns, mdSchema(schemaOf(id))))
    assertFalse(enabled(TableFeature.IdentityColumns, mdSchema(schemaOf(field("s", schemaOf(id))))))
    assertFalse(enabled(TableFeature.IdentityColumns,
      mdSchema(schemaOf(field("id", "\"long\"", metadata = """{"delta.identity.step":1}""")))))
  }

  @Test def typePredicatesLookEverywhere(): Unit = {
    val ntz = "\"timestamp_ntz\""
    assertTrue(enabled(TableFeature.TimestampNtz, mdSchema(schemaOf(field("t", ntz)))))
    assertTrue(enabled(TableFeature.TimestampNtz, mdSchema(schemaOf(field("t", "\"TIMESTAMP_NTZ\"")))))
    assertTrue(enabled(TableFeature.TimestampNtz, mdSchema(schemaOf(field("a",
      s"""{"type":"array","elementType":$ntz,"containsNull":true}""")))))
    assertTrue(enabled(TableFeature.TimestampNtz, mdSchema(schemaOf(field("m",
      s"""{"type":"map","keyType":$ntz,"valueType":"string","valueContainsNull":true}""")))))
    assertTrue(enabled(TableFeature.TimestampNtz, mdSchema(schemaOf(field("m",
      s"""{"type":"map","keyType":"string","valueType":{"type":"array","elementType":${schemaOf(field("x", ntz))},"containsNull":true},"valueContainsNull":true}""")))))
    assertFalse(enabled(TableFeature.TimestampNtz, mdSchema(schemaOf(field("t", "\"timestamp\"")))))
    assertFalse(enabled(TableFeature.VariantType, mdSchema(schemaOf(field("t", "\"string\"")))))
  }

  @Test def collationsPredicateLooksAtEveryField(): Unit = {
    val coll = field("c", "\"string\"", metadata = """{"__COLLATIONS":{"c":"ICU.en"}}""")
    assertTrue(enabled(TableFeature.Collations, mdSchema(schemaOf(coll))))
    assertTrue(enabled(TableFeature.Collations, mdSchema(schemaOf(field("a",
      s"""{"type":"array","elementType":${schemaOf(coll)},"containsNull":true}""")))))
    assertFalse(enabled(TableFeature.Collations, mdSchema(schemaOf(field("c", "\"string\"")))))
    // the older name is explicit only
    assertFalse(enabled(TableFeature.CollationsPreview, mdSchema(schemaOf(coll))))
  }

  @Test def emptyAndMalformedSchemas(): Unit = {
    assertFalse(enabled(TableFeature.Invariants, TableMetadata(Map.empty, "")))
    assertFalse(enabled(TableFeature.Invariants, TableMetadata(Map.empty, "   ")))
    assertFalse(enabled(TableFeature.Invariants, TableMetadata(Map.empty, null)))
    assertFalse(enabled(TableFeature.TimestampNtz, TableMetadata(Map.empty, """{"type":"struct","fields":[]}""")))
    Seq("{not json", "[1,2]", "null", "42", """{"type":"struct","fields":3}""", """{"type":"struct"} x""")
      .foreach { s =>
        expectError("DELTA_INVALID_SCHEMA")(enabled(TableFeature.Invariants, TableMetadata(Map.empty, s)))
        expectError("DELTA_INVALID_SCHEMA")(enabled(TableFeature.VariantType, TableMetadata(Map.empty, s)))
      }
    // configuration predicates do not parse the schema
    assertFalse(enabled(TableFeature.AppendOnly, TableMetadata(Map.empty, "{not json")))
  }
}
