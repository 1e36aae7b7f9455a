package io.deltalog.spark

import org.apache.spark.sql.DataFrame
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.commands.{ConstraintViolationException, InvalidWriteException, SchemaMismatchException}
import io.deltalog.exceptions.DeltalogException

/** Writer options: schema evolution, replaceWhere, dynamic overwrite, idempotency, metadata. */
class ConnectorWriteOptionsSuite {
  import ConnectorWriteTestSupport._

  private def idS(rows: (Long, String)*): DataFrame = {
    val s = spark
    import s.implicits._
    rows.toDF("id", "s")
  }

  @Test def schemaEnforcementNamesEveryMismatchingColumn(): Unit = withTable { t =>
    idS(1L -> "a").write.format("deltalog").save(t)
    val s = spark
    import s.implicits._
    val e = assertThrows(classOf[SchemaMismatchException], () =>
      Seq((1L, 2, "x")).toDF("id", "s", "extra").write.format("deltalog").mode("append").save(t))
    assertEquals("DELTA_SCHEMA_MISMATCH", e.errorClass)
    assertTrue(e.columns.exists(_.startsWith("s (table: string, data: int)")), e.columns.toString)
    assertTrue(e.columns.exists(_.startsWith("extra")), e.columns.toString)
    assertTrue(e.getMessage.contains("version 0"), e.getMessage)
    assertEquals(0L, latestVersion(t))
    // missing columns are null; narrower integers are cast up
    Seq(2).toDF("id").write.format("deltalog").mode("append").save(t)
    assertEquals(Seq("[1,a]", "[2,null]"), sortedRows(read(t)))
  }

  @Test def mergeSchemaAddsColumnsIncludingNested(): Unit = withTable { t =>
    spark.sql("select 1L as id, named_struct('a', 1) as st").write.format("deltalog").save(t)
    spark.sql("select 2L as id, named_struct('a', 2, 'b', 'x') as st, 3.5d as extra")
      .write.format("deltalog").mode("append").option("mergeSchema", "true").save(t)
    val m = metadata(t, 1).get
    assertTrue(m.schemaString.contains("\"name\":\"extra\""))
    assertTrue(m.schemaString.contains("\"name\":\"b\""))
    assertEquals(metadata(t, 0).get.id, m.id, "the table id is kept")
    assertEquals(Seq("[1,[1,null],null]", "[2,[2,x],3.5]"), sortedRows(read(t).select("id", "st", "extra")))
  }

  @Test def overwriteSchemaReplacesSchemaAndPartitioning(): Unit = withTable { t =>
    idS(1L -> "a").write.format("deltalog").save(t)
    val s = spark
    import s.implicits._
    assertThrows(classOf[SchemaMismatchException], () =>
      Seq(1.0).toDF("x").write.format("deltalog").mode("overwrite").save(t))
    Seq((1.0, "q")).toDF("x", "p").write.format("deltalog").mode("overwrite").option("overwriteSchema", "true")
      .partitionBy("p").save(t)
    val m = metadata(t, 1).get
    assertEquals(Seq("p"), m.partitionColumns)
    assertEquals(Seq("[1.0,q]"), sortedRows(read(t).select("x", "p")))
    val e = assertThrows(classOf[InvalidWriteException], () =>
      Seq((1.0, "q")).toDF("x", "p").write.format("deltalog").mode("append").partitionBy("x").save(t))
    assertEquals("DELTA_PARTITION_COLUMNS_MISMATCH", e.errorClass)
  }

  private def partitioned(t: String): Unit =
    idS((0L until 9L).map(i => i -> s"p${i % 3}"): _*).write.format("deltalog").partitionBy("s").save(t)

  @Test def replaceWhereOnPartitionColumns(): Unit = withTable { t =>
    partitioned(t)
    idS(100L -> "p1").write.format("deltalog").mode("overwrite").option("replaceWhere", "s = 'p1'").save(t)
    assertEquals(Set("p1"), removes(t, 1).map(_.partitionValues.get("s")).toSet)
    assertEquals(Some("[\"s = 'p1'\"]"), commitInfo(t, 1).operationParameters.flatMap(_.get("predicate")))
    val expected = ((0L until 9L).filter(_ % 3 != 1).map(i => s"[$i,p${i % 3}]") :+ "[100,p1]").sorted
    assertEquals(expected, sortedRows(read(t).select("id", "s")))
  }

  @Test def replaceWhereRowsMustMatchThePredicate(): Unit = withTable { t =>
    partitioned(t)
    val e = assertThrows(classOf[ConstraintViolationException], () =>
      idS(100L -> "p2").write.format("deltalog").mode("overwrite").option("replaceWhere", "s = 'p1'").save(t))
    assertEquals("DELTA_REPLACE_WHERE_MISMATCH", e.errorClass)
    assertTrue(e.getMessage.contains("s = p2"), e.getMessage)
    assertEquals(0L, latestVersion(t))
  }

