package io.deltalog.protocol

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

import io.deltalog.actions.{Action, ExtraFields}
import io.deltalog.exceptions._
import io.deltalog.protocol.TableFeature.{TABLE_FEATURES_MIN_READER_VERSION => TF_READER,
  TABLE_FEATURES_MIN_WRITER_VERSION => TF_WRITER}

/**
 * Carrier of a protocol action's unknown JSON fields. It is the (implicit) second parameter list of
 * [[Protocol]], so it takes no part in equality and `Protocol(r, w, rf, wf)` / `copy(...)` work
 * without it (they get [[ProtocolExtra.none]]).
 */
final class ProtocolExtra(val fields: ExtraFields) {
  override def toString: String = fields.toString
}

object ProtocolExtra {
  implicit val none: ProtocolExtra = new ProtocolExtra(ExtraFields.empty)
  def apply(fields: ExtraFields): ProtocolExtra =
    if (fields == null || fields.isEmpty) none else new ProtocolExtra(fields)
}

/**
 * The `protocol` action: the minimum reader/writer versions and, from reader 3 / writer 7, the
 * explicit feature lists. The rules are in docs/protocol-rules.md.
 *
 * Construction checks only the structure: versions start at 1 (`DELTA_INVALID_PROTOCOL_VERSION`),
 * reader >= 3 needs writer >= 7 (`DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE`), then
 * `readerFeatures` present iff reader >= 3 and `writerFeatures` present iff writer >= 7
 * (`DELTA_INVALID_PROTOCOL_VERSION`), in that order. A protocol from a newer client (reader 4,
 * writer 8) is representable, so that a table's protocol always parses and [[Protocol.checkCanRead]]
 * / [[Protocol.checkCanWrite]] can name what is unsupported (as the Python model does). Protocols
 * deltalog creates go through `Protocol(r, w)` and the table operations, which also check the
 * supported range (reader 1..3, writer 1..7). Use `Protocol(r, w)` for empty lists.
 *
 * Feature names in the lists are kept as written; they are resolved against the registry
 * case-insensitively, and names deltalog does not know are kept (never silently dropped).
 */
