package io.deltalog.spark

import org.apache.spark.sql.functions._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.commands.InvalidWriteException
import io.deltalog.protocol.Protocol

/** `df.write.format("deltalog")`: table creation, modes, the log written, failures. */
class ConnectorWriteSuite {
  import ConnectorWriteTestSupport._

  @Test def createWritesProtocolMetadataAddsAndCommitInfo(): Unit = withTable { t =>
    val s = spark
    import s.implicits._
    val df = Seq((1L, "a", 1.5), (2L, null, -2.0), (3L, "c", Double.NaN)).toDF("id", "name", "v").coalesce(1)
    df.write.format("deltalog").save(t)
    val acts = actions(t, 0)
    assertTrue(acts.head.isInstanceOf[CommitInfo])
    assertEquals(Protocol(1, 2), acts.collectFirst { case p: Protocol => p }.get)
    val m = metadata(t, 0).get
    assertEquals(Nil, m.partitionColumns)
    assertTrue(m.schemaString.contains("\"name\":\"name\""))
    val a = adds(t, 0).loneElement
    assertEquals(Map.empty, a.partitionValues)
    assertTrue(a.dataChange)
    assertEquals(java.nio.file.Files.size(java.nio.file.Paths.get(t, a.path)), a.size)
    val st = stats(a)
    assertEquals(3, st.get("numRecords").asInt())
    assertEquals(1, st.get("minValues").get("id").asLong())
    assertEquals(3, st.get("maxValues").get("id").asLong())
    assertEquals("a", st.get("minValues").get("name").asText())
    assertEquals(1, st.get("nullCount").get("name").asLong())
    // a NaN in v: no bounds for v at all, but its null count
    assertFalse(st.get("minValues").has("v"))
    assertFalse(st.get("maxValues").has("v"))
    assertEquals(0, st.get("nullCount").get("v").asLong())
    assertTrue(st.get("tightBounds").asBoolean())
    val ci = commitInfo(t, 0)
    assertEquals(Some("WRITE"), ci.operation)
    assertEquals(Some(Map("mode" -> "ErrorIfExists", "partitionBy" -> "[]")), ci.operationParameters)
    assertEquals(Some("1"), ci.operationMetrics.flatMap(_.get("numFiles")))
    assertEquals(Some("3"), ci.operationMetrics.flatMap(_.get("numOutputRows")))
    assertEquals(Some(a.size.toString), ci.operationMetrics.flatMap(_.get("numOutputBytes")))
    assertEquals(Seq("[1,a,1.5]", "[2,null,-2.0]", "[3,c,NaN]"), sortedRows(read(t)))
  }

  @Test def appendAddsFilesAndKeepsOldOnes(): Unit = withTable { t =>
    spark.range(0, 5).write.format("deltalog").save(t)
    spark.range(5, 8).write.format("deltalog").mode("append").save(t)
    assertEquals(1L, latestVersion(t))
    assertEquals(Nil, removes(t, 1))
    val ci = commitInfo(t, 1)
    assertEquals(Some("Append"), ci.operationParameters.flatMap(_.get("mode")))
    assertEquals(Some(0L), ci.readVersion)
    assertEquals(Some(true), ci.isBlindAppend)
    assertEquals((0L until 8L).toSeq, read(t).collect().map(_.getLong(0)).sorted.toSeq)
  }

