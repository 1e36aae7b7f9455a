package io.deltalog.protocol

import java.util.Locale

/**
 * One table feature of the Delta protocol (see docs/protocol-rules.md, "TableFeature registry").
 *
 * Instances are the singletons of [[TableFeature$ TableFeature.all]]; compare them by reference.
 *
 * @param name                  the canonical name, as written into `readerFeatures`/`writerFeatures`
 * @param isReaderWriterFeature true for reader-writer features, false for writer-only ones
 * @param isLegacyFeature       true for the seven features implied by legacy protocol versions
 * @param requiredFeatureNames  names of the features this one depends on
 * @param enabledBy             human description of what enables the feature
 * @param predicate             the metadata condition that enables it automatically, if any; it
 *                              gets the metadata and the protocol being evaluated against
 */
final class TableFeature private (
    val name: String,
    val isReaderWriterFeature: Boolean,
    val isLegacyFeature: Boolean,
    val minReaderVersion: Int,
    val minWriterVersion: Int,
    val requiredFeatureNames: Seq[String],
    val enabledBy: String,
    predicate: Option[(MetadataView, Protocol) => Boolean],
    autoUpdate: Option[Boolean],
    val isRemovable: Boolean,
    historyProtection: Option[Boolean]) {

  /** True when some metadata condition adds this feature automatically. */
  def isAutoEnabledByMetadata: Boolean = predicate.isDefined

  /** Whether `metadata` requires this feature; `protocol` answers "unless X is supported". */
  def metadataRequiresFeatureToBeEnabled(metadata: MetadataLike, protocol: Protocol): Boolean =
    predicate.exists(p => p(MetadataView(metadata), protocol))

  private[protocol] def metadataRequires(view: MetadataView, protocol: Protocol): Boolean =
    predicate.exists(p => p(view, protocol))

  /** May an ALTER on an existing table add this feature because the metadata needs it? */
  def automaticallyUpdateProtocolOfExistingTables: Boolean = autoUpdate.getOrElse(isLegacyFeature)

  /** Does dropping it need history protection (only meaningful for removable features)? */
  def requiresHistoryProtection: Boolean =
    isRemovable && historyProtection.getOrElse(isReaderWriterFeature)

  /** The features this one depends on directly. */
  def requiredFeatures: Set[TableFeature] = requiredFeatureNames.map(TableFeature.get).toSet

  def isWriterOnly: Boolean = !isReaderWriterFeature

  override def toString: String = s"TableFeature($name)"
}

/** The registry of every feature deltalog knows. Names are matched case-insensitively. */
object TableFeature {
  val TABLE_FEATURES_MIN_READER_VERSION = 3
  val TABLE_FEATURES_MIN_WRITER_VERSION = 7

  private val Explicit = "explicit only: delta.feature.<name> = 'supported'"

  private type Pred = (MetadataView, Protocol) => Boolean

  private def legacyWriter(name: String, w: Int, enabledBy: String, p: Pred,
      removable: Boolean = false): TableFeature =
    new TableFeature(name, false, true, 0, w, Nil, enabledBy, Some(p), None, removable, None)

  private def writer(name: String, enabledBy: String = Explicit, p: Pred = null,
      requires: Seq[String] = Nil, removable: Boolean = false, autoUpdate: Option[Boolean] = None,
      history: Option[Boolean] = None): TableFeature =
    new TableFeature(name, false, false, 0, TABLE_FEATURES_MIN_WRITER_VERSION, requires, enabledBy,
      Option(p), autoUpdate.orElse(Option(p).map(_ => true)), removable, history)

  private def readerWriter(name: String, enabledBy: String = Explicit, p: Pred = null,
      requires: Seq[String] = Nil, removable: Boolean = false, autoUpdate: Option[Boolean] = None,
      history: Option[Boolean] = None): TableFeature =
    new TableFeature(name, true, false, TABLE_FEATURES_MIN_READER_VERSION,
      TABLE_FEATURES_MIN_WRITER_VERSION, requires, enabledBy, Option(p),
      autoUpdate.orElse(Option(p).map(_ => true)), removable, history)

  private def supported(p: Protocol, name: String): Boolean =
    p != null && p.isFeatureSupported(get(name))

  // ---- legacy features (implied by protocol versions below table features) ----
  val AppendOnly: TableFeature = legacyWriter("appendOnly", 2, "delta.appendOnly = true",
    (m, _) => m.boolProp("delta.appendOnly"))
  val Invariants: TableFeature = legacyWriter("invariants", 2,
    "a NOT NULL column or a column with delta.invariants metadata",
    (m, _) => m.fieldsThroughStructs.exists(f => m.isNotNullable(f) || m.metadataHas(f, "delta.invariants")))
  val CheckConstraints: TableFeature = legacyWriter("checkConstraints", 3,
    "a delta.constraints.<name> table property",
    (m, _) => m.configuration.keys.exists(_.toLowerCase(Locale.ROOT).startsWith("delta.constraints.")),
    removable = true)
  val ChangeDataFeed: TableFeature = legacyWriter("changeDataFeed", 4,
    "delta.enableChangeDataFeed = true", (m, _) => m.boolProp("delta.enableChangeDataFeed"))
  val GeneratedColumns: TableFeature = legacyWriter("generatedColumns", 4,
    "a column with delta.generationExpression metadata",
    (m, _) => m.topLevelFields.exists(f => m.metadataHas(f, "delta.generationExpression")))
  val ColumnMapping: TableFeature = new TableFeature("columnMapping", true, true, 2, 5, Nil,
    "delta.columnMapping.mode = name | id",
    Some((m, _) => m.enumProp("delta.columnMapping.mode", Seq("none", "name", "id"), "none") != "none"),
    None, true, None)
  val IdentityColumns: TableFeature = legacyWriter("identityColumns", 6,
    "an IDENTITY column (delta.identity.* metadata)",
    (m, _) => m.topLevelFields.exists(f => m.metadataHas(f, "delta.identity.start")))

