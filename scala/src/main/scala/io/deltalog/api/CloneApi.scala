package io.deltalog.api

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.commands.CloneSource
import io.deltalog.spark.{CloneTableCommand, RestoreTableCommand}

/**
 * py4j entry point of `DeltaTable.clone` / `cloneAtVersion` / `cloneAtTimestamp`: clones the table at
 * `sourcePath` (`sourceName`: its catalog name, or null) to `target` (an absolute path, else a table
 * name) as `CREATE [OR REPLACE] TABLE target [SHALLOW | DEEP] CLONE source` does; `version` < 0 and a
 * null `timestamp` clone the latest version. Returns the result row's values (delta-spark's columns).
 */
object CloneApi {
  def clone(spark: SparkSession, sourcePath: String, sourceName: String, version: Long, timestamp: String,
      target: String, isShallow: Boolean, replace: Boolean, properties: java.util.Map[String, String]): Array[Long] = {
    val name = Option(sourceName)
    val ms = Option(timestamp).map(t => RestoreTableCommand.timestampMs(Literal(t),
      spark.asInstanceOf[ClassicSession].sessionState.conf.sessionLocalTimeZone, name.getOrElse(sourcePath)))
    val src = CloneSource(sourcePath, name, Some(version).filter(_ >= 0), ms)
    val props = Option(properties).map(_.asScala.toMap).getOrElse(Map.empty[String, String])
    val result = CloneTableCommand.run(spark, src, CloneTableCommand.targetOf(spark, target), None, isShallow,
      create = true, replace = replace, ifNotExists = false, props)
    result.map(r => Array(r.sourceTableSize, r.sourceNumOfFiles, r.numRemovedFiles, r.numCopiedFiles,
      r.removedFilesSize, r.copiedFilesSize)).getOrElse(Array.empty[Long])
  }
}
