package io.deltalog.expressions

import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode

/**
 * Whether a file may hold a row for which a [[Predicate]] is TRUE, judged from the file's partition
 * values and its `add.stats` (minValues / maxValues / nullCount / numRecords, digest §7.5) without
 * reading it. The conflict checker uses it on a winning commit's added files: a false "no" would
 * break serializability, so everything not proven is "may match".
 *
 * Each node is judged as (may be TRUE, may be FALSE) under SQL three-valued logic (a NULL row is
 * neither), which makes `NOT` exact to push through. Partition-only sub-predicates are evaluated on
 * the partition values exactly ([[PartitionPredicates]]). Data columns use their statistics only for
 * comparisons of a column with a literal of the same kind (integral and decimal columns with
 * integer / decimal literals, string with string, date with date), `IN`, `IS [NOT] NULL`; bounds are
 * used as bounds (valid for wide and truncated bounds). Floating-point columns (NaN is not in the
 * bounds), timestamps (millisecond-truncated bounds), booleans, binary, columns compared with
 * columns, `LIKE` prefixes and a file without stats are "may match".
 */
object FileSkipping {

  /** The statistics of a data column: its physical path in the stats JSON and its schema type name. */
  final case class StatsColumn(path: Seq[String], typeName: String)

  private final case class Verdict(mayBeTrue: Boolean, mayBeFalse: Boolean)
  private val Unknown = Verdict(mayBeTrue = true, mayBeFalse = true)
  private val IsTrue = Verdict(mayBeTrue = true, mayBeFalse = false)
  private val IsFalse = Verdict(mayBeTrue = false, mayBeFalse = true)
  private val IsNullValue = Verdict(mayBeTrue = false, mayBeFalse = false)


  /**
   * False only when the file's partition values or statistics prove that no row makes `p` TRUE.
   *
   * @param partitionValues logical partition column => serialized value
   * @param partitionTypes  logical partition column => schema type name
   * @param stats           the file's `add.stats` JSON, if any
   * @param dataColumn      a (logical, possibly dotted) data column name => its statistics column; None
   *                        for a name that is not a data column with usable statistics
   */
  def mayMatch(p: Predicate, partitionValues: Map[String, String], partitionTypes: Map[String, String],
      stats: Option[String], dataColumn: String => Option[StatsColumn]): Boolean = {
    val root = stats.filter(_.nonEmpty).flatMap { s =>
      try Option(io.deltalog.actions.ExactJson.readTree(s)).filter(_.isObject) catch { case NonFatal(_) => None }
    }
    val partitionCols = partitionTypes.keySet.map(lower) ++ partitionValues.keySet.map(lower)
    val facts = new Facts(root, dataColumn)
    try judge(p, facts, partitionCols, partitionValues, partitionTypes).mayBeTrue
    catch { case NonFatal(_) => true }
  }

  private def lower(s: String): String = s.toLowerCase(Locale.ROOT)

  private final class Facts(root: Option[JsonNode], dataColumn: String => Option[StatsColumn]) {
    private def long(n: JsonNode): Option[Long] =
      Option(n).filter(x => x.isIntegralNumber && x.canConvertToLong).map(_.longValue())
    val numRecords: Option[Long] = root.flatMap(r => long(r.get("numRecords")))
    private def node(section: String, path: Seq[String]): Option[JsonNode] = {
      var n = root.map(_.get(section)).orNull
      val it = path.iterator
      while (n != null && it.hasNext) n = if (n.isObject) n.get(it.next()) else null
      Option(n).filter(x => !x.isNull && !x.isContainerNode)
    }
    def column(name: String): Option[StatsColumn] = if (root.isEmpty) None else dataColumn(name)
    def nullCount(c: StatsColumn): Option[Long] = node("nullCount", c.path).flatMap(long)
    def noNulls(c: StatsColumn): Boolean = nullCount(c).contains(0L)
    def allNull(c: StatsColumn): Boolean = (nullCount(c), numRecords) match {
      case (Some(n), Some(r)) => n == r
      case _ => false
    }
    def min(c: StatsColumn): Option[Any] = node("minValues", c.path).flatMap(bound(_, c.typeName))
    def max(c: StatsColumn): Option[Any] = node("maxValues", c.path).flatMap(bound(_, c.typeName))
  }

  private val DecimalType = """decimal\s*\(.*\)""".r

  private def kind(typeName: String): Option[String] = lower(typeName).trim match {
    case "byte" | "short" | "integer" | "int" | "long" | "tinyint" | "smallint" | "bigint" => Some("integral")
    case "decimal" | DecimalType() => Some("decimal")
    case "string" => Some("string")
    case "date" => Some("date")
    case _ => None
  }

  /** A stats JSON value as a canonical value of the column's type; None when unusable. */
  private def bound(n: JsonNode, typeName: String): Option[Any] = try {
    kind(typeName) match {
      case Some("integral") => if (n.isIntegralNumber && n.canConvertToLong) Some(n.longValue()) else None
      case Some("decimal") =>
        if (n.isNumber) Some(BigDecimal(n.decimalValue()))
        else if (n.isTextual) Some(BigDecimal(n.asText().trim)) else None
      case Some("string") => if (n.isTextual) Some(n.asText()) else None
      case Some("date") => if (n.isTextual) Values.parseDate(n.asText()) else None
      case _ => None
    }
  } catch { case NonFatal(_) => None }

