package io.deltalog.log

import io.deltalog.actions._
import io.deltalog.protocol.Protocol

/**
 * Live files of a snapshot stored column-wise: one array per `add` field instead of one
 * `AddFile` (plus `Option`s, map and hash-table entry) per file.
 *
 * Per file this keeps the UTF-8 bytes of the path and of the raw stats string (in two
 * [[Utf8Column]]s, no `String` object per value), two longs and one slot in each of the other arrays; a column whose values are all absent (tags, DV, row tracking, clustering
 * provider, unknown fields) is not allocated at all, and equal partition-value maps are shared
 * (interned while fewer than [[FileChunk.MaxInternedPartitions]] distinct maps were seen).
 * [[get]] rebuilds an `AddFile` on demand (`dataChange` is always false, as in delta-spark's
 * reconciled state). A chunk is immutable once built and may be shared by several snapshots
 * (incremental update); its key index is built lazily on first lookup.
 */
final class FileChunk private[log] (
    val length: Int,
    paths: Utf8Column,
    partitionValues: Array[Map[String, String]],
    sizes: Array[Long],
    modificationTimes: Array[Long],
    stats: Utf8Column,
    tags: Array[Map[String, String]],
    dvs: Array[DeletionVectorDescriptor],
    baseRowIds: Array[Long],
    defaultRowCommitVersions: Array[Long],
    rowTrackingPresent: Array[Byte], // bit 0: baseRowId, bit 1: defaultRowCommitVersion
    clusteringProviders: Array[String],
    extras: Array[ExtraFields],
    /** Sum of the sizes of the files in this chunk (kept by the builder: a loop over a 1M-row chunk run once per load stays interpreted). */
    val totalSize: Long,
    /** True when every row's partition values are an empty map (an unpartitioned table). */
    val hasNoPartitionValues: Boolean) {

  def path(i: Int): String = paths.string(i)
  def size(i: Int): Long = sizes(i)
  def dvUniqueId(i: Int): String = if (dvs == null || dvs(i) == null) null else dvs(i).uniqueId

  // Column accessors for bulk readers (no `AddFile` / `Option` per row). Absent values are null.
  /** Partition values of row `i` (equal maps are usually the same shared object). */
  def partitionValuesAt(i: Int): Map[String, String] = partitionValues(i)
  def modificationTime(i: Int): Long = modificationTimes(i)
  /** Raw stats string of row `i`, or null. */
  def statsAt(i: Int): String = stats.string(i)
  /** The paths as UTF-8 bytes (bulk readers: Arrow export, checkpoint writer). */
  def pathColumn: Utf8Column = paths
  /** The raw stats strings as UTF-8 bytes (null rows: no stats). */
  def statsColumn: Utf8Column = stats
  /** All sizes and modification times, for bulk copies (must not be modified). */
  private[deltalog] def sizeColumn: Array[Long] = sizes
  private[deltalog] def modificationTimeColumn: Array[Long] = modificationTimes
  /** True when no row of this chunk has tags. */
  def hasNoTags: Boolean = tags == null
  def tagsAt(i: Int): Map[String, String] = if (tags == null) null else tags(i)
  def hasNoDeletionVectors: Boolean = dvs == null
  def deletionVectorAt(i: Int): DeletionVectorDescriptor = if (dvs == null) null else dvs(i)
  def hasNoRowTracking: Boolean = rowTrackingPresent == null
  def hasBaseRowId(i: Int): Boolean = rowTrackingPresent != null && (rowTrackingPresent(i) & 1) != 0
  def baseRowId(i: Int): Long = baseRowIds(i)
  def hasDefaultRowCommitVersion(i: Int): Boolean = rowTrackingPresent != null && (rowTrackingPresent(i) & 2) != 0
  def defaultRowCommitVersion(i: Int): Long = defaultRowCommitVersions(i)
  def hasNoClusteringProviders: Boolean = clusteringProviders == null
  /** True when some row has fields this version does not model (kept for checkpoints). */
  def hasExtras: Boolean = extras != null
  def clusteringProviderAt(i: Int): String = if (clusteringProviders == null) null else clusteringProviders(i)

  /** The `add` of row `i`. */
  def get(i: Int): AddFile = AddFile(
    path = paths.string(i),
    partitionValues = partitionValues(i),
    size = sizes(i),
    modificationTime = modificationTimes(i),
    dataChange = false,
    stats = Option(stats.string(i)),
    tags = if (tags == null) None else Option(tags(i)),
    deletionVector = if (dvs == null) None else Option(dvs(i)),
    baseRowId = if (rowTrackingPresent != null && (rowTrackingPresent(i) & 1) != 0) Some(baseRowIds(i)) else None,
    defaultRowCommitVersion =
      if (rowTrackingPresent != null && (rowTrackingPresent(i) & 2) != 0) Some(defaultRowCommitVersions(i)) else None,
    clusteringProvider = if (clusteringProviders == null) None else Option(clusteringProviders(i)),
    extra = if (extras == null || extras(i) == null) ExtraFields.empty else extras(i))

  private val memo = new java.util.concurrent.ConcurrentHashMap[AnyRef, AnyRef]()

  /**
   * A value derived from this chunk (e.g. its stats as columns), computed once per `key` and kept
   * with the chunk: it is dropped together with the chunk, unlike an outside cache keyed by the
   * chunk whose value refers back to it.
   */
  def memoized[T <: AnyRef](key: AnyRef)(compute: => T): T =
    memo.computeIfAbsent(key, _ => compute).asInstanceOf[T]

  @volatile private var index: Array[Int] = _
  @volatile private var indexKeys: FileKeys = _

  private def spread(h: Int): Int = { val x = h * 0x9E3779B9; x ^ (x >>> 16) }

  /** Row of the logical file `key` in this chunk, or -1. */
  def indexOf(key: String, keys: FileKeys): Int = {
    var idx = index
    if (idx == null || (indexKeys ne keys)) idx = buildIndex(keys)
    val mask = idx.length - 1
    var slot = spread(key.hashCode) & mask
    while (idx(slot) >= 0) {
      val row = idx(slot)
      if (keys.key(paths.string(row), dvUniqueId(row)) == key) return row
      slot = (slot + 1) & mask
    }
    -1
  }

  private def buildIndex(keys: FileKeys): Array[Int] = synchronized {
    if (index != null && (indexKeys eq keys)) return index
    var cap = 16
    while (cap < length * 2) cap <<= 1
    val idx = Array.fill(cap)(-1)
    val mask = cap - 1
    var i = 0
    while (i < length) {
      var slot = spread(keys.key(paths.string(i), dvUniqueId(i)).hashCode) & mask
      while (idx(slot) >= 0) slot = (slot + 1) & mask
      idx(slot) = i
      i += 1
    }
    indexKeys = keys
    index = idx
    idx
  }
}

