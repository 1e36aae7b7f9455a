package io.deltalog.spark

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogUtils}
import org.apache.spark.sql.connector.catalog.{Identifier, Table, TableCatalog, TableChange}
import org.apache.spark.sql.types.{DataType, StructType}

import io.deltalog.commands.{ColumnMappingWriter, InvalidWriteException, WriteOptions}
import io.deltalog.log.DeltaLog
import io.deltalog.actions.Metadata
import io.deltalog.protocol.{ClientCapabilities, Protocol, TableFeature}
import io.deltalog.spark.read.DeltalogReader
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * ALTER TABLE on a deltalog table. What the table is lives in its log, so:
 *
 *  - SET / UNSET TBLPROPERTIES and COMMENT are one metadata commit (`SET TBLPROPERTIES`,
 *    `UNSET TBLPROPERTIES`, as delta-spark records them); the metastore entry is not changed;
 *  - SET LOCATION changes the entry only, to a location that holds a Delta table with the same
 *    schema (`DELTA_SET_LOCATION_SCHEMA_MISMATCH` otherwise); nothing is written to either table;
 *  - ADD COLUMNS (FIRST / AFTER, nested fields) is one metadata commit ([[AddColumns]]);
 *  - CLUSTER BY (cols) / CLUSTER BY NONE is one `CLUSTER BY` commit of the clustering domain ([[AlterClusterBy]]);
 *  - ALTER COLUMN (type, comment, position, DROP NOT NULL, defaults) is one metadata commit
 *    ([[ChangeColumn]], [[TypeChange]]), as are RENAME COLUMN and DROP COLUMN(S) on tables with
 *    column mapping ([[RenameDropColumns]]);
 *  - other changes are refused before anything is written.
 *
 * @param entry the metastore entry (null for a path table)
 */