final case class Protocol(
    minReaderVersion: Int,
    minWriterVersion: Int,
    readerFeatures: Option[Set[String]],
    writerFeatures: Option[Set[String]])(implicit val protocolExtra: ProtocolExtra)
  extends Action {

  Protocol.checkStructure(minReaderVersion, minWriterVersion)
  if (supportsReaderFeatures != readerFeatures.isDefined) {
    throw new InvalidProtocolVersionException("DELTA_INVALID_PROTOCOL_VERSION",
      s"Protocol ($minReaderVersion,$minWriterVersion): readerFeatures must be present exactly when " +
        s"minReaderVersion is $TF_READER.")
  }
  if (supportsWriterFeatures != writerFeatures.isDefined) {
    throw new InvalidProtocolVersionException("DELTA_INVALID_PROTOCOL_VERSION",
      s"Protocol ($minReaderVersion,$minWriterVersion): writerFeatures must be present exactly when " +
        s"minWriterVersion is $TF_WRITER.")
  }

  /** Unknown fields of the parsed action (re-emitted by [[toJsonNode]]). */
  def extra: ExtraFields = protocolExtra.fields

  override def actionName: String = "protocol"

  override def toJsonNode: ObjectNode = {
    val node = JsonNodeFactory.instance.objectNode()
    node.put("minReaderVersion", minReaderVersion)
    node.put("minWriterVersion", minWriterVersion)
    readerFeatures.foreach { s => val a = node.putArray("readerFeatures"); s.toSeq.sorted.foreach(a.add) }
    writerFeatures.foreach { s => val a = node.putArray("writerFeatures"); s.toSeq.sorted.foreach(a.add) }
    extra.unknown.foreach { case (k, v) => if (!node.has(k)) node.set[JsonNode](k, v.deepCopy[JsonNode]()) }
    node
  }

  // ------------------------------------------------------------------------------ structure

  /** Reader version 3: `readerFeatures` is the list of reader-writer features. */
  def supportsReaderFeatures: Boolean = minReaderVersion >= TF_READER

  /** Writer version 7: `writerFeatures` is the list of all features. */
  def supportsWriterFeatures: Boolean = minWriterVersion >= TF_WRITER

  def readerFeatureNames: Set[String] = readerFeatures.getOrElse(Set.empty)
  def writerFeatureNames: Set[String] = writerFeatures.getOrElse(Set.empty)
  def readerAndWriterFeatureNames: Set[String] = readerFeatureNames ++ writerFeatureNames

  /** Known features named in either list. */
  lazy val readerAndWriterFeatures: Set[TableFeature] =
    readerAndWriterFeatureNames.flatMap(TableFeature.byName)

  /** Names in the lists that deltalog does not know. */
  lazy val unknownFeatureNames: Set[String] =
    readerAndWriterFeatureNames.filter(n => TableFeature.byName(n).isEmpty)

  /**
   * Legacy features implied by the versions: none when both lists are in use, else every legacy
   * feature whose min reader and min writer versions are both met (on the sides not using lists).
   */
  lazy val implicitlySupportedFeatures: Set[TableFeature] =
    if (supportsReaderFeatures && supportsWriterFeatures) Set.empty
    else TableFeature.legacy.filter { f =>
      !(supportsReaderFeatures || minReaderVersion < f.minReaderVersion) &&
        !(supportsWriterFeatures || minWriterVersion < f.minWriterVersion)
    }.toSet

  /** Known listed features plus implied legacy features. */
  lazy val implicitlyAndExplicitlySupportedFeatures: Set[TableFeature] =
    readerAndWriterFeatures ++ implicitlySupportedFeatures

  /** Implied (legacy feature on a legacy protocol) or listed (name matched case-insensitively). */
  def isFeatureSupported(feature: TableFeature): Boolean =
    (feature.isLegacyFeature && implicitlySupportedFeatures.contains(feature)) ||
      readerAndWriterFeatures.contains(feature)

  /** `r,w` for a legacy protocol, else `r,w,[readerFeatures]|None,[writerFeatures]|None`. */
  lazy val simpleString: String =
    if (!supportsReaderFeatures && !supportsWriterFeatures) s"$minReaderVersion,$minWriterVersion"
    else {
      def list(o: Option[Set[String]]) = o.map(_.toSeq.sorted.mkString("[", ",", "]")).getOrElse("None")
      s"$minReaderVersion,$minWriterVersion,${list(readerFeatures)},${list(writerFeatures)}"
    }

  override def toString: String = s"Protocol($simpleString)"

  // ------------------------------------------------------------------------------ feature arithmetic

  /** Adds a raw name to the chosen lists; the lists must exist (else the version error). */
  private[protocol] def withFeatureName(name: String, toReader: Boolean, toWriter: Boolean): Protocol = {
    if (toReader && !supportsReaderFeatures) throw Protocol.needsHigherReader(name, minReaderVersion, TF_READER)
    if (toWriter && !supportsWriterFeatures) throw Protocol.needsHigherWriter(name, minWriterVersion, TF_WRITER)
    Protocol(minReaderVersion, minWriterVersion,
      if (toReader) readerFeatures.map(_ + name) else readerFeatures,
      if (toWriter) writerFeatures.map(_ + name) else writerFeatures)(protocolExtra)
  }

  /** Adds raw names to `readerFeatures` (requires reader 3). */
  def withReaderFeatures(names: Iterable[String]): Protocol =
    names.foldLeft(this)(_.withFeatureName(_, toReader = true, toWriter = false))

  /** Adds raw names to `writerFeatures` (requires writer 7). */
  def withWriterFeatures(names: Iterable[String]): Protocol =
    names.foldLeft(this)(_.withFeatureName(_, toReader = false, toWriter = true))

  /**
   * This protocol with `feature` and its dependencies supported. A legacy feature already implied
   * by the legacy versions is not listed; a legacy feature above the legacy versions raises
   * `DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION` / `..._WRITER_VERSION`. A non-legacy feature
   * needs writer 7 (and reader 3 for reader-writer features).
   */
  def withFeature(feature: TableFeature): Protocol = {
    var toReader = feature.isReaderWriterFeature
    var toWriter = true
    if (feature.isLegacyFeature) {
      if (feature.isReaderWriterFeature) {
        toReader =
          if (supportsReaderFeatures) true
          else if (feature.minReaderVersion <= minReaderVersion) false
          else throw Protocol.needsHigherReader(feature.name, minReaderVersion, feature.minReaderVersion)
      }
      toWriter =
        if (supportsWriterFeatures) true
        else if (feature.minWriterVersion <= minWriterVersion) false
        else throw Protocol.needsHigherWriter(feature.name, minWriterVersion, feature.minWriterVersion)
    }
    withFeatures(TableFeature.sortedByName(feature.requiredFeatures))
      .withFeatureName(feature.name, toReader, toWriter)
  }

  /** [[withFeature]] by name; an unknown name raises `DELTA_UNSUPPORTED_FEATURES_IN_CONFIG`. */
  def withFeature(name: String): Protocol =
    withFeature(TableFeature.byName(name).getOrElse(throw Protocol.unknownFeatures(Seq(name))))

  /** [[withFeature]] for each feature, in the given order. */
  def withFeatures(features: Iterable[TableFeature]): Protocol = features.foldLeft(this)(_.withFeature(_))

  /**
   * The weakest equivalent form: a table-features protocol whose features are exactly a legacy
   * set becomes that legacy pair; otherwise the reader version is lowered to what the features
   * need. Legacy protocols, and protocols listing a name deltalog does not know, are returned as is.
   */
  def normalized: Protocol = {
    if (!supportsWriterFeatures || unknownFeatureNames.nonEmpty) return this
    val (r, w) = Protocol.minimumRequiredVersions(readerAndWriterFeatures)
    val candidate = Protocol(r, w)
    if (implicitlyAndExplicitlySupportedFeatures == candidate.implicitlyAndExplicitlySupportedFeatures) candidate
    else Protocol(r, TF_WRITER).withFeatures(TableFeature.sortedByName(readerAndWriterFeatures))
  }

  /** The equivalent table-features protocol of a legacy protocol (identity for writer 7). */
  def denormalized: Protocol = {
    if (supportsWriterFeatures) return this
    val implicitFeatures = implicitlySupportedFeatures
    val (r, _) = Protocol.minimumRequiredVersions(implicitFeatures)
    Protocol(r, TF_WRITER).withFeatures(TableFeature.sortedByName(implicitFeatures))
  }

  /** `denormalized.normalized`: also repairs invalid legacy pairs such as (2,3) -> (1,3). */
  def denormalizedNormalized: Protocol = denormalized.normalized

  /** Highest versions, every listed name and every implied feature of all protocols, normalized. */
  def merge(others: Protocol*): Protocol = {
    val ps = this +: others
    val r = ps.map(_.minReaderVersion).max
    val w = ps.map(_.minWriterVersion).max
    val readerNames = ps.flatMap(_.readerFeatureNames).distinct.sorted
    val writerNames = ps.flatMap(_.writerFeatureNames).distinct.sorted
    val implicitFeatures = TableFeature.sortedByName(ps.flatMap(_.implicitlySupportedFeatures).toSet)
    Protocol(r, w)
      .withReaderFeatures(readerNames)
      .withWriterFeatures(writerNames)
      .withFeatures(implicitFeatures)
      .denormalizedNormalized
  }

  /**
   * True when `to` supports every feature this protocol supports (known features, plus names
   * deltalog does not know, which must be listed in `to` too).
   */
  def canUpgradeTo(to: Protocol): Boolean =
    implicitlyAndExplicitlySupportedFeatures.subsetOf(to.implicitlyAndExplicitlySupportedFeatures) &&
      unknownFeatureNames.subsetOf(to.unknownFeatureNames)
}

