package io.deltalog.spark

import java.time.{ZoneId, ZoneOffset}

import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.Metadata
import io.deltalog.protocol.Protocol
import io.deltalog.schema._

/** DeltaSchema, ColumnMapping and PartitionValues (io.deltalog.schema). */
class ConnectorReadSchemaSuite {
  private val utc: ZoneId = ZoneOffset.UTC

  @Test def schemaRoundTripKeepsTypesAndMetadata(): Unit = {
    val json =
      """{"type":"struct","fields":[
        |{"name":"a","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"}},
        |{"name":"d","type":"decimal(12,5)","nullable":false,"metadata":{}},
        |{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}},
        |{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
        |{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"double","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}}]}""".stripMargin
    val s = DeltaSchema.fromJson(json)
    assertEquals(Seq("a", "d", "t", "s", "m"), s.fieldNames.toSeq)
    assertEquals(DecimalType(12, 5), s("d").dataType)
    assertFalse(s("d").nullable)
    assertEquals(TimestampNTZType, s("t").dataType)
    assertEquals("col-a", s("a").metadata.getString(ColumnMapping.PhysicalNameKey))
    assertEquals(s, DeltaSchema.fromJson(DeltaSchema.toJson(s)))
  }

  @Test def lenientParserAcceptsMissingNullableAndMetadata(): Unit = {
    val s = DeltaSchema.fromJson("""{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","nullable":false,"extra":1}]}""")
    assertEquals(StructType(Seq(StructField("a", LongType, nullable = true), StructField("b", StringType, nullable = false))), s)
  }

  @Test def invalidSchemaIsATypedError(): Unit = {
    val e = assertThrows(classOf[InvalidSchemaException], () => DeltaSchema.fromJson("""{"type":"struct","fields":[{"name":"a","type":"bogus"}]}""", "/t"))
    assertTrue(e.getMessage.contains("/t"), e.getMessage)
    assertTrue(e.getMessage.contains("bogus"), e.getMessage)
    assertThrows(classOf[InvalidSchemaException], () => DeltaSchema.fromJson("\"integer\"", "/t"))
  }

  @Test def partitionAndDataSchemaKeepSchemaSpelling(): Unit = {
    val schema = StructType.fromDDL("Id INT, Part STRING, v DOUBLE")
    val md = Metadata(schemaString = schema.json, partitionColumns = Seq("part"))
    assertEquals(Seq("Part"), DeltaSchema.partitionSchema(md).fieldNames.toSeq)
    assertEquals(Seq("Id", "v"), DeltaSchema.dataSchema(schema, Seq("PART")).fieldNames.toSeq)
    val bad = Metadata(schemaString = schema.json, partitionColumns = Seq("nope"))
    val e = assertThrows(classOf[InvalidSchemaException], () => DeltaSchema.partitionSchema(bad, "/tbl"))
    assertTrue(e.getMessage.contains("nope"))
  }

  private def mapped(name: String, id: Long, physical: String, t: DataType): StructField =
    StructField(name, t, nullable = true, new MetadataBuilder()
      .putLong(ColumnMapping.IdKey, id).putString(ColumnMapping.PhysicalNameKey, physical).build())

  private val mappedSchema = StructType(Seq(
    mapped("a", 1, "col-1", IntegerType),
    mapped("s", 2, "col-2", StructType(Seq(mapped("x", 3, "col-3", LongType)))),
    mapped("arr", 4, "col-4", ArrayType(StructType(Seq(mapped("y", 5, "col-5", StringType))))),
    mapped("m", 6, "col-6", MapType(StringType, StructType(Seq(mapped("z", 7, "col-7", DoubleType)))))))

