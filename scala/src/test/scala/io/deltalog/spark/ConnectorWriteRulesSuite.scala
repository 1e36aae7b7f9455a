package io.deltalog.spark

import org.apache.spark.sql.types.{DataType, StructType}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.commands.{ConstraintViolationException, InvalidWriteException}
import io.deltalog.exceptions.AppendOnlyTableException

/** Rules enforced on write: NOT NULL, invariants, CHECK, generated / identity columns, append-only, CDF, column mapping. */
class ConnectorWriteRulesSuite {
  import ConnectorWriteTestSupport._

  private def sql(q: String) = spark.sql(q)

  @Test def notNullIncludingNestedFields(): Unit = withTable { t =>
    createByHand(t, structJson(field("id", "\"long\"", nullable = false),
      field("s", structJson(field("x", "\"integer\"", nullable = false)))))
    sql("select 1L as id, named_struct('x', 2) as s union all select 2L, cast(null as struct<x:int>)")
      .write.format("deltalog").mode("append").save(t)
    val e1 = assertThrows(classOf[ConstraintViolationException], () =>
      sql("select cast(null as long) as id, named_struct('x', 1) as s").write.format("deltalog").mode("append").save(t))
    assertEquals("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", e1.errorClass)
    assertTrue(e1.getMessage.contains("column id") && e1.getMessage.contains("id = NULL"), e1.getMessage)
    val e2 = assertThrows(classOf[ConstraintViolationException], () =>
      sql("select 3L as id, named_struct('x', cast(null as int)) as s").write.format("deltalog").mode("append").save(t))
    assertTrue(e2.getMessage.contains("column s.x"), e2.getMessage)
    assertEquals(1L, latestVersion(t))
    assertEquals(Seq("[1,[2]]", "[2,null]"), sortedRows(read(t)))
  }

  @Test def invariantsAndCheckConstraints(): Unit = withTable { t =>
    val inv = "{\"delta.invariants\":\"{\\\"expression\\\":{\\\"expression\\\":\\\"v > 0\\\"}}\"}"
    createByHand(t, structJson(field("id", "\"long\""), field("v", "\"integer\"", metadata = inv)),
      conf = Map("delta.constraints.small" -> "id < 100"), writerVersion = 3)
    sql("select 1L as id, 5 as v").write.format("deltalog").mode("append").save(t)
    val e1 = assertThrows(classOf[ConstraintViolationException], () =>
      sql("select 2L as id, -7 as v").write.format("deltalog").mode("append").save(t))
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", e1.errorClass)
    assertTrue(e1.getMessage.contains("invariant of column v") && e1.getMessage.contains("v = -7"), e1.getMessage)
    val e2 = assertThrows(classOf[ConstraintViolationException], () =>
      sql("select 200L as id, 1 as v").write.format("deltalog").mode("append").save(t))
    assertTrue(e2.getMessage.contains("CHECK constraint small (id < 100)") && e2.getMessage.contains("id = 200"),
      e2.getMessage)
    // a null result is a violation too
    assertThrows(classOf[ConstraintViolationException], () =>
      sql("select cast(null as long) as id, 1 as v").write.format("deltalog").mode("append").save(t))
    assertEquals(1L, latestVersion(t))
    assertEquals(liveFiles(t).keySet, dataFilesOnDisk(t))
  }

  @Test def generatedColumnsComputedWhenAbsentValidatedWhenPresent(): Unit = withTable { t =>
    createByHand(t, structJson(field("a", "\"long\""),
      field("b", "\"long\"", metadata = "{\"delta.generationExpression\":\"a * 2\"}")), writerVersion = 4)
    sql("select 1L as a union all select 2L").write.format("deltalog").mode("append").save(t)
    sql("select 3L as a, 6L as b").write.format("deltalog").mode("append").save(t)
    val e = assertThrows(classOf[ConstraintViolationException], () =>
      sql("select 4L as a, 9L as b").write.format("deltalog").mode("append").save(t))
    assertEquals("DELTA_GENERATED_COLUMN_MISMATCH", e.errorClass)
    assertTrue(e.getMessage.contains("b = 9") && e.getMessage.contains("a = 4"), e.getMessage)
    assertEquals(Seq("[1,2]", "[2,4]", "[3,6]"), sortedRows(read(t)))
  }

