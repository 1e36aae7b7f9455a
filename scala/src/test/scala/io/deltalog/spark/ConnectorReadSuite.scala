package io.deltalog.spark

import java.nio.file.Files

import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.exceptions.{TableNotFoundException, UnsupportedTableFeatureException, VersionNotFoundException}
import io.deltalog.spark.ConnectorReadTestSupport._
import io.deltalog.spark.read.InvalidReadOptionException

/** `spark.read.format("deltalog")` on corpus tables: data, schema, time travel, errors. */
class ConnectorReadSuite {

  private def expected(rel: String) = spark.read.parquet(table(rel))

  @Test def readsPartitionedDecimalTableLikeExpected(): Unit = {
    val df = read(table("delta-kernel-rs/basic-decimal-table/delta"))
    assertEquals(Seq("part", "col1", "col2", "col3"), df.columns.toSeq)
    assertSameRows(expected("delta-kernel-rs/basic-decimal-table/expected"), df)
  }

  @Test def readsTypedPartitionValuesAndNulls(): Unit = {
    // zone-less timestamp partition values are read in the session time zone (as delta-spark does);
    // this table was written by Spark in America/Los_Angeles
    val zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try {
      val df = read(table("delta-kernel-rs/data-reader-partition-values/delta"))
      assertSameRows(expected("delta-kernel-rs/data-reader-partition-values/expected"), df)
      assertEquals(1L, df.where(col("as_int").isNull).count())
      assertEquals(2L, df.where(col("as_string_lit_null") === "null").count())
    } finally spark.conf.set("spark.sql.session.timeZone", zone)
  }

  @Test def keepsSchemaColumnOrderWithPartitionColumnsInside(): Unit = {
    val path = table("delta-kernel-rs/data-reader-partition-values/delta")
    val schemaOrder = io.deltalog.log.DeltaLog.forTable(path, spark.sparkContext.hadoopConfiguration).update()
      .metadata.schemaString
    val names = io.deltalog.schema.DeltaSchema.fromJson(schemaOrder).fieldNames.toSeq
    assertEquals(names, read(path).columns.toSeq)
  }

  @Test def columnMappingNameAndIdModes(): Unit = {
    for (mode <- Seq("name", "id")) {
      val rel = s"delta-kernel-rs/table-with-columnmapping-mode-$mode"
      val df = read(table(s"$rel/delta"))
      assertSameRows(expected(s"$rel/expected"), df)
      // the schema users see carries no column ids or physical names
      assertFalse(df.schema.json.contains("delta.columnMapping"), df.schema.json)
    }
  }

  @Test def columnMappingWithRenamedPartitionColumn(): Unit = {
    val df = read(table("delta-rs/table_with_column_mapping"))
    assertEquals(Seq("Company Very Short", "Super Name"), df.columns.toSeq)
    assertEquals(5L, df.count())
    assertTrue(df.collect().forall(r => r.getString(0) != null && r.getString(1) != null))
  }

  @Test def timestampNtzPartitionedWithNameMapping(): Unit = {
    val rel = "delta-kernel-rs/data-reader-timestamp_ntz-name-mode"
    assertSameRows(expected(s"$rel/expected"), read(table(s"$rel/delta")))
  }

  @Test def deletionVectorsDropDeletedRows(): Unit = {
    val path = table("delta-kernel-rs/table-with-dv-small")
    val df = read(path)
    assertEquals((1 to 8).toSeq, df.select("value").collect().map(_.getInt(0)).toSeq.sorted)
    // the data file itself still holds the deleted rows
    assertEquals(10L, spark.read.parquet(s"$path/part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet").count())
    assertEquals(8L, df.where(col("value") > 0).count())
  }

  @Test def deletionVectorsWithCheckpointAndPartitions(): Unit = {
    val rel = "delta-kernel-rs/dv-partitioned-with-checkpoint"
    assertSameRows(expected(s"$rel/expected"), read(table(s"$rel/delta")))
  }

  @Test def deletionVectorsOnManyFiles(): Unit = {
    val dv = read(table("delta/basic-dv-with-checkpoint"))
    assertEquals(454L, dv.count())
    // filters and skipping combine with deletion vectors: same rows as filtering the full read
    val ids = dv.select("id").collect().map(_.getLong(0))
    assertEquals(ids.length, ids.distinct.length)
    val threshold = ids.sorted.apply(ids.length / 2)
    assertEquals(ids.count(_ > threshold).toLong, dv.where(col("id") > threshold).count())
    val (l, _) = listing(dv.where(col("id") > threshold))
    assertTrue(l.filesAfterDataSkipping < l.totalFiles, l.toString)
    assertEquals(8L, read(table("delta/basic-dv-no-checkpoint")).count())
  }

