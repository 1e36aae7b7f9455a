package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.types._

import io.deltalog.actions.{AddFile, DomainMetadata, Metadata}
import io.deltalog.log.Snapshot
import io.deltalog.protocol.{Protocol, TableFeature}
import io.deltalog.schema.DeltaSchema

/**
 * Liquid clustering (protocol "Clustered Table"; delta-spark's clustered tables): the one owner of the
 * `delta.clustering` domain (`{"clusteringColumns":[["physical","path"],…]}`, physical names under
 * column mapping, plus `domainName`, as delta-spark 4.4 writes it), of the checks a clustering column must pass and
 * of the file tags that mark a file as clustered.
 *
 * A file is clustered when OPTIMIZE wrote it with `clusteringProvider = "liquid"` and the z-cube tags
 * delta-spark writes (`ZCUBE_ID`, `ZCUBE_ZORDER_BY` = the clustering columns' logical names as a JSON
 * array). OPTIMIZE clusters the files that are not ([[isUnclustered]]); a file clustered by other columns
 * (before an ALTER TABLE CLUSTER BY) or by another provider is only rewritten by `OPTIMIZE FULL`, as in
 * delta-spark.
 */
object ClusteredTable {
  val Domain = "delta.clustering"
  val Provider = "liquid"
  val FeatureProperty = "delta.feature.clustering"
  val ZCubeIdTag = "ZCUBE_ID"
  val ZCubeZOrderByTag = "ZCUBE_ZORDER_BY"
  /** delta-spark's limit on the number of clustering columns (a static conf there, default 4). */
  val NumColumnsLimitConf = "spark.databricks.delta.clusteredTable.numClusteringColumnsLimit"
  val DefaultNumColumnsLimit = 4

  private val mapper = new ObjectMapper()

  /** True when the protocol supports the `clustering` feature (delta-spark's "clustered table"). */
  def isClustered(protocol: Protocol): Boolean = protocol.isFeatureSupported(TableFeature.Clustering)

  /** The live `delta.clustering` domain of `snapshot`. */
  def domain(snapshot: Snapshot): Option[DomainMetadata] =
    snapshot.domainMetadata.find(d => d.domain == Domain && !d.removed)

  /** The clustering columns as physical paths stored in `domain` (a flat name is a path of one part). */
  def physicalColumns(domain: DomainMetadata): Seq[Seq[String]] =
    try {
      val cols = mapper.readTree(domain.configuration).get("clusteringColumns")
      if (cols == null || !cols.isArray) Nil
      else (0 until cols.size()).map { i =>
        val c = cols.get(i)
        if (c.isArray) (0 until c.size()).map(j => c.get(j).asText()) else Seq(c.asText())
      }
    } catch { case NonFatal(_) => Nil }

  /** The clustering columns of `snapshot` as logical dotted names (none when it is not clustered). */
  def logicalColumns(snapshot: Snapshot): Seq[String] = logicalPaths(snapshot).map(displayName)

  /** The clustering columns of `snapshot` as logical paths. */
  def logicalPaths(snapshot: Snapshot): Seq[Seq[String]] =
    domain(snapshot).toSeq.flatMap(d => physicalColumns(d).map(p => logicalPath(schemaOf(snapshot.metadata), p)))

  /** The domain action storing `logical` (dotted names resolved against `schema`) as physical paths. */
  def domainFor(schema: StructType, logical: Seq[Seq[String]]): DomainMetadata = {
    val paths = logical.map(p => physicalPath(schema, p))
    val json = paths.map(_.map(n => mapper.writeValueAsString(n)).mkString("[", ",", "]")).mkString("[", ",", "]")
    DomainMetadata(Domain, s"""{"clusteringColumns":$json,"domainName":"$Domain"}""")
  }

  /** The domain clearing the clustering columns (CLUSTER BY NONE, REPLACE without CLUSTER BY). */
  val emptyDomain: DomainMetadata = DomainMetadata(Domain, s"""{"clusteringColumns":[],"domainName":"$Domain"}""")

  def schemaOf(m: Metadata): StructType = DeltaSchema.fromJson(m.schemaString)

