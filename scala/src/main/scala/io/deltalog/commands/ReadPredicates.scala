package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.deltalog.expressions.{Predicate => LogPredicate}
import io.deltalog.{expressions => log}

/**
 * The predicates a DELETE / UPDATE / MERGE records in its transaction for conflict detection
 * (delta-spark's `readPredicates`): the conjuncts of its (target-side) condition, translated to the
 * log's predicate language so that the conflict checker can judge a concurrently added file by its
 * partition values and stats. A conjunct that cannot be translated exactly is left out, which only
 * widens what the statement is taken to have read (more conflicts, never fewer).
 */
private[commands] object ReadPredicates {

  /** The translatable conjuncts of `condition` (a resolved expression over the table's columns). */
  def of(condition: Expression, partitionCols: Set[String]): Seq[LogPredicate] =
    DmlSupport.conjuncts(condition).flatMap { c =>
      val partitionOnly = c.references.nonEmpty &&
        c.references.forall(a => partitionCols.contains(a.name.toLowerCase(Locale.ROOT)))
      // partition-only conjuncts keep the translation that prunes files (through SQL text)
      if (partitionOnly) DmlSupport.partitionPredicates(c, partitionCols) else predicate(c)
    }

  /** `e` as an equivalent log predicate, or None. */
  def predicate(e: Expression): Option[LogPredicate] = e match {
    case And(l, r) => for (a <- predicate(l); b <- predicate(r)) yield log.And(a, b)
    case Or(l, r) => for (a <- predicate(l); b <- predicate(r)) yield log.Or(a, b)
    case Not(c) => predicate(c).map(log.Not)
    case IsNull(c) => column(c).map(log.IsNull)
    case IsNotNull(c) => column(c).map(log.IsNotNull)
    case EqualTo(l, r) => binary(l, r)(log.EqualTo)
    case EqualNullSafe(l, r) => binary(l, r)(log.NullSafeEqualTo)
    case LessThan(l, r) => binary(l, r)(log.LessThan)
    case LessThanOrEqual(l, r) => binary(l, r)(log.LessThanOrEqual)
    case GreaterThan(l, r) => binary(l, r)(log.GreaterThan)
    case GreaterThanOrEqual(l, r) => binary(l, r)(log.GreaterThanOrEqual)
    case In(v, list) =>
      for (c <- column(v); ls <- sequence(list.map(x => literal(x, v.dataType)))) yield log.In(c, ls)
    case Literal(true, BooleanType) => Some(log.AlwaysTrue)
    case Literal(false, BooleanType) => Some(log.AlwaysFalse)
    case _ => None
  }

  private def sequence[T](xs: Seq[Option[T]]): Option[Seq[T]] =
    if (xs.forall(_.isDefined)) Some(xs.map(_.get)) else None

  /** `col op literal` or `literal op col`, the literal of the column's own type. */
  private def binary(l: Expression, r: Expression)(
      make: (log.Expression, log.Expression) => LogPredicate): Option[LogPredicate] =
    (column(l), column(r)) match {
      case (Some(c), None) => literal(r, l.dataType).map(v => make(c, v))
      case (None, Some(c)) => literal(l, r.dataType).map(v => make(v, c))
      case _ => None
    }

  /** A top-level column or a field of nested structs, named by its dotted path. */
  private def column(e: Expression): Option[log.Column] = path(e).map(p => log.Column(p.mkString(".")))

  private def path(e: Expression): Option[Seq[String]] = e match {
    case a: AttributeReference if !a.name.contains(".") => Some(Seq(a.name))
    case g @ GetStructField(child, _, _) =>
      val name = g.extractFieldName
      if (name.contains(".")) None else path(child).map(_ :+ name)
    case _ => None
  }

  /** A foldable value of type `dt` (the column's) as a log literal; only types the stats checks use. */
  private def literal(e: Expression, dt: DataType): Option[log.Literal] =
    if (!e.foldable || !e.deterministic || e.dataType != dt) None
    else try {
      val v = e.eval()
      val converted: Option[Any] = (v, dt) match {
        case (null, _) => Some(null)
        case (x: java.lang.Byte, ByteType) => Some(x.longValue())
        case (x: java.lang.Short, ShortType) => Some(x.longValue())
        case (x: java.lang.Integer, IntegerType) => Some(x.longValue())
        case (x: java.lang.Long, LongType) => Some(x.longValue())
        case (x: Decimal, _: DecimalType) => Some(x.toBigDecimal)
        case (x: UTF8String, s: StringType) if s == StringType => Some(x.toString)
        case (x: java.lang.Integer, DateType) => Some(java.time.LocalDate.ofEpochDay(x.longValue()))
        case _ => None
      }
      converted.map(log.Literal.of)
    } catch { case NonFatal(_) => None }
}
