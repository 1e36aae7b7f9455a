package io.deltalog.api

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.commands.GenerateCommand

/** py4j entry point of `DeltaTable.generate(mode)`. */
object GenerateApi {
  def generate(spark: SparkSession, path: String, tableName: String, mode: String): Unit =
    GenerateCommand.run(spark.asInstanceOf[ClassicSession], path, Option(tableName), mode)
}
