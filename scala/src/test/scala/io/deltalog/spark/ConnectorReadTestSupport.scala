package io.deltalog.spark

import java.nio.file.{Path => NioPath}

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.junit.jupiter.api.Assertions._

import io.deltalog.TestDirs
import io.deltalog.spark.read.{DeltalogFileIndex, ListingStats}

/** Helpers of the ConnectorRead* suites: corpus paths, canonical row multisets, listing stats. */
object ConnectorReadTestSupport {
  def spark: SparkSession = SparkTestSession.spark

  /** The conformance corpus (fails with the one message when it is missing: see ConformanceCorpus). */
  def corpus: NioPath = io.deltalog.ConformanceCorpus.root

  def table(rel: String): String = corpus.resolve(rel).toString

  def read(path: String, options: (String, String)*): DataFrame =
    spark.read.format("deltalog").options(options.toMap).load(path)

  /** A value as a canonical string: binary as hex, maps sorted by key, NaN/-0.0 spelled out. */
  def canonical(v: Any): String = v match {
    case null => "null"
    case b: Array[Byte] => b.map("%02x".format(_)).mkString("0x", "", "")
    case r: Row => r.toSeq.map(canonical).mkString("{", ",", "}")
    case m: scala.collection.Map[_, _] => m.toSeq.map { case (k, x) => canonical(k) + "->" + canonical(x) }.sorted.mkString("map(", ",", ")")
    case s: scala.collection.Seq[_] => s.map(canonical).mkString("[", ",", "]")
    case d: java.math.BigDecimal => d.stripTrailingZeros().toPlainString
    case d: scala.math.BigDecimal => d.bigDecimal.stripTrailingZeros().toPlainString
    case other => other.toString
  }

  def rows(df: DataFrame): Seq[String] = df.collect().toSeq.map(canonical).sorted

  /** `actual` and `expected` (columns taken in actual's order, by name) hold the same multiset of rows. */
  def assertSameRows(expected: DataFrame, actual: DataFrame): Unit = {
    val e = expected.select(actual.columns.map(c => expected.col(s"`$c`")): _*)
    assertEquals(rows(e), rows(actual))
  }

  /** Copies a corpus table to a fresh temp directory (tests that change files or mtimes). */
  def copyTable(rel: String): NioPath = {
    val src = corpus.resolve(rel)
    val dst = TestDirs.create("deltalog-read-")
    TestDirs.copyTree(src, dst)
    dst
  }

  /** The file index of the (single) deltalog relation of `df`. */
  def fileIndex(df: DataFrame): DeltalogFileIndex = df.queryExecution.optimizedPlan.collectFirst {
    case LogicalRelation(r: HadoopFsRelation, _, _, _, _) if r.location.isInstanceOf[DeltalogFileIndex] =>
      r.location.asInstanceOf[DeltalogFileIndex]
  }.getOrElse(fail(s"no deltalog relation in ${df.queryExecution.optimizedPlan}"))

  /** Runs `df` and returns what its scan listed, plus Spark's "number of files read" metric. */
  def listing(df: DataFrame): (ListingStats, Long) = {
    df.collect()
    val idx = fileIndex(df)
    val plan = df.queryExecution.executedPlan match {
      case a: org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec => a.executedPlan
      case p => p
    }
    val metric = plan.collectFirst {
      case s: org.apache.spark.sql.execution.FileSourceScanExec => s.metrics("numFiles").value
    }.getOrElse(-1L)
    (idx.lastListing, metric)
  }
}
