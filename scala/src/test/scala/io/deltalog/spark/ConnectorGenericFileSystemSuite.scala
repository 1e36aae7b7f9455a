package io.deltalog.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.DataFrame
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.log.{GenericTestFileSystem, LogStore, LogTestSupport}

/**
 * `spark.read/write.format("deltalog")` on `dltest:` paths: a Hadoop file system that is not
 * `file:` (see [[GenericTestFileSystem]]), so data files are written by Spark's committer through
 * it, the log through deltalog's generic store, and data files and deletion vectors are read
 * through Hadoop streams. The same operations on a `file:` path are the oracle.
 */
class ConnectorGenericFileSystemSuite {
  private def spark = SparkTestSession.spark

  /** Runs `body` with `dltest:` registered in the session (and commits allowed on it). */
  private def withGenericStore[T](body: => T): T = {
    val hc = spark.sparkContext.hadoopConfiguration
    hc.set(s"fs.${GenericTestFileSystem.Scheme}.impl", classOf[GenericTestFileSystem].getName)
    hc.setBoolean(s"fs.${GenericTestFileSystem.Scheme}.impl.disable.cache", true)
    spark.conf.set(LogStore.AllowUnsafeKey, "true")
    try body finally spark.conf.unset(LogStore.AllowUnsafeKey)
  }

  private def rows(df: DataFrame): Seq[String] = df.collect().toSeq.map(_.toString).sorted

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
      val inputs = spark.read.format("deltalog").load(generic).inputFiles
      assertTrue(inputs.nonEmpty && inputs.forall(_.startsWith(GenericTestFileSystem.Scheme + ":")), inputs.mkString(", "))
      for (v <- 0 to 3) {
        val g = rows(spark.read.format("deltalog").option("versionAsOf", v.toString).load(generic))
        assertEquals(rows(spark.read.format("deltalog").option("versionAsOf", v.toString).load(local)), g, s"v$v")
      }
      assertEquals(Seq("[2,b]", "[4,b]", "[5,c]", "[6,a]", "[7,d]"), rows(spark.read.format("deltalog").load(generic)))
      // The table written through the generic store is an ordinary table on disk.
      assertEquals(rows(spark.read.format("deltalog").load(generic)),
        rows(spark.read.format("deltalog").load(dir.resolve("g").toString)))
      assertEquals(rows(spark.read.format("deltalog").load(generic).where("p = 'b'")), Seq("[2,b]", "[4,b]"))
    } finally TestDirs.deleteRecursively(dir)
  }

  @Test def corpusDeletionVectorTablesReadTheSameThroughAGenericFileSystem(): Unit = withGenericStore {
    val root = LogTestSupport.corpusRoot
    val manifest = new ObjectMapper().readTree(root.resolve("manifest.json").toFile).elements().asScala.toSeq
    val dvTables = manifest.filter { e =>
      e.get("data_present").asBoolean() && !e.get("must_fail").asBoolean() &&
        e.get("exercises").elements().asScala.exists(_.asText() == "deletion-vectors")
    }
    assertTrue(dvTables.size >= 3, s"only ${dvTables.size} deletion-vector tables")
    var compared = 0
    dvTables.foreach { e =>
      val table = root.resolve(e.get("table_path").asText())
      val viaFile = scala.util.Try(rows(spark.read.format("deltalog").load(table.toString)))
      val viaGeneric = scala.util.Try(rows(spark.read.format("deltalog").load(GenericTestFileSystem.uri(table))))
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
