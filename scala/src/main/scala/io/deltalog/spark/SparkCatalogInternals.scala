// Lives under io/deltalog/spark (the catalog owns it) but in a package below org.apache.spark.sql,
// the only place Spark's `private[sql]` V1Table (what the session catalog returns) can be matched.
package org.apache.spark.sql.deltalog

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession => ClassicSession}
import org.apache.spark.sql.connector.catalog.{CatalogManager, CatalogPlugin, Identifier, LookupCatalog, Table, V1Table}

/** The session catalog's view of a table that Spark keeps private. */
object SparkCatalogInternals {
  /** The metastore entry behind a table the session catalog loaded, if it is one. */
  def v1CatalogTable(t: Table): Option[CatalogTable] = t match {
    case V1Table(ct) => Some(ct)
    case _ => None
  }

  /** The rows of an analyzed plan as a DataFrame (what Spark's own write commands hand their sources). */
  def dataFrame(session: SparkSession, plan: LogicalPlan): DataFrame =
    Dataset.ofRows(session.asInstanceOf[ClassicSession], plan)

  /** The catalog and identifier a multi-part table name resolves to in `session` (current catalog and namespace applied). */
  def catalogAndIdentifier(session: SparkSession, parts: Seq[String]): Option[(CatalogPlugin, Identifier)] = {
    val lookup = new LookupCatalog {
      override protected lazy val catalogManager: CatalogManager =
        session.asInstanceOf[ClassicSession].sessionState.catalogManager
    }
    parts match {
      case lookup.CatalogAndIdentifier(c, i) => Some((c, i))
      case _ => None
    }
  }
}
