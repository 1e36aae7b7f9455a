package io.deltalog.log

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.{ISO_8859_1, UTF_8}

import scala.collection.immutable.VectorMap

import io.deltalog.actions.{AddFile, DeletionVectorDescriptor, RemoveFile}

/**
 * Parses `add` and `remove` log lines straight from their UTF-8 bytes, without a JSON library.
 *
 * It accepts only lines whose meaning is beyond doubt: one top-level `add` / `remove` key whose
 * body holds only fields the action models, each with its protocol type (strings, integers that
 * fit, booleans, string maps, a deletion-vector object), no explicit `null` (except partition
 * values), no duplicate key, no escape in a field name, strictly valid UTF-8 and standard JSON
 * syntax. For any other line it returns null (without side effects) and the caller parses it with
 * [[io.deltalog.actions.ActionCodec]], which then decides the result or the error. For every
 * line it accepts, the result equals the codec's.
 *
 * With `rows`, a plain `add` (see [[PlainAdds]]) is not built as an object: its decoded path and
 * stats are written over the line's own text in `in` (never longer), it becomes a row of `rows`
 * and the parser returns [[FileActionLineParser.PlainAdd]]. Without, every line it accepts is an
 * object and `in` is only read. One parser per file (single-threaded).
 *
 * @param in   the bytes of the file (written to only with `rows`)
 * @param rows receives plain adds (may be null)
 */
