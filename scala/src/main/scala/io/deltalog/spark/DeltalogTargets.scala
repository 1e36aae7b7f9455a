package io.deltalog.spark

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation
import org.apache.spark.sql.deltalog.SparkCatalogInternals
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * The deltalog table a write names, looked up in the catalog before Spark resolves the statement
 * (the hint rules [[InsertSchemaEvolution]] and [[MergeSchemaEvolution]] need it then).
 */
private[spark] object DeltalogTargets {
  /** `u` as a V2 relation over its deltalog table; None for temp views, streams, other tables, time travel. */
  def lookup(session: SparkSession, u: UnresolvedRelation): Option[(DataSourceV2Relation, DeltalogTable)] =
    if (u.isStreaming ||
        session.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState.catalog.isTempView(u.multipartIdentifier)) None
    else try SparkCatalogInternals.catalogAndIdentifier(session, u.multipartIdentifier) match {
      case Some((c: DeltalogCatalog, ident)) => c.loadTable(ident) match {
        case t: DeltalogTable if t.timeTravel.isEmpty =>
          val options = new CaseInsensitiveStringMap(
            u.options.asCaseSensitiveMap().asScala.toMap.filterNot(_._1.startsWith("__")).asJava)
          Some((DataSourceV2Relation.create(t, Some(c), Some(ident), options), t))
        case _ => None
      }
      case _ => None
    } catch { case NonFatal(_) => None }
}
