package io.deltalog.txn

import java.net.URI
import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.deltalog.actions.{Action, AddFile, Metadata, PathCodec, RemoveFile}
import io.deltalog.exceptions.{DeltalogException, InvalidTablePropertyException}
import io.deltalog.log.{LogStore, Snapshot}
import io.deltalog.schema.ColumnMapping

/**
 * Presto/Athena/Hive symlink manifests, as delta-spark 4.4 writes them: `_symlink_format_manifest/manifest`
 * (unpartitioned; written also when the table has no file) or `_symlink_format_manifest/<col=value/…>/manifest`
 * per partition with files, each listing the absolute path of every live data file, one per line.
 *
 *  - [[generateFull]] (`GENERATE symlink_format_manifest FOR TABLE t`): every manifest rewritten, those of
 *    partitions without files deleted. Refused on tables with column mapping
 *    (`DELTA_UNSUPPORTED_MANIFEST_GENERATION_WITH_COLUMN_MAPPING`) or live deletion vectors
 *    (`DELTA_UNSUPPORTED_GENERATE_WITH_DELETION_VECTORS`): external readers would see deleted rows.
 *  - The post-commit hook (`delta.compatibility.symlinkFormatManifest.enabled = true`): after each commit
 *    with file actions, the manifests of the partitions it added to or removed from are rewritten and those
 *    of partitions it emptied deleted (the whole set when no manifest exists yet).
 *
 * Every manifest is written atomically (readers never see half a file).
 */
object GenerateSymlinkManifest extends PostCommitHook {
  val EnabledKey = "delta.compatibility.symlinkFormatManifest.enabled"
  val ManifestDirName = "_symlink_format_manifest"
  val ManifestFileName = "manifest"
  private val HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"
  private val EnableDvKey = "delta.enableDeletionVectors"

  override val name: String = "Generate Symlink Format Manifest"

  def isEnabled(configuration: Map[String, String]): Boolean =
    configuration.get(EnabledKey).exists(_.trim.equalsIgnoreCase("true"))

  /** Hive escaping of a partition directory name component. */
  def escapePathName(s: String): String = {
    val sb = new StringBuilder
    s.foreach { c =>
      if (c < ' ' || c == '\u007F' || "\"#%'*/:=?\\{[]^".indexOf(c.toInt) >= 0) sb.append(f"%%${c.toInt}%02X")
      else sb.append(c)
    }
    sb.toString
  }

  /** `col=value/...` of a file's partition values, in partition column order (`""` unpartitioned). */
  def partitionDir(partitionColumns: Seq[String], values: Map[String, String]): String =
    partitionColumns.map { c =>
      val v = values.getOrElse(c, null)
      s"${escapePathName(c)}=${if (v == null || v.isEmpty) HiveDefaultPartition else escapePathName(v)}"
    }.mkString("/")

  // ------------------------------------------------------------------------------ refusals

  /** Manifests of a column-mapped table would name physical columns external readers cannot map. */
  def checkColumnMapping(metadata: Metadata, table: String): Unit =
    if (ColumnMapping.fromConfiguration(metadata.configuration) != io.deltalog.schema.ColumnMappingMode.NoMapping) {
      throw new DeltalogException("DELTA_UNSUPPORTED_MANIFEST_GENERATION_WITH_COLUMN_MAPPING",
        s"Manifest generation is not supported for tables that leverage column mapping, as external readers " +
          s"cannot read these Delta tables (table $table uses delta.columnMapping.mode = " +
          s"${metadata.configuration.getOrElse(ColumnMapping.ModeKey, "")}).")
    }

  private def checkNoDeletionVectors(snapshot: Snapshot, table: String): Unit = {
    val withDv = snapshot.allFiles.count(_.deletionVector.isDefined)
    if (withDv > 0) {
      throw new DeltalogException("DELTA_UNSUPPORTED_GENERATE_WITH_DELETION_VECTORS",
        s"The 'GENERATE symlink_format_manifest' command is not supported on table versions with deletion " +
          s"vectors (table $table, version ${snapshot.version}: $withDv live files have one). Run 'REORG TABLE " +
          s"$table APPLY (PURGE)' to rewrite them, and consider disabling deletion vectors ('ALTER TABLE table SET " +
          "TBLPROPERTIES (delta.enableDeletionVectors = false)').")
    }
  }

  /**
   * delta-spark's table-property rule for a commit's metadata (`table` names it in the message): the
   * incremental manifest cannot be on together with `delta.enableDeletionVectors`, nor be turned on
   * while live files have deletion vectors.
   */
  def checkTableProperties(m: Metadata, readSnapshot: Snapshot, table: String): Unit = {
    if (!isEnabled(m.configuration)) return
    val cls = "DELTA_VIOLATE_TABLE_PROPERTY_VALIDATION_FAILED"
    if (m.configuration.get(EnableDvKey).exists(_.trim.equalsIgnoreCase("true"))) {
      throw new InvalidTablePropertyException(s"$cls.PERSISTENT_DELETION_VECTORS_WITH_INCREMENTAL_MANIFEST_GENERATION",
        s"The validation of the properties of table $table has been violated: Persistent deletion vectors and " +
          s"incremental symlink manifest generation are mutually exclusive ($EnableDvKey and $EnabledKey are both true).")
    }
    if (readSnapshot.version >= 0 && readSnapshot.allFiles.exists(_.deletionVector.isDefined)) {
      throw new InvalidTablePropertyException(s"$cls.EXISTING_DELETION_VECTORS_WITH_INCREMENTAL_MANIFEST_GENERATION",
        s"The validation of the properties of table $table has been violated: Symlink manifest generation is " +
          s"unsupported while deletion vectors are present in the table. In order to produce a version of the " +
          s"table without deletion vectors, run 'REORG TABLE $table APPLY (PURGE)'.")
    }
  }

