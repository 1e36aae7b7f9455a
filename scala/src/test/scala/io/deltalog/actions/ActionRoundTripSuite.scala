package io.deltalog.actions

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.ActionTestSupport._

class ActionRoundTripSuite {
  private val dv =
    """{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6}"""

  @Test def addFullRoundTrip(): Unit = {
    val in = s"""{"add":{"path":"a=1/part-0.parquet","partitionValues":{"a":"1","b":null},"size":100,""" +
      s""""modificationTime":1700000000000,"dataChange":true,"stats":"{\\"numRecords\\":3}",""" +
      s""""tags":{"INSERTION_TIME":"1"},"deletionVector":$dv,"baseRowId":5,"defaultRowCommitVersion":2,""" +
      """"clusteringProvider":"liquid"}}"""
    val a = assertRoundTrip(in).asInstanceOf[AddFile]
    assertEquals("a=1/part-0.parquet", a.path)
    assertEquals(Some("1"), a.partitionValues.get("a"))
    assertTrue(a.partitionValues.contains("b"))
    assertNull(a.partitionValues("b"))
    assertEquals(100L, a.size)
    assertEquals(Some("""{"numRecords":3}"""), a.stats)
    assertEquals(Some(Map("INSERTION_TIME" -> "1")), a.tags)
    assertEquals(Some(4), a.deletionVector.get.offset)
    assertEquals(Some(5L), a.baseRowId)
    assertEquals(Some(2L), a.defaultRowCommitVersion)
    assertEquals(Some("liquid"), a.clusteringProvider)
    assertEquals(Some("uab^-aqEH.-t@S}K{vb[*k^@4"), a.deletionVectorUniqueId)
  }

  @Test def addMinimalEmitsNoAbsentOptionals(): Unit = {
    val in = """{"add":{"path":"f.parquet","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false}}"""
    assertRoundTrip(in)
    assertEquals(in, line(parse(in)))
  }

  @Test def removeRoundTrip(): Unit = {
    assertRoundTrip("""{"remove":{"path":"f.parquet","deletionTimestamp":9,"dataChange":true,""" +
      s""""extendedFileMetadata":true,"partitionValues":{"p":null},"size":3,"stats":"{}","tags":{"k":"v"},""" +
      s""""deletionVector":$dv,"baseRowId":1,"defaultRowCommitVersion":1}}""")
    val r = assertRoundTrip("""{"remove":{"path":"g.parquet","dataChange":false}}""").asInstanceOf[RemoveFile]
    assertEquals(0L, r.delTimestamp)
    assertEquals(None, r.size)
  }

  @Test def cdcTxnDomainRoundTrip(): Unit = {
    assertRoundTrip("""{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":7,"dataChange":false,"tags":{}}}""")
    val t = assertRoundTrip("""{"txn":{"appId":"app","version":3,"lastUpdated":44}}""")
    assertEquals(SetTransaction("app", 3L, Some(44L)), t)
    assertRoundTrip("""{"txn":{"appId":"app","version":-1}}""")
    val d = assertRoundTrip("""{"domainMetadata":{"domain":"delta.rowTracking","configuration":"{\"rowIdHighWaterMark\":4}","removed":false}}""")
    assertTrue(d.asInstanceOf[DomainMetadata].isSystemDomain)
  }

  @Test def checkpointMetadataAndSidecarRoundTrip(): Unit = {
    assertRoundTrip("""{"checkpointMetadata":{"version":10,"tags":{"sidecarNumActions":"3"}}}""")
    assertRoundTrip("""{"checkpointMetadata":{"version":10}}""")
    val s = assertRoundTrip("""{"sidecar":{"path":"016ae953-37a9-438e-8683-9a9a4a79a395.parquet","sizeInBytes":2304522,"modificationTime":1512909768000,"tags":{}}}""")
    assertEquals(2304522L, s.asInstanceOf[SidecarFile].sizeInBytes)
  }

  @Test def metadataRoundTrip(): Unit = {
    val in = """{"metaData":{"id":"af23c9d7-fff1-4a5a-a2c8-55c59bd782aa","name":"t","description":"d",""" +
      """"format":{"provider":"parquet","options":{"k":"v"}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}",""" +
      """"partitionColumns":["a","b"],"configuration":{"delta.appendOnly":"true"},"createdTime":1564524294376}}"""
    val m = assertRoundTrip(in).asInstanceOf[Metadata]
    assertEquals(Seq("a", "b"), m.partitionColumns)
    assertEquals(Map("delta.appendOnly" -> "true"), m.configuration)
    assertEquals(Format("parquet", Map("k" -> "v")), m.format)
    val ml: io.deltalog.protocol.MetadataLike = m
    assertEquals(m.schemaString, ml.schemaString)
  }

  @Test def metadataLenientDefaultsAreEmitted(): Unit = {
    val m = parse("""{"metaData":{"id":"x","schemaString":"{}"}}""").asInstanceOf[Metadata]
    assertEquals(Format(), m.format)
    assertEquals(Nil, m.partitionColumns)
    assertEquals(Map.empty, m.configuration)
    assertEquals(
      tree("""{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}"""),
      tree(line(m)))
  }