  @Test def timeTravelByVersionOptionAndPath(): Unit = {
    val path = table("dat/basic_append/delta")
    val v0 = spark.read.parquet(table("dat/basic_append/expected/v0/table_content.parquet"))
    assertSameRows(v0, read(path, "versionAsOf" -> "0"))
    assertSameRows(v0, read(path + "@v0"))
    assertEquals(5L, read(path).count())
    assertEquals(5L, read(path + "@v1").count())
    val e = assertThrows(classOf[VersionNotFoundException], () => read(path, "versionAsOf" -> "7"))
    assertTrue(e.getMessage.contains("7"), e.getMessage)
  }

  @Test def timeTravelByTimestamp(): Unit = {
    val dir = copyTable("dat/basic_append/delta")
    val log = dir.resolve("_delta_log")
    val t0 = 1600000000000L
    val t1 = 1700000000000L
    Files.setLastModifiedTime(log.resolve("00000000000000000000.json"), java.nio.file.attribute.FileTime.fromMillis(t0))
    Files.setLastModifiedTime(log.resolve("00000000000000000001.json"), java.nio.file.attribute.FileTime.fromMillis(t1))
    val path = dir.toString
    assertEquals(3L, read(path, "timestampAsOf" -> "2021-01-01 00:00:00").count())
    assertEquals(5L, read(path, "timestampAsOf" -> "2023-11-14T22:13:20Z").count())
    assertEquals(3L, read(path + "@20210101000000000").count())
    assertThrows(classOf[io.deltalog.exceptions.TimestampOutOfRangeException],
      () => read(path, "timestampAsOf" -> "2000-01-01"))
  }

  @Test def contradictoryOrInvalidTimeTravelIsATypedError(): Unit = {
    val path = table("dat/basic_append/delta")
    val both = assertThrows(classOf[InvalidReadOptionException],
      () => read(path, "versionAsOf" -> "0", "timestampAsOf" -> "2021-01-01"))
    assertTrue(both.getMessage.contains(path) && both.getMessage.contains("versionAsOf"), both.getMessage)
    assertThrows(classOf[InvalidReadOptionException], () => read(path + "@v0", "versionAsOf" -> "1"))
    assertThrows(classOf[InvalidReadOptionException], () => read(path, "versionAsOf" -> "-1"))
    assertThrows(classOf[InvalidReadOptionException], () => read(path, "timestampAsOf" -> "yesterday"))
  }

  @Test def nonDeltaPathIsATypedErrorNamingThePath(): Unit = {
    val dir = TestDirs.create("not-delta")
    val e = assertThrows(classOf[TableNotFoundException], () => read(dir.toString))
    assertTrue(e.getMessage.contains(dir.toString), e.getMessage)
  }

  @Test def unsupportedReaderFeatureIsATypedErrorNamingIt(): Unit = {
    val path = table("delta-rs/data_err_logs_table_d")
    val e = assertThrows(classOf[UnsupportedTableFeatureException], () => read(path))
    assertTrue(e.getMessage.contains("catalogOwned") && e.getMessage.contains(path), e.getMessage)
    assertEquals(Seq("catalogOwned"), e.unsupportedFeatures)
  }

  @Test def typeWideningReadsOldFilesAsTheTableType(): Unit = {
    val df = read(table("delta/type-widening"))
    val schema = io.deltalog.schema.DeltaSchema.fromJson(
      io.deltalog.log.DeltaLog.forTable(table("delta/type-widening"), spark.sparkContext.hadoopConfiguration)
        .update().metadata.schemaString)
    assertEquals(schema.map(_.dataType), df.schema.map(_.dataType))
    assertEquals(2L, df.collect().length)
  }

  @Test def previewIntegerToDecimalChangesAreCastFromOldFiles(): Unit = {
    // typeWidening-preview: byte -> decimal(4,1), short -> decimal(6,1) (Spark cannot up-cast these
    // from Parquet); the golden-table twin holds the same values with protocol widenings
    val preview = read(table("delta-kernel-rs/type-widening"))
    assertEquals(DecimalType(4, 1), preview.schema("byte_decimal").dataType)
    assertEquals(rows(read(table("delta/type-widening"))), rows(preview))
  }

