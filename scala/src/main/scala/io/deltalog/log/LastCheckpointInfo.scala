package io.deltalog.log

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, JsonToken}
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

/**
 * The `_last_checkpoint` hint (digest §1.3). It is only a hint: readers must list the log anyway.
 *
 * @param version          checkpoint version
 * @param size             number of actions in the checkpoint (-1 when unknown)
 * @param parts            number of parts of a multi-part checkpoint
 * @param sizeInBytes      total bytes of the checkpoint files
 * @param numOfAddFiles    number of `add` actions
 * @param checkpointSchema the checkpoint's Spark schema, kept as raw JSON
 * @param checksum         the stored checksum (as read; recomputed on write)
 * @param v2Checkpoint     delta-spark's V2 extension object, kept as raw JSON
 * @param tags             spec-defined string map (delta-spark never writes it)
 */
final case class LastCheckpointInfo(
    version: Long,
    size: Long,
    parts: Option[Int] = None,
    sizeInBytes: Option[Long] = None,
    numOfAddFiles: Option[Long] = None,
    checkpointSchema: Option[JsonNode] = None,
    checksum: Option[String] = None,
    v2Checkpoint: Option[JsonNode] = None,
    tags: Option[Map[String, String]] = None) {

  /** File name of the V2 (UUID-named) checkpoint, when `v2Checkpoint.path` is present. */
  def v2CheckpointFileName: Option[String] =
    v2Checkpoint.flatMap(n => Option(n.get("path"))).filter(_.isTextual).map(_.asText())
}