object FileChunk {
  /** Interning of partition-value maps stops after this many distinct maps. */
  val MaxInternedPartitions: Int = 100000

  val empty: FileChunk = new FileChunkBuilder(0).result()
}

/** Builds a [[FileChunk]] one `add` at a time (single-threaded). */
final class FileChunkBuilder(initialCapacity: Int = 1024) {
  private var cap = math.max(initialCapacity, 16)
  private var n = 0
  private var sizeSum = 0L
  private val paths = new Utf8ColumnBuilder(96, initialCapacity)
  private var partitionValues = new Array[Map[String, String]](cap)
  private var sizes = new Array[Long](cap)
  private var mtimes = new Array[Long](cap)
  private var stats = new Utf8ColumnBuilder(256, initialCapacity)
  private var statsDetached = false
  private var tags: Array[Map[String, String]] = _
  private var dvs: Array[DeletionVectorDescriptor] = _
  private var baseRowIds: Array[Long] = _
  private var drcvs: Array[Long] = _
  private var rtPresent: Array[Byte] = _
  private var cps: Array[String] = _
  private var extras: Array[ExtraFields] = _
  private val interned = new java.util.HashMap[Map[String, String], Map[String, String]]()
  private var nonEmptyPartitionValues = 0

  def size: Int = n

  private def grow(): Unit = {
    cap = cap * 2
    partitionValues = java.util.Arrays.copyOf(partitionValues, cap)
    sizes = java.util.Arrays.copyOf(sizes, cap)
    mtimes = java.util.Arrays.copyOf(mtimes, cap)
    if (tags != null) tags = java.util.Arrays.copyOf(tags, cap)
    if (dvs != null) dvs = java.util.Arrays.copyOf(dvs, cap)
    if (baseRowIds != null) baseRowIds = java.util.Arrays.copyOf(baseRowIds, cap)
    if (drcvs != null) drcvs = java.util.Arrays.copyOf(drcvs, cap)
    if (rtPresent != null) rtPresent = java.util.Arrays.copyOf(rtPresent, cap)
    if (cps != null) cps = java.util.Arrays.copyOf(cps, cap)
    if (extras != null) extras = java.util.Arrays.copyOf(extras, cap)
  }

  private def intern(m: Map[String, String]): Map[String, String] = {
    if (m.isEmpty) return FileChunkBuilder.EmptyMap
    nonEmptyPartitionValues += 1
    val hit = interned.get(m)
    if (hit != null) hit
    else {
      if (interned.size < FileChunk.MaxInternedPartitions) interned.put(m, m)
      m
    }
  }