  @Test def fileActionLenientDefaults(): Unit = {
    val a = parse("""{"add":{"path":"p","size":1,"modificationTime":2}}""").asInstanceOf[AddFile]
    assertEquals(Map.empty, a.partitionValues)
    assertTrue(a.dataChange)
    assertEquals(tree("""{"add":{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true}}"""),
      tree(line(a)))
    val r = parse("""{"remove":{"path":"p"}}""").asInstanceOf[RemoveFile]
    assertTrue(r.dataChange)
    assertEquals(tree("""{"remove":{"path":"p","dataChange":true}}"""), tree(line(r)))
    val c = parse("""{"cdc":{"path":"p","size":1}}""").asInstanceOf[AddCDCFile]
    assertFalse(c.dataChange)
    assertEquals(tree("""{"cdc":{"path":"p","partitionValues":{},"size":1,"dataChange":false}}"""), tree(line(c)))
  }

  @Test def explicitNullsAreReEmitted(): Unit = {
    val in = """{"add":{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,""" +
      """"stats":null,"tags":null,"deletionVector":null,"baseRowId":null,"defaultRowCommitVersion":null,"clusteringProvider":null}}"""
    val a = assertRoundTrip(in).asInstanceOf[AddFile]
    assertEquals(None, a.stats)
    assertEquals(None, a.deletionVector)
    assertRoundTrip("""{"metaData":{"id":"x","name":null,"description":null,"format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{},"createdTime":null}}""")
    assertRoundTrip("""{"remove":{"path":"p","deletionTimestamp":null,"dataChange":false,"extendedFileMetadata":null,"partitionValues":null,"size":null}}""")
    assertRoundTrip("""{"txn":{"appId":"a","version":1,"lastUpdated":null}}""")
    assertRoundTrip(s"""{"add":{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","offset":null,"sizeInBytes":40,"cardinality":6}}}""")
    // A value set later replaces the null.
    assertEquals(Some("{}"), parse(line(a.copy(stats = Some("{}")))).asInstanceOf[AddFile].stats)
  }

  @Test def unknownFieldsTopLevelAndNestedAreKeptInOrder(): Unit = {
    val in = """{"add":{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,""" +
      """"deletionVector":{"storageType":"p","pathOrInlineDv":"s3://b/dv.bin","offset":1,"sizeInBytes":4,"cardinality":1,"zNew":[1,2.50,{"x":null}],"aNew":"s"},""" +
      """"futureField":{"nested":[true,false]},"anotherOne":12345678901234567890123,"f":1.10}}"""
    val a = assertRoundTrip(in).asInstanceOf[AddFile]
    assertEquals(in, line(a)) // known fields were already in protocol order, so the text is identical
    assertEquals(Seq("futureField", "anotherOne", "f"), a.extra.unknown.map(_._1))
    assertEquals(Seq("zNew", "aNew"), a.deletionVector.get.extra.unknown.map(_._1))
    // Unknown fields are not part of semantic equality.
    assertEquals(a.copy(extra = ExtraFields.empty), a)
    assertFalse(a.copy(extra = ExtraFields.empty).extra == a.extra)
    assertEquals(a.extra, a.copy(size = 5L).extra)
    assertRoundTrip("""{"metaData":{"id":"x","format":{"provider":"parquet","options":{},"extra":1},"schemaString":"{}","partitionColumns":[],"configuration":{},"later":"x"}}""")
    assertRoundTrip("""{"sidecar":{"path":"s","sizeInBytes":1,"modificationTime":1,"u":null}}""")
    assertRoundTrip("""{"domainMetadata":{"domain":"d","configuration":"","removed":true,"u":{}}}""")
    assertRoundTrip("""{"checkpointMetadata":{"version":1,"u":[]}}""")
    assertRoundTrip("""{"cdc":{"path":"p","partitionValues":{},"size":1,"dataChange":false,"u":"v"}}""")
    assertRoundTrip("""{"txn":{"appId":"a","version":1,"u":"v"}}""")
  }

  @Test def knownFieldsAreEmittedInProtocolOrder(): Unit = {
    val in = """{"add":{"zz":1,"dataChange":false,"size":1,"path":"p","modificationTime":2,"partitionValues":{}}}"""
    assertRoundTrip(in)
    assertEquals("""{"add":{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false,"zz":1}}""",
      line(parse(in)))
  }

  @Test def unknownActionIsPreservedVerbatim(): Unit = {
    val in = """{"futureAction":{"a":[1,{"b":null}],"c":"d","e":1.50}}"""
    val u = assertRoundTrip(in).asInstanceOf[UnknownAction]
    assertEquals("futureAction", u.actionName)
    assertEquals(in, line(u))
    assertTrue(u.hasObjectBody)
    Seq("""{"futureAction":[1,"two",null]}""", """{"futureAction":null}""", """{"futureAction":3.50}""").foreach { l =>
      val x = assertRoundTrip(l).asInstanceOf[UnknownAction]
      assertFalse(x.hasObjectBody)
      assertThrows(classOf[UnsupportedOperationException], () => { x.toJsonNode; () })
    }
  }