  @Test def columnMappingModeFromConfigurationAndProtocol(): Unit = {
    val md = Metadata(schemaString = mappedSchema.json, configuration = Map(ColumnMapping.ModeKey -> "name"))
    assertEquals(ColumnMappingMode.NameMapping, ColumnMapping.mode(md))
    assertEquals(ColumnMappingMode.NameMapping, ColumnMapping.mode(md, Protocol(2, 5)))
    // the property is ignored when the protocol does not support column mapping
    assertEquals(ColumnMappingMode.NoMapping, ColumnMapping.mode(md, Protocol(1, 2)))
    assertEquals(ColumnMappingMode.NoMapping, ColumnMapping.mode(Metadata(schemaString = mappedSchema.json)))
    val bad = md.copy(configuration = Map(ColumnMapping.ModeKey -> "bogus"))
    assertThrows(classOf[ColumnMappingException], () => ColumnMapping.mode(bad, null, "/t"))
  }

  @Test def physicalSchemaIsRenamedRecursively(): Unit = {
    val p = ColumnMapping.toPhysical(mappedSchema, ColumnMappingMode.NameMapping)
    assertEquals(Seq("col-1", "col-2", "col-4", "col-6"), p.fieldNames.toSeq)
    assertEquals(Seq("col-3"), p("col-2").dataType.asInstanceOf[StructType].fieldNames.toSeq)
    assertEquals(Seq("col-5"), p("col-4").dataType.asInstanceOf[ArrayType].elementType.asInstanceOf[StructType].fieldNames.toSeq)
    assertEquals(Seq("col-7"), p("col-6").dataType.asInstanceOf[MapType].valueType.asInstanceOf[StructType].fieldNames.toSeq)
    assertFalse(p("col-1").metadata.contains(ColumnMapping.ParquetFieldIdKey))
    val id = ColumnMapping.toPhysical(mappedSchema, ColumnMappingMode.IdMapping)
    assertEquals(1L, id("col-1").metadata.getLong(ColumnMapping.ParquetFieldIdKey))
    assertEquals(3L, id("col-2").dataType.asInstanceOf[StructType]("col-3").metadata.getLong(ColumnMapping.ParquetFieldIdKey))
    assertSame(mappedSchema, ColumnMapping.toPhysical(mappedSchema, ColumnMappingMode.NoMapping))
  }

  @Test def physicalPathsAndIds(): Unit = {
    assertEquals(Some(Seq("col-2", "col-3")), ColumnMapping.physicalPath(mappedSchema, Seq("S", "X"), ColumnMappingMode.NameMapping))
    assertEquals(Some(Seq("s", "x")), ColumnMapping.physicalPath(mappedSchema, Seq("s", "x"), ColumnMappingMode.NoMapping))
    assertEquals(None, ColumnMapping.physicalPath(mappedSchema, Seq("s", "nope"), ColumnMappingMode.NameMapping))
    assertEquals(Some(2), ColumnMapping.fieldId(mappedSchema("s")))
    assertEquals("col-1", ColumnMapping.partitionValueKey(mappedSchema, "A", ColumnMappingMode.IdMapping))
    val unmapped = StructType(Seq(StructField("q", IntegerType)))
    assertThrows(classOf[ColumnMappingException], () => ColumnMapping.toPhysical(unmapped, ColumnMappingMode.NameMapping))
    // in id mode a field without a column id keeps its physical name and gets no field id
    val noId = StructField("q", IntegerType, nullable = true, new MetadataBuilder().putString(ColumnMapping.PhysicalNameKey, "pq").build())
    val phys = ColumnMapping.toPhysical(StructType(Seq(noId)), ColumnMappingMode.IdMapping)
    assertEquals(Seq("pq"), phys.fieldNames.toSeq)
    assertFalse(phys("pq").metadata.contains(ColumnMapping.ParquetFieldIdKey))
  }

