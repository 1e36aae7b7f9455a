package io.deltalog.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.parser.ParserInterface

import io.deltalog.exceptions.TableNotFoundException

/**
 * The table a deltalog statement names: a quoted path (`'/data/events'`), a path table
 * (`delta.`/data/events``, `deltalog.`/data/events``, `` `/data/events` ``) or a table name of the
 * session catalog (a deltalog table: its location comes from the catalog, everything else from the log).
 */
final case class TableTarget(path: Option[String], table: Option[TableIdentifier]) {

  /** The table's location and, for a catalog table, its qualified name. */
  def resolve(spark: SparkSession, statement: String): (String, Option[String]) = path match {
    case Some(p) => (p, None)
    case None =>
      val ident = table.get
      val meta = spark.sessionState.catalog.getTableMetadata(ident)
      val provider = meta.provider.getOrElse("")
      if (!DeltalogTable.isDeltalogProvider(provider) && !provider.equalsIgnoreCase("delta")) {
        throw new TableNotFoundException(ident.unquotedString,
          s"$statement needs a deltalog table and ${meta.identifier.unquotedString} is a '$provider' table")
      }
      val location = meta.storage.locationUri.map(_.toString).getOrElse(
        throw new TableNotFoundException(ident.unquotedString, s"the catalog has no location for it ($statement)"))
      (location, Some(meta.identifier.copy(catalog = Some("spark_catalog")).unquotedString))
  }
}

object TableTarget {
  private val Quoted = """(?s)^(['"])(.*)\1$""".r
  private val PathTable = """(?is)^(?:delta|deltalog)\.`(.*)`$""".r
  private val BackquotedPath = """(?s)^`(.*[/\\].*)`$""".r

  /** The target named by `text` (as written in the statement). */
  def parse(text: String, parser: ParserInterface): TableTarget = text.trim match {
    case Quoted(_, p) => TableTarget(Some(p), None)
    case PathTable(p) => TableTarget(Some(p), None)
    case BackquotedPath(p) => TableTarget(Some(p), None)
    case name => TableTarget(None, Some(parser.parseTableIdentifier(name)))
  }
}