  @Test def commitInfoKeepsBodyAndNeverThrowsOnTypes(): Unit = {
    val in = """{"commitInfo":{"timestamp":1697587480772,"operation":"WRITE","operationParameters":{"mode":"ErrorIfExists","partitionBy":"[]","n":3},""" +
      """"readVersion":4,"isolationLevel":"Serializable","isBlindAppend":true,"operationMetrics":{"numFiles":"2"},""" +
      """"engineInfo":"Apache-Spark/3.5.0 Delta-Lake/3.0.0","txnId":"f7ec","inCommitTimestamp":5,"userMetadata":"m","tags":{"t":"1"},"custom":{"x":1}}}"""
    val c = assertRoundTrip(in).asInstanceOf[CommitInfo]
    assertEquals(in, line(c))
    assertEquals(Some(1697587480772L), c.timestamp)
    assertEquals(Some(5L), c.inCommitTimestamp)
    assertEquals(Some("WRITE"), c.operation)
    assertEquals(Some(Map("mode" -> "ErrorIfExists", "partitionBy" -> "[]", "n" -> "3")), c.operationParameters)
    assertEquals(Some(4L), c.readVersion)
    assertEquals(Some("Serializable"), c.isolationLevel)
    assertEquals(Some(true), c.isBlindAppend)
    assertEquals(Some(Map("numFiles" -> "2")), c.operationMetrics)
    assertEquals(Some("m"), c.userMetadata)
    assertEquals(Some("Apache-Spark/3.5.0 Delta-Lake/3.0.0"), c.engineInfo)
    assertEquals(Some("f7ec"), c.txnId)
    assertEquals(Some(Map("t" -> "1")), c.tags)

    val weird = assertRoundTrip("""{"commitInfo":{"timestamp":"yesterday","readVersion":1.5,"isBlindAppend":"yes","operation":7,"operationMetrics":[],"txnId":null}}""")
      .asInstanceOf[CommitInfo]
    assertEquals(None, weird.timestamp)
    assertEquals(None, weird.readVersion)
    assertEquals(None, weird.isBlindAppend)
    assertEquals(None, weird.operation)
    assertEquals(None, weird.operationMetrics)
    assertEquals(None, weird.txnId)
    assertEquals(None, weird.engineInfo)
    assertRoundTrip("""{"commitInfo":{}}""")
  }

  @Test def commitInfoBuilders(): Unit = {
    val c = CommitInfo(1L, "WRITE", Map("mode" -> "Append"), Some(0L), Some("Serializable"), Some(true),
      Map("numFiles" -> "1"), "deltalog/0.1.0", "id-1")
    assertEquals(Some(1L), c.timestamp)
    assertEquals(Some(0L), c.readVersion)
    assertEquals(Some(7L), c.withInCommitTimestamp(7L).inCommitTimestamp)
    assertEquals(None, c.timestamp.flatMap(_ => c.without("timestamp").timestamp))
    assertEquals(c, parse(line(c)))
  }

  @Test def addFileRemoveCopiesFields(): Unit = {
    val d = DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 40, 6L)
    val a = AddFile("p%20q", Map("x" -> null), 10L, 20L, dataChange = true, Some("{}"), Some(Map("t" -> "v")),
      Some(d), Some(3L), Some(4L), Some("liquid"))
    val r = a.remove(99L)
    assertEquals(RemoveFile("p%20q", Some(99L), dataChange = true, Some(true), Some(Map("x" -> null)), Some(10L),
      Some("{}"), Some(Map("t" -> "v")), Some(d), Some(3L), Some(4L)), r)
    assertFalse(a.remove(1L, dataChange = false).dataChange)
    assertEquals(a.logicalFileKey, r.logicalFileKey)
    assertEquals(r, parse(line(r)))
  }

  @Test def serializeAndParseLines(): Unit = {
    val actions = Seq[Action](
      CommitInfo.empty.withTimestamp(1L),
      SetTransaction("a", 1L),
      AddFile("f", Map.empty, 1L, 2L),
      DomainMetadata("d", "{}"))
    val text = ActionCodec.serialize(actions)
    assertTrue(text.endsWith("}\n"))
    assertEquals(4, text.count(_ == '\n'))
    assertEquals(actions, ActionCodec.parseText(text, "x.json"))
    assertEquals(actions, ActionCodec.parseLines(("" +: text.split("\n").toSeq :+ "  ").iterator, "x.json"))
    assertEquals(None, ActionCodec.parseLine("   "))
    assertEquals(None, ActionCodec.parseLine(""))
    assertEquals("", ActionCodec.serialize(Nil))
  }
}
