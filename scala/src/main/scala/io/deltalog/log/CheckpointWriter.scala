package io.deltalog.log

import java.io.{BufferedOutputStream, OutputStream}
import java.nio.charset.StandardCharsets
import java.nio.file.{AtomicMoveNotSupportedException, Files, Paths, StandardCopyOption}
import java.util.UUID

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.hadoop.ParquetWriter
import org.apache.parquet.schema.MessageType

import io.deltalog.actions._

/**
 * Options of [[CheckpointWriter.write]].
 *
 * @param partSize           actions per part: when set and there is more than one part's worth
 *                           of actions, a multi-part checkpoint `%020d.checkpoint.%010d.%010d.parquet`
 *                           (parts 1..n); a single part is published under the classic name
 * @param v2                 write a V2 checkpoint: UUID-named top-level file + sidecars
 * @param v2TopLevelFormat   "parquet" or "json" (V2 only)
 * @param sidecarSize        file actions per sidecar (V2 only)
 * @param writeStatsAsJson   write `add.stats` (the JSON string)
 * @param writeStatsAsStruct write `add.stats_parsed` (+ `partitionValues_parsed` for partitioned
 *                           tables); see [[CheckpointStatsStruct]] for what is covered
 */
final case class CheckpointWriteOptions(
    partSize: Option[Long] = None,
    v2: Boolean = false,
    v2TopLevelFormat: String = "parquet",
    sidecarSize: Long = 50000L,
    writeStatsAsJson: Boolean = true,
    writeStatsAsStruct: Boolean = false) {
  require(partSize.forall(_ > 0), "partSize must be positive")
  require(sidecarSize > 0, "sidecarSize must be positive")
  require(v2TopLevelFormat == "parquet" || v2TopLevelFormat == "json", "v2TopLevelFormat is 'parquet' or 'json'")
  require(!(v2 && partSize.isDefined), "multi-part naming is not allowed for V2 checkpoints")
}

/**
 * What was written, with everything `_last_checkpoint` needs.
 *
 * @param version      checkpoint version
 * @param files        the published checkpoint files: the classic file, all parts (in part
 *                     order) or the V2 top-level file
 * @param sidecarFiles V2 sidecars (published before the top-level file)
 * @param numActions   rows in all files (`_last_checkpoint.size`); for V2 including the
 *                     checkpointMetadata and sidecar rows
 * @param numAddFiles  add rows (`_last_checkpoint.numOfAddFiles`)
 * @param sizeInBytes  bytes of all files, sidecars included (`_last_checkpoint.sizeInBytes`)
 * @param parts        number of parts of a multi-part checkpoint (`_last_checkpoint.parts`)
 * @param isV2         a V2 checkpoint was written
 * @param checkpointSchema Parquet schema of the (top-level / part) files
 */
final case class CheckpointResult(
    version: Long,
    files: Seq[FileStatus],
    sidecarFiles: Seq[FileStatus],
    numActions: Long,
    numAddFiles: Long,
    sizeInBytes: Long,
    parts: Option[Int],
    isV2: Boolean,
    checkpointSchema: MessageType)

/**
 * Writes a checkpoint from reconciled actions (protocol, metaData, txns, domainMetadata, adds,
 * live tombstones), streaming: nothing but the non-file actions is held in memory.
 *
 * Atomicity: every file is written under a hidden temporary name in its final directory
 * (`.<name>.<uuid>.tmp`; for parts and sidecars `<name>` is provisional, without the part
 * count) and renamed into place only when complete and closed. Files whose name
 * is known up front (classic file, V2 top-level file) go through [[LogStore.writeAtomically]];
 * parts and sidecars, whose names carry the part count known only at the end of the stream, are
 * written to temp files and renamed once all are complete (parts in order 1..n, sidecars before
 * the top-level file). A failure deletes temp files and any part/sidecar already renamed; a crash
 * leaves only hidden temp files (ignored by readers), an incomplete multi-part set (ignored by
 * readers) or unreferenced sidecars. `_last_checkpoint` is not written here.
 *
 * Metadata must come before the first file action when `writeStatsAsStruct` is on (the typed
 * columns are derived from the table schema).
 *
 * Two ways to the same rows: a snapshot's unread [[CheckpointActions]] (from
 * [[Checkpoints.actions]]) is written column chunk by column chunk straight from its columnar
 * state ([[CheckpointRows]], [[ParquetPageFile]]: no `AddFile` per live file, pages compressed
 * on background threads); any other iterator is written one `Action` per row through parquet-mr's
 * `ParquetWriter` ([[ParquetActionWriter]], the reference path). File naming, atomicity and
 * results are the same for both.
 */
object CheckpointWriter {

