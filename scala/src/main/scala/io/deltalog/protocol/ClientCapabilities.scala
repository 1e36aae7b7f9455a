package io.deltalog.protocol

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

/**
 * What a Delta client implements: the highest protocol versions it understands and the features
 * it can read (`readerFeatures`) and write (`writerFeatures`). Used by `Protocol.checkCanRead` /
 * `Protocol.checkCanWrite`.
 */
case class ClientCapabilities(
    maxReaderVersion: Int,
    maxWriterVersion: Int,
    readerFeatures: Set[String],
    writerFeatures: Set[String])

object ClientCapabilities {
  private val legacy: Set[String] = TableFeature.legacy.map(_.name).toSet

  private val readAndWrite: Set[String] = legacy ++ Set(
    "deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck", "domainMetadata",
    "rowTracking", "inCommitTimestamp", "checkpointProtection", "clustering", "allowColumnDefaults")

  /**
   * What this version of deltalog supports (see [[deltalog]]). NOTE: this is the current state of the engine; later
   * issues adjust these sets as features gain read or write support (e.g. writing type widening,
   * variant, IcebergCompat). Keep it in sync with python/deltalog/protocol.py.
   */
  private val released: ClientCapabilities = ClientCapabilities(
    maxReaderVersion = 3,
    maxWriterVersion = 7,
    // Reading also covers features whose data Spark 4.2 reads natively (variants, shredding,
    // geometry) and catalog-managed tables through their published commits.
    readerFeatures = readAndWrite ++ Set("typeWidening", "typeWidening-preview", "variantType",
      "variantType-preview", "variantShredding", "variantShredding-preview", "geospatial", "geospatial-dev",
      "catalogManaged", "icebergCompatV1", "icebergCompatV2", "collations", "collations-preview",
      "materializePartitionColumns"),
    // typeWidening: deltalog's writers never change a column type except ALTER TABLE ... ALTER COLUMN
    // TYPE, which records the change in delta.typeChanges; older files are read up-cast.
    // variantType: variant columns are written by Spark's Parquet writer as the spec's unshredded
    // group (binary `value` + `metadata`), with a nullCount and no min/max (FileStatsCollector);
    // delta-rs 1.x lists it in every table-features protocol it creates, variant column or not.
    writerFeatures = readAndWrite + "typeWidening" + "variantType")

  private val alsoWriting = new scala.util.DynamicVariable[Set[String]](Set.empty)

  /**
   * What this deltalog writes and reads; inside [[writingAlso]] also the features given there
   * (e.g. DROP FEATURE typeWidening-preview writes its own commits to a table deltalog does not
   * otherwise write).
   */
  def deltalog: ClientCapabilities = {
    val extra = alsoWriting.value
    if (extra.isEmpty) released else released.copy(writerFeatures = released.writerFeatures ++ extra)
  }

  /** Runs `body` (on this thread) with deltalog also writing tables with `features`. */
  def writingAlso[T](features: Set[String])(body: => T): T =
    if (features.isEmpty) body else alsoWriting.withValue(alsoWriting.value ++ features)(body)

  /**
   * `{"maxReaderVersion", "maxWriterVersion", "readerFeatures", "writerFeatures"}`; missing versions
   * default to (3, 7) and missing lists to empty.
   */
  def fromJsonNode(node: JsonNode): ClientCapabilities = {
    def int(name: String, default: Int): Int =
      Option(node.get(name)).filterNot(_.isNull).map(_.asInt(default)).getOrElse(default)
    def names(name: String): Set[String] =
      Option(node.get(name)).filter(_.isArray).map(_.elements().asScala.map(_.asText()).toSet)
        .getOrElse(Set.empty)
    ClientCapabilities(int("maxReaderVersion", 3), int("maxWriterVersion", 7),
      names("readerFeatures"), names("writerFeatures"))
  }
}