  @Test def replaceWhereOnDataColumnsRewritesTouchedFiles(): Unit = withTable { t =>
    val s = spark
    import s.implicits._
    // three files: 0-3, 4-7, 8-11
    for (start <- Seq(0L, 4L, 8L)) {
      (start until start + 4).map(i => (i, i * 10)).toDF("id", "v").coalesce(1)
        .write.format("deltalog").mode("append").save(t)
    }
    val byMin = (0L to 2L).flatMap(adds(t, _)).map(a => stats(a).get("minValues").get("id").asLong() -> a.path).toMap
    assertEquals(Set(0L, 4L, 8L), byMin.keySet)
    Seq((4L, -1L)).toDF("id", "v").write.format("deltalog").mode("overwrite")
      .option("replaceWhere", "id BETWEEN 3 AND 5").save(t)
    assertEquals(3L, latestVersion(t))
    val expected = ((0L until 12L).filterNot(i => i >= 3 && i <= 5).map(i => s"[$i,${i * 10}]") :+ "[4,-1]").sorted
    assertEquals(expected, sortedRows(read(t)))
    assertEquals(Set(byMin(0L), byMin(4L)), removes(t, 3).map(_.path).toSet, "only files with matching rows")
    assertTrue(liveFiles(t).contains(byMin(8L)))
    // copied rows 0-2 and 6-7, plus the new row
    assertEquals(6L, adds(t, 3).map(a => stats(a).get("numRecords").asLong()).sum)
  }

  @Test def dynamicPartitionOverwriteFromOptionAndSession(): Unit = withTable { t =>
    partitioned(t)
    idS(100L -> "p0", 101L -> "p7").write.format("deltalog").mode("overwrite")
      .option("partitionOverwriteMode", "dynamic").save(t)
    assertEquals(Set("p0"), removes(t, 1).map(_.partitionValues.flatMap(_.get("s")).orNull).toSet)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try idS(102L -> "p2").write.format("deltalog").mode("overwrite").save(t)
    finally spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assertEquals(Set("p2"), removes(t, 2).map(_.partitionValues.flatMap(_.get("s")).orNull).toSet)
    assertEquals(Seq("[1,p1]", "[100,p0]", "[101,p7]", "[102,p2]", "[4,p1]", "[7,p1]"),
      sortedRows(read(t).select("id", "s")))
  }

  @Test def userMetadataFromOptionAndSessionConf(): Unit = withTable { t =>
    spark.range(1).write.format("deltalog").option("userMetadata", "opt").save(t)
    assertEquals(Some("opt"), commitInfo(t, 0).userMetadata)
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "sess")
    try spark.range(1).write.format("deltalog").mode("append").save(t)
    finally spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    assertEquals(Some("sess"), commitInfo(t, 1).userMetadata)
  }

  @Test def idempotentWritesSkipAppliedVersions(): Unit = withTable { t =>
    def write(v: Int, n: Int): Unit = spark.range(n).write.format("deltalog").mode("append")
      .option("txnAppId", "app").option("txnVersion", v.toString).save(t)
    write(5, 2)
    assertEquals(Seq(SetTransaction("app", 5L, None)),
      actions(t, 0).collect { case s: SetTransaction => s.copy(lastUpdated = None) })
    write(5, 3)
    write(4, 3)
    assertEquals(0L, latestVersion(t))
    write(6, 3)
    assertEquals(1L, latestVersion(t))
    assertEquals(5L, read(t).count())
    val e = assertThrows(classOf[DeltalogException], () =>
      spark.range(1).write.format("deltalog").mode("append").option("txnVersion", "1").save(t))
    assertEquals("DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS", e.errorClass)
  }

  @Test def dataChangeFalseMarksEveryFileAction(): Unit = withTable { t =>
    spark.range(0, 6, 1, 3).write.format("deltalog").save(t)
    read(t).coalesce(1).write.format("deltalog").mode("overwrite").option("dataChange", "false").save(t)
    assertTrue(adds(t, 1).nonEmpty && adds(t, 1).forall(!_.dataChange))
    assertTrue(removes(t, 1).size == 3 && removes(t, 1).forall(!_.dataChange))
    assertEquals((0L until 6L).toSeq, read(t).collect().map(_.getLong(0)).sorted.toSeq)
  }

  @Test def maxRecordsPerFileSplitsFiles(): Unit = withTable { t =>
    spark.range(0, 10, 1, 1).write.format("deltalog").option("maxRecordsPerFile", "4").save(t)
    assertEquals(Seq(2L, 4L, 4L), adds(t, 0).map(a => stats(a).get("numRecords").asLong()).sorted)
  }

  @Test def tablePropertiesGivenAsOptionsOnCreation(): Unit = withTable { t =>
    spark.range(1).write.format("deltalog").option("delta.enableChangeDataFeed", "true")
      .option("delta.checkpointInterval", "5").save(t)
    val conf = metadata(t, 0).get.configuration
    assertEquals(Some("true"), conf.get("delta.enableChangeDataFeed"))
    assertEquals(Some("5"), conf.get("delta.checkpointInterval"))
    assertTrue(actions(t, 0).collectFirst { case p: io.deltalog.protocol.Protocol => p }.get.minWriterVersion >= 4)
  }
}
