package io.deltalog.spark.read

import java.net.URI
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicReferenceArray

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonParser, JsonToken}
import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{BigIntegerNode, IntNode, LongNode, TextNode}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata
import org.apache.spark.sql.types._

import io.deltalog.log.FileChunk

/**
 * The stats of one [[FileChunk]] as columns: `numRecords` per row plus, per referenced column,
 * min/max/nullCount arrays. Built lazily (first use of a column parses the chunk's stats strings
 * once with a streaming parser, keeping only the referenced columns) and cached per chunk, so the
 * snapshots sharing a chunk share its stats.
 *
 * The values are exactly what [[FileStats]] gives for the same string: leaves are converted by
 * [[FileStats.value]], a row whose stats are missing or not a JSON object is not [[valid]], and
 * repeated keys keep the last value (as a parsed tree does).
 */
final class ChunkStats private (chunk: FileChunk) {
  val length: Int = chunk.length

  /** Rows whose stats parsed to a JSON object; other rows are kept by every check. */
  val valid = new java.util.BitSet(length)

  /** The rows that are not [[valid]] (call after [[ensure]]). */
  lazy val invalid: java.util.BitSet = {
    val b = new java.util.BitSet(length)
    b.set(0, length)
    b.andNot(valid)
    b
  }
  /** `numRecords` per row; meaningful when [[hasNumRecords]]. */
  val numRecords = new Array[Long](length)
  val hasNumRecords = new Array[Boolean](length)

  private val columns = new ConcurrentHashMap[DataSkipping.Col, ColumnStats]()
  @volatile private var rowsParsed = false

  /** The stats of `col` (parsed on first use together with the other `wanted` columns). */
  def column(col: DataSkipping.Col, wanted: Seq[DataSkipping.Col]): ColumnStats = {
    val hit = columns.get(col)
    if (hit != null) hit
    else synchronized {
      val missing = (col +: wanted).distinct.filter(c => !columns.containsKey(c))
      if (missing.nonEmpty) parse(missing)
      columns.get(col)
    }
  }

  /** Makes sure `wanted` are parsed (one pass for all missing ones). */
  def ensure(wanted: Seq[DataSkipping.Col]): Unit =
    if (!rowsParsed || wanted.exists(c => !columns.containsKey(c))) synchronized {
      val missing = wanted.distinct.filter(c => !columns.containsKey(c))
      if (missing.nonEmpty || !rowsParsed) parse(missing)
    }

  private def parse(cols: Seq[DataSkipping.Col]): Unit = {
    val out = cols.map(c => new ColumnStats(length, c.dataType)).toArray
    val paths = cols.map(_.path.toArray).toArray
    val parser = new ChunkStatsParser(paths, out)
    val firstPass = !rowsParsed
    var i = 0
    while (i < length) {
      val ok = parser.parseRow(chunk.statsAt(i), i)
      if (firstPass) {
        if (ok) valid.set(i)
        numRecords(i) = parser.numRecords
        hasNumRecords(i) = parser.hasNumRecords
      }
      i += 1
    }
    cols.indices.foreach(k => columns.put(cols(k), out(k)))
    rowsParsed = true
  }

  /** True when the stats of row `i` prove that every row of the file is null in `c`. */
  @inline def allNull(c: ColumnStats, i: Int): Boolean =
    hasNumRecords(i) && c.hasNullCount(i) && c.nullCount(i) == numRecords(i)

  /** True when the stats of row `i` prove that no row of the file is null in `c`. */
  @inline def noNulls(c: ColumnStats, i: Int): Boolean = c.hasNullCount(i) && c.nullCount(i) == 0L

  /** The rows as scan input (filled on demand) and the table URI their paths were resolved under. */
  @volatile private var statuses: (URI, AtomicReferenceArray[FileStatusWithMetadata]) = _

  /**
   * Row `i` as a file of Spark's scan under `tableUri` ([[DeltalogFileIndex.fileStatus]]), built
   * once per chunk and table: repeated queries reuse it (nothing in it changes for a chunk row).
   */
  def fileStatus(tableUri: URI, i: Int): FileStatusWithMetadata = {
    var ss = statuses
    if (ss == null || ss._1 != tableUri) synchronized {
      if (statuses == null || statuses._1 != tableUri) {
        statuses = (tableUri, new AtomicReferenceArray[FileStatusWithMetadata](length))
      }
      ss = statuses
    }
    var f = ss._2.get(i)
    if (f == null) {
      f = DeltalogFileIndex.fileStatus(DeltalogFileIndex.resolvePath(tableUri, chunk.path(i)), chunk.size(i),
        chunk.modificationTime(i), chunk.deletionVectorAt(i))
      ss._2.set(i, f)
    }
    f
  }
}

object ChunkStats {
  /**
   * The columnar stats of `chunk`, kept with the chunk itself ([[FileChunk.memoized]]): they go
   * when the chunk goes. (A global weak map keyed by chunk kept every chunk alive, since the stats
   * refer back to their chunk.)
   */
  def of(chunk: FileChunk): ChunkStats = chunk.memoized(ChunkStats)(new ChunkStats(chunk))