object Protocol {
  val MIN_READER_VERSION_PROP = "delta.minReaderVersion"
  val MIN_WRITER_VERSION_PROP = "delta.minWriterVersion"
  val FEATURE_PROP_PREFIX = "delta.feature."
  val IGNORE_PROTOCOL_DEFAULTS_PROP = "delta.ignoreProtocolDefaults"
  val SESSION_DEFAULTS_PREFIX = "spark.databricks.delta.properties.defaults."
  val DEFAULT_FEATURE_PROP_PREFIX: String = SESSION_DEFAULTS_PREFIX + "feature."
  val FEATURE_PROP_SUPPORTED = "supported"
  /** Deprecated synonym of [[FEATURE_PROP_SUPPORTED]]. */
  val FEATURE_PROP_ENABLED = "enabled"

  val SUPPORTED_READER_VERSIONS: Seq[Int] = 1 to 3
  val SUPPORTED_WRITER_VERSIONS: Seq[Int] = 1 to 7

  /** `Protocol(r, w)` with empty feature lists where the versions support them. */
  def apply(minReaderVersion: Int, minWriterVersion: Int): Protocol = {
    checkVersions(minReaderVersion, minWriterVersion)
    new Protocol(minReaderVersion, minWriterVersion,
      if (minReaderVersion >= TF_READER) Some(Set.empty) else None,
      if (minWriterVersion >= TF_WRITER) Some(Set.empty) else None)(ProtocolExtra.none)
  }

  /** Range check (the versions deltalog can create), then "reader 3 requires writer 7". */
  def checkVersions(r: Int, w: Int): Unit = {
    if (!SUPPORTED_READER_VERSIONS.contains(r) || !SUPPORTED_WRITER_VERSIONS.contains(w)) {
      throw new InvalidProtocolVersionException("DELTA_INVALID_PROTOCOL_VERSION",
        s"Protocol ($r,$w) is invalid: minReaderVersion must be 1, 2 or 3 and minWriterVersion 1 to 7.")
    }
    checkStructure(r, w)
  }

