package io.deltalog.spark.read

import java.net.URI
import java.time.ZoneId
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.execution.datasources.{FileIndex, FileStatusWithMetadata, PartitionDirectory}
import org.apache.spark.sql.types.StructType

import io.deltalog.actions.{DeletionVectorDescriptor, PathCodec}
import io.deltalog.log.Snapshot
import io.deltalog.schema.{ColumnMapping, ColumnMappingMode, PartitionValues}

/**
 * Spark `FileIndex` over the live files of one pinned [[Snapshot]].
 *
 * `listFiles` prunes partitions by evaluating the partition filters on the typed partition values
 * of each distinct `partitionValues` map (parsed once per map), then drops files whose stats prove
 * that no row matches the data filters ([[DataSkipping]]). What was kept is recorded in
 * [[lastListing]] (and in [[DeltalogFileIndex.lastListingFor]] by table path); Spark's scan
 * reports the same count as "number of files read".
 *
 * A file with a deletion vector carries its descriptor in the `FileStatusWithMetadata` metadata
 * ([[DeltalogFileIndex.dvMetadata]]), which Spark hands to the reader as the file's constant metadata.
 */
class DeltalogFileIndex(
    spark: SparkSession,
    val snapshot: Snapshot,
    val tableSchema: StructType,
    override val partitionSchema: StructType,
    val columnMappingMode: ColumnMappingMode) extends FileIndex {

  import DeltalogFileIndex._

  val tablePath: Path = snapshot.deltaLog.tablePath
  private val tableUri: URI = tablePath.toUri

  /** Keys of the partition columns in `add.partitionValues` (physical names under column mapping). */
  private val partitionKeys: Array[String] =
    partitionSchema.fields.map(f => ColumnMapping.partitionValueKey(tableSchema, f.name, columnMappingMode))

  @volatile private var last: ListingStats = _

  /** What the latest [[listFiles]] call on this index kept (null before the first call). */
  def lastListing: ListingStats = last

  override def rootPaths: Seq[Path] = Seq(tablePath)

  override def refresh(): Unit = () // the snapshot is pinned: a new read sees new versions

  override def sizeInBytes: Long = snapshot.sizeInBytes

  override def inputFiles: Array[String] = {
    val out = ArrayBuffer[String]()
    snapshot.state.foreachChunk { (chunk, deleted) =>
      var i = 0
      while (i < chunk.length) {
        if (deleted == null || !deleted.get(i)) out += absolutePath(chunk.path(i)).toString
        i += 1
      }
    }
    out.toArray
  }

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] = {
    lazy val zone = ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
    val partitionPredicate = bindPartitionFilters(partitionFilters)
    val skipping = DataSkipping.compile(dataFilters, tableSchema, columnMappingMode)
    // Files whose writer may leave NaN out of float/double max bounds: skipped only by the checks
    // that do not need those bounds, and flagged so the Parquet reader pushes no filter on such columns.
    val trust = FloatBoundsTrust.of(spark, snapshot)
    val nanSafe = skipping.flatMap(_ => DataSkipping.compileNanSafe(dataFilters, tableSchema, columnMappingMode))
    val skippingNeedsTrust = skipping.isDefined && nanSafe != skipping && trust != FloatBoundsTrust.Trusted
    val pushdownNeedsTrust = trust != FloatBoundsTrust.Trusted && FloatBoundsTrust.referencesFloating(dataFilters)
    lazy val blind = trust.nanBlindFiles(snapshot)
    // per distinct partition-values map (interned maps are shared objects): parsed row and verdict
    val byIdentity = new java.util.IdentityHashMap[Map[String, String], PartitionSlot]()
    val byValue = new java.util.HashMap[Map[String, String], PartitionSlot]()
    val slots = ArrayBuffer[PartitionSlot]()
    // unpartitioned: one slot for every file, no per-file lookup
    val single: PartitionSlot =
      if (partitionSchema.nonEmpty) null
      else {
        val slot = new PartitionSlot(InternalRow.empty, partitionPredicate.forall(_.eval(InternalRow.empty)))
        slots += slot
        slot
      }
    var total = 0L
    var afterPruning = 0L
    var afterSkipping = 0L
    snapshot.state.foreachChunk { (chunk, deleted) =>
      // verdicts on the chunk's cached columnar stats (parsed once per chunk and column)
      val kept = skipping.map(DataSkipping.keptRows(_, chunk)).orNull
      val cached = ChunkStats.of(chunk)
      val n = chunk.length
      def isBlind(i: Int): Boolean = (blind eq io.deltalog.log.NanBlindFiles.All) || blind.contains(chunk.path(i))
      if (skippingNeedsTrust) {
        // rows only the float/double max bounds dropped: kept back when their writer is NaN-blind
        val back = new java.util.BitSet(n)
        back.set(0, n)
        nanSafe.foreach(c => back.and(DataSkipping.keptRows(c, chunk)))
        back.andNot(kept)
        if (!back.isEmpty && !blind.isEmpty) {
          var i = back.nextSetBit(0)
          while (i >= 0 && i < n) { if (isBlind(i)) kept.set(i); i = back.nextSetBit(i + 1) }
        }
      }
      val flagBlind = pushdownNeedsTrust && !blind.isEmpty
      def add(slot: PartitionSlot, i: Int): Unit = {
        afterSkipping += 1
        val status = cached.fileStatus(tableUri, i)
        slot.files += (if (flagBlind && isBlind(i)) FloatBoundsTrust.flagged(status) else status)
      }
      if (single != null) {
        // unpartitioned: count the live rows, visit only the kept ones
        val live = if (deleted == null) n else n - deleted.get(0, n).cardinality()
        total += live
        if (single.selected) {
          afterPruning += live
          if (kept == null) {
            var i = 0
            while (i < n) { if (deleted == null || !deleted.get(i)) add(single, i); i += 1 }
          } else {
            var i = kept.nextSetBit(0)
            while (i >= 0 && i < n) {
              if (deleted == null || !deleted.get(i)) add(single, i)
              i = kept.nextSetBit(i + 1)
            }
          }
        }
      } else {
        var i = 0
        while (i < n) {
          if (deleted == null || !deleted.get(i)) {
            total += 1
            val pv = chunk.partitionValuesAt(i)
            var slot = byIdentity.get(pv)
            if (slot == null) {
              slot = byValue.get(pv)
              if (slot == null) {
                val row = PartitionValues.parseRow(pv, partitionSchema, partitionKeys, zone)
                slot = new PartitionSlot(row, partitionPredicate.forall(_.eval(row)))
                byValue.put(pv, slot)
                slots += slot
              }
              byIdentity.put(pv, slot)
            }
            if (slot.selected) {
              afterPruning += 1
              if (kept == null || kept.get(i)) add(slot, i)
            }
          }
          i += 1
        }
      }
    }
    val stats = new ListingStats(tablePath.toString, snapshot.version, total, afterPruning, afterSkipping,
      partitionFilters, dataFilters)
    last = stats
    listings.put(tablePath.toString, stats)
    if (partitionSchema.isEmpty) Seq(PartitionDirectory(InternalRow.empty, slots.flatMap(_.files).toSeq))
    else slots.iterator.filter(_.files.nonEmpty).map(s => PartitionDirectory(s.row, s.files.toSeq)).toSeq
  }

  /** The partition filters as one predicate over a partition-values row; None when there are none. */
  private def bindPartitionFilters(filters: Seq[Expression]): Option[BasePredicate] =
    DeltalogFileIndex.bindPartitionFilters(filters, partitionSchema)

  /** Hadoop path of an `add.path` (URI-encoded, relative to the table root or absolute). */
  def absolutePath(path: String): Path = DeltalogFileIndex.resolvePath(tableUri, path)

  override def toString: String = s"DeltalogFileIndex($tablePath@v${snapshot.version})"
}

