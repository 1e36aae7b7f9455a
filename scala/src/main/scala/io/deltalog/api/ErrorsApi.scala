package io.deltalog.api

/**
 * Errors across py4j. `raise` throws the given throwable from the JVM, so a Python caller sees it
 * exactly as it sees an engine error (a `Py4JJavaError` that deltalog's Python translation turns
 * into the typed `deltalog.exceptions` error). With the one-`String` constructors of the deltalog
 * exceptions this tests the translation the way delta-spark's exception tests do:
 * `ErrorsApi.raise(jvm.io.deltalog.exceptions.TableNotFoundException("msg"))`.
 */
object ErrorsApi {
  def raise(error: Throwable): Unit = throw error

  /** `error` thrown as the cause of a Spark task-failure style wrapper (`SparkException`). */
  def raiseWrapped(error: Throwable): Unit =
    throw new org.apache.spark.SparkException(s"Job aborted due to stage failure: ${error}", error)
}