  def +=(a: AddFile): this.type = {
    if (n == cap) grow()
    paths.add(a.path)
    partitionValues(n) = intern(a.partitionValues)
    sizes(n) = a.size
    sizeSum += a.size
    mtimes(n) = a.modificationTime
    if (!statsDetached) stats.add(a.stats.orNull)
    if (a.tags.isDefined) {
      if (tags == null) tags = new Array[Map[String, String]](cap)
      tags(n) = a.tags.get
    }
    if (a.deletionVector.isDefined) {
      if (dvs == null) dvs = new Array[DeletionVectorDescriptor](cap)
      dvs(n) = a.deletionVector.get
    }
    if (a.baseRowId.isDefined || a.defaultRowCommitVersion.isDefined) {
      if (rtPresent == null) {
        rtPresent = new Array[Byte](cap); baseRowIds = new Array[Long](cap); drcvs = new Array[Long](cap)
      }
      var bits = 0
      a.baseRowId.foreach { v => baseRowIds(n) = v; bits |= 1 }
      a.defaultRowCommitVersion.foreach { v => drcvs(n) = v; bits |= 2 }
      rtPresent(n) = bits.toByte
    }
    if (a.clusteringProvider.isDefined) {
      if (cps == null) cps = new Array[String](cap)
      cps(n) = a.clusteringProvider.get
    }
    if (!a.extra.isEmpty) {
      if (extras == null) extras = new Array[ExtraFields](cap)
      extras(n) = a.extra
    }
    n += 1
    this
  }

  private def trim[T](a: Array[T]): Array[T] =
    if (a == null) null else if (a.length == n) a else java.util.Arrays.copyOf(a.asInstanceOf[Array[AnyRef]], n).asInstanceOf[Array[T]]
  private def trimL(a: Array[Long]): Array[Long] = if (a == null) null else if (a.length == n) a else java.util.Arrays.copyOf(a, n)
  private def trimB(a: Array[Byte]): Array[Byte] = if (a == null) null else if (a.length == n) a else java.util.Arrays.copyOf(a, n)

  /**
   * Appends a plain `add` (no tags, deletion vector, row tracking, clustering provider or unknown
   * fields; `dataChange` is not kept) from raw UTF-8 bytes: `path` bytes `[pathOff, pathOff +
   * pathLen)` of `pathBuf`, stats likewise (`statsBuf == null`: no stats). Bulk readers of
   * checkpoints use this instead of building an `AddFile` per row.
   */
  def addPlain(pathBuf: java.nio.ByteBuffer, pathOff: Int, pathLen: Int, partitionValues: Map[String, String],
      size: Long, modificationTime: Long, statsBuf: java.nio.ByteBuffer, statsOff: Int, statsLen: Int): Unit = {
    if (n == cap) grow()
    paths.add(pathBuf, pathOff, pathLen)
    this.partitionValues(n) = intern(partitionValues)
    sizes(n) = size
    sizeSum += size
    mtimes(n) = modificationTime
    if (!statsDetached) { if (statsBuf == null) stats.addNull() else stats.add(statsBuf, statsOff, statsLen) }
    n += 1
  }

  /** Appends row `i` of `c` (all fields, bytes copied without decoding). */
  def addFrom(c: FileChunk, i: Int): Unit = {
    if (c.hasNoTags && c.hasNoDeletionVectors && c.hasNoRowTracking && c.hasNoClusteringProviders && !c.hasExtras) {
      if (n == cap) grow()
      paths.addFrom(c.pathColumn, i)
      partitionValues(n) = intern(c.partitionValuesAt(i))
      sizes(n) = c.size(i)
      sizeSum += c.size(i)
      mtimes(n) = c.modificationTime(i)
      if (!statsDetached) stats.addFrom(c.statsColumn, i)
      n += 1
    } else this += c.get(i)
  }

  /** Bytes per `path` and per `stats` value the next rows are expected to take (see [[Utf8ColumnBuilder.expectBytesPerRow]]). */
  def expectBytesPerRow(path: Int, stats: Int): Unit = {
    paths.expectBytesPerRow(path)
    if (!statsDetached) this.stats.expectBytesPerRow(stats)
  }

  /** The rows expected, for sizing the string columns (see [[Utf8ColumnBuilder.expectRows]]). */
  def expectRows(rows: Int): Unit = {
    paths.expectRows(rows)
    if (!statsDetached) stats.expectRows(rows)
  }

