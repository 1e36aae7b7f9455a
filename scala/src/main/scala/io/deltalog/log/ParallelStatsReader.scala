package io.deltalog.log

import java.util.concurrent.{Callable, ExecutionException, Future}
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.schema.MessageType

import io.deltalog.parquet.{BinaryLeafDecoder, MappedColumnChunk, RowBlocks}

/**
 * Decodes the `add.stats` column of one checkpoint row group on a background thread while the
 * reader's thread decodes the other `add` columns and hands rows to the sink. `stats` is most of
 * a checkpoint's bytes, so this splits a checkpoint load over two cores.
 *
 * The background thread opens a Parquet reader of its own (`open`): parquet-mr shares one
 * decompressor between the columns of a reader, so two threads cannot decode two columns of the
 * same reader. It appends to the sink's detached stats column ([[DetachedStats]]) the value of
 * exactly the rows the reader's thread kept ([[decide]]), in row order: the stats of row `i` are
 * appended only after the decision for row `i` is published (decisions are published in batches
 * through one atomic counter, which orders the writes of `kept` before the reads). When the sink
 * keeps every `add` ([[DetachedStats.keepsEveryAdd]]) there is nothing to wait for: every row with
 * an `add` is appended as it is decoded. The column chunk is read as soon as this object exists,
 * while the reader's thread reads the other columns; appending waits for [[start]]. Every owner
 * path must end in [[finish]] or [[abort]].
 *
 * @param open      opens a reader of the checkpoint file (closed here)
 * @param schema    message type holding only `add.stats` (as projected from the file)
 * @param block     the row group (its starting position identifies it in the new reader)
 * @param localFile the checkpoint as a local file: an uncompressed chunk is then read straight
 *                  from a memory map ([[MappedColumnChunk]]) without opening a reader
 */
private[log] final class ParallelStatsReader(open: () => ParquetFileReader, schema: MessageType,
    block: org.apache.parquet.hadoop.metadata.BlockMetaData, localFile: Option[java.nio.file.Path]) {
  private val blockStart = block.getStartingPos
  private val rows = block.getRowCount.toInt
  private val kept = new Array[Boolean](rows)
  private val published = new AtomicInteger(0)
  @volatile private var aborted = false
  @volatile private var out: Utf8ColumnBuilder = _
  // Reading the column chunk starts now, while the reader's thread reads the other columns.
  private val task: Future[Unit] =
    CheckpointThreads.executor.submit(new Callable[Unit] { override def call(): Unit = run() })

  @volatile private var everyAdd = false

  /**
   * Starts appending to `stats` (the sink's detached column). `keepsEveryAdd`: the sink keeps
   * every row that has an `add` (see [[DetachedStats.keepsEveryAdd]]), so rows are appended as
   * they are decoded, without waiting for [[decide]].
   */
  def start(stats: Utf8ColumnBuilder, keepsEveryAdd: Boolean = false): Unit = {
    everyAdd = keepsEveryAdd
    out = stats
  }

  /** Row `row` (in order) was kept by the sink (`keep`) or not, or has no `add`. */
  def decide(row: Int, keep: Boolean): Unit = {
    kept(row) = keep
    if ((row & 4095) == 4095) published.set(row + 1)
  }

  /** Waits for the background thread; returns the stats column. Its exceptions are rethrown. */
  def finish(): Utf8ColumnBuilder = {
    published.set(rows)
    try task.get()
    catch {
      case e: ExecutionException => e.getCause match {
        case i: IllegalStateException => throw i
        case other => throw new IllegalStateException(s"cannot read add.stats: $other", other)
      }
    }
    out
  }

  /** Stops the background thread after a failure of the reader's thread; returns the column. */
  def abort(): Utf8ColumnBuilder = {
    aborted = true
    published.set(rows)
    try task.get() catch { case _: Exception => }
    out
  }

  /** One wait of a spin loop that has spun `spins` times: spin briefly, then sleep 50 µs a time. */
  private def backOff(spins: Int): Unit = if (spins < 64) Thread.onSpinWait() else LockSupport.parkNanos(50000L)

  /** Waits until the decision for row `row` is published: the rows decided so far, or -1 when aborted. */
  private def awaitPublished(row: Int): Int = {
    var spins = 0
    var avail = published.get()
    while (row >= avail) {
      if (aborted) return -1
      spins += 1
      backOff(spins)
      avail = published.get()
    }
    avail
  }

  /**
   * Appends to `column` the stats of the kept rows among `from until until`: those [[decide]] kept,
   * or with `everyAdd` those that have an `add` (a stats level of at least `addLevel`).
   */
  private def copy(stats: BinaryLeafDecoder, max: Int, column: Utf8ColumnBuilder, from: Int, until: Int,
      everyAdd: Boolean, addLevel: Int): Unit = {
    var i = from
    while (i < until) {
      val dl = stats.next()
      if (if (everyAdd) dl >= addLevel else kept(i)) {
        if (dl == max) column.add(stats.buf, stats.off, stats.len) else column.addNull()
      }
      i += 1
    }
  }

  private def run(): Unit = {
    val d = schema.getColumnDescription(Array("add", "stats"))
    val chunk = block.getColumns.toArray.collectFirst {
      case c: org.apache.parquet.hadoop.metadata.ColumnChunkMetaData if c.getPath.toArray.sameElements(Array("add", "stats")) => c
    }
    var reader: ParquetFileReader = null
    try {
      val mapped = (localFile, chunk) match {
        case (Some(file), Some(c)) if MappedColumnChunk.applies(c) => MappedColumnChunk.pageReader(file, c, d)
        case _ => None
      }
      val pages = mapped match {
        case Some(p) => p
        case None =>
          reader = open()
          reader.setRequestedSchema(schema)
          val index = reader.getRowGroups.toArray.indexWhere {
            case b: org.apache.parquet.hadoop.metadata.BlockMetaData => b.getStartingPos == blockStart
          }
          if (index < 0) throw new IllegalStateException(s"row group at $blockStart not found")
          val store = reader.readRowGroup(index)
          if (store == null || store.getRowCount != rows) throw new IllegalStateException(s"row group at $blockStart changed")
          store.getPageReader(d)
      }
      val stats = new BinaryLeafDecoder(pages, d)
      val max = d.getMaxDefinitionLevel
      var spins = 0
      while (this.out == null) {
        if (aborted) return
        spins += 1
        backOff(spins)
      }
      val column = this.out
      val all = everyAdd
      val addLevel = schema.getMaxDefinitionLevel("add")
      var i = 0
      var avail = if (all) rows else 0 // every decision known up front
      while (i < rows) {
        if (aborted) return
        if (i >= avail) {
          avail = awaitPublished(i)
          if (avail < 0) return
        }
        val until = math.min(avail, i + RowBlocks.Size) // short calls: compiled early (RowBlocks)
        copy(stats, max, column, i, until, all, addLevel)
        i = until
      }
    } finally if (reader != null) reader.close()
  }
}