private[log] final class FileActionLineParser(in: Array[Byte], rows: PlainAddsBuilder) {
  import FileActionLineParser._

  private val inLongs = ByteBuffer.wrap(in).order(ByteOrder.LITTLE_ENDIAN)
  /** Decoded strings of the current line; `scratchLongs` views it. */
  private var scratch = new Array[Byte](1024)
  private var scratchLongs = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN)
  private var sp = 0

  private var lineStart = 0
  private var pos = 0
  private var end = 0
  /** Bytes of the last string read: `scratch(strOff until strOff + strLen)`. */
  private var strOff = 0
  private var strLen = 0
  /** The text of the last non-empty partition-values object (a copy) and its map: equal texts share it. */
  private var lastPvText: Array[Byte] = _
  private var lastPv: Map[String, String] = _
  /** Index of the last field name matched (in whichever name table). */
  private var lastField = -1

  /** After a successful [[parse]]: where the line ends (its `\n`, or the limit). */
  var lineEnd: Int = 0

  /**
   * Parses the line starting at `off` (it ends at the first `\n`, or at `limit`): an `AddFile` /
   * `RemoveFile`, [[FileActionLineParser.PlainAdd]] (a row was added to `rows`), or null (not a
   * line this parser accepts; `in` is unchanged). Nothing is read past that line.
   */
  def parse(off: Int, limit: Int): AnyRef = {
    lineStart = off
    pos = off
    end = limit
    sp = 0
    try {
      ws()
      expect('{')
      ws()
      val isAdd =
        if (literal(AddKey)) true
        else if (literal(RemoveKey)) false
        else return null
      ws()
      expect(':')
      ws()
      expect('{')
      val r = if (isAdd) add() else remove()
      ws()
      expect('}')
      ws()
      if (pos != end && in(pos) != '\n') throw bail
      lineEnd = pos
      if (r eq PlainAdd) keepPlainAdd()
      r
    } catch {
      case _: Bail => null
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Actions

  /** Fields of the plain `add` being parsed, kept by [[keepPlainAdd]] once the line is complete. */
  private var plainPathOff, plainPathLen, plainStatsOff, plainStatsLen = 0
  private var plainPv: Map[String, String] = _
  private var plainSize, plainMtime = 0L
  private var plainDataChange = false

  private def add(): AnyRef = {
    var seen = 0
    var pathOff, pathLen = 0
    var pv: Map[String, String] = EmptyMap
    var size, mtime = 0L
    var dataChange = true
    var statsOff, statsLen = -1
    var tags: Option[Map[String, String]] = None
    var dv: Option[DeletionVectorDescriptor] = None
    var baseRowId, drcv: Option[Long] = None
    var clusteringProvider: Option[String] = None
    if (firstField()) {
      var more = true
      while (more) {
        val f = fieldName(FileFields, AddAllowed)
        if ((seen & (1 << f)) != 0) throw bail // duplicate key
        seen |= 1 << f
        f match {
          case Path => string(); pathOff = strOff; pathLen = strLen
          case PartitionValues => pv = partitionValues()
          case Size => size = long()
          case ModificationTime => mtime = long()
          case DataChange => dataChange = bool()
          case Stats => string(); statsOff = strOff; statsLen = strLen
          case Tags => tags = Some(map(allowNullValues = false))
          case DeletionVector => dv = Some(deletionVector())
          case BaseRowId => baseRowId = Some(long())
          case DefaultRowCommitVersion => drcv = Some(long())
          case ClusteringProvider => clusteringProvider = Some(stringValue())
        }
        more = nextField()
      }
    }
    if ((seen & Required) != Required) throw bail
    if ((seen & NotPlain) == 0 && rows != null) {
      plainPathOff = pathOff; plainPathLen = pathLen; plainStatsOff = statsOff; plainStatsLen = statsLen
      plainPv = pv; plainSize = size; plainMtime = mtime; plainDataChange = dataChange
      PlainAdd
    } else {
      AddFile(utf8(pathOff, pathLen), pv, size, mtime, dataChange,
        if (statsLen < 0) None else Some(utf8(statsOff, statsLen)), tags, dv, baseRowId, drcv, clusteringProvider)
    }
  }

  /** Writes the decoded path and stats over the line's text and adds the row. */
  private def keepPlainAdd(): Unit = {
    System.arraycopy(scratch, plainPathOff, in, lineStart, plainPathLen)
    val statsAt = lineStart + plainPathLen
    if (plainStatsLen > 0) System.arraycopy(scratch, plainStatsOff, in, statsAt, plainStatsLen)
    rows.add(lineStart, plainPathLen, plainPv, plainSize, plainMtime, plainDataChange, statsAt, plainStatsLen)
  }

  private def remove(): RemoveFile = {
    var seen = 0
    var path: String = null
    var deletionTimestamp, size, baseRowId, drcv: Option[Long] = None
    var dataChange = true
    var extendedFileMetadata: Option[Boolean] = None
    var pv, tags: Option[Map[String, String]] = None
    var stats: Option[String] = None
    var dv: Option[DeletionVectorDescriptor] = None
    if (firstField()) {
      var more = true
      while (more) {
        val f = fieldName(FileFields, RemoveAllowed)
        if ((seen & (1 << f)) != 0) throw bail
        seen |= 1 << f
        f match {
          case Path => path = stringValue()
          case DeletionTimestamp => deletionTimestamp = Some(long())
          case DataChange => dataChange = bool()
          case ExtendedFileMetadata => extendedFileMetadata = Some(bool())
          case PartitionValues => pv = Some(partitionValues())
          case Size => size = Some(long())
          case Stats => stats = Some(stringValue())
          case Tags => tags = Some(map(allowNullValues = false))
          case DeletionVector => dv = Some(deletionVector())
          case BaseRowId => baseRowId = Some(long())
          case DefaultRowCommitVersion => drcv = Some(long())
        }
        more = nextField()
      }
    }
    if ((seen & (1 << Path)) == 0) throw bail
    RemoveFile(path, deletionTimestamp, dataChange, extendedFileMetadata, pv, size, stats, tags, dv, baseRowId, drcv)
  }

  private def deletionVector(): DeletionVectorDescriptor = {
    expect('{')
    var seen = 0
    var storageType, pathOrInline: String = null
    var offset: Option[Int] = None
    var sizeInBytes = 0
    var cardinality = 0L
    var maxRowIndex: Option[Long] = None
    if (firstField()) {
      var more = true
      while (more) {
        val f = fieldName(DvFields, -1)
        if ((seen & (1 << f)) != 0) throw bail
        seen |= 1 << f
        f match {
          case StorageType => storageType = stringValue()
          case PathOrInlineDv => pathOrInline = stringValue()
          case Offset => offset = Some(int())
          case SizeInBytes => sizeInBytes = int()
          case Cardinality => cardinality = long()
          case MaxRowIndex => maxRowIndex = Some(long())
        }
        more = nextField()
      }
    }
    if ((seen & DvRequired) != DvRequired) throw bail
    DeletionVectorDescriptor(storageType, pathOrInline, offset, sizeInBytes, cardinality, maxRowIndex)
  }

  // ---------------------------------------------------------------------------------------------
  // Objects: `{` was consumed; firstField is false for `{}`. After a field value, nextField
  // consumes `,` (true: another field follows) or `}` (false).

  private def firstField(): Boolean = {
    ws()
    if (pos < end && in(pos) == '}') { pos += 1; false } else true
  }

  private def nextField(): Boolean = {
    ws()
    if (pos >= end) throw bail
    val c = in(pos)
    pos += 1
    if (c == ',') { ws(); true }
    else if (c == '}') false
    else throw bail
  }

  /**
   * Index in `names` of the field name at `pos` (then `:` and blanks are consumed); bails unless
   * it is one of `names` whose bit is set in `allowed`. Writers keep one field order, so the
   * name after the previous match is tried first.
   */
  private def fieldName(names: Array[Array[Byte]], allowed: Int): Int = {
    expect('"')
    val s = pos
    val guess = if (lastField + 1 < names.length) lastField + 1 else 0
    val g = names(guess)
    var f = -1
    if (s + g.length < end && in(s + g.length) == '"' && java.util.Arrays.equals(in, s, s + g.length, g, 0, g.length)) {
      f = guess
      pos = s + g.length + 1
    } else {
      var p = s
      while (p < end && in(p) != '"') {
        if (in(p) == '\\') throw bail // an escaped name: the codec decides
        p += 1
      }
      if (p >= end) throw bail
      pos = p + 1
      var i = 0
      while (f < 0 && i < names.length) {
        if (names(i).length == p - s && java.util.Arrays.equals(in, s, p, names(i), 0, p - s)) f = i
        i += 1
      }
      if (f < 0) throw bail
    }
    if ((allowed & (1 << f)) == 0) throw bail
    lastField = f
    ws()
    expect(':')
    ws()
    f
  }

  private def partitionValues(): Map[String, String] = {
    // Commits usually repeat a few partition-value texts: equal text, same map.
    val start = pos
    if (lastPvText != null && start + lastPvText.length <= end &&
        java.util.Arrays.equals(in, start, start + lastPvText.length, lastPvText, 0, lastPvText.length)) {
      pos = start + lastPvText.length
      return lastPv
    }
    val m = map(allowNullValues = true)
    if (m.nonEmpty) {
      lastPvText = java.util.Arrays.copyOfRange(in, start, pos)
      lastPv = m
    }
    m
  }

  /** A JSON object of string values (or nulls when allowed), in text order. */
  private def map(allowNullValues: Boolean): Map[String, String] = {
    expect('{')
    if (!firstField()) return EmptyMap
    val b = VectorMap.newBuilder[String, String]
    var keys: java.util.HashSet[String] = null
    var first: String = null
    var count = 0
    var more = true
    while (more) {
      if (pos >= end || in(pos) != '"') throw bail
      val k = stringValue()
      if (k.length > MaxKeyChars) throw bail
      count += 1
      if (count == 1) first = k
      else {
        if (keys == null) { keys = new java.util.HashSet[String](); keys.add(first) }
        if (!keys.add(k)) throw bail // duplicate key
      }
      ws()
      expect(':')
      ws()
      if (pos < end && in(pos) == 'n') {
        if (!allowNullValues || !literal(NullLiteral)) throw bail
        b += k -> null
      } else b += k -> stringValue()
      more = nextField()
    }
    b.result()
  }

  // ---------------------------------------------------------------------------------------------
  // Scalars

  /** JSON blanks inside a line (no token accepts `\n`: the line ends there). */
  private def ws(): Unit = {
    while (pos < end && { val c = in(pos); c == ' ' || c == '\t' || c == '\r' }) pos += 1
  }

  private def expect(c: Char): Unit = {
    if (pos >= end || in(pos) != c) throw bail
    pos += 1
  }

  /** Consumes `lit` if the input continues with it. */
  private def literal(lit: Array[Byte]): Boolean = {
    val e = pos + lit.length
    if (e <= end && java.util.Arrays.equals(in, pos, e, lit, 0, lit.length)) { pos = e; true } else false
  }

  private def bool(): Boolean =
    if (literal(TrueLiteral)) true else if (literal(FalseLiteral)) false else throw bail

  /** An integer of at most 18 digits (always fits a long), no fraction or exponent. */
  private def long(): Long = {
    val e = end
    var p = pos
    val neg = p < e && in(p) == '-'
    if (neg) p += 1
    val s = p
    var v = 0L
    var c = 0
    while (p < e && { c = in(p) - '0'; c >= 0 && c <= 9 }) { v = v * 10 + c; p += 1 }
    val digits = p - s
    if (digits == 0 || digits > 18 || (digits > 1 && in(s) == '0')) throw bail
    if (p < e && (in(p) == '.' || in(p) == 'e' || in(p) == 'E')) throw bail
    pos = p
    if (neg) -v else v
  }

  private def int(): Int = {
    val v = long()
    if (v < Int.MinValue || v > Int.MaxValue) throw bail
    v.toInt
  }

  private def utf8(off: Int, len: Int): String =
    new String(scratch, off, len, UTF_8)

  /** A string value decoded to a `String`. */
  private def stringValue(): String = {
    string()
    utf8(strOff, strLen)
  }

  /**
   * Decodes the JSON string at `pos` into `scratch` (sets strOff / strLen). Bails on
   * control characters, malformed UTF-8, invalid escapes, lone surrogates and huge strings.
   */
  private def string(): Unit = {
    expect('"')
    val start = sp
    val e = end
    var w = start
    var p = pos
    var done = false
    while (!done) {
      if (w + 16 > scratch.length) growScratch(w)
      val buf = scratch
      val bufLongs = scratchLongs
      // Eight bytes at a time while none needs attention. A word is copied whole even when only
      // its first bytes belong to the string: the bytes past `w` are overwritten later.
      var x = 0L
      var m = 0L
      while (p + 8 <= e && w + 8 <= buf.length && { x = inLongs.getLong(p); m = attention(x); m == 0 }) {
        bufLongs.putLong(w, x)
        p += 8
        w += 8
      }
      if (m != 0) {
        val k = java.lang.Long.numberOfTrailingZeros(m) >>> 3 // the first byte needing attention
        bufLongs.putLong(w, x)
        p += k
        w += k
      }
      if (w + 8 > buf.length) {} // grow first (escapes and UTF-8 sequences write up to 4 bytes)
      else if (p >= e) throw bail
      else {
        val c = in(p)
        if (c == '"') { p += 1; done = true }
        else if (c == '\\') {
          val n: Byte = if (p + 1 < e) in(p + 1) else 0
          if (n == '"' || n == '\\' || n == '/') { buf(w) = n; w += 1; p += 2 } // the usual escapes, inline
          else { pos = p; w = escape(buf, w); p = pos }
        }
        else if (c < 0) { pos = p; w = utf8Sequence(buf, w); p = pos }
        else if (c < 0x20) throw bail // an unescaped control character
        else { buf(w) = c; w += 1; p += 1 } // a plain byte of the last few
      }
      if (w - start > MaxStringBytes) throw bail
    }
    pos = p
    strOff = start
    strLen = w - start
    sp = w
  }

  private def growScratch(used: Int): Unit = {
    scratch = java.util.Arrays.copyOf(scratch, math.max(2 * scratch.length, used + 16))
    scratchLongs = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN)
  }

  /** Copies the valid multi-byte UTF-8 sequence at `pos` (the same checks as a strict decoder). */
  private def utf8Sequence(buf: Array[Byte], w: Int): Int = {
    val b0 = in(pos) & 0xff
    // sequence length and the range of the second byte (no overlong forms, surrogates or > U+10FFFF)
    var n = 3
    var lo = 0x80
    var hi = 0xbf
    if (b0 >= 0xc2 && b0 <= 0xdf) n = 2
    else if (b0 == 0xe0) lo = 0xa0
    else if (b0 >= 0xe1 && b0 <= 0xef && b0 != 0xed) {}
    else if (b0 == 0xed) hi = 0x9f
    else if (b0 == 0xf0) { n = 4; lo = 0x90 }
    else if (b0 >= 0xf1 && b0 <= 0xf3) n = 4
    else if (b0 == 0xf4) { n = 4; hi = 0x8f }
    else throw bail
    if (pos + n > end) throw bail
    val b1 = in(pos + 1) & 0xff
    if (b1 < lo || b1 > hi) throw bail
    var k = 2
    while (k < n) { if ((in(pos + k) & 0xc0) != 0x80) throw bail; k += 1 }
    System.arraycopy(in, pos, buf, w, n)
    pos += n
    w + n
  }

  /** Decodes the escape at `pos` (a backslash) into `buf` at `w`; returns the new `w`. */
  private def escape(buf: Array[Byte], w: Int): Int = {
    if (pos + 1 >= end) throw bail
    val e = in(pos + 1)
    pos += 2
    val simple: Int = e match {
      case '"' => '"'
      case '\\' => '\\'
      case '/' => '/'
      case 'b' => '\b'
      case 'f' => '\f'
      case 'n' => '\n'
      case 'r' => '\r'
      case 't' => '\t'
      case 'u' => -1
      case _ => throw bail
    }
    if (simple >= 0) { buf(w) = simple.toByte; return w + 1 }
    var cp = hex4()
    if (cp >= 0xd800 && cp <= 0xdbff) {
      // a high surrogate must be followed by an escaped low surrogate
      if (pos + 1 >= end || in(pos) != '\\' || in(pos + 1) != 'u') throw bail
      pos += 2
      val low = hex4()
      if (low < 0xdc00 || low > 0xdfff) throw bail
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
    } else if (cp >= 0xdc00 && cp <= 0xdfff) throw bail
    encodeUtf8(cp, buf, w)
  }

  private def hex4(): Int = {
    if (pos + 4 > end) throw bail
    var v = 0
    var k = 0
    while (k < 4) {
      val c = in(pos + k)
      val d =
        if (c >= '0' && c <= '9') c - '0'
        else if (c >= 'a' && c <= 'f') c - 'a' + 10
        else if (c >= 'A' && c <= 'F') c - 'A' + 10
        else throw bail
      v = (v << 4) | d
      k += 1
    }
    pos += 4
    v
  }

  private def encodeUtf8(cp: Int, buf: Array[Byte], w: Int): Int = {
    if (cp < 0x80) {
      buf(w) = cp.toByte
      w + 1
    } else if (cp < 0x800) {
      buf(w) = (0xc0 | (cp >> 6)).toByte
      buf(w + 1) = (0x80 | (cp & 0x3f)).toByte
      w + 2
    } else if (cp < 0x10000) {
      buf(w) = (0xe0 | (cp >> 12)).toByte
      buf(w + 1) = (0x80 | ((cp >> 6) & 0x3f)).toByte
      buf(w + 2) = (0x80 | (cp & 0x3f)).toByte
      w + 3
    } else {
      buf(w) = (0xf0 | (cp >> 18)).toByte
      buf(w + 1) = (0x80 | ((cp >> 12) & 0x3f)).toByte
      buf(w + 2) = (0x80 | ((cp >> 6) & 0x3f)).toByte
      buf(w + 3) = (0x80 | (cp & 0x3f)).toByte
      w + 4
    }
  }
}

