package io.deltalog.spark

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.{ConformanceCorpus, TestDirs}
import io.deltalog.log.{GenericTestFileSystem, LogStore}

/**
 * `spark.read/write.format("deltalog")` on `dltest:` paths: a Hadoop file system that is not
 * `file:` (see [[GenericTestFileSystem]]), so data files are written by Spark's committer through
 * it, the log through deltalog's generic store, and data files and deletion vectors are read
 * through Hadoop streams. The same operations on a `file:` path are the oracle.
 */
class ConnectorGenericFileSystemSuite {
  import ConnectorReadTestSupport.{read, rows, spark}

  /** Runs `body` with `dltest:` registered in the session (and commits allowed on it). */
  private def withGenericStore[T](body: => T): T = {
    GenericTestFileSystem.register(spark.sparkContext.hadoopConfiguration)
    spark.conf.set(LogStore.AllowUnsafeKey, "true")
    try body finally spark.conf.unset(LogStore.AllowUnsafeKey)
  }

  @Test def writesAppendsReplacesAndTimeTravelsThroughAGenericFileSystem(): Unit = withGenericStore {
    val dir = TestDirs.create("deltalog-generic-")
    try {
      val generic = GenericTestFileSystem.uri(dir.resolve("g"))
      val local = dir.resolve("l").toString
      val s = spark
      import s.implicits._
      def sameOnBoth(op: String => Unit): Unit = { op(generic); op(local) }
      sameOnBoth(p => Seq((1L, "a"), (2L, "b"), (3L, "a")).toDF("id", "p").write.format("deltalog")
        .partitionBy("p").save(p))
      sameOnBoth(p => Seq((4L, "b"), (5L, "c")).toDF("id", "p").write.format("deltalog").mode("append").save(p))
      sameOnBoth(p => Seq((6L, "a")).toDF("id", "p").write.format("deltalog").mode("overwrite")
        .option("replaceWhere", "p = 'a'").save(p))
      sameOnBoth(p => Seq((7L, "d")).toDF("id", "p").write.format("deltalog").mode("append").save(p))

      // the scan really reads through the generic file system
      val inputs = read(generic).inputFiles
      assertTrue(inputs.nonEmpty && inputs.forall(_.startsWith(GenericTestFileSystem.Scheme + ":")), inputs.mkString(", "))
      for (v <- 0 to 3) {
        assertEquals(rows(read(local, "versionAsOf" -> v.toString)), rows(read(generic, "versionAsOf" -> v.toString)), s"v$v")
      }
      assertEquals(Seq("{2,b}", "{4,b}", "{5,c}", "{6,a}", "{7,d}"), rows(read(generic)))
      // The table written through the generic store is an ordinary table on disk.
      assertEquals(rows(read(generic)), rows(read(dir.resolve("g").toString)))
      assertEquals(rows(read(generic).where("p = 'b'")), Seq("{2,b}", "{4,b}"))
    } finally TestDirs.deleteRecursively(dir)
  }

  @Test def corpusDeletionVectorTablesReadTheSameThroughAGenericFileSystem(): Unit = withGenericStore {
    val root = ConformanceCorpus.root
    val dvTables = ConformanceCorpus.manifest.filter { e =>
      e.get("data_present").asBoolean() && !e.get("must_fail").asBoolean() &&
        e.get("exercises").elements().asScala.exists(_.asText() == "deletion-vectors")
    }
    assertTrue(dvTables.size >= 3, s"only ${dvTables.size} deletion-vector tables")
    var compared = 0
    dvTables.foreach { e =>
      val table = root.resolve(e.get("table_path").asText())
      val viaFile = scala.util.Try(rows(read(table.toString)))
      val viaGeneric = scala.util.Try(rows(read(GenericTestFileSystem.uri(table))))
      assertEquals(viaFile.isSuccess, viaGeneric.isSuccess, s"${e.get("id").asText()}: $viaFile vs $viaGeneric")
      if (viaFile.isSuccess) {
        assertEquals(viaFile.get, viaGeneric.get, e.get("id").asText())
        if (!e.get("rows").isNull) assertEquals(e.get("rows").asLong(), viaGeneric.get.size.toLong, e.get("id").asText())
        compared += 1
      }
    }
    assertTrue(compared >= 3, s"only $compared deletion-vector tables read")
    println(s"generic-store connector: $compared deletion-vector tables read identically")
  }
}
