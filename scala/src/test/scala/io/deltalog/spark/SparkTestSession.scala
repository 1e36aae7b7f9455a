package io.deltalog.spark

import org.apache.spark.sql.SparkSession

/**
 * The one local SparkSession of a JVM test run (a session costs seconds to start): `local[2]`,
 * UI off, two shuffle partitions, bound to 127.0.0.1. Suites call `SparkTestSession.spark`.
 */
object SparkTestSession {
  lazy val spark: SparkSession = {
    System.setProperty("spark.driver.host", "127.0.0.1")
    System.setProperty("spark.driver.bindAddress", "127.0.0.1")
    SparkSession.builder()
      .master("local[2]")
      .appName("deltalog-jvm-tests")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.sql.session.timeZone", "UTC")
      .getOrCreate()
  }
}