  def write(
      conf: Configuration,
      logPath: Path,
      version: Long,
      actions: Iterator[Action],
      options: CheckpointWriteOptions = CheckpointWriteOptions()): CheckpointResult = actions match {
    case snapshotActions: CheckpointActions if snapshotActions.untouched =>
      writeFromState(conf, logPath, version, snapshotActions, options)
    case _ => writeActions(conf, logPath, version, actions, options)
  }

  private def statsStructOf(options: CheckpointWriteOptions, metadata: Option[Metadata]): Option[CheckpointStatsStruct] =
    if (options.writeStatsAsStruct) {
      Some(new CheckpointStatsStruct(metadata.getOrElse(throw new IllegalArgumentException(
        "writeStatsAsStruct needs the metaData action before the first file action"))))
    } else None

  private def addTypeOf(options: CheckpointWriteOptions, statsStruct: Option[CheckpointStatsStruct]) =
    CheckpointSchema.addType(options.writeStatsAsJson,
      statsStruct.flatMap(_.partitionValuesParsedType), statsStruct.map(_.statsParsedType))

  /** The reference path: any stream of reconciled actions, one `Action` per row. */
  private def writeActions(
      conf: Configuration,
      logPath: Path,
      version: Long,
      actions: Iterator[Action],
      options: CheckpointWriteOptions): CheckpointResult = {
    val store = LogStore.forPath(logPath, conf)
    // Non-file actions before the first file action: needed to fix the schema (metadata).
    val head = ArrayBuffer.empty[Action]
    val buffered = actions.buffered
    while (buffered.hasNext && !buffered.head.isInstanceOf[FileAction]) head += buffered.next()
    val statsStruct = statsStructOf(options, head.collectFirst { case m: Metadata => m })
    val add = addTypeOf(options, statsStruct)
    val all = head.iterator ++ buffered
    if (options.v2) {
      val nonFile = ArrayBuffer.empty[Action] ++= head
      val rest = buffered
      val fileActions = new Iterator[Action] {
        // Non-file actions met after the first file action are kept for the top-level file.
        private def skip(): Unit = while (rest.hasNext && !rest.head.isInstanceOf[FileAction]) nonFile += rest.next()
        override def hasNext: Boolean = { skip(); rest.hasNext }
        override def next(): Action = { skip(); rest.next() }
      }
      writeV2(conf, store, logPath, version, nonFile, add, statsStruct, options) { (dir, schema, counts, provisional, names) =>
        writeRolling(store, dir, provisional, names, () => fileActions.hasNext) { out =>
          val w = ParquetActionWriter.open(out, conf, schema, statsStruct)
          using(w)(writeRows(w, fileActions, counts, options.sidecarSize))
        }
      }
    } else options.partSize match {
      case None => writeClassic(conf, store, logPath, version, all, add, statsStruct)
      case Some(n) => writeMultiPart(conf, store, logPath, version, all, n, add, statsStruct)
    }
  }

  // ------------------------------------------------------------------------------ from a state

  /**
   * The fast path: the snapshot's live files are written column by column from its
   * [[SnapshotState]] ([[CheckpointRows]]); same rows, same files and same atomicity as
   * [[writeActions]] of the same actions.
   */
  private def writeFromState(
      conf: Configuration,
      logPath: Path,
      version: Long,
      actions: CheckpointActions,
      options: CheckpointWriteOptions): CheckpointResult = {
    val store = LogStore.forPath(logPath, conf)
    val statsStruct = statsStructOf(options, Some(actions.metadata))
    val add = addTypeOf(options, statsStruct)
    if (options.v2) {
      val fileRows = new CheckpointRows(IndexedSeq.empty, actions.state, actions.tombstones)
      writeV2(conf, store, logPath, version, ArrayBuffer.empty[Action] ++= actions.head, add, statsStruct, options) {
        (dir, schema, counts, provisional, names) =>
          var from = 0L
          writeRolling(store, dir, provisional, names, () => from < fileRows.numRows) { out =>
            val until = math.min(fileRows.numRows, from + options.sidecarSize)
            fileRows.writeFile(out, schema, statsStruct, from, until)
            counts.actions += until - from
            counts.adds += fileRows.addsIn(from, until)
            from = until
          }
      }
    } else {
      val rows = new CheckpointRows(actions.head, actions.state, actions.tombstones)
      val schema = CheckpointSchema.classic(add)
      val counts = new Counts
      counts.actions = rows.numRows
      counts.adds = rows.numAdds
      options.partSize match {
        case Some(partSize) if rows.numRows > partSize =>
          var from = 0L
          val files = writeRolling(store, logPath, k => f"$version%020d.checkpoint.$k%010d.parquet",
            n => FileNames.checkpointFileWithParts(logPath, version, n), () => from < rows.numRows) { out =>
            val until = math.min(rows.numRows, from + partSize)
            rows.writeFile(out, schema, statsStruct, from, until)
            from = until
          }
          CheckpointResult(version, files, Nil, counts.actions, counts.adds, files.map(_.getLen).sum,
            Some(files.size), isV2 = false, schema)
        case _ =>
          val target = FileNames.checkpointFileSingular(logPath, version)
          store.writeAtomically(target, overwrite = true)(out => rows.writeFile(out, schema, statsStruct, 0, rows.numRows))
          val st = store.getFileStatus(target)
          CheckpointResult(version, Seq(st), Nil, counts.actions, counts.adds, st.getLen, None, isV2 = false, schema)
      }
    }
  }

