package io.deltalog.commands

import java.net.URI

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

/**
 * Where VACUUM may act: paths relative to one table root, never outside it.
 *
 * A path from the log (`add` / `remove` / `cdc` `path`, a deletion vector's file) is a URI string
 * relative to the root or absolute (protocol §2.11). [[relativeInside]] turns it into a normalized
 * relative path (`p=1/part-0.parquet`, `/`-separated, percent-decoded, no `.` or `..` segment) only
 * when it names something under the root: same scheme and authority (bucket, host) as the root,
 * and after resolving `.` / `..` (also percent-encoded ones, `%2E%2E%2F`) still below it. Anything
 * else (another scheme or bucket, `file:/elsewhere`, `/tmp/elsewhere`, `../x`, an opaque URI, a
 * string that is not a URI) is outside: VACUUM neither protects nor deletes it.
 *
 * [[protectedForms]] is the generous reading used to decide what to keep: the decoded form and,
 * when it differs, the string taken literally (a writer that forgot to percent-encode `a%20b`
 * meant the file `a%20b`). Keeping too much is safe; deleting never uses it.
 *
 * @param root the qualified table root (`file:/data/t`, `s3a://bucket/t`)
 */
final class VacuumPaths(root: Path) {
  private val rootUri: URI = root.toUri
  private val scheme: String = Option(rootUri.getScheme).getOrElse("")
  private val authority: String = Option(rootUri.getAuthority).getOrElse("")
  private val rootSegments: Vector[String] = VacuumPaths.normalize(Vector.empty, rootUri.getPath).getOrElse(Vector.empty)

  /** The normalized path of `path` relative to the root, or None when it is not strictly under the root. */
  def relativeInside(path: String): Option[String] = {
    val uri = try new URI(path) catch { case NonFatal(_) => return None }
    if (uri.isOpaque) return None
    if (uri.getScheme != null) {
      if (!uri.getScheme.equalsIgnoreCase(scheme)) return None
      if (Option(uri.getAuthority).getOrElse("") != authority) return None
    } else if (uri.getAuthority != null) return None
    val decoded = uri.getPath
    if (decoded == null || decoded.isEmpty) return None
    inside(decoded)
  }

  /** The relative paths `path` may mean (decoded URI, and the string taken literally), each under the root. */
  def protectedForms(path: String): Seq[String] = {
    val literal = if (path.contains(":") || path.startsWith("//")) None else inside(path)
    (relativeInside(path).toSeq ++ literal.toSeq).distinct
  }

  /** `decodedPath` (absolute, or relative to the root) normalized, when strictly under the root. */
  private def inside(decodedPath: String): Option[String] = {
    val absolute = decodedPath.startsWith("/")
    val segments = VacuumPaths.normalize(if (absolute) Vector.empty else rootSegments, decodedPath)
      .getOrElse(return None)
    if (segments.length <= rootSegments.length || segments.take(rootSegments.length) != rootSegments) None
    else Some(segments.drop(rootSegments.length).mkString("/"))
  }
}

object VacuumPaths {
  /** `base` followed by the segments of `path`, with `.` and empty segments dropped and `..` applied; None when `..` climbs above `/`. */
  private[commands] def normalize(base: Vector[String], path: String): Option[Vector[String]] = {
    var out = base
    path.split('/').foreach {
      case "" | "." =>
      case ".." => if (out.isEmpty) return None else out = out.init
      case s => out = out :+ s
    }
    Some(out)
  }

  /**
   * delta-spark's hidden-name rule (`DeltaTableUtils.isHiddenDirectory`), applied to every path
   * segment: names starting with `_` or `.` are hidden, except `_delta_index*`, `_change_data*`
   * and partition directories (`<partition column>=…`, also for columns whose name starts with
   * `_`); `metadata` is hidden on tables with Iceberg compatibility (UniForm keeps its metadata there).
   */
  def isHidden(name: String, partitionColumns: Seq[String], icebergMetadataHidden: Boolean): Boolean =
    (icebergMetadataHidden && name == "metadata") ||
      ((name.startsWith(".") || name.startsWith("_")) && !name.startsWith("_delta_index") &&
        !name.startsWith("_change_data") && !partitionColumns.exists(c => name.startsWith(c + "=")))

  /** The ancestor directories of a relative path (`a/b/c` → `a`, `a/b`). */
  def ancestors(relative: String): Iterator[String] = {
    var i = relative.indexOf('/')
    new Iterator[String] {
      def hasNext: Boolean = i >= 0
      def next(): String = {
        val r = relative.substring(0, i)
        i = relative.indexOf('/', i + 1)
        r
      }
    }
  }
}
