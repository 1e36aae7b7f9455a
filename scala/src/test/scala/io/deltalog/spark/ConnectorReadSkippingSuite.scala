package io.deltalog.spark

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.spark.ConnectorReadTestSupport._
import io.deltalog.spark.read.{DataSkipping, FileStats}
import io.deltalog.schema.ColumnMappingMode

/** Data skipping on stats (DataSkipping, FileStats) and partition pruning through Spark scans. */
class ConnectorReadSkippingSuite {

  private val schema = StructType.fromDDL(
    "i INT, s STRING, d DATE, ts TIMESTAMP, dec DECIMAL(10,2), dbl DOUBLE, n STRUCT<x: LONG>, b BOOLEAN")
  private def a(name: String): AttributeReference = {
    val f = schema(name)
    AttributeReference(f.name, f.dataType)()
  }
  private val i = a("i")
  private val s = a("s")
  private val ts = a("ts")

  /** min i=10 max i=20, s in [apple, melon], ts in [2020-01-01T00:00:00.000Z, 2020-01-01T00:00:01.000Z]. */
  private val stats = FileStats.parse(
    """{"numRecords":5,"minValues":{"i":10,"s":"apple","d":"2020-01-01","ts":"2020-01-01T00:00:00.000Z","dec":1.50,"dbl":-1.0,"n":{"x":3}},
      |"maxValues":{"i":20,"s":"melon","d":"2020-12-31","ts":"2020-01-01T00:00:01.000Z","dec":9.99,"dbl":1.0,"n":{"x":4}},
      |"nullCount":{"i":0,"s":2,"d":5,"ts":0,"dec":0,"dbl":0,"n":{"x":0},"b":1}}""".stripMargin).get

  private def keep(e: Expression, st: FileStats = stats): Boolean =
    DataSkipping.compile(Seq(e), schema, ColumnMappingMode.NoMapping).forall(_.keep(st))

  @Test def comparisonsUseMinAndMax(): Unit = {
    assertTrue(keep(EqualTo(i, Literal(10))))
    assertTrue(keep(EqualTo(i, Literal(20))))
    assertFalse(keep(EqualTo(i, Literal(21))))
    assertFalse(keep(EqualTo(Literal(9), i)))
    assertFalse(keep(LessThan(i, Literal(10))))
    assertTrue(keep(LessThanOrEqual(i, Literal(10))))
    assertFalse(keep(GreaterThan(i, Literal(20))))
    assertTrue(keep(GreaterThanOrEqual(i, Literal(20))))
    assertFalse(keep(GreaterThan(Literal(10), i))) // 10 > i  <=>  i < 10
    assertTrue(keep(EqualNullSafe(i, Literal(15))))
    assertFalse(keep(EqualTo(s, Literal(UTF8String.fromString("zebra"), StringType))))
    assertFalse(keep(GreaterThan(a("dec"), Literal(Decimal("9.99"), DecimalType(10, 2)))))
    assertTrue(keep(GreaterThan(a("dec"), Literal(Decimal("9.98"), DecimalType(10, 2)))))
  }

  @Test def timestampMaxIsWidenedToTheEndOfItsMillisecond(): Unit = {
    val at1s = 1577836801000000L // 2020-01-01T00:00:01Z
    assertTrue(keep(GreaterThan(ts, Literal(at1s + 500, TimestampType))))   // within the truncated millisecond
    // a max truncated to 00:00:01.000 stands for values up to 00:00:01.000999, not beyond
    assertTrue(keep(EqualTo(ts, Literal(at1s + 999, TimestampType))))
    assertTrue(keep(GreaterThanOrEqual(ts, Literal(at1s + 999, TimestampType))))
    assertFalse(keep(GreaterThan(ts, Literal(at1s + 999, TimestampType))))
    assertFalse(keep(GreaterThanOrEqual(ts, Literal(at1s + 1000, TimestampType))))
    assertFalse(keep(GreaterThan(ts, Literal(at1s + 1000, TimestampType))))
    assertFalse(keep(LessThan(ts, Literal(1577836800000000L, TimestampType))))
  }

