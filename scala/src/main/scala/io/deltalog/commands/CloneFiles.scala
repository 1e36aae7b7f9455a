package io.deltalog.commands

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.actions.{AddFile, DeletionVectorDescriptor, PathCodec, Z85}
import io.deltalog.log.DeltaLog

/**
 * The target's files of a CLONE: the source's `add`s as the target names them, how many data files
 * and bytes were copied (DEEP) and the copied paths (relative to the target root, decoded), which a
 * failed commit deletes.
 */
private[commands] final case class PlacedFiles(files: Vector[AddFile], copiedFiles: Long, copiedBytes: Long,
    copied: Seq[String]) {
  def deleteCopies(conf: Configuration, root: Path): Unit = copied.foreach { rel =>
    try root.getFileSystem(conf).delete(new Path(root, rel), false) catch { case NonFatal(_) => () }
  }
}

/** Where CLONE's files go: SHALLOW names the source's files by absolute URI, DEEP copies them. */
private[commands] object CloneFiles {

  /**
   * The source table's root, qualified (`file:/…`, `s3a://…`) and printed as Hadoop prints paths (an
   * empty authority dropped: `file:/t`, not `file:///t`, which is what delta-spark writes).
   */
  private def qualifiedRoot(log: DeltaLog): Path = {
    val u = log.fs.makeQualified(log.tablePath).toUri
    new Path(new java.net.URI(u.getScheme, Option(u.getAuthority).filter(_.nonEmpty).orNull, u.getPath, null, null))
  }

  /** A file's location (its `path` is a URI string, relative to `root` or absolute). */
  private def location(root: Path, path: String): Path = {
    val p = try new Path(new java.net.URI(path)) catch { case NonFatal(_) => new Path(PathCodec.decodePath(path)) }
    if (PathCodec.isAbsolute(path)) p else new Path(root, p)
  }

  /**
   * SHALLOW: every path absolute (the source root's URI + the relative path, as delta-spark's
   * `toUri.toString`), every `u` deletion vector turned into a `p` one naming the same file.
   */
  def shallow(source: DeltaLog, files: Vector[AddFile]): PlacedFiles = {
    val root = qualifiedRoot(source)
    val rootUri = root.toUri.toString
    PlacedFiles(files.map { f =>
      val path = if (PathCodec.isAbsolute(f.path)) f.path else location(root, f.path).toUri.toString
      f.copy(path = path, deletionVector = f.deletionVector.map(absoluteDv(_, rootUri)))
    }, 0L, 0L, Nil)
  }

  private def absoluteDv(dv: DeletionVectorDescriptor, rootUri: String): DeletionVectorDescriptor =
    if (dv.storageType == DeletionVectorDescriptor.UuidFile) {
      dv.copy(storageType = DeletionVectorDescriptor.AbsolutePath, pathOrInlineDv = dv.absolutePath(rootUri))
    } else dv

  /**
   * DEEP: copies every data file (relative paths kept; a file named by absolute URI goes to the root
   * under its name) and every deletion-vector file the files use (each once; `u` files keep their
   * relative place, `p` files become `u` files at the root) into `targetRoot`, then returns the
   * `add`s naming the copies (relative paths; statistics, partition values, tags, DV offsets kept).
   */
  def deep(spark: ClassicSession, conf: Configuration, source: DeltaLog, targetRoot: Path,
      files: Vector[AddFile]): PlacedFiles = {
    val root = qualifiedRoot(source)
    val rootUri = root.toUri.toString
    val taken = scala.collection.mutable.HashSet.empty[String]
    def unique(rel: String, dv: Boolean): String = {
      var r = rel
      while (!taken.add(r)) {
        val slash = r.lastIndexOf('/')
        val dir = if (slash < 0) "" else r.substring(0, slash + 1)
        r = if (dv) s"${dir}deletion_vector_${UUID.randomUUID()}.bin"
          else s"${dir}clone-${UUID.randomUUID().toString.take(8)}-${rel.substring(rel.lastIndexOf('/') + 1)}"
      }
      r
    }
    val dataCopies = files.map { f =>
      val src = location(root, f.path)
      val rel = if (PathCodec.isAbsolute(f.path)) src.getName else PathCodec.decodePath(f.path)
      CloneCopy(src.toUri.toString, unique(rel, dv = false), isDeletionVector = false)
    }
    // Each deletion-vector file once: its source URI → its place in the target.
    val dvSources = files.flatMap(_.deletionVector).filter(_.isOnDisk).map(d => d.absolutePath(rootUri)).distinct
    val dvCopies = dvSources.map { uri =>
      val rel = if (uri.startsWith(rootUri + "/")) PathCodec.decodePath(uri.substring(rootUri.length + 1))
        else s"deletion_vector_${UUID.randomUUID()}.bin"
      CloneCopy(uri, unique(rel, dv = true), isDeletionVector = true)
    }
    val copied = CloneFileCopier.copyAll(spark, conf, targetRoot, dataCopies ++ dvCopies)
    val dataPaths = copied.take(dataCopies.size).map(_.relative)
    val dvPlace = dvSources.zip(copied.drop(dataCopies.size).map(_.relative)).toMap
    val adds = files.zip(dataPaths).map { case (f, rel) =>
      f.copy(path = PathCodec.encodePath(rel), deletionVector = f.deletionVector.map { d =>
        if (d.isInline) d else relativeDv(d, dvPlace(d.absolutePath(rootUri)))
      })
    }
    PlacedFiles(adds, files.size.toLong, files.map(_.size).sum, copied.map(_.relative))
  }

  /** A `u` descriptor for the DV file copied to `rel` (`[prefix/]deletion_vector_<uuid>.bin`). */
  private def relativeDv(d: DeletionVectorDescriptor, rel: String): DeletionVectorDescriptor = {
    val slash = rel.lastIndexOf('/')
    val prefix = if (slash < 0) "" else rel.substring(0, slash)
    val name = rel.substring(slash + 1)
    val uuid = UUID.fromString(name.stripPrefix("deletion_vector_").stripSuffix(".bin"))
    d.copy(storageType = DeletionVectorDescriptor.UuidFile, pathOrInlineDv = prefix + Z85.encodeUuid(uuid))
  }
}
