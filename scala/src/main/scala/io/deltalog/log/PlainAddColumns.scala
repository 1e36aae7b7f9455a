package io.deltalog.log

import scala.collection.immutable.VectorMap
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.parquet.column.ColumnReader
import org.apache.parquet.column.impl.ColumnReadStoreImpl
import org.apache.parquet.column.page.PageReadStore
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{GroupType, MessageType, Type}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._

import io.deltalog.parquet.{BinaryLeafDecoder, BooleanLeafDecoder, LongLeafDecoder, RowBlocks}

/**
 * Column-wise reading of a checkpoint's `add` rows (every field but `stats_parsed` /
 * `partitionValues_parsed`, which go through record assembly): `path`, `stats`, `size`,
 * `modificationTime` and `dataChange` with [[LeafDecoder]]s (levels and values decoded a page at
 * a time), the rarer leaves with parquet-mr's column API. A row with only `path`,
 * `partitionValues`, `size`, `modificationTime`, `dataChange`, `stats` is handed to
 * [[ReplaySink.acceptPlainAdd]] as raw bytes, with no record assembly, no `AddFile` and no
 * `String` per row; a row that also has tags, a deletion vector, row tracking or a clustering
 * provider is built as an `AddFile` and passed to `accept`. Semantics are those of `ParquetActionConverters.AddConv`: a row without
 * `path`, `size` or `modificationTime` is an error, a missing `dataChange` reads as false, a null
 * or absent `partitionValues` as an empty map, map entries with a null key are dropped.
 */
