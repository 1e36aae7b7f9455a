package io.deltalog.log

import java.io.OutputStream

import scala.collection.mutable.ArrayBuffer

import org.apache.parquet.io.api.RecordConsumer
import org.apache.parquet.schema.MessageType

import io.deltalog.actions._
import io.deltalog.parquet.{ColumnChunkWriter, ParquetPageFile, ShreddedRows}

/**
 * The rows of a checkpoint written from a snapshot's state, numbered in checkpoint order:
 * `head` actions, then the live files of `state` (as `add` rows), then `tombstones`.
 * [[writeFile]] writes any range of them as one Parquet file, column chunk by column chunk:
 * the `add` columns come straight from the state's [[FileChunk]]s ([[LiveAddColumns]]), the
 * few other rows are shredded by parquet-mr exactly as [[ParquetActionWriteSupport]] writes them
 * ([[ShreddedRows]]).
 */
private[log] final class CheckpointRows(head: IndexedSeq[Action], state: SnapshotState, tombstones: IndexedSeq[RemoveFile]) {
  import CheckpointRows._

  /** Live rows per non-empty chunk, in state order. */
  private val files: Array[LiveRows] = {
    val out = ArrayBuffer.empty[LiveRows]
    state.foreachChunk { (chunk, deleted) =>
      val rows =
        if (deleted == null || deleted.isEmpty) Array.range(0, chunk.length)
        else {
          val a = new Array[Int](chunk.length - deleted.cardinality())
          var k = 0
          var i = deleted.nextClearBit(0)
          while (i < chunk.length) { a(k) = i; k += 1; i = deleted.nextClearBit(i + 1) }
          a
        }
      if (rows.nonEmpty) out += new LiveRows(chunk, rows, 0, rows.length)
    }
    out.toArray
  }
  /** Index of the first live file of each entry of `files`. */
  private val fileStarts: Array[Long] = files.scanLeft(0L)(_ + _.size)

  val numAdds: Long = fileStarts.last
  val numRows: Long = head.size + numAdds + tombstones.size

  /** Estimated bytes of a row (paths and stats dominate). */
  private val bytesPerRow: Double = {
    val chunks = files.map(_.chunk).distinct
    val bytes = chunks.map(c => c.pathColumn.totalBytes + c.statsColumn.totalBytes).sum
    val rows = chunks.map(_.length.toLong).sum
    RowOverheadBytes + (if (rows == 0) 0.0 else bytes.toDouble / rows)
  }

  /** Number of `add` rows among rows `[from, until)`. */
  def addsIn(from: Long, until: Long): Long =
    math.max(0L, math.min(until, head.size + numAdds) - math.max(from, head.size.toLong))

  /** Live files `[from, until)` (file numbering) as per-chunk slices. */
  private def fileSlice(from: Long, until: Long): Array[LiveRows] = {
    val out = ArrayBuffer.empty[LiveRows]
    var f = java.util.Arrays.binarySearch(fileStarts, from) match {
      case i if i >= 0 => i
      case i => -i - 2
    }
    while (f < files.length && fileStarts(f) < until) {
      val r = files(f)
      val a = (math.max(from, fileStarts(f)) - fileStarts(f)).toInt
      val b = (math.min(until, fileStarts(f + 1)) - fileStarts(f)).toInt
      if (b > a) out += new LiveRows(r.chunk, r.rows, r.from + a, r.from + b)
      f += 1
    }
    out.toArray
  }

  /** Rows `[from, until)` as runs of one kind. */
  private def runs(from: Long, until: Long, schema: MessageType, statsStruct: Option[CheckpointStatsStruct],
      adds: LiveAddColumns): Seq[Run] = {
    val h = head.size.toLong
    val t = h + numAdds
    val out = ArrayBuffer.empty[Run]
    def shredded(actions: Iterator[Action]): Unit = out += new ShreddedRun(shreddedActions(schema, statsStruct, actions))
    if (from < h) shredded(head.slice(from.toInt, math.min(until, h).toInt).iterator)
    if (from < t && until > h) out += new AddRun(fileSlice(math.max(from, h) - h, math.min(until, t) - h), adds)
    if (until > t) shredded(tombstones.slice((math.max(from, t) - t).toInt, (until - t).toInt).iterator)
    out.toSeq
  }

  /**
   * Writes rows `[from, until)` as one Parquet file with `schema` onto `out` (not closed), in
   * row groups of about `rowGroupBytes` (estimated) and pages of about `pageSize` bytes.
   */
  def writeFile(out: OutputStream, schema: MessageType, statsStruct: Option[CheckpointStatsStruct],
      from: Long, until: Long, rowGroupBytes: Long = RowGroupBytes, pageSize: Int = ParquetPageFile.PageSize): Unit = {
    val file = new ParquetPageFile(out, schema, Map("writer.model.name" -> "deltalog"), CheckpointThreads.executor, pageSize)
    val leaves = schema.getColumns
    val adds = new LiveAddColumns(schema, statsStruct)
    val rows = until - from
    val groups = math.max(1L, math.ceil(rows * bytesPerRow / rowGroupBytes).toLong)
    val perGroup = (rows + groups - 1) / groups
    var g = from
    while (g < until) {
      val end = math.min(until, g + perGroup)
      val rs = runs(g, end, schema, statsStruct, adds)
      file.startRowGroup(end - g)
      var leaf = 0
      while (leaf < leaves.size) {
        val w = file.column(leaves.get(leaf))
        rs.foreach(_.write(leaf, w))
        file.endColumn(w)
        leaf += 1
      }
      file.endRowGroup()
      g = end
    }
    file.finish()
  }
}

private[log] object CheckpointRows {
  /** Target uncompressed size of a row group (parquet-mr's default block size). */
  val RowGroupBytes: Long = 128L << 20
  /** Bytes of a row besides its path and stats (estimate). */
  val RowOverheadBytes: Int = 48

  /** Checkpoint rows of `actions`, as [[ParquetActionWriteSupport]] writes them. */
  def shreddedActions(schema: MessageType, statsStruct: Option[CheckpointStatsStruct], actions: Iterator[Action]): ShreddedRows = {
    val support = new ParquetActionWriteSupport(schema, statsStruct)
    var prepared: RecordConsumer = null
    ShreddedRows(schema, actions) { (rc, a) =>
      if (prepared ne rc) { support.prepareForWrite(rc); prepared = rc }
      support.write(a)
    }
  }

  /** Consecutive rows of one kind, written one leaf column at a time. */
  private sealed trait Run { def write(leaf: Int, w: ColumnChunkWriter): Unit }

  private final class ShreddedRun(rows: ShreddedRows) extends Run {
    override def write(leaf: Int, w: ColumnChunkWriter): Unit = rows.leaves(leaf).replay(w)
  }

  private final class AddRun(slice: Array[LiveRows], adds: LiveAddColumns) extends Run {
    override def write(leaf: Int, w: ColumnChunkWriter): Unit = adds.write(leaf, slice, w)
  }
}