  @Test def partitionedLayoutValuesAndEscaping(): Unit = withTable { t =>
    val s = spark
    import s.implicits._
    Seq((1, "a:b"), (2, null), (3, "")).toDF("id", "p").write.format("deltalog").partitionBy("p").save(t)
    val byId = adds(t, 0).map(a => stats(a).get("minValues").get("id").asInt() -> a).toMap
    assertEquals(Map("p" -> "a:b"), byId(1).partitionValues)
    assertTrue(byId(1).path.startsWith("p=a%253Ab/"), byId(1).path)
    // null and the empty string are both the null partition: one file holds ids 2 and 3
    assertEquals(Set(1, 2), byId.keySet)
    assertEquals(Some(null), byId(2).partitionValues.get("p"))
    assertEquals(3, stats(byId(2)).get("maxValues").get("id").asInt(), "an empty string partition value is null")
    assertTrue(byId(2).path.startsWith("p=__HIVE_DEFAULT_PARTITION__/"))
    assertFalse(stats(byId(1)).get("nullCount").has("p"), "partition columns have no stats")
    assertEquals(Some("[\"p\"]"), commitInfo(t, 0).operationParameters.flatMap(_.get("partitionBy")))
    assertEquals(Seq("[1,a:b]", "[2,null]", "[3,null]"), sortedRows(read(t).select("id", "p")))
  }

  @Test def errorIfExistsAndIgnore(): Unit = withTable { t =>
    spark.range(2).write.format("deltalog").save(t)
    val e = assertThrows(classOf[InvalidWriteException],
      () => spark.range(2).write.format("deltalog").mode("errorifexists").save(t))
    assertEquals("DELTA_PATH_EXISTS", e.errorClass)
    assertTrue(e.getMessage.contains(t.stripPrefix("/")), e.getMessage)
    spark.range(9).write.format("deltalog").mode("ignore").save(t)
    assertEquals(0L, latestVersion(t))
    assertEquals(2L, read(t).count())
  }

  @Test def overwriteRemovesEveryFile(): Unit = withTable { t =>
    spark.range(0, 10, 1, 3).write.format("deltalog").save(t)
    val before = liveFiles(t).keySet
    spark.range(100, 102).write.format("deltalog").mode("overwrite").save(t)
    assertEquals(before, removes(t, 1).map(_.path).toSet)
    assertTrue(removes(t, 1).forall(r => r.dataChange && r.extendedFileMetadata.contains(true)))
    val ci = commitInfo(t, 1)
    assertEquals(Some("Overwrite"), ci.operationParameters.flatMap(_.get("mode")))
    assertEquals(Some(before.size.toString), ci.operationMetrics.flatMap(_.get("numRemovedFiles")))
    assertEquals(Seq(100L, 101L), read(t).collect().map(_.getLong(0)).sorted.toSeq)
  }

  @Test def failedTaskCommitsNothingAndLeavesNoFiles(): Unit = withTable { t =>
    spark.range(3).write.format("deltalog").save(t)
    val bad = spark.range(0, 20, 1, 2).select(col("id"),
      when(col("id") === 13, raise_error(lit("boom"))).otherwise(lit(1)).as("x"))
    val e = assertThrows(classOf[Exception],
      () => bad.write.format("deltalog").mode("append").option("mergeSchema", "true").save(t))
    assertTrue(e.getMessage.contains("boom"), e.getMessage)
    assertEquals(0L, latestVersion(t))
    assertEquals(liveFiles(t).keySet, dataFilesOnDisk(t))
  }

  @Test def voidColumnsAreRefused(): Unit = withTable { t =>
    val e = assertThrows(classOf[InvalidWriteException],
      () => spark.range(1).select(col("id"), lit(null).as("n")).write.format("deltalog").save(t))
    assertEquals("DELTA_VOID_COLUMN", e.errorClass)
    assertTrue(e.getMessage.contains("column n"), e.getMessage)
    assertFalse(java.nio.file.Files.exists(commitFile(t, 0)))
  }

  @Test def aPathIsRequired(): Unit = {
    val e = assertThrows(classOf[io.deltalog.commands.InvalidWriteOptionException],
      () => spark.range(1).write.format("deltalog").save())
    assertEquals("DELTA_INVALID_WRITE_OPTION", e.errorClass)
    assertTrue(e.getMessage.contains("path"), e.getMessage)
  }

  implicit class Lone[A](s: Seq[A]) {
    def loneElement: A = { assertEquals(1, s.size, s.toString); s.head }
  }
}