  // ------------------------------------------------------------------------------ classic

  private final class Counts { var actions = 0L; var adds = 0L }

  /** Runs `body` with `w`; on failure the writer is closed quietly and the failure rethrown. */
  private def using(w: ParquetWriter[Action])(body: => Unit): Unit = {
    try body
    catch {
      case NonFatal(e) =>
        try w.close() catch { case NonFatal(s) => e.addSuppressed(s) }
        throw e
    }
    w.close()
  }

  private def writeRows(w: ParquetWriter[Action], it: Iterator[Action], counts: Counts, limit: Long): Unit = {
    var n = 0L
    while (n < limit && it.hasNext) {
      val a = it.next()
      w.write(a)
      counts.actions += 1
      if (a.isInstanceOf[AddFile]) counts.adds += 1
      n += 1
    }
  }

  private def writeClassic(
      conf: Configuration,
      store: LogStore,
      logPath: Path,
      version: Long,
      actions: Iterator[Action],
      add: org.apache.parquet.schema.GroupType,
      statsStruct: Option[CheckpointStatsStruct]): CheckpointResult = {
    val schema = CheckpointSchema.classic(add)
    val target = FileNames.checkpointFileSingular(logPath, version)
    val counts = new Counts
    store.writeAtomically(target, overwrite = true) { out =>
      val w = ParquetActionWriter.open(out, conf, schema, statsStruct)
      using(w)(writeRows(w, actions, counts, Long.MaxValue))
    }
    val st = store.getFileStatus(target)
    CheckpointResult(version, Seq(st), Nil, counts.actions, counts.adds, st.getLen, None, isV2 = false, schema)
  }

  // ------------------------------------------------------------------------------ temp files

  /** A file written under a hidden temp name, to be renamed to its final name later. */
  private final class TempFile(val store: LogStore, val dir: Path, provisionalName: String) {
    val path = new Path(dir, FileNames.tempFileName(provisionalName))
    private val stream: OutputStream = new BufferedOutputStream(store.fs.create(path, false), 1 << 16)
    var closed = false
    def out: OutputStream = stream
    def close(): Unit = if (!closed) { closed = true; stream.close() }
  }

  private def deleteQuietly(store: LogStore, p: Path): Unit =
    try store.fs.delete(p, false) catch { case NonFatal(_) => }

  /** Renames a complete temp file to `target` (atomic replace on the local file system). */
  private def publish(store: LogStore, temp: Path, target: Path): Unit = {
    if (store.fs.getUri.getScheme == "file") {
      val from = Paths.get(store.fs.makeQualified(temp).toUri)
      val to = Paths.get(store.fs.makeQualified(target).toUri)
      try Files.move(from, to, StandardCopyOption.ATOMIC_MOVE)
      catch { case _: AtomicMoveNotSupportedException => Files.move(from, to, StandardCopyOption.REPLACE_EXISTING) }
    } else if (!store.fs.rename(temp, target)) {
      // Most Hadoop stores do not replace on rename; an existing file of the same name is a
      // checkpoint of the same version written by someone else: replace it.
      store.fs.delete(target, false)
      if (!store.fs.rename(temp, target)) throw new java.io.IOException(s"rename of $temp to $target failed")
    }
  }

  /**
   * Writes temp files in `dir` with `writeFile` while `more()` and renames them with `names(n)`
   * once all are complete. Returns the published statuses in order.
   */
  private def writeRolling(
      store: LogStore,
      dir: Path,
      provisionalName: Int => String,
      names: Int => Seq[Path],
      more: () => Boolean)(writeFile: OutputStream => Unit): Seq[FileStatus] = {
    val temps = ArrayBuffer.empty[TempFile]
    val published = ArrayBuffer.empty[Path]
    try {
      if (!store.fs.exists(dir)) store.fs.mkdirs(dir)
      while (more()) {
        val t = new TempFile(store, dir, provisionalName(temps.size + 1))
        temps += t
        writeFile(t.out)
        t.close()
      }
      val targets = names(temps.size)
      temps.zip(targets).foreach { case (t, target) =>
        publish(store, t.path, target)
        published += target
      }
      targets.map(store.getFileStatus)
    } catch {
      case NonFatal(e) =>
        temps.foreach { t => try t.close() catch { case NonFatal(_) => }; deleteQuietly(store, t.path) }
        published.foreach(deleteQuietly(store, _))
        throw e
    }
  }

