package io.deltalog.log

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.ByteOrder
import java.time.{LocalDate, ZoneOffset}
import java.time.format.DateTimeFormatter

import scala.collection.immutable.VectorMap
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import com.fasterxml.jackson.databind.util.RawValue
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.column.Dictionary
import org.apache.parquet.hadoop.api.{InitContext, ReadSupport}
import org.apache.parquet.hadoop.api.ReadSupport.ReadContext
import org.apache.parquet.io.api.{Binary, Converter, GroupConverter, PrimitiveConverter, RecordMaterializer}
import org.apache.parquet.schema.{GroupType, LogicalTypeAnnotation, MessageType, PrimitiveType, Type}
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._

import io.deltalog.actions._
import io.deltalog.protocol.Protocol

/**
 * parquet-mr converters that assemble checkpoint rows directly into action objects.
 *
 * Converters are built once per file from the projected schema and reused for every row: leaf
 * converters keep the last value in a field (no boxing), string leaves decode dictionary pages
 * once, and a group converter builds its action in `end()`. Each row yields at most one action
 * (the one non-null top-level column); rows with none of the projected columns yield null.
 */
private[log] object ParquetActionConverters {

  // ------------------------------------------------------------------------------ leaves

  /** Something reset at the start of its parent group. */
  trait Resettable { def reset(): Unit }

  final class StringLeaf extends PrimitiveConverter with Resettable {
    var value: String = _
    private var dict: Array[String] = _
    def reset(): Unit = value = null
    override def hasDictionarySupport: Boolean = true
    override def setDictionary(d: Dictionary): Unit = {
      val n = d.getMaxId + 1
      val a = new Array[String](n)
      var i = 0
      while (i < n) { a(i) = d.decodeToBinary(i).toStringUsingUTF8; i += 1 }
      dict = a
    }
    override def addValueFromDictionary(id: Int): Unit = value = dict(id)
    override def addBinary(b: Binary): Unit = value = b.toStringUsingUTF8
  }

  final class LongLeaf extends PrimitiveConverter with Resettable {
    var isSet = false
    var value = 0L
    def reset(): Unit = isSet = false
    override def addLong(v: Long): Unit = { value = v; isSet = true }
    override def addInt(v: Int): Unit = { value = v; isSet = true }
    def opt: Option[Long] = if (isSet) Some(value) else None
  }

  final class IntLeaf extends PrimitiveConverter with Resettable {
    var isSet = false
    var value = 0
    def reset(): Unit = isSet = false
    override def addInt(v: Int): Unit = { value = v; isSet = true }
    override def addLong(v: Long): Unit = { value = v.toInt; isSet = true }
    def opt: Option[Int] = if (isSet) Some(value) else None
  }

  final class BoolLeaf extends PrimitiveConverter with Resettable {
    var isSet = false
    var value = false
    def reset(): Unit = isSet = false
    override def addBoolean(v: Boolean): Unit = { value = v; isSet = true }
    def opt: Option[Boolean] = if (isSet) Some(value) else None
  }

  /** Accepts and drops anything (columns of unexpected shape). */
  final class IgnoreLeaf extends PrimitiveConverter {
    override def addBinary(value: Binary): Unit = ()
    override def addBoolean(value: Boolean): Unit = ()
    override def addDouble(value: Double): Unit = ()
    override def addFloat(value: Float): Unit = ()
    override def addInt(value: Int): Unit = ()
    override def addLong(value: Long): Unit = ()
  }

  final class IgnoreGroup(g: GroupType) extends GroupConverter {
    private val children: Array[Converter] = g.getFields.asScala.map(ignore).toArray
    override def getConverter(i: Int): Converter = children(i)
    override def start(): Unit = ()
    override def end(): Unit = ()
  }

  def ignore(t: Type): Converter = if (t.isPrimitive) new IgnoreLeaf else new IgnoreGroup(t.asGroupType())

  // ------------------------------------------------------------------------------ maps and lists

  /**
   * `map<string,string>`: a group with one repeated child holding (key, value), whatever the
   * names (`key_value`, legacy `map`). Null values are kept as Scala `null`.
   */
  final class StringMapConv(t: GroupType) extends GroupConverter with Resettable {
    var present = false
    private var n = 0
    private var keys = new Array[String](4)
    private var values = new Array[String](4)
    private val key = new StringLeaf
    private val value = new StringLeaf
    private val entry = new GroupConverter {
      override def getConverter(i: Int): Converter = if (i == 0) key else value
      override def start(): Unit = { key.reset(); value.reset() }
      override def end(): Unit = {
        if (key.value != null) {
          if (n == keys.length) {
            keys = java.util.Arrays.copyOf(keys, n * 2)
            values = java.util.Arrays.copyOf(values, n * 2)
          }
          keys(n) = key.value
          values(n) = value.value
          n += 1
        }
      }
    }
    private val entryIsGroup = !t.getType(0).isPrimitive && t.getType(0).asGroupType().getFieldCount == 2
    private val child: Converter = if (entryIsGroup) entry else ignore(t.getType(0))
    def reset(): Unit = { present = false; n = 0 }
    override def getConverter(i: Int): Converter = child
    override def start(): Unit = { present = true; n = 0 }
    override def end(): Unit = ()

    /** The map of the current row (insertion order kept); call only when `present`. */
    def result: Map[String, String] = stringMap(keys, values, n)
    def opt: Option[Map[String, String]] = if (present) Some(result) else None
  }

  /** The first `n` entries of `keys` / `values` as a map that keeps their order (a later key wins). */
  def stringMap(keys: Array[String], values: Array[String], n: Int): Map[String, String] = n match {
    case 0 => Map.empty
    case 1 => Map.empty.updated(keys(0), values(0))
    case _ if n <= 4 =>
      var m = Map.empty[String, String]
      var i = 0
      while (i < n) { m = m.updated(keys(i), values(i)); i += 1 }
      m
    case _ =>
      val b = VectorMap.newBuilder[String, String]
      var i = 0
      while (i < n) { b += keys(i) -> values(i); i += 1 }
      b.result()
  }

  /** `array<string>`: 3-level (`list { element }`) or legacy 2-level (`repeated binary`). */
  final class StringListConv(t: GroupType) extends GroupConverter with Resettable {
    var present = false
    private val buf = Vector.newBuilder[String]
    private val elem = new StringLeaf
    private val rep: Type = t.getType(0)
    private val child: Converter =
      if (rep.isPrimitive) new PrimitiveConverter {
        override def addBinary(b: Binary): Unit = buf += b.toStringUsingUTF8
      } else if (rep.asGroupType().getFieldCount == 1 && rep.asGroupType().getType(0).isPrimitive) new GroupConverter {
        override def getConverter(i: Int): Converter = elem
        override def start(): Unit = elem.reset()
        override def end(): Unit = if (elem.value != null) buf += elem.value
      } else ignore(rep)
    def reset(): Unit = { present = false; buf.clear() }
    override def getConverter(i: Int): Converter = child
    override def start(): Unit = { present = true; buf.clear() }
    override def end(): Unit = ()
    def result: Vector[String] = buf.result()
    def opt: Option[Vector[String]] = if (present) Some(result) else None
  }

  // ------------------------------------------------------------------------------ struct base

  /**
   * A struct whose children are chosen by name; children not recognised are ignored. `start()`
   * resets every child; subclasses build their value in `end()`.
   */
  abstract class StructConv(g: GroupType) extends GroupConverter with Resettable {
    var present = false
    protected def child(name: String, t: Type): Converter
    private val children: Array[Converter] = g.getFields.asScala.map { f =>
      val c = child(f.getName, f)
      if (c == null) ignore(f) else c
    }.toArray
    private val resettable: Array[Resettable] = children.collect { case r: Resettable => r }
    override def getConverter(i: Int): Converter = children(i)
    def reset(): Unit = present = false
    override def start(): Unit = {
      present = true
      var i = 0
      while (i < resettable.length) { resettable(i).reset(); i += 1 }
    }
  }

  /** Converter for a column, if its type fits; null (ignored) otherwise. */
  private def strLeaf(t: Type): StringLeaf =
    if (t.isPrimitive && (t.asPrimitiveType().getPrimitiveTypeName == BINARY ||
      t.asPrimitiveType().getPrimitiveTypeName == FIXED_LEN_BYTE_ARRAY)) new StringLeaf else null
  private def longLeaf(t: Type): LongLeaf =
    if (t.isPrimitive && (t.asPrimitiveType().getPrimitiveTypeName == INT64 ||
      t.asPrimitiveType().getPrimitiveTypeName == INT32)) new LongLeaf else null
  private def intLeaf(t: Type): IntLeaf =
    if (t.isPrimitive && (t.asPrimitiveType().getPrimitiveTypeName == INT32 ||
      t.asPrimitiveType().getPrimitiveTypeName == INT64)) new IntLeaf else null
  private def boolLeaf(t: Type): BoolLeaf =
    if (t.isPrimitive && t.asPrimitiveType().getPrimitiveTypeName == BOOLEAN) new BoolLeaf else null
  private def mapConv(t: Type): StringMapConv =
    if (!t.isPrimitive && t.asGroupType().getFieldCount == 1 && t.asGroupType().getType(0).isRepetition(Type.Repetition.REPEATED))
      new StringMapConv(t.asGroupType()) else null
  private def listConv(t: Type): StringListConv =
    if (!t.isPrimitive && t.asGroupType().getFieldCount == 1 && t.asGroupType().getType(0).isRepetition(Type.Repetition.REPEATED))
      new StringListConv(t.asGroupType()) else null

  private def missing(action: String, field: String): Nothing =
    throw new IllegalStateException(s"a '$action' row has no '$field'")

  private def s(l: StringLeaf): Option[String] = if (l == null || l.value == null) None else Some(l.value)
  private def sv(l: StringLeaf): String = if (l == null) null else l.value
  private def lo(l: LongLeaf): Option[Long] = if (l == null) None else l.opt
  private def io(l: IntLeaf): Option[Int] = if (l == null) None else l.opt
  private def bo(l: BoolLeaf): Option[Boolean] = if (l == null) None else l.opt
  private def mo(m: StringMapConv): Option[Map[String, String]] = if (m == null) None else m.opt

  // ------------------------------------------------------------------------------ actions

  final class DvConv(g: GroupType) extends StructConv(g) {
    private var storageType, pathOrInlineDv: StringLeaf = _
    private var offset, sizeInBytes: IntLeaf = _
    private var cardinality, maxRowIndex: LongLeaf = _
    protected def child(name: String, t: Type): Converter = name match {
      case "storageType" => storageType = strLeaf(t); storageType
      case "pathOrInlineDv" => pathOrInlineDv = strLeaf(t); pathOrInlineDv
      case "offset" => offset = intLeaf(t); offset
      case "sizeInBytes" => sizeInBytes = intLeaf(t); sizeInBytes
      case "cardinality" => cardinality = longLeaf(t); cardinality
      case "maxRowIndex" => maxRowIndex = longLeaf(t); maxRowIndex
      case _ => null
    }
    override def end(): Unit = ()
    def opt: Option[DeletionVectorDescriptor] =
      if (!present || sv(storageType) == null) None
      else Some(DeletionVectorDescriptor(
        storageType = storageType.value,
        pathOrInlineDv = Option(sv(pathOrInlineDv)).getOrElse(missing("deletionVector", "pathOrInlineDv")),
        offset = io(offset),
        sizeInBytes = io(sizeInBytes).getOrElse(missing("deletionVector", "sizeInBytes")),
        cardinality = lo(cardinality).getOrElse(missing("deletionVector", "cardinality")),
        maxRowIndex = lo(maxRowIndex)))
  }

  /** Receives the action of the current row. */
  final class RowState { var current: Action = _ }

  final class AddConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var path, clusteringProvider, stats: StringLeaf = _
    private var partitionValues, tags: StringMapConv = _
    private var size, modificationTime, baseRowId, defaultRowCommitVersion: LongLeaf = _
    private var dataChange: BoolLeaf = _
    private var dv: DvConv = _
    private var statsParsed: StatsJsonConv = _
    protected def child(name: String, t: Type): Converter = name match {
      case "path" => path = strLeaf(t); path
      case "partitionValues" => partitionValues = mapConv(t); partitionValues
      case "size" => size = longLeaf(t); size
      case "modificationTime" => modificationTime = longLeaf(t); modificationTime
      case "dataChange" => dataChange = boolLeaf(t); dataChange
      case "tags" => tags = mapConv(t); tags
      case "deletionVector" if !t.isPrimitive => dv = new DvConv(t.asGroupType()); dv
      case "baseRowId" => baseRowId = longLeaf(t); baseRowId
      case "defaultRowCommitVersion" => defaultRowCommitVersion = longLeaf(t); defaultRowCommitVersion
      case "clusteringProvider" => clusteringProvider = strLeaf(t); clusteringProvider
      case "stats" => stats = strLeaf(t); stats
      case "stats_parsed" if !t.isPrimitive => statsParsed = new StatsJsonConv(t.asGroupType()); statsParsed
      case _ => null
    }
    override def end(): Unit = {
      val p = sv(path)
      if (p == null) missing("add", "path")
      val st = s(stats) match {
        case None if statsParsed != null && statsParsed.present => Some(statsParsed.json)
        case other => other
      }
      row.current = AddFile(
        path = p,
        partitionValues = if (partitionValues != null && partitionValues.present) partitionValues.result else Map.empty,
        size = lo(size).getOrElse(missing("add", "size")),
        modificationTime = lo(modificationTime).getOrElse(missing("add", "modificationTime")),
        dataChange = bo(dataChange).getOrElse(false),
        stats = st,
        tags = mo(tags),
        deletionVector = if (dv == null) None else dv.opt,
        baseRowId = lo(baseRowId),
        defaultRowCommitVersion = lo(defaultRowCommitVersion),
        clusteringProvider = s(clusteringProvider))
    }
  }

  final class RemoveConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var path, stats: StringLeaf = _
    private var partitionValues, tags: StringMapConv = _
    private var deletionTimestamp, size, baseRowId, defaultRowCommitVersion: LongLeaf = _
    private var dataChange, extendedFileMetadata: BoolLeaf = _
    private var dv: DvConv = _
    protected def child(name: String, t: Type): Converter = name match {
      case "path" => path = strLeaf(t); path
      case "deletionTimestamp" => deletionTimestamp = longLeaf(t); deletionTimestamp
      case "dataChange" => dataChange = boolLeaf(t); dataChange
      case "extendedFileMetadata" => extendedFileMetadata = boolLeaf(t); extendedFileMetadata
      case "partitionValues" => partitionValues = mapConv(t); partitionValues
      case "size" => size = longLeaf(t); size
      case "stats" => stats = strLeaf(t); stats
      case "tags" => tags = mapConv(t); tags
      case "deletionVector" if !t.isPrimitive => dv = new DvConv(t.asGroupType()); dv
      case "baseRowId" => baseRowId = longLeaf(t); baseRowId
      case "defaultRowCommitVersion" => defaultRowCommitVersion = longLeaf(t); defaultRowCommitVersion
      case _ => null
    }
    override def end(): Unit = {
      val p = sv(path)
      if (p == null) missing("remove", "path")
      row.current = RemoveFile(
        path = p,
        deletionTimestamp = lo(deletionTimestamp),
        dataChange = bo(dataChange).getOrElse(false),
        extendedFileMetadata = bo(extendedFileMetadata),
        partitionValues = mo(partitionValues),
        size = lo(size),
        stats = s(stats),
        tags = mo(tags),
        deletionVector = if (dv == null) None else dv.opt,
        baseRowId = lo(baseRowId),
        defaultRowCommitVersion = lo(defaultRowCommitVersion))
    }
  }

  final class FormatConv(g: GroupType) extends StructConv(g) {
    private var provider: StringLeaf = _
    private var options: StringMapConv = _
    protected def child(name: String, t: Type): Converter = name match {
      case "provider" => provider = strLeaf(t); provider
      case "options" => options = mapConv(t); options
      case _ => null
    }
    override def end(): Unit = ()
    def result: Format =
      if (!present) Format()
      else Format(Option(sv(provider)).getOrElse("parquet"), mo(options).getOrElse(Map.empty))
  }

  final class MetadataConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var id, name, description, schemaString: StringLeaf = _
    private var format: FormatConv = _
    private var partitionColumns: StringListConv = _
    private var configuration: StringMapConv = _
    private var createdTime: LongLeaf = _
    protected def child(n: String, t: Type): Converter = n match {
      case "id" => id = strLeaf(t); id
      case "name" => name = strLeaf(t); name
      case "description" => description = strLeaf(t); description
      case "format" if !t.isPrimitive => format = new FormatConv(t.asGroupType()); format
      case "schemaString" => schemaString = strLeaf(t); schemaString
      case "partitionColumns" => partitionColumns = listConv(t); partitionColumns
      case "configuration" => configuration = mapConv(t); configuration
      case "createdTime" => createdTime = longLeaf(t); createdTime
      case _ => null
    }
    override def end(): Unit = {
      val i = sv(id)
      if (i == null) missing("metaData", "id")
      row.current = Metadata(
        id = i,
        name = s(name),
        description = s(description),
        format = if (format == null) Format() else format.result,
        // Lenient: some old or hand-made logs have no schemaString; it stays null here and the
        // snapshot layer decides (the JSON codec rejects such a line).
        schemaString = sv(schemaString),
        partitionColumns = if (partitionColumns == null) Nil else partitionColumns.opt.getOrElse(Nil),
        configuration = mo(configuration).getOrElse(Map.empty),
        createdTime = lo(createdTime))
    }
  }

  final class ProtocolConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var reader, writer: IntLeaf = _
    private var readerFeatures, writerFeatures: StringListConv = _
    protected def child(n: String, t: Type): Converter = n match {
      case "minReaderVersion" => reader = intLeaf(t); reader
      case "minWriterVersion" => writer = intLeaf(t); writer
      case "readerFeatures" => readerFeatures = listConv(t); readerFeatures
      case "writerFeatures" => writerFeatures = listConv(t); writerFeatures
      case _ => null
    }
    override def end(): Unit = {
      val r = io(reader).getOrElse(missing("protocol", "minReaderVersion"))
      val w = io(writer).getOrElse(missing("protocol", "minWriterVersion"))
      row.current = ParquetActionConverters.protocol(r, w,
        if (readerFeatures == null) None else readerFeatures.opt,
        if (writerFeatures == null) None else writerFeatures.opt)
    }
  }

  /**
   * Builds a protocol leniently about the feature lists: null lists mean None; an empty list on
   * a legacy version (a known writer bug, delta-rs #2360) is treated as absent; a missing list on
   * a table-features version is treated as empty. Anything else is validated by [[Protocol]].
   */
  def protocol(r: Int, w: Int, rf: Option[Seq[String]], wf: Option[Seq[String]]): Protocol = {
    def fix(list: Option[Seq[String]], tableFeatures: Boolean): Option[Set[String]] =
      if (tableFeatures) Some(list.getOrElse(Nil).toSet)
      else list.filter(_.nonEmpty).map(_.toSet)
    Protocol(r, w, fix(rf, r >= 3), fix(wf, w >= 7))
  }

  final class TxnConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var appId: StringLeaf = _
    private var version, lastUpdated: LongLeaf = _
    protected def child(n: String, t: Type): Converter = n match {
      case "appId" => appId = strLeaf(t); appId
      case "version" => version = longLeaf(t); version
      case "lastUpdated" => lastUpdated = longLeaf(t); lastUpdated
      case _ => null
    }
    override def end(): Unit = {
      val a = sv(appId)
      if (a == null) missing("txn", "appId")
      row.current = SetTransaction(a, lo(version).getOrElse(missing("txn", "version")), lo(lastUpdated))
    }
  }

  final class DomainConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var domain, configuration: StringLeaf = _
    private var removed: BoolLeaf = _
    protected def child(n: String, t: Type): Converter = n match {
      case "domain" => domain = strLeaf(t); domain
      case "configuration" => configuration = strLeaf(t); configuration
      case "removed" => removed = boolLeaf(t); removed
      case _ => null
    }
    override def end(): Unit = {
      val d = sv(domain)
      if (d == null) missing("domainMetadata", "domain")
      row.current = DomainMetadata(d, Option(sv(configuration)).getOrElse(missing("domainMetadata", "configuration")),
        bo(removed).getOrElse(false))
    }
  }

  final class CheckpointMetadataConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var version: LongLeaf = _
    private var tags: StringMapConv = _
    protected def child(n: String, t: Type): Converter = n match {
      case "version" => version = longLeaf(t); version
      case "tags" => tags = mapConv(t); tags
      case _ => null
    }
    override def end(): Unit =
      row.current = CheckpointMetadata(lo(version).getOrElse(missing("checkpointMetadata", "version")), mo(tags))
  }

  final class SidecarConv(g: GroupType, row: RowState) extends StructConv(g) {
    private var path: StringLeaf = _
    private var sizeInBytes, modificationTime: LongLeaf = _
    private var tags: StringMapConv = _
    protected def child(n: String, t: Type): Converter = n match {
      case "path" => path = strLeaf(t); path
      case "sizeInBytes" => sizeInBytes = longLeaf(t); sizeInBytes
      case "modificationTime" => modificationTime = longLeaf(t); modificationTime
      case "tags" => tags = mapConv(t); tags
      case _ => null
    }
    override def end(): Unit = {
      val p = sv(path)
      if (p == null) missing("sidecar", "path")
      row.current = SidecarFile(p, lo(sizeInBytes).getOrElse(missing("sidecar", "sizeInBytes")),
        lo(modificationTime).getOrElse(missing("sidecar", "modificationTime")), mo(tags))
    }
  }

  /** The root of a checkpoint row. */
  final class RowConv(schema: MessageType) extends GroupConverter {
    val row = new RowState
    private val children: Array[Converter] = schema.getFields.asScala.map { f =>
      if (f.isPrimitive) ignore(f)
      else {
        val g = f.asGroupType()
        f.getName match {
          case "add" => new AddConv(g, row)
          case "remove" => new RemoveConv(g, row)
          case "metaData" => new MetadataConv(g, row)
          case "protocol" => new ProtocolConv(g, row)
          case "txn" => new TxnConv(g, row)
          case "domainMetadata" => new DomainConv(g, row)
          case "checkpointMetadata" => new CheckpointMetadataConv(g, row)
          case "sidecar" => new SidecarConv(g, row)
          case _ => ignore(f)
        }
      }
    }.toArray
    override def getConverter(i: Int): Converter = children(i)
    override def start(): Unit = row.current = null
    override def end(): Unit = ()
  }

  final class ActionMaterializer(schema: MessageType) extends RecordMaterializer[Action] {
    private val root = new RowConv(schema)
    override def getCurrentRecord: Action = root.row.current
    override def getRootConverter: GroupConverter = root
  }

  /**
   * parquet-mr read support: projects the file schema to the wanted columns and materializes
   * actions. [[CheckpointReader]] drives it row group by row group.
   */
  final class CheckpointReadSupport(want: CheckpointSchema.Fields) extends ReadSupport[Action] {
    override def init(context: InitContext): ReadContext =
      new ReadContext(CheckpointSchema.project(context.getFileSchema, want))
    override def prepareForRead(
        conf: Configuration,
        keyValueMetaData: java.util.Map[String, String],
        fileSchema: MessageType,
        readContext: ReadContext): RecordMaterializer[Action] =
      new ActionMaterializer(readContext.getRequestedSchema)
  }

  // ------------------------------------------------------------------------------ stats_parsed

  private val nodes = JsonNodeFactory.instance
  private val MillisFormat = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC)

  /** ISO-8601 UTC with millisecond precision, as delta-spark writes timestamps in stats. */
  def formatMicros(micros: Long): String =
    MillisFormat.format(java.time.Instant.ofEpochMilli(Math.floorDiv(micros, 1000L)))

  /** Micros since the epoch of an INT96 timestamp (nanos of day LE, then Julian day LE). */
  def int96ToMicros(b: Binary): Long = {
    val buf = b.toByteBuffer.order(ByteOrder.LITTLE_ENDIAN)
    val nanosOfDay = buf.getLong(buf.position())
    val julianDay = buf.getInt(buf.position() + 8)
    (julianDay - 2440588L) * 86400000000L + nanosOfDay / 1000L
  }

  /**
   * Rebuilds the stats JSON string from the `stats_parsed` struct (when `stats` is missing):
   * fields in schema order, null fields omitted, timestamps as ISO-8601 UTC with milliseconds,
   * dates as `yyyy-MM-dd`, decimals as JSON numbers.
   */
  final class StatsJsonConv(g: GroupType) extends GroupConverter with Resettable {
    var present = false
    private var root: ObjectNode = _
    private val conv = new JsonObjConv(g, () => root)
    def reset(): Unit = present = false
    override def getConverter(i: Int): Converter = conv.getConverter(i)
    override def start(): Unit = { present = true; root = nodes.objectNode() }
    override def end(): Unit = ()
    def json: String = Action.mapper.writeValueAsString(root)
  }

  /** Writes the fields of a struct into the object returned by `target`. */
  private final class JsonObjConv(g: GroupType, target: () => ObjectNode) extends GroupConverter {
    private val children: Array[Converter] = g.getFields.asScala.map { f =>
      if (f.isRepetition(Type.Repetition.REPEATED)) ignore(f)
      else if (f.isPrimitive) new JsonLeaf(f.getName, f.asPrimitiveType(), target)
      else {
        var node: ObjectNode = null
        val c = new JsonObjConv(f.asGroupType(), () => node)
        new GroupConverter {
          override def getConverter(i: Int): Converter = c.getConverter(i)
          override def start(): Unit = { node = nodes.objectNode(); target().set[ObjectNode](f.getName, node) }
          override def end(): Unit = ()
        }
      }
    }.toArray
    override def getConverter(i: Int): Converter = children(i)
    override def start(): Unit = ()
    override def end(): Unit = ()
  }

  private final class JsonLeaf(name: String, t: PrimitiveType, target: () => ObjectNode) extends PrimitiveConverter {
    private val logical: LogicalTypeAnnotation = t.getLogicalTypeAnnotation
    private def decimalScale: Int = logical match {
      case d: DecimalLogicalTypeAnnotation => d.getScale
      case _ => -1
    }
    private val scale = decimalScale
    private def putDecimal(unscaled: BigInteger): Unit =
      target().putRawValue(name, new RawValue(new JBigDecimal(unscaled, scale).toPlainString))
    override def addBoolean(v: Boolean): Unit = target().put(name, v)
    override def addInt(v: Int): Unit = logical match {
      case _: DateLogicalTypeAnnotation => target().put(name, LocalDate.ofEpochDay(v.toLong).toString)
      case _: DecimalLogicalTypeAnnotation => putDecimal(BigInteger.valueOf(v.toLong))
      case _ => target().put(name, v)
    }
    override def addLong(v: Long): Unit = logical match {
      case ts: TimestampLogicalTypeAnnotation =>
        val micros = ts.getUnit match {
          case TimeUnit.MILLIS => v * 1000L
          case TimeUnit.MICROS => v
          case TimeUnit.NANOS => Math.floorDiv(v, 1000L)
        }
        target().put(name, formatMicros(micros))
      case _: DecimalLogicalTypeAnnotation => putDecimal(BigInteger.valueOf(v))
      case _ => target().put(name, v)
    }
    override def addFloat(v: Float): Unit =
      if (v.isNaN || v.isInfinite) target().put(name, v.toString) else target().put(name, v)
    override def addDouble(v: Double): Unit =
      if (v.isNaN || v.isInfinite) target().put(name, v.toString) else target().put(name, v)
    override def addBinary(v: Binary): Unit =
      if (t.getPrimitiveTypeName == INT96) target().put(name, formatMicros(int96ToMicros(v)))
      else logical match {
        case _: DecimalLogicalTypeAnnotation => putDecimal(new BigInteger(v.getBytes))
        case _: StringLogicalTypeAnnotation | _: EnumLogicalTypeAnnotation | _: JsonLogicalTypeAnnotation =>
          target().put(name, v.toStringUsingUTF8)
        case null if t.getPrimitiveTypeName == BINARY => target().put(name, v.toStringUsingUTF8)
        case _ => () // binary statistics have no JSON form
      }
  }
}