  // ---- table features (writer 7 / reader 3) ----
  val DeletionVectors: TableFeature = readerWriter("deletionVectors", "delta.enableDeletionVectors = true",
    (m, _) => m.boolProp("delta.enableDeletionVectors"), removable = true)
  val RowTracking: TableFeature = writer("rowTracking", "delta.enableRowTracking = true",
    (m, _) => m.boolProp("delta.enableRowTracking"), requires = Seq("domainMetadata"), removable = true)
  val DomainMetadata: TableFeature = writer("domainMetadata",
    "explicit, or as a dependency of rowTracking / clustering", removable = true)
  val TimestampNtz: TableFeature = readerWriter("timestampNtz",
    "a TIMESTAMP_NTZ column (new tables; existing tables need delta.feature.timestampNtz)",
    (m, _) => m.anyType(_ == "timestamp_ntz"), autoUpdate = Some(false))
  val V2Checkpoint: TableFeature = readerWriter("v2Checkpoint", "delta.checkpointPolicy = v2",
    (m, _) => m.enumProp("delta.checkpointPolicy", Seq("classic", "v2"), "classic") == "v2",
    removable = true)
  val IcebergCompatV1: TableFeature = writer("icebergCompatV1", "delta.enableIcebergCompatV1 = true",
    (m, _) => m.boolProp("delta.enableIcebergCompatV1"), requires = Seq("columnMapping"))
  val IcebergCompatV2: TableFeature = writer("icebergCompatV2", "delta.enableIcebergCompatV2 = true",
    (m, _) => m.boolProp("delta.enableIcebergCompatV2"), requires = Seq("columnMapping"))
  val IcebergCompatV3: TableFeature = writer("icebergCompatV3", "delta.enableIcebergCompatV3 = true",
    (m, _) => m.boolProp("delta.enableIcebergCompatV3"), requires = Seq("columnMapping", "rowTracking"))
  val IcebergWriterCompatV1: TableFeature = writer("icebergWriterCompatV1",
    "delta.enableIcebergWriterCompatV1 = true",
    (m, _) => m.boolProp("delta.enableIcebergWriterCompatV1"), requires = Seq("icebergCompatV2"))
  val IcebergWriterCompatV3: TableFeature = writer("icebergWriterCompatV3",
    "delta.enableIcebergWriterCompatV3 = true",
    (m, _) => m.boolProp("delta.enableIcebergWriterCompatV3"), requires = Seq("icebergCompatV3"))
  val Clustering: TableFeature = writer("clustering", "CLUSTER BY at create or ALTER TABLE ... CLUSTER BY",
    requires = Seq("domainMetadata"))
  val VacuumProtocolCheck: TableFeature = readerWriter("vacuumProtocolCheck", removable = true)
  val TypeWidening: TableFeature = readerWriter("typeWidening", "delta.enableTypeWidening = true",
    (m, p) => m.boolProp("delta.enableTypeWidening") && !supported(p, "typeWidening-preview"),
    removable = true)
  val TypeWideningPreview: TableFeature = readerWriter("typeWidening-preview", removable = true)
  val VariantType: TableFeature = readerWriter("variantType", "a VARIANT column",
    (m, p) => m.anyType(_ == "variant") && !supported(p, "variantType-preview"))
  val VariantTypePreview: TableFeature = readerWriter("variantType-preview")
  val VariantShredding: TableFeature = readerWriter("variantShredding", "delta.enableVariantShredding = true",
    (m, p) => m.boolProp("delta.enableVariantShredding") && !supported(p, "variantShredding-preview"),
    requires = Seq("variantType"))
  val VariantShreddingPreview: TableFeature = readerWriter("variantShredding-preview")
  val InCommitTimestamp: TableFeature = writer("inCommitTimestamp", "delta.enableInCommitTimestamps = true",
    (m, _) => m.boolProp("delta.enableInCommitTimestamps"), removable = true)
  val AllowColumnDefaults: TableFeature = writer("allowColumnDefaults")
  val CatalogManaged: TableFeature = readerWriter("catalogManaged", "explicit, by the catalog at CREATE",
    requires = Seq("inCommitTimestamp", "vacuumProtocolCheck"))
  val CatalogOwnedPreview: TableFeature = readerWriter("catalogOwned-preview",
    requires = Seq("inCommitTimestamp", "vacuumProtocolCheck"))
  val CoordinatedCommitsPreview: TableFeature = writer("coordinatedCommits-preview",
    "delta.coordinatedCommits.commitCoordinator-preview is set",
    (m, _) => m.configuration.get("delta.coordinatedCommits.commitCoordinator-preview")
      .exists(v => v != null && !v.strip().isEmpty),
    requires = Seq("inCommitTimestamp", "vacuumProtocolCheck"), removable = true)
  val CheckpointProtection: TableFeature = writer("checkpointProtection",
    "added by DROP FEATURE of a reader-writer feature", removable = true)
  val MaterializePartitionColumns: TableFeature = writer("materializePartitionColumns",
    "delta.enableMaterializePartitionColumnsFeature = true",
    (m, _) => m.boolProp("delta.enableMaterializePartitionColumnsFeature"), removable = true)
  val Collations: TableFeature = writer("collations",
    "a column with a non-default collation (__COLLATIONS metadata)",
    (m, _) => m.allFields.exists(f => m.metadataHas(f, "__COLLATIONS")), requires = Seq("domainMetadata"))
  /** Older name of [[Collations]]; explicit only, tables written with it stay readable. */
  val CollationsPreview: TableFeature = writer("collations-preview", "explicit only (older name of collations)",
    requires = Seq("domainMetadata"))
  val Geospatial: TableFeature = readerWriter("geospatial", "a GEOMETRY or GEOGRAPHY column",
    (m, p) => m.anyType(t => t.startsWith("geometry") || t.startsWith("geography")) &&
      !supported(p, "geospatial-dev"),
    removable = true)
  val GeospatialDev: TableFeature = readerWriter("geospatial-dev", removable = true)
  val RedirectReaderWriterPreview: TableFeature = readerWriter("redirectReaderWriter-preview",
    removable = true, history = Some(false))
  val RedirectWriterOnlyPreview: TableFeature = writer("redirectWriterOnly-preview", removable = true)
  val TimestampNanos: TableFeature = readerWriter("timestampNanos", requires = Seq("timestampNtz"))
  val AdaptiveMetadataPreview: TableFeature = readerWriter("adaptiveMetadata-preview",
    requires = Seq("catalogManaged", "rowTracking", "domainMetadata", "deletionVectors", "columnMapping"))