  /** What every protocol must satisfy, newer ones included: versions start at 1; reader >= 3 needs writer >= 7. */
  def checkStructure(r: Int, w: Int): Unit = {
    if (r < 1 || w < 1) {
      throw new InvalidProtocolVersionException("DELTA_INVALID_PROTOCOL_VERSION",
        s"Protocol ($r,$w) is invalid: versions start at 1.")
    }
    if (r >= TF_READER && w < TF_WRITER) {
      throw new InvalidProtocolVersionException("DELTA_READ_FEATURE_PROTOCOL_REQUIRES_WRITE",
        s"Protocol ($r,$w) is invalid: reader version $r (reader table features) requires writer " +
          s"version $TF_WRITER; use ($r,$TF_WRITER).")
    }
  }

  /** (max(1, min reader), max(1, min writer)) over `features`. */
  def minimumRequiredVersions(features: Iterable[TableFeature]): (Int, Int) =
    ((features.map(_.minReaderVersion) ++ Seq(1)).max, (features.map(_.minWriterVersion) ++ Seq(1)).max)

  // ------------------------------------------------------------------------------ JSON

  /**
   * Parses a protocol action body. Missing, null or wrongly typed fields, and every constructor
   * rule (versions, list presence), raise `ActionParseException(null, 0, "protocol.<field>", ...)`.
   */
  def fromJsonNode(node: JsonNode): Protocol = {
    def fail(field: String, reason: String): Nothing =
      throw new ActionParseException(null, 0, s"protocol.$field", reason)
    val obj = node match {
      case o: ObjectNode => o
      case _ => throw new ActionParseException(null, 0, "protocol", "expected a JSON object")
    }
    def intField(name: String): Int = {
      val v = obj.get(name)
      if (v == null || v.isNull) fail(name, "required field is missing")
      if (!v.isIntegralNumber) fail(name, s"expected an integer but found $v")
      if (!v.canConvertToInt) fail(name, s"integer $v is not a valid protocol version")
      v.intValue()
    }
    def listField(name: String): Option[Set[String]] = {
      val v = obj.get(name)
      if (v == null || v.isNull) None
      else {
        if (!v.isArray || !v.elements().asScala.forall(_.isTextual)) {
          fail(name, s"expected an array of strings but found $v")
        }
        Some(v.elements().asScala.map(_.textValue()).toSet)
      }
    }
    val r = intField("minReaderVersion")
    val w = intField("minWriterVersion")
    val rf = listField("readerFeatures")
    val wf = listField("writerFeatures")
    val known = Set("minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures")
    val unknown = obj.properties().asScala.toSeq.collect {
      case e if !known.contains(e.getKey) => e.getKey -> e.getValue
    }
    try Protocol(r, w, rf, wf)(ProtocolExtra(ExtraFields(unknown)))
    catch {
      case e: InvalidProtocolVersionException =>
        val reason = e.getMessage
        val field =
          if (reason.contains("writerFeatures must")) "writerFeatures"
          else if (reason.contains("readerFeatures must")) "readerFeatures"
          else if (r >= 1 && w < 1) "minWriterVersion"
          else "minReaderVersion"
        fail(field, reason)
    }
  }

  /** Parses `{"protocol": {...}}` or a bare body from a JSON string. */
  def fromJson(json: String): Protocol = {
    val node = Action.mapper.readTree(json)
    fromJsonNode(if (node != null && node.has("protocol")) node.get("protocol") else node)
  }

  // ------------------------------------------------------------------------------ errors

  private[protocol] def needsHigherReader(name: String, current: Int, required: Int): TableFeatureException =
    new TableFeatureException("DELTA_FEATURE_REQUIRES_HIGHER_READER_VERSION",
      s"Feature '$name' needs reader version $required but the protocol has reader version $current; " +
        "upgrade the protocol first (e.g. set delta.minReaderVersion) or use a higher target version.")

  private[protocol] def needsHigherWriter(name: String, current: Int, required: Int): TableFeatureException =
    new TableFeatureException("DELTA_FEATURE_REQUIRES_HIGHER_WRITER_VERSION",
      s"Feature '$name' needs writer version $required but the protocol has writer version $current; " +
        "upgrade the protocol first (e.g. set delta.minWriterVersion) or use a higher target version.")

  private[protocol] def unknownFeatures(names: Seq[String]): TableFeatureException =
    new TableFeatureException("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG",
      s"Unknown table feature(s): ${names.sorted.mkString(", ")}. Known features: " +
        s"${TableFeature.all.map(_.name).sorted.mkString(", ")}.")

  // ------------------------------------------------------------------------------ properties

  /** `delta.minReaderVersion`, `delta.minWriterVersion`, `delta.ignoreProtocolDefaults`, `delta.feature.*`. */
  def isTableProtocolProperty(key: String): Boolean =
    key == MIN_READER_VERSION_PROP || key == MIN_WRITER_VERSION_PROP ||
      key == IGNORE_PROTOCOL_DEFAULTS_PROP || key.startsWith(FEATURE_PROP_PREFIX)

