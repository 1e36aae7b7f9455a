package io.deltalog.api

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.{DataType, StructType}

import io.deltalog.spark.ConvertTableCommand

/**
 * py4j entry point of `DeltaTable.convertToDelta(spark, "parquet.`/path`", partitionSchema)`: converts
 * and returns the table's path (for the Python side to open it). `partitionSchema` is a DDL string
 * (`"p INT, q STRING"`), a StructType's JSON (starting with `{`), or null.
 */
object ConvertApi {
  def convertToDelta(spark: SparkSession, identifier: String, partitionSchema: String): String = {
    val parts = Option(partitionSchema).map(_.trim).filter(_.nonEmpty).map { s =>
      if (s.startsWith("{")) DataType.fromJson(s).asInstanceOf[StructType]
      else spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState.sqlParser.parseTableSchema(s)
    }
    ConvertTableCommand.convert(spark, identifier, parts, collectStats = true)._2
  }
}
