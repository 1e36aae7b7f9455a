package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.exceptions.{DeltalogException, TableNotFoundException}
import io.deltalog.log.DeltaLog
import io.deltalog.txn.GenerateSymlinkManifest

/**
 * `GENERATE <mode> FOR TABLE t` / `DeltaTable.generate(mode)`: the one mode is `symlink_format_manifest`
 * (any case), [[GenerateSymlinkManifest.generateFull]] on the table's latest version. Commits nothing.
 */
object GenerateCommand {
  val SymlinkFormatManifest = "symlink_format_manifest"

  def run(spark: ClassicSession, path: String, tableName: Option[String], mode: String): Unit = {
    if (mode == null || mode.toLowerCase(Locale.ROOT) != SymlinkFormatManifest) {
      throw new DeltalogException("DELTA_MODE_NOT_SUPPORTED",
        s"Specified mode '$mode' is not supported. Supported modes are: $SymlinkFormatManifest")
    }
    val log = DeltaLog.uncached(path, spark.sessionState.newHadoopConf())
    val table = tableName.getOrElse(log.tablePath.toString)
    val snapshot = try log.update() catch {
      case _: TableNotFoundException => throw new TableNotFoundException(table, s"GENERATE needs a Delta table at $path")
    }
    if (snapshot.version < 0) throw new TableNotFoundException(table, s"GENERATE needs a Delta table at $path")
    GenerateSymlinkManifest.generateFull(snapshot, table)
  }
}
