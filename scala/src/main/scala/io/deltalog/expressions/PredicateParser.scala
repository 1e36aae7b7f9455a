package io.deltalog.expressions

import scala.collection.mutable.ArrayBuffer

/**
 * Parses the predicate subset of Spark SQL into a [[Predicate]].
 *
 * {{{
 * predicate  := or
 * or         := and (OR and)*
 * and        := not (AND not)*
 * not        := NOT not | '(' or ')' | simple
 * simple     := operand ( cmpOp operand
 *                       | [NOT] IN '(' operand (',' operand)* ')'
 *                       | [NOT] LIKE string
 *                       | [NOT] BETWEEN operand AND operand
 *                       | IS [NOT] NULL )?
 * cmpOp      := = | == | != | <> | < | <= | > | >= | <=>
 * operand    := identifier ('.' identifier)*          -- one column named "a.b"
 *             | ['+'|'-'] number | string | TRUE | FALSE | NULL
 *             | DATE string | TIMESTAMP string | TIMESTAMP_LTZ string | TIMESTAMP_NTZ string | X'hex'
 * }}}
 *
 *  - Keywords are case-insensitive; a column named like a reserved word (see [[ReservedWords]])
 *    must be backticked. `date`, `timestamp`, `x` are columns unless followed by a string.
 *  - Identifiers: plain `[A-Za-z_][A-Za-z0-9_]*` or backticked (`` `a b` ``, `` `` `` escapes a backtick).
 *  - Strings: single or double quoted; a doubled quote escapes it (`'it''s'`); backslash escapes
 *    as in Spark (`\'`, `\\`, `\n`, `\t`, `\uXXXX`, ...; `\%` and `\_` are kept for LIKE).
 *  - Numbers: integers => Long (BigDecimal beyond Long's range), `1.5` => BigDecimal,
 *    `1e3` => Double; suffixes `L`/`S`/`Y` (Long), `D`/`F` (Double), `BD` (BigDecimal).
 *  - `TIMESTAMP '...'` without an offset is read in UTC (no session time zone here).
 *  - `LIKE 'prefix%'` => [[StartsWith]]; a pattern without wildcards => [[EqualTo]]; any other
 *    pattern (`%x`, `a_b`, `a%b`) is rejected. `\` escapes `%`/`_` in patterns.
 *  - `x BETWEEN a AND b` => `(x >= a) AND (x <= b)`; `x NOT IN (...)` => `NOT (x IN (...))`.
 *  - A bare boolean column `flag` means `flag = TRUE`; bare `TRUE` / `FALSE` are
 *    [[AlwaysTrue]] / [[AlwaysFalse]].
 *
 * Errors are [[PredicateParseException]]s naming the 0-based position and what was expected.
 */
object PredicateParser {

