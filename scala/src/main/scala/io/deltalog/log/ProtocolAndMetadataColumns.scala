package io.deltalog.log

import java.nio.ByteBuffer

import scala.util.control.NonFatal

import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData}
import org.apache.parquet.schema.{GroupType, MessageType, Type}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import io.deltalog.actions.{Action, Format, Metadata}
import io.deltalog.parquet.SparseColumnChunk
import io.deltalog.parquet.SparseColumnChunk.{LeafSlots, Slot}

/**
 * The `protocol` and `metaData` rows of a local Parquet checkpoint, decoded straight from their
 * column chunks in the file's memory map ([[io.deltalog.parquet.MappedFiles]]) instead of through
 * parquet-mr's page index, filtered row-group read and record assembly. In a checkpoint these
 * columns are null in every row but one or two, so each of their chunks is a few runs of
 * definition levels and a handful of values: [[SparseColumnChunk]] walks the levels run by run
 * and keeps only the slots of rows that hold a value; this object assembles actions from those
 * slots. The actions are the ones [[ParquetActionConverters]]
 * builds from the same rows (same lenient rules for missing lists, maps and formats).
 *
 * Handles uncompressed and snappy chunks of V1 data pages (what Spark, delta-rs and deltalog
 * write), PLAIN and dictionary-encoded BINARY / INT32 / INT64 leaves, and lists and maps of
 * strings in their standard and legacy layouts. Anything else (another codec, V2 pages, another
 * encoding, BIT_PACKED levels, an unexpected type or
 * shape, a required field without its value, a row holding both a protocol and a metaData, more
 * than [[MaxSlots]] non-null slots) gives None: the caller then reads the rows with parquet-mr,
 * which raises the errors a damaged file deserves.
 */