  /** A literal usable against a column of `typeName` (same kind; None otherwise). */
  private def literalFor(v: Any, typeName: String): Option[Any] = (kind(typeName), Values.normalize(v)) match {
    case (Some("integral" | "decimal"), x @ (_: Long | _: BigDecimal)) => Some(x)
    case (Some("string"), x: String) => Some(x)
    case (Some("date"), x: java.time.LocalDate) => Some(x)
    case _ => None
  }

  private def cmp(a: Any, b: Any): Int = Values.compare(Values.Operand(a, fromLiteral = false),
    Values.Operand(b, fromLiteral = true)).getOrElse(throw new IllegalStateException("incomparable bounds"))

  private def judge(p: Predicate, f: Facts, partitionCols: Set[String], pv: Map[String, String],
      pt: Map[String, String]): Verdict = {
    def rec(q: Predicate): Verdict = q match {
      case AlwaysTrue => IsTrue
      case AlwaysFalse => IsFalse
      case _ if q.references.forall(r => partitionCols.contains(lower(r))) =>
        try PartitionPredicates.evaluate(q, pv, pt) match {
          case Some(true) => IsTrue
          case Some(false) => IsFalse
          case None => IsNullValue
        } catch { case NonFatal(_) => Unknown }
      case And(l, r) =>
        val (a, b) = (rec(l), rec(r)); Verdict(a.mayBeTrue && b.mayBeTrue, a.mayBeFalse || b.mayBeFalse)
      case Or(l, r) =>
        val (a, b) = (rec(l), rec(r)); Verdict(a.mayBeTrue || b.mayBeTrue, a.mayBeFalse && b.mayBeFalse)
      case Not(c) => val a = rec(c); Verdict(a.mayBeFalse, a.mayBeTrue)
      case IsNull(Column(n)) => f.column(n).map(c => Verdict(!f.noNulls(c), !f.allNull(c))).getOrElse(Unknown)
      case IsNotNull(Column(n)) => f.column(n).map(c => Verdict(!f.allNull(c), !f.noNulls(c))).getOrElse(Unknown)
      case In(Column(n), values) if values.forall(_.isInstanceOf[Literal]) =>
        val each = values.map(v => comparison("=", n, v.asInstanceOf[Literal].value, f))
        Verdict(each.exists(_.mayBeTrue), mayBeFalse = true)
      case c: Comparison =>
        (c.left, c.right) match {
          case (Column(n), Literal(v)) => compare(c, flipped = false, n, v, f)
          case (Literal(v), Column(n)) => compare(c, flipped = true, n, v, f)
          case _ => Unknown
        }
      case _ => Unknown
    }
    rec(p)
  }

  private def compare(c: Comparison, flipped: Boolean, name: String, v: Any, f: Facts): Verdict = {
    val op = (c, flipped) match {
      case (_: EqualTo, _) => "="
      case (_: NotEqualTo, _) => "!="
      case (_: NullSafeEqualTo, _) => "<=>"
      case (_: GreaterThan, false) | (_: LessThan, true) => ">"
      case (_: GreaterThanOrEqual, false) | (_: LessThanOrEqual, true) => ">="
      case (_: LessThan, false) | (_: GreaterThan, true) => "<"
      case (_: LessThanOrEqual, false) | (_: GreaterThanOrEqual, true) => "<="
      case _ => return Unknown
    }
    if (op == "<=>") {
      if (Values.normalize(v) == null) return judgeNullSafeNull(name, f)
      val eq = comparison("=", name, v, f)
      return Verdict(eq.mayBeTrue, mayBeFalse = true) // a NULL row is FALSE here
    }
    comparison(op, name, v, f)
  }

  private def judgeNullSafeNull(name: String, f: Facts): Verdict =
    f.column(name).map(c => Verdict(!f.noNulls(c), !f.allNull(c))).getOrElse(Unknown)

  /** `column op v` (v a literal) over the column's bounds. */
  private def comparison(op: String, name: String, v: Any, f: Facts): Verdict = {
    if (Values.normalize(v) == null) return IsNullValue
    val c = f.column(name).getOrElse(return Unknown)
    if (f.allNull(c)) return IsNullValue
    val x = literalFor(v, c.typeName).getOrElse(return Unknown)
    val (lo, hi) = (f.min(c), f.max(c))
    def holds(b: Option[Any], test: Int => Boolean): Boolean = b.exists(y => test(cmp(y, x)))
    op match {
      // may be TRUE unless a bound rules it out; may be FALSE unless a bound proves it for every row
      case ">" => Verdict(!holds(hi, _ <= 0), !holds(lo, _ > 0))
      case ">=" => Verdict(!holds(hi, _ < 0), !holds(lo, _ >= 0))
      case "<" => Verdict(!holds(lo, _ >= 0), !holds(hi, _ < 0))
      case "<=" => Verdict(!holds(lo, _ > 0), !holds(hi, _ <= 0))
      case "=" => Verdict(!(holds(lo, _ > 0) || holds(hi, _ < 0)), !(holds(lo, _ == 0) && holds(hi, _ == 0)))
      case "!=" => Verdict(!(holds(lo, _ == 0) && holds(hi, _ == 0)), !(holds(lo, _ > 0) || holds(hi, _ < 0)))
      case _ => Unknown
    }
  }
}