  /** Every known feature, in registry order (the order of docs/protocol-rules.md). */
  val all: Seq[TableFeature] = Vector(
    AppendOnly, Invariants, CheckConstraints, ChangeDataFeed, GeneratedColumns, ColumnMapping,
    IdentityColumns, DeletionVectors, RowTracking, DomainMetadata, TimestampNtz, V2Checkpoint,
    IcebergCompatV1, IcebergCompatV2, IcebergCompatV3, IcebergWriterCompatV1, IcebergWriterCompatV3,
    Clustering, VacuumProtocolCheck, TypeWidening, TypeWideningPreview, VariantType, VariantTypePreview,
    VariantShredding, VariantShreddingPreview, InCommitTimestamp, AllowColumnDefaults, CatalogManaged,
    CatalogOwnedPreview, CoordinatedCommitsPreview, CheckpointProtection, MaterializePartitionColumns,
    Collations, CollationsPreview, Geospatial, GeospatialDev, RedirectReaderWriterPreview, RedirectWriterOnlyPreview,
    TimestampNanos, AdaptiveMetadataPreview)

  /** The seven features implied by legacy protocol versions. */
  val legacy: Seq[TableFeature] = all.filter(_.isLegacyFeature)

  private val byLowerName: Map[String, TableFeature] =
    all.map(f => f.name.toLowerCase(Locale.ROOT) -> f).toMap
  require(byLowerName.size == all.size, "feature names must be unique ignoring case")

  /** The feature called `name` (case-insensitive), if known. */
  def byName(name: String): Option[TableFeature] =
    if (name == null) None else byLowerName.get(name.toLowerCase(Locale.ROOT))

  /** The feature called `name`; throws `NoSuchElementException` for an unknown name. */
  def get(name: String): TableFeature =
    byName(name).getOrElse(throw new NoSuchElementException(s"unknown table feature '$name'"))

  /** The smallest superset of `features` closed under `requiredFeatures`. */
  def dependencyClosure(features: Iterable[TableFeature]): Set[TableFeature] = {
    var result = features.toSet
    var frontier = result.toList
    while (frontier.nonEmpty) {
      val f = frontier.head
      frontier = frontier.tail
      f.requiredFeatures.foreach { d =>
        if (!result.contains(d)) { result += d; frontier ::= d }
      }
    }
    result
  }

  /** Known features that require `feature` directly. */
  def dependentsOf(feature: TableFeature): Set[TableFeature] =
    all.filter(_.requiredFeatureNames.contains(feature.name)).toSet

  /** Features sorted by name (deterministic iteration). */
  def sortedByName(features: Iterable[TableFeature]): Seq[TableFeature] = features.toSeq.sortBy(_.name)
}