  @Test def identityColumnsAssignValuesAndMoveTheHighWaterMark(): Unit = withTable { t =>
    val md = "{\"delta.identity.start\":1,\"delta.identity.step\":-3,\"delta.identity.allowExplicitInsert\":false}"
    createByHand(t, structJson(field("id", "\"long\"", nullable = false, metadata = md), field("v", "\"string\"")))
    sql("select 'a' as v union all select 'b' union all select 'c'").repartition(3)
      .write.format("deltalog").mode("append").save(t)
    val ids1 = read(t).collect().map(_.getLong(0)).toSeq
    assertEquals(3, ids1.distinct.size)
    assertTrue(ids1.forall(i => i <= 1 && (1 - i) % 3 == 0), ids1.toString)
    def hwm(v: Long): Long = {
      val s = DataType.fromJson(metadata(t, v).get.schemaString).asInstanceOf[StructType]
      s("id").metadata.getLong("delta.identity.highWaterMark")
    }
    assertEquals(ids1.min, hwm(1))
    sql("select 'd' as v").write.format("deltalog").mode("append").save(t)
    val ids2 = read(t).collect().map(_.getLong(0)).toSeq
    assertEquals(4, ids2.distinct.size)
    assertTrue(ids2.min < ids1.min)
    assertEquals(ids2.min, hwm(2))
    val e = assertThrows(classOf[InvalidWriteException], () =>
      sql("select 7L as id, 'x' as v").write.format("deltalog").mode("append").save(t))
    assertEquals("DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", e.errorClass)
  }

  @Test def appendOnlyRefusesOverwrite(): Unit = withTable { t =>
    spark.range(2).write.format("deltalog").option("delta.appendOnly", "true").save(t)
    spark.range(2).write.format("deltalog").mode("append").save(t)
    val e = assertThrows(classOf[AppendOnlyTableException], () =>
      spark.range(2).write.format("deltalog").mode("overwrite").save(t))
    assertEquals("DELTA_APPEND_ONLY_TABLE", e.errorClass)
    assertEquals(1L, latestVersion(t))
    assertEquals(liveFiles(t).keySet, dataFilesOnDisk(t))
  }

  @Test def changeDataFeedOnPartialRewriteOnly(): Unit = withTable { t =>
    sql("select id, id * 10 as v from range(6)").coalesce(1).write.format("deltalog")
      .option("delta.enableChangeDataFeed", "true").save(t)
    sql("select 4L as id, -4L as v").write.format("deltalog").mode("overwrite").option("replaceWhere", "id >= 4").save(t)
    val cdcs = actions(t, 1).collect { case c: AddCDCFile => c }
    assertTrue(cdcs.nonEmpty && cdcs.forall(c => c.path.startsWith("_change_data/") && !c.dataChange))
    val change = spark.read.parquet(cdcs.map(c => s"$t/${c.path}"): _*).select("id", "v", "_change_type")
    assertEquals(Seq("[4,-4,insert]", "[4,40,delete]", "[5,50,delete]"), sortedRows(change))
    assertEquals(Seq("[0,0]", "[1,10]", "[2,20]", "[3,30]", "[4,-4]"), sortedRows(read(t)))
    // whole-file overwrite: no change files
    sql("select 9L as id, 9L as v").write.format("deltalog").mode("overwrite").save(t)
    assertEquals(Nil, actions(t, 2).collect { case c: AddCDCFile => c })
  }

  @Test def columnMappingNamePhysicalNamesFieldIdsAndStats(): Unit = withTable { t =>
    sql("select 1L as id, 'a' as p, named_struct('x', 2) as s").write.format("deltalog")
      .option("delta.columnMapping.mode", "name").partitionBy("p").save(t)
    val m = metadata(t, 0).get
    val schema = DataType.fromJson(m.schemaString).asInstanceOf[StructType]
    def phys(f: org.apache.spark.sql.types.StructField) = f.metadata.getString("delta.columnMapping.physicalName")
    assertEquals(Some("4"), m.configuration.get("delta.columnMapping.maxColumnId"))
    val a = adds(t, 0).head
    assertEquals(Set(phys(schema("p"))), a.partitionValues.keySet)
    val st = stats(a)
    assertTrue(st.get("nullCount").has(phys(schema("id"))))
    val nested = schema("s").dataType.asInstanceOf[StructType]("x")
    assertEquals(0, st.get("nullCount").get(phys(schema("s"))).get(phys(nested)).asInt())
    val reader = org.apache.parquet.hadoop.ParquetFileReader.open(org.apache.parquet.hadoop.util.HadoopInputFile
      .fromPath(new org.apache.hadoop.fs.Path(s"$t/${PathCodec.decodePath(a.path)}"), new org.apache.hadoop.conf.Configuration()))
    val fileSchema = try reader.getFooter.getFileMetaData.getSchema finally reader.close()
    assertEquals(Seq(phys(schema("id")), phys(schema("s"))),
      (0 until fileSchema.getFieldCount).map(i => fileSchema.getType(i).getName))
    assertEquals(schema("id").metadata.getLong("delta.columnMapping.id"),
      fileSchema.getType(fileSchema.getFieldIndex(phys(schema("id")))).getId.intValue().toLong)
    assertEquals(Seq("[1,a,[2]]"), sortedRows(read(t).select("id", "p", "s")))
  }
}
