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

  def writeAdds(files: Iterator[AddFile], out: OutputStream): Unit = write(addSchema, files, out) { (root, i, a) =>
    setString(root, "path", i, a.path)
    setMap(root, "partitionValues", i, Some(a.partitionValues))
    root.getVector("size").asInstanceOf[BigIntVector].setSafe(i, a.size)
    root.getVector("modificationTime").asInstanceOf[BigIntVector].setSafe(i, a.modificationTime)
    setBool(root, "dataChange", i, Some(a.dataChange))
    setString(root, "stats", i, a.stats.orNull)
    setMap(root, "tags", i, a.tags)
    setDv(root, i, a.deletionVector)
    setLong(root, "baseRowId", i, a.baseRowId)
    setLong(root, "defaultRowCommitVersion", i, a.defaultRowCommitVersion)
    setString(root, "clusteringProvider", i, a.clusteringProvider.orNull)
  }

  def writeRemoves(files: Iterator[RemoveFile], out: OutputStream): Unit = write(removeSchema, files, out) { (root, i, r) =>
    setString(root, "path", i, r.path)
    setLong(root, "deletionTimestamp", i, r.deletionTimestamp)
    setBool(root, "dataChange", i, Some(r.dataChange))
    setBool(root, "extendedFileMetadata", i, r.extendedFileMetadata)
    setMap(root, "partitionValues", i, r.partitionValues)
    setLong(root, "size", i, r.size)
    setDv(root, i, r.deletionVector)
    setLong(root, "baseRowId", i, r.baseRowId)
    setLong(root, "defaultRowCommitVersion", i, r.defaultRowCommitVersion)
  }

  private def write[T](schema: Schema, rows: Iterator[T], out: OutputStream)(
      fill: (VectorSchemaRoot, Int, T) => Unit): Unit = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val root = VectorSchemaRoot.create(schema, allocator)
      try {
        val writer = new ArrowStreamWriter(root, null, out)
        writer.start()
        var wroteAny = false
        while (rows.hasNext || !wroteAny) {
          root.allocateNew()
          var n = 0
          while (n < BatchSize && rows.hasNext) {
            fill(root, n, rows.next())
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

  private def setString(root: VectorSchemaRoot, name: String, i: Int, v: String): Unit = {
    val vec = root.getVector(name).asInstanceOf[VarCharVector]
    if (v == null) vec.setNull(i) else vec.setSafe(i, v.getBytes(UTF_8))
  }

  private def setLong(root: VectorSchemaRoot, name: String, i: Int, v: Option[Long]): Unit = {
    val vec = root.getVector(name).asInstanceOf[BigIntVector]
    v match { case Some(x) => vec.setSafe(i, x); case None => vec.setNull(i) }
  }

  private def setBool(root: VectorSchemaRoot, name: String, i: Int, v: Option[Boolean]): Unit = {
    val vec = root.getVector(name).asInstanceOf[BitVector]
    v match { case Some(x) => vec.setSafe(i, if (x) 1 else 0); case None => vec.setNull(i) }
  }

  private def setMap(root: VectorSchemaRoot, name: String, i: Int, m: Option[Map[String, String]]): Unit = {
    val vec = root.getVector(name).asInstanceOf[MapVector]
    val w = vec.getWriter
    w.setPosition(i)
    m match {
      case None => vec.setNull(i)
      case Some(values) =>
        w.startMap()
        values.foreach { case (k, v) =>
          w.startEntry()
          w.key().varChar().writeVarChar(k)
          if (v == null) w.value().varChar().writeNull() else w.value().varChar().writeVarChar(v)
          w.endEntry()
        }
        w.endMap()
    }
  }

  private def setDv(root: VectorSchemaRoot, i: Int, dv: Option[DeletionVectorDescriptor]): Unit = {
    val vec = root.getVector("deletionVector").asInstanceOf[StructVector]
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
