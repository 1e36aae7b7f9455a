package io.deltalog.log

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.io.api.RecordConsumer
import org.apache.parquet.schema.{GroupType, MessageType}

import io.deltalog.parquet.{ColumnChunkWriter, ShreddedRows}

/** Live rows `rows(from until until)` of `chunk` (row indexes in chunk order). */
private[log] final class LiveRows(val chunk: FileChunk, val rows: Array[Int], val from: Int, val until: Int) {
  def size: Int = until - from
}

/**
 * Writes the `add` column chunks of checkpoint rows straight from a snapshot's [[FileChunk]]s:
 * paths and stats are copied from the chunks' UTF-8 bytes, partition-value maps (shared between
 * files) are encoded once, absent fields become null runs; no `AddFile` is built. The rows get
 * the same levels and values as [[ParquetActionWriteSupport]] writes for `chunk.get(i)`
 * (`dataChange = false`, unknown fields not written). The typed `partitionValues_parsed` /
 * `stats_parsed` columns, when the schema has them, are shredded per row through
 * [[CheckpointStatsStruct]] as the reference writer does.
 */
private[log] final class LiveAddColumns(schema: MessageType, statsStruct: Option[CheckpointStatsStruct]) {
  import LiveAddColumns._

  private val addGroup: GroupType =
    if (schema.containsField("add")) schema.getType(schema.getFieldIndex("add")).asGroupType() else null
  private val addDef = if (addGroup == null) 0 else schema.getMaxDefinitionLevel("add")

  private val leaves: IndexedSeq[ColumnDescriptor] = {
    val cols = schema.getColumns
    IndexedSeq.tabulate(cols.size)(cols.get)
  }

  /** What fills each leaf (by index in `schema.getColumns`). */
  private val sources: IndexedSeq[Source] = leaves.map { d =>
    val p = d.getPath.toSeq
    if (p.head != "add") NotAdd
    else p.tail match {
      case Seq("path") => Path
      case Seq("partitionValues", _, "key") => PartitionKey
      case Seq("partitionValues", _, "value") => PartitionValue
      case Seq("size") => Size
      case Seq("modificationTime") => ModificationTime
      case Seq("dataChange") => DataChange
      case Seq("tags", _, "key") => TagKey
      case Seq("tags", _, "value") => TagValue
      case Seq("deletionVector", field) => DvField(field)
      case Seq("baseRowId") => BaseRowId
      case Seq("defaultRowCommitVersion") => DefaultRowCommitVersion
      case Seq("clusteringProvider") => ClusteringProvider
      case Seq("stats") => Stats
      case ("partitionValues_parsed" | "stats_parsed") +: _ => Typed
      case _ => throw new IllegalArgumentException(s"unexpected add column ${p.mkString(".")}")
    }
  }

  // ------------------------------------------------------------------------------ typed stats

  /** `add` with only its typed struct fields (same levels as in the full schema). */
  private val typedSchema: MessageType = {
    val typed = if (addGroup == null) Nil
      else Seq("partitionValues_parsed", "stats_parsed").filter(addGroup.containsField).map(addGroup.getType)
    if (typed.isEmpty) null else new MessageType(schema.getName, addGroup.withNewFields(typed: _*))
  }
  private var typedFor: Array[LiveRows] = _
  private var typedParts: Seq[ShreddedRows] = Nil

  /**
   * The typed columns of `slice` (JSON stats parsed per row), shredded in consecutive parts on
   * [[CheckpointThreads]] and this thread together.
   */
  private def typed(slice: Array[LiveRows]): Seq[ShreddedRows] = {
    if (typedFor ne slice) {
      val s = statsStruct.getOrElse(throw new IllegalStateException("typed stats columns without a stats struct"))
      val add = typedSchema.getType(0).asGroupType()
      val pvIdx = if (add.containsField("partitionValues_parsed")) add.getFieldIndex("partitionValues_parsed") else -1
      val statsIdx = if (add.containsField("stats_parsed")) add.getFieldIndex("stats_parsed") else -1
      def shred(part: Array[LiveRows]): ShreddedRows = {
        val rows = part.iterator.flatMap(r => Iterator.range(r.from, r.until).map(k => (r.chunk, r.rows(k))))
        ShreddedRows(typedSchema, rows) { case (rc, (chunk, i)) =>
          rc.startMessage()
          rc.startField("add", 0)
          rc.startGroup()
          if (pvIdx >= 0) s.writePartitionValuesParsed(rc, pvIdx, chunk.partitionValuesAt(i))
          if (statsIdx >= 0) { val st = chunk.statsAt(i); if (st != null) s.writeStatsParsed(rc, statsIdx, st) }
          rc.endGroup()
          rc.endField("add", 0)
          rc.endMessage()
        }
      }
      val parts = split(slice, 1 + CheckpointThreads.size)
      val background = parts.drop(1).map { p =>
        CheckpointThreads.executor.submit(new java.util.concurrent.Callable[ShreddedRows] {
          override def call(): ShreddedRows = shred(p)
        })
      }
      val first = shred(parts.head)
      typedParts = first +: background.map { f =>
        try f.get()
        catch { case e: java.util.concurrent.ExecutionException => throw e.getCause }
      }
      typedFor = slice
    }
    typedParts
  }

  /** `slice` in at most `n` consecutive parts of about equal rows (at least 4096 rows each). */
  private def split(slice: Array[LiveRows], n: Int): Seq[Array[LiveRows]] = {
    val total = slice.map(_.size.toLong).sum
    val parts = math.max(1L, math.min(n.toLong, total / 4096)).toInt
    if (parts == 1) return Seq(slice)
    val per = (total + parts - 1) / parts
    val out = Seq.newBuilder[Array[LiveRows]]
    val cur = scala.collection.mutable.ArrayBuffer.empty[LiveRows]
    var room = per
    slice.foreach { r =>
      var from = r.from
      while (from < r.until) {
        val take = math.min(room, (r.until - from).toLong).toInt
        cur += new LiveRows(r.chunk, r.rows, from, from + take)
        from += take
        room -= take
        if (room == 0) { out += cur.toArray; cur.clear(); room = per }
      }
    }
    if (cur.nonEmpty) out += cur.toArray
    out.result()
  }

  // ------------------------------------------------------------------------------ maps

  /** Partition-value maps are shared between files: each is encoded once. */
  private val encodedPartitionValues = new EncodedMap.Cache(LiveAddColumns.MaxEncodedMaps)

  /** Definition level of a present map entry in a `key` / `value` leaf (a value adds one). */
  private def mapEntryDef(w: ColumnChunkWriter, keys: Boolean): Int = if (keys) w.maxDef else w.maxDef - 1

  /**
   * One row of a `map<string,string>` leaf (`keys` or values): null map → one entry at the
   * `add` level, empty map → one entry at the map level, else one entry per key.
   */
  private def mapRow(w: ColumnChunkWriter, m: Map[String, String], e: EncodedMap, keys: Boolean): Unit = {
    val entryDef = mapEntryDef(w, keys)
    if (m == null) w.nulls(0, entryDef - 2, 1)
    else if (m.isEmpty) w.nulls(0, entryDef - 1, 1)
    else {
      val bytes = if (keys) e.keys else e.values
      var j = 0
      while (j < bytes.length) {
        val b = bytes(j)
        val rep = if (j == 0) 0 else 1
        if (b == null) w.nulls(rep, entryDef, 1) else w.binary(rep, b, 0, b.length)
        j += 1
      }
    }
  }

  // ------------------------------------------------------------------------------ leaves

  /** Fills leaf `leaf` of `w` with the rows of `slice` (in order). */
  def write(leaf: Int, slice: Array[LiveRows], w: ColumnChunkWriter): Unit = sources(leaf) match {
    case NotAdd => slice.foreach(r => w.nulls(0, 0, r.size))
    case Typed => typed(slice).foreach(_.leaf(leaves(leaf).getPath).replay(w))
    case src => slice.foreach(r => writeRows(src, r, w))
  }

  private def writeRows(src: Source, r: LiveRows, w: ColumnChunkWriter): Unit = {
    val c = r.chunk
    val rows = r.rows
    val absent = w.maxDef - 1 // an optional field directly under `add`
    var k = r.from
    val until = r.until
    src match {
      case Path => utf8(c.pathColumn, rows, k, until, w)
      case Stats => utf8(c.statsColumn, rows, k, until, w)
      case Size => while (k < until) { w.long(0, c.size(rows(k))); k += 1 }
      case ModificationTime => while (k < until) { w.long(0, c.modificationTime(rows(k))); k += 1 }
      case DataChange => while (k < until) { w.boolean(0, false); k += 1 }
      case PartitionKey | PartitionValue =>
        val keys = src == PartitionKey
        while (k < until) {
          val m = c.partitionValuesAt(rows(k))
          if (m == null || m.isEmpty) {
            // Unpartitioned tables: one null run for all rows sharing the (empty) map.
            var n = 1
            while (k + n < until && (c.partitionValuesAt(rows(k + n)) eq m)) n += 1
            val entryDef = mapEntryDef(w, keys)
            w.nulls(0, if (m == null) entryDef - 2 else entryDef - 1, n)
            k += n
          } else {
            mapRow(w, m, encodedPartitionValues(m), keys)
            k += 1
          }
        }
      case TagKey | TagValue =>
        if (c.hasNoTags) w.nulls(0, addDef, until - k)
        else while (k < until) {
          val m = c.tagsAt(rows(k))
          mapRow(w, m, if (m == null || m.isEmpty) null else EncodedMap.of(m), src == TagKey)
          k += 1
        }
      case DvField(field) =>
        if (c.hasNoDeletionVectors) w.nulls(0, addDef, until - k)
        else while (k < until) {
          val d = c.deletionVectorAt(rows(k))
          if (d == null) w.nulls(0, addDef, 1)
          else field match {
            case "storageType" => optString(w, d.storageType)
            case "pathOrInlineDv" => optString(w, d.pathOrInlineDv)
            case "offset" => if (d.offset.isDefined) w.int(0, d.offset.get) else w.nulls(0, absent, 1)
            case "sizeInBytes" => w.int(0, d.sizeInBytes)
            case "cardinality" => w.long(0, d.cardinality)
            case "maxRowIndex" => if (d.maxRowIndex.isDefined) w.long(0, d.maxRowIndex.get) else w.nulls(0, absent, 1)
            case other => throw new IllegalArgumentException(s"unexpected deletion vector column $other")
          }
          k += 1
        }
      case BaseRowId | DefaultRowCommitVersion =>
        val base = src == BaseRowId
        if (c.hasNoRowTracking) w.nulls(0, absent, until - k)
        else while (k < until) {
          val i = rows(k)
          if (if (base) c.hasBaseRowId(i) else c.hasDefaultRowCommitVersion(i)) {
            w.long(0, if (base) c.baseRowId(i) else c.defaultRowCommitVersion(i))
          } else w.nulls(0, absent, 1)
          k += 1
        }
      case ClusteringProvider =>
        if (c.hasNoClusteringProviders) w.nulls(0, absent, until - k)
        else while (k < until) { optString(w, c.clusteringProviderAt(rows(k))); k += 1 }
      case other => throw new IllegalStateException(s"unexpected add column source $other")
    }
  }

  private def optString(w: ColumnChunkWriter, s: String): Unit =
    if (s == null) w.nulls(0, w.maxDef - 1, 1) else w.string(0, s)

  private def utf8(col: Utf8Column, rows: Array[Int], from: Int, until: Int, w: ColumnChunkWriter): Unit = {
    val absent = w.maxDef - 1
    var k = from
    while (k < until) {
      val i = rows(k)
      if (col.isNull(i)) w.nulls(0, absent, 1)
      else {
        val s = col.start(i)
        w.binary(0, col.segmentData(i), s, col.end(i) - s)
      }
      k += 1
    }
  }
}

private[log] object LiveAddColumns {
  /** Encoded partition-value maps kept per writer (the cache is dropped when full). */
  val MaxEncodedMaps: Int = 1 << 16

  private sealed trait Source
  private case object NotAdd extends Source
  private case object Typed extends Source
  private case object Path extends Source
  private case object PartitionKey extends Source
  private case object PartitionValue extends Source
  private case object Size extends Source
  private case object ModificationTime extends Source
  private case object DataChange extends Source
  private case object TagKey extends Source
  private case object TagValue extends Source
  private final case class DvField(name: String) extends Source
  private case object BaseRowId extends Source
  private case object DefaultRowCommitVersion extends Source
  private case object ClusteringProvider extends Source
  private case object Stats extends Source
}
