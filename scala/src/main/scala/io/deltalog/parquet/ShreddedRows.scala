package io.deltalog.parquet

import org.apache.parquet.column.{ColumnDescriptor, ColumnWriteStore, ColumnWriter}
import org.apache.parquet.io.ColumnIOFactory
import org.apache.parquet.io.api.{Binary, RecordConsumer}
import org.apache.parquet.schema.MessageType
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._

/**
 * The entries (repetition level, definition level, value) that parquet-mr's record shredding
 * ([[org.apache.parquet.io.MessageColumnIO]]) produces for one leaf column, kept in order so
 * that they can be replayed into a [[ColumnChunkWriter]] later (column by column). Consecutive
 * nulls with the same levels are kept as one run.
 */
private[deltalog] final class LeafEntries(val descriptor: ColumnDescriptor) extends ColumnWriter {
  // ops: (rep, def, count) triples; count < 0 marks one non-null value (the next in `longs` or
  // `binaries`, depending on the column type).
  private var ops = new Array[Int](24)
  private var nOps = 0
  private var longs = new Array[Long](8)
  private var nLongs = 0
  private val binaries = scala.collection.mutable.ArrayBuffer.empty[Binary]

  private def op(r: Int, d: Int, count: Int): Unit = {
    if (nOps + 3 > ops.length) ops = java.util.Arrays.copyOf(ops, ops.length * 2)
    ops(nOps) = r; ops(nOps + 1) = d; ops(nOps + 2) = count
    nOps += 3
  }

  private def long(v: Long, r: Int, d: Int): Unit = {
    if (nLongs == longs.length) longs = java.util.Arrays.copyOf(longs, nLongs * 2)
    longs(nLongs) = v
    nLongs += 1
    op(r, d, -1)
  }

  override def write(value: Int, r: Int, d: Int): Unit = long(value, r, d)
  override def write(value: Long, r: Int, d: Int): Unit = long(value, r, d)
  override def write(value: Boolean, r: Int, d: Int): Unit = long(if (value) 1L else 0L, r, d)
  override def write(value: Float, r: Int, d: Int): Unit = long(java.lang.Float.floatToRawIntBits(value), r, d)
  override def write(value: Double, r: Int, d: Int): Unit = long(java.lang.Double.doubleToRawLongBits(value), r, d)
  override def write(value: Binary, r: Int, d: Int): Unit = { binaries += value.copy(); op(r, d, -1) }
  override def writeNull(r: Int, d: Int): Unit =
    if (nOps > 0 && ops(nOps - 1) > 0 && ops(nOps - 3) == r && ops(nOps - 2) == d) ops(nOps - 1) += 1
    else op(r, d, 1)
  override def close(): Unit = ()
  override def getBufferedSizeInMemory: Long = 4L * nOps + 8L * nLongs

  /** Writes every entry into `w` (a writer of the same column). */
  def replay(w: ColumnChunkWriter): Unit = {
    val kind = descriptor.getPrimitiveType.getPrimitiveTypeName
    var i = 0
    var li = 0
    var bi = 0
    while (i < nOps) {
      val r = ops(i)
      val count = ops(i + 2)
      if (count > 0) w.nulls(r, ops(i + 1), count)
      else kind match {
        case BINARY | FIXED_LEN_BYTE_ARRAY =>
          val b = binaries(bi).getBytes
          bi += 1
          if (kind == BINARY) w.binary(r, b, 0, b.length) else w.fixed(r, b, 0, b.length)
        case _ =>
          val v = longs(li)
          li += 1
          kind match {
            case INT64 => w.long(r, v)
            case INT32 => w.int(r, v.toInt)
            case BOOLEAN => w.boolean(r, v != 0L)
            case FLOAT => w.float(r, java.lang.Float.intBitsToFloat(v.toInt))
            case DOUBLE => w.double(r, java.lang.Double.longBitsToDouble(v))
            case other => throw new IllegalStateException(s"unexpected column type $other")
          }
      }
      i += 3
    }
  }
}

/**
 * Rows shredded by parquet-mr into [[LeafEntries]], one per leaf column of `schema` (in
 * `schema.getColumns` order): the same levels and values parquet-mr's own writer would get.
 */
private[deltalog] final class ShreddedRows private (schema: MessageType) extends ColumnWriteStore {
  val leaves: IndexedSeq[LeafEntries] = {
    val cols = schema.getColumns
    IndexedSeq.tabulate(cols.size)(i => new LeafEntries(cols.get(i)))
  }
  private val byColumn = new java.util.HashMap[ColumnDescriptor, LeafEntries]()
  leaves.foreach(l => byColumn.put(l.descriptor, l))

  /** Entries of the leaf with this path, or null. */
  def leaf(path: Array[String]): LeafEntries = byColumn.get(schema.getColumnDescription(path))

  override def getColumnWriter(path: ColumnDescriptor): ColumnWriter = {
    val l = byColumn.get(path)
    if (l == null) throw new IllegalArgumentException(s"no column $path in $schema")
    l
  }
  override def flush(): Unit = ()
  override def endRecord(): Unit = ()
  override def getAllocatedSize: Long = leaves.map(_.getBufferedSizeInMemory).sum
  override def getBufferedSize: Long = getAllocatedSize
  override def memUsageString(): String = s"ShreddedRows(${getAllocatedSize} bytes)"
  override def close(): Unit = ()
}

private[deltalog] object ShreddedRows {
  /** Shreds `rows` records, each written by `writeRecord` through the record consumer. */
  def apply[T](schema: MessageType, rows: Iterator[T])(writeRecord: (RecordConsumer, T) => Unit): ShreddedRows = {
    val store = new ShreddedRows(schema)
    val rc = new ColumnIOFactory(false).getColumnIO(schema).getRecordWriter(store)
    rows.foreach(r => writeRecord(rc, r))
    rc.flush()
    store
  }
}
