package io.deltalog.commands

import org.apache.spark.sql.types.{MetadataBuilder, StructType}

import io.deltalog.actions.Metadata

/**
 * After a write that generated identity values: `delta.identity.highWaterMark` of each such
 * column becomes the largest value written (smallest for a negative step), in a new schema.
 */
private[commands] object IdentityHighWaterMarks {
  /** `meta` itself when no mark moves, else a copy with the new schema. */
  def update(meta: Metadata, schema: StructType, written: Seq[WrittenFile], physicalNames: Map[String, String]): Metadata = {
    var changed = false
    val fields = schema.fields.map { f =>
      val bounds = written.flatMap(_.identityBounds.get(physicalNames.getOrElse(f.name, f.name)))
      if (!WriteRules.isIdentity(f) || bounds.isEmpty) f
      else {
        val (_, step, old) = WriteRules.identityParams(f)
        val reached = if (step > 0) bounds.map(_._2).max else bounds.map(_._1).min
        val mark = old.map(o => if (step > 0) math.max(o, reached) else math.min(o, reached)).getOrElse(reached)
        if (old.contains(mark)) f
        else {
          changed = true
          f.copy(metadata = new MetadataBuilder().withMetadata(f.metadata)
            .putLong(WriteRules.IdentityHighWaterMark, mark).build())
        }
      }
    }
    if (changed) meta.copy(schemaString = StructType(fields).json) else meta
  }
}
