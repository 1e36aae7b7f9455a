package io.deltalog.spark

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{LongType, StringType, TimestampType}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.spark.ConnectorReadTestSupport._
import io.deltalog.spark.read.InvalidReadOptionException

/** `readChangeFeed=true` on corpus CDF tables (compared with delta-rs in tests/python). */
class ConnectorReadChangeFeedSuite {

  private def cdf(path: String, options: (String, String)*): DataFrame =
    read(path, (Seq("readChangeFeed" -> "true") ++ options): _*)

  /** Rows of the table obtained by replaying the feed: inserts/postimages minus deletes/preimages. */
  private def replayed(feed: DataFrame, dataColumns: Seq[String]): Seq[String] = {
    val rowsOf = (types: Seq[String]) =>
      feed.where(col("_change_type").isin(types: _*)).select(dataColumns.map(col): _*).collect().toSeq.map(canonical)
    val added = rowsOf(Seq("insert", "update_postimage"))
    val removed = rowsOf(Seq("delete", "update_preimage"))
    added.diff(removed).sorted
  }

  @Test def feedSchemaAddsTheThreeColumns(): Unit = {
    val df = cdf(table("delta-rs/cdf-table"), "startingVersion" -> "0")
    val fields = df.schema.fields.takeRight(3).map(f => f.name -> f.dataType).toSeq
    assertEquals(Seq("_change_type" -> StringType, "_commit_version" -> LongType, "_commit_timestamp" -> TimestampType), fields)
    assertEquals(read(table("delta-rs/cdf-table")).columns.toSeq, df.columns.toSeq.dropRight(3))
  }

  @Test def replayingTheFeedGivesTheLatestSnapshot(): Unit = {
    for (rel <- Seq("delta-rs/cdf-table", "delta-rs/cdf-table-non-partitioned", "delta-kernel-rs/cdf-table-with-dv",
        "delta-rs/cdf-table-with-cdc-and-dvs", "delta-kernel-rs/cdf-table-update-ops")) {
      val latest = read(table(rel))
      val feed = cdf(table(rel), "startingVersion" -> "0")
      assertEquals(rows(latest), replayed(feed, latest.columns.toSeq), rel)
    }
  }

  @Test def versionRangeSelectsCommits(): Unit = {
    val path = table("delta-kernel-rs/cdf-table-with-dv")
    val all = cdf(path, "startingVersion" -> "0")
    val some = cdf(path, "startingVersion" -> "1", "endingVersion" -> "3")
    assertEquals(Set(1L, 2L, 3L), some.select("_commit_version").collect().map(_.getLong(0)).toSet)
    assertEquals(rows(all.where(col("_commit_version").between(1, 3))), rows(some))
    // filters on the commit columns
    assertEquals(rows(all.where(col("_commit_version") === 3)), rows(all.where("_commit_version = 3")))
  }

  @Test def invalidRangesAreTypedErrors(): Unit = {
    val path = table("delta-rs/cdf-table")
    assertThrows(classOf[InvalidReadOptionException], () => cdf(path))
    assertThrows(classOf[InvalidReadOptionException], () => cdf(path, "startingVersion" -> "3", "endingVersion" -> "1"))
    assertThrows(classOf[InvalidReadOptionException], () => cdf(path, "startingVersion" -> "x"))
    val late = assertThrows(classOf[InvalidReadOptionException], () => cdf(path, "startingVersion" -> "99"))
    assertTrue(late.getMessage.contains("99"), late.getMessage)
    // CDF was enabled only at version 1 of this table
    val e = assertThrows(classOf[InvalidReadOptionException],
      () => cdf(table("delta-kernel-rs/cdf-column-mapping-name-mode"), "startingVersion" -> "0"))
    assertTrue(e.getMessage.contains("version 0"), e.getMessage)
  }

  @Test def columnMappingTablesReadPhysicalColumns(): Unit = {
    for (mode <- Seq("name", "id")) {
      val path = table(s"delta-kernel-rs/cdf-column-mapping-$mode-mode")
      val feed = cdf(path, "startingVersion" -> "1")
      assertTrue(feed.count() > 0)
      assertEquals(0L, feed.where(col(read(path).columns.head).isNull && col("_change_type") =!= "delete").count(), mode)
    }
  }

  @Test def commitTimestampIsTheInCommitTimestamp(): Unit = {
    val rel = "delta-rs/cdc_ict_table"
    val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
    val log = corpus.resolve(rel).resolve("_delta_log")
    val feed = cdf(table(rel), "startingVersion" -> "0")
    val byVersion = feed.select("_commit_version", "_commit_timestamp").distinct().collect()
      .map(r => r.getLong(0) -> r.getTimestamp(1).getTime).toMap
    assertTrue(byVersion.nonEmpty)
    byVersion.foreach { case (v, ts) =>
      val lines = java.nio.file.Files.readAllLines(log.resolve(f"$v%020d.json")).toArray.map(_.toString)
      val ict = lines.map(mapper.readTree).find(_.has("commitInfo")).map(_.get("commitInfo").get("inCommitTimestamp").asLong())
      assertEquals(ict, Some(ts), s"version $v")
    }
  }
}
