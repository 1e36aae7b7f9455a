package io.deltalog.log

import scala.jdk.CollectionConverters._

import org.apache.parquet.schema.{GroupType, LogicalTypeAnnotation, MessageType, PrimitiveType, Type, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.parquet.schema.Type.Repetition._

/**
 * Parquet layout of checkpoints (digest §4.2), for writing and for projected reading.
 *
 * Written layout (every field optional, as Spark writes `schema.asNullable`):
 * classic / multi-part: `txn, add, remove, metaData, protocol, domainMetadata`;
 * V2 top-level: `txn, add, remove, metaData, protocol, checkpointMetadata, sidecar, domainMetadata`
 * (file actions live in sidecars, so `add`/`remove` stay null); sidecars: `add, remove`.
 * Strings are `BINARY (STRING)`, maps `MAP` with a repeated `key_value { required key; optional value }`,
 * arrays 3-level `LIST` (`list { optional element }`), as Spark writes them.
 */
object CheckpointSchema {

  // ------------------------------------------------------------------------------------ writing

  private def str(name: String): Type =
    Types.optional(BINARY).as(LogicalTypeAnnotation.stringType()).named(name)
  private def i64(name: String): Type = Types.optional(INT64).named(name)
  private def i32(name: String): Type = Types.optional(INT32).named(name)
  private def bool(name: String): Type = Types.optional(BOOLEAN).named(name)
  private def group(name: String, fields: Type*): GroupType = new GroupType(OPTIONAL, name, fields: _*)

  /** `map<string,string>` as Spark writes it. */
  def stringMap(name: String): GroupType =
    Types.optionalMap()
      .key(Types.required(BINARY).as(LogicalTypeAnnotation.stringType()).named("key"))
      .value(Types.optional(BINARY).as(LogicalTypeAnnotation.stringType()).named("value"))
      .named(name)

  /** `array<string>` as Spark writes it (3-level list). */
  def stringList(name: String): GroupType =
    Types.optionalList()
      .element(Types.optional(BINARY).as(LogicalTypeAnnotation.stringType()).named("element"))
      .named(name)

  val DeletionVectorType: GroupType = group("deletionVector",
    str("storageType"), str("pathOrInlineDv"), i32("offset"), i32("sizeInBytes"), i64("cardinality"),
    i64("maxRowIndex"))

  val TxnType: GroupType = group("txn", str("appId"), i64("version"), i64("lastUpdated"))

  /**
   * The `add` struct: the fixed fields, then `stats` (if `statsJson`), `partitionValues_parsed`
   * and `stats_parsed` (when given).
   */
  def addType(statsJson: Boolean, partitionValuesParsed: Option[GroupType], statsParsed: Option[GroupType]): GroupType = {
    val fields = Seq[Type](str("path"), stringMap("partitionValues"), i64("size"), i64("modificationTime"),
      bool("dataChange"), stringMap("tags"), DeletionVectorType, i64("baseRowId"),
      i64("defaultRowCommitVersion"), str("clusteringProvider")) ++
      (if (statsJson) Seq(str("stats")) else Nil) ++ partitionValuesParsed.toSeq ++ statsParsed.toSeq
    group("add", fields: _*)
  }

  /** The `remove` struct of checkpoints (no `stats`, no `tags`). */
  val RemoveType: GroupType = group("remove", str("path"), i64("deletionTimestamp"), bool("dataChange"),
    bool("extendedFileMetadata"), stringMap("partitionValues"), i64("size"), DeletionVectorType,
    i64("baseRowId"), i64("defaultRowCommitVersion"))

  val MetadataType: GroupType = group("metaData", str("id"), str("name"), str("description"),
    group("format", str("provider"), stringMap("options")), str("schemaString"), stringList("partitionColumns"),
    stringMap("configuration"), i64("createdTime"))

  val ProtocolType: GroupType = group("protocol", i32("minReaderVersion"), i32("minWriterVersion"),
    stringList("readerFeatures"), stringList("writerFeatures"))

  val DomainMetadataType: GroupType = group("domainMetadata", str("domain"), str("configuration"), bool("removed"))

  val CheckpointMetadataType: GroupType = group("checkpointMetadata", i64("version"), stringMap("tags"))

  val SidecarType: GroupType = group("sidecar", str("path"), i64("sizeInBytes"), i64("modificationTime"),
    stringMap("tags"))

  /** Classic and multi-part checkpoints. */
  def classic(add: GroupType): MessageType =
    new MessageType("spark_schema", TxnType, add, RemoveType, MetadataType, ProtocolType, DomainMetadataType)

  /** Top-level file of a V2 checkpoint (Parquet flavour). */
  def v2TopLevel(add: GroupType): MessageType =
    new MessageType("spark_schema", TxnType, add, RemoveType, MetadataType, ProtocolType, CheckpointMetadataType,
      SidecarType, DomainMetadataType)

  /** A V2 sidecar file. */
  def sidecar(add: GroupType): MessageType = new MessageType("spark_schema", add, RemoveType)

  // ------------------------------------------------------------------------------------ reading

  /** What to read of a group: named fields, each read whole ([[Whole]]) or partially ([[Fields]]). */
  sealed trait Want
  /** The field with its complete subtree, as the file has it. */
  case object Whole extends Want
  /** Only these children of a group field (the ones the file has). */
  final case class Fields(children: Map[String, Want]) extends Want

  object Fields {
    def apply(pairs: (String, Want)*): Fields = new Fields(pairs.toMap)
    def whole(names: String*): Fields = new Fields(names.map(_ -> (Whole: Want)).toMap)
  }

  private val DvWant = Fields.whole("storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality",
    "maxRowIndex")

  /** Fields of `add` read from checkpoints (`partitionValues_parsed` never). */
  def addWant(withStats: Boolean): Fields = {
    val base = Seq[(String, Want)]("path" -> Whole, "partitionValues" -> Whole, "size" -> Whole,
      "modificationTime" -> Whole, "dataChange" -> Whole, "tags" -> Whole, "deletionVector" -> DvWant,
      "baseRowId" -> Whole, "defaultRowCommitVersion" -> Whole, "clusteringProvider" -> Whole)
    val stats = if (withStats) Seq("stats" -> Whole, "stats_parsed" -> Whole) else Nil
    new Fields((base ++ stats).toMap)
  }

  /** Fields of `remove` read from checkpoints. */
  def removeWant(withStats: Boolean): Fields = {
    val base = Seq[(String, Want)]("path" -> Whole, "deletionTimestamp" -> Whole, "dataChange" -> Whole,
      "extendedFileMetadata" -> Whole, "partitionValues" -> Whole, "size" -> Whole, "tags" -> Whole,
      "deletionVector" -> DvWant, "baseRowId" -> Whole, "defaultRowCommitVersion" -> Whole)
    new Fields((base ++ (if (withStats) Seq("stats" -> Whole) else Nil)).toMap)
  }

  val ProtocolWant: Fields = Fields.whole("minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures")
  val MetadataWant: Fields = Fields("id" -> Whole, "name" -> Whole, "description" -> Whole,
    "format" -> Fields.whole("provider", "options"), "schemaString" -> Whole, "partitionColumns" -> Whole,
    "configuration" -> Whole, "createdTime" -> Whole)

  /** The top-level columns to read for the given options. */
  def topLevelWant(skipStats: Boolean, onlyProtocolAndMetadata: Boolean, skipRemoves: Boolean,
      skipProtocolAndMetadata: Boolean = false): Fields =
    if (onlyProtocolAndMetadata) Fields("protocol" -> ProtocolWant, "metaData" -> MetadataWant)
    else {
      val all = Seq[(String, Want)](
        "txn" -> Fields.whole("appId", "version", "lastUpdated"),
        "add" -> addWant(!skipStats),
        "metaData" -> MetadataWant,
        "protocol" -> ProtocolWant,
        "domainMetadata" -> Fields.whole("domain", "configuration", "removed"),
        "checkpointMetadata" -> Fields.whole("version", "tags"),
        "sidecar" -> Fields.whole("path", "sizeInBytes", "modificationTime", "tags")) ++
        (if (skipRemoves) Nil else Seq("remove" -> removeWant(!skipStats)))
      new Fields(all.filterNot(f => skipProtocolAndMetadata && (f._1 == "protocol" || f._1 == "metaData")).toMap)
    }

  /** Only the `sidecar` rows of a top-level checkpoint file (which sidecars it names). */
  val sidecarRowsWant: Fields = Fields("sidecar" -> Fields.whole("path", "sizeInBytes", "modificationTime", "tags"))

  /** Columns read from sidecars: file actions only. */
  def sidecarWant(skipStats: Boolean, skipRemoves: Boolean): Fields =
    new Fields((Seq[(String, Want)]("add" -> addWant(!skipStats)) ++
      (if (skipRemoves) Nil else Seq("remove" -> removeWant(!skipStats)))).toMap)

  /**
   * The part of `file` selected by `want`, in the file's field order and with the file's types
   * (so older writers' repetition, list and map layouts are kept). Columns the file lacks are
   * simply absent; columns it has but `want` does not name are dropped.
   */
  def project(file: MessageType, want: Fields): MessageType = {
    val kept = projectFields(file, want)
    new MessageType(file.getName, kept)
  }

  private def projectFields(g: GroupType, want: Fields): java.util.List[Type] = {
    val out = new java.util.ArrayList[Type]()
    g.getFields.asScala.foreach { f =>
      want.children.get(f.getName) match {
        case Some(Whole) => out.add(f)
        case Some(sub: Fields) if !f.isPrimitive =>
          val kids = projectFields(f.asGroupType(), sub)
          if (!kids.isEmpty) out.add(f.asGroupType().withNewFields(kids))
        case _ =>
      }
    }
    out
  }

  /** Path of a leaf column, e.g. `protocol.minReaderVersion`. */
  private[log] def hasColumn(schema: MessageType, path: String*): Boolean =
    try { schema.getType(path: _*); true } catch { case _: org.apache.parquet.io.InvalidRecordException => false }

  /** True for a primitive type of this kind. */
  private[log] def isPrimitive(t: Type, name: PrimitiveTypeName): Boolean =
    t.isPrimitive && t.asPrimitiveType().getPrimitiveTypeName == name

  private[log] def primitive(t: Type): PrimitiveType = t.asPrimitiveType()
}
