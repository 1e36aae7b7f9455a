package io.deltalog.spark

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path => NioPath}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.{DataFrame, Row, SparkSession}

import io.deltalog.TestDirs
import io.deltalog.actions._

/** Helpers of the ConnectorWrite* suites: temp tables, the log as actions, stats as JSON. */
object ConnectorWriteTestSupport {
  def spark: SparkSession = SparkTestSession.spark

  def withTable[T](body: String => T): T = {
    val dir = TestDirs.create("deltalog-write-")
    try body(dir.resolve("t").toString) finally deleteRecursively(dir)
  }

  def deleteRecursively(p: NioPath): Unit = TestDirs.deleteRecursively(p)

  def commitFile(table: String, v: Long): NioPath =
    java.nio.file.Paths.get(table, "_delta_log", f"$v%020d.json")

  def actions(table: String, v: Long): Seq[Action] =
    ActionCodec.parseText(new String(Files.readAllBytes(commitFile(table, v)), StandardCharsets.UTF_8))

  def latestVersion(table: String): Long =
    Files.list(java.nio.file.Paths.get(table, "_delta_log")).iterator().asScala
      .map(_.getFileName.toString).filter(_.endsWith(".json")).map(_.take(20).toLong).max

  def adds(table: String, v: Long): Seq[AddFile] = actions(table, v).collect { case a: AddFile => a }
  def removes(table: String, v: Long): Seq[RemoveFile] = actions(table, v).collect { case r: RemoveFile => r }
  def commitInfo(table: String, v: Long): CommitInfo = actions(table, v).collectFirst { case c: CommitInfo => c }.get
  def metadata(table: String, v: Long): Option[Metadata] = actions(table, v).collectFirst { case m: Metadata => m }

  def stats(a: AddFile): JsonNode = Action.mapper.readTree(a.stats.get)

  /** Live files after replaying every commit (path → add). */
  def liveFiles(table: String): Map[String, AddFile] =
    (0L to latestVersion(table)).foldLeft(Map.empty[String, AddFile]) { (m, v) =>
      actions(table, v).foldLeft(m) {
        case (acc, a: AddFile) => acc + (a.path -> a)
        case (acc, r: RemoveFile) => acc - r.path
        case (acc, _) => acc
      }
    }

  /** Parquet data files on disk (outside `_delta_log` and `_change_data`). */
  def dataFilesOnDisk(table: String): Set[String] = {
    val root = java.nio.file.Paths.get(table)
    Files.walk(root).iterator().asScala.filter(p => p.toString.endsWith(".parquet"))
      .map(p => root.relativize(p).toString)
      .filterNot(p => p.startsWith("_delta_log") || p.startsWith("_change_data")).toSet
  }

  def read(table: String): DataFrame = spark.read.format("deltalog").load(table)

  def sortedRows(df: DataFrame): Seq[String] = df.collect().toSeq.map(rowString).sorted

  def rowString(r: Row): String = r.toSeq.map {
    case null => "null"
    case x: Row => rowString(x)
    case x => x.toString
  }.mkString("[", ",", "]")

  /** Writes version 0 by hand: protocol (1, writerVersion) and a metaData with `schemaJson`. */
  def createByHand(table: String, schemaJson: String, conf: Map[String, String] = Map.empty,
      partitionColumns: Seq[String] = Nil, writerVersion: Int = 6): Unit = {
    val log = java.nio.file.Paths.get(table, "_delta_log")
    Files.createDirectories(log)
    val m = Metadata(schemaString = schemaJson, partitionColumns = partitionColumns, configuration = conf)
    val text = ActionCodec.serialize(Seq(io.deltalog.protocol.Protocol(1, writerVersion), m))
    Files.write(log.resolve("0" * 20 + ".json"), text.getBytes(StandardCharsets.UTF_8))
  }

  def field(name: String, tpe: String, nullable: Boolean = true, metadata: String = "{}"): String =
    s"""{"name":"$name","type":$tpe,"nullable":$nullable,"metadata":$metadata}"""

  def structJson(fields: String*): String = fields.mkString("""{"type":"struct","fields":[""", ",", "]}")
}
