package io.deltalog.expressions

/**
 * A small, Spark-free predicate language (see docs/txn-design.md, `io.deltalog.expressions`).
 *
 * Values are [[Column]] references and [[Literal]]s; predicates combine them. Every node has
 * `references` (the column names it reads, as written) and `sql`, a readable Spark-SQL rendering
 * that [[PredicateParser.parse]] reads back into an equal tree (used in commitInfo
 * operationParameters and in error messages). Binary nodes render fully parenthesised, like
 * Spark's `Expression.sql`: `((a > 1) AND (b IN ('x', 'y')))`.
 */
sealed trait Expression {
  def references: Set[String]
  def sql: String
  override def toString: String = sql
}

/**
 * A column. A dotted name (`a.b`) is one column name, matched case-insensitively against
 * partition columns / schema fields.
 */
final case class Column(name: String) extends Expression {
  require(name != null, "column name must not be null")
  def references: Set[String] = Set(name)
  def sql: String = Column.quoteIfNeeded(name)
  override def toString: String = sql
}

object Column {
  private val Plain = "[A-Za-z_][A-Za-z0-9_]*".r

  /** `name` as is when every dot-separated part is a plain, non-reserved identifier; else backticked. */
  def quoteIfNeeded(name: String): String = {
    val parts = name.split("\\.", -1)
    val plain = name.nonEmpty && parts.forall(p =>
      Plain.pattern.matcher(p).matches() && !PredicateParser.ReservedWords.contains(p.toUpperCase))
    if (plain) name else "`" + name.replace("`", "``") + "`"
  }
}

/**
 * A constant. Canonical value classes: `null`, `Boolean`, `Long` (all integral types), `Double`
 * (also floats), `scala.math.BigDecimal`, `String`, `java.time.LocalDate` (date),
 * `java.time.Instant` (timestamp), `java.time.LocalDateTime` (timestamp_ntz), `Array[Byte]` (binary).
 * Use [[Literal.of]] to normalise other JVM values (Int, Float, java.math.BigDecimal,
 * java.sql.Date/Timestamp, ...); the evaluator also normalises lazily. Equality compares arrays
 * by content.
 */
final case class Literal(value: Any) extends Expression {
  def references: Set[String] = Set.empty
  def sql: String = Values.toSqlLiteral(value)
  override def toString: String = sql

  override def equals(other: Any): Boolean = other match {
    case Literal(v) => Values.normalize(value) -> Values.normalize(v) match {
      case (a: Array[Byte], b: Array[Byte]) => java.util.Arrays.equals(a, b)
      case (a: Double, b: Double) => a == b || (a.isNaN && b.isNaN)
      case (a, b) => a == b
    }
    case _ => false
  }
  override def hashCode(): Int = Values.normalize(value) match {
    case a: Array[Byte] => java.util.Arrays.hashCode(a)
    case null => 0
    case v => v.##
  }
}

object Literal {
  val Null: Literal = Literal(null)
  val True: Literal = Literal(true)
  val False: Literal = Literal(false)
  /** A literal with the value normalised to its canonical class (see [[Literal]]). */
  def of(value: Any): Literal = Literal(Values.normalize(value))
}

/** A boolean-valued expression; evaluates to TRUE, FALSE or NULL (unknown). */
sealed trait Predicate extends Expression {
  def children: Seq[Expression]
  /** Iterative, so that long generated AND / OR chains do not overflow the stack. */
  def references: Set[String] = {
    val out = Set.newBuilder[String]
    var stack: List[Expression] = children.toList
    while (stack.nonEmpty) {
      val e = stack.head
      stack = stack.tail
      e match {
        case Column(n) => out += n
        case _: Literal =>
        case p: Predicate => stack = p.children.toList ::: stack
      }
    }
    out.result()
  }
}

object Predicate {
  /** AND of all predicates; [[AlwaysTrue]] for none. */
  def and(ps: Seq[Predicate]): Predicate = ps match {
    case Seq() => AlwaysTrue
    case _ => ps.reduceLeft(And(_, _))
  }
  /** OR of all predicates; [[AlwaysFalse]] for none. */
  def or(ps: Seq[Predicate]): Predicate = ps match {
    case Seq() => AlwaysFalse
    case _ => ps.reduceLeft(Or(_, _))
  }
  /** Top-level conjuncts: `a AND (b AND c)` => Seq(a, b, c). */
  def splitConjuncts(p: Predicate): Seq[Predicate] = flatten(p, isAnd = true)

  /** Top-level disjuncts: `(a OR b) OR c` => Seq(a, b, c). */
  def splitDisjuncts(p: Predicate): Seq[Predicate] = flatten(p, isAnd = false)

  /** Operands of a chain of ANDs (or ORs), in order, without recursion. */
  private[expressions] def flatten(p: Predicate, isAnd: Boolean): Seq[Predicate] = {
    val out = Vector.newBuilder[Predicate]
    var stack: List[Predicate] = List(p)
    while (stack.nonEmpty) {
      val cur = stack.head
      stack = stack.tail
      cur match {
        case And(l, r) if isAnd => stack = l :: r :: stack
        case Or(l, r) if !isAnd => stack = l :: r :: stack
        case other => out += other
      }
    }
    out.result()
  }

  /**
   * Operands along the left spine of a chain (`((a AND b) AND c)` => a, b, c; a right operand
   * that is itself a chain stays one operand). Rendering by the left spine keeps `sql` iterative
   * for the usual left-deep chains while still re-parsing to the same tree.
   */
  private[expressions] def leftSpine(p: Predicate, isAnd: Boolean): List[Predicate] = {
    var rights: List[Predicate] = Nil
    var cur = p
    var done = false
    while (!done) cur match {
      case And(l, r) if isAnd => rights = r :: rights; cur = l
      case Or(l, r) if !isAnd => rights = r :: rights; cur = l
      case _ => done = true
    }
    cur :: rights
  }