  /** True for types whose stats are kept as longs (they order like their long value). */
  def isLongLike(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }
}

/**
 * min/max/nullCount of one column over the rows of a chunk. Long-like types
 * ([[ChunkStats.isLongLike]]) keep their bounds in `long` arrays, other types as Catalyst values.
 */
final class ColumnStats private[read] (n: Int, val dataType: DataType) {
  val longLike: Boolean = ChunkStats.isLongLike(dataType)
  val hasMin = new Array[Boolean](n)
  val hasMax = new Array[Boolean](n)
  val minL: Array[Long] = if (longLike) new Array[Long](n) else null
  val maxL: Array[Long] = if (longLike) new Array[Long](n) else null
  val minA: Array[Any] = if (longLike) null else new Array[Any](n)
  val maxA: Array[Any] = if (longLike) null else new Array[Any](n)
  val nullCount = new Array[Long](n)
  val hasNullCount = new Array[Boolean](n)

  lazy val ordering: Ordering[Any] = TypeUtils.getInterpretedOrdering(dataType)

  @volatile private var byMin: SortedBounds = _
  @volatile private var byMax: SortedBounds = _

  /** Long-like only: the `valid` rows ordered by lower bound (built on first use). */
  def sortedByMin(valid: java.util.BitSet): SortedBounds = {
    var b = byMin
    if (b == null) synchronized { if (byMin == null) byMin = SortedBounds(minL, hasMin, valid); b = byMin }
    b
  }

  /** Long-like only: the `valid` rows ordered by upper bound (built on first use). */
  def sortedByMax(valid: java.util.BitSet): SortedBounds = {
    var b = byMax
    if (b == null) synchronized { if (byMax == null) byMax = SortedBounds(maxL, hasMax, valid); b = byMax }
    b
  }

  /** The lower bound of row `i` as a Catalyst value (call only when `hasMin(i)`). */
  def min(i: Int): Any = if (longLike) box(minL(i)) else minA(i)
  /** The upper bound of row `i` as a Catalyst value (call only when `hasMax(i)`). */
  def max(i: Int): Any = if (longLike) box(maxL(i)) else maxA(i)

  private def box(v: Long): Any = dataType match {
    case ByteType => v.toByte
    case ShortType => v.toShort
    case IntegerType | DateType => v.toInt
    case _ => v
  }

  private[read] def set(i: Int, isMax: Boolean, v: Any): Unit = {
    if (longLike) {
      val l = v match {
        case b: java.lang.Byte => b.longValue()
        case s: java.lang.Short => s.longValue()
        case x: java.lang.Integer => x.longValue()
        case x: java.lang.Long => x.longValue()
      }
      if (isMax) maxL(i) = l else minL(i) = l
    } else if (isMax) maxA(i) = v else minA(i) = v
    if (isMax) hasMax(i) = true else hasMin(i) = true
  }

  private[read] def clear(i: Int, section: Int): Unit = section match {
    case ChunkStatsParser.Min => hasMin(i) = false; if (!longLike) minA(i) = null
    case ChunkStatsParser.Max => hasMax(i) = false; if (!longLike) maxA(i) = null
    case _ => hasNullCount(i) = false
  }
}

/**
 * Streaming parser of stats strings that fills [[ColumnStats]] for a fixed set of column paths.
 * Every row's string is tokenized to its end (so malformed JSON makes the row invalid, as with a
 * parsed tree); only the wanted leaves are converted.
 */
