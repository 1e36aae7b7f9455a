package io.deltalog.protocol

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.Action
import io.deltalog.exceptions.{ActionParseException, UnsupportedTableFeatureException}
import io.deltalog.protocol.ProtocolTestHelpers._

/** The Protocol case class: construction, JSON, feature arithmetic. */
class ProtocolSuite {
  private def json(s: String): Protocol = Protocol.fromJsonNode(Action.mapper.readTree(s))

  // ------------------------------------------------------------------ construction

  @Test def twoArgFactoryFillsListsOnlyWhereSupported(): Unit = {
    assertEquals(Protocol(1, 2, None, None), Protocol(1, 2))
    assertEquals(Protocol(2, 7, None, Some(Set())), Protocol(2, 7))
    assertEquals(Protocol(3, 7, Some(Set()), Some(Set())), Protocol(3, 7))
  }

  @Test def versionsOutOfRange(): Unit = {
    Seq((0, 1), (4, 7), (1, 0), (1, 8), (-1, 2)).foreach { case (r, w) =>
      expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(r, w))
      expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(r, w, None, None))
    }
  }

  @Test def readerThreeRequiresWriterSeven(): Unit = {
    (1 to 6).foreach { w =>
      assertMessageContains(expectError("DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE")(Protocol(3, w)), s"(3,$w)")
      expectError("DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE")(Protocol(3, w, Some(Set()), None))
    }
  }

  @Test def featureListsMustMatchVersions(): Unit = {
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(1, 2, Some(Set()), None))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(1, 2, None, Some(Set())))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(3, 7, None, Some(Set())))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(3, 7, Some(Set()), None))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(2, 7, None, None))
    assertMessageContains(expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(2, 7, Some(Set()), Some(Set()))),
      "readerFeatures")
  }

  @Test def allValidPairsConstruct(): Unit = {
    for (r <- 1 to 2; w <- 1 to 7) assertEquals((r, w), { val x = Protocol(r, w); (x.minReaderVersion, x.minWriterVersion) })
    assertTrue(Protocol(3, 7).supportsReaderFeatures)
    assertTrue(Protocol(2, 7).supportsWriterFeatures)
    assertFalse(Protocol(2, 7).supportsReaderFeatures)
    assertFalse(Protocol(2, 6).supportsWriterFeatures)
  }

  // ------------------------------------------------------------------ JSON

  @Test def jsonFieldOrderAndSortedLists(): Unit = {
    assertEquals("""{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}""", Protocol(1, 2).json)
    assertEquals("""{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","v2Checkpoint"],""" +
      """"writerFeatures":["appendOnly","deletionVectors","v2Checkpoint"]}""",
      Action.mapper.writeValueAsString(p(3, 7, Seq("v2Checkpoint", "deletionVectors"),
        Seq("v2Checkpoint", "appendOnly", "deletionVectors")).toJsonNode))
    assertEquals("""{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":[]}""",
      Action.mapper.writeValueAsString(Protocol(1, 7).toJsonNode))
    assertEquals("protocol", Protocol(1, 1).actionName)
  }

  @Test def unknownFieldsRoundTripButDoNotAffectEquality(): Unit = {
    val body = """{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["futureFeature"],"zeta":{"a":1},"alpha":[true]}"""
    val parsed = json(body)
    assertEquals(body, Action.mapper.writeValueAsString(parsed.toJsonNode))
    assertEquals(p(1, 7, null, Seq("futureFeature")), parsed)
    assertEquals(p(1, 7, null, Seq("futureFeature")).hashCode, parsed.hashCode)
    assertEquals(2, parsed.extra.unknown.size)
    assertTrue(parsed.copy(minReaderVersion = 2).extra.isEmpty)
    assertEquals(parsed, Protocol.fromJson(s"""{"protocol":$body}"""))
  }

  @Test def fromJsonAcceptsNullListsWhenAbsentIsExpected(): Unit = {
    assertEquals(Protocol(1, 2), json("""{"minReaderVersion":1,"minWriterVersion":2,"readerFeatures":null}"""))
    assertEquals("""{"minReaderVersion":1,"minWriterVersion":2}""",
      Action.mapper.writeValueAsString(json("""{"minReaderVersion":1,"minWriterVersion":2,"writerFeatures":null}""").toJsonNode))
  }

  private def parseError(body: String, field: String): Unit = {
    val e = assertThrows(classOf[ActionParseException], () => json(body))
    assertEquals(s"protocol.$field", e.field, e.getMessage)
    assertEquals("DELTA_MALFORMED_LOG_LINE", e.errorClass)
  }

  @Test def fromJsonErrorsNameTheField(): Unit = {
    parseError("""{"minWriterVersion":2}""", "minReaderVersion")
    parseError("""{"minReaderVersion":1}""", "minWriterVersion")
    parseError("""{"minReaderVersion":null,"minWriterVersion":2}""", "minReaderVersion")
    parseError("""{"minReaderVersion":"1","minWriterVersion":2}""", "minReaderVersion")
    parseError("""{"minReaderVersion":1.5,"minWriterVersion":2}""", "minReaderVersion")
    parseError("""{"minReaderVersion":true,"minWriterVersion":2}""", "minReaderVersion")
    parseError("""{"minReaderVersion":1,"minWriterVersion":99999999999}""", "minWriterVersion")
    parseError("""{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":"x","writerFeatures":[]}""", "readerFeatures")
    parseError("""{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[1]}""", "writerFeatures")
    // version / list inconsistencies
    parseError("""{"minReaderVersion":3,"minWriterVersion":7,"writerFeatures":[]}""", "readerFeatures")
    parseError("""{"minReaderVersion":1,"minWriterVersion":7}""", "writerFeatures")
    parseError("""{"minReaderVersion":1,"minWriterVersion":2,"writerFeatures":[]}""", "writerFeatures")
    parseError("""{"minReaderVersion":1,"minWriterVersion":2,"readerFeatures":[]}""", "readerFeatures")
    // version rules
    parseError("""{"minReaderVersion":0,"minWriterVersion":7,"writerFeatures":[]}""", "minReaderVersion")
    parseError("""{"minReaderVersion":1,"minWriterVersion":0}""", "minWriterVersion")
    parseError("""{"minReaderVersion":-3,"minWriterVersion":2}""", "minReaderVersion")
    parseError("""{"minReaderVersion":3,"minWriterVersion":5,"readerFeatures":[]}""", "minReaderVersion")
    val e = assertThrows(classOf[ActionParseException], () => Protocol.fromJsonNode(Action.mapper.readTree("[1]")))
    assertEquals("protocol", e.field)
  }

  @Test def newerVersionsParseAndTheChecksNameThem(): Unit = {
    // A newer client's protocol is a valid action: it parses (unknown fields kept) and the
    // read / write checks say what this client lacks, instead of calling the log line damaged.
    val r5 = json("""{"minReaderVersion":5,"minWriterVersion":7,"readerFeatures":["x"],"writerFeatures":["x"],"y":1}""")
    assertEquals((5, 7), (r5.minReaderVersion, r5.minWriterVersion))
    assertEquals("""{"minReaderVersion":5,"minWriterVersion":7,"readerFeatures":["x"],"writerFeatures":["x"],"y":1}""",
      r5.toJsonNode.toString)
    val read = assertThrows(classOf[UnsupportedTableFeatureException],
      () => Protocol.checkCanRead(r5, ClientCapabilities.deltalog, "/t"))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_READ", read.errorClass)
    assertTrue(read.getMessage.contains("Table /t (protocol 5,7,[x],[x])"), read.getMessage)
    // Reader 4 with no unknown feature: the version alone blocks reads.
    val r4 = json("""{"minReaderVersion":4,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}""")
    val v = assertThrows(classOf[UnsupportedTableFeatureException],
      () => Protocol.checkCanRead(r4, ClientCapabilities.deltalog, "/t"))
    assertTrue(v.getMessage.contains("needs protocol versions (4,7) above what this client supports (3,7)"), v.getMessage)
    // Writer 8: readable (readers check reader versions only), not writable.
    val w8 = json("""{"minReaderVersion":1,"minWriterVersion":8,"writerFeatures":[]}""")
    Protocol.checkCanRead(w8, ClientCapabilities.deltalog, "/t")
    val w = assertThrows(classOf[UnsupportedTableFeatureException],
      () => Protocol.checkCanWrite(w8, ClientCapabilities.deltalog, "/t"))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", w.errorClass)
    // What deltalog creates stays in range.
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol(4, 7))
    expectError("DELTA_INVALID_PROTOCOL_VERSION")(Protocol.upgradeTableProtocol(Protocol(1, 2), 1, 8))
  }

  @Test def simpleString(): Unit = {
    assertEquals("1,2", Protocol(1, 2).simpleString)
    assertEquals("2,7,None,[appendOnly,columnMapping]", p(2, 7, null, Seq("columnMapping", "appendOnly")).simpleString)
    assertEquals("3,7,[deletionVectors],[deletionVectors]",
      p(3, 7, Seq("deletionVectors"), Seq("deletionVectors")).simpleString)
    assertEquals("Protocol(1,2)", Protocol(1, 2).toString)
  }

  // ------------------------------------------------------------------ supported features

  @Test def implicitlySupportedFeaturesOfLegacyVersions(): Unit = {
    def impl(r: Int, w: Int) = names(Protocol(r, w).implicitlySupportedFeatures)
    val two = Set("appendOnly", "invariants")
    val three = two + "checkConstraints"
    val four = three ++ Set("changeDataFeed", "generatedColumns")
    assertEquals(Set.empty, impl(1, 1))
    assertEquals(two, impl(1, 2))
    assertEquals(three, impl(1, 3))
    assertEquals(four, impl(1, 4))
    assertEquals(four, impl(1, 5))
    assertEquals(four + "columnMapping", impl(2, 5))
    assertEquals(four + "identityColumns", impl(1, 6))
    assertEquals(four ++ Set("identityColumns", "columnMapping"), impl(2, 6))
    assertEquals(three, impl(2, 3))
    assertEquals(Set.empty, impl(1, 7))
    assertEquals(Set.empty, impl(2, 7))
    assertEquals(Set.empty, impl(3, 7))
  }

  @Test def implicitlyAndExplicitlySupportedFeatures(): Unit = {
    assertEquals(Set("appendOnly", "invariants"), names(Protocol(1, 2).implicitlyAndExplicitlySupportedFeatures))
    val tf = p(3, 7, Seq("deletionVectors"), Seq("deletionVectors", "appendOnly", "futureThing"))
    assertEquals(Set("deletionVectors", "appendOnly"), names(tf.implicitlyAndExplicitlySupportedFeatures))
    assertEquals(Set("futureThing"), tf.unknownFeatureNames)
    // names resolve case-insensitively
    assertEquals(Set("rowTracking"), names(p(1, 7, null, Seq("ROWTRACKING")).implicitlyAndExplicitlySupportedFeatures))
  }

  @Test def isFeatureSupported(): Unit = {
    assertTrue(Protocol(1, 2).isFeatureSupported(TableFeature.AppendOnly))
    assertFalse(Protocol(1, 2).isFeatureSupported(TableFeature.CheckConstraints))
    assertFalse(Protocol(1, 5).isFeatureSupported(TableFeature.ColumnMapping))
    assertTrue(Protocol(2, 5).isFeatureSupported(TableFeature.ColumnMapping))
    assertFalse(Protocol(1, 7).isFeatureSupported(TableFeature.AppendOnly))
    assertTrue(p(1, 7, null, Seq("appendOnly")).isFeatureSupported(TableFeature.AppendOnly))
    assertTrue(p(1, 7, null, Seq("rowtracking")).isFeatureSupported(TableFeature.RowTracking))
    assertFalse(Protocol(3, 7).isFeatureSupported(TableFeature.DeletionVectors))
  }

  // ------------------------------------------------------------------ withFeature

  @Test def withFeatureOnTableFeatureProtocols(): Unit = {
    assertEquals(p(3, 7, Seq("deletionVectors"), Seq("deletionVectors")), Protocol(3, 7).withFeature(TableFeature.DeletionVectors))
    assertEquals(p(1, 7, null, Seq("rowTracking", "domainMetadata")), Protocol(1, 7).withFeature("rowTracking"))
    assertEquals(p(1, 7, null, Seq("appendOnly")), Protocol(1, 7).withFeature(TableFeature.AppendOnly))
    // legacy reader-writer feature: reader list only at reader 3
    assertEquals(p(3, 7, Seq("columnMapping"), Seq("columnMapping")), Protocol(3, 7).withFeature(TableFeature.ColumnMapping))
    assertEquals(p(2, 7, null, Seq("columnMapping")), Protocol(2, 7).withFeature(TableFeature.ColumnMapping))
    assertEquals(p(2, 7, null, Seq("icebergCompatV1", "columnMapping")), Protocol(2, 7).withFeature(TableFeature.IcebergCompatV1))
    assertEquals(p(3, 7, Seq("variantType", "variantShredding"), Seq("variantType", "variantShredding")),
      Protocol(3, 7).withFeature("VariantShredding"))
  }

  @Test def withFeatureOnLegacyProtocolsIsANoOpWhenImplied(): Unit = {
    assertEquals(Protocol(1, 2), Protocol(1, 2).withFeature(TableFeature.AppendOnly))
    assertEquals(Protocol(2, 5), Protocol(2, 5).withFeature(TableFeature.ColumnMapping))
    assertEquals(Protocol(1, 6), Protocol(1, 6).withFeature(TableFeature.ChangeDataFeed))
  }

  @Test def withFeatureErrors(): Unit = {
    assertMessageContains(expectError("DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION")(
      Protocol(1, 2).withFeature(TableFeature.CheckConstraints)), "checkConstraints", "3", "2")
    assertMessageContains(expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(
      Protocol(1, 5).withFeature(TableFeature.ColumnMapping)), "columnMapping")
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(Protocol(1, 7).withFeature(TableFeature.ColumnMapping))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION")(Protocol(2, 4).withFeature(TableFeature.ColumnMapping))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(Protocol(1, 7).withFeature(TableFeature.DeletionVectors))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(Protocol(2, 7).withFeature(TableFeature.DeletionVectors))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION")(Protocol(1, 6).withFeature(TableFeature.RowTracking))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(Protocol(2, 6).withFeature(TableFeature.DeletionVectors))
    // the dependency fails first: columnMapping needs reader 2
    assertMessageContains(expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(
      Protocol(1, 7).withFeature(TableFeature.IcebergCompatV1)), "columnMapping")
    expectError("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG")(Protocol(3, 7).withFeature("noSuchFeature"))
  }

  @Test def withReaderAndWriterFeatureNames(): Unit = {
    assertEquals(p(3, 7, Seq("x"), Seq()), Protocol(3, 7).withReaderFeatures(Seq("x")))
    assertEquals(p(1, 7, null, Seq("x", "y")), Protocol(1, 7).withWriterFeatures(Seq("x", "y")))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION")(Protocol(2, 7).withReaderFeatures(Seq("x")))
    expectError("DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION")(Protocol(2, 6).withWriterFeatures(Seq("x")))
  }

  // ------------------------------------------------------------------ normalization

  @Test def normalized(): Unit = {
    assertEquals(Protocol(1, 3), p(1, 7, null, Seq("appendOnly", "invariants", "checkConstraints")).normalized)
    assertEquals(Protocol(1, 2), p(3, 7, Seq(), Seq("appendOnly", "invariants")).normalized)
    assertEquals(p(1, 7, null, Seq("rowTracking", "domainMetadata")),
      p(3, 7, Seq(), Seq("rowTracking", "domainMetadata")).normalized)
    assertEquals(Protocol(1, 1), Protocol(3, 7).normalized)
    assertEquals(Protocol(2, 5), p(3, 7, Seq("columnMapping"), Seq("columnMapping", "appendOnly", "invariants",
      "checkConstraints", "changeDataFeed", "generatedColumns")).normalized)
    // a partial legacy set stays a table-features protocol
    assertEquals(p(1, 7, null, Seq("appendOnly")), p(1, 7, null, Seq("appendOnly")).normalized)
    assertEquals(p(2, 7, null, Seq("columnMapping")), p(3, 7, Seq("columnMapping"), Seq("columnMapping")).normalized)
    assertEquals(p(3, 7, Seq("deletionVectors"), Seq("deletionVectors", "appendOnly")),
      p(3, 7, Seq("deletionVectors"), Seq("deletionVectors", "appendOnly")).normalized)
    // legacy protocols and protocols with unknown names are left alone
    assertEquals(Protocol(2, 3), Protocol(2, 3).normalized)
    val unknown = p(3, 7, Seq(), Seq("appendOnly", "invariants", "futureThing"))
    assertSame(unknown, unknown.normalized)
  }

  @Test def denormalized(): Unit = {
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants")), Protocol(1, 2).denormalized)
    assertEquals(p(2, 7, null, Seq("appendOnly", "invariants", "checkConstraints", "changeDataFeed",
      "generatedColumns", "columnMapping")), Protocol(2, 5).denormalized)
    assertEquals(Protocol(1, 7), Protocol(1, 1).denormalized)
    val tf = p(1, 7, null, Seq("appendOnly"))
    assertSame(tf, tf.denormalized)
  }

  @Test def denormalizedNormalizedRepairsInvalidLegacyPairs(): Unit = {
    assertEquals(Protocol(1, 3), Protocol(2, 3).denormalizedNormalized)
    assertEquals(Protocol(1, 4), Protocol(1, 5).denormalizedNormalized)
    assertEquals(Protocol(1, 4), Protocol(2, 4).denormalizedNormalized)
    assertEquals(Protocol(2, 5), Protocol(2, 5).denormalizedNormalized)
    assertEquals(Protocol(2, 6), Protocol(2, 6).denormalizedNormalized)
    assertEquals(Protocol(1, 1), Protocol(2, 1).denormalizedNormalized)
  }

  // ------------------------------------------------------------------ merge / canUpgradeTo

  @Test def merge(): Unit = {
    assertEquals(Protocol(1, 3), Protocol(1, 2).merge(Protocol(1, 3)))
    assertEquals(Protocol(2, 5), Protocol(2, 5).merge(Protocol(1, 2), Protocol(1, 4)))
    assertEquals(p(3, 7, Seq("deletionVectors"), Seq("deletionVectors", "appendOnly", "invariants")),
      Protocol(1, 2).merge(p(3, 7, Seq("deletionVectors"), Seq("deletionVectors"))))
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "checkConstraints", "rowTracking", "domainMetadata")),
      Protocol(1, 3).merge(p(1, 7, null, Seq("rowTracking", "domainMetadata"))))
    // unknown names are kept
    assertEquals(p(1, 7, null, Seq("appendOnly", "invariants", "futureThing")),
      Protocol(1, 2).merge(p(1, 7, null, Seq("futureThing"))))
    assertEquals(Protocol(1, 3), Protocol(2, 3).merge())
  }

  @Test def canUpgradeTo(): Unit = {
    assertTrue(Protocol(1, 2).canUpgradeTo(Protocol(1, 3)))
    assertFalse(Protocol(1, 3).canUpgradeTo(Protocol(1, 2)))
    assertTrue(Protocol(1, 2).canUpgradeTo(p(1, 7, null, Seq("appendOnly", "invariants"))))
    assertFalse(Protocol(1, 2).canUpgradeTo(p(1, 7, null, Seq("appendOnly"))))
    assertTrue(Protocol(2, 3).canUpgradeTo(Protocol(1, 3)))
    assertFalse(p(1, 7, null, Seq("futureThing")).canUpgradeTo(Protocol(1, 7)))
    assertTrue(p(1, 7, null, Seq("futureThing")).canUpgradeTo(p(3, 7, Seq(), Seq("futureThing"))))
  }
}
