package io.deltalog.txn

import java.util.Locale

import io.deltalog.exceptions.InvalidTablePropertyException

/**
 * Isolation level of a commit (digest §8.2), recorded in `commitInfo.isolationLevel`.
 *
 *  - [[Serializable]]: every read and write is serializable in commit order (the default).
 *  - [[WriteSerializable]]: writes are serializable; a transaction may commit although a concurrent
 *    blind append added files it would have read (it is ordered before that append).
 *  - [[SnapshotIsolation]]: used only for commits that change no data (all file actions have
 *    `dataChange = false`); the concurrent-append check is skipped.
 */
sealed abstract class IsolationLevel(val name: String) {
  override def toString: String = name
}

case object Serializable extends IsolationLevel("Serializable")
case object WriteSerializable extends IsolationLevel("WriteSerializable")
case object SnapshotIsolation extends IsolationLevel("SnapshotIsolation")

object IsolationLevel {
  /** Table property selecting the level of data-changing commits. */
  val TableProperty = "delta.isolationLevel"

  val Default: IsolationLevel = Serializable

  val all: Seq[IsolationLevel] = Seq(Serializable, WriteSerializable, SnapshotIsolation)

  /** The level called `name` (case-insensitive). */
  def fromName(name: String): Option[IsolationLevel] =
    all.find(_.name.toLowerCase(Locale.ROOT) == Option(name).map(_.trim.toLowerCase(Locale.ROOT)).orNull)

  /**
   * The table's level from `delta.isolationLevel`: Serializable (default) or WriteSerializable;
   * anything else raises `DELTA_INVALID_ISOLATION_LEVEL`.
   */
  def fromTableProperties(conf: Map[String, String]): IsolationLevel = conf.get(TableProperty) match {
    case None => Default
    case Some(v) => fromName(v) match {
      case Some(l @ (Serializable | WriteSerializable)) => l
      case _ => throw new InvalidTablePropertyException("DELTA_INVALID_ISOLATION_LEVEL",
        s"$TableProperty='$v' is not a valid table isolation level; use Serializable or WriteSerializable.")
    }
  }
}
