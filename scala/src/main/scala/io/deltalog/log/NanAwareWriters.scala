package io.deltalog.log

import io.deltalog.actions.CommitInfo

/**
 * Which writers count NaN in the float/double statistics they write.
 *
 * Spark orders NaN above every number; a writer computing `maxValues` with Spark's aggregates
 * (delta-spark, Databricks, deltalog, which drops bounds when a NaN is seen) gives a max that is
 * NaN, so `x > c` keeps the file. Writers following the Parquet rule of leaving NaN out of
 * min/max (delta-rs: for `[1.0, NaN]` min = max = 1.0, in the Delta stats and in the Parquet
 * footer alike) give a max that a Spark reader may use to drop the NaN rows. A file's upper
 * bounds on float/double columns are therefore trusted only when the commit that added it was
 * written by a writer known to count NaN:
 *
 *  - `engineInfo` starting with `Apache-Spark/` (delta-spark, deltalog) or `Databricks-Runtime/`;
 *  - a `commitInfo` with neither `engineInfo` nor `clientVersion` (delta-spark before 1.0, when
 *    Spark was the only writer of the format).
 *
 * Every other commit (delta-rs `delta-rs:py-…`, kernels' `Kernel-…/…`, `<unknown>`, no
 * `commitInfo` at all) is NaN-blind until shown otherwise.
 */
object NanAwareWriters {
  private val TrustedPrefixes = Seq("Apache-Spark/", "Databricks-Runtime/")

  /** True when the commit with this `commitInfo` (None: it has none) wrote NaN-aware upper bounds. */
  def countsNaN(commitInfo: Option[CommitInfo]): Boolean = commitInfo match {
    case None => false
    case Some(c) => c.engineInfo match {
      case Some(e) => TrustedPrefixes.exists(e.startsWith)
      case None => c.getString("clientVersion").isEmpty
    }
  }
}