private[log] object FileActionLineParser {
  /** Returned by `parse` for a plain `add` (a row of the [[PlainAddsBuilder]]). */
  val PlainAdd: AnyRef = new Object

  private final class Bail extends RuntimeException(null, null, false, false)
  private val bail = new Bail

  private final val Ones = 0x0101010101010101L
  private final val Highs = 0x8080808080808080L

  /**
   * Non-zero when a byte of the little-endian word `x` is `"`, a backslash, below 0x20 or
   * non-ASCII; its lowest set bit is then in the first such byte (classic zero-byte tests, whose
   * false positives only appear above a true one).
   */
  private def attention(x: Long): Long = {
    val quote = x ^ 0x2222222222222222L
    val backslash = x ^ 0x5c5c5c5c5c5c5c5cL
    (((quote - Ones) & ~quote) | ((backslash - Ones) & ~backslash) | ((x - 0x2020202020202020L) & ~x) | x) & Highs
  }

  /** Longer strings and map keys are left to the codec (and its Jackson read limits). */
  private val MaxStringBytes = 8 << 20
  private val MaxKeyChars = 1000

  private def bytes(s: String): Array[Byte] = s.getBytes(ISO_8859_1)
  private val AddKey = bytes("\"add\"")
  private val RemoveKey = bytes("\"remove\"")
  private val TrueLiteral = bytes("true")
  private val FalseLiteral = bytes("false")
  private val NullLiteral = bytes("null")

  private val EmptyMap: Map[String, String] = VectorMap.empty

  // Field ids: positions in the name tables below.
  private final val Path = 0
  private final val PartitionValues = 1
  private final val Size = 2
  private final val ModificationTime = 3
  private final val DataChange = 4
  private final val Stats = 5
  private final val Tags = 6
  private final val DeletionVector = 7
  private final val BaseRowId = 8
  private final val DefaultRowCommitVersion = 9
  private final val ClusteringProvider = 10
  private final val DeletionTimestamp = 11
  private final val ExtendedFileMetadata = 12

  private val FileFields: Array[Array[Byte]] = Array("path", "partitionValues", "size", "modificationTime",
    "dataChange", "stats", "tags", "deletionVector", "baseRowId", "defaultRowCommitVersion", "clusteringProvider",
    "deletionTimestamp", "extendedFileMetadata").map(bytes)
  private val AddAllowed = (1 << DeletionTimestamp) - 1
  private val RemoveAllowed = AddAllowed & ~(1 << ClusteringProvider) | (1 << DeletionTimestamp) |
    (1 << ExtendedFileMetadata)

  private val Required = (1 << Path) | (1 << Size) | (1 << ModificationTime)
  private val NotPlain = (1 << Tags) | (1 << DeletionVector) | (1 << BaseRowId) | (1 << DefaultRowCommitVersion) |
    (1 << ClusteringProvider)

  private final val StorageType = 0
  private final val PathOrInlineDv = 1
  private final val Offset = 2
  private final val SizeInBytes = 3
  private final val Cardinality = 4
  private final val MaxRowIndex = 5
  private val DvFields: Array[Array[Byte]] =
    Array("storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality", "maxRowIndex").map(bytes)
  private val DvRequired = (1 << StorageType) | (1 << PathOrInlineDv) | (1 << SizeInBytes) | (1 << Cardinality)
}