private[read] final class ChunkStatsParser(paths: Array[Array[String]], out: Array[ColumnStats]) {
  import ChunkStatsParser._

  var numRecords: Long = 0L
  var hasNumRecords: Boolean = false
  private val all: Array[Int] = paths.indices.toArray
  private val factory = FileStats.mapper.getFactory

  /** Parses the stats of row `i`; false when they are missing or not a JSON object. */
  def parseRow(json: String, i: Int): Boolean = {
    hasNumRecords = false
    numRecords = 0L
    var k = 0
    while (k < out.length) { out(k).clear(i, Min); out(k).clear(i, Max); out(k).clear(i, Nulls); k += 1 }
    if (json == null || json.isEmpty) return false
    var p: JsonParser = null
    try {
      p = factory.createParser(json)
      if (p.nextToken() != JsonToken.START_OBJECT) return false
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        val name = p.currentName()
        val t = p.nextToken()
        name match {
          case "numRecords" =>
            hasNumRecords = false
            if (t == JsonToken.VALUE_NUMBER_INT) {
              val n = intNode(p)
              if (n.canConvertToLong) { numRecords = n.longValue(); hasNumRecords = true }
            } else if (t.isStructStart) p.skipChildren()
          case "minValues" => section(p, t, i, Min)
          case "maxValues" => section(p, t, i, Max)
          case "nullCount" => section(p, t, i, Nulls)
          case _ => if (t.isStructStart) p.skipChildren()
        }
      }
      true
    } catch {
      case NonFatal(_) => false
    } finally if (p != null) p.close()
  }

  private def section(p: JsonParser, t: JsonToken, i: Int, s: Int): Unit = {
    var k = 0
    while (k < out.length) { out(k).clear(i, s); k += 1 }
    if (t == JsonToken.START_OBJECT) obj(p, all, 0, i, s)
    else if (t.isStructStart) p.skipChildren()
  }

  /** Walks the object at the current START_OBJECT; `cands` are the columns whose path matches so far. */
  private def obj(p: JsonParser, cands: Array[Int], depth: Int, i: Int, s: Int): Unit = {
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      val name = p.currentName()
      val t = p.nextToken()
      val here = cands.filter(c => paths(c)(depth) == name)
      if (here.isEmpty) { if (t.isStructStart) p.skipChildren() }
      else {
        // a repeated key replaces what an earlier occurrence gave
        here.foreach(c => out(c).clear(i, s))
        val leaves = here.filter(c => paths(c).length == depth + 1)
        val deeper = here.filter(c => paths(c).length > depth + 1)
        if (t == JsonToken.START_OBJECT) {
          if (deeper.nonEmpty) obj(p, deeper, depth + 1, i, s) else p.skipChildren()
        } else if (t.isStructStart) p.skipChildren()
        else if (leaves.nonEmpty) {
          val node = leaf(p, t)
          if (node != null) leaves.foreach { c =>
            val col = out(c)
            if (s == Nulls) {
              if (node.isIntegralNumber && node.canConvertToLong) { col.nullCount(i) = node.longValue(); col.hasNullCount(i) = true }
            } else FileStats.value(node, col.dataType, isMax = s == Max).foreach(v => col.set(i, s == Max, v))
          }
        }
      }
    }
  }

  /** The scalar at the current token as the node a parsed tree would hold (null: no usable value). */
  private def leaf(p: JsonParser, t: JsonToken): JsonNode = t match {
    case JsonToken.VALUE_NUMBER_INT => intNode(p)
    case JsonToken.VALUE_STRING => TextNode.valueOf(p.getText)
    case JsonToken.VALUE_NUMBER_FLOAT => io.deltalog.actions.ExactJson.floatNode(p)  // decimal bounds exact
    case _ => null // null, true, false: never a bound or a count
  }

  private def intNode(p: JsonParser): JsonNode = p.getNumberType match {
    case JsonParser.NumberType.INT => IntNode.valueOf(p.getIntValue)
    case JsonParser.NumberType.LONG => LongNode.valueOf(p.getLongValue)
    case _ => BigIntegerNode.valueOf(p.getBigIntegerValue)
  }
}

private[read] object ChunkStatsParser {
  final val Min = 0
  final val Max = 1
  final val Nulls = 2
}

/**
 * The valid rows of a chunk that have a bound, ordered by it (`values(k)` is the bound of row
 * `rows(k)`), and the valid rows without one (`missing`): a range of bounds is then a binary search.
 */
final class SortedBounds private (val values: Array[Long], val rows: Array[Int], val missing: Array[Int]) {
  /** First position whose value is `>= x` (`strict`: `> x`). */
  def lowerBound(x: Long, strict: Boolean): Int = {
    var lo = 0
    var hi = values.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      val v = values(mid)
      if (v < x || (strict && v == x)) lo = mid + 1 else hi = mid
    }
    lo
  }
}

object SortedBounds {
  def apply(bounds: Array[Long], has: Array[Boolean], valid: java.util.BitSet): SortedBounds = {
    val n = bounds.length
    var withBound = 0
    var without = 0
    var i = valid.nextSetBit(0)
    while (i >= 0 && i < n) { if (has(i)) withBound += 1 else without += 1; i = valid.nextSetBit(i + 1) }
    // sort (bound, row) pairs packed as indices sorted by bound
    val idx = new Array[Int](withBound)
    val missing = new Array[Int](without)
    var a = 0
    var b = 0
    i = valid.nextSetBit(0)
    while (i >= 0 && i < n) {
      if (has(i)) { idx(a) = i; a += 1 } else { missing(b) = i; b += 1 }
      i = valid.nextSetBit(i + 1)
    }
    var sorted = true
    var k = 1
    while (sorted && k < idx.length) { sorted = bounds(idx(k - 1)) <= bounds(idx(k)); k += 1 }
    val rows =
      if (sorted) idx // files written in key order (sorted or clustered tables): no sort needed
      else {
        val boxed = idx.map(Int.box)
        java.util.Arrays.sort(boxed, (x: Integer, y: Integer) => java.lang.Long.compare(bounds(x), bounds(y)))
        boxed.map(_.intValue())
      }
    new SortedBounds(rows.map(bounds), rows, missing)
  }
}
