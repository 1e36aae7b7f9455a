package io.deltalog.commands

import io.deltalog.actions.Metadata
import io.deltalog.txn.Operation

/**
 * What a catalog statement adds to a [[WriteIntoDeltalog]]: the operation its commit records in
 * the history, and for a statement that creates or replaces the table (CREATE TABLE [AS SELECT],
 * REPLACE TABLE, `saveAsTable`, `writeTo(...).create/replace`) the table's properties and comment.
 *
 * @param operationName e.g. `CREATE TABLE AS SELECT`; None records delta-spark's `WRITE`
 * @param replaceTable  REPLACE semantics on an existing table: the schema, partitioning, properties
 *                      and comment of the statement replace the table's (the protocol never goes down)
 * @param tableSchema   the schema a column list gives the table (CREATE / REPLACE TABLE without a
 *                      query): NOT NULL, generated and identity columns as declared, instead of the
 *                      (nullable) schema of the data written
 * @param clusterBy     CLUSTER BY of the statement (column paths as written), None when it has none
 * @param streamingUpdate the `STREAMING UPDATE` operation of a streaming sink's micro-batch: recorded
 *                      as is, with delta-spark's streaming metrics (`numAddedFiles`, `numRemovedFiles`,
 *                      `numOutputRows`, `numOutputBytes`)
 */
final case class StatementContext(
    operationName: Option[String] = None,
    tableProperties: Map[String, String] = Map.empty,
    description: Option[String] = None,
    isManaged: Boolean = false,
    replaceTable: Boolean = false,
    tableSchema: Option[org.apache.spark.sql.types.StructType] = None,
    clusterBy: Option[Seq[Seq[String]]] = None,
    streamingUpdate: Option[Operation] = None) {

  /**
   * The operation of the commit: delta-spark's `WRITE` (its `partitionBy` is what the writer asked
   * for — `[]` for an INSERT or an append without `partitionBy`, as delta-spark records it — not the
   * table's partitioning), or the statement's own with its parameters.
   */
  def operation(meta: Metadata, mode: String, replaceWhere: Option[String],
      requestedPartitionBy: Seq[String], clusteringColumns: Seq[String] = Nil): Operation = operationName match {
    case _ if streamingUpdate.isDefined => streamingUpdate.get
    case None => Operation.write(mode, requestedPartitionBy, replaceWhere)
    case Some(name) =>
      val created = Operation.createTable(meta.partitionColumns, tableProperties, isManaged, meta.description,
        clusteringColumns)
      created.copy(name = name, changesData = true)
  }
}

object StatementContext {
  val Default: StatementContext = StatementContext()
}
