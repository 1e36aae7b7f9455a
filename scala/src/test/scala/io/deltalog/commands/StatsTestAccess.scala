package io.deltalog.commands

/** Opens the package-private stats helpers to the ConnectorWrite* suites. */
object StatsTestAccess {
  def truncateMin(s: String, n: Int): String = StatsJson.truncateMin(s, n)
  def truncateMax(s: String, n: Int): String = StatsJson.truncateMax(s, n)
  def millis(micros: Long): Long = StatsJson.millis(micros)

  /** Dotted paths of the leaves of a stats spec, in order. */
  def leafPaths(spec: StatsSpec): Seq[String] = {
    def walk(n: StatsNode, prefix: String): Seq[String] = n match {
      case StructStatsNode(name, _, _, kids) => kids.flatMap(walk(_, s"$prefix$name."))
      case LeafStatsNode(name, _, _) => Seq(prefix + name)
    }
    spec.fields.flatMap(walk(_, ""))
  }
}
