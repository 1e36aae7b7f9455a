package io.deltalog.spark

import java.nio.file.{Files, Paths}
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, udf}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions.{AddFile, PathCodec}
import io.deltalog.exceptions.DeltaConcurrentModificationException
import io.deltalog.log.DeltaLog
import io.deltalog.txn.{OptimisticTransaction, Operation}

/** Another writer commits while a DataFrame write runs (between its transaction start and commit). */
object ConcurrentWriterHook {
  val fired = new AtomicBoolean(true)
  @volatile var action: () => Unit = () => ()

  /** Runs `action` once, from the first row a task of the write evaluates. */
  def arm(a: () => Unit): Unit = { action = a; fired.set(false) }
}

class ConnectorWriteConcurrencySuite {
  import ConnectorWriteTestSupport._

  private val trigger = udf { (x: Long) =>
    if (ConcurrentWriterHook.fired.compareAndSet(false, true)) ConcurrentWriterHook.action()
    x
  }

  private def partitioned(t: String): Unit = {
    val s = spark
    import s.implicits._
    (0L until 6L).map(i => (i, s"p${i % 2}")).toDF("id", "s").write.format("deltalog").partitionBy("s").save(t)
  }

  /** Rows of the file the concurrent writer copied. */
  @volatile private var copiedRows = 0L

  /** Commits (as another writer) a copy of a file of partition p1. */
  private def appendToP1(t: String): () => Unit = () => {
    val src = liveFiles(t).values.find(_.partitionValues.get("s").contains("p1")).get
    copiedRows = stats(src).get("numRecords").asLong()
    val copy = s"s=p1/concurrent-${java.util.UUID.randomUUID()}.parquet"
    Files.copy(Paths.get(t, PathCodec.decodePath(src.path)), Paths.get(t, copy))
    val txn = OptimisticTransaction.start(DeltaLog.uncached(t, new Configuration()))
    txn.commit(Seq(src.copy(path = copy, modificationTime = System.currentTimeMillis())), Operation.write())
  }

  private def newRows(rows: (Long, String)*): DataFrame = {
    val s = spark
    import s.implicits._
    rows.toDF("id", "s").withColumn("id", trigger(col("id")))
  }

  @Test def dynamicOverwriteDoesNotConflictWithAnAppendToAnotherPartition(): Unit = withTable { t =>
    partitioned(t)
    ConcurrentWriterHook.arm(appendToP1(t))
    newRows(100L -> "p0").write.format("deltalog").mode("overwrite").option("partitionOverwriteMode", "dynamic").save(t)
    assertTrue(ConcurrentWriterHook.fired.get())
    assertEquals(2L, latestVersion(t), "the concurrent append is version 1, the overwrite version 2")
    assertEquals(Some(0L), commitInfo(t, 2).readVersion)
    assertEquals(Set("p0"), removes(t, 2).map(_.partitionValues.flatMap(_.get("s")).orNull).toSet)
    // p0 replaced; p1 kept, plus the concurrent copy
    val rows = read(t).select("id", "s").collect()
    assertEquals(Seq(100L), rows.filter(_.getString(1) == "p0").map(_.getLong(0)).toSeq)
    assertEquals(3L + copiedRows, rows.count(_.getString(1) == "p1").toLong)
    assertTrue(copiedRows > 0)
  }

  @Test def staticOverwriteConflictsWithAConcurrentAppend(): Unit = withTable { t =>
    partitioned(t)
    ConcurrentWriterHook.arm(appendToP1(t))
    val e = assertThrows(classOf[DeltaConcurrentModificationException], () =>
      newRows(100L -> "p0").write.format("deltalog").mode("overwrite").save(t))
    assertEquals("DELTA_CONCURRENT_APPEND", e.errorClass)
    assertEquals(1L, latestVersion(t), "only the concurrent append is committed")
    assertEquals(6L + copiedRows, read(t).count())
    assertEquals(liveFiles(t).keySet, dataFilesOnDisk(t), "the files of the lost write are deleted")
  }

  @Test def blindAppendDoesNotConflictWithAConcurrentAppend(): Unit = withTable { t =>
    partitioned(t)
    ConcurrentWriterHook.arm(appendToP1(t))
    newRows(100L -> "p1").write.format("deltalog").mode("append").save(t)
    assertEquals(2L, latestVersion(t))
    assertEquals(Some(true), commitInfo(t, 2).isBlindAppend)
    assertEquals(7L + copiedRows, read(t).count())
  }
}