  @Test def partitionValuesParseEveryType(): Unit = {
    def p(v: String, t: DataType): Any = PartitionValues.parse(v, t, utc, "c")
    assertNull(p(null, IntegerType))
    assertNull(p("", StringType))
    assertNull(p("", DateType))
    assertEquals(UTF8String.fromString("a b/c"), p("a b/c", StringType))
    assertEquals(true, p("true", BooleanType))
    assertEquals(false, p("FALSE", BooleanType))
    assertEquals(-3.toByte, p("-3", ByteType))
    assertEquals(300.toShort, p("300", ShortType))
    assertEquals(-7, p("-7", IntegerType))
    assertEquals(1234567890123L, p("1234567890123", LongType))
    assertEquals(1.5f, p("1.5", FloatType))
    assertTrue(p("NaN", DoubleType).asInstanceOf[Double].isNaN)
    assertEquals(Decimal("-123.45600"), p("-123.456", DecimalType(12, 5)))
    assertEquals(Decimal("12345678901234.5678901234"), p("12345678901234.5678901234", DecimalType(38, 10)))
    assertEquals(18262, p("2020-01-01", DateType))
    // ISO-8601 UTC (recommended), legacy zone-less in the session zone, with offset
    assertEquals(123456L, p("1970-01-01T00:00:00.123456Z", TimestampType))
    assertEquals(3600000000L, p("1970-01-01 01:00:00", TimestampType))
    assertEquals(0L, PartitionValues.parse("1970-01-01 01:00:00", TimestampType, ZoneId.of("+01:00"), "c"))
    assertEquals(0L, p("1970-01-01T02:00:00+02:00", TimestampType))
    assertEquals(1500000L, p("1970-01-01 00:00:01.5", TimestampNTZType))
    assertArrayEquals("ab".getBytes("UTF-8"), p("ab", BinaryType).asInstanceOf[Array[Byte]])
  }

  @Test def partitionRowsByPhysicalKeyWithCaseInsensitiveFallback(): Unit = {
    val ps = StructType.fromDDL("Part STRING, n INT, d DATE")
    val row = PartitionValues.parseRow(Map("part" -> "x", "col-n" -> "7", "d" -> null), ps, Array("Part", "col-n", "d"), utc)
    assertEquals(UTF8String.fromString("x"), row.getUTF8String(0))
    assertEquals(7, row.getInt(1))
    assertTrue(row.isNullAt(2))
  }

  @Test def invalidPartitionValuesAreTypedErrors(): Unit = {
    for ((v, t) <- Seq("x" -> IntegerType, "yes" -> BooleanType, "2020-13-45" -> DateType, "12345.6" -> DecimalType(4, 1),
        "not a time" -> TimestampType, "300" -> ByteType)) {
      val e = assertThrows(classOf[InvalidPartitionValueException], () => PartitionValues.parse(v, t, utc, "col"))
      assertTrue(e.getMessage.contains("'col'") && e.getMessage.contains(v), e.getMessage)
    }
  }

  @Test def partitionValuesFormatRoundTrips(): Unit = {
    val cases: Seq[(Any, DataType, String)] = Seq(
      (UTF8String.fromString("x=y"), StringType, "x=y"),
      (true, BooleanType, "true"),
      (7.toByte, ByteType, "7"), (8.toShort, ShortType, "8"), (9, IntegerType, "9"), (10L, LongType, "10"),
      (1.25f, FloatType, "1.25"), (2.5d, DoubleType, "2.5"),
      (Decimal("1E-7"), DecimalType(10, 8), "0.00000010"),
      (18262, DateType, "2020-01-01"),
      (123456L, TimestampType, "1970-01-01T00:00:00.123456Z"),
      (-1L, TimestampType, "1969-12-31T23:59:59.999999Z"),
      (1500000L, TimestampNTZType, "1970-01-01 00:00:01.5"),
      (0L, TimestampNTZType, "1970-01-01 00:00:00"))
    cases.foreach { case (v, t, s) =>
      val d = v match { case d: Decimal => val c = d.clone(); c.changePrecision(10, 8); c; case o => o }
      assertEquals(s, PartitionValues.format(d, t), s"$t")
      assertEquals(d, PartitionValues.parse(s, t, utc, "c"), s"$t")
    }
    assertNull(PartitionValues.format(null, IntegerType))
    assertEquals("2020-01-01", PartitionValues.formatExternal(java.time.LocalDate.of(2020, 1, 1), DateType))
  }
}