  /** `properties` without the protocol properties (which are never persisted). */
  def filterProtocolPropsFromTableProps(properties: Map[String, String]): Map[String, String] =
    properties.filterNot { case (k, _) => isTableProtocolProperty(k) }

  /**
   * Non-protocol table properties given as session defaults: `…defaults.<prop>` becomes
   * `delta.<prop>`; version, feature and ignoreProtocolDefaults defaults are left out.
   */
  def sessionDefaultTableProperties(sessionDefaults: Map[String, String]): Map[String, String] =
    sessionDefaults.collect {
      case (k, v) if k.startsWith(SESSION_DEFAULTS_PREFIX) && !k.startsWith(DEFAULT_FEATURE_PROP_PREFIX) &&
          !isTableProtocolProperty("delta." + k.substring(SESSION_DEFAULTS_PREFIX.length)) =>
        ("delta." + k.substring(SESSION_DEFAULTS_PREFIX.length)) -> v
    }

  /**
   * Features requested by `delta.feature.<name> = supported|enabled`. Any other status raises
   * `DELTA_UNSUPPORTED_FEATURE_STATUS` (checked first, key by key); unknown names then raise
   * `DELTA_UNSUPPORTED_FEATURES_IN_CONFIG` naming all of them.
   */
  def supportedFeaturesFromTableConfigs(conf: Map[String, String]): Set[TableFeature] = {
    val featureProps = conf.toSeq.filter(_._1.startsWith(FEATURE_PROP_PREFIX))
    var unknown = Vector.empty[String]
    val found = featureProps.flatMap { case (key, value) =>
      val status = Option(value).getOrElse("").toLowerCase(java.util.Locale.ROOT)
      if (status != FEATURE_PROP_SUPPORTED && status != FEATURE_PROP_ENABLED) {
        throw new TableFeatureException("DELTA_UNSUPPORTED_FEATURE_STATUS",
          s"$key='$value': a feature property can only be set to '$FEATURE_PROP_SUPPORTED' " +
            "(features cannot be removed this way; use ALTER TABLE ... DROP FEATURE).")
      }
      val f = TableFeature.byName(key.substring(FEATURE_PROP_PREFIX.length))
      if (f.isEmpty) unknown :+= key
      f
    }
    if (unknown.nonEmpty) {
      throw new TableFeatureException("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG",
        s"Unknown table feature(s) in properties: ${unknown.sorted.mkString(", ")}. Known features: " +
          s"${TableFeature.all.map(_.name).sorted.mkString(", ")}.")
    }
    found.toSet
  }

  private val IntPattern = "[+-]?[0-9]+".r

  private def versionProp(conf: Map[String, String], key: String): Option[Int] =
    conf.get(key).map { raw =>
      val v = Option(raw).getOrElse("").strip()
      if (!IntPattern.matches(v)) {
        throw new InvalidTablePropertyException("DELTA_PROTOCOL_PROPERTY_NOT_INT",
          s"$key='$raw' is not an integer; set it to a protocol version number.")
      }
      // Out-of-int-range digits are out of the version range too.
      Try(v.toInt).getOrElse(Int.MaxValue)
    }

  /** (`delta.minReaderVersion`, `delta.minWriterVersion`) from `conf`, parsed and range-checked. */
  def protocolVersionsFromTableConf(conf: Map[String, String]): (Option[Int], Option[Int]) = {
    val r = versionProp(conf, MIN_READER_VERSION_PROP)
    val w = versionProp(conf, MIN_WRITER_VERSION_PROP)
    r.foreach { v =>
      if (!SUPPORTED_READER_VERSIONS.contains(v)) throw new InvalidProtocolVersionException(
        "DELTA_INVALID_PROTOCOL_VERSION", s"$MIN_READER_VERSION_PROP=${conf(MIN_READER_VERSION_PROP)} is " +
          "invalid; use 1, 2 or 3.")
    }
    w.foreach { v =>
      if (!SUPPORTED_WRITER_VERSIONS.contains(v)) throw new InvalidProtocolVersionException(
        "DELTA_INVALID_PROTOCOL_VERSION", s"$MIN_WRITER_VERSION_PROP=${conf(MIN_WRITER_VERSION_PROP)} is " +
          "invalid; use 1 to 7.")
    }
    (r, w)
  }

  /** Asserts that no protocol property is left in the configuration (seed messages). */
  def assertMetadataContainsNoProtocolProps(conf: Map[String, String]): Unit = {
    def fail(msg: String): Nothing = throw new DeltalogAssertionError("DELTA_PROTOCOL_PROPERTY_IN_METADATA", msg)
    if (conf.contains(MIN_READER_VERSION_PROP)) {
      fail(s"Should not have the protocol version ($MIN_READER_VERSION_PROP) as part of table properties")
    }
    if (conf.contains(MIN_WRITER_VERSION_PROP)) {
      fail(s"Should not have the protocol version ($MIN_WRITER_VERSION_PROP) as part of table properties")
    }
    if (conf.keys.exists(_.startsWith(FEATURE_PROP_PREFIX))) {
      fail(s"Should not have table features (starts with '$FEATURE_PROP_PREFIX') as part of table properties")
    }
    if (conf.contains(IGNORE_PROTOCOL_DEFAULTS_PROP)) {
      fail(s"Should not have the table property $IGNORE_PROTOCOL_DEFAULTS_PROP stored in table metadata")
    }
  }

