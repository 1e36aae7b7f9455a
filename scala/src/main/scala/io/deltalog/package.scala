package io

/** deltalog: a Delta Lake transaction-log engine for Apache Spark. */
package object deltalog {
  val VERSION: String = "0.1.0"
}
