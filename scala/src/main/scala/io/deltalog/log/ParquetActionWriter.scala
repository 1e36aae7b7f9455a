package io.deltalog.log

import java.io.OutputStream

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.parquet.hadoop.{ParquetFileWriter, ParquetWriter}
import org.apache.parquet.hadoop.api.WriteSupport
import org.apache.parquet.hadoop.api.WriteSupport.WriteContext
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.io.{OutputFile, PositionOutputStream}
import org.apache.parquet.io.api.{Binary, RecordConsumer}
import org.apache.parquet.schema.{GroupType, MessageType}

import io.deltalog.actions._
import io.deltalog.protocol.Protocol

/**
 * Writes actions as checkpoint rows (one action per row, one non-null top-level column) with
 * parquet-mr's [[RecordConsumer]], following the layout of [[CheckpointSchema]]. Columns absent
 * from the file schema (e.g. `stats` when stats are not written as JSON) are skipped; actions
 * whose column the schema lacks are rejected.
 */
private[log] final class ParquetActionWriteSupport(schema: MessageType, statsStruct: Option[CheckpointStatsStruct])
  extends WriteSupport[Action] {

  private var rc: RecordConsumer = _

  private def idx(g: GroupType, name: String): Int = if (g.containsField(name)) g.getFieldIndex(name) else -1

  private val addG: GroupType = if (schema.containsField("add")) schema.getType(schema.getFieldIndex("add")).asGroupType() else null
  private val addStatsIdx = if (addG == null) -1 else idx(addG, "stats")
  private val addPvParsedIdx = if (addG == null) -1 else idx(addG, "partitionValues_parsed")
  private val addStatsParsedIdx = if (addG == null) -1 else idx(addG, "stats_parsed")

  override def init(configuration: Configuration): WriteContext =
    new WriteContext(schema, Map("writer.model.name" -> "deltalog").asJava)

  override def prepareForWrite(recordConsumer: RecordConsumer): Unit = rc = recordConsumer

  // ------------------------------------------------------------------------------ helpers

  private def str(name: String, i: Int, v: String): Unit = if (v != null) {
    rc.startField(name, i); rc.addBinary(Binary.fromString(v)); rc.endField(name, i)
  }
  private def optStr(name: String, i: Int, v: Option[String]): Unit = v.foreach(str(name, i, _))
  private def long(name: String, i: Int, v: Long): Unit = { rc.startField(name, i); rc.addLong(v); rc.endField(name, i) }
  private def optLong(name: String, i: Int, v: Option[Long]): Unit = v.foreach(long(name, i, _))
  private def int(name: String, i: Int, v: Int): Unit = { rc.startField(name, i); rc.addInteger(v); rc.endField(name, i) }
  private def bool(name: String, i: Int, v: Boolean): Unit = { rc.startField(name, i); rc.addBoolean(v); rc.endField(name, i) }

  /** A MAP of strings: `key_value` entries, null values left out of the `value` column. */
  private def map(name: String, i: Int, m: Map[String, String]): Unit = if (m != null) {
    rc.startField(name, i)
    rc.startGroup()
    if (m.nonEmpty) {
      rc.startField("key_value", 0)
      m.foreach { case (k, v) =>
        rc.startGroup()
        rc.startField("key", 0); rc.addBinary(Binary.fromString(k)); rc.endField("key", 0)
        if (v != null) { rc.startField("value", 1); rc.addBinary(Binary.fromString(v)); rc.endField("value", 1) }
        rc.endGroup()
      }
      rc.endField("key_value", 0)
    }
    rc.endGroup()
    rc.endField(name, i)
  }
  private def optMap(name: String, i: Int, m: Option[Map[String, String]]): Unit = m.foreach(map(name, i, _))

  /** A 3-level LIST of strings. */
  private def list(name: String, i: Int, xs: Iterable[String]): Unit = {
    rc.startField(name, i)
    rc.startGroup()
    if (xs.nonEmpty) {
      rc.startField("list", 0)
      xs.foreach { x =>
        rc.startGroup()
        if (x != null) { rc.startField("element", 0); rc.addBinary(Binary.fromString(x)); rc.endField("element", 0) }
        rc.endGroup()
      }
      rc.endField("list", 0)
    }
    rc.endGroup()
    rc.endField(name, i)
  }

  private def group(name: String)(body: => Unit): Unit = {
    val i = schema.getFieldIndex(name)
    rc.startField(name, i)
    rc.startGroup()
    body
    rc.endGroup()
    rc.endField(name, i)
  }

  private def dv(i: Int, d: DeletionVectorDescriptor): Unit = {
    rc.startField("deletionVector", i)
    rc.startGroup()
    str("storageType", 0, d.storageType)
    str("pathOrInlineDv", 1, d.pathOrInlineDv)
    d.offset.foreach(int("offset", 2, _))
    int("sizeInBytes", 3, d.sizeInBytes)
    long("cardinality", 4, d.cardinality)
    optLong("maxRowIndex", 5, d.maxRowIndex)
    rc.endGroup()
    rc.endField("deletionVector", i)
  }

  private def requireColumn(name: String): Unit =
    if (!schema.containsField(name)) {
      throw new IllegalArgumentException(s"a '$name' action cannot be written into this checkpoint file")
    }

  // ------------------------------------------------------------------------------ rows

  override def write(action: Action): Unit = {
    requireColumn(action.actionName)
    rc.startMessage()
    action match {
      case a: AddFile => group("add") {
        str("path", 0, a.path)
        map("partitionValues", 1, a.partitionValues)
        long("size", 2, a.size)
        long("modificationTime", 3, a.modificationTime)
        bool("dataChange", 4, a.dataChange)
        optMap("tags", 5, a.tags)
        a.deletionVector.foreach(dv(6, _))
        optLong("baseRowId", 7, a.baseRowId)
        optLong("defaultRowCommitVersion", 8, a.defaultRowCommitVersion)
        optStr("clusteringProvider", 9, a.clusteringProvider)
        if (addStatsIdx >= 0) optStr("stats", addStatsIdx, a.stats)
        statsStruct.foreach { s =>
          if (addPvParsedIdx >= 0) s.writePartitionValuesParsed(rc, addPvParsedIdx, a.partitionValues)
          if (addStatsParsedIdx >= 0) a.stats.foreach(st => s.writeStatsParsed(rc, addStatsParsedIdx, st))
        }
      }
      case r: RemoveFile => group("remove") {
        str("path", 0, r.path)
        optLong("deletionTimestamp", 1, r.deletionTimestamp)
        bool("dataChange", 2, r.dataChange)
        r.extendedFileMetadata.foreach(bool("extendedFileMetadata", 3, _))
        optMap("partitionValues", 4, r.partitionValues)
        optLong("size", 5, r.size)
        r.deletionVector.foreach(dv(6, _))
        optLong("baseRowId", 7, r.baseRowId)
        optLong("defaultRowCommitVersion", 8, r.defaultRowCommitVersion)
      }
      case m: Metadata => group("metaData") {
        str("id", 0, m.id)
        optStr("name", 1, m.name)
        optStr("description", 2, m.description)
        rc.startField("format", 3)
        rc.startGroup()
        str("provider", 0, m.format.provider)
        map("options", 1, m.format.options)
        rc.endGroup()
        rc.endField("format", 3)
        str("schemaString", 4, m.schemaString)
        list("partitionColumns", 5, m.partitionColumns)
        map("configuration", 6, m.configuration)
        optLong("createdTime", 7, m.createdTime)
      }
      case p: Protocol => group("protocol") {
        int("minReaderVersion", 0, p.minReaderVersion)
        int("minWriterVersion", 1, p.minWriterVersion)
        // Legacy protocols: null, never empty arrays (Trino rejects them; delta-rs #2360).
        p.readerFeatures.foreach(fs => list("readerFeatures", 2, fs.toSeq.sorted))
        p.writerFeatures.foreach(fs => list("writerFeatures", 3, fs.toSeq.sorted))
      }
      case t: SetTransaction => group("txn") {
        str("appId", 0, t.appId)
        long("version", 1, t.version)
        optLong("lastUpdated", 2, t.lastUpdated)
      }
      case d: DomainMetadata => group("domainMetadata") {
        str("domain", 0, d.domain)
        str("configuration", 1, d.configuration)
        bool("removed", 2, d.removed)
      }
      case c: CheckpointMetadata => group("checkpointMetadata") {
        long("version", 0, c.version)
        optMap("tags", 1, c.tags)
      }
      case s: SidecarFile => group("sidecar") {
        str("path", 0, s.path)
        long("sizeInBytes", 1, s.sizeInBytes)
        long("modificationTime", 2, s.modificationTime)
        optMap("tags", 3, s.tags)
      }
      case other =>
        throw new IllegalArgumentException(s"a '${other.actionName}' action does not belong in a checkpoint")
    }
    rc.endMessage()
  }
}

