package io.deltalog.log

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import io.deltalog.actions.AddFile

/**
 * The plain `add` lines of one commit, column-wise: `add`s made only of `path`,
 * `partitionValues`, `size`, `modificationTime`, `dataChange` and `stats` (no tags, deletion
 * vector, row tracking, clustering provider, explicit null or unknown field). Path and stats are
 * kept as their decoded UTF-8 bytes in one array, so replay can copy them into a
 * [[FileChunkBuilder]] ([[appendTo]]) without a `String` or an `AddFile` per line; [[toAddFile]]
 * rebuilds the action (equal to what [[io.deltalog.actions.ActionCodec]] parses).
 *
 * Rows are in file order. Immutable once built.
 */
final class PlainAdds private[log] (
    val length: Int,
    bytes: Array[Byte],
    spans: Array[Int], // per row: path offset, path length, stats offset, stats length (-1: no stats)
    partitionValues: Array[Map[String, String]],
    numbers: Array[Long], // per row: size, modificationTime
    dataChanges: Array[Boolean],
    keyHashes: Array[Int], // keys computed while parsing (else null): FileKeySet.hash of a plain path,
    keyStrings: Array[String]) { // or the key of another path

  private lazy val buffer: ByteBuffer = ByteBuffer.wrap(bytes)

  /** The `path` of row `i`. */
  def path(i: Int): String = new String(bytes, spans(4 * i), spans(4 * i + 1), UTF_8)

  /** The `stats` of row `i`, or null. */
  def stats(i: Int): String = {
    val len = spans(4 * i + 3)
    if (len < 0) null else new String(bytes, spans(4 * i + 2), len, UTF_8)
  }

  def partitionValuesAt(i: Int): Map[String, String] = partitionValues(i)
  def size(i: Int): Long = numbers(2 * i)
  def modificationTime(i: Int): Long = numbers(2 * i + 1)
  def dataChange(i: Int): Boolean = dataChanges(i)

  /** The reconciliation key of row `i` (as `fileKeys.key` of its `AddFile`). */
  def key(i: Int, fileKeys: FileKeys): String =
    if (keyStrings != null && keyStrings(i) != null) keyStrings(i) else fileKeys.key(path(i), null)

  /**
   * Adds the reconciliation key of row `i` to `set`; false if it was there. When the commit was
   * read for replay with `fileKeys` the key was prepared on the reading thread: a plain path (its
   * own key) goes in as bytes, without a `String`.
   */
  def addKeyTo(set: FileKeySet, i: Int, fileKeys: FileKeys): Boolean =
    if (keyHashes == null) set.add(fileKeys.key(path(i), null))
    else if (keyStrings(i) != null) set.add(keyStrings(i))
    else set.add(bytes, spans(4 * i), spans(4 * i + 1), keyHashes(i))

  /** Prepares `set` for [[addKeyTo]] of all rows (see [[FileKeySet.warm]]). */
  def warmKeys(set: FileKeySet): Unit = if (keyHashes != null) set.warm(keyHashes, length)

  /** Row `i` as an `AddFile`. */
  def toAddFile(i: Int): AddFile =
    AddFile(path(i), partitionValues(i), size(i), modificationTime(i), dataChanges(i), Option(stats(i)))

  /** Mean bytes of a row's path and of its stats (0 without rows): a size hint for the state's columns. */
  def meanBytesPerRow: (Int, Int) = {
    if (length == 0) return (0, 0)
    var p = 0L
    var st = 0L
    var i = 0
    while (i < length) { p += spans(4 * i + 1); st += math.max(spans(4 * i + 3), 0); i += 1 }
    ((p / length).toInt, (st / length).toInt)
  }

  /** Appends row `i` to `b` (path and stats bytes copied, nothing decoded). */
  def appendTo(b: FileChunkBuilder, i: Int): Unit = {
    val statsLen = spans(4 * i + 3)
    b.addPlain(buffer, spans(4 * i), spans(4 * i + 1), partitionValues(i), size(i), modificationTime(i),
      if (statsLen < 0) null else buffer, spans(4 * i + 2), math.max(statsLen, 0))
  }
}

object PlainAdds {
  val empty: PlainAdds = new PlainAdds(0, Array.emptyByteArray, Array.emptyIntArray, Array.empty, Array.emptyLongArray,
    Array.emptyBooleanArray, null, null)

  /** Bytes that may appear in a path that is its own key ([[io.deltalog.actions.PathCodec.isPlain]]). */
  private[log] val PlainPathByte: Array[Boolean] =
    Array.tabulate(256)(b => b < 128 && io.deltalog.actions.PathCodec.isPlain(b.toChar.toString))
}

/**
 * Collects the plain `add`s of one file while it is parsed (single-threaded). Their decoded path
 * and stats bytes are in `bytes` (the file's own array, see [[FileActionLineParser]]).
 *
 * @param bytes        holds the rows' path and stats bytes
 * @param expectedRows initial capacity
 * @param fileKeys     prepares each row's reconciliation key while parsing (null: not prepared)
 */
private[log] final class PlainAddsBuilder(bytes: Array[Byte], expectedRows: Int, fileKeys: FileKeys) {
  private var n = 0
  private var cap = math.max(16, expectedRows)
  private var spans = new Array[Int](4 * cap)
  private var pvs = new Array[Map[String, String]](cap)
  private var numbers = new Array[Long](2 * cap)
  private var dataChanges = new Array[Boolean](cap)
  private var keyHashes: Array[Int] = if (fileKeys == null) null else new Array[Int](cap)
  private var keyStrings: Array[String] = if (fileKeys == null) null else new Array[String](cap)

  def size: Int = n

  /** Adds a row whose path and stats (statsLen -1: none) are at the given offsets of `bytes`. */
  def add(pathOff: Int, pathLen: Int, pv: Map[String, String], size: Long, modificationTime: Long,
      dataChange: Boolean, statsOff: Int, statsLen: Int): Unit = {
    if (n == cap) grow()
    spans(4 * n) = pathOff
    spans(4 * n + 1) = pathLen
    spans(4 * n + 2) = statsOff
    spans(4 * n + 3) = statsLen
    pvs(n) = pv
    numbers(2 * n) = size
    numbers(2 * n + 1) = modificationTime
    dataChanges(n) = dataChange
    if (fileKeys != null) {
      // A plain path is its own key (FileKeys.pathKey): hash its bytes; else build the key.
      var i = pathOff
      val end = pathOff + pathLen
      while (i < end && PlainAdds.PlainPathByte(bytes(i) & 0xff)) i += 1
      if (i == end) keyHashes(n) = FileKeySet.hash(bytes, pathOff, pathLen)
      else keyStrings(n) = fileKeys.key(new String(bytes, pathOff, pathLen, UTF_8), null)
    }
    n += 1
  }

  private def grow(): Unit = {
    cap *= 2
    spans = java.util.Arrays.copyOf(spans, 4 * cap)
    pvs = java.util.Arrays.copyOf(pvs, cap)
    numbers = java.util.Arrays.copyOf(numbers, 2 * cap)
    dataChanges = java.util.Arrays.copyOf(dataChanges, cap)
    if (keyHashes != null) keyHashes = java.util.Arrays.copyOf(keyHashes, cap)
    if (keyStrings != null) keyStrings = java.util.Arrays.copyOf(keyStrings, cap)
  }

  def result(): PlainAdds =
    if (n == 0) PlainAdds.empty else new PlainAdds(n, bytes, spans, pvs, numbers, dataChanges, keyHashes, keyStrings)
}