  /** Words that cannot be used as plain (unquoted) column names. */
  val ReservedWords: Set[String] =
    Set("AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "LIKE", "BETWEEN")

  /**
   * Deepest nesting accepted, counting each `(` and each `NOT` as one level, both in the text and
   * in the result's [[Predicate.sql]] rendering (so every parsed predicate renders to text that
   * parses back). Bounds recursion in the parser, the evaluator and the renderer.
   * Long flat AND / OR chains are not nesting and are unlimited.
   */
  val MaxNesting: Int = 200

  def parse(sql: String): Predicate = {
    if (sql == null) throw new PredicateParseException("", 0, "predicate text is null")
    val p = new Parser(sql, new Lexer(sql).tokens()).parseAll()
    if (Predicate.sqlDepth(p) > MaxNesting)
      throw new PredicateParseException(sql, 0,
        s"expected at most $MaxNesting levels of nested parentheses / NOT operators " +
          s"(the predicate nests ${Predicate.sqlDepth(p)} levels when rendered)")
    p
  }

  // ---------------------------------------------------------------------------------- tokens

  private sealed trait Kind
  private case object IdentK extends Kind   // text = name, quoted = backticked
  private case object StringK extends Kind  // text = unescaped value
  private case object NumberK extends Kind  // text = raw number text incl. suffix
  private case object HexK extends Kind     // text = hex digits
  private case object OpK extends Kind      // text = operator / punctuation
  private case object EofK extends Kind

  private final case class Token(kind: Kind, text: String, pos: Int, quoted: Boolean = false) {
    def isKeyword(k: String): Boolean = kind == IdentK && !quoted && text.equalsIgnoreCase(k)
    def isOp(o: String): Boolean = kind == OpK && text == o
    def describe: String = kind match {
      case EofK => "end of input"
      case StringK => "a string"
      case NumberK => s"number $text"
      case IdentK if quoted => s"`$text`"
      case IdentK if ReservedWords.contains(text.toUpperCase) => s"keyword ${text.toUpperCase}"
      case _ => s"'$text'"
    }
  }

  private final class Lexer(sql: String) {
    private var i = 0
    private def err(pos: Int, reason: String): Nothing = throw new PredicateParseException(sql, pos, reason)

    def tokens(): IndexedSeq[Token] = {
      val out = ArrayBuffer.empty[Token]
      while ({ skipSpace(); i < sql.length }) out += next()
      out += Token(EofK, "", sql.length)
      out.toIndexedSeq
    }

    private def skipSpace(): Unit = while (i < sql.length && Character.isWhitespace(sql.charAt(i))) i += 1

    private def isIdentStart(c: Char) = c.isLetter || c == '_'
    private def isIdentPart(c: Char) = c.isLetterOrDigit || c == '_'

    private def next(): Token = {
      val start = i
      val c = sql.charAt(i)
      if ((c == 'X' || c == 'x') && i + 1 < sql.length && sql.charAt(i + 1) == '\'') {
        i += 1
        val s = readString()
        if (!s.forall(ch => Character.digit(ch, 16) >= 0) || s.length % 2 != 0)
          err(start, "expected an even number of hex digits in binary literal X'...'")
        Token(HexK, s, start)
      } else if (isIdentStart(c)) {
        while (i < sql.length && isIdentPart(sql.charAt(i))) i += 1
        Token(IdentK, sql.substring(start, i), start)
      } else if (c == '`') {
        val sb = new StringBuilder
        i += 1
        var closed = false
        while (!closed) {
          if (i >= sql.length) err(start, "unterminated backticked identifier: expected a closing '`'")
          val ch = sql.charAt(i)
          if (ch == '`') {
            if (i + 1 < sql.length && sql.charAt(i + 1) == '`') { sb += '`'; i += 2 }
            else { i += 1; closed = true }
          } else { sb += ch; i += 1 }
        }
        if (sb.isEmpty) err(start, "expected a non-empty column name between backticks")
        Token(IdentK, sb.toString, start, quoted = true)
      } else if (c == '\'' || c == '"') {
        Token(StringK, readString(), start)
      } else if (c.isDigit || (c == '.' && i + 1 < sql.length && sql.charAt(i + 1).isDigit)) {
        readNumber(start)
      } else {
        val two = if (i + 2 <= sql.length) sql.substring(i, i + 2) else ""
        val three = if (i + 3 <= sql.length) sql.substring(i, i + 3) else ""
        val op =
          if (three == "<=>") three
          else if (Set("==", "!=", "<>", "<=", ">=").contains(two)) two
          else if ("=<>(),.+-".indexOf(c) >= 0) c.toString
          else err(start, s"unexpected character '$c'")
        i += op.length
        Token(OpK, op, start)
      }
    }

    /** Reads a quoted string starting at the quote at `i`; returns the unescaped value. */
    private def readString(): String = {
      val start = i
      val q = sql.charAt(i)
      i += 1
      val sb = new StringBuilder
      while (true) {
        if (i >= sql.length) err(start, s"unterminated string literal: expected a closing $q")
        val ch = sql.charAt(i)
        if (ch == q) {
          if (i + 1 < sql.length && sql.charAt(i + 1) == q) { sb += q; i += 2 }
          else { i += 1; return sb.toString }
        } else if (ch == '\\') {
          if (i + 1 >= sql.length) err(start, s"unterminated string literal: expected a closing $q")
          val e = sql.charAt(i + 1)
          i += 2
          e match {
            case '0' => sb += '\u0000'
            case 'b' => sb += '\b'
            case 'n' => sb += '\n'
            case 'r' => sb += '\r'
            case 't' => sb += '\t'
            case 'Z' => sb += '\u001A'
            case '%' => sb ++= "\\%"
            case '_' => sb ++= "\\_"
            case 'u' =>
              val hex = if (i + 4 <= sql.length) sql.substring(i, i + 4) else ""
              if (hex.length != 4 || !hex.forall(h => Character.digit(h, 16) >= 0))
                err(i - 2, "expected 4 hex digits after \\u")
              sb += Integer.parseInt(hex, 16).toChar
              i += 4
            case other => sb += other
          }
        } else { sb += ch; i += 1 }
      }
      throw new IllegalStateException("unreachable")
    }

    private def readNumber(start: Int): Token = {
      while (i < sql.length && sql.charAt(i).isDigit) i += 1
      if (i < sql.length && sql.charAt(i) == '.') {
        i += 1
        while (i < sql.length && sql.charAt(i).isDigit) i += 1
      }
      if (i < sql.length && (sql.charAt(i) == 'e' || sql.charAt(i) == 'E')) {
        val save = i
        i += 1
        if (i < sql.length && (sql.charAt(i) == '+' || sql.charAt(i) == '-')) i += 1
        if (i < sql.length && sql.charAt(i).isDigit) {
          while (i < sql.length && sql.charAt(i).isDigit) i += 1
        } else err(save, "expected digits in the exponent")
      }
      val rest = sql.substring(i)
      val suffix =
        if (rest.length >= 2 && rest.substring(0, 2).equalsIgnoreCase("BD")) 2
        else if (rest.nonEmpty && "LlSsYyDdFf".indexOf(rest.charAt(0)) >= 0) 1
        else 0
      i += suffix
      if (i < sql.length && isIdentPart(sql.charAt(i)))
        err(start, s"malformed number '${sql.substring(start, i + 1)}': expected a number")
      Token(NumberK, sql.substring(start, i), start)
    }
  }

  // ---------------------------------------------------------------------------------- parser

  private final class Parser(sql: String, toks: IndexedSeq[Token]) {
    private var p = 0
    private def peek: Token = toks(p)
    private def peekAt(k: Int): Token = toks(math.min(p + k, toks.length - 1))
    private def advance(): Token = { val t = toks(p); if (p < toks.length - 1) p += 1; t }
    private def err(t: Token, reason: String): Nothing = throw new PredicateParseException(sql, t.pos, reason)
    private def expected(what: String): Nothing = err(peek, s"expected $what, found ${peek.describe}")

    private def acceptKeyword(k: String): Boolean = if (peek.isKeyword(k)) { advance(); true } else false
    private def acceptOp(o: String): Boolean = if (peek.isOp(o)) { advance(); true } else false
    private def expectOp(o: String): Unit = if (!acceptOp(o)) expected(s"'$o'")

    def parseAll(): Predicate = {
      if (peek.kind == EofK) expected("a predicate")
      val r = parseOr()
      if (peek.kind != EofK) {
        if (peek.isOp(")")) err(peek, "unbalanced ')': expected end of input")
        expected("AND, OR or end of input")
      }
      r
    }

    private def parseOr(): Predicate = {
      var left = parseAnd()
      while (acceptKeyword("OR")) left = Or(left, parseAnd())
      left
    }

    private def parseAnd(): Predicate = {
      var left = parseNot()
      while (acceptKeyword("AND")) left = And(left, parseNot())
      left
    }

    private var depth = 0

    private def parseNot(): Predicate = {
      if (peek.isKeyword("NOT") || peek.isOp("(")) {
        depth += 1
        if (depth > MaxNesting)
          err(peek, s"expected at most $MaxNesting levels of nested parentheses / NOT operators")
        try parseNested() finally depth -= 1
      } else parseSimple()
    }

    private def parseNested(): Predicate = {
      if (acceptKeyword("NOT")) Not(parseNot())
      else {
        val open = advance()
        if (peek.isOp(")")) expected("a predicate")
        val inner = parseOr()
        if (!acceptOp(")")) {
          if (peek.kind == EofK) err(peek, s"expected ')' to close the '(' at position ${open.pos}")
          expected("')', AND or OR")
        }
        inner
      }
    }

    private val CmpOps = Set("=", "==", "!=", "<>", "<", "<=", ">", ">=", "<=>")

    private def parseSimple(): Predicate = {
      val startTok = peek
      val left = parseOperand()
      val t = peek
      if (t.kind == OpK && CmpOps.contains(t.text)) {
        advance()
        val right = parseOperand()
        t.text match {
          case "=" | "==" => EqualTo(left, right)
          case "!=" | "<>" => NotEqualTo(left, right)
          case "<" => LessThan(left, right)
          case "<=" => LessThanOrEqual(left, right)
          case ">" => GreaterThan(left, right)
          case ">=" => GreaterThanOrEqual(left, right)
          case "<=>" => NullSafeEqualTo(left, right)
        }
      } else if (t.isKeyword("IS")) {
        advance()
        val negated = acceptKeyword("NOT")
        if (!acceptKeyword("NULL")) expected(if (negated) "NULL" else "NULL or NOT NULL")
        if (negated) IsNotNull(left) else IsNull(left)
      } else if (t.isKeyword("NOT") &&
          (peekAt(1).isKeyword("IN") || peekAt(1).isKeyword("LIKE") || peekAt(1).isKeyword("BETWEEN"))) {
        advance()
        Not(parsePostfix(left))
      } else if (t.isKeyword("NOT")) {
        advance()
        expected("IN, LIKE or BETWEEN after NOT")
      } else if (t.isKeyword("IN") || t.isKeyword("LIKE") || t.isKeyword("BETWEEN")) {
        parsePostfix(left)
      } else {
        left match {
          case Literal(true) => AlwaysTrue
          case Literal(false) => AlwaysFalse
          case c: Column => EqualTo(c, Literal.True) // a boolean column used as a predicate
          case _ =>
            if (t.kind == EofK || t.isKeyword("AND") || t.isKeyword("OR") || t.isOp(")"))
              err(startTok, s"expected a predicate, found the value ${left.sql} alone " +
                "(add a comparison such as '= ...', IS NULL, IN, LIKE or BETWEEN)")
            expected("a comparison operator, IS, IN, LIKE or BETWEEN")
        }
      }
    }

    /** IN / LIKE / BETWEEN after the operand (NOT already consumed). */
    private def parsePostfix(left: Expression): Predicate = {
      if (acceptKeyword("IN")) {
        expectOp("(")
        if (peek.isOp(")")) expected("at least one value in the IN list")
        val values = ArrayBuffer(parseOperand())
        while (acceptOp(",")) values += parseOperand()
        if (!acceptOp(")")) expected("',' or ')' in the IN list")
        In(left, values.toList)
      } else if (acceptKeyword("LIKE")) {
        val t = peek
        if (t.kind != StringK) expected("a string pattern after LIKE")
        advance()
        if (peek.isKeyword("ESCAPE")) err(peek, "LIKE ... ESCAPE is not supported: use a backslash to escape % and _")
        likeToPredicate(left, t)
      } else if (acceptKeyword("BETWEEN")) {
        val lo = parseOperand()
        if (!acceptKeyword("AND")) expected("AND in BETWEEN ... AND ...")
        val hi = parseOperand()
        And(GreaterThanOrEqual(left, lo), LessThanOrEqual(left, hi))
      } else expected("IN, LIKE or BETWEEN")
    }

    private def likeToPredicate(left: Expression, patTok: Token): Predicate = {
      val pat = patTok.text
      val prefix = new StringBuilder
      var k = 0
      var wildcardAt = -1
      while (k < pat.length && wildcardAt < 0) {
        pat.charAt(k) match {
          case '\\' =>
            if (k + 1 >= pat.length)
              err(patTok, s"invalid LIKE pattern '$pat': it ends with the escape character '\\'")
            prefix += pat.charAt(k + 1)
            k += 2
          case '%' => wildcardAt = k
          case '_' =>
            err(patTok, s"unsupported LIKE pattern '$pat': only prefix patterns such as 'abc%' are supported " +
              "('_' matches one character; escape it as '\\_' to match a literal underscore)")
          case ch => prefix += ch; k += 1
        }
      }
      if (wildcardAt < 0) EqualTo(left, Literal(prefix.toString))
      else if (pat.substring(wildcardAt).forall(_ == '%')) StartsWith(left, prefix.toString)
      else err(patTok, s"unsupported LIKE pattern '$pat': only prefix patterns such as 'abc%' are supported " +
        "(a '%' may appear only at the end; escape it as '\\%' to match a literal percent sign)")
    }

    private def parseOperand(): Expression = {
      val t = peek
      t.kind match {
        case StringK => advance(); Literal(t.text)
        case HexK =>
          advance()
          Literal(t.text.grouped(2).map(h => Integer.parseInt(h, 16).toByte).toArray)
        case NumberK => advance(); Literal(number(t, negate = false))
        case OpK if t.text == "-" || t.text == "+" =>
          advance()
          val n = peek
          if (n.kind != NumberK) expected(s"a number after unary '${t.text}'")
          advance()
          Literal(number(n, negate = t.text == "-"))
        case IdentK if !t.quoted && peekAt(1).kind == StringK && typedLiteralPrefix(t.text).isDefined =>
          advance()
          val s = advance()
          typedLiteral(typedLiteralPrefix(t.text).get, s)
        case IdentK if t.isKeyword("NULL") => advance(); Literal(null)
        case IdentK if t.isKeyword("TRUE") => advance(); Literal(true)
        case IdentK if t.isKeyword("FALSE") => advance(); Literal(false)
        case IdentK if !t.quoted && ReservedWords.contains(t.text.toUpperCase) =>
          expected("a column or a literal (backtick a column named like a keyword)")
        case IdentK =>
          val parts = ArrayBuffer(advance().text)
          while (peek.isOp(".")) {
            advance()
            val n = peek
            if (n.kind != IdentK) expected("a name after '.'")
            parts += advance().text
          }
          Column(parts.mkString("."))
        case _ => expected("a column or a literal")
      }
    }

    private def typedLiteralPrefix(word: String): Option[String] = word.toUpperCase match {
      case w @ ("DATE" | "TIMESTAMP" | "TIMESTAMP_LTZ" | "TIMESTAMP_NTZ") => Some(w)
      case _ => None
    }

    private def typedLiteral(kind: String, s: Token): Literal = kind match {
      case "DATE" =>
        Values.parseDate(s.text).filter(_ => !s.text.trim.exists(c => c == ' ' || c == 'T'))
          .map(Literal(_)).getOrElse(err(s, s"invalid DATE literal '${s.text}': expected yyyy-MM-dd"))
      case "TIMESTAMP" | "TIMESTAMP_LTZ" =>
        Values.parseTimestamp(s.text).map(Literal(_)).getOrElse(
          err(s, s"invalid $kind literal '${s.text}': expected yyyy-MM-dd[ HH:mm:ss[.ffffff]][offset]"))
      case "TIMESTAMP_NTZ" =>
        Values.parseTimestampNtz(s.text).map(Literal(_)).getOrElse(
          err(s, s"invalid TIMESTAMP_NTZ literal '${s.text}': expected yyyy-MM-dd[ HH:mm:ss[.ffffff]] " +
            "without a time zone offset"))
    }

    private def number(t: Token, negate: Boolean): Any = {
      val raw = t.text
      val lower = raw.toLowerCase
      val (body, suffix) =
        if (lower.endsWith("bd")) (raw.dropRight(2), "bd")
        else if (lower.nonEmpty && "lsydf".contains(lower.last)) (raw.dropRight(1), lower.last.toString)
        else (raw, "")
      val text = if (negate) "-" + body else body
      def bad(what: String): Nothing = err(t, s"invalid number '$raw': $what")
      val isIntegral = !body.exists(c => c == '.' || c == 'e' || c == 'E')
      suffix match {
        case "l" | "s" | "y" =>
          if (!isIntegral) bad("an integer suffix needs an integer")
          val v = try text.toLong catch { case _: NumberFormatException => bad("out of range") }
          val (lo, hi) = suffix match {
            case "s" => (Short.MinValue.toLong, Short.MaxValue.toLong)
            case "y" => (Byte.MinValue.toLong, Byte.MaxValue.toLong)
            case _ => (Long.MinValue, Long.MaxValue)
          }
          if (v < lo || v > hi) bad("out of range")
          v
        case "d" | "f" =>
          val d = text.toDouble
          if (d.isInfinite) bad("out of range")
          if (suffix == "f") d.toFloat.toString.toDouble else d
        case "bd" => BigDecimal(text)
        case _ =>
          if (isIntegral) {
            try text.toLong catch { case _: NumberFormatException => BigDecimal(text) }
          } else if (body.exists(c => c == 'e' || c == 'E')) {
            val d = text.toDouble
            if (d.isInfinite) bad("out of range")
            d
          } else BigDecimal(text)
      }
    }
  }
}