/** parquet-mr output over a stream someone else owns (closing the writer does not close it). */
private[log] final class StreamOutputFile(out: OutputStream) extends OutputFile {
  private def stream: PositionOutputStream = new PositionOutputStream {
    private var pos = 0L
    override def getPos: Long = pos
    override def write(b: Int): Unit = { out.write(b); pos += 1 }
    override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); pos += len }
    override def flush(): Unit = out.flush()
    override def close(): Unit = out.flush()
  }
  override def create(blockSizeHint: Long): PositionOutputStream = stream
  override def createOrOverwrite(blockSizeHint: Long): PositionOutputStream = stream
  override def supportsBlockSize(): Boolean = false
  override def defaultBlockSize(): Long = 0L
}

private[log] object ParquetActionWriter {
  private final class Builder(file: OutputFile, support: ParquetActionWriteSupport)
    extends ParquetWriter.Builder[Action, Builder](file) {
    override def self(): Builder = this
    override def getWriteSupport(conf: Configuration): WriteSupport[Action] = support
  }

  /** A snappy-compressed writer of checkpoint rows onto `out` (not closed by the writer). */
  def open(
      out: OutputStream,
      conf: Configuration,
      schema: MessageType,
      statsStruct: Option[CheckpointStatsStruct]): ParquetWriter[Action] =
  {
    val b = new Builder(new StreamOutputFile(out), new ParquetActionWriteSupport(schema, statsStruct))
      .withConf(conf)
      .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
      .withCompressionCodec(CompressionCodecName.SNAPPY)
      .withDictionaryEncoding(true)
      .withValidation(false)
      // Per-page CRCs are optional and not verified by checkpoint readers. (Size statistics stay:
      // their level histograms let CheckpointReader skip absent add fields.)
      .withPageWriteChecksumEnabled(false)
    // Paths and stats strings are (nearly) unique: a dictionary only costs hashing until
    // parquet-mr falls back to plain encoding.
    UniqueStringColumns.foreach(c => b.withDictionaryEncoding(c, false))
    b.build()
  }

  /** Leaf columns whose values are (nearly) all distinct. */
  private val UniqueStringColumns = Seq("add.path", "add.stats", "remove.path", "remove.stats")
}
