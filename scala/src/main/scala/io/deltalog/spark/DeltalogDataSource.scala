package io.deltalog.spark

import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode}
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister, RelationProvider}

/**
 * `format("deltalog")`: reads become a file-source relation over the table's snapshot, writes one
 * transaction (see docs/connector-design.md). Neither needs the session extension.
 */
class DeltalogDataSource extends RelationProvider with CreatableRelationProvider with DataSourceRegister {
  override def shortName(): String = "deltalog"

  override def createRelation(sqlContext: SQLContext, parameters: Map[String, String]): BaseRelation =
    io.deltalog.spark.read.DeltalogReader.createRelation(sqlContext.sparkSession, parameters)

  override def createRelation(
      sqlContext: SQLContext,
      mode: SaveMode,
      parameters: Map[String, String],
      data: DataFrame): BaseRelation = {
    val path = io.deltalog.commands.WriteIntoDeltalog.write(sqlContext.sparkSession, mode, parameters, data)
    // The write is committed: a relation that cannot be built must not turn it into an error.
    try createRelation(sqlContext, Map("path" -> path))
    catch {
      case scala.util.control.NonFatal(_) =>
        val ctx = sqlContext
        new BaseRelation {
          override def sqlContext: SQLContext = ctx
          override def schema: org.apache.spark.sql.types.StructType = data.schema
        }
    }
  }
}
