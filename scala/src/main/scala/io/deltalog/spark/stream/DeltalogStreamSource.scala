package io.deltalog.spark.stream

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.types.StructType

import io.deltalog.log.DeltaLog
import io.deltalog.spark.read.{DeltalogReader, InvalidReadOptionException, TimeTravel}

/**
 * `readStream.format("deltalog").load(path)` (through [[io.deltalog.spark.DeltalogDataSource]]'s
 * `StreamSourceProvider`) and `readStream.table(name)` (the session extension gives Spark's
 * streaming relation of a [[io.deltalog.spark.DeltalogTable]] this V1 source, as delta-spark's
 * V2 table does: it has no V2 streaming read of its own).
 */
object DeltalogStreamSource {
  val SchemaTrackingLocation = "schemaTrackingLocation"

  private def open(spark: SparkSession, parameters: Map[String, String]) = {
    val options = CaseInsensitiveMap(parameters)
    val path = options.get("path").filter(_.nonEmpty).getOrElse(
      throw new InvalidReadOptionException(null, "no table path given; use readStream.format(\"deltalog\").load(\"/path/to/table\")"))
    if (TimeTravel.requested(path, options)) {
      throw new InvalidReadOptionException(path, "a streaming read cannot time travel (versionAsOf / timestampAsOf / " +
        "@v); give the first version to stream with startingVersion or startingTimestamp")
    }
    Seq(SchemaTrackingLocation, "schemaLocation").foreach { k =>
      if (options.contains(k)) throw new InvalidReadOptionException(path, s"$k is not supported by deltalog's " +
        "streaming source (schema tracking is not implemented): schema changes stop the stream and are picked up " +
        "on restart; non-additive changes need a new checkpoint")
    }
    val conf = DeltalogReader.hadoopConf(spark, parameters)
    val deltaLog = DeltaLog.forTable(path, conf)
    val table = deltaLog.tablePath.toString
    val sourceOptions = SourceOptions(parameters, table)
    val snapshot = deltaLog.update()
    snapshot.protocol // reader protocol check
    (deltaLog, conf, sourceOptions, snapshot)
  }

  def sourceSchema(spark: SparkSession, userSchema: Option[StructType], parameters: Map[String, String]): StructType = {
    val (deltaLog, _, options, snapshot) = open(spark, parameters)
    val frames = new SourceBatchFrames(spark, deltaLog, snapshot)
    val schema = if (options.readChangeFeed) frames.changeFeedSchema else frames.schema
    userSchema.foreach { s =>
      if (!SourceSchemaChecks.sameSchema(s, schema)) throw new InvalidReadOptionException(deltaLog.tablePath.toString,
        s"a schema was given to the stream (${s.simpleString}) that is not the table's (${schema.simpleString}); " +
          "a Delta table's schema comes from its log: do not call .schema(...) on the reader")
    }
    schema
  }

  def createSource(spark: SparkSession, parameters: Map[String, String]): DeltalogSource = {
    val (deltaLog, conf, options, snapshot) = open(spark, parameters)
    new DeltalogSource(spark, deltaLog, conf, options, snapshot)
  }
}