  @Test def typeChangesThatCannotBeReadAreATypedError(): Unit = {
    import io.deltalog.spark.read.{TypeWidening, UnsupportedTypeChangeException}
    import io.deltalog.spark.read.TypeWidening.{isCastable, isSupported}
    def changed(from: String, to: DataType, path: Option[String] = None) = {
      val change = new MetadataBuilder().putString("fromType", from).putString("toType", to.typeName)
      path.foreach(change.putString("fieldPath", _))
      StructType(Seq(StructField("c", to, nullable = true,
        new MetadataBuilder().putMetadataArray(TypeWidening.TypeChangesKey, Array(change.build())).build())))
    }
    TypeWidening.checkReadable(changed("integer", LongType), "/t")
    TypeWidening.checkReadable(changed("byte", DecimalType(4, 1)), "/t")
    val e = assertThrows(classOf[UnsupportedTypeChangeException], () => TypeWidening.checkReadable(changed("string", IntegerType), "/t"))
    assertTrue(e.getMessage.contains("'c'") && e.getMessage.contains("string") && e.getMessage.contains("/t"), e.getMessage)
    assertThrows(classOf[UnsupportedTypeChangeException], () => TypeWidening.checkReadable(changed("long", IntegerType), "/t"))
    assertTrue(isSupported(ByteType, DecimalType(11, 1)))
    assertFalse(isSupported(ByteType, DecimalType(4, 1)))
    assertTrue(isCastable(ByteType, DecimalType(4, 1)))
    assertFalse(isCastable(ByteType, DecimalType(3, 1)))
    assertTrue(isSupported(LongType, DecimalType(21, 1)))
    assertFalse(isSupported(LongType, DecimalType(20, 1)))
    assertTrue(isSupported(DecimalType(10, 2), DecimalType(20, 5)))
    assertFalse(isSupported(DecimalType(10, 2), DecimalType(10, 3)))
    assertTrue(isSupported(DateType, TimestampNTZType))
    assertFalse(isSupported(LongType, IntegerType))
  }

  @Test def typeWideningInNestedFields(): Unit = {
    val df = read(table("delta/type-widening-nested"))
    assertEquals(Set(1L, Long.MaxValue), df.select("struct.a").collect().map(_.getLong(0)).toSet)
  }

  @Test def columnarBatchScanIsKeptWithoutDeletionVectors(): Unit = {
    def scan(df: org.apache.spark.sql.DataFrame) = df.queryExecution.executedPlan.collectFirst {
      case s: org.apache.spark.sql.execution.FileSourceScanExec => s
    }.get
    val plain = scan(read(table("delta/basic-with-checkpoint")))
    assertTrue(plain.supportsColumnar, "vectorized batches for a table without DVs")
    assertEquals("DeltalogParquet", plain.relation.fileFormat.toString)
    val withDv = scan(read(table("delta/basic-dv-no-checkpoint")))
    assertFalse(withDv.supportsColumnar, "rows (filtered by DV) for a table with DVs")
  }

  @Test def emptySnapshotReadsNoRows(): Unit = {
    val df = read(table("delta-kernel-rs/canonicalized-paths-normal-a/delta"))
    assertEquals(0L, df.count())
  }

  /** Copies the files of `from` that `to` lacks (what another writer adds to a table). */
  private def copyMissing(from: java.nio.file.Path, to: java.nio.file.Path): Unit =
    Files.walk(from).sorted().forEach { p =>
      val t = to.resolve(from.relativize(p).toString)
      if (Files.isDirectory(p)) Files.createDirectories(t) else if (!Files.exists(t)) Files.copy(p, t)
    }

  private def ids(path: String): Seq[Long] = read(path).collect().map(_.getLong(0)).toSeq.sorted

  @Test def everyLoadSeesWhatOtherWritersDid(): Unit = {
    val base = TestDirs.create("deltalog-fresh-")
    val t = base.resolve("t")
    spark.range(0, 3).write.format("deltalog").save(t.toString)
    assertEquals(Seq(0L, 1L, 2L), ids(t.toString))

    // another writer (another JVM, as far as this one's cached log knows) appends
    val other = base.resolve("other")
    copyMissing(t, other)
    spark.range(3, 5).write.format("deltalog").mode("append").save(other.toString)
    copyMissing(other, t)
    assertEquals(Seq(0L, 1L, 2L, 3L, 4L), ids(t.toString))

    // the table is deleted and written again elsewhere: same versions, other commits and files
    val again = base.resolve("again")
    spark.range(100, 102).write.format("deltalog").save(again.toString)
    spark.range(102, 103).write.format("deltalog").mode("append").save(again.toString)
    io.deltalog.log.LogTestSupport.deleteRecursively(t)
    Files.move(again, t)
    assertEquals(Seq(100L, 101L, 102L), ids(t.toString))
    io.deltalog.log.LogTestSupport.deleteRecursively(base)
  }
}
