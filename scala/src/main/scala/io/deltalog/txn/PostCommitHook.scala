package io.deltalog.txn

import java.net.URI
import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.deltalog.actions.{Action, FileAction, PathCodec}
import io.deltalog.exceptions.DeltalogException
import io.deltalog.log.{LogStore, Snapshot}

/**
 * Work run after a successful commit ([[OptimisticTransaction.registerPostCommitHook]]). A failing
 * hook does not undo the commit: the error is logged and passed to [[handleError]].
 */
trait PostCommitHook {
  def name: String

  /**
   * @param txn              the committed transaction
   * @param committedVersion its version
   * @param snapshot         the table at `committedVersion`
   * @param committedActions the actions written
   */
  def run(txn: OptimisticTransaction, committedVersion: Long, snapshot: Snapshot, committedActions: Seq[Action]): Unit

  /** Called with a non-fatal error of [[run]]; the default ignores it (it is logged already). */
  def handleError(error: Throwable, version: Long): Unit = ()
}

/** A post-commit hook failed after the commit succeeded. */
class PostCommitHookFailedException private (val hook: String, val version: Long, cause: Throwable,
    verbatim: String)
  extends DeltalogException("DELTA_POST_COMMIT_HOOK_FAILED", DeltalogException.messageOr(verbatim,
    s"Commit version $version succeeded but the post-commit hook '$hook' failed: ${cause.getMessage}. The " +
      "table is consistent; re-run the hook's work (e.g. regenerate the manifest)."), cause) {
  def this(hook: String, version: Long, cause: Throwable) = this(hook, version, cause, null)
  def this(message: String) = this(null, -1L, null, message)
}

/**
 * Writes Presto/Athena symlink manifests (`delta.compatibility.symlinkFormatManifest.enabled`):
 * `_symlink_format_manifest/<partition dirs>/manifest` (unpartitioned: `_symlink_format_manifest/manifest`)
 * listing the absolute paths of the live data files, one per line. Every manifest is rewritten
 * atomically; manifests of partitions without files are deleted.
 */
object GenerateSymlinkManifest extends PostCommitHook {
  val EnabledKey = "delta.compatibility.symlinkFormatManifest.enabled"
  val ManifestDirName = "_symlink_format_manifest"
  val ManifestFileName = "manifest"
  private val HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

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

  /** `col=value/...` of a file's (logical) partition values, in partition column order. */
  def partitionDir(partitionColumns: Seq[String], values: Map[String, String]): String =
    partitionColumns.map { c =>
      val v = values.getOrElse(c, null)
      s"${escapePathName(c)}=${if (v == null || v.isEmpty) HiveDefaultPartition else escapePathName(v)}"
    }.mkString("/")

  override def run(txn: OptimisticTransaction, committedVersion: Long, snapshot: Snapshot,
      committedActions: Seq[Action]): Unit = {
    if (!committedActions.exists(_.isInstanceOf[FileAction])) return
    generate(snapshot)
  }

  /** (Re)writes every manifest of `snapshot`. */
  def generate(snapshot: Snapshot): Unit = {
    val deltaLog = snapshot.deltaLog
    val fs = deltaLog.fs
    val store = LogStore(fs)
    val tablePath = deltaLog.tablePath
    val manifestRoot = new Path(tablePath, ManifestDirName)
    val metadata = snapshot.metadata
    val physical = SchemaInfo.physicalPartitionColumns(metadata)
    val byDir = snapshot.allFiles.toSeq.groupBy { f =>
      partitionDir(metadata.partitionColumns, SchemaInfo.logicalPartitionValues(metadata, physical, f.partitionValues))
    }
    byDir.foreach { case (dir, files) =>
      val target = if (dir.isEmpty) new Path(manifestRoot, ManifestFileName)
        else new Path(new Path(manifestRoot, dir), ManifestFileName)
      val text = files.map(f => absolutePath(tablePath, f.path)).sorted.mkString("", "\n", "\n")
      store.writeAtomically(target, overwrite = true)(_.write(text.getBytes(StandardCharsets.UTF_8)))
    }
    // Drop manifests of partitions that no longer have files.
    val wanted = byDir.keySet.map(d => if (d.isEmpty) ManifestFileName else s"$d/$ManifestFileName")
    if (fs.exists(manifestRoot)) {
      val it = fs.listFiles(manifestRoot, true)
      val rootStr = fs.makeQualified(manifestRoot).toUri.getPath.stripSuffix("/")
      while (it.hasNext) {
        val st = it.next()
        val rel = st.getPath.toUri.getPath.stripPrefix(rootStr).stripPrefix("/")
        if (st.getPath.getName == ManifestFileName && !wanted.contains(rel)) {
          try fs.delete(st.getPath, false) catch { case NonFatal(_) => () }
        }
      }
    }
  }

  /** Absolute, qualified path of a data file (`path` is a URI string, relative or absolute). */
  def absolutePath(tablePath: Path, path: String): String = {
    val rel =
      try new Path(new URI(path))
      catch { case NonFatal(_) => new Path(PathCodec.decodePath(path)) }
    (if (PathCodec.isAbsolute(path)) rel else new Path(tablePath, rel)).toString
  }

  override def handleError(error: Throwable, version: Long): Unit =
    throw new PostCommitHookFailedException(name, version, error)
}
