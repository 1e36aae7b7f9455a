package io.deltalog.spark.stream

import org.apache.hadoop.fs.FileStatus

import io.deltalog.actions.{AddCDCFile, AddFile, CommitInfo, Metadata, RemoveFile}
import io.deltalog.exceptions.StreamingSourceException
import io.deltalog.log.{CommitReader, DeltaLog, LogStore}

/** A data file the stream delivers and its rank among its commit's actions. */
final case class IndexedAdd(index: Long, add: AddFile)

/**
 * What the stream takes from one commit: the `add`s to deliver (none for skipped commits and
 * `dataChange=false` commits such as OPTIMIZE) and, for the change data feed, how many file
 * actions it has and their bytes (a commit is admitted whole).
 */
final case class CommitFiles(version: Long, adds: IndexedSeq[IndexedAdd], changeFiles: Int, changeBytes: Long)

/**
 * Reads the commits the stream plans from, one commit file at a time from a given version (the
 * table's state is never replayed), and applies the rules of a streaming read to each: a commit
 * removing data with `dataChange=true` fails the stream unless the options allow it
 * (`DELTA_SOURCE_TABLE_IGNORE_CHANGES` / `DELTA_SOURCE_IGNORE_DELETE`), a `metaData` action goes
 * through `checkMetadata`. Parsed commits are kept in a small cache: the planning of a batch
 * (latest offset) and its read (getBatch) look at the same commits.
 */
final class SourceCommits(
    deltaLog: DeltaLog,
    table: String,
    options: SourceOptions,
    checkMetadata: (Long, Metadata) => Unit) {

  private val store = LogStore(deltaLog.fs)
  private val reader = new CommitReader(deltaLog.fs)
  private val MaxCached = 4096
  private val cache = new java.util.LinkedHashMap[Long, CommitFiles](64, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[Long, CommitFiles]): Boolean = size() > MaxCached
  }

  /** Number of commit files parsed (tests, benchmark). */
  @volatile var commitsRead = 0L

  /** The commit of `version`, or None when it does not exist (yet). */
  def get(version: Long): Option[CommitFiles] = {
    val hit = cache.synchronized(cache.get(version))
    if (hit != null) return Some(hit)
    store.statusOf(deltaLog.logPath, f"$version%020d.json").map { status =>
      val files = parse(version, status)
      cache.synchronized(cache.put(version, files))
      files
    }
  }

  /** The commit of `version`, which must exist (a batch being re-read): else the log lost it. */
  def require(version: Long): CommitFiles = get(version).getOrElse(throw missing(version))

  /** Forgets cached commits before `version` (they were delivered). */
  def forgetBefore(version: Long): Unit = cache.synchronized {
    cache.keySet().removeIf(v => v < version)
  }

  def missing(version: Long): StreamingSourceException = new StreamingSourceException(
    "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE",
    s"The commit file of version $version of table $table, which the stream has to read next, is missing from " +
      s"${deltaLog.logPath} (log cleanup deleted it?). If you never deleted it, it's likely your query is lagging " +
      "behind. Please delete its checkpoint to restart from scratch. To avoid this happening again, you can " +
      "update your retention policy of your Delta table (delta.logRetentionDuration).")

  private def parse(version: Long, status: FileStatus): CommitFiles = {
    val actions = reader.read(status).actions
    commitsRead += 1
    var removed: Option[String] = None
    var seenAdd = false
    var operation: Option[String] = None
    var changeFiles = 0
    var changeBytes = 0L
    val adds = Vector.newBuilder[IndexedAdd]
    var i = 0
    while (i < actions.length) {
      actions(i) match {
        case a: AddFile if a.dataChange =>
          seenAdd = true
          adds += IndexedAdd(i, a)
          changeFiles += 1
          changeBytes += a.size
        case r: RemoveFile if r.dataChange =>
          if (removed.isEmpty) removed = Some(r.path)
          changeFiles += 1
          changeBytes += r.size.getOrElse(0L)
        case c: AddCDCFile =>
          changeFiles += 1
          changeBytes += c.size
        case m: Metadata => checkMetadata(version, m)
        case c: CommitInfo =>
          operation = c.operation.map(op => s"$op (${c.operationParameters.getOrElse(Map.empty).mkString(", ")})")
        case _ =>
      }
      i += 1
    }
    if (options.readChangeFeed) return CommitFiles(version, adds.result(), changeFiles, changeBytes)
    removed match {
      case Some(path) if seenAdd && !options.allowsChanges =>
        throw new StreamingSourceException("DELTA_SOURCE_TABLE_IGNORE_CHANGES",
          s"Detected a data update (for example ${operation.getOrElse(path)}) in the source table at version " +
            s"$version. This is currently not supported. If this is going to happen regularly and you are okay to " +
            "skip changes, set the option 'skipChangeCommits' to 'true'. If you would like the data update to be " +
            "reflected, please restart this query with a fresh checkpoint directory. The source table can be " +
            s"found at path $table.")
      case Some(path) if !seenAdd && !options.allowsDeletes =>
        throw new StreamingSourceException("DELTA_SOURCE_IGNORE_DELETE",
          s"Detected deleted data (for example $path) from streaming source at version $version. This is " +
            "currently not supported. If you'd like to ignore deletes, set the option 'ignoreDeletes' to 'true'. " +
            s"The source table can be found at path $table.")
      case Some(_) if options.skipChangeCommits => CommitFiles(version, Vector.empty, 0, 0L)
      case _ => CommitFiles(version, adds.result(), changeFiles, changeBytes)
    }
  }
}