object DeltalogFileIndex {
  /**
   * Prefixes of deletion-vector descriptors in a file's constant metadata: [[DeletedRows]] (the
   * file's DV: its rows are dropped) and [[OnlyRows]] (change data feed: only these rows are read).
   */
  val DeletedRows = "deltalog_dv_"
  val OnlyRows = "deltalog_dv_only_"

  /** `dv` as constant file metadata under `prefix` (plain values: serializable, no JSON). */
  def dvMetadata(dv: DeletionVectorDescriptor, prefix: String = DeletedRows): Map[String, Any] = Map(
    prefix + "storage_type" -> dv.storageType,
    prefix + "path_or_inline" -> dv.pathOrInlineDv,
    prefix + "offset" -> dv.offset.map(Int.box).orNull,
    prefix + "size" -> dv.sizeInBytes,
    prefix + "cardinality" -> dv.cardinality)

  /** The descriptor stored by [[dvMetadata]] under `prefix`, if any. */
  def dvFromMetadata(m: Map[String, Any], prefix: String = DeletedRows): Option[DeletionVectorDescriptor] =
    m.get(prefix + "storage_type").map { st =>
      DeletionVectorDescriptor(
        storageType = st.toString,
        pathOrInlineDv = m(prefix + "path_or_inline").toString,
        offset = Option(m.getOrElse(prefix + "offset", null)).map(_.asInstanceOf[Int]),
        sizeInBytes = m(prefix + "size").asInstanceOf[Int],
        cardinality = m(prefix + "cardinality").asInstanceOf[Long])
    }