  /**
   * Hands the stats column to another thread ([[DetachedStats]]): until [[attachStats]], rows are
   * appended without their stats and that thread appends them, one per row, in row order.
   */
  def detachStats(): Utf8ColumnBuilder = {
    if (statsDetached) throw new IllegalStateException("stats column already detached")
    statsDetached = true
    stats
  }

  /** Takes the stats column back; it must then hold one value per row. */
  def attachStats(b: Utf8ColumnBuilder): Unit = {
    if (!statsDetached) throw new IllegalStateException("stats column not detached")
    stats = b
    statsDetached = false
    if (b.size != n) throw new IllegalStateException(s"stats column has ${b.size} values for $n rows")
  }

  def result(): FileChunk = new FileChunk(n, paths.result(), trim(partitionValues), trimL(sizes), trimL(mtimes),
    stats.result(), trim(tags), trim(dvs), trimL(baseRowIds), trimL(drcvs), trimB(rtPresent), trim(cps), trim(extras), sizeSum,
    nonEmptyPartitionValues == 0)
}

object FileChunkBuilder {
  private val EmptyMap: Map[String, String] = scala.collection.immutable.VectorMap.empty
}

/**
 * The reconciled state of a table at one version (the result of log replay).
 *
 * Live files are a list of immutable [[FileChunk]]s, each with an optional bit set of rows that a
 * later commit replaced or removed; an incremental update shares the chunks of the previous
 * state, clones the (small) bit sets and appends one chunk with the new files. Chunks are merged
 * when there are more than [[SnapshotState.MaxChunks]] or when more than half of the rows are
 * deleted. Tombstones are kept as `RemoveFile` objects (all of them; retention is applied by
 * [[Snapshot.tombstones]]).
 *
 * @param inCommitTimestamps `commitInfo.inCommitTimestamp` per version, for the commits read
 *                           from JSON during the replays that built this state
 * @param snapshotCommitInfo the `commitInfo` of commit `version`, when its JSON was read
 */
final class SnapshotState private[log] (
    val version: Long,
    val protocol: Protocol,
    val metadata: Metadata,
    val setTransactions: Map[String, SetTransaction],
    val domainMetadata: Map[String, DomainMetadata],
    private[log] val chunks: Vector[FileChunk],
    private[log] val deleted: Vector[java.util.BitSet],
    val allTombstones: IndexedSeq[RemoveFile],
    val inCommitTimestamps: Map[Long, Long],
    val snapshotCommitInfo: Option[CommitInfo],
    val fileKeys: FileKeys) {

  require(chunks.size == deleted.size)

  /** Number of live files. */
  val numFiles: Long = chunks.indices.map(i => chunks(i).length.toLong - cardinality(deleted(i))).sum

  /** Total size of the live files in bytes. */
  val sizeInBytes: Long = chunks.indices.map { i =>
    val c = chunks(i)
    val d = deleted(i)
    if (d == null || d.isEmpty) c.totalSize
    else {
      var s = 0L
      var r = 0
      while (r < c.length) { if (!d.get(r)) s += c.size(r); r += 1 }
      s
    }
  }.sum

  private def cardinality(b: java.util.BitSet): Int = if (b == null) 0 else b.cardinality()

  /** The live files (rebuilt as `AddFile`s with `dataChange = false`). */
  def iterator: Iterator[AddFile] = chunks.indices.iterator.flatMap { ci =>
    val c = chunks(ci)
    val d = deleted(ci)
    if (d == null) Iterator.range(0, c.length).map(c.get)
    else Iterator.range(0, c.length).filterNot(d.get).map(c.get)
  }

  /**
   * Calls `f(chunk, deleted)` for every chunk in order; `deleted` (possibly null: none) marks the
   * rows of the chunk that are not live. Live rows in chunk order are the same as [[iterator]]'s.
   */
  def foreachChunk(f: (FileChunk, java.util.BitSet) => Unit): Unit = {
    var ci = 0
    while (ci < chunks.size) { f(chunks(ci), deleted(ci)); ci += 1 }
  }

  /** All tombstones (no retention applied). */
  def tombstones: Iterator[RemoveFile] = allTombstones.iterator

  /** Live file with logical-file `key`, if any (builds chunk indexes on first use). */
  def lookup(key: String): Option[AddFile] = {
    var ci = chunks.size - 1
    while (ci >= 0) {
      val row = chunks(ci).indexOf(key, fileKeys)
      if (row >= 0 && (deleted(ci) == null || !deleted(ci).get(row))) return Some(chunks(ci).get(row))
      ci -= 1
    }
    None
  }

  /** Number of chunks (for tests and diagnostics). */
  def chunkCount: Int = chunks.size
}

object SnapshotState {
  /** Above this many chunks an update merges them into one. */
  val MaxChunks: Int = 8
}