  // ------------------------------------------------------------------------------ metadata rules

  /**
   * The protocol of a new table: session defaults (versions, `…defaults.feature.*`) unless
   * `delta.ignoreProtocolDefaults` (table or session) is true, overridden by the table's own
   * properties, then [[minProtocolComponentsFromMetadata]], in the weakest form.
   */
  def forNewTable(metadata: MetadataLike, sessionDefaults: Map[String, String] = Map.empty): Protocol = {
    val view = MetadataView(metadata)
    val sd = Option(sessionDefaults).getOrElse(Map.empty)
    val tableConf = view.configuration
    val ignore =
      MetadataView.boolValue(IGNORE_PROTOCOL_DEFAULTS_PROP, tableConf.get(IGNORE_PROTOCOL_DEFAULTS_PROP)) ||
        MetadataView.boolValue(SESSION_DEFAULTS_PREFIX + "ignoreProtocolDefaults",
          sd.get(SESSION_DEFAULTS_PREFIX + "ignoreProtocolDefaults"))
    val (base, overrides) =
      if (ignore) (Map(MIN_READER_VERSION_PROP -> "1", MIN_WRITER_VERSION_PROP -> "1"), Map.empty[String, String])
      else (
        Map(
          MIN_READER_VERSION_PROP -> sd.getOrElse(SESSION_DEFAULTS_PREFIX + "minReaderVersion", "1"),
          MIN_WRITER_VERSION_PROP -> sd.getOrElse(SESSION_DEFAULTS_PREFIX + "minWriterVersion", "2")),
        sd.collect { case (k, v) if k.startsWith(DEFAULT_FEATURE_PROP_PREFIX) =>
          (FEATURE_PROP_PREFIX + k.substring(DEFAULT_FEATURE_PROP_PREFIX.length)) -> v
        })
    val merged = base ++ overrides ++ tableConf
    val (r, w, features) =
      minProtocolComponentsFromMetadata(new MetadataView.ViewWrapper(view.withConfiguration(merged)))
    Protocol(r, w).withFeatures(TableFeature.sortedByName(features)).denormalizedNormalized
  }

  /**
   * The minimum (reader, writer, features) for the metadata: `delta.feature.*` features, features
   * the metadata enables (with dependencies), and — when both version properties are set — the
   * features those versions imply.
   */
  def minProtocolComponentsFromMetadata(metadata: MetadataLike): (Int, Int, Set[TableFeature]) = {
    val view = MetadataView(metadata)
    val conf = view.configuration
    val propFeatures = supportedFeaturesFromTableConfigs(conf)
    val metaFeatures = extractAutomaticallyEnabledFeatures(new MetadataView.ViewWrapper(view),
      Protocol(TF_READER, TF_WRITER).withFeatures(TableFeature.sortedByName(propFeatures)))
    val allFeatures = propFeatures ++ metaFeatures
    val implicitFromConf = protocolVersionsFromTableConf(conf) match {
      case (Some(r), Some(w)) =>
        val r0 = if (w >= TF_WRITER) r else math.min(2, r)
        Protocol(r0, w).implicitlySupportedFeatures
      case _ => Set.empty[TableFeature]
    }
    val minProtocol = Protocol(TF_READER, TF_WRITER)
      .withFeatures(TableFeature.sortedByName(allFeatures ++ implicitFromConf))
      .normalized
    (minProtocol.minReaderVersion, minProtocol.minWriterVersion,
      minProtocol.implicitlyAndExplicitlySupportedFeatures)
  }

  /** Known features listed in `protocol.writerFeatures` plus metadata-enabled ones, closed over dependencies. */
  def extractAutomaticallyEnabledFeatures(metadata: MetadataLike, protocol: Protocol): Set[TableFeature] = {
    val view = MetadataView(metadata)
    val listed = protocol.writerFeatureNames.flatMap(TableFeature.byName)
    val fromMetadata = TableFeature.all.filter(f => f.isAutoEnabledByMetadata && f.metadataRequires(view, protocol))
    TableFeature.dependencyClosure(listed ++ fromMetadata)
  }

