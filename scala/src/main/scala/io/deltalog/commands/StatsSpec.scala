package io.deltalog.commands

import java.util.Locale

import org.apache.spark.sql.types._

/**
 * Which columns get per-file statistics, as a tree over the data schema actually written (physical
 * names, partition columns left out). Built on the driver, shipped to the executors.
 *
 * A node is either a struct (its indexed children) or a leaf. Leaves of skipping-eligible types
 * (numbers, decimal, date, timestamp, timestamp_ntz, string) get min/max and nullCount; other
 * leaves (boolean, binary, array, map, ...) get nullCount only (digest §7.5).
 */
sealed trait StatsNode extends Serializable {
  def name: String
  def ordinal: Int
}

final case class StructStatsNode(name: String, ordinal: Int, numFields: Int, children: Seq[StatsNode])
  extends StatsNode

final case class LeafStatsNode(name: String, ordinal: Int, dataType: DataType) extends StatsNode

/**
 * @param fields            the indexed top-level columns
 * @param stringPrefixLength `delta.dataSkippingStringPrefixLength`
 */
final case class StatsSpec(fields: Seq[StatsNode], stringPrefixLength: Int) extends Serializable

object StatsSpec {
  val NumIndexedColsKey = "delta.dataSkippingNumIndexedCols"
  val StatsColumnsKey = "delta.dataSkippingStatsColumns"
  val StringPrefixLengthKey = "delta.dataSkippingStringPrefixLength"
  val DefaultNumIndexedCols = 32
  val DefaultStringPrefixLength = 32

  /**
   * The stats tree for `logicalData` (the table's data columns, logical names, in written order)
   * whose physical counterpart is `physicalData` (same shape, physical names).
   */
  def forTable(logicalData: StructType, physicalData: StructType, conf: Map[String, String],
      table: String): StatsSpec = {
    val prefix = conf.get(StringPrefixLengthKey).map { v =>
      v.trim.toIntOption.filter(_ >= 0).getOrElse(throw new InvalidWriteOptionException(StringPrefixLengthKey, v,
        "a non-negative whole number"))
    }.getOrElse(DefaultStringPrefixLength)
    val statsColumns = conf.get(StatsColumnsKey).map(_.trim).filter(_.nonEmpty)
    val fields = statsColumns match {
      case Some(list) => byColumnList(logicalData, physicalData, parseColumnList(list))
      case None =>
        val n = conf.get(NumIndexedColsKey).map { v =>
          v.trim.toIntOption.filter(_ >= -1).getOrElse(throw new InvalidWriteOptionException(NumIndexedColsKey, v,
            "a whole number >= -1"))
        }.getOrElse(DefaultNumIndexedCols)
        firstLeaves(physicalData, if (n < 0) Int.MaxValue else n)
    }
    StatsSpec(fields, prefix)
  }

  /** The first `budget` leaves in schema order (a struct is kept partially when the budget runs out). */
  private def firstLeaves(schema: StructType, budget: Int): Seq[StatsNode] = {
    var left = budget
    def walk(st: StructType): Seq[StatsNode] = st.fields.toSeq.zipWithIndex.flatMap { case (f, i) =>
      if (left <= 0) None
      else f.dataType match {
        case s: StructType =>
          val kids = walk(s)
          if (kids.isEmpty) None else Some(StructStatsNode(f.name, i, s.length, kids))
        case dt =>
          left -= 1
          Some(LeafStatsNode(f.name, i, dt))
      }
    }
    walk(schema)
  }

  /** `a, b.c, \`d.e\`` → paths; backticks quote names containing dots. */
  private[commands] def parseColumnList(list: String): Seq[Seq[String]] =
    splitOutsideBackticks(list, ',').map(_.trim).filter(_.nonEmpty).map { c =>
      splitOutsideBackticks(c, '.').map(p => p.trim.stripPrefix("`").stripSuffix("`").replace("``", "`"))
    }

  private def splitOutsideBackticks(s: String, sep: Char): Seq[String] = {
    val out = Seq.newBuilder[String]
    val cur = new StringBuilder
    var quoted = false
    s.foreach { ch =>
      if (ch == '`') { quoted = !quoted; cur += ch }
      else if (ch == sep && !quoted) { out += cur.toString; cur.clear() }
      else cur += ch
    }
    out += cur.toString
    out.result()
  }

  /** The listed columns (logical paths, case-insensitive); a struct includes all its leaves. */
  private def byColumnList(logical: StructType, physical: StructType, paths: Seq[Seq[String]]): Seq[StatsNode] = {
    def lc(s: String) = s.toLowerCase(Locale.ROOT)
    def walk(l: StructType, p: StructType, wanted: Seq[Seq[String]]): Seq[StatsNode] =
      l.fields.toSeq.zipWithIndex.flatMap { case (f, i) =>
        val mine = wanted.filter(w => w.nonEmpty && lc(w.head) == lc(f.name))
        if (mine.isEmpty) None
        else {
          val pf = p.fields(i)
          (f.dataType, pf.dataType) match {
            case (ls: StructType, ps: StructType) =>
              val whole = mine.exists(_.size == 1)
              val kids = if (whole) walk(ls, ps, ls.fields.toSeq.map(x => Seq(x.name))) else walk(ls, ps, mine.map(_.tail))
              if (kids.isEmpty) None else Some(StructStatsNode(pf.name, i, ps.length, kids))
            case (_, dt) if mine.exists(_.size == 1) => Some(LeafStatsNode(pf.name, i, dt))
            case _ => None
          }
        }
      }
    walk(logical, physical, paths)
  }
}
