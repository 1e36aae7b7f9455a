package io.deltalog.spark

import org.apache.spark.sql.connector.catalog.Column
import org.apache.spark.sql.types.{LongType, Metadata, MetadataBuilder, StructField, StructType}

import io.deltalog.commands.InvalidWriteException
import io.deltalog.protocol.Protocol

/**
 * The schema of a CREATE / REPLACE TABLE column list as the log stores it: Spark's column
 * definitions turned into Delta's field metadata, as delta-spark writes it.
 *
 *  - `COMMENT c` → `comment`;
 *  - `GENERATED ALWAYS AS (expr)` → `delta.generationExpression` (the generatedColumns feature);
 *  - `GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(START WITH s INCREMENT BY i)]` →
 *    `delta.identity.start` / `.step` / `.allowExplicitInsert` (identityColumns; BIGINT only, step ≠ 0);
 *  - `DEFAULT expr` → `CURRENT_DEFAULT` (allowColumnDefaults, which the statement must enable with
 *    `'delta.feature.allowColumnDefaults' = 'supported'`, as delta-spark asks).
 */
object ColumnDefinitions {
  val GenerationExpressionKey = "delta.generationExpression"
  val IdentityStartKey = "delta.identity.start"
  val IdentityStepKey = "delta.identity.step"
  val IdentityAllowExplicitInsertKey = "delta.identity.allowExplicitInsert"
  val CurrentDefaultKey = "CURRENT_DEFAULT"
  private val DefaultsFeatureKey = Protocol.FEATURE_PROP_PREFIX + "allowColumnDefaults"

  /** True when a column uses a definition only deltalog's (or delta-spark's) tables keep. */
  def hasDeltaOnlyDefinitions(columns: Array[Column]): Boolean =
    columns.exists(c => c.generationExpression() != null || c.identityColumnSpec() != null)

  def schema(columns: Array[Column], properties: Map[String, String], table: String): StructType =
    StructType(columns.toSeq.map(field(_, properties, table)))

  private def field(c: Column, properties: Map[String, String], table: String): StructField = {
    val md = new MetadataBuilder()
      .withMetadata(Option(c.metadataInJSON()).map(Metadata.fromJson).getOrElse(Metadata.empty))
    Option(c.comment()).foreach(md.putString("comment", _))
    Option(c.generationExpression()).foreach(md.putString(GenerationExpressionKey, _))
    Option(c.identityColumnSpec()).foreach { spec =>
      if (c.dataType() != LongType) {
        throw new InvalidWriteException("DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE", table,
          s"Table $table: identity column ${c.name()} has type ${c.dataType().sql}; identity columns must be BIGINT.")
      }
      if (spec.getStep == 0) {
        throw new InvalidWriteException("DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP", table,
          s"Table $table: identity column ${c.name()} has INCREMENT BY 0; the step must not be 0.")
      }
      md.putLong(IdentityStartKey, spec.getStart).putLong(IdentityStepKey, spec.getStep)
        .putBoolean(IdentityAllowExplicitInsertKey, spec.isAllowExplicitInsert)
    }
    Option(c.defaultValue()).foreach { d =>
      if (!properties.get(DefaultsFeatureKey).exists(_.equalsIgnoreCase("supported")) &&
          !properties.get(DefaultsFeatureKey).exists(_.equalsIgnoreCase("enabled"))) {
        throw new InvalidWriteException("WRONG_COLUMN_DEFAULTS_FOR_DELTA_FEATURE_NOT_ENABLED", table,
          s"Table $table: column ${c.name()} has DEFAULT ${d.getSql}, which needs the allowColumnDefaults table " +
            s"feature; add TBLPROPERTIES ('$DefaultsFeatureKey' = 'supported') to the statement.")
      }
      md.putString(CurrentDefaultKey, d.getSql)
    }
    StructField(c.name(), c.dataType(), c.nullable(), md.build())
  }
}
