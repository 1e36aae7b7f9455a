package io.deltalog.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.connector.catalog.{Column, Identifier, StagedTable, SupportsWrite, Table, TableCapability,
  TableInfo}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}

/** Which statement staged a table. */
sealed abstract class StageKind(val sql: String)
object StageKind {
  case object Create extends StageKind("CREATE TABLE")
  case object Replace extends StageKind("REPLACE TABLE")
  case object CreateOrReplace extends StageKind("CREATE OR REPLACE TABLE")
}

/**
 * A deltalog table being created or replaced by CREATE / REPLACE TABLE [AS SELECT], `saveAsTable`
 * or `writeTo(...).create/replace/createOrReplace`. Spark writes the query's rows to it (they are
 * kept, not written) and then commits it: [[DeltalogTableCreation]] writes the data and the new
 * metadata in one deltalog commit, then registers a new table in the metastore. Until then
 * nothing exists, so an aborted statement leaves nothing behind.
 */
class StagedDeltalogTable(
    catalog: DeltalogCatalog,
    val ident: Identifier,
    val info: TableInfo,
    val kind: StageKind)
  extends StagedTable with SupportsWrite {

  /** The rows, save mode and write options handed over by Spark's write of the statement's query. */
  private var pending: Option[(DataFrame, SaveMode, Map[String, String])] = None

  override def name(): String = ident.toString
  override def columns(): Array[Column] = info.columns()
  override def partitioning(): Array[Transform] = info.partitions()
  override def properties(): util.Map[String, String] = info.properties()
  override def capabilities(): util.Set[TableCapability] = DeltalogTable.Capabilities

  override def newWriteBuilder(writeInfo: LogicalWriteInfo): WriteBuilder =
    new DeltalogWriteBuilder(name(), writeInfo.options().asCaseSensitiveMap().asScala.toMap,
      (data, mode, params) => pending = Some((data, mode, params)))

  override def commitStagedChanges(): Unit = new DeltalogTableCreation(catalog, this, pending).run()

  override def abortStagedChanges(): Unit = pending = None
}

/**
 * CTAS / RTAS of another provider through deltalog's staging catalog: Spark's own non-atomic
 * behaviour (the table is created, or dropped and created, before the write; dropped when the write
 * fails), as if the catalog did not stage.
 */
class BestEffortStagedTable(catalog: DeltalogCatalog, ident: Identifier, table: Table)
  extends StagedTable with SupportsWrite {
  override def name(): String = table.name()
  override def columns(): Array[Column] = table.columns()
  override def partitioning(): Array[Transform] = table.partitioning()
  override def properties(): util.Map[String, String] = table.properties()
  override def capabilities(): util.Set[TableCapability] = table.capabilities()
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = table match {
    case w: SupportsWrite => w.newWriteBuilder(info)
    case _ => throw new UnsupportedOperationException(s"Table ${table.name()} does not support writes")
  }
  override def commitStagedChanges(): Unit = ()
  override def abortStagedChanges(): Unit = catalog.dropTable(ident)
}

object BestEffortStagedTable {
  def create(catalog: DeltalogCatalog, ident: Identifier, info: TableInfo, replace: Boolean): StagedTable = {
    if (replace && catalog.tableExists(ident)) catalog.dropTable(ident)
    val created = Option(catalog.createInSessionCatalog(ident, info)).getOrElse(catalog.loadTable(ident))
    new BestEffortStagedTable(catalog, ident, created)
  }
}