  /** Dotted display name of a path (parts with dots back-quoted). */
  def displayName(path: Seq[String]): String =
    path.map(p => if (p.contains(".")) s"`${p.replace("`", "``")}`" else p).mkString(".")

  /**
   * The clustering columns as paths resolved against `schema` (its spelling), refused as delta-spark
   * refuses them: more than the limit ([[NumColumnsLimitConf]]), a column that does not exist, a
   * duplicate, a partitioned table, a column whose type has no data skipping, a column without
   * statistics under the table's `delta.dataSkippingNumIndexedCols` / `delta.dataSkippingStatsColumns`.
   */
  def validate(schema: StructType, partitionColumns: Seq[String], conf: Map[String, String],
      columns: Seq[Seq[String]], limit: Int, table: String): Seq[Seq[String]] = {
    if (columns.size > limit) {
      throw new InvalidWriteException("DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS", table,
        s"Table $table: CLUSTER BY supports up to $limit clustering columns, but the table has ${columns.size} " +
          s"clustering columns (${columns.map(displayName).mkString(", ")}). Please remove the extra clustering columns.")
    }
    if (columns.nonEmpty && partitionColumns.nonEmpty) {
      throw new InvalidWriteException("DELTA_CLUSTER_BY_WITH_PARTITIONED_BY", table,
        s"Table $table: Clustering and partitioning cannot both be specified (partitioned by " +
          s"${partitionColumns.mkString(", ")}). Please remove partitionedBy if you want to create a Delta table " +
          "with clustering.")
    }
    val resolved = columns.map(c => resolve(schema, c, table))
    val dups = resolved.groupBy(_.map(_.toLowerCase(Locale.ROOT))).collect { case (_, v) if v.size > 1 => v.head }
    if (dups.nonEmpty) {
      throw new InvalidWriteException("DELTA_DUPLICATE_COLUMNS_FOUND", table,
        s"Table $table: CLUSTER BY names ${dups.map(displayName).mkString(", ")} more than once; name each " +
          "clustering column once.")
    }
    val typed = resolved.map(p => p -> fieldAt(schema, p).dataType)
    val unsupported = typed.filterNot { case (_, dt) => skippingEligible(dt) }
    if (unsupported.nonEmpty) {
      throw new InvalidWriteException("DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED", table,
        s"Table $table: CLUSTER BY is not supported because the following column(s): " +
          unsupported.map { case (p, dt) => s"${displayName(p)} : ${dt.sql}" }.mkString(", ") +
          " don't support data skipping. Cluster by numeric, string, date or timestamp columns.")
    }
    val physical = ColumnMappingWriter.physicalSchema(schema, ColumnMappingWriter.enabled(conf))
    val spec = StatsSpec.forTable(schema, physical, conf, table)
    val missing = resolved.filterNot(p => hasStats(spec.fields, physicalPath(schema, p)))
    if (missing.nonEmpty) {
      throw new InvalidWriteException("DELTA_CLUSTERING_COLUMN_MISSING_STATS", table,
        s"Table $table: Clustering requires clustering columns to have stats. Couldn't find clustering column(s) " +
          s"'${missing.map(displayName).mkString(", ")}' in stats schema (statistics are collected for " +
          s"${statsColumnNames(spec.fields).mkString(", ")}). Raise ${StatsSpec.NumIndexedColsKey} or list the " +
          s"columns in ${StatsSpec.StatsColumnsKey}, or cluster by columns that have statistics.")
    }
    resolved
  }

  /**
   * The clustering domain a write that creates or replaces the table's metadata commits, and the
   * clustering columns (logical names) for the operation's `clusterBy`:
   *  - CLUSTER BY: the columns checked ([[validate]]) and stored;
   *  - a CREATE / REPLACE statement without CLUSTER BY on a table that has a domain: the domain
   *    emptied, as delta-spark does (a clustered table replaced by a partitioned one is refused);
   *  - otherwise (an overwrite with `overwriteSchema`) the domain is left as it is.
   *
   * @param isStatement the write is a CREATE / REPLACE statement (not a data-frame overwrite)
   */
  def forNewMetadata(clusterBy: Option[Seq[Seq[String]]], schema: StructType, meta: Metadata, snapshot: Snapshot,
      exists: Boolean, isStatement: Boolean, sessionConf: String => Option[String],
      table: String): (Seq[DomainMetadata], Seq[String]) = {
    val current = if (exists) domain(snapshot) else None
    clusterBy match {
      case Some(cols) =>
        val resolved = validate(schema, meta.partitionColumns, meta.configuration, cols, numColumnsLimit(sessionConf),
          table)
        (Seq(domainFor(schema, resolved)), resolved.map(displayName))
      case None if isStatement && current.isDefined =>
        if (meta.partitionColumns.nonEmpty && physicalColumns(current.get).nonEmpty) {
          throw new InvalidWriteException("DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE", table,
            s"Table $table: Replacing a clustered Delta table with a partitioned table is not allowed; the table is " +
              s"clustered by ${logicalColumns(snapshot).mkString(", ")}. Replace it with CLUSTER BY instead, or run " +
              "ALTER TABLE ... CLUSTER BY NONE first.")
        }
        (Seq(emptyDomain), Nil)
      case None => (Nil, Nil)
    }
  }

  /** The limit on the number of clustering columns in this session. */
  def numColumnsLimit(conf: String => Option[String]): Int =
    conf(NumColumnsLimitConf).flatMap(_.trim.toIntOption).filter(_ > 0).getOrElse(DefaultNumColumnsLimit)

  /**
   * Whether `f` is not clustered yet: no z-cube tags, and no clustering provider or `liquid`. A file of
   * a z-cube (clustered by the current or by other columns) or of another provider is not.
   */
  def isUnclustered(f: AddFile): Boolean =
    f.clusteringProvider.forall(_ == Provider) && !f.tags.exists(t => t.contains(ZCubeIdTag) && t.contains(ZCubeZOrderByTag))

  /** `f` marked as clustered by `columns` in z-cube `zCubeId` (delta-spark's tags, provider `liquid`). */
  def markClustered(f: AddFile, columns: Seq[String], zCubeId: String): AddFile = {
    val tags = f.tags.getOrElse(Map.empty) + (ZCubeIdTag -> zCubeId) +
      (ZCubeZOrderByTag -> columns.map(c => mapper.writeValueAsString(c)).mkString("[", ",", "]"))
    f.copy(clusteringProvider = Some(Provider), tags = Some(tags))
  }

  /** Types with min/max statistics (delta-spark's `SkippingEligibleDataType`). */
  def skippingEligible(dt: DataType): Boolean = dt match {
    case _: NumericType | DateType | TimestampType | TimestampNTZType | StringType => true
    case _ => false
  }

  private def resolve(schema: StructType, path: Seq[String], table: String): Seq[String] = {
    var st: DataType = schema
    path.map { part =>
      val field = st match {
        case s: StructType => s.fields.find(_.name.equalsIgnoreCase(part))
        case _ => None
      }
      val f = field.getOrElse(throw new InvalidWriteException("DELTA_COLUMN_NOT_FOUND_IN_SCHEMA", table,
        s"Table $table: clustering column ${displayName(path)} does not exist in the schema (columns: " +
          s"${schema.fieldNames.mkString(", ")}). Name a column of the table in CLUSTER BY."))
      st = f.dataType
      f.name
    }
  }

  private def fieldAt(schema: StructType, path: Seq[String]): StructField = {
    var st: DataType = schema
    var out: StructField = null
    path.foreach { part =>
      out = st.asInstanceOf[StructType].fields.find(_.name.equalsIgnoreCase(part)).get
      st = out.dataType
    }
    out
  }

  /** The physical path of a logical one (physical names from the column-mapping metadata, when present). */
  def physicalPath(schema: StructType, logical: Seq[String]): Seq[String] = {
    var st: DataType = schema
    logical.map { part =>
      st match {
        case s: StructType => s.fields.find(_.name.equalsIgnoreCase(part)) match {
          case Some(f) => st = f.dataType; ColumnMappingWriter.physicalName(f)
          case None => st = NullType; part
        }
        case _ => part
      }
    }
  }

  /** The logical dotted name of a physical path (the path as stored when no field matches). */
  def logicalName(schema: StructType, physical: Seq[String]): String = displayName(logicalPath(schema, physical))

  /** The logical path of a physical one (parts as stored where no field matches). */
  def logicalPath(schema: StructType, physical: Seq[String]): Seq[String] = {
    var st: DataType = schema
    physical.map { part =>
      st match {
        case s: StructType => s.fields.find(f => ColumnMappingWriter.physicalName(f) == part)
            .orElse(s.fields.find(_.name.equalsIgnoreCase(part))) match {
          case Some(f) => st = f.dataType; f.name
          case None => st = NullType; part
        }
        case _ => part
      }
    }
  }


  private def hasStats(nodes: Seq[StatsNode], path: Seq[String]): Boolean = path match {
    case Seq(last) => nodes.exists {
      case LeafStatsNode(n, _, dt) => n == last && skippingEligible(dt)
      case _ => false
    }
    case head +: rest => nodes.exists {
      case StructStatsNode(n, _, _, kids) => n == head && hasStats(kids, rest)
      case _ => false
    }
    case _ => false
  }

  private def statsColumnNames(nodes: Seq[StatsNode], prefix: String = ""): Seq[String] = nodes.flatMap {
    case LeafStatsNode(n, _, _) => Seq(prefix + n)
    case StructStatsNode(n, _, _, kids) => statsColumnNames(kids, s"$prefix$n.")
  }
}
