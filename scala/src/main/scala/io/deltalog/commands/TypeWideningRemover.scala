package io.deltalog.commands

import com.fasterxml.jackson.databind.node.JsonNodeFactory
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, MetadataBuilder, StructField, StructType}

import io.deltalog.actions.{Action, Metadata}
import io.deltalog.log.{DeltaLog, Snapshot}
import io.deltalog.protocol.TableFeature
import io.deltalog.schema.DeltaSchema
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * DROP FEATURE `typeWidening` (digest §6.8), as delta-spark 4.4: while
 * `delta.enableTypeWidening` is set or a field of the schema has `delta.typeChanges`, the
 * pre-downgrade
 *  1. unsets `delta.enableTypeWidening` (`UNSET TBLPROPERTIES`, committed even when it was not set),
 *  2. when the schema records type changes, rewrites the files that still store a column with its
 *     older type (`REORG`, [[ReorgMode.RewriteTypeWidening]]; files written after the change are
 *     kept) and
 *  3. removes `delta.typeChanges` from the schema (`DROP FEATURE` with the changed `columns`).
 * Only steps 2 and 3 count as changes that make TRUNCATE HISTORY wait for the retention period. A
 * commit of the history uses the feature when its schema records a type change.
 *
 * `typeWidening-preview` is dropped the same way (as delta-spark 4.4 does; its `delta.typeChanges`
 * also carry the `tableVersion` of each change, removed with them). deltalog does not write tables
 * that support the preview feature, except for the drop's own commits
 * ([[FeatureRemover.writerFeaturesForDrop]]).
 */
private[commands] class TypeWideningRemover(val feature: TableFeature) extends FeatureRemover {
  val EnableKey = "delta.enableTypeWidening"
  val TypeChangesKey = "delta.typeChanges"

  override def writerFeaturesForDrop: Set[String] =
    if (feature == TableFeature.TypeWideningPreview) Set(feature.name) else Set.empty

  def traces(snapshot: Snapshot): Option[String] = {
    val m = snapshot.metadata
    if (FeatureRemovers.isTrue(m.configuration, EnableKey)) Some(s"$EnableKey is true")
    else {
      val changed = changes(schemaOf(m)).map(c => quoted(c._1 :+ c._2.name))
      if (changed.isEmpty) None else Some(s"the schema records type changes of ${changed.mkString(", ")}")
    }
  }

  override def preDowngrade(log: DeltaLog, table: String): Boolean = {
    val start = log.update()
    if (traces(start).isEmpty) return false
    unsetEnable(log)
    val recorded = changes(schemaOf(start.metadata)).nonEmpty
    val rewritten = recorded && {
      val session = FeatureRemovers.rewriteSession(feature, table, "files written before a type change must be " +
        "rewritten with the column's current type")
      new ReorgPurgeCommand(session, log.tablePath.toString, None, Some(table),
        mode = ReorgMode.RewriteTypeWidening).run().removed.nonEmpty
    }
    val metadataRemoved = recorded && removeTypeChanges(log)
    rewritten || metadataRemoved
  }

  override def actionUsesFeature(action: Action): Boolean = action match {
    case m: Metadata => changes(schemaOf(m)).nonEmpty
    case _ => false
  }

  private def schemaOf(m: Metadata): StructType = DeltaSchema.fromJson(m.schemaString)

  private def quoted(path: Seq[String]): String = UnresolvedAttribute(path).name

  /** delta-spark's `AlterTableUnsetPropertiesDeltaCommand(ifExists = true)`: one commit, key present or not. */
  private def unsetEnable(log: DeltaLog): Unit = {
    val txn = OptimisticTransaction.start(log)
    val m = txn.metadata
    txn.updateMetadata(m.copy(configuration = m.configuration - EnableKey))
    txn.commit(Nil, Operation.unsetTableProperties(Seq(EnableKey), ifExists = true))
  }

  /** The fields with `delta.typeChanges` (path of the parent, field), parents before their children. */
  def changes(schema: StructType): Seq[(Seq[String], StructField)] = {
    def inType(path: Seq[String], t: DataType): Seq[(Seq[String], StructField)] = t match {
      case s: StructType => s.fields.toSeq.flatMap { f =>
        (if (f.metadata.contains(TypeChangesKey)) Seq(path -> f) else Nil) ++ inType(path :+ f.name, f.dataType)
      }
      case a: ArrayType => inType(path :+ "element", a.elementType)
      case m: MapType => inType(path :+ "key", m.keyType) ++ inType(path :+ "value", m.valueType)
      case _ => Nil
    }
    inType(Nil, schema)
  }

  /** `schema` without `delta.typeChanges` anywhere. */
  def withoutTypeChanges(schema: StructType): StructType = {
    def inType(t: DataType): DataType = t match {
      case s: StructType => StructType(s.fields.map { f =>
        val meta = if (f.metadata.contains(TypeChangesKey)) {
          new MetadataBuilder().withMetadata(f.metadata).remove(TypeChangesKey).build()
        } else f.metadata
        f.copy(dataType = inType(f.dataType), metadata = meta)
      })
      case a: ArrayType => a.copy(elementType = inType(a.elementType))
      case m: MapType => m.copy(keyType = inType(m.keyType), valueType = inType(m.valueType))
      case other => other
    }
    inType(schema).asInstanceOf[StructType]
  }

  /** delta-spark's `columns` parameter: per changed field its quoted path, type name, nullability, metadata. */
  def columnsJson(changed: Seq[(Seq[String], StructField)]): String = {
    val nodes = JsonNodeFactory.instance
    val arr = nodes.arrayNode()
    changed.foreach { case (path, f) =>
      val o = arr.addObject()
      o.put("name", quoted(path :+ f.name))
      o.put("type", f.dataType.typeName)
      o.put("nullable", f.nullable)
      o.set[com.fasterxml.jackson.databind.JsonNode]("metadata", Action.mapper.readTree(f.metadata.json))
    }
    Action.mapper.writeValueAsString(arr)
  }

  /** Step 3: the schema without `delta.typeChanges`; false when there was none (left by a concurrent commit). */
  private def removeTypeChanges(log: DeltaLog): Boolean = {
    val txn = OptimisticTransaction.start(log)
    val m = txn.metadata
    val schema = schemaOf(m)
    val changed = changes(schema)
    if (changed.isEmpty) return false
    txn.updateMetadata(m.copy(schemaString = DeltaSchema.toJson(withoutTypeChanges(schema))))
    txn.commit(Nil, Operation.dropFeatureColumnMetadata(columnsJson(changed)))
    true
  }
}

private[commands] object TypeWideningRemover extends TypeWideningRemover(TableFeature.TypeWidening) {
  /** `typeWidening-preview`: the same traces and steps. */
  val Preview = new TypeWideningRemover(TableFeature.TypeWideningPreview)
}