  private[expressions] def chainSql(p: Predicate, isAnd: Boolean): String =
    leftSpine(p, isAnd).map(_.sql).mkString("(", if (isAnd) " AND " else " OR ", ")")

  private[expressions] def chainHash(p: Predicate, isAnd: Boolean): Int =
    scala.util.hashing.MurmurHash3.orderedHash(leftSpine(p, isAnd), if (isAnd) 0x416e64 else 0x4f72)

  private[expressions] def chainEquals(a: Predicate, b: Any, isAnd: Boolean): Boolean = b match {
    case q: Predicate if (isAnd && q.isInstanceOf[And]) || (!isAnd && q.isInstanceOf[Or]) =>
      (a eq q) || leftSpine(a, isAnd) == leftSpine(q, isAnd)
    case _ => false
  }

  /**
   * Nesting depth of `sql`, counted like the parser does (each `(` and each `NOT` is one level).
   * [[PredicateParser]] rejects predicates whose rendering would be deeper than
   * [[PredicateParser.MaxNesting]], so every parsed predicate's `sql` parses back.
   */
  def sqlDepth(p: Predicate): Int = p match {
    case AlwaysTrue | AlwaysFalse => 0
    case Not(c) => 2 + sqlDepth(c)
    case _: And => 1 + leftSpine(p, isAnd = true).iterator.map(sqlDepth).max
    case _: Or => 1 + leftSpine(p, isAnd = false).iterator.map(sqlDepth).max
    case _ => 1
  }
}

/** A binary comparison `left <op> right`. */
sealed trait Comparison extends Predicate {
  def left: Expression
  def right: Expression
  def symbol: String
  def children: Seq[Expression] = Seq(left, right)
  def sql: String = s"(${left.sql} $symbol ${right.sql})"
}

final case class EqualTo(left: Expression, right: Expression) extends Comparison { def symbol = "=" }
final case class NotEqualTo(left: Expression, right: Expression) extends Comparison { def symbol = "!=" }
/** `<=>`: TRUE when both sides are NULL, FALSE when exactly one is; never NULL. */
final case class NullSafeEqualTo(left: Expression, right: Expression) extends Comparison { def symbol = "<=>" }
final case class LessThan(left: Expression, right: Expression) extends Comparison { def symbol = "<" }
final case class LessThanOrEqual(left: Expression, right: Expression) extends Comparison { def symbol = "<=" }
final case class GreaterThan(left: Expression, right: Expression) extends Comparison { def symbol = ">" }
final case class GreaterThanOrEqual(left: Expression, right: Expression) extends Comparison { def symbol = ">=" }

/** `value IN (v1, v2, ...)` with SQL semantics: NULL when no element is equal and any side is NULL. */
final case class In(value: Expression, values: Seq[Expression]) extends Predicate {
  def children: Seq[Expression] = value +: values
  def sql: String = s"(${value.sql} IN (${values.map(_.sql).mkString(", ")}))"
}

final case class IsNull(child: Expression) extends Predicate {
  def children: Seq[Expression] = Seq(child)
  def sql: String = s"(${child.sql} IS NULL)"
}

final case class IsNotNull(child: Expression) extends Predicate {
  def children: Seq[Expression] = Seq(child)
  def sql: String = s"(${child.sql} IS NOT NULL)"
}

/**
 * `child LIKE 'prefix%'`. A non-string child is compared through its canonical string form
 * (see [[Values.toDisplayString]]).
 */
final case class StartsWith(child: Expression, prefix: String) extends Predicate {
  require(prefix != null, "prefix must not be null")
  def children: Seq[Expression] = Seq(child)
  def sql: String = s"(${child.sql} LIKE ${Values.quoteString(StartsWith.escapeLike(prefix) + "%")})"
}

object StartsWith {
  /** Escapes LIKE metacharacters (`%`, `_`, `\`) with a backslash. */
  def escapeLike(s: String): String = s.flatMap {
    case c @ ('%' | '_' | '\\') => "\\" + c
    case c => c.toString
  }
}

/** Renders a left-deep chain flat: `((a = 1) AND (b = 2) AND (c = 3))`. */
final case class And(left: Predicate, right: Predicate) extends Predicate {
  def children: Seq[Expression] = Seq(left, right)
  def sql: String = Predicate.chainSql(this, isAnd = true)
  override def hashCode(): Int = Predicate.chainHash(this, isAnd = true)
  override def equals(o: Any): Boolean = Predicate.chainEquals(this, o, isAnd = true)
}

/** Renders a left-deep chain flat: `((a = 1) OR (b = 2) OR (c = 3))`. */
final case class Or(left: Predicate, right: Predicate) extends Predicate {
  def children: Seq[Expression] = Seq(left, right)
  def sql: String = Predicate.chainSql(this, isAnd = false)
  override def hashCode(): Int = Predicate.chainHash(this, isAnd = false)
  override def equals(o: Any): Boolean = Predicate.chainEquals(this, o, isAnd = false)
}

final case class Not(child: Predicate) extends Predicate {
  def children: Seq[Expression] = Seq(child)
  def sql: String = s"(NOT ${child.sql})"
}

case object AlwaysTrue extends Predicate {
  def children: Seq[Expression] = Nil
  def sql: String = "TRUE"
}

case object AlwaysFalse extends Predicate {
  def children: Seq[Expression] = Nil
  def sql: String = "FALSE"
}