  @Test def inAndStartsWith(): Unit = {
    assertTrue(keep(In(i, Seq(Literal(1), Literal(15)))))
    assertFalse(keep(In(i, Seq(Literal(1), Literal(25)))))
    assertFalse(keep(InSet(i, Set[Any](1, 2, 3))))
    def sw(p: String) = StartsWith(s, Literal(UTF8String.fromString(p), StringType))
    assertTrue(keep(sw("ap")))
    assertTrue(keep(sw("b")))
    assertTrue(keep(sw("mel")))
    assertFalse(keep(sw("melz")))
    assertFalse(keep(sw("aa")))
    assertFalse(keep(sw("n")))
  }

  @Test def nullChecksUseNullCountAndNumRecords(): Unit = {
    assertFalse(keep(IsNull(i)))               // nullCount 0
    assertTrue(keep(IsNull(s)))
    assertTrue(keep(IsNotNull(s)))
    assertFalse(keep(IsNotNull(a("d"))))       // nullCount == numRecords
    assertFalse(keep(EqualTo(a("d"), Literal(18262, DateType)))) // all null: no row compares true
    assertTrue(keep(IsNull(a("b"))))
  }

  @Test def booleanConnectivesAndNegation(): Unit = {
    val no = EqualTo(i, Literal(99))
    val yes = EqualTo(i, Literal(15))
    assertFalse(keep(And(yes, no)))
    assertTrue(keep(Or(yes, no)))
    assertFalse(keep(Or(no, no)))
    assertFalse(keep(Not(GreaterThanOrEqual(i, Literal(10))))) // i < 10
    assertTrue(keep(Not(no)))
    assertFalse(keep(Not(Or(yes, LessThan(i, Literal(100)))))) // !(yes) && i >= 100
    assertFalse(keep(Not(IsNotNull(i))))
    // an unusable side of an OR keeps the file, of an AND is ignored
    val unknown = EqualTo(Add(i, Literal(1)), Literal(0))
    assertTrue(keep(Or(no, unknown)))
    assertFalse(keep(And(no, unknown)))
  }

  @Test def notEqualSkipsOnlyConstantFiles(): Unit = {
    val constant = FileStats.parse("""{"numRecords":3,"minValues":{"i":7},"maxValues":{"i":7},"nullCount":{"i":0}}""").get
    assertFalse(keep(Not(EqualTo(i, Literal(7))), constant))
    assertTrue(keep(Not(EqualTo(i, Literal(8))), constant))
  }

  @Test def nestedColumns(): Unit = {
    val nx = GetStructField(a("n"), 0, Some("x"))
    assertFalse(keep(GreaterThan(nx, Literal(4L))))
    assertTrue(keep(GreaterThan(nx, Literal(3L))))
  }

  @Test def missingOrUnparsableStatsKeepTheFile(): Unit = {
    val none = FileStats.parse("""{"numRecords":5}""").get
    assertTrue(keep(EqualTo(i, Literal(99)), none))
    assertTrue(keep(IsNull(i), none))
    val bad = FileStats.parse("""{"numRecords":5,"minValues":{"i":"x"},"maxValues":{"i":{"y":1}},"nullCount":{"i":"?"}}""").get
    assertTrue(keep(EqualTo(i, Literal(99)), bad))
    assertTrue(FileStats.parse("not json").isEmpty)
    assertTrue(FileStats.parse(null).isEmpty)
    // a type mismatch between literal and column is not used
    assertTrue(keep(EqualTo(i, Literal(99L))))
    // booleans have no min/max
    assertTrue(keep(EqualTo(a("b"), Literal(true))))
  }

  @Test def wideBoundsStillSkipOnBounds(): Unit = {
    val wide = FileStats.parse(
      """{"numRecords":10,"minValues":{"i":0},"maxValues":{"i":9},"nullCount":{"i":0},"tightBounds":false}""").get
    assertFalse(wide.tightBounds)
    assertFalse(keep(GreaterThan(i, Literal(9)), wide))
    assertTrue(keep(GreaterThan(i, Literal(8)), wide))
  }

  // ---------------------------------------------------------------- through Spark scans

