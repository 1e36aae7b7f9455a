package io.deltalog.api

import java.io.{BufferedOutputStream, ByteArrayOutputStream, FileOutputStream, OutputStream}
import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import io.deltalog.actions.{AddFile, DeletionVectorDescriptor, RemoveFile}
import io.deltalog.log.{EncodedMap, FileChunk, SnapshotState}
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
  def addsFromStateToFile(state: SnapshotState, file: String): Unit = {
    // A file channel takes Arrow's off-heap buffers as they are (an OutputStream would copy them
    // through a small heap array).
    val ch = java.nio.channels.FileChannel.open(java.nio.file.Paths.get(file),
      java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.CREATE,
      java.nio.file.StandardOpenOption.TRUNCATE_EXISTING)
    try writeAddsFromState(state, ch, BatchSize) finally ch.close()
  }

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
    writeAddsFromState(state, java.nio.channels.Channels.newChannel(out), batchSize)
    out.flush()
  }

  private def writeAddsFromState(state: SnapshotState, out: java.nio.channels.WritableByteChannel, batchSize: Int): Unit = {
    require(batchSize > 0)
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val root = VectorSchemaRoot.create(addSchema, allocator)
      try {
        val writer = new ArrowStreamWriter(root, null, out)
        writer.start()
        val pvCache = new EncodedMap.Cache(MaxCachedMaps)
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
      } finally root.close()
    } finally allocator.close()
  }

  /** Above this many distinct partition-value maps, further maps are encoded without caching. */
  private val MaxCachedMaps = 200000

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

    /** Rows `0 until rows` are all empty (non-null) maps; call right after [[begin]]. */
    def setAllEmpty(rows: Int): Unit = {
      while (vec.getValueCapacity < rows) vec.reAlloc()
      val full = rows >> 3
      if (full > 0) vec.getValidityBuffer.setOne(0L, full.toLong)
      if ((rows & 7) != 0) vec.getValidityBuffer.setByte(full.toLong, (1 << (rows & 7)) - 1)
      vec.setLastSet(rows - 1)
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

  /**
   * One record batch of live files: rows are collected as (chunk, row) references by [[add]] and
   * the vectors are filled column by column in [[finish]]: strings are copied from the chunks'
   * UTF-8 bytes straight into exactly-sized Arrow buffers, fixed-width values written into the
   * data buffers, and columns no row of the batch has (tags, deletion vectors, row tracking,
   * clustering provider) are left all-null without touching a row.
   */
  private final class AddBatch(root: VectorSchemaRoot,
      pvCache: EncodedMap.Cache) {
    var count = 0
    private var capacity = 0
    private var chunks = new Array[FileChunk](1024)
    private var rows = new Array[Int](1024)
    private val pv = new MapBuffer(root.getVector("partitionValues").asInstanceOf[MapVector])
    private val tags = new MapBuffer(root.getVector("tags").asInstanceOf[MapVector])
    private val cp = new Utf8Buffer(1024, 16)

    /** Starts a batch of at most `n` rows. */
    def begin(n: Int): Unit = {
      count = 0
      capacity = n
      if (chunks.length < n) { chunks = new Array[FileChunk](n); rows = new Array[Int](n) }
    }

    def add(c: FileChunk, r: Int): Unit = {
      if (count >= capacity) throw new IllegalStateException(s"batch overflow: $capacity rows")
      chunks(count) = c
      rows(count) = r
      count += 1
    }


    /** Fills `vec` with one string column of the batch's rows, bytes copied from the chunks. */
    private def fillUtf8(vec: VarCharVector, column: FileChunk => io.deltalog.log.Utf8Column): Unit = {
      val n = count
      var bytes = 0L
      var i = 0
      while (i < n) { bytes += column(chunks(i)).byteLength(rows(i)); i += 1 }
      if (bytes > Int.MaxValue) throw new IllegalStateException(s"a batch column holds $bytes bytes")
      vec.allocateNew(math.max(bytes, 1L), math.max(n, 1))
      val data = vec.getDataBuffer
      val offsets = vec.getOffsetBuffer
      val validity = vec.getValidityBuffer
      var pos = 0
      i = 0
      while (i < n) {
        val col = column(chunks(i))
        val r = rows(i)
        if (!col.isNull(r)) {
          val len = col.byteLength(r)
          if (len > 0) data.setBytes(pos.toLong, col.segmentData(r), col.start(r), len)
          pos += len
          validity.setByte((i >> 3).toLong, validity.getByte((i >> 3).toLong) | (1 << (i & 7)))
        }
        offsets.setInt((i + 1).toLong * 4, pos)
        i += 1
      }
      vec.setLastSet(n - 1)
      vec.setValueCount(n)
    }

    /** Fills `size` (or, with `mtime`, `modificationTime`): no per-row boxing through a closure. */
    private def fillLongs(vec: BigIntVector, mtime: Boolean): Unit = {
      val n = count
      vec.allocateNew(math.max(n, 1))
      val data = vec.getDataBuffer
      var i = 0
      if (mtime) while (i < n) { data.setLong(i.toLong * 8, chunks(i).modificationTime(rows(i))); i += 1 }
      else while (i < n) { data.setLong(i.toLong * 8, chunks(i).size(rows(i))); i += 1 }
      setAllValid(vec.getValidityBuffer, n)
      vec.setValueCount(n)
    }

    private def setAllValid(validity: org.apache.arrow.memory.ArrowBuf, n: Int): Unit = {
      val full = n >> 3
      if (full > 0) validity.setOne(0L, full.toLong)
      if ((n & 7) != 0) validity.setByte(full.toLong, (1 << (n & 7)) - 1)
    }

    /** The distinct chunks of the batch's rows (rows come chunk after chunk). */
    private def distinctChunks: Seq[FileChunk] = {
      val out = scala.collection.mutable.ArrayBuffer.empty[FileChunk]
      var i = 0
      while (i < count) { if (out.isEmpty || (out.last ne chunks(i))) out += chunks(i); i += 1 }
      out.toSeq
    }

    def finish(): Unit = {
      val n = count
      val inBatch = distinctChunks
      def any(p: FileChunk => Boolean): Boolean = inBatch.exists(p)
      fillUtf8(root.getVector("path").asInstanceOf[VarCharVector], _.pathColumn)
      fillUtf8(root.getVector("stats").asInstanceOf[VarCharVector], _.statsColumn)
      fillLongs(bigInt(root, "size"), mtime = false)
      fillLongs(bigInt(root, "modificationTime"), mtime = true)
      val dataChange = root.getVector("dataChange").asInstanceOf[BitVector]
      dataChange.allocateNew(math.max(n, 1))
      setAllValid(dataChange.getValidityBuffer, n)

      pv.begin()
      var i = 0
      var allEmpty = true
      var last: Map[String, String] = null
      while (i < n && allEmpty) {
        val p = chunks(i).partitionValuesAt(rows(i))
        if (!(p eq last)) { allEmpty = p != null && p.isEmpty; last = p }
        i += 1
      }
      if (allEmpty) pv.setAllEmpty(n)
      else {
        i = 0
        while (i < n) {
          val p = chunks(i).partitionValuesAt(rows(i))
          if (p != null) pv.set(i, pvCache(p))
          i += 1
        }
      }
      pv.finish(n)

      tags.begin()
      if (any(!_.hasNoTags)) {
        i = 0
        while (i < n) { val t = chunks(i).tagsAt(rows(i)); if (t != null) tags.set(i, EncodedMap.of(t)); i += 1 }
      }
      tags.finish(n)

      val dv = root.getVector("deletionVector").asInstanceOf[StructVector]
      dv.allocateNew()
      if (any(!_.hasNoDeletionVectors)) {
        i = 0
        while (i < n) { val d = chunks(i).deletionVectorAt(rows(i)); if (d != null) setDv(dv, i, Some(d)); i += 1 }
      }

      val baseRowId = bigInt(root, "baseRowId")
      val drcv = bigInt(root, "defaultRowCommitVersion")
      baseRowId.allocateNew(math.max(n, 1))
      drcv.allocateNew(math.max(n, 1))
      if (any(!_.hasNoRowTracking)) {
        i = 0
        while (i < n) {
          val c = chunks(i)
          val r = rows(i)
          if (c.hasBaseRowId(r)) baseRowId.set(i, c.baseRowId(r))
          if (c.hasDefaultRowCommitVersion(r)) drcv.set(i, c.defaultRowCommitVersion(r))
          i += 1
        }
      }

      cp.reset()
      if (any(!_.hasNoClusteringProviders)) {
        i = 0
        while (i < n) { cp.add(chunks(i).clusteringProviderAt(rows(i))); i += 1 }
      }
      cp.writeTo(root.getVector("clusteringProvider").asInstanceOf[VarCharVector], n)

      java.util.Arrays.fill(chunks.asInstanceOf[Array[AnyRef]], 0, n, null)
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
