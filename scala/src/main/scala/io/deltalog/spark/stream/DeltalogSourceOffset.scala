package io.deltalog.spark.stream

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import org.apache.spark.sql.connector.read.streaming.{Offset => OffsetV2}
import org.apache.spark.sql.execution.streaming.Offset

import io.deltalog.exceptions.StreamingSourceException

/**
 * A position of the streaming source in a table, serialized as delta-spark's `DeltaSourceOffset`
 * (`sourceVersion` 3, `reservoirId` = the table id, `reservoirVersion`, `index`,
 * `isStartingVersion`).
 *
 * Every file the stream delivers has a position `(version, index)`: for the initial snapshot the
 * snapshot's version and the file's rank in the snapshot's deterministic order, for a commit its
 * version and the file's rank among the commit's actions. An offset means "every file up to and
 * including `(reservoirVersion, index)` was delivered"; [[DeltalogSourceOffset.BaseIndex]] means
 * nothing of `reservoirVersion` yet. `isInitialSnapshot` says the offset is inside the initial
 * snapshot of version `reservoirVersion` (its files, not its commit).
 */
final case class DeltalogSourceOffset(
    reservoirId: String,
    reservoirVersion: Long,
    index: Long,
    isInitialSnapshot: Boolean) extends Offset with Ordered[DeltalogSourceOffset] {

  override def json: String = {
    val node = DeltalogSourceOffset.mapper.createObjectNode()
    node.put("sourceVersion", DeltalogSourceOffset.SourceVersion)
    node.put("reservoirId", reservoirId)
    node.put("reservoirVersion", reservoirVersion)
    node.put("index", index)
    node.put("isStartingVersion", isInitialSnapshot)
    DeltalogSourceOffset.mapper.writeValueAsString(node)
  }

  override def compare(that: DeltalogSourceOffset): Int = {
    val v = java.lang.Long.compare(reservoirVersion, that.reservoirVersion)
    if (v != 0) v else java.lang.Long.compare(index, that.index)
  }

  /** True when `(version, index)` was delivered by this offset (same snapshot/commit numbering). */
  def covers(version: Long, idx: Long): Boolean =
    version < reservoirVersion || (version == reservoirVersion && idx <= index)
}

object DeltalogSourceOffset {
  private val mapper = new ObjectMapper()

  /** The offset format written (delta-spark's current one). */
  val SourceVersion = 3L

  /** "Nothing of this version delivered yet" (delta-spark's `BASE_INDEX`). */
  val BaseIndex: Long = -100L

  /** Version 1 offsets used -1 for [[BaseIndex]]. */
  private val BaseIndexV1 = -1L

  /** The offset `o` of table `tableId` (as Spark hands it back: ours or serialized JSON). */
  def apply(tableId: String, table: String, o: OffsetV2): DeltalogSourceOffset = o match {
    case d: DeltalogSourceOffset => check(d, tableId, table)
    case other => fromJson(tableId, table, other.json)
  }

  def fromJson(tableId: String, table: String, json: String): DeltalogSourceOffset = {
    def invalid(detail: String) = new StreamingSourceException("DELTA_INVALID_SOURCE_OFFSET_FORMAT",
      s"The stored source offset format is invalid ($detail) for the stream reading table $table: $json. " +
        "The checkpoint was not written by a Delta streaming source of this table; use a new checkpoint location.")
    val node: JsonNode = try mapper.readTree(json) catch {
      case e: com.fasterxml.jackson.core.JsonProcessingException => throw invalid(e.getOriginalMessage)
    }
    if (node == null || !node.isObject) throw invalid("not a JSON object")
    def field(name: String): JsonNode =
      Option(node.get(name)).filterNot(_.isNull).getOrElse(throw invalid(s"field $name is missing"))
    def long(name: String): Long = {
      val f = field(name)
      if (!f.isIntegralNumber) throw invalid(s"field $name is not an integer")
      f.asLong()
    }
    val sourceVersion = long("sourceVersion")
    if (sourceVersion < 1 || sourceVersion == 2) {
      throw new StreamingSourceException("DELTA_INVALID_SOURCE_VERSION",
        s"sourceVersion($sourceVersion) is invalid in the offset of the stream reading table $table.")
    }
    if (sourceVersion > SourceVersion) {
      throw new StreamingSourceException("DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION",
        s"The stream's checkpoint has a source offset of format version $sourceVersion; this client supports up " +
          s"to $SourceVersion (table $table). Upgrade the client or use a new checkpoint location.")
    }
    val rawIndex = long("index")
    val index = if (sourceVersion < 3 && rawIndex == BaseIndexV1) BaseIndex else rawIndex
    val start = field("isStartingVersion")
    if (!start.isBoolean) throw invalid("field isStartingVersion is not a boolean")
    val id = field("reservoirId").asText()
    check(DeltalogSourceOffset(id, long("reservoirVersion"), index, start.asBoolean()), tableId, table)
  }

  private def check(o: DeltalogSourceOffset, tableId: String, table: String): DeltalogSourceOffset = {
    if (o.reservoirId != tableId) {
      throw new StreamingSourceException("DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE",
        s"The streaming query was reading from an unexpected Delta table ($table, id = '$tableId'). It used to " +
          s"read from another Delta table (id = '${o.reservoirId}') according to checkpoint. This may happen when " +
          "you changed the code to read from a new table or you deleted and re-created a table. Please revert " +
          "your change or delete your streaming query checkpoint to restart from scratch.")
    }
    o
  }
}
