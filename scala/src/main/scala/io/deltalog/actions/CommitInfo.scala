package io.deltalog.actions

import scala.collection.immutable.VectorMap
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

/**
 * The `commitInfo` action: free-form provenance. The whole body is kept as is; the typed
 * accessors read it leniently and return None for an absent field, a JSON null, or a value of
 * the wrong type (commitInfo is never rejected for its content).
 *
 * @param body the JSON object under `commitInfo` (do not mutate it; use the `with*` methods)
 */
final case class CommitInfo(body: ObjectNode) extends Action {
  override def actionName: String = CommitInfo.ActionName

  override def toJsonNode: ObjectNode = body.deepCopy()

  /** Equal bodies, comparing numbers by value (so `1` read as int equals `1L` set as long). */
  override def equals(other: Any): Boolean = other match {
    case o: CommitInfo => (this eq o) || body.equals(CommitInfo.NumericComparator, o.body)
    case _ => false
  }

  override def hashCode(): Int = body.properties().asScala.map(_.getKey).toSet.hashCode()

  private def field(name: String): Option[JsonNode] = Option(body.get(name)).filterNot(_.isNull)

  /** A string field, None if absent, null or not a string. */
  def getString(name: String): Option[String] = field(name).filter(_.isTextual).map(_.textValue())

  /** An integral field that fits in a long, else None. */
  def getLong(name: String): Option[Long] =
    field(name).filter(v => v.isIntegralNumber && v.canConvertToLong).map(_.longValue())

  /** A boolean field, else None. */
  def getBoolean(name: String): Option[Boolean] = field(name).filter(_.isBoolean).map(_.booleanValue())

  /**
   * An object field as a string map. String values are returned as is, JSON null as `null`, and
   * any other value as its compact JSON text (some writers store numbers); None if not an object.
   */
  def getStringMap(name: String): Option[Map[String, String]] = field(name).filter(_.isObject).map { o =>
    val b = VectorMap.newBuilder[String, String]
    o.properties().asScala.foreach { e =>
      val v = e.getValue
      b += e.getKey -> (if (v.isTextual) v.textValue() else if (v.isNull) null else v.toString)
    }
    b.result()
  }

  /** Commit attempt wall-clock time (ms). */
  def timestamp: Option[Long] = getLong("timestamp")
  /** In-commit timestamp (ms), present when the ICT feature is enabled. */
  def inCommitTimestamp: Option[Long] = getLong("inCommitTimestamp")
  def userId: Option[String] = getString("userId")
  def userName: Option[String] = getString("userName")
  /** Operation name, e.g. "WRITE". */
  def operation: Option[String] = getString("operation")
  /** Operation parameters (values are JSON-encoded strings by delta-spark convention). */
  def operationParameters: Option[Map[String, String]] = getStringMap("operationParameters")
  def job: Option[Map[String, String]] = getStringMap("job")
  def notebook: Option[Map[String, String]] = getStringMap("notebook")
  def clusterId: Option[String] = getString("clusterId")
  /** Snapshot version the transaction read. */
  def readVersion: Option[Long] = getLong("readVersion")
  def isolationLevel: Option[String] = getString("isolationLevel")
  def isBlindAppend: Option[Boolean] = getBoolean("isBlindAppend")
  def dataChange: Option[Boolean] = getBoolean("dataChange")
  def operationMetrics: Option[Map[String, String]] = getStringMap("operationMetrics")
  def userMetadata: Option[String] = getString("userMetadata")
  def tags: Option[Map[String, String]] = getStringMap("tags")
  def engineInfo: Option[String] = getString("engineInfo")
  def txnId: Option[String] = getString("txnId")

  /** A copy with field `name` set to `value` (copied); existing fields keep their position. */
  def withField(name: String, value: JsonNode): CommitInfo = {
    val b = body.deepCopy()
    b.set[JsonNode](name, if (value == null) JsonNodeFactory.instance.nullNode() else value.deepCopy[JsonNode]())
    CommitInfo(b)
  }

  /** A copy without field `name`. */
  def without(name: String): CommitInfo = { val b = body.deepCopy(); b.remove(name); CommitInfo(b) }

  def withString(name: String, v: String): CommitInfo = withField(name, JsonNodeFactory.instance.textNode(v))
  def withLong(name: String, v: Long): CommitInfo = withField(name,
    if (v.isValidInt) JsonNodeFactory.instance.numberNode(v.toInt) else JsonNodeFactory.instance.numberNode(v))
  def withBoolean(name: String, v: Boolean): CommitInfo =
    withField(name, JsonNodeFactory.instance.booleanNode(v))
  def withStringMap(name: String, m: Map[String, String]): CommitInfo = withField(name, FieldWriter.mapNode(m))

  def withTimestamp(v: Long): CommitInfo = withLong("timestamp", v)
  def withInCommitTimestamp(v: Long): CommitInfo = withLong("inCommitTimestamp", v)
  def withOperation(v: String): CommitInfo = withString("operation", v)
  def withOperationParameters(m: Map[String, String]): CommitInfo = withStringMap("operationParameters", m)
  def withReadVersion(v: Long): CommitInfo = withLong("readVersion", v)
  def withIsolationLevel(v: String): CommitInfo = withString("isolationLevel", v)
  def withIsBlindAppend(v: Boolean): CommitInfo = withBoolean("isBlindAppend", v)
  def withOperationMetrics(m: Map[String, String]): CommitInfo = withStringMap("operationMetrics", m)
  def withUserMetadata(v: String): CommitInfo = withString("userMetadata", v)
  def withEngineInfo(v: String): CommitInfo = withString("engineInfo", v)
  def withTxnId(v: String): CommitInfo = withString("txnId", v)
  def withTags(m: Map[String, String]): CommitInfo = withStringMap("tags", m)
}

/** Construction and parsing for [[CommitInfo]]. */
object CommitInfo {
  /** Key of this action in a log line. */
  val ActionName: String = "commitInfo"

  /** Node comparator treating numbers of equal value as equal, whatever their node type. */
  private val NumericComparator: java.util.Comparator[JsonNode] = (a: JsonNode, b: JsonNode) =>
    if (a.isNumber && b.isNumber) a.decimalValue().compareTo(b.decimalValue())
    else if (a.equals(b)) 0
    else 1

  /** An empty commitInfo, to be filled with the `with*` methods. */
  def empty: CommitInfo = CommitInfo(JsonNodeFactory.instance.objectNode())

  /** A commitInfo with the usual delta-spark fields, in delta-spark's order. */
  def apply(
      timestamp: Long,
      operation: String,
      operationParameters: Map[String, String],
      readVersion: Option[Long],
      isolationLevel: Option[String],
      isBlindAppend: Option[Boolean],
      operationMetrics: Map[String, String],
      engineInfo: String,
      txnId: String): CommitInfo = {
    var c = empty.withTimestamp(timestamp).withOperation(operation).withOperationParameters(operationParameters)
    readVersion.foreach(v => c = c.withReadVersion(v))
    isolationLevel.foreach(v => c = c.withIsolationLevel(v))
    isBlindAppend.foreach(v => c = c.withIsBlindAppend(v))
    if (operationMetrics.nonEmpty) c = c.withOperationMetrics(operationMetrics)
    c.withEngineInfo(engineInfo).withTxnId(txnId)
  }

  private[actions] def read(body: ObjectNode): CommitInfo = CommitInfo(body)
}