private[spark] final class DeltalogAlterTable(
    catalog: DeltalogCatalog,
    ident: Identifier,
    entry: CatalogTable,
    table: DeltalogTable) {

  private val name = table.name()

  def apply(changes: Seq[TableChange]): Table = {
    val (locationChanges, rest) = changes.partition {
      case s: TableChange.SetProperty => s.property() == TableCatalog.PROP_LOCATION
      case _ => false
    }
    val sets = rest.collect { case s: TableChange.SetProperty => s }
    val unsets = rest.collect { case r: TableChange.RemoveProperty => r }
    val adds = rest.collect { case a: TableChange.AddColumn => a }
    val renames = rest.collect { case r: TableChange.RenameColumn => r }
    val drops = rest.collect { case d: TableChange.DeleteColumn => d }
    val clusterBys = rest.collect { case c: TableChange.ClusterBy => c }
    val alters = rest.collect {
      case c @ (_: TableChange.UpdateColumnType | _: TableChange.UpdateColumnNullability |
          _: TableChange.UpdateColumnComment | _: TableChange.UpdateColumnPosition |
          _: TableChange.UpdateColumnDefaultValue) => c.asInstanceOf[TableChange.ColumnChange]
    }
    val known = sets.size + unsets.size + adds.size + renames.size + drops.size + alters.size + clusterBys.size
    if (known != rest.size) {
      val c = rest.find(c => !(sets ++ unsets ++ adds ++ renames ++ drops ++ alters ++ clusterBys).exists(_ eq c)).get
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", name,
        s"ALTER TABLE $name: ${c.getClass.getSimpleName} is not supported by deltalog yet; nothing was changed. " +
          "Supported: SET/UNSET TBLPROPERTIES, ADD/DROP/RENAME COLUMN, ALTER COLUMN, SET LOCATION, CLUSTER BY.")
    }
    val kinds = Seq(adds, renames, drops, alters, clusterBys).count(_.nonEmpty) + (if (sets.nonEmpty || unsets.nonEmpty) 1 else 0)
    if (kinds > 1 || renames.size > 1) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", name,
        s"ALTER TABLE $name: column and property changes of different kinds go in separate statements; " +
          "nothing was changed.")
    }
    clusterBys.foreach(c => new AlterClusterBy(name, table.spark, () => start()).apply(c))
    if (clusterBys.nonEmpty) DeltalogTable.refreshCaches(table.spark, table.path)
    if (adds.nonEmpty) addColumns(adds)
    if (alters.nonEmpty) changeColumns(alters)
    renames.foreach(r => columnCommit((txn, s, deps) => Some(new RenameDropColumns(name, txn.metadata, s, deps).rename(r))))
    if (drops.nonEmpty) columnCommit { (txn, s, deps) =>
      AlterClusterBy.refuseDroppingClusteringColumns(name, txn.snapshot, drops)
      new RenameDropColumns(name, txn.metadata, s, deps).drop(drops)
    }
    if (sets.nonEmpty && unsets.nonEmpty) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_ALTER_TABLE", name,
        s"ALTER TABLE $name: set and unset properties in two statements.")
    }
    if (sets.nonEmpty) setProperties(sets.map(s => s.property() -> s.value()).toMap)
    if (unsets.nonEmpty) unsetProperties(unsets.map(_.property()))
    locationChanges.lastOption.foreach { case s: TableChange.SetProperty => setLocation(s.value()) }
    catalog.loadTable(ident)
  }

  private def start(): OptimisticTransaction = {
    val txn = OptimisticTransaction.start(DeltaLog.uncached(table.path, DeltalogReader.hadoopConf(table.spark, Map.empty)))
    Protocol.checkCanWrite(txn.protocol, ClientCapabilities.deltalog, name)
    txn
  }

  private def setProperties(raw: Map[String, String]): Unit = {
    val comment = raw.get(TableCatalog.PROP_COMMENT)
    val props = DeltalogTableCreation.userProperties(raw - TableCatalog.PROP_COMMENT)
    val txn = start()
    val m = txn.metadata
    txn.updateMetadata(ColumnMappingModeChange(name, m, m.copy(configuration = m.configuration ++ props,
      description = comment.orElse(m.description))))
    txn.commit(Nil, Operation.setTableProperties(props ++ comment.map("comment" -> _)))
    DeltalogTable.refreshCaches(table.spark, table.path)
  }

  private def unsetProperties(keys: Seq[String]): Unit = {
    val txn = start()
    val m = txn.metadata
    val canonical = keys.map(WriteOptions.canonicalKey)
    val unsetComment = keys.contains(TableCatalog.PROP_COMMENT)
    txn.updateMetadata(m.copy(configuration = m.configuration -- canonical,
      description = if (unsetComment) None else m.description))
    txn.commit(Nil, Operation.unsetTableProperties(canonical, ifExists = true))
    DeltalogTable.refreshCaches(table.spark, table.path)
  }

  /** ADD COLUMNS: one metadata commit (`ADD COLUMNS`, delta-spark's parameters); column mapping assigns ids. */
  private def addColumns(adds: Seq[TableChange.AddColumn]): Unit = {
    val txn = start()
    val m = txn.metadata
    val (schema, params) = AddColumns(name, DataType.fromJson(m.schemaString).asInstanceOf[StructType], adds)
    val (mapped, conf) =
      if (!ColumnMappingWriter.enabled(m.configuration)) (schema, m.configuration)
      else {
        val (s, maxId) = ColumnMappingWriter.assignIds(schema, m.configuration)
        (s, m.configuration + (ColumnMappingWriter.MaxIdKey -> maxId.toString))
      }
    txn.updateMetadata(m.copy(schemaString = mapped.json, configuration = conf))
    txn.commit(Nil, Operation("ADD COLUMNS", Map("columns" -> params), changesData = false))
    DeltalogTable.refreshCaches(table.spark, table.path)
  }

  /** ALTER COLUMN changes ([[ChangeColumn]]): one `CHANGE COLUMN(S)` metadata commit. */
  private def changeColumns(changes: Seq[TableChange.ColumnChange]): Unit =
    columnCommit { (txn, schema, deps) =>
      val defaults = txn.protocol.isFeatureSupported(TableFeature.AllowColumnDefaults)
      val (out, op) = new ChangeColumn(name, txn.metadata.configuration, defaults, deps)(schema, changes)
      Some((txn.metadata.copy(schemaString = out.json), op))
    }

  /**
   * One metadata commit computed by `change` from the transaction (its metadata and protocol), the
   * table schema and the expressions that depend on columns; nothing is committed when it returns None.
   */
  private def columnCommit(
      change: (OptimisticTransaction, StructType, ColumnDependencies) => Option[(Metadata, Operation)]): Unit = {
    val txn = start()
    val m = txn.metadata
    val schema = DataType.fromJson(m.schemaString).asInstanceOf[StructType]
    val deps = new ColumnDependencies(name, table.spark.sessionState.sqlParser, schema, m.configuration)
    change(txn, schema, deps).foreach { case (next, op) =>
      txn.updateMetadata(next)
      txn.commit(Nil, op)
      DeltalogTable.refreshCaches(table.spark, table.path)
    }
  }

  private def setLocation(location: String): Unit = {
    if (entry == null) {
      throw new InvalidWriteException("DELTA_UNSUPPORTED_PATH_TABLE_STATEMENT", name,
        s"ALTER TABLE $name SET LOCATION works on catalog tables; $name is a path.")
    }
    val target = DeltalogCatalog.latest(DeltaLog.forTable(location, DeltalogReader.hadoopConf(table.spark, Map.empty)))
      .getOrElse {
      throw new InvalidWriteException("DELTA_TABLE_NOT_FOUND", name,
        s"ALTER TABLE $name SET LOCATION '$location': the location holds no Delta table; nothing was changed.")
      }
    val current = try Some(table.schema) catch { case NonFatal(_) => None }
    val next = DeltalogReader.sparkSchema(target)
    val bypass = table.spark.conf.getOption(DeltalogAlterTable.BypassSchemaCheck).exists(_.equalsIgnoreCase("true"))
    if (!bypass && current.exists(c => !DataType.equalsStructurally(c, next, ignoreNullability = true) ||
        c.fieldNames.toSeq != next.fieldNames.toSeq)) {
      throw new InvalidWriteException("DELTA_SET_LOCATION_SCHEMA_MISMATCH", name,
        s"ALTER TABLE $name SET LOCATION '$location': the table there has schema ${next.toDDL}, this table has " +
          s"${current.get.toDDL}; nothing was changed. Set ${DeltalogAlterTable.BypassSchemaCheck}=true to move it anyway.")
    }
    catalog.sessionCatalog.alterTable(entry.copy(storage =
      entry.storage.copy(locationUri = Some(CatalogUtils.stringToURI(location)))))
    catalog.sessionCatalog.refreshTable(catalog.v1Identifier(ident))
  }
}

object DeltalogAlterTable {
  /** delta-spark's switch for moving a table to a location whose schema differs. */
  val BypassSchemaCheck = "spark.databricks.delta.alterLocation.bypassSchemaCheck"
}
