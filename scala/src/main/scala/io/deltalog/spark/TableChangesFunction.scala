package io.deltalog.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.types.{ByteType, DateType, IntegerType, LongType, ShortType, StringType, TimestampNTZType,
  TimestampType}

import io.deltalog.spark.read.{ChangeFeedReader, DeltalogReader, InvalidReadOptionException}

/**
 * The change data feed as table-valued functions, as delta-spark names them:
 *
 * {{{
 *   SELECT * FROM table_changes('db.events', 2)            -- versions 2 .. latest
 *   SELECT * FROM table_changes('db.events', 2, 5)         -- versions 2 .. 5
 *   SELECT * FROM table_changes('db.events', '2024-01-31 12:00:00')
 *   SELECT * FROM table_changes_by_path('/data/events', 0)
 * }}}
 *
 * A bound is a version (an integer) or a timestamp (a string, date or timestamp). The rows are the
 * `readChangeFeed` read of the table (its columns plus `_change_type`, `_commit_version`,
 * `_commit_timestamp`), planned when the statement is analyzed.
 */
object TableChangesFunction {
  val ByName = "table_changes"
  val ByPath = "table_changes_by_path"

  type Description = (FunctionIdentifier, ExpressionInfo, Seq[Expression] => LogicalPlan)

  def descriptions: Seq[Description] = Seq(
    (FunctionIdentifier(ByName), info(ByName, "table_changes(tableName, start[, end])"), plan(ByName, _)),
    (FunctionIdentifier(ByPath), info(ByPath, "table_changes_by_path(path, start[, end])"), plan(ByPath, _)))

  private def info(name: String, usage: String): ExpressionInfo =
    new ExpressionInfo(getClass.getName, null, name, s"$usage - the change data feed of a deltalog table " +
      "between two versions or timestamps (inclusive)", "")

  private def plan(function: String, args: Seq[Expression]): LogicalPlan = {
    val spark = SparkSession.active
    if (args.length < 2 || args.length > 3) {
      throw new InvalidReadOptionException(null, s"$function takes a table, a start and an optional end " +
        s"(${args.length} arguments given): e.g. $function('${if (function == ByPath) "/data/t" else "db.t"}', 0)")
    }
    val target = constant(function, args.head, "the table") match {
      case s: String => s
      case other => throw new InvalidReadOptionException(null,
        s"$function: the first argument must be a string naming the table, not $other")
    }
    val path = if (function == ByPath) target
      else TableTarget.parse(target, spark.sessionState.sqlParser).resolve(spark, function)._1
    val options = bound(function, path, args(1), "starting") ++ args.lift(2).map(bound(function, path, _, "ending"))
      .getOrElse(Map.empty) + (DeltalogReader.ReadChangeFeed -> "true")
    val relation = ChangeFeedReader.createRelation(spark, path,
      org.apache.spark.sql.catalyst.util.CaseInsensitiveMap(options), DeltalogReader.hadoopConf(spark, Map.empty))
    LogicalRelation(relation)
  }

  /** `startingVersion` / `startingTimestamp` (or ending…) for one bound argument. */
  private def bound(function: String, table: String, e: Expression, side: String): Map[String, String] =
    e.dataType match {
      case ByteType | ShortType | IntegerType | LongType =>
        Map(s"${side}Version" -> constant(function, e, s"the $side version").toString)
      case StringType | DateType | TimestampType | TimestampNTZType =>
        val value = e.dataType match {
          case StringType => constant(function, e, s"the $side timestamp").toString
          case _ => org.apache.spark.sql.catalyst.expressions.Cast(e, StringType,
            Some(SparkSession.active.sessionState.conf.sessionLocalTimeZone)).eval().toString
        }
        Map(s"${side}Timestamp" -> value)
      case other => throw new InvalidReadOptionException(table,
        s"$function: the $side bound must be a version (integer) or a timestamp (string), not ${other.simpleString}")
    }

  private def constant(function: String, e: Expression, what: String): Any = {
    if (!e.foldable) {
      throw new InvalidReadOptionException(null, s"$function: $what must be a constant, not ${e.sql}")
    }
    val v = e.eval()
    if (v == null) throw new InvalidReadOptionException(null, s"$function: $what is NULL")
    v match {
      case s: org.apache.spark.unsafe.types.UTF8String => s.toString
      case other => other
    }
  }
}