  /**
   * `filters` bound to a row of `partitionSchema` values. Spark does not re-apply partition
   * filters to the scanned rows, so a filter that cannot be bound is an error, never ignored.
   */
  def bindPartitionFilters(filters: Seq[Expression], partitionSchema: StructType): Option[BasePredicate] =
    filters.reduceOption(And).map { e =>
      val bound = e.transform {
        case a: AttributeReference =>
          val i = partitionSchema.fields.indexWhere(_.name.equalsIgnoreCase(a.name))
          if (i < 0) throw new IllegalStateException(s"partition filter $e refers to ${a.name}, not a partition column")
          BoundReference(i, partitionSchema(i).dataType, nullable = true)
      }
      val p = Predicate.createInterpreted(bound)
      p.initialize(0)
      p
    }

  /** A data file as Spark's scan input: its deletion vector, if any, as constant metadata. */
  def fileStatus(path: Path, size: Long, mtime: Long, dv: DeletionVectorDescriptor): FileStatusWithMetadata = {
    val status = new FileStatus(size, false, 0, 1, mtime, path)
    FileStatusWithMetadata(status, if (dv == null) Map.empty else dvMetadata(dv))
  }

  /** Hadoop path of an action path (URI-encoded, relative to `tableUri` or absolute). */
  def resolvePath(tableUri: URI, path: String): Path =
    if (PathCodec.isAbsolute(path)) new Path(new URI(path))
    else {
      val decoded = PathCodec.decodePath(path)
      val base = tableUri.getPath
      val full = if (base.endsWith("/")) base + decoded else base + "/" + decoded
      new Path(new URI(tableUri.getScheme, tableUri.getAuthority, full, null, null))
    }

  private final class PartitionSlot(val row: InternalRow, val selected: Boolean) {
    val files = ArrayBuffer[FileStatusWithMetadata]()
  }

  private val listings = new ConcurrentHashMap[String, ListingStats]()

  /** The latest listing of the table at qualified path `tablePath` in this JVM (tests, py4j), or null. */
  def lastListingFor(tablePath: String): ListingStats = {
    val exact = listings.get(tablePath)
    if (exact != null) exact
    else listings.get(io.deltalog.log.DeltaLog.qualify(tablePath, new org.apache.hadoop.conf.Configuration()).toString)
  }
}
