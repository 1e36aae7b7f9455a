package io.deltalog.api

import java.io.{BufferedOutputStream, ByteArrayOutputStream, FileOutputStream, OutputStream}
import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import io.deltalog.actions.{AddFile, DeletionVectorDescriptor, RemoveFile}
import io.deltalog.log.{FileChunk, SnapshotState}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, BitVector, FieldVector, IntVector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.{MapVector, StructVector}
import org.apache.arrow.vector.ipc.ArrowStreamWriter
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

/**
 * Live files and tombstones as an Arrow IPC stream: the bulk format that crosses py4j
 * (one byte array, not one call per file). Columns follow delta-spark's `add` / `remove` schema.
 */
object FilesArrow {
  private val BatchSize = 65536

  private def utf8(name: String, nullable: Boolean = true) =
    new Field(name, new FieldType(nullable, ArrowType.Utf8.INSTANCE, null), null)
  private def int64(name: String, nullable: Boolean = true) =
    new Field(name, new FieldType(nullable, new ArrowType.Int(64, true), null), null)
  private def int32(name: String) = new Field(name, FieldType.nullable(new ArrowType.Int(32, true)), null)
  private def bool(name: String, nullable: Boolean = true) =
    new Field(name, new FieldType(nullable, ArrowType.Bool.INSTANCE, null), null)
  private def stringMap(name: String) = {
    val entries = new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE),
      List(utf8("key", nullable = false), utf8("value")).asJava)
    new Field(name, FieldType.nullable(new ArrowType.Map(false)), List(entries).asJava)
  }
  private val dvField = new Field("deletionVector", FieldType.nullable(ArrowType.Struct.INSTANCE),
    List(utf8("storageType"), utf8("pathOrInlineDv"), int32("offset"), int32("sizeInBytes"),
      int64("cardinality"), int64("maxRowIndex")).asJava)

  val addSchema: Schema = new Schema(List(
    utf8("path", nullable = false), stringMap("partitionValues"), int64("size", nullable = false),
    int64("modificationTime", nullable = false), bool("dataChange", nullable = false), utf8("stats"),
    stringMap("tags"), dvField, int64("baseRowId"), int64("defaultRowCommitVersion"),
    utf8("clusteringProvider")).asJava)

  val removeSchema: Schema = new Schema(List(
    utf8("path", nullable = false), int64("deletionTimestamp"), bool("dataChange", nullable = false),
    bool("extendedFileMetadata"), stringMap("partitionValues"), int64("size"), dvField,
    int64("baseRowId"), int64("defaultRowCommitVersion")).asJava)

  /**
   * The live files as an Arrow IPC stream (record batches of up to 64k rows), one `AddFile` at a
   * time: the reference that [[addsFromState]] (the path Python uses) is tested against.
   */
  def adds(files: Iterator[AddFile]): Array[Byte] = toBytes(out => writeAdds(files, out))

  /**
   * The live files of `state` as an Arrow IPC stream written straight from its columnar chunks:
   * same schema and content as [[adds]]`(state.iterator)`, without rebuilding an `AddFile` per row.
   * Strings are UTF-8 encoded into one buffer per column and batch; each distinct
   * partition-value map object is encoded once.
   */
  def addsFromState(state: SnapshotState): Array[Byte] = toBytes(out => writeAddsFromState(state, out))

  /** [[addsFromState]] written into `file`. */
  def addsFromStateToFile(state: SnapshotState, file: String): Unit = toFile(file)(out => writeAddsFromState(state, out))

  /** The tombstones as an Arrow IPC stream written into `file`. */
  def removesToFile(files: Iterator[RemoveFile], file: String): Unit = toFile(file)(out => writeRemoves(files, out))

  private def toBytes(f: OutputStream => Unit): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    f(out)
    out.toByteArray
  }

  private def toFile(file: String)(f: OutputStream => Unit): Unit = {
    val out = new BufferedOutputStream(new FileOutputStream(file), 1 << 20)
    try f(out) finally out.close()
  }

  def writeAdds(files: Iterator[AddFile], out: OutputStream): Unit = write(addSchema, files, out) { root =>
    // Vectors and map writers are looked up once per batch, not once per cell.
    val path = varChar(root, "path")
    val pv = new MapColumn(root, "partitionValues")
    val size = bigInt(root, "size")
    val mtime = bigInt(root, "modificationTime")
    val dataChange = root.getVector("dataChange").asInstanceOf[BitVector]
    val stats = varChar(root, "stats")
    val tags = new MapColumn(root, "tags")
    val dv = new DvColumn(root)
    val baseRowId = bigInt(root, "baseRowId")
    val drcv = bigInt(root, "defaultRowCommitVersion")
    val cp = varChar(root, "clusteringProvider")
    (i, a) => {
      setString(path, i, a.path)
      pv.set(i, a.partitionValues)
      size.setSafe(i, a.size)
      mtime.setSafe(i, a.modificationTime)
      dataChange.setSafe(i, if (a.dataChange) 1 else 0)
      setString(stats, i, a.stats.orNull)
      tags.set(i, a.tags.orNull)
      dv.set(i, a.deletionVector)
      setLong(baseRowId, i, a.baseRowId)
      setLong(drcv, i, a.defaultRowCommitVersion)
      setString(cp, i, a.clusteringProvider.orNull)
    }
  }

  def writeAddsFromState(state: SnapshotState, out: OutputStream): Unit = writeAddsFromState(state, out, BatchSize)

  private[deltalog] def writeAddsFromState(state: SnapshotState, out: OutputStream, batchSize: Int): Unit = {
    require(batchSize > 0)
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val root = VectorSchemaRoot.create(addSchema, allocator)
      try {
        val writer = new ArrowStreamWriter(root, null, out)
        writer.start()
        val pvCache = new java.util.IdentityHashMap[Map[String, String], EncodedMap]()
        var remaining = state.numFiles
        val batch = new AddBatch(root, pvCache)
        var open = false
        var wroteAny = false
        def flush(): Unit = {
          batch.finish()
          writer.writeBatch()
          remaining -= batch.count
          wroteAny = true
          open = false
        }
        state.foreachChunk { (c, deleted) =>
          var r = if (deleted == null) 0 else deleted.nextClearBit(0)
          while (r < c.length) {
            if (!open) { batch.begin(math.max(1L, math.min(batchSize.toLong, remaining)).toInt); open = true }
            batch.add(c, r)
            if (batch.count >= batchSize) flush()
            r = if (deleted == null) r + 1 else deleted.nextClearBit(r + 1)
          }
        }
        if (open) flush()
        if (!wroteAny) { batch.begin(0); flush() }
        writer.end()
        out.flush()
      } finally root.close()
    } finally allocator.close()
  }

  /** Above this many distinct partition-value maps, further maps are encoded without caching. */
  private val MaxCachedMaps = 200000

  /** A `map<string,string>` encoded once: UTF-8 keys and values (null value: null). */
  private final class EncodedMap(val keys: Array[Array[Byte]], val values: Array[Array[Byte]])

  private def encodeMap(m: Map[String, String]): EncodedMap = {
    val n = m.size
    val ks = new Array[Array[Byte]](n)
    val vs = new Array[Array[Byte]](n)
    var j = 0
    m.foreach { case (k, v) =>
      ks(j) = k.getBytes(UTF_8)
      vs(j) = if (v == null) null else v.getBytes(UTF_8)
      j += 1
    }
    new EncodedMap(ks, vs)
  }

  /** A UTF-8 column of one batch: values, offsets and validity in JVM arrays, copied in bulk. */
  private final class Utf8Buffer(initialRows: Int, initialBytes: Int) {
    private var data = new Array[Byte](math.max(initialBytes, 16))
    private var offsets = new Array[Int](math.max(initialRows, 1) + 1)
    private var validity = new Array[Byte]((math.max(initialRows, 1) + 7) / 8)
    private var n = 0

    def count: Int = n

    def reset(): Unit = { n = 0; java.util.Arrays.fill(validity, 0.toByte) }

    private def ensureRow(): Unit =
      if (n + 1 >= offsets.length) {
        offsets = java.util.Arrays.copyOf(offsets, offsets.length * 2)
        validity = java.util.Arrays.copyOf(validity, (offsets.length + 7) / 8)
      }

    def addNull(): Unit = { ensureRow(); offsets(n + 1) = offsets(n); n += 1 }

    def add(b: Array[Byte]): Unit =
      if (b == null) addNull()
      else {
        ensureRow()
        val start = offsets(n)
        val end = start + b.length
        if (end > data.length) data = java.util.Arrays.copyOf(data, math.max(end, data.length * 2))
        System.arraycopy(b, 0, data, start, b.length)
        validity(n >> 3) = (validity(n >> 3) | (1 << (n & 7))).toByte
        offsets(n + 1) = end
        n += 1
      }

    def add(s: String): Unit = if (s == null) addNull() else add(s.getBytes(UTF_8))

    /** Appends row `r` of `c` (bytes copied, no decoding). */
    def add(c: io.deltalog.log.Utf8Column, r: Int): Unit =
      if (c.isNull(r)) addNull()
      else {
        ensureRow()
        val len = c.byteLength(r)
        val start = offsets(n)
        val end = start + len
        if (end > data.length) data = java.util.Arrays.copyOf(data, math.max(end, data.length * 2))
        System.arraycopy(c.segmentData(r), c.start(r), data, start, len)
        validity(n >> 3) = (validity(n >> 3) | (1 << (n & 7))).toByte
        offsets(n + 1) = end
        n += 1
      }

    /** Fills `vec` (reallocated to the exact size) with the first `rows` values. */
    def writeTo(vec: VarCharVector, rows: Int): Unit = {
      while (n < rows) addNull()
      val bytes = offsets(rows)
      vec.allocateNew(math.max(bytes, 1).toLong, math.max(rows, 1))
      if (bytes > 0) vec.getDataBuffer.setBytes(0, data, 0, bytes)
      val ob = vec.getOffsetBuffer
      var i = 0
      while (i <= rows) { ob.setInt(i.toLong * 4, offsets(i)); i += 1 }
      val vb = (rows + 7) / 8
      if (vb > 0) vec.getValidityBuffer.setBytes(0, validity, 0, vb)
      vec.setLastSet(rows - 1)
      vec.setValueCount(rows)
    }
  }

  /** A `map<string,string>` column of one batch: row offsets in the vector, entries buffered. */
  private final class MapBuffer(vec: MapVector) {
    private val keys = new Utf8Buffer(1024, 8192)
    private val values = new Utf8Buffer(1024, 8192)

    def begin(): Unit = { vec.allocateNew(); keys.reset(); values.reset() }

    def set(i: Int, m: EncodedMap): Unit = {
      vec.startNewValue(i)
      val ks = m.keys
      val vs = m.values
      var j = 0
      while (j < ks.length) { keys.add(ks(j)); values.add(vs(j)); j += 1 }
      vec.endValue(i, ks.length)
    }

    def finish(rows: Int): Unit = {
      val entries = vec.getDataVector.asInstanceOf[StructVector]
      val n = keys.count
      var j = 0
      while (j < n) { entries.setIndexDefined(j); j += 1 }
      keys.writeTo(entries.getChild("key").asInstanceOf[VarCharVector], n)
      values.writeTo(entries.getChild("value").asInstanceOf[VarCharVector], n)
      vec.setValueCount(rows)
    }
  }

  /** One record batch of live files being filled from chunk rows (at most `capacity` rows). */
  private final class AddBatch(root: VectorSchemaRoot,
      pvCache: java.util.IdentityHashMap[Map[String, String], EncodedMap]) {
    var count = 0
    private var capacity = 0
    private val path = new Utf8Buffer(1024, 64 * 1024)
    private val stats = new Utf8Buffer(1024, 256 * 1024)
    private val cp = new Utf8Buffer(1024, 16)
    private val pv = new MapBuffer(root.getVector("partitionValues").asInstanceOf[MapVector])
    private val tags = new MapBuffer(root.getVector("tags").asInstanceOf[MapVector])
    private val size = bigInt(root, "size")
    private val mtime = bigInt(root, "modificationTime")
    private val dataChange = root.getVector("dataChange").asInstanceOf[BitVector]
    private val baseRowId = bigInt(root, "baseRowId")
    private val drcv = bigInt(root, "defaultRowCommitVersion")
    private val dv = root.getVector("deletionVector").asInstanceOf[StructVector]

    /** Starts a batch of at most `rows` rows (vectors reallocated, buffers reused). */
    def begin(rows: Int): Unit = {
      count = 0
      capacity = rows
      path.reset(); stats.reset(); cp.reset()
      pv.begin(); tags.begin()
      Seq(size, mtime, dataChange, baseRowId, drcv).foreach(_.allocateNew(math.max(rows, 1)))
      dv.allocateNew()
    }

    // Most rows share the previous row's map object (e.g. the one empty map of an unpartitioned
    // table): checked first, since identity hashing per row was half of the export time.
    private var lastMap: Map[String, String] = _
    private var lastEncoded: EncodedMap = _

    private def encoded(m: Map[String, String]): EncodedMap = {
      if (m eq lastMap) return lastEncoded
      val e = lookup(m)
      lastMap = m
      lastEncoded = e
      e
    }

    private def lookup(m: Map[String, String]): EncodedMap = {
      val hit = pvCache.get(m)
      if (hit != null) hit
      else {
        val e = encodeMap(m)
        if (pvCache.size < MaxCachedMaps) pvCache.put(m, e)
        e
      }
    }

    def add(c: FileChunk, r: Int): Unit = {
      val i = count
      if (i >= capacity) throw new IllegalStateException(s"batch overflow: $capacity rows")
      path.add(c.pathColumn, r)
      val p = c.partitionValuesAt(r)
      if (p != null) pv.set(i, encoded(p))
      size.set(i, c.size(r))
      mtime.set(i, c.modificationTime(r))
      dataChange.set(i, 0)
      stats.add(c.statsColumn, r)
      if (!c.hasNoTags) { val t = c.tagsAt(r); if (t != null) tags.set(i, encodeMap(t)) }
      if (!c.hasNoDeletionVectors) { val d = c.deletionVectorAt(r); if (d != null) setDv(dv, i, Some(d)) }
      if (!c.hasNoRowTracking) {
        if (c.hasBaseRowId(r)) baseRowId.set(i, c.baseRowId(r))
        if (c.hasDefaultRowCommitVersion(r)) drcv.set(i, c.defaultRowCommitVersion(r))
      }
      if (c.hasNoClusteringProviders) cp.addNull() else cp.add(c.clusteringProviderAt(r))
      count += 1
    }

    def finish(): Unit = {
      val n = count
      path.writeTo(root.getVector("path").asInstanceOf[VarCharVector], n)
      stats.writeTo(root.getVector("stats").asInstanceOf[VarCharVector], n)
      cp.writeTo(root.getVector("clusteringProvider").asInstanceOf[VarCharVector], n)
      pv.finish(n)
      tags.finish(n)
      root.getFieldVectors.asScala.foreach(_.setValueCount(n))
      root.setRowCount(n)
    }
  }

  def writeRemoves(files: Iterator[RemoveFile], out: OutputStream): Unit = write(removeSchema, files, out) { root =>
    val path = varChar(root, "path")
    val delTs = bigInt(root, "deletionTimestamp")
    val dataChange = root.getVector("dataChange").asInstanceOf[BitVector]
    val efm = root.getVector("extendedFileMetadata").asInstanceOf[BitVector]
    val pv = new MapColumn(root, "partitionValues")
    val size = bigInt(root, "size")
    val dv = new DvColumn(root)
    val baseRowId = bigInt(root, "baseRowId")
    val drcv = bigInt(root, "defaultRowCommitVersion")
    (i, r) => {
      setString(path, i, r.path)
      setLong(delTs, i, r.deletionTimestamp)
      dataChange.setSafe(i, if (r.dataChange) 1 else 0)
      r.extendedFileMetadata match { case Some(x) => efm.setSafe(i, if (x) 1 else 0); case None => efm.setNull(i) }
      pv.set(i, r.partitionValues.orNull)
      setLong(size, i, r.size)
      dv.set(i, r.deletionVector)
      setLong(baseRowId, i, r.baseRowId)
      setLong(drcv, i, r.defaultRowCommitVersion)
    }
  }

  /**
   * Writes `rows` in batches of [[BatchSize]]; `bind` is called after each batch's allocation and
   * returns the row filler for that batch.
   */
  private def write[T](schema: Schema, rows: Iterator[T], out: OutputStream)(
      bind: VectorSchemaRoot => (Int, T) => Unit): Unit = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val root = VectorSchemaRoot.create(schema, allocator)
      try {
        val writer = new ArrowStreamWriter(root, null, out)
        writer.start()
        var wroteAny = false
        while (rows.hasNext || !wroteAny) {
          root.allocateNew()
          val fill = bind(root)
          var n = 0
          while (n < BatchSize && rows.hasNext) {
            fill(n, rows.next())
            n += 1
          }
          root.getFieldVectors.asScala.foreach(_.setValueCount(n))
          root.setRowCount(n)
          writer.writeBatch()
          wroteAny = true
        }
        writer.end()
        out.flush()
      } finally root.close()
    } finally allocator.close()
  }

  private def varChar(root: VectorSchemaRoot, name: String) = root.getVector(name).asInstanceOf[VarCharVector]
  private def bigInt(root: VectorSchemaRoot, name: String) = root.getVector(name).asInstanceOf[BigIntVector]

  private def setString(vec: VarCharVector, i: Int, v: String): Unit =
    if (v == null) vec.setNull(i) else vec.setSafe(i, v.getBytes(UTF_8))

  private def setLong(vec: BigIntVector, i: Int, v: Option[Long]): Unit =
    v match { case Some(x) => vec.setSafe(i, x); case None => vec.setNull(i) }

  /** A `map<string,string>` column with its writer (one per batch). */
  private final class MapColumn(root: VectorSchemaRoot, name: String) {
    private val vec = root.getVector(name).asInstanceOf[MapVector]
    private val w = vec.getWriter

    /** Sets row `i` to `m` (null: a null map). */
    def set(i: Int, m: Map[String, String]): Unit = {
      w.setPosition(i)
      if (m == null) vec.setNull(i)
      else {
        w.startMap()
        if (m.nonEmpty) m.foreach { case (k, v) =>
          w.startEntry()
          w.key().varChar().writeVarChar(k)
          if (v == null) w.value().varChar().writeNull() else w.value().varChar().writeVarChar(v)
          w.endEntry()
        }
        w.endMap()
      }
    }
  }

  /** The `deletionVector` struct column. */
  private final class DvColumn(root: VectorSchemaRoot) {
    private val vec = root.getVector("deletionVector").asInstanceOf[StructVector]
    def set(i: Int, dv: Option[DeletionVectorDescriptor]): Unit = setDv(vec, i, dv)
  }

  private def setDv(vec: StructVector, i: Int, dv: Option[DeletionVectorDescriptor]): Unit = {
    dv match {
      case None => vec.setNull(i)
      case Some(d) =>
        vec.setIndexDefined(i)
        def child[V <: FieldVector](n: String) = vec.getChild(n).asInstanceOf[V]
        val st = child[VarCharVector]("storageType"); st.setSafe(i, d.storageType.getBytes(UTF_8))
        val p = child[VarCharVector]("pathOrInlineDv"); p.setSafe(i, d.pathOrInlineDv.getBytes(UTF_8))
        val off = child[IntVector]("offset")
        d.offset match { case Some(o) => off.setSafe(i, o); case None => off.setNull(i) }
        child[IntVector]("sizeInBytes").setSafe(i, d.sizeInBytes)
        child[BigIntVector]("cardinality").setSafe(i, d.cardinality)
        val mri = child[BigIntVector]("maxRowIndex")
        d.maxRowIndex match { case Some(m) => mri.setSafe(i, m); case None => mri.setNull(i) }
    }
  }
}