object LastCheckpointInfo {
  private val log = LoggerFactory.getLogger(classOf[LastCheckpointInfo])
  // Built on first use: only files with nested fields, and writers, need Jackson's tree mapper.
  private lazy val mapper = new ObjectMapper()
  private val jsonFactory: JsonFactory =
    new JsonFactory().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)

  val ChecksumKey = "checksum"

  // ---------------------------------------------------------------------------------------------
  // Read / write

  /**
   * Reads `<logPath>/_last_checkpoint`. Returns `None` (with a logged warning, except for a plain
   * missing file) when the file is missing, empty, not a JSON object, has duplicate keys, lacks
   * an integral `version` / `size`, or its checksum matches neither accepted canonical order.
   */
  def read(fs: FileSystem, logPath: Path): Option[LastCheckpointInfo] =
    read(LogStore(fs), logPath)

  def read(logStore: LogStore, logPath: Path): Option[LastCheckpointInfo] = {
    val file = FileNames.lastCheckpointFile(logPath)
    val text =
      try Some(logStore.readAll(file))
      catch {
        case _: FileNotFoundException => None
        case NonFatal(e) =>
          log.warn(s"Ignoring unreadable $file: ${e.getMessage}")
          None
      }
    text.flatMap { t =>
      fromJson(t) match {
        case Right(info) => Some(info)
        case Left(reason) =>
          log.warn(s"Ignoring $file ($reason); the log will be listed to find the latest checkpoint")
          None
      }
    }
  }

  /**
   * Writes `<logPath>/_last_checkpoint` (replacing it) in delta-spark's field order with
   * delta-spark's checksum. Call only after every file of the checkpoint exists.
   */
  def write(logStore: LogStore, logPath: Path, info: LastCheckpointInfo): Unit = {
    val bytes = toJson(info).getBytes(StandardCharsets.UTF_8)
    logStore.writeAtomically(FileNames.lastCheckpointFile(logPath), overwrite = true)(_.write(bytes))
  }

  /**
   * One-line JSON: `version, size, parts, sizeInBytes, numOfAddFiles, checkpointSchema,
   * v2Checkpoint, tags, checksum` (absent options omitted). The stored `checksum` of `info` is
   * ignored; with `withChecksum` a fresh one is computed in delta-spark's order.
   */
  def toJson(info: LastCheckpointInfo, withChecksum: Boolean = true): String = {
    val f = JsonNodeFactory.instance
    val root = f.objectNode()
    root.put("version", info.version)
    root.put("size", info.size)
    info.parts.foreach(p => root.put("parts", p))
    info.sizeInBytes.foreach(s => root.put("sizeInBytes", s))
    info.numOfAddFiles.foreach(n => root.put("numOfAddFiles", n))
    info.checkpointSchema.foreach(s => root.set[JsonNode]("checkpointSchema", s))
    info.v2Checkpoint.foreach(v => root.set[JsonNode]("v2Checkpoint", v))
    info.tags.foreach { t =>
      val tn = root.putObject("tags")
      t.toSeq.sortBy(_._1).foreach { case (k, v) => tn.put(k, v) }
    }
    if (withChecksum) {
      val body = mapper.writeValueAsString(root)
      root.put(ChecksumKey, Checksum.compute(body, Checksum.SparkOrder))
    }
    mapper.writeValueAsString(root)
  }

  /**
   * Parses and validates `_last_checkpoint` content; `Left(reason)` when it must be ignored.
   *
   * The top-level fields are read with Jackson's streaming parser (which rejects duplicate keys):
   * only the nested `checkpointSchema`, `v2Checkpoint` and `tags` become trees. Building Jackson's
   * tree mapper for the whole file took most of the ~12 ms this read cost in a fresh driver.
   */
  def fromJson(text: String): Either[String, LastCheckpointInfo] = {
    if (text.trim.isEmpty) return Left("empty file")
    // A top-level field: an integral number (Right(Some)), null (Right(None)) or anything else
    // (Left(its JSON text)). Absent: not in the map.
    val numbers = scala.collection.mutable.HashMap.empty[String, Either[String, Option[Long]]]
    val trees = scala.collection.mutable.HashMap.empty[String, JsonNode]
    var checksum: Option[Either[String, String]] = None // Right(text), Left(JSON of a non-string)
    try {
      val p = jsonFactory.createParser(text)
      try {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          p.skipChildren()
          if (p.nextToken() != null) return Left("trailing content after the JSON value")
          return Left("not a JSON object")
        }
        var t = p.nextToken()
        while (t != JsonToken.END_OBJECT) {
          val name = p.currentName()
          val v = p.nextToken()
          name match {
            case "version" | "size" | "parts" | "sizeInBytes" | "numOfAddFiles" =>
              numbers(name) = v match {
                case JsonToken.VALUE_NULL => Right(None)
                case JsonToken.VALUE_NUMBER_INT if p.getNumberType != JsonParser.NumberType.BIG_INTEGER =>
                  Right(Some(p.getLongValue))
                case JsonToken.VALUE_STRING => Left("\"" + p.getText + "\"")
                case JsonToken.START_OBJECT | JsonToken.START_ARRAY => Left(mapper.readTree[JsonNode](p).toString)
                case _ => Left(p.getText)
              }
            case ChecksumKey =>
              checksum = v match {
                case JsonToken.VALUE_NULL => None
                case JsonToken.VALUE_STRING => Some(Right(p.getText))
                case _ => p.skipChildren(); Some(Left("not a string"))
              }
            case "checkpointSchema" | "v2Checkpoint" | "tags" => trees(name) = mapper.readTree[JsonNode](p)
            case _ => p.skipChildren()
          }
          t = p.nextToken()
        }
        if (p.nextToken() != null) return Left("trailing content after the JSON object")
      } finally p.close()
    } catch { case NonFatal(e) => return Left(s"not valid JSON: ${e.getMessage}") }

    checksum match {
      case Some(Left(_)) => return Left("field 'checksum' is not a string")
      case Some(Right(expected)) =>
        val candidates = Checksum.candidates(text)
        if (!candidates.contains(expected)) {
          return Left(s"checksum mismatch: stored $expected, computed ${candidates.mkString(" / ")}")
        }
      case None => // old writer: nothing to validate
    }

    def integral(name: String): Either[String, Option[Long]] = numbers.get(name) match {
      case None => Right(None)
      case Some(Left(json)) => Left(s"field '$name' is not an integer: $json")
      case Some(ok) => ok
    }
    def tree(name: String): Option[JsonNode] = trees.get(name).filterNot(_.isNull)

    for {
      version <- integral("version").flatMap(_.toRight("missing field 'version'"))
      _ <- if (version >= 0) Right(()) else Left(s"negative version $version")
      size <- integral("size").flatMap(_.toRight("missing field 'size'"))
      parts <- integral("parts")
      _ <- if (parts.forall(p => p >= 1 && p <= Int.MaxValue)) Right(()) else Left(s"invalid parts $parts")
      sizeInBytes <- integral("sizeInBytes")
      numOfAddFiles <- integral("numOfAddFiles")
    } yield {
      val tags = tree("tags").filter(_.isObject).map { t =>
        t.fields().asScala.map(e => e.getKey -> (if (e.getValue.isNull) null else e.getValue.asText())).toMap
      }
      LastCheckpointInfo(
        version = version,
        size = size,
        parts = parts.map(_.toInt),
        sizeInBytes = sizeInBytes,
        numOfAddFiles = numOfAddFiles,
        checkpointSchema = tree("checkpointSchema"),
        checksum = checksum.flatMap(_.toOption),
        v2Checkpoint = tree("v2Checkpoint"),
        tags = tags)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Checksum (spec "JSON checksum")

  /**
   * Canonical form and MD5 of a JSON object per the spec's "JSON checksum" rules. Two orders
   * exist (digest §1.3 [SPEC≠CODE]): the spec sorts pairs by path; delta-spark sorts whole
   * `path=value` strings. They differ only when an array has ≥ 11 elements.
   */
  object Checksum {
    sealed trait Order
    /** Sort by path bytes (PROTOCOL.md). */
    case object SpecOrder extends Order
    /** Sort by the whole `path=value` string (delta-spark). */
    case object SparkOrder extends Order

    /** How number leaves are rendered: as written, or as Jackson's tree renders them (delta-spark). */
    sealed trait NumberText
    case object Verbatim extends NumberText
    case object JacksonTree extends NumberText

    /** `path=value` pairs of `json` (top-level object, top-level `checksum` dropped), unsorted. */
    def pairs(json: String, numbers: NumberText = Verbatim): Seq[(String, String)] = {
      val out = ArrayBuffer.empty[(String, String)]
      val p = jsonFactory.createParser(json)
      try {
        if (p.nextToken() != JsonToken.START_OBJECT) throw new IllegalArgumentException("not a JSON object")
        walkObject(p, Nil, out, numbers, topLevel = true)
      } finally p.close()
      out.toSeq
    }

    /** The canonicalised string in the given order. */
    def canonicalize(json: String, order: Order, numbers: NumberText = Verbatim): String = {
      // Canonical strings are ASCII (everything else is percent-encoded), so String order is
      // byte order.
      val ps = pairs(json, numbers)
      val sorted = order match {
        case SpecOrder => ps.sortBy(_._1).map { case (k, v) => s"$k=$v" }
        case SparkOrder => ps.map { case (k, v) => s"$k=$v" }.sorted
      }
      sorted.mkString(",")
    }

    /** MD5 (32 lowercase hex) of the canonical form. */
    def compute(json: String, order: Order, numbers: NumberText = Verbatim): String =
      md5Hex(canonicalize(json, order, numbers))

    /** Every checksum a reader accepts for `json`: both orders × both number renderings. */
    def candidates(json: String): Set[String] =
      (for {
        o <- Seq(SparkOrder, SpecOrder)
        n <- Seq(Verbatim, JacksonTree)
      } yield compute(json, o, n)).toSet

    private def walkObject(p: JsonParser, path: List[String], out: ArrayBuffer[(String, String)],
        numbers: NumberText, topLevel: Boolean): Unit = {
      var t = p.nextToken()
      while (t != JsonToken.END_OBJECT) {
        val name = p.currentName()
        val v = p.nextToken()
        if (topLevel && name == ChecksumKey) p.skipChildren()
        else walkValue(p, v, encode(name) :: path, out, numbers)
        t = p.nextToken()
      }
    }

    private def walkValue(p: JsonParser, t: JsonToken, path: List[String],
        out: ArrayBuffer[(String, String)], numbers: NumberText): Unit = t match {
      case JsonToken.START_OBJECT => walkObject(p, path, out, numbers, topLevel = false)
      case JsonToken.START_ARRAY =>
        var i = 0
        var e = p.nextToken()
        while (e != JsonToken.END_ARRAY) {
          walkValue(p, e, i.toString :: path, out, numbers)
          i += 1
          e = p.nextToken()
        }
      case JsonToken.VALUE_STRING => out += (render(path) -> encode(p.getText))
      case JsonToken.VALUE_NUMBER_INT =>
        val text = numbers match {
          case Verbatim => p.getText
          case JacksonTree => p.getNumberValue.toString
        }
        out += (render(path) -> text)
      case JsonToken.VALUE_NUMBER_FLOAT =>
        val text = numbers match {
          case Verbatim => p.getText
          case JacksonTree => java.lang.Double.toString(p.getDoubleValue)
        }
        out += (render(path) -> text)
      case JsonToken.VALUE_TRUE => out += (render(path) -> "true")
      case JsonToken.VALUE_FALSE => out += (render(path) -> "false")
      case JsonToken.VALUE_NULL => out += (render(path) -> "null")
      case other => throw new IllegalArgumentException(s"unexpected JSON token $other")
    }

    private def render(reversedPath: List[String]): String = reversedPath.reverse.mkString("+")

    private val hex = "0123456789ABCDEF"

    /** Quoted percent-encoding: every UTF-8 byte except `A-Za-z0-9-._~` as `%XX` (uppercase). */
    def encode(s: String): String = {
      val sb = new StringBuilder(s.length + 2)
      sb.append('"')
      s.getBytes(StandardCharsets.UTF_8).foreach { b =>
        val c = b & 0xff
        val unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '-' || c == '.' || c == '_' || c == '~'
        if (unreserved) sb.append(c.toChar)
        else sb.append('%').append(hex.charAt(c >> 4)).append(hex.charAt(c & 0xf))
      }
      sb.append('"').toString
    }

    def md5Hex(s: String): String = {
      val d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8))
      d.map(b => f"${b & 0xff}%02x").mkString
    }
  }

  /** Builds the object node for `info` (exposed for callers that embed it). */
  def toObjectNode(info: LastCheckpointInfo): ObjectNode =
    mapper.readTree(toJson(info)).asInstanceOf[ObjectNode]
}