private[log] object ProtocolAndMetadataColumns {
  /** Non-null slots kept per leaf; beyond that this is not a checkpoint's protocol / metaData. */
  val MaxSlots: Int = SparseColumnChunk.MaxSlots

  /** Files whose protocol / metaData rows were decoded here (tests, diagnostics). */
  val filesDecoded = new java.util.concurrent.atomic.AtomicLong()

  /**
   * The protocol and metaData actions of `blocks` (row groups of the file `mapped`, in order), in row order,
   * from the row groups whose statistics do not rule both out, stopping after the row group in
   * which both were seen; None when this reader cannot decode them (see the class comment).
   * `requested` is the projection of the file schema to the two columns.
   */
  def read(mapped: ByteBuffer, blocks: Seq[BlockMetaData], requested: MessageType): Option[IndexedSeq[Action]] =
    try {
      val out = IndexedSeq.newBuilder[Action]
      var protocol, metadata = false
      val it = blocks.iterator
      while (it.hasNext && !(protocol && metadata)) {
        val block = it.next()
        if (block.getRowCount > 0 && !CheckpointReader.noProtocolOrMetadata(block)) {
          val actions = rowGroup(mapped, block, requested) match {
            case Some(a) => a
            case None => return None
          }
          actions.foreach {
            case _: io.deltalog.protocol.Protocol => protocol = true
            case _: Metadata => metadata = true
            case _ =>
          }
          out ++= actions
        }
      }
      filesDecoded.incrementAndGet()
      Some(out.result())
    } catch { case NonFatal(_) => None }

  private def rowGroup(map: ByteBuffer, block: BlockMetaData, requested: MessageType): Option[IndexedSeq[Action]] = {
    val chunks = new java.util.HashMap[String, ColumnChunkMetaData]()
    block.getColumns.forEach(c => chunks.put(c.getPath.toDotString, c))
    val leaves = new java.util.HashMap[String, LeafSlots]()
    val cols = requested.getColumns.iterator()
    while (cols.hasNext) {
      val d = cols.next()
      val dotted = d.getPath.mkString(".")
      val chunk = chunks.get(dotted)
      if (chunk == null) return None
      SparseColumnChunk.decodeLeaf(map, chunk, d) match {
        case Some(s) => leaves.put(dotted, s)
        case None => return None
      }
    }
    new Assembler(requested, leaves).actions(block.getRowCount)
  }

  // ------------------------------------------------------------------------------ rows to actions

  /** A row or field this reader leaves to parquet-mr. */
  private final class Unsupported extends scala.util.control.ControlThrowable

  /** Builds the actions of one row group from its leaves' slots, with the converters' rules. */
  private final class Assembler(schema: MessageType, leaves: java.util.HashMap[String, LeafSlots]) {
    private def unsupported: Nothing = throw new Unsupported

    private def slots(path: Seq[String], row: Long): java.util.List[Slot] = {
      val l = leaves.get(path.mkString("."))
      val s = if (l == null) null else l.get(row)
      if (s == null) java.util.Collections.emptyList() else s
    }

    /** True when the projection has the field at `path` (a leaf or a group: parquet-mr's `containsPath` only finds leaves). */
    private def has(path: Seq[String]): Boolean = {
      var t: Type = schema
      path.forall { name =>
        val found = !t.isPrimitive && t.asGroupType().containsField(name)
        if (found) t = t.asGroupType().getType(t.asGroupType().getFieldIndex(name))
        found
      }
    }

    private def level(path: Seq[String]): Int = schema.getMaxDefinitionLevel(path: _*)

    private def fieldType(parent: GroupType, name: String): Option[Type] =
      if (parent.containsField(name)) Some(parent.getType(parent.getFieldIndex(name))) else None

    /** Rows whose struct `top` is present, from its probe leaf. */
    private def rowsWith(top: String, probe: String): Seq[Long] = {
      if (!schema.containsField(top) || !schema.getType(schema.getFieldIndex(top)).asGroupType().containsField(probe)) return Nil
      val l = leaves.get(s"$top.$probe")
      if (l == null) return Nil
      val structLevel = level(Seq(top))
      if (structLevel < 1) unsupported
      val out = Seq.newBuilder[Long]
      l.forEach((row, s) => if (!s.isEmpty && s.get(0).dl >= structLevel) out += row.longValue)
      out.result()
    }

    /** The value of a non-repeated leaf in `row` (null when null), accepting the given types. */
    private def scalar(path: Seq[String], row: Long, kinds: Set[PrimitiveTypeName]): AnyRef = {
      if (!has(path)) return null
      val t = schema.getType(path: _*)
      if (!t.isPrimitive || !kinds(t.asPrimitiveType().getPrimitiveTypeName)) unsupported
      val s = slots(path, row)
      if (s.isEmpty) null else s.get(0).value
    }

    private val Strings = Set(PrimitiveTypeName.BINARY)
    private val Numbers = Set(PrimitiveTypeName.INT32, PrimitiveTypeName.INT64)

    private def string(path: Seq[String], row: Long): String = scalar(path, row, Strings).asInstanceOf[String]
    private def number(path: Seq[String], row: Long): Option[Long] = scalar(path, row, Numbers) match {
      case null => None
      case i: Integer => Some(i.longValue)
      case l: java.lang.Long => Some(l.longValue)
      case _ => unsupported
    }

    /** `array<string>` at `path` (3-level or legacy 2-level): None when null in `row`. */
    private def list(path: Seq[String], row: Long): Option[Vector[String]] = {
      if (!has(path)) return None
      val t = schema.getType(path: _*)
      if (t.isPrimitive || t.asGroupType().getFieldCount != 1) unsupported
      val rep = t.asGroupType().getType(0)
      if (!rep.isRepetition(Type.Repetition.REPEATED)) unsupported
      val leaf =
        if (rep.isPrimitive) path :+ rep.getName
        else if (rep.asGroupType().getFieldCount == 1 && rep.asGroupType().getType(0).isPrimitive)
          path :+ rep.getName :+ rep.asGroupType().getType(0).getName
        else unsupported
      val lt = schema.getType(leaf: _*).asPrimitiveType()
      if (lt.getPrimitiveTypeName != PrimitiveTypeName.BINARY) unsupported
      val s = slots(leaf, row)
      val listLevel = level(path)
      if (s.isEmpty || s.get(0).dl < listLevel) None
      else {
        val max = level(leaf)
        val b = Vector.newBuilder[String]
        s.forEach(x => if (x.dl == max) b += x.value.asInstanceOf[String])
        Some(b.result())
      }
    }

    /** `map<string,string>` at `path` (any names of the repeated entry group): None when null in `row`. */
    private def map(path: Seq[String], row: Long): Option[Map[String, String]] = {
      if (!has(path)) return None
      val t = schema.getType(path: _*)
      if (t.isPrimitive || t.asGroupType().getFieldCount != 1) unsupported
      val entry = t.asGroupType().getType(0)
      if (!entry.isRepetition(Type.Repetition.REPEATED) || entry.isPrimitive || entry.asGroupType().getFieldCount != 2) unsupported
      val e = entry.asGroupType()
      if (!e.getType(0).isPrimitive || !e.getType(1).isPrimitive ||
        e.getType(0).asPrimitiveType().getPrimitiveTypeName != PrimitiveTypeName.BINARY ||
        e.getType(1).asPrimitiveType().getPrimitiveTypeName != PrimitiveTypeName.BINARY) unsupported
      val keyPath = path :+ e.getName :+ e.getType(0).getName
      val valuePath = path :+ e.getName :+ e.getType(1).getName
      val ks = slots(keyPath, row)
      val vs = slots(valuePath, row)
      val mapLevel = level(path)
      if (ks.isEmpty || ks.get(0).dl < mapLevel) None
      else {
        if (vs.size != ks.size) unsupported
        val entryLevel = level(path :+ e.getName)
        val keys = new Array[String](ks.size)
        val values = new Array[String](ks.size)
        var n = 0
        var i = 0
        while (i < ks.size) {
          val k = ks.get(i)
          if (k.dl >= entryLevel && k.value != null) {
            keys(n) = k.value.asInstanceOf[String]
            values(n) = vs.get(i).value.asInstanceOf[String]
            n += 1
          }
          i += 1
        }
        Some(ParquetActionConverters.stringMap(keys, values, n))
      }
    }

    private def protocol(row: Long): Action = {
      val r = number(Seq("protocol", "minReaderVersion"), row).getOrElse(unsupported)
      val w = number(Seq("protocol", "minWriterVersion"), row).getOrElse(unsupported)
      ParquetActionConverters.protocol(r.toInt, w.toInt, list(Seq("protocol", "readerFeatures"), row),
        list(Seq("protocol", "writerFeatures"), row))
    }

    private def metadata(row: Long): Action = {
      val m = schema.getType(schema.getFieldIndex("metaData")).asGroupType()
      val id = string(Seq("metaData", "id"), row)
      if (id == null) unsupported
      val format = fieldType(m, "format") match {
        case None => Format()
        case Some(f) if f.isPrimitive => Format()
        case Some(f) =>
          val g = f.asGroupType()
          // the struct is present when its first leaf's slot reaches the struct's level
          val firstLeaf = schema.getColumns.stream().filter(c => c.getPath.length > 2 &&
            c.getPath()(0) == "metaData" && c.getPath()(1) == "format").findFirst()
          if (!firstLeaf.isPresent || g.getFieldCount == 0) unsupported
          val s = slots(firstLeaf.get.getPath.toSeq, row)
          if (s.isEmpty || s.get(0).dl < level(Seq("metaData", "format"))) Format()
          else Format(Option(string(Seq("metaData", "format", "provider"), row)).getOrElse("parquet"),
            map(Seq("metaData", "format", "options"), row).getOrElse(Map.empty))
      }
      Metadata(
        id = id,
        name = Option(string(Seq("metaData", "name"), row)),
        description = Option(string(Seq("metaData", "description"), row)),
        format = format,
        schemaString = string(Seq("metaData", "schemaString"), row),
        partitionColumns = list(Seq("metaData", "partitionColumns"), row).getOrElse(Nil),
        configuration = map(Seq("metaData", "configuration"), row).getOrElse(Map.empty),
        createdTime = number(Seq("metaData", "createdTime"), row))
    }

    def actions(rowCount: Long): Option[IndexedSeq[Action]] =
      try {
        val p = rowsWith("protocol", "minReaderVersion").toSet
        val m = rowsWith("metaData", "id").toSet
        if (p.exists(m.contains) || (p ++ m).exists(r => r < 0 || r >= rowCount)) unsupported
        Some((p ++ m).toIndexedSeq.sorted.map(r => if (p(r)) protocol(r) else metadata(r)))
      } catch {
        case _: Unsupported => None
        case NonFatal(_) => None
      }
  }
}
