package io.deltalog.api

import java.io.{BufferedOutputStream, ByteArrayOutputStream, FileOutputStream, OutputStream}
import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import io.deltalog.actions.{AddFile, DeletionVectorDescriptor, RemoveFile}
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

  /** The live files as an Arrow IPC stream (record batches of up to 64k rows). */
  def adds(files: Iterator[AddFile]): Array[Byte] = toBytes(out => writeAdds(files, out))

  /** The tombstones as an Arrow IPC stream. */
  def removes(files: Iterator[RemoveFile]): Array[Byte] = toBytes(out => writeRemoves(files, out))

  /** Writes the live files as an Arrow IPC stream into `file` (large states: no byte[] through py4j). */
  def addsToFile(files: Iterator[AddFile], file: String): Unit = toFile(file)(out => writeAdds(files, out))

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