  /**
   * The seed's legacy computation: (minReaderVersion, minWriterVersion, featuresUsed), starting
   * from (0,0). Legacy features in the order invariants, appendOnly (w2), checkConstraints,
   * generatedColumns, changeDataFeed, identityColumns, columnMapping; then every other feature the
   * metadata enables, in registry order, each followed by its dependency closure sorted by name.
   */
  def requiredMinimumProtocol(metadata: MetadataLike): (Int, Int, Seq[String]) = {
    val view = MetadataView(metadata)
    val probe = Protocol(TF_READER, TF_WRITER)
    var r = 0
    var w = 0
    val used = scala.collection.mutable.ArrayBuffer.empty[String]
    import TableFeature._
    Seq(Invariants, AppendOnly, CheckConstraints, GeneratedColumns, ChangeDataFeed, IdentityColumns,
      ColumnMapping).foreach { f =>
      if (f.metadataRequires(view, probe)) {
        r = math.max(r, f.minReaderVersion)
        w = math.max(w, f.minWriterVersion)
        used += f.name
      }
    }
    TableFeature.all.filter(f => !f.isLegacyFeature && f.isAutoEnabledByMetadata).foreach { f =>
      if (f.metadataRequires(view, probe)) {
        TableFeature.sortedByName(TableFeature.dependencyClosure(Seq(f))).foreach { g =>
          if (!used.contains(g.name)) used += g.name
          r = math.max(r, g.minReaderVersion)
          w = math.max(w, g.minWriterVersion)
        }
      }
    }
    (r, w, used.toVector)
  }

  /** Asserts no protocol property remains in the configuration, then [[upgradeProtocolFromMetadataForExistingTable]]. */
  def checkProtocolRequirements(metadata: MetadataLike, current: Protocol): Option[Protocol] = {
    val view = MetadataView(metadata)
    assertMetadataContainsNoProtocolProps(view.configuration)
    upgradeProtocolFromMetadataForExistingTable(new MetadataView.ViewWrapper(view), current)
  }

  /**
   * The protocol an existing table needs after a metadata change, or None when `current` already
   * suffices. Features enabled by metadata that may not be added automatically to existing tables
   * (`timestampNtz`) raise `DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT`.
   */
  def upgradeProtocolFromMetadataForExistingTable(metadata: MetadataLike, current: Protocol): Option[Protocol] = {
    val required = Protocol(TF_READER, TF_WRITER)
      .withFeatures(TableFeature.sortedByName(extractAutomaticallyEnabledFeatures(metadata, current)))
      .normalized
    if (required.canUpgradeTo(current)) None
    else {
      val missing = required.implicitlyAndExplicitlySupportedFeatures -- current.implicitlyAndExplicitlySupportedFeatures
      val manual = missing.filter(f => f.isAutoEnabledByMetadata && !f.automaticallyUpdateProtocolOfExistingTables)
        .map(_.name).toSeq.sorted
      if (manual.nonEmpty) {
        throw new TableFeatureException("DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT",
          s"The table metadata needs feature(s) ${manual.mkString(", ")}, which cannot be added " +
            "automatically to an existing table; first run ALTER TABLE ... SET TBLPROPERTIES (" +
            manual.map(n => s"'$FEATURE_PROP_PREFIX$n' = 'supported'").mkString(", ") + ").")
      }
      Some(required.merge(current))
    }
  }

  // ------------------------------------------------------------------------------ table operations

  /** Raises `current` to at least (readerVersion, writerVersion); never downgrades. */
  def upgradeTableProtocol(current: Protocol, readerVersion: Int, writerVersion: Int): Protocol = {
    checkVersions(readerVersion, writerVersion)
    current.merge(Protocol(readerVersion, writerVersion))
  }

  /** `current` with `featureName` (and its dependencies) supported. */
  def addFeatureSupport(current: Protocol, featureName: String): Protocol = {
    val f = TableFeature.byName(featureName).getOrElse(throw unknownFeatures(Seq(featureName)))
    if (current.readerAndWriterFeatures.contains(f)) current
    else {
      val r =
        if (TableFeature.dependencyClosure(Seq(f)).exists(_.isReaderWriterFeature)) TF_READER
        else current.minReaderVersion
      Protocol(r, TF_WRITER).withFeature(f).merge(current)
    }
  }