  private val parsedStats = table("delta-kernel-rs/parsed-stats")

  /** Asserts the listing counts and that Spark's metric agrees with the files read. */
  private def assertFiles(df: org.apache.spark.sql.DataFrame, total: Long, afterPruning: Long, read: Long): Unit = {
    val (l, metric) = listing(df)
    assertEquals((total, afterPruning, read), (l.totalFiles, l.filesAfterPartitionPruning, l.filesAfterDataSkipping), l.toString)
    assertEquals(read, metric, "Spark's number of files read")
  }

  @Test def skippingOnJsonAndCheckpointStats(): Unit = {
    // six files of 100 rows: ids 1-100, 101-200, ... 501-600 (older ones from the checkpoint's stats)
    val df = read(parsedStats)
    assertFiles(df, 6, 6, 6)
    assertFiles(df.where(col("id") > 450), 6, 6, 2)
    assertFiles(df.where(col("id") === 150), 6, 6, 1)
    assertFiles(df.where(col("id").isin(5, 305)), 6, 6, 2)
    assertFiles(df.where(col("id") < 0 || col("id") > 1000), 6, 6, 0)
    assertFiles(df.where(col("ts_col") >= lit("1970-01-01 00:00:05").cast("timestamp")), 6, 6, 4)
    assertEquals(150L, df.where(col("id") > 450).count())
  }

  @Test def partitionPruningOnTypedValues(): Unit = {
    // four files, partition values -2342342.23423, 0.00004, 234.00000, 2342222.23454
    val df = read(table("delta-kernel-rs/basic-decimal-table/delta"))
    assertFiles(df.where(col("part") > 0), 4, 3, 3)
    assertFiles(df.where(col("part") === lit(BigDecimal("234.00000")).cast("decimal(12,5)")), 4, 1, 1)
    assertFiles(df.where(col("part").isNull), 4, 0, 0)
  }

  @Test def pruningAndSkippingTogether(): Unit = {
    val df = read(table("delta-kernel-rs/data-skipping-partition-and-data-column/delta"))
    // four one-row files (part, id) = (1,0), (1,1), (0,1), (0,0); part is a data column here
    assertFiles(df.where(col("id") === 0), 4, 4, 2)
    assertFiles(df.where(col("id") === 0 && col("part") === 1), 4, 4, 1)
  }

  @Test def skippingAndPruningUnderColumnMappingUsePhysicalNames(): Unit = {
    // one file; stats keyed by physical names (col-<uuid>), as_int = 0, as_date = 2000-01-01
    val df = read(table("delta-kernel-rs/data-skipping-basic-stats-all-types-columnmapping-name/delta"))
    assertFiles(df.where(col("as_int") === 0), 1, 1, 1)
    assertFiles(df.where(col("as_int") > 0), 1, 1, 0)
    assertFiles(df.where(col("as_date") < lit("2000-01-01").cast("date")), 1, 1, 0)
    // partition values keyed by the physical name of "Company Very Short" (BMS, BME)
    val cm = read(table("delta-rs/table_with_column_mapping"))
    val (l, _) = listing(cm.where(col("Company Very Short") === "BME"))
    assertEquals((2L, 1L, 1L), (l.totalFiles, l.filesAfterPartitionPruning, l.filesAfterDataSkipping))
    assertTrue(cm.where(col("Company Very Short") === "BME").count() > 0)
  }

  @Test def skippingOnStatsStoredOnlyAsStructInTheCheckpoint(): Unit = {
    // DBR 10.4 table (writeStatsAsJson=false): 12 one-row files, integer = 0..11, stats only in stats_parsed
    val df = read(table("delta-rs/delta-1.2.1-only-struct-stats"))
    assertFiles(df.where(col("integer") === 5), 12, 12, 1)
    assertFiles(df.where(col("integer") > 8), 12, 12, 3)
    assertFiles(df.where(col("double") < 0), 12, 12, 0)
    assertFiles(df.where(col("timestamp") > lit("2022-10-24 22:59:45").cast("timestamp")), 12, 12, 1)
    assertEquals(3L, df.where(col("integer") > 8).count())
  }
}
