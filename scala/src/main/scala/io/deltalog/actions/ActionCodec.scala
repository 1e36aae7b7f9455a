package io.deltalog.actions

import com.fasterxml.jackson.core.JsonProcessingException
import com.fasterxml.jackson.core.StreamReadFeature
import com.fasterxml.jackson.databind.{DeserializationFeature, JsonNode, ObjectReader}
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature
import com.fasterxml.jackson.databind.node.ObjectNode

import io.deltalog.exceptions.{ActionParseException, DeltalogException}

/**
 * Reads and writes log lines (`{"<action>": {...}}`, one per line).
 *
 * Parsing is strict about what the protocol defines (required fields, JSON types, integer
 * ranges) and lossless about everything else: unknown fields, unknown action types and explicit
 * nulls survive a parse/serialize round trip. Errors are [[ActionParseException]]s naming the
 * file, the 1-based line number and the dotted field path (`"<line>"` for the line as a whole).
 */
object ActionCodec {
  /** Field name used in errors about the line as a whole (bad JSON, not one key, ...). */
  val LineField: String = "<line>"

  /**
   * Reader used for log lines: rejects trailing garbage and duplicate keys, and keeps non-integral
   * numbers exactly (BigDecimal, trailing zeros kept) so unknown fields round-trip unchanged.
   */
  val reader: ObjectReader = Action.mapper.reader()
    .`with`(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
    .`with`(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
    .`with`(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
    .without(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)

  /**
   * Parses one log line.
   *
   * @param line       the text of the line (a trailing `\r` is tolerated)
   * @param file       file name for error messages (null: "<memory>")
   * @param lineNumber 1-based line number for error messages
   * @return None for a blank line, else the action
   * @throws ActionParseException if the line is malformed
   */
  def parseLine(line: String, file: String = null, lineNumber: Int = 1): Option[Action] = {
    if (isBlank(line)) return None
    val tree: JsonNode =
      try reader.readTree(line)
      catch {
        case e: JsonProcessingException =>
          throw new ActionParseException(file, lineNumber, LineField,
            s"invalid JSON: ${e.getOriginalMessage}", e)
      }
    if (tree == null || !tree.isObject) {
      val what = if (tree == null) "nothing" else FieldReader.describe(tree)
      throw new ActionParseException(file, lineNumber, LineField, s"a log line must be a JSON object, found $what")
    }
    if (tree.size() != 1) {
      throw new ActionParseException(file, lineNumber, LineField,
        s"a log line must have exactly one top-level key (the action type), found ${tree.size()}")
    }
    val entry = tree.properties().iterator().next()
    try Some(parseAction(entry.getKey, entry.getValue))
    catch {
      case e: ActionParseException =>
        throw new ActionParseException(file, lineNumber, e.field, e.reason, e.getCause)
    }
  }

  /**
   * Parses the lines of one log file; blank lines are skipped and line numbers start at 1.
   *
   * @throws ActionParseException on the first malformed line
   */
  def parseLines(lines: IterableOnce[String], file: String = null): Seq[Action] = {
    val out = Vector.newBuilder[Action]
    var n = 0
    lines.iterator.foreach { line =>
      n += 1
      parseLine(line, file, n).foreach(out += _)
    }
    out.result()
  }

  /** Parses the whole text of a log file (lines separated by `\n` or `\r\n`). */
  def parseText(text: String, file: String = null): Seq[Action] =
    parseLines(text.split("\n", -1).iterator, file)

  /**
   * Builds the action for one top-level key and its body. Errors are [[ActionParseException]]s
   * without file and line (file = null, line 0), which [[parseLine]] fills in.
   */
  def parseAction(name: String, body: JsonNode): Action = name match {
    case AddFile.ActionName => AddFile.read(FieldReader.body(name, body))
    case RemoveFile.ActionName => RemoveFile.read(FieldReader.body(name, body))
    case Metadata.ActionName => Metadata.read(FieldReader.body(name, body))
    case "protocol" =>
      FieldReader.body(name, body) // same "must be an object" check as every other action
      parseProtocol(body)
    case CommitInfo.ActionName => CommitInfo.read(objectBody(name, body))
    case AddCDCFile.ActionName => AddCDCFile.read(FieldReader.body(name, body))
    case SetTransaction.ActionName => SetTransaction.read(FieldReader.body(name, body))
    case DomainMetadata.ActionName => DomainMetadata.read(FieldReader.body(name, body))
    case CheckpointMetadata.ActionName => CheckpointMetadata.read(FieldReader.body(name, body))
    case SidecarFile.ActionName => SidecarFile.read(FieldReader.body(name, body))
    case _ => UnknownAction(name, body)
  }

  private def objectBody(name: String, body: JsonNode): ObjectNode = body match {
    case o: ObjectNode => o
    case _ => throw new ActionParseException(null, 0, name,
      s"action body must be a JSON object but found ${FieldReader.describe(body)}")
  }

  /** The `protocol` action is defined in io.deltalog.protocol; its errors are ActionParseExceptions. */
  private def parseProtocol(body: JsonNode): Action =
    try io.deltalog.protocol.Protocol.fromJsonNode(body)
    catch {
      case e: ActionParseException => throw e
      case e: DeltalogException => throw e
      case e: IllegalArgumentException =>
        throw new ActionParseException(null, 0, "protocol", String.valueOf(e.getMessage), e)
    }

  /** One log line per action, each followed by `\n`. */
  def serialize(actions: Seq[Action]): String = {
    val sb = new java.lang.StringBuilder(actions.size * 256)
    actions.foreach(a => sb.append(a.json).append('\n'))
    sb.toString
  }

  private def isBlank(s: String): Boolean = {
    var i = 0
    while (i < s.length) {
      if (!Character.isWhitespace(s.charAt(i))) return false
      i += 1
    }
    true
  }
}