  /** The protocol side of DROP FEATURE: `current` without `featureName`, normalized. */
  def dropFeatureSupport(current: Protocol, featureName: String): Protocol = {
    val f = TableFeature.byName(featureName).getOrElse(throw unknownFeatures(Seq(featureName)))
    if (f == TableFeature.CatalogManaged || f == TableFeature.CatalogOwnedPreview) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE",
        s"Dropping feature '${f.name}' is not supported by deltalog.")
    }
    if (!f.isRemovable) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE",
        s"Feature '${f.name}' cannot be dropped: once supported by a table it stays supported.")
    }
    if (!current.isFeatureSupported(f)) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT",
        s"Feature '${f.name}' is not supported by protocol ${current.simpleString}; there is nothing to drop.")
    }
    val dependents = TableFeature.dependentsOf(f).filter(current.isFeatureSupported).map(_.name).toSeq.sorted
    if (dependents.nonEmpty) {
      throw new TableFeatureException("DELTA_FEATURE_DROP_DEPENDENT_FEATURE",
        s"Feature '${f.name}' cannot be dropped while ${dependents.mkString(", ")} depend(s) on it; " +
          "drop those features first.")
    }
    val d = current.denormalized
    def without(names: Set[String]) = names.filterNot(n => TableFeature.byName(n).contains(f))
    Protocol(d.minReaderVersion, d.minWriterVersion,
      if (f.isReaderWriterFeature) d.readerFeatures.map(without) else d.readerFeatures,
      d.writerFeatures.map(without))(d.protocolExtra).normalized
  }

  /** `ProtocolDowngradeException` unless `current.canUpgradeTo(newProtocol)`. */
  def assertCanUpgradeTo(current: Protocol, newProtocol: Protocol): Unit = {
    if (!current.canUpgradeTo(newProtocol)) {
      val lost = (current.implicitlyAndExplicitlySupportedFeatures --
        newProtocol.implicitlyAndExplicitlySupportedFeatures).map(_.name) ++
        (current.unknownFeatureNames -- newProtocol.unknownFeatureNames)
      throw new ProtocolDowngradeException(
        s"Protocol cannot be downgraded from ${current.simpleString} to ${newProtocol.simpleString}: " +
          s"it would drop support for ${lost.toSeq.sorted.mkString(", ")}. " +
          "Use ALTER TABLE ... DROP FEATURE to remove a feature.")
    }
  }

  // ------------------------------------------------------------------------------ client support

  /** Names a reader must implement: reader 3 = the listed reader features; reader 2 = columnMapping. */
  def readerFeaturesNeeded(p: Protocol): Set[String] =
    if (p.supportsReaderFeatures) p.readerFeatureNames.map(canonical)
    else if (p.minReaderVersion >= 2) Set(TableFeature.ColumnMapping.name)
    else Set.empty

  /** Names a writer must implement: every supported known feature plus every unknown listed name. */
  def writerFeaturesNeeded(p: Protocol): Set[String] =
    p.implicitlyAndExplicitlySupportedFeatures.map(_.name) ++ p.unknownFeatureNames

  private def canonical(name: String): String = TableFeature.byName(name).map(_.name).getOrElse(name)

  /** `UnsupportedTableFeatureException` ("read") unless `client` can read a table with `protocol`. */
  def checkCanRead(protocol: Protocol, client: ClientCapabilities = ClientCapabilities.deltalog,
      table: String = null): Unit = {
    val missing = (readerFeaturesNeeded(protocol) -- client.readerFeatures.map(canonical)).toSeq.sorted
    if (protocol.minReaderVersion > client.maxReaderVersion || missing.nonEmpty) {
      throw unsupported(protocol, "read", missing, table, client)
    }
  }

  /** `UnsupportedTableFeatureException` ("write") unless `client` can write a table with `protocol`. */
  def checkCanWrite(protocol: Protocol, client: ClientCapabilities = ClientCapabilities.deltalog,
      table: String = null): Unit = {
    val missing = (writerFeaturesNeeded(protocol) -- client.writerFeatures.map(canonical)).toSeq.sorted
    if (protocol.minWriterVersion > client.maxWriterVersion ||
        protocol.minReaderVersion > client.maxReaderVersion || missing.nonEmpty) {
      throw unsupported(protocol, "write", missing, table, client)
    }
  }

  private def unsupported(p: Protocol, access: String, missing: Seq[String], table: String,
      c: ClientCapabilities): UnsupportedTableFeatureException = {
    val where = Option(table).map(t => s"Table $t").getOrElse("The table")
    val tooNew = p.minReaderVersion > c.maxReaderVersion ||
      (access == "write" && p.minWriterVersion > c.maxWriterVersion)
    val needs = Seq(
      if (tooNew) Some(s"protocol versions (${p.minReaderVersion},${p.minWriterVersion}) above what this client " +
        s"supports (${c.maxReaderVersion},${c.maxWriterVersion})") else None,
      if (missing.nonEmpty) Some(s"${access}er feature(s) this client does not support: ${missing.mkString(", ")}")
      else None).flatten
    val advice =
      if (missing.nonEmpty) "Use a client that supports them, or remove the feature(s) with ALTER TABLE ... DROP " +
        "FEATURE where possible."
      else "A newer Delta client upgraded the table; use a client that supports these protocol versions."
    new UnsupportedTableFeatureException(table, access, missing,
      s"$where (protocol ${p.simpleString}) needs ${needs.mkString(" and ")}. $advice")
  }
}
