package io.deltalog.commands

import java.math.{BigDecimal => JBigDecimal}
import java.time.LocalDate

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.types._
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.AddFile

/**
 * [[SourceKeys]]: which target files a MERGE skips for `target.k = source.k`, from each file's
 * statistics (or partition value) and the source's collected keys. A file is skipped only when no
 * source key can equal a value of `k` in it; anything unknown keeps the file.
 */
class SourceKeysSuite {
  private def file(stats: String, partitionValues: Map[String, String] = Map.empty): AddFile =
    AddFile(path = "f.parquet", partitionValues = partitionValues, size = 1L, modificationTime = 0L,
      dataChange = true, stats = Option(stats))

  private def bounds(col: String, min: String, max: String, nulls: Long = 0, records: Long = 10): AddFile =
    file(s"""{"numRecords":$records,"minValues":{"$col":$min},"maxValues":{"$col":$max},"nullCount":{"$col":$nulls}}""")

  private def facts(f: AddFile, physical: Map[String, String] = Map.empty): FileFacts = new FileFacts(f, physical)

  private def keys(dt: DataType, values: Seq[Any], partition: Boolean = false): SourceKeys = {
    val a = AttributeReference("k", dt)()
    val ks = SourceKeys.of(Seq((a, a)), values.map(v => Row(v)), if (partition) Set("k") else Set.empty, "UTC")
    assertEquals(1, ks.size)
    ks.head
  }

  @Test def longKeysSkipFilesWithNoKeyInTheirBounds(): Unit = {
    val k = keys(LongType, Seq(150L, 170L, 1000000L, null, 150L))
    assertEquals(3, k.size) // distinct, NULL left out
    assertTrue(k.excludes(facts(bounds("k", "0", "99"))))
    assertFalse(k.excludes(facts(bounds("k", "100", "199"))))
    assertFalse(k.excludes(facts(bounds("k", "170", "170")))) // a bound equal to a key
    assertTrue(k.excludes(facts(bounds("k", "171", "999999"))))
    assertFalse(k.excludes(facts(bounds("k", "999999", "2000000"))))
    assertTrue(k.excludes(facts(bounds("k", "1000001", "3000000"))))
  }

  @Test def unknownBoundsKeepTheFileAndAllNullColumnsSkipIt(): Unit = {
    val k = keys(LongType, Seq(5L))
    assertFalse(k.excludes(facts(file(null))))
    assertFalse(k.excludes(facts(file("""{"numRecords":10}"""))))
    assertFalse(k.excludes(facts(file("""{"numRecords":10,"minValues":{"k":100}}"""))))
    assertFalse(k.excludes(facts(file("not json"))))
    // every value NULL: no row can equal a key
    assertTrue(k.excludes(facts(file("""{"numRecords":10,"nullCount":{"k":10}}"""))))
    assertFalse(k.excludes(facts(file("""{"numRecords":10,"nullCount":{"k":9}}"""))))
  }

  @Test def anEmptyOrAllNullSourceSkipsEveryFileWithBounds(): Unit = {
    val k = keys(IntegerType, Seq(null, null))
    assertEquals(0, k.size)
    assertTrue(k.excludes(facts(bounds("k", "0", "99"))))
  }

  @Test def decimalDateAndStringKeysCompareAsTheirType(): Unit = {
    val d = keys(DecimalType(10, 2), Seq(new JBigDecimal("10.50"), new JBigDecimal("99.99")))
    assertTrue(d.excludes(facts(bounds("k", "10.51", "99.98"))))
    assertFalse(d.excludes(facts(bounds("k", "10.5", "10.5"))))
    assertFalse(d.excludes(facts(bounds("k", "99.00", "100.00"))))

    val dates = keys(DateType, Seq(LocalDate.parse("2024-02-29"), java.sql.Date.valueOf("2024-12-31")))
    assertTrue(dates.excludes(facts(bounds("k", "\"2024-03-01\"", "\"2024-12-30\""))))
    assertFalse(dates.excludes(facts(bounds("k", "\"2024-01-01\"", "\"2024-02-29\""))))

    val s = keys(StringType, Seq("k00150", "k01000"))
    assertTrue(s.excludes(facts(bounds("k", "\"k00000\"", "\"k00099\""))))
    assertFalse(s.excludes(facts(bounds("k", "\"k00100\"", "\"k00199\""))))
    assertTrue(s.excludes(facts(bounds("k", "\"k00151\"", "\"k00999\""))))
  }

  @Test def statisticsAreReadUnderThePhysicalName(): Unit = {
    val k = keys(LongType, Seq(5L))
    val physical = Map("k" -> "col-1a2b")
    assertTrue(k.excludes(facts(bounds("col-1a2b", "10", "20"), physical)))
    assertFalse(k.excludes(facts(bounds("col-1a2b", "0", "20"), physical)))
    assertFalse(k.excludes(facts(bounds("k", "10", "20"), physical))) // the logical name is not a stats key here
  }

  @Test def aPartitionValueMustBeOneOfTheKeys(): Unit = {
    val k = keys(IntegerType, Seq(1, 3), partition = true)
    assertFalse(k.excludes(facts(file(null, Map("k" -> "1")))))
    assertTrue(k.excludes(facts(file(null, Map("k" -> "2")))))
    assertFalse(k.excludes(facts(file(null, Map("k" -> "3")))))
    assertTrue(k.excludes(facts(file(null, Map("k" -> null))))) // NULL equals no key
    assertFalse(k.excludes(facts(file(null, Map("other" -> "2"))))) // no value recorded: kept
    val dates = keys(DateType, Seq(LocalDate.parse("2024-02-29")), partition = true)
    assertFalse(dates.excludes(facts(file(null, Map("k" -> "2024-02-29")))))
    assertTrue(dates.excludes(facts(file(null, Map("k" -> "2024-03-01")))))
  }
}
