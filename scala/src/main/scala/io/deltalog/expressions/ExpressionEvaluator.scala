package io.deltalog.expressions

import Values.Operand

/**
 * Row-level evaluation of a [[Predicate]] with SQL three-valued logic. `Some(true)` = TRUE,
 * `Some(false)` = FALSE, `None` = NULL (unknown). Coercion rules: see [[Values]].
 *
 * `lookup` resolves a column name (as written in the predicate) to its typed value in canonical
 * form (see [[Literal]]); `None` or `Some(null)` is NULL. It may throw for unknown columns.
 * A future data-skipping evaluator (min/max/nullCount) can reuse [[Values.compare]].
 */
object ExpressionEvaluator {

  /** TRUE only: the usual filter semantics (a row / file is kept only when the predicate is TRUE). */
  def isTrue(p: Predicate, lookup: String => Option[Any]): Boolean = eval(p, lookup).contains(true)

  def eval(p: Predicate, lookup: String => Option[Any]): Option[Boolean] = {
    def value(e: Expression): Operand = e match {
      case Column(name) => Operand(lookup(name).map(Values.normalize).orNull, fromLiteral = false)
      case Literal(v) => Operand(Values.normalize(v), fromLiteral = true)
      case p: Predicate => Operand(evalP(p).map(b => b: Any).orNull, fromLiteral = false)
    }

    def cmp(l: Expression, r: Expression)(f: Int => Boolean): Option[Boolean] =
      Values.compare(value(l), value(r)).map(f)

    def evalP(p: Predicate): Option[Boolean] = p match {
      case AlwaysTrue => Some(true)
      case AlwaysFalse => Some(false)
      case EqualTo(l, r) => cmp(l, r)(_ == 0)
      case NotEqualTo(l, r) => cmp(l, r)(_ != 0)
      case LessThan(l, r) => cmp(l, r)(_ < 0)
      case LessThanOrEqual(l, r) => cmp(l, r)(_ <= 0)
      case GreaterThan(l, r) => cmp(l, r)(_ > 0)
      case GreaterThanOrEqual(l, r) => cmp(l, r)(_ >= 0)
      case NullSafeEqualTo(l, r) =>
        val (a, b) = (value(l), value(r))
        (a.value, b.value) match {
          case (null, null) => Some(true)
          case (null, _) | (_, null) => Some(false)
          // a column value that cannot be cast to the other side is "not equal"
          case _ => Some(Values.compare(a, b).contains(0))
        }
      case In(v, list) =>
        val a = value(v)
        if (a.value == null) {
          if (list.isEmpty) Some(false) else None
        } else {
          var sawNull = false
          val hit = list.exists { e =>
            Values.compare(a, value(e)) match {
              case Some(c) => c == 0
              case None => sawNull = true; false
            }
          }
          if (hit) Some(true) else if (sawNull) None else Some(false)
        }
      case IsNull(c) => Some(value(c).value == null)
      case IsNotNull(c) => Some(value(c).value != null)
      case StartsWith(c, prefix) =>
        value(c).value match {
          case null => None
          case s: String => Some(s.startsWith(prefix))
          case other => Some(Values.toDisplayString(other).startsWith(prefix))
        }
      // AND / OR are associative in three-valued logic: evaluate a whole chain iteratively,
      // left to right, stopping at the first FALSE (AND) / TRUE (OR).
      case _: And => chain(p, isAnd = true)
      case _: Or => chain(p, isAnd = false)
      case Not(c) => evalP(c).map(!_)
    }

    def chain(p: Predicate, isAnd: Boolean): Option[Boolean] = {
      val decisive = !isAnd // FALSE decides an AND, TRUE decides an OR
      val it = Predicate.flatten(p, isAnd).iterator
      var sawNull = false
      while (it.hasNext) {
        evalP(it.next()) match {
          case Some(b) if b == decisive => return Some(decisive)
          case Some(_) =>
          case None => sawNull = true
        }
      }
      if (sawNull) None else Some(!decisive)
    }

    evalP(p)
  }
}
