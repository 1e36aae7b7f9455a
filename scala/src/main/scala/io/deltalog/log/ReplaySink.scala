package io.deltalog.log

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import io.deltalog.actions.{Action, AddFile}

/**
 * Receives the actions of one log file, in file order. Readers of commits and checkpoints push
 * into a sink so that replay can consume them without materialising intermediate collections.
 */
trait ReplaySink {
  /** Called once per action. `version` is the commit version, or the checkpoint version. */
  def accept(version: Long, action: Action): Unit

  /**
   * True when the sink takes plain `add` rows of a checkpoint as raw bytes ([[acceptPlainAdd]]).
   * Such rows may then arrive in a different order relative to the file's other actions (a
   * checkpoint is already reconciled, so the order carries no meaning).
   */
  def wantsPlainAdds: Boolean = false

  /** A plain `add` row (see [[PlainAddRow]]); the row object is reused for the next row. */
  def acceptPlainAdd(version: Long, row: PlainAddRow): Unit = accept(version, row.toAddFile)

  /**
   * Non-null when a checkpoint reader may decode the `stats` of the `add` rows on another thread
   * and append them itself (see [[DetachedStats]]); rows then arrive with no stats.
   */
  def detachedStats: DetachedStats = null

  /**
   * A checkpoint reader's estimate of the bytes per `add.path` and `add.stats` value of the rows
   * it is about to push (from the column chunk sizes); a sink may size its buffers with it.
   */
  def expectAddBytesPerRow(path: Int, stats: Int): Unit = ()
}

/**
 * The stats column of a sink, handed to a checkpoint reader for one row group: between [[detach]]
 * and [[attach]], the sink keeps `add` rows without appending their stats, and the reader appends
 * the stats of exactly the rows the sink kept, in row order. [[keptRows]] counts the `add` rows
 * the sink has kept, so the reader can tell whether a row it handed over was kept.
 */
trait DetachedStats {
  def keptRows: Int
  /**
   * True when the sink keeps every `add` row of this read (nothing is reconciled away): the
   * reader may then append each row's stats without waiting to learn whether the sink kept it.
   */
  def keepsEveryAdd: Boolean = false
  def detach(): Utf8ColumnBuilder
  def attach(stats: Utf8ColumnBuilder): Unit
}

/**
 * One checkpoint `add` row that has only `path`, `partitionValues`, `size`, `modificationTime`,
 * `dataChange` and `stats` (no tags, deletion vector, row tracking, clustering provider or
 * unknown fields), with `path` and `stats` as UTF-8 bytes in (read-only) buffers. Reused for
 * every row: copy what must outlive the call.
 */
final class PlainAddRow {
  var pathBuf: ByteBuffer = _
  var pathOff: Int = 0
  var pathLen: Int = 0
  /** null: no stats. */
  var statsBuf: ByteBuffer = _
  var statsOff: Int = 0
  var statsLen: Int = 0
  var partitionValues: Map[String, String] = Map.empty
  var size: Long = 0L
  var modificationTime: Long = 0L
  var dataChange: Boolean = false

  private def decode(b: ByteBuffer, off: Int, len: Int): String =
    if (b.hasArray) new String(b.array(), b.arrayOffset() + off, len, UTF_8)
    else { val a = new Array[Byte](len); b.get(off, a, 0, len); new String(a, UTF_8) }

  def path: String = decode(pathBuf, pathOff, pathLen)
  def stats: Option[String] = if (statsBuf == null) None else Some(decode(statsBuf, statsOff, statsLen))

  def toAddFile: AddFile = AddFile(path = path, partitionValues = partitionValues, size = size,
    modificationTime = modificationTime, dataChange = dataChange, stats = stats)
}
