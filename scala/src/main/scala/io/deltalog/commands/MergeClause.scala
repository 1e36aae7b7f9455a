package io.deltalog.commands

import org.apache.spark.sql.Column

/**
 * One `WHEN … THEN …` clause of a MERGE.
 *
 * @param kind        [[MergeClause.Matched]], [[MergeClause.NotMatched]] (by target) or [[MergeClause.NotMatchedBySource]]
 * @param action      `update`, `delete` or `insert` (delta-spark's `actionType`)
 * @param condition   the clause's `AND …` condition, if any
 * @param assignments (target column path, value) pairs; empty for `delete` and for `*`
 * @param star        `UPDATE SET *` / `INSERT *`: every target column from the source column of that name
 */
final case class MergeClause(
    kind: String,
    action: String,
    condition: Option[Column],
    assignments: Seq[(Seq[String], Column)] = Nil,
    star: Boolean = false) {
  require(MergeClause.Kinds.contains(kind), s"unknown MERGE clause kind $kind")
  require(Set("update", "delete", "insert").contains(action), s"unknown MERGE action $action")

  /** As delta-spark names the clause in messages (`WHEN MATCHED`, …). */
  def title: String = kind match {
    case MergeClause.Matched => "WHEN MATCHED"
    case MergeClause.NotMatched => "WHEN NOT MATCHED"
    case _ => "WHEN NOT MATCHED BY SOURCE"
  }
}

object MergeClause {
  val Matched = "matched"
  val NotMatched = "notMatched"
  val NotMatchedBySource = "notMatchedBySource"
  val Kinds: Set[String] = Set(Matched, NotMatched, NotMatchedBySource)

  def matchedUpdate(condition: Option[Column], assignments: Seq[(Seq[String], Column)]): MergeClause =
    MergeClause(Matched, "update", condition, assignments)
  def matchedUpdateAll(condition: Option[Column]): MergeClause = MergeClause(Matched, "update", condition, star = true)
  def matchedDelete(condition: Option[Column]): MergeClause = MergeClause(Matched, "delete", condition)
  def notMatchedInsert(condition: Option[Column], assignments: Seq[(Seq[String], Column)]): MergeClause =
    MergeClause(NotMatched, "insert", condition, assignments)
  def notMatchedInsertAll(condition: Option[Column]): MergeClause = MergeClause(NotMatched, "insert", condition, star = true)
  def notMatchedBySourceUpdate(condition: Option[Column], assignments: Seq[(Seq[String], Column)]): MergeClause =
    MergeClause(NotMatchedBySource, "update", condition, assignments)
  def notMatchedBySourceDelete(condition: Option[Column]): MergeClause =
    MergeClause(NotMatchedBySource, "delete", condition)
}