  // ------------------------------------------------------------------------------ multi-part

  private def writeMultiPart(
      conf: Configuration,
      store: LogStore,
      logPath: Path,
      version: Long,
      actions: Iterator[Action],
      partSize: Long,
      add: org.apache.parquet.schema.GroupType,
      statsStruct: Option[CheckpointStatsStruct]): CheckpointResult = {
    val schema = CheckpointSchema.classic(add)
    val counts = new Counts
    val files = writeRolling(store, logPath, k => f"$version%020d.checkpoint.$k%010d.parquet", n =>
      if (n <= 1) Seq(FileNames.checkpointFileSingular(logPath, version))
      else FileNames.checkpointFileWithParts(logPath, version, n), () => actions.hasNext) { out =>
      val w = ParquetActionWriter.open(out, conf, schema, statsStruct)
      using(w)(writeRows(w, actions, counts, partSize))
    }
    val files1 =
      if (files.nonEmpty) files
      else {
        // No action at all: still publish an (empty) classic checkpoint.
        return writeClassic(conf, store, logPath, version, Iterator.empty, add, statsStruct)
      }
    CheckpointResult(version, files1, Nil, counts.actions, counts.adds, files1.map(_.getLen).sum,
      if (files1.size > 1) Some(files1.size) else None, isV2 = false, schema)
  }

  // ------------------------------------------------------------------------------ V2

  /** Writes the sidecars of a V2 checkpoint: (dir, schema, counts, provisional name, final names). */
  private type SidecarWriter = (Path, MessageType, Counts, Int => String, Int => Seq[Path]) => Seq[FileStatus]

  /**
   * A V2 checkpoint: sidecars from `writeSidecars`, then the top-level file with `nonFile`
   * (complete once the sidecars are written), the checkpointMetadata and one sidecar row each.
   */
  private def writeV2(
      conf: Configuration,
      store: LogStore,
      logPath: Path,
      version: Long,
      nonFile: ArrayBuffer[Action],
      add: org.apache.parquet.schema.GroupType,
      statsStruct: Option[CheckpointStatsStruct],
      options: CheckpointWriteOptions)(writeSidecars: SidecarWriter): CheckpointResult = {
    val sidecarDir = FileNames.sidecarDir(logPath)
    val counts = new Counts
    val uuidOfRun = UUID.randomUUID().toString
    val sidecarSchema = CheckpointSchema.sidecar(add)
    val sidecars = writeSidecars(sidecarDir, sidecarSchema, counts,
      k => f"$version%020d.checkpoint.$k%010d.$uuidOfRun.parquet", n => (1 to n).map { i =>
        new Path(sidecarDir, f"$version%020d.checkpoint.$i%010d.$n%010d.$uuidOfRun.parquet")
      })
    try {
      val cpMeta = CheckpointMetadata(version, Some(Map.empty))
      val sidecarRows = sidecars.map(s => SidecarFile(s.getPath.getName, s.getLen, s.getModificationTime, Some(Map.empty)))
      val top: Seq[Action] = nonFile.toSeq ++ Seq(cpMeta) ++ sidecarRows
      val json = options.v2TopLevelFormat == "json"
      val target = FileNames.uuidCheckpoint(logPath, version, if (json) "json" else "parquet")
      val schema = CheckpointSchema.v2TopLevel(add)
      store.writeAtomically(target, overwrite = false) { out =>
        if (json) {
          val buf = new BufferedOutputStream(out, 1 << 16)
          top.foreach { a => buf.write(a.json.getBytes(StandardCharsets.UTF_8)); buf.write('\n') }
          buf.flush()
        } else {
          val w = ParquetActionWriter.open(out, conf, schema, statsStruct)
          using(w)(top.foreach(w.write))
        }
      }
      val st = store.getFileStatus(target)
      CheckpointResult(version, Seq(st), sidecars, counts.actions + top.size, counts.adds,
        st.getLen + sidecars.map(_.getLen).sum, None, isV2 = true, schema)
    } catch {
      case NonFatal(e) =>
        sidecars.foreach(s => deleteQuietly(store, s.getPath))
        throw e
    }
  }
}