  // ------------------------------------------------------------------------------ generation

  /** `GENERATE symlink_format_manifest`: every manifest of `snapshot` (re)written, stale ones deleted. */
  def generateFull(snapshot: Snapshot, table: String): Unit = {
    checkColumnMapping(snapshot.metadata, table)
    checkNoDeletionVectors(snapshot, table)
    val written = write(snapshot, snapshot.allFiles.toSeq)
    val root = manifestRoot(snapshot)
    val fs = snapshot.deltaLog.fs
    if (fs.exists(root)) {
      val rootPath = fs.makeQualified(root).toUri.getPath.stripSuffix("/")
      val it = fs.listFiles(root, true)
      val stale = scala.collection.mutable.LinkedHashSet.empty[String]
      while (it.hasNext) {
        val st = it.next()
        if (st.getPath.getName == ManifestFileName) {
          val dir = st.getPath.getParent.toUri.getPath.stripPrefix(rootPath).stripPrefix("/")
          if (dir.nonEmpty && !written.contains(dir)) stale += dir
        }
      }
      stale.foreach(d => fs.delete(new Path(root, d), true))
    }
  }

  override def run(txn: OptimisticTransaction, committedVersion: Long, snapshot: Snapshot,
      committedActions: Seq[Action]): Unit = {
    val adds = committedActions.collect { case a: AddFile => a }
    val removes = committedActions.collect { case r: RemoveFile => r }
    if (adds.isEmpty && removes.isEmpty) return
    val table = txn.table
    checkColumnMapping(snapshot.metadata, table)
    val root = manifestRoot(snapshot)
    val fs = snapshot.deltaLog.fs
    if (!fs.exists(root)) return generateFull(snapshot, table)
    val cols = snapshot.metadata.partitionColumns
    if (cols.isEmpty) { write(snapshot, snapshot.allFiles.toSeq); return }

    lazy val readFiles = txn.snapshot.allFiles.map(f => PathCodec.canonicalPathKey(f.path) -> f.partitionValues).toMap
    val removedPartitions = removes.flatMap { r =>
      r.partitionValues.orElse(readFiles.get(PathCodec.canonicalPathKey(r.path)))
    }.toSet
    val touched = adds.map(_.partitionValues).toSet ++ removedPartitions
    val live = snapshot.allFiles.toSeq
    val written = write(snapshot, live.filter(f => touched.contains(f.partitionValues)))
    val liveDirs = live.map(f => partitionDir(cols, f.partitionValues)).toSet
    removedPartitions.map(partitionDir(cols, _)).filterNot(liveDirs).foreach { d =>
      if (!written.contains(d)) fs.delete(new Path(root, d), true)
    }
  }

  private def manifestRoot(snapshot: Snapshot): Path = new Path(snapshot.deltaLog.tablePath, ManifestDirName)

  /**
   * Writes the manifest of each partition of `files` (all of `snapshot`'s files of those partitions) and
   * returns the partition directories written (`""` for an unpartitioned table's root manifest).
   */
  private def write(snapshot: Snapshot, files: Seq[AddFile]): Set[String] = {
    val deltaLog = snapshot.deltaLog
    val store = LogStore(deltaLog.fs)
    val tablePath = deltaLog.fs.makeQualified(deltaLog.tablePath)
    val root = manifestRoot(snapshot)
    val cols = snapshot.metadata.partitionColumns
    val byDir = files.groupBy(f => partitionDir(cols, f.partitionValues))
    val all = if (cols.isEmpty && byDir.isEmpty) Map("" -> Seq.empty[AddFile]) else byDir
    all.foreach { case (dir, fs) =>
      val target = if (dir.isEmpty) new Path(root, ManifestFileName) else new Path(new Path(root, dir), ManifestFileName)
      val text = fs.map(f => absolutePath(tablePath, f.path)).sorted.map(_ + "\n").mkString
      store.writeAtomically(target, overwrite = true)(_.write(text.getBytes(StandardCharsets.UTF_8)))
    }
    all.keySet
  }

  /** Absolute, qualified path of a data file (`path` is a URI string, relative or absolute), as Hadoop prints it. */
  def absolutePath(tablePath: Path, path: String): String = {
    val rel =
      try new Path(new URI(path))
      catch { case NonFatal(_) => new Path(PathCodec.decodePath(path)) }
    (if (PathCodec.isAbsolute(path)) rel else new Path(tablePath, rel)).toString
  }

  /** Refusals (column mapping, deletion vectors) surface as they are; other failures name the hook. */
  override def handleError(error: Throwable, version: Long): Unit = error match {
    case e: DeltalogException if e.errorClass.startsWith("DELTA_UNSUPPORTED_") => throw e
    case _ => throw new PostCommitHookFailedException(name, version, error)
  }
}
