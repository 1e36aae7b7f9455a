package io.deltalog.commands

import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.Action

/** The schema rewrites of DROP FEATURE typeWidening / columnMapping and the Parquet type comparison. */
class FeatureRemoverSchemaSuite {
  private def typeChange(from: String, to: String): Metadata = new MetadataBuilder().putMetadataArray(
    "delta.typeChanges", Array(new MetadataBuilder().putString("toType", to).putString("fromType", from).build()))
    .build()

  private val widened = StructType(Seq(
    StructField("a", IntegerType, metadata = typeChange("short", "integer")),
    StructField("s.x", StructType(Seq(StructField("f", DoubleType, metadata = typeChange("float", "double"))))),
    StructField("m", MapType(StringType, StructType(Seq(StructField("g", LongType,
      metadata = typeChange("integer", "long")))))),
    StructField("b", StringType, metadata = new MetadataBuilder().putString("comment", "kept").build())))

  @Test def typeChangesAreFoundWithTheirPathsAndRemovedEverywhere(): Unit = {
    val changes = TypeWideningRemover.changes(widened)
    assertEquals(Seq(Nil -> "a", Seq("s.x") -> "f", Seq("m", "value") -> "g"), changes.map(c => c._1 -> c._2.name))
    val cleaned = TypeWideningRemover.withoutTypeChanges(widened)
    assertTrue(TypeWideningRemover.changes(cleaned).isEmpty)
    assertFalse(cleaned.json.contains("delta.typeChanges"))
    assertEquals("kept", cleaned("b").metadata.getString("comment"))
    assertEquals(widened.map(_.dataType.simpleString), cleaned.map(_.dataType.simpleString))
  }

  @Test def columnsParameterNamesEachChangedFieldByItsQuotedPath(): Unit = {
    val cols = Action.mapper.readTree(TypeWideningRemover.columnsJson(TypeWideningRemover.changes(widened)))
    assertEquals(3, cols.size())
    assertEquals("a", cols.get(0).get("name").asText())
    assertEquals("integer", cols.get(0).get("type").asText())
    assertTrue(cols.get(0).get("nullable").asBoolean())
    assertEquals("short", cols.get(0).get("metadata").get("delta.typeChanges").get(0).get("fromType").asText())
    assertEquals("`s.x`.f", cols.get(1).get("name").asText())
    assertEquals("m.value.g", cols.get(2).get("name").asText())
  }

  @Test def columnMappingMetadataIsStrippedFromNestedFields(): Unit = {
    def cm(id: Long, name: String) = new MetadataBuilder().putLong("delta.columnMapping.id", id)
      .putString("delta.columnMapping.physicalName", name).putLong("parquet.field.id", id).build()
    val element = StructType(Seq(StructField("f", StringType, metadata = cm(3, "col-3"))))
    val schema = StructType(Seq(StructField("a", IntegerType, metadata = cm(1, "col-1")),
      StructField("s", ArrayType(element), metadata = cm(2, "col-2"))))
    val stripped = ColumnMappingRemover.withoutFieldMetadata(schema)
    val plainElement = StructType(Seq(StructField("f", StringType)))
    val expected = StructType(Seq(StructField("a", IntegerType), StructField("s", ArrayType(plainElement))))
    assertEquals(expected.json, stripped.json)
  }

  @Test def filesDifferWhenALeafHasAnotherTypeAtTheSamePath(): Unit = {
    val table = StructType(Seq(StructField("a", IntegerType), StructField("s", StructType(Seq(
      StructField("f", DoubleType)))), StructField("l", ArrayType(LongType))))
    assertFalse(ParquetFileTypes.differs(table, table))
    assertTrue(ParquetFileTypes.differs(StructType(Seq(StructField("a", ShortType))), table))
    assertTrue(ParquetFileTypes.differs(StructType(Seq(StructField("s", StructType(Seq(
      StructField("f", FloatType)))))), table))
    assertTrue(ParquetFileTypes.differs(StructType(Seq(StructField("l", ArrayType(IntegerType)))), table))
    // a column the file lacks, or one the table no longer has, needs no rewrite
    assertFalse(ParquetFileTypes.differs(StructType(Seq(StructField("a", IntegerType))), table))
    assertFalse(ParquetFileTypes.differs(StructType(Seq(StructField("gone", ShortType))), table))
    // names are compared case-sensitively, as delta-spark's rewrite does
    assertFalse(ParquetFileTypes.differs(StructType(Seq(StructField("A", ShortType))), table))
  }
}