private[log] object PlainAddColumns {

  private def isBinary(t: Type) = t.isPrimitive && t.asPrimitiveType().getPrimitiveTypeName == BINARY
  private def isLong(t: Type) = t.isPrimitive &&
    (t.asPrimitiveType().getPrimitiveTypeName == INT64 || t.asPrimitiveType().getPrimitiveTypeName == INT32)
  private def isBool(t: Type) = t.isPrimitive && t.asPrimitiveType().getPrimitiveTypeName == BOOLEAN

  /** A `map<string,string>` group: one repeated (key, value) group of two binary leaves. */
  private def isStringMap(t: Type): Boolean = !t.isPrimitive && {
    val g = t.asGroupType()
    g.getFieldCount == 1 && g.getType(0).isRepetition(Type.Repetition.REPEATED) && !g.getType(0).isPrimitive && {
      val e = g.getType(0).asGroupType()
      e.getFieldCount == 2 && isBinary(e.getType(0)) && isBinary(e.getType(1)) &&
        !e.getType(0).isRepetition(Type.Repetition.REPEATED) && !e.getType(1).isRepetition(Type.Repetition.REPEATED)
    }
  }

  private val DvLeaves = Set("storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality", "maxRowIndex")

  /** A `deletionVector` struct of known, non-repeated leaves of the protocol's types. */
  private def isDv(t: Type): Boolean = !t.isPrimitive && t.asGroupType().getFields.asScala.forall { c =>
    !c.isRepetition(Type.Repetition.REPEATED) && DvLeaves(c.getName) &&
      (if (c.getName == "storageType" || c.getName == "pathOrInlineDv") isBinary(c) else isLong(c))
  } && t.asGroupType().containsField("storageType")

  /** True when the projected, non-repeated `add` group can be read by [[read]]. */
  def applies(add: GroupType): Boolean =
    !add.isRepetition(Type.Repetition.REPEATED) && add.containsField("path") && add.getFields.asScala.forall { f =>
      !f.isRepetition(Type.Repetition.REPEATED) && (f.getName match {
        case "path" | "stats" | "clusteringProvider" => isBinary(f)
        case "size" | "modificationTime" | "baseRowId" | "defaultRowCommitVersion" => isLong(f)
        case "dataChange" => isBool(f)
        case "partitionValues" | "tags" => isStringMap(f)
        case "deletionVector" => isDv(f)
        case _ => false
      })
    }

  private def missing(field: String): Nothing = throw new IllegalStateException(s"a 'add' row has no '$field'")

  /** One non-repeated leaf of `add`. */
  private final class Leaf(store: ColumnReadStoreImpl, schema: MessageType, name: String) {
    private val d = schema.getColumnDescription(Array("add", name))
    val r: ColumnReader = store.getColumnReader(d)
    val max: Int = d.getMaxDefinitionLevel
    private val isInt32 = d.getPrimitiveType.getPrimitiveTypeName == INT32
    def present: Boolean = r.getCurrentDefinitionLevel == max
    def long: Long = if (isInt32) r.getInteger.toLong else r.getLong
    /** The current value (None when null), consumed. */
    def longOpt(): Option[Long] = { val v = if (present) Some(long) else None; r.consume(); v }
    def stringOpt(): Option[String] = { val v = if (present) Some(r.getBinary.toStringUsingUTF8) else None; r.consume(); v }
  }

  /** The `deletionVector` leaves; [[row]] gives the row's descriptor (None: no DV). */
  private final class DvLeaves(store: ColumnReadStoreImpl, schema: MessageType, dv: GroupType) {
    private def leaf(n: String) = if (dv.containsField(n)) new DvLeaf(n) else null
    private final class DvLeaf(n: String) {
      private val d = schema.getColumnDescription(Array("add", "deletionVector", n))
      val r: ColumnReader = store.getColumnReader(d)
      private val isInt32 = d.getPrimitiveType.getPrimitiveTypeName == INT32
      private val max = d.getMaxDefinitionLevel
      def longOpt(): Option[Long] = {
        val v = if (r.getCurrentDefinitionLevel == max) Some(if (isInt32) r.getInteger.toLong else r.getLong) else None
        r.consume(); v
      }
      def stringOpt(): Option[String] = {
        val v = if (r.getCurrentDefinitionLevel == max) Some(r.getBinary.toStringUsingUTF8) else None
        r.consume(); v
      }
    }
    private val storageType = leaf("storageType")
    private val pathOrInlineDv = leaf("pathOrInlineDv")
    private val offset = leaf("offset")
    private val sizeInBytes = leaf("sizeInBytes")
    private val cardinality = leaf("cardinality")
    private val maxRowIndex = leaf("maxRowIndex")
    private def str(l: DvLeaf) = if (l == null) None else l.stringOpt()
    private def lng(l: DvLeaf) = if (l == null) None else l.longOpt()
    private def dvMissing(f: String): Nothing = throw new IllegalStateException(s"a 'deletionVector' row has no '$f'")

    def row(): Option[io.deltalog.actions.DeletionVectorDescriptor] = {
      val st = str(storageType)
      val p = str(pathOrInlineDv)
      val o = lng(offset)
      val sz = lng(sizeInBytes)
      val c = lng(cardinality)
      val m = lng(maxRowIndex)
      st.map { t =>
        io.deltalog.actions.DeletionVectorDescriptor(t, p.getOrElse(dvMissing("pathOrInlineDv")), o.map(_.toInt),
          sz.getOrElse(dvMissing("sizeInBytes")).toInt, c.getOrElse(dvMissing("cardinality")), m)
      }
    }
  }

  /** The two leaves of a map column, read entry by entry. */
  private final class MapLeaves(store: ColumnReadStoreImpl, schema: MessageType, add: GroupType, name: String) {
    private val entryName = add.getType(name).asGroupType().getType(0).asGroupType()
    private val kd = schema.getColumnDescription(Array("add", name, entryName.getName, entryName.getType(0).getName))
    private val vd = schema.getColumnDescription(Array("add", name, entryName.getName, entryName.getType(1).getName))
    private val k = store.getColumnReader(kd)
    private val v = store.getColumnReader(vd)
    private val total = k.getTotalValueCount
    private var consumed = 0L
    private val entryLevel = schema.getMaxDefinitionLevel("add", name, entryName.getName)
    private val mapLevel = schema.getMaxDefinitionLevel("add", name)
    /** True when the map of the row read last was not null. */
    var present = false
    private var keys = new Array[Binary](4)
    private var values = new Array[Binary](4)
    private var n = 0
    private var prevKeys = new Array[Binary](4)
    private var prevValues = new Array[Binary](4)
    private var prevN = -1
    private var prevMap: Map[String, String] = Map.empty

    private def next(): Unit = {
      if (k.getCurrentDefinitionLevel >= entryLevel) {
        val key = if (k.getCurrentDefinitionLevel == kd.getMaxDefinitionLevel) k.getBinary else null
        val value = if (v.getCurrentDefinitionLevel == vd.getMaxDefinitionLevel) v.getBinary else null
        if (key != null) {
          if (n == keys.length) { keys = java.util.Arrays.copyOf(keys, n * 2); values = java.util.Arrays.copyOf(values, n * 2) }
          keys(n) = key
          values(n) = value
          n += 1
        }
      }
      k.consume(); v.consume(); consumed += 1
    }

    /** Consumes the slots of the current row; returns its map (the previous row's when equal). */
    def row(): Map[String, String] = {
      n = 0
      present = k.getCurrentDefinitionLevel >= mapLevel
      next()
      while (consumed < total && k.getCurrentRepetitionLevel > 0) next()
      if (n == prevN && same()) prevMap
      else {
        prevMap = build()
        if (prevKeys.length < n) { prevKeys = new Array[Binary](keys.length); prevValues = new Array[Binary](keys.length) }
        System.arraycopy(keys, 0, prevKeys, 0, n)
        System.arraycopy(values, 0, prevValues, 0, n)
        prevN = n
        prevMap
      }
    }

    private def same(): Boolean = {
      var i = 0
      while (i < n) {
        if (keys(i) != prevKeys(i)) return false
        val a = values(i)
        val b = prevValues(i)
        if (if (a == null) b != null else a != b) return false
        i += 1
      }
      true
    }

    private def str(b: Binary): String = if (b == null) null else b.toStringUsingUTF8

    private def build(): Map[String, String] = n match {
      case 0 => Map.empty
      case _ if n <= 4 =>
        var m = Map.empty[String, String]
        var i = 0
        while (i < n) { m = m.updated(str(keys(i)), str(values(i))); i += 1 }
        m
      case _ =>
        val b = VectorMap.newBuilder[String, String]
        var i = 0
        while (i < n) { b += str(keys(i)) -> str(values(i)); i += 1 }
        b.result()
    }

    /** Skips the (single, entry-less) slot of a row without an `add`. */
    def skipRow(): Unit = { n = 0; next(); while (consumed < total && k.getCurrentRepetitionLevel > 0) next() }
  }

  /**
   * An exception of the sink, carried out of [[read]] unchanged: the checkpoint reader reports
   * every other exception of [[read]] (a damaged page: a decoder's bounds check, a codec's
   * error, parquet-mr's decoding exception) as a damaged file.
   */
  final class SinkFailure(val error: Throwable) extends RuntimeException(error.toString, error, false, false)

  /**
   * Reads the `add` leaves of one row group (`rows` rows; `pages` holds at least the columns of
   * `add` in `schema`, a message type whose only field is the projected `add` group) and pushes
   * every row that has an `add` into `sink`.
   */
  def read(pages: PageReadStore, schema: MessageType, createdBy: String, version: Long, sink: ReplaySink): Unit =
    read(pages, schema, createdBy, version, sink, null)

  /**
   * [[read]] with the `stats` of the rows decoded by `parallelStats` on another thread (`schema`
   * then has no `add.stats`; `sink.detachedStats` must not be null and its column handed to
   * `parallelStats` by [[ParallelStatsReader.start]]).
   */
  def read(pages: PageReadStore, schema: MessageType, createdBy: String, version: Long, sink: ReplaySink,
      parallelStats: ParallelStatsReader): Unit = {
    if (parallelStats == null) { readRows(pages, schema, createdBy, version, sink, null, null); return }
    val ds = sink.detachedStats
    // On a failure the load is abandoned: the other thread is only stopped.
    try readRows(pages, schema, createdBy, version, sink, parallelStats, ds)
    catch { case e: Throwable => parallelStats.abort(); throw e }
    ds.attach(parallelStats.finish())
  }

  private def readRows(pages: PageReadStore, schema: MessageType, createdBy: String, version: Long, sink: ReplaySink,
      ps: ParallelStatsReader, ds: DetachedStats): Unit = {
    val rows = new Rows(pages, schema, createdBy, version, sink, ps, ds)
    val n = pages.getRowCount
    var i = 0L
    while (i < n) {
      val until = math.min(n, i + RowBlocks.Size) // see RowBlocks
      rows.block(i, until)
      i = until
    }
  }

  /** The leaf decoders of one row group's `add` columns and the loop over its rows ([[block]]). */
  private final class Rows(pages: PageReadStore, schema: MessageType, createdBy: String, version: Long,
      sink: ReplaySink, ps: ParallelStatsReader, ds: DetachedStats) {
    private val add = schema.getType(schema.getFieldIndex("add")).asGroupType()
    // parquet-mr's column readers, for the rarer leaves only (a plain table has none of them)
    private lazy val store = new ColumnReadStoreImpl(pages, new ParquetActionConverters.IgnoreGroup(schema), schema, createdBy)
    private val addLevel = schema.getMaxDefinitionLevel("add")
    private def binary(name: String) = {
      val d = schema.getColumnDescription(Array("add", name))
      new BinaryLeafDecoder(pages.getPageReader(d), d)
    }
    private val path = binary("path")
    private val pathMax = schema.getMaxDefinitionLevel("add", "path")
    private def leaf(name: String) = if (add.containsField(name)) new Leaf(store, schema, name) else null
    private def descriptor(name: String) = schema.getColumnDescription(Array("add", name))
    private def longLeaf(name: String) =
      if (add.containsField(name)) new LongLeafDecoder(pages.getPageReader(descriptor(name)), descriptor(name)) else null
    private def maxLevel(name: String) = if (add.containsField(name)) schema.getMaxDefinitionLevel("add", name) else 0
    private val size = longLeaf("size")
    private val sizeMax = maxLevel("size")
    private val mtime = longLeaf("modificationTime")
    private val mtimeMax = maxLevel("modificationTime")
    private val dataChange = if (add.containsField("dataChange"))
      new BooleanLeafDecoder(pages.getPageReader(descriptor("dataChange")), descriptor("dataChange")) else null
    private val dataChangeMax = maxLevel("dataChange")
    private val stats = if (add.containsField("stats")) binary("stats") else null
    private val statsMax = if (stats == null) 0 else schema.getMaxDefinitionLevel("add", "stats")
    private val pv = if (add.containsField("partitionValues")) new MapLeaves(store, schema, add, "partitionValues") else null
    // Fields a plain row does not have: read column-wise too; a row with any of them becomes an AddFile.
    private val tags = if (add.containsField("tags")) new MapLeaves(store, schema, add, "tags") else null
    private val dv = if (add.containsField("deletionVector"))
      new DvLeaves(store, schema, add.getType(add.getFieldIndex("deletionVector")).asGroupType()) else null
    private val baseRowId = leaf("baseRowId")
    private val drcv = leaf("defaultRowCommitVersion")
    private val clusteringProvider = leaf("clusteringProvider")
    val extras: Boolean = tags != null || dv != null || baseRowId != null || drcv != null || clusteringProvider != null
    private val row = new PlainAddRow

    /** Decodes rows `from until until` (in order, continuing the previous block). */
    def block(from: Long, until: Long): Unit = {
      var i = from
      while (i < until) {
        val pathLevel = path.next()
        if (pathLevel < addLevel) {
          if (ps != null) ps.decide(i.toInt, false)
          if (size != null) size.next()
          if (mtime != null) mtime.next()
          if (dataChange != null) dataChange.next()
          if (stats != null) stats.next()
          if (pv != null) pv.skipRow()
          if (extras) skipExtras()
        } else {
          if (pathLevel != pathMax) missing("path")
          row.pathBuf = path.buf; row.pathOff = path.off; row.pathLen = path.len
          if (size == null || size.next() != sizeMax) missing("size")
          row.size = size.value
          if (mtime == null || mtime.next() != mtimeMax) missing("modificationTime")
          row.modificationTime = mtime.value
          row.dataChange = dataChange != null && dataChange.next() == dataChangeMax && dataChange.value
          if (stats != null && stats.next() == statsMax) {
            row.statsBuf = stats.buf; row.statsOff = stats.off; row.statsLen = stats.len
          } else row.statsBuf = null
          row.partitionValues = if (pv == null) Map.empty else pv.row()
          val keptBefore = if (ds == null) 0 else ds.keptRows
          if (!extras) {
            try sink.acceptPlainAdd(version, row) catch { case NonFatal(e) => throw new SinkFailure(e) }
          } else acceptWithExtras()
          if (ps != null) ps.decide(i.toInt, ds.keptRows > keptBefore)
        }
        i += 1
      }
    }

    private def skipExtras(): Unit = {
      if (tags != null) tags.skipRow()
      if (dv != null) dv.row()
      if (baseRowId != null) baseRowId.r.consume()
      if (drcv != null) drcv.r.consume()
      if (clusteringProvider != null) clusteringProvider.r.consume()
    }

    /** The current row, with the extra fields of its `add` read: plain when they are all absent. */
    private def acceptWithExtras(): Unit = {
      val t = if (tags == null) None else { val m = tags.row(); if (tags.present) Some(m) else None }
      val d = if (dv == null) None else dv.row()
      val b = if (baseRowId == null) None else baseRowId.longOpt()
      val r = if (drcv == null) None else drcv.longOpt()
      val c = if (clusteringProvider == null) None else clusteringProvider.stringOpt()
      val add = if (t.isEmpty && d.isEmpty && b.isEmpty && r.isEmpty && c.isEmpty) null
        else row.toAddFile.copy(tags = t, deletionVector = d, baseRowId = b, defaultRowCommitVersion = r,
          clusteringProvider = c)
      try { if (add == null) sink.acceptPlainAdd(version, row) else sink.accept(version, add) }
      catch { case NonFatal(e) => throw new SinkFailure(e) }
    }
  }
}
