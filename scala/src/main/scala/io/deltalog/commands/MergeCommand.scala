package io.deltalog.commands

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.{AnalysisException, Column, DataFrame}
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, AttributeSet, EqualNullSafe, EqualTo, Expression,
  GreaterThanOrEqual, LessThanOrEqual, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join}
import org.apache.spark.sql.classic.{Dataset => ClassicDataset, SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.{ArrayType, BooleanType, DataType, IntegerType, MapType, StructType}
import org.apache.spark.storage.StorageLevel
import org.slf4j.LoggerFactory

import io.deltalog.actions.{AddFile, Metadata}
import io.deltalog.log.DeltaLog
import io.deltalog.txn.Operation

/** The outcome of a MERGE (delta-spark's result row) and the committed version (-1: nothing committed). */
final case class MergeResult(numUpdated: Long, numDeleted: Long, numInserted: Long, version: Long) {
  def numAffected: Long = numUpdated + numDeleted + numInserted
}

/**
 * `MERGE INTO target USING source ON condition WHEN …`: one transaction applying the clauses
 * (digest and delta-spark semantics):
 *
 *  - A target row and a source row satisfying `condition` are *matched*: the first `WHEN MATCHED`
 *    clause whose condition holds updates or deletes the target row. A target row matched by more
 *    than one source row for which a matched clause applies fails the statement with
 *    `DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE` (nothing written), except when the only
 *    matched clause is an unconditional DELETE.
 *  - A source row matching no target row goes to the first `WHEN NOT MATCHED` clause whose
 *    condition holds (INSERT); a target row matching no source row to the first
 *    `WHEN NOT MATCHED BY SOURCE` clause (UPDATE or DELETE).
 *  - Every clause but the last of each kind must have a condition.
 *
 * Execution: conjuncts of `condition` on target columns only prune files by partition values and
 * statistics, and an equality `target.k = source.k` skips every file whose bounds of `k` hold no
 * source key ([[SourceKeys]]; a large source: outside the keys' range). Pass 1 joins
 * the candidate files' rows with the source (inner, or left outer with not-matched-by-source clauses)
 * to find the files holding changed rows (and, with not-matched clauses, matched rows); pass 2
 * joins only those files with the source (left or full outer) and writes the result
 * ([[RowLevelRewrite]]: copy-on-write or deletion vectors, change data, row tracking). A MERGE with
 * only not-matched clauses anti-joins the source with the candidate rows and appends.
 *
 * Idempotent: with the session's `spark.databricks.delta.write.txnAppId` / `txnVersion` set, a MERGE
 * the table already recorded is skipped and the commit carries the `txn` action ([[IdempotentDml]]).
 *
 * Schema evolution (`withSchemaEvolution`, or `spark.databricks.delta.schema.autoMerge.enabled`):
 * source columns (and nested fields) that `UPDATE SET *` / `INSERT *` would write, or that an explicit
 * assignment names (`UPDATE SET newcol = …`, `INSERT (…, newcol)`), and the target lacks are added to
 * the table's schema in the same commit (see [[migrationSchema]]).
 *
 * @param source      the source rows; column references in conditions and values resolve against
 *                    the target (qualified by `targetAlias` when given) and the source (by its own alias)
 */
final class MergeCommand(
    spark: ClassicSession,
    path: String,
    source: DataFrame,
    targetAlias: Option[String],
    condition: Column,
    clauses: Seq[MergeClause],
    schemaEvolution: Boolean = false,
    tableName: Option[String] = None,
    hadoopOptions: Map[String, String] = Map.empty) {
  import MergeCommand._
  import RowChanges._

  private def lc(s: String) = s.toLowerCase(Locale.ROOT)

  def run(): MergeResult = {
    val started = System.nanoTime()
    checkClauses(tableName.getOrElse(path))
    val DmlSupport.Opened(hadoopConf, deltaLog, table, txn) = DmlSupport.open(spark, path, tableName, hadoopOptions, "MERGE")
    if (IdempotentDml.hasBeenExecuted(spark, txn, table, "MERGE")) return MergeResult(0L, 0L, 0L, -1L)
    val evolve = schemaEvolution ||
      spark.conf.getOption(AutoMergeKey).exists(_.trim.equalsIgnoreCase("true"))
    val sourceSchema = source.schema
    val evolved: Option[Metadata] = if (!evolve) None else {
      val current = WriteIntoDeltalog.parseSchema(txn.metadata.schemaString)
      val migration = migrationSchema(current, sourceSchema)
      val merged = if (migration.isEmpty) current
        else WriteSchema.mergedSchema(current, migration, mergeSchema = true, table, txn.readVersion)
      if (merged == current) None
      else Some(WriteIntoDeltalog.withColumnMapping(txn.metadata.copy(schemaString = merged.json)))
    }
    val rw = new RowLevelRewrite(spark, txn, hadoopConf, table, "MERGE", evolved)
    val schema = rw.schema
    val alias = targetAlias.getOrElse(DefaultTargetAlias)

    // a source that is not deterministic is read once (it is joined twice)
    val materialize = !source.asInstanceOf[ClassicDataset[_]].queryExecution.analyzed.deterministic
    val materializeStart = System.nanoTime()
    val src = if (materialize) source.persist(StorageLevel.MEMORY_AND_DISK) else source
    if (materialize) src.count()
    val materializeTimeMs = if (materialize) (System.nanoTime() - materializeStart) / 1000000L else 0L
    try {
      val sourceRows = spark.sparkContext.longAccumulator("deltalog merge source rows")
      val counting = udf(() => { sourceRows.add(1L); true }).asNondeterministic()
      val s = src.withColumn(SourceMark, lit(true))
      def target(rows: DataFrame): DataFrame = rows.withColumn(TargetMark, lit(true)).as(alias)
      def old(name: String): Column = SparkInternals.column(UnresolvedAttribute(Seq(alias, name)))

      // ---------------------------------------------------------- the condition, resolved once
      val (joinCond, targetAttrs, sourceAttrs) = analyzeCondition(target(rw.reader.read(Nil)), s, table)
      DmlSupport.checkPlain(joinCond, table, "MERGE", "search condition")
      val targetOnly = DmlSupport.conjuncts(joinCond).filter(c => c.references.nonEmpty &&
        c.references.subsetOf(targetAttrs))

      // ---------------------------------------------------------- clause columns
      val assign = new Assignments(spark, schema, table, "MERGE")
      val indexed = clauses.zipWithIndex
      def cond(c: MergeClause): Column = c.condition.map(x => coalesce(x, lit(false))).getOrElse(lit(true))
      def firstOf(kind: String): Column = {
        val cs = indexed.filter(_._1.kind == kind)
        if (cs.isEmpty) lit(null).cast(IntegerType)
        else cs.tail.foldLeft(when(cond(cs.head._1), lit(cs.head._2))) { case (acc, (c, i)) => acc.when(cond(c), lit(i)) }
      }
      val tP = col(TargetMark).isNotNull
      val sP = col(SourceMark).isNotNull
      val clauseIdx = when(tP && sP, firstOf(MergeClause.Matched)).when(tP, firstOf(MergeClause.NotMatchedBySource))
        .otherwise(firstOf(MergeClause.NotMatched))
      def byIndex(value: (MergeClause, Int) => Option[Column], default: Column,
          among: Seq[(MergeClause, Int)] = indexed): Column = {
        val cases = among.flatMap { case (c, i) => value(c, i).map(v => (i, v)) }
        if (cases.isEmpty) default
        else cases.tail.foldLeft(when(col(ClauseColumn) === cases.head._1, cases.head._2)) {
          case (acc, (i, v)) => acc.when(col(ClauseColumn) === i, v)
        }.otherwise(default)
      }
      val actionCol = byIndex((c, _) => Some(lit(actionCode(c))), when(tP, lit(Keep)).otherwise(lit(Ignore)))
      val bySourceCol = byIndex((c, _) => Some(lit(c.kind == MergeClause.NotMatchedBySource)), lit(false))
      val assignedIdentity = scala.collection.mutable.Set[String]()
      lazy val newValuesCol = byIndex((c, _) => c.action match {
        case "delete" => None
        case "update" => Some(assign.updated(updateAssignments(c, schema, sourceSchema, s, evolve, table), old))
        case _ =>
          val a = insertAssignments(c, schema, sourceSchema, s, evolve, table)
          assignedIdentity ++= a.map(x => lc(x._1))
          Some(assign.inserted(a, f => WriteRules.identityValues(f, table)))
      }, lit(null))
      // the values of inserted rows alone (resolvable over source columns only: the insert side of pass 2)
      lazy val insertValuesCol = byIndex((c, _) => Some(assign.inserted(insertAssignments(c, schema, sourceSchema, s,
        evolve, table), f => WriteRules.identityValues(f, table))), lit(null),
        indexed.filter(_._1.kind == MergeClause.NotMatched))
      val anyMatchedCond = indexed.filter(_._1.kind == MergeClause.Matched).map(x => cond(x._1))
        .reduceOption(_ || _).getOrElse(lit(false))
      val targetCols: Seq[Column] = schema.fieldNames.toSeq.map(n => old(n).as(n)) ++
        rw.rowIds.toSeq.flatMap(r => Seq(old(r.idColumn).as(r.idColumn), old(r.versionColumn).as(r.versionColumn))) ++
        Seq(old(TouchedFiles.FileColumn).as(TouchedFiles.FileColumn),
          old(TouchedFiles.RowIndexColumn).as(TouchedFiles.RowIndexColumn))

      val matchedClauses = clauses.filter(_.kind == MergeClause.Matched)
      val notMatchedClauses = clauses.filter(_.kind == MergeClause.NotMatched)
      val bySourceClauses = clauses.filter(_.kind == MergeClause.NotMatchedBySource)
      val multiMatchAllowed = matchedClauses.size == 1 && matchedClauses.head.action == "delete" &&
        matchedClauses.head.condition.isEmpty

      // ---------------------------------------------------------- candidate files
      // recorded for conflict detection: the target-only conjuncts of the condition (delta-spark's
      // getTargetOnlyPredicates); not-matched-by-source clauses act on every target row, so they read all
      val candidates0 =
        if (bySourceClauses.nonEmpty) txn.filterFiles(Seq(io.deltalog.expressions.AlwaysTrue))
        else txn.filterFiles(targetOnly.flatMap(c => ReadPredicates.of(c, rw.partitionCols)) ++
          (if (notMatchedClauses.isEmpty) matchedTargetPredicate(target(rw.reader.read(Nil)), s, matchedClauses,
            rw.partitionCols).toSeq else Nil))
      val tz = spark.sessionState.conf.sessionLocalTimeZone
      val proofs = targetOnly.map(c => new StatsProof(c, rw.partitionCols, rw.physicalNames, tz))
      // not-matched-by-source clauses act on every target row: only partition pruning applies then
      val candidates = if (bySourceClauses.nonEmpty) candidates0 else {
        // each file's statistics parsed once for both tests
        val facts = candidates0.map(f => new FileFacts(f, rw.physicalNames))
          .filterNot(f => proofs.exists(_.prove(f)._2))
        val byKeys = if (facts.isEmpty) Nil else sourceKeyExclusions(joinCond, targetAttrs, sourceAttrs, s, rw, tz)
        facts.filterNot(f => byKeys.exists(_(f))).map(_.file)
      }

      // target columns of an inserted row: null
      val blankTarget: Seq[Column] = schema.fields.toSeq.map(f => lit(null).cast(f.dataType).as(f.name)) ++
        rw.rowIds.toSeq.flatMap(r => Seq(lit(null).cast("long").as(r.idColumn), lit(null).cast("long").as(r.versionColumn))) ++
        Seq(lit(null).cast("string").as(TouchedFiles.FileColumn), lit(null).cast("long").as(TouchedFiles.RowIndexColumn))
      val broadcastSource = hasEquiKey(joinCond, targetAttrs, sourceAttrs) && smallSource(s)

      val scanStart = System.nanoTime()
      val insertOnly = matchedClauses.isEmpty && bySourceClauses.isEmpty
      var multi = false
      val touched: Seq[rw.Touched] = if (insertOnly) Nil else {
        val pass1 = (rows: DataFrame) => {
          val joined = target(rows).join(s.filter(counting()), condition,
            if (bySourceClauses.isEmpty) "inner" else "left_outer")
          val acted = joined.select(col("*"), clauseIdx.as(ClauseColumn))
            .select(old(TouchedFiles.FileColumn).as(TouchedFiles.FileColumn),
              old(TouchedFiles.RowIndexColumn).as(TouchedFiles.RowIndexColumn),
              actionCol.as(ActionColumn), bySourceCol.as(BySourceColumn), (tP && sP).as(MatchedColumn),
              when(tP && sP && anyMatchedCond, 1).otherwise(0).as(MatchesColumn))
          acted.groupBy(col(TouchedFiles.FileColumn), col(TouchedFiles.RowIndexColumn))
            .agg(max(col(ActionColumn)).as(ActionColumn), max(col(BySourceColumn)).as(BySourceColumn),
              max(col(MatchedColumn)).as(MatchedColumn), sum(col(MatchesColumn)).as(MatchesColumn))
            .withColumn(ActionColumn, when(col(MatchesColumn) > 1 && !lit(multiMatchAllowed), lit(MultiMatch))
              .otherwise(col(ActionColumn)))
        }
        val t = rw.findTouched(candidates, pass1,
          alsoMatched = if (notMatchedClauses.nonEmpty) Some(col(MatchedColumn)) else None,
          flagged = Some(col(MatchesColumn) > 1))
        if (t.exists(_.flagged > 0) && !multiMatchAllowed) throw multipleMatches(table)
        // pass 2 deduplicates target rows only when some row was matched more than once
        multi = t.exists(_.flagged > 0)
        t
      }
      val scanTimeMs = (System.nanoTime() - scanStart) / 1000000L

      // ---------------------------------------------------------- pass 2 and the commit
      val pass2: DataFrame => DataFrame = if (insertOnly) { _ =>
        val anti = s.filter(counting()).join(target(rw.reader.read(candidates)), condition, "left_anti")
        anti.withColumn(TargetMark, lit(null).cast(BooleanType)).select(col("*"), clauseIdx.as(ClauseColumn))
          .select(blankTarget ++ Seq(actionCol.as(ActionColumn), newValuesCol.as(NewValuesColumn)): _*)
      } else { rows =>
        // with deletion vectors only changed (matched or by-source) and inserted rows are written
        val targetJoin = if (rw.dvMode && bySourceClauses.isEmpty) "inner" else "left_outer"
        val acted = if (broadcastSource) {
          // a small source is broadcast: the touched files' rows stream through a hash join (no
          // shuffle or sort of the target); not-matched source rows (inserts) come from an anti join
          // with the target rows that match some source row (a broadcast semi join), which together
          // are exactly the rows the full outer join would give
          val changed = target(rows).join(broadcast(s), condition, targetJoin).select(col("*"), clauseIdx.as(ClauseColumn))
            .select(targetCols ++ Seq(actionCol.as(ActionColumn), newValuesCol.as(NewValuesColumn),
              bySourceCol.as(BySourceColumn)): _*)
          if (notMatchedClauses.isEmpty) changed
          else {
            val matchedTarget = target(rows).join(broadcast(s), condition, "left_semi")
            val inserts = s.join(matchedTarget, condition, "left_anti").withColumn(TargetMark, lit(null).cast(BooleanType))
              .select(col("*"), firstOf(MergeClause.NotMatched).as(ClauseColumn))
              .select(blankTarget ++ Seq(actionCol.as(ActionColumn), insertValuesCol.as(NewValuesColumn),
                lit(false).as(BySourceColumn)): _*)
            changed.unionByName(inserts)
          }
        } else {
          val joinType = if (notMatchedClauses.nonEmpty) "full_outer" else targetJoin
          target(rows).join(s, condition, joinType).select(col("*"), clauseIdx.as(ClauseColumn))
            .select(targetCols ++ Seq(actionCol.as(ActionColumn), newValuesCol.as(NewValuesColumn),
              bySourceCol.as(BySourceColumn)): _*)
        }
        if (!multi) acted
        else acted.withColumn(DedupColumn, when(col(TouchedFiles.FileColumn).isNull, monotonically_increasing_id()))
          .dropDuplicates(TouchedFiles.FileColumn, TouchedFiles.RowIndexColumn, DedupColumn).drop(DedupColumn)
      }
      // evaluated for the identity columns inserts fill in
      newValuesCol
      val identity = if (notMatchedClauses.isEmpty) Nil else assign.identityColumns(assignedIdentity.toSet)
      val predicate = DmlSupport.predicateText(joinCond)
      val probe = target(rw.reader.read(Nil)).join(s, condition, "full_outer")
      def clauseParams(cs: Seq[MergeClause]) = cs.map(c => (c.action, c.condition.map(x => conditionText(probe, x))))
      val outcome = rw.commit(touched, pass2, withInserts = notMatchedClauses.nonEmpty, identityColumns = identity,
        scanTimeMs = scanTimeMs,
        op = o => Operation.merge(predicate, clauseParams(matchedClauses), clauseParams(notMatchedClauses),
          clauseParams(bySourceClauses)).withMetrics(metrics(o, touched, sourceRows.value, started, materializeTimeMs)),
        beforeCommit = () => DeleteCommand.runBeforeCommitHook(path), setTxn = () => IdempotentDml.setTransaction(spark))
      outcome match {
        case None =>
          log.info(s"Table $table: MERGE changed no rows; nothing committed.")
          MergeResult(0L, 0L, 0L, -1L)
        case Some(o) => MergeResult(o.numUpdated, o.numDeleted, o.numInserted, o.version)
      }
    } finally {
      if (materialize) src.unpersist()
    }
  }

  /** delta-spark's rules on the clauses (at least one; every clause but the last of a kind has a condition). */
  private def checkClauses(table: String): Unit = {
    if (clauses.isEmpty) {
      throw new InvalidWriteException("DELTA_MERGE_MISSING_WHEN", table,
        s"Table $table: a MERGE needs at least one WHEN clause; nothing was changed.")
    }
    Seq(MergeClause.Matched -> "MATCHED", MergeClause.NotMatched -> "NOT_MATCHED",
      MergeClause.NotMatchedBySource -> "NOT_MATCHED_BY_SOURCE").foreach { case (kind, code) =>
      val cs = clauses.filter(_.kind == kind)
      cs.dropRight(1).find(_.condition.isEmpty).foreach { c =>
        throw new InvalidWriteException(s"DELTA_NON_LAST_${code}_CLAUSE_OMIT_CONDITION", table,
          s"Table $table: when there is more than one ${c.title} clause in a MERGE, only the last one can omit " +
            "the condition; nothing was changed. Add a condition, or move the clause last.")
      }
    }
    clauses.foreach { c =>
      val ok = c.kind match {
        case MergeClause.NotMatched => c.action == "insert"
        case _ => c.action != "insert"
      }
      if (!ok) throw new InvalidWriteException("DELTA_MERGE_INVALID_CLAUSE", table,
        s"Table $table: ${c.title} cannot ${c.action.toUpperCase(Locale.ROOT)}; nothing was changed.")
    }
  }

  /**
   * The source fields schema evolution adds to the target (delta-spark 4.4's rule): with a `*` clause
   * every source field; otherwise the source fields an UPDATE / INSERT assignment names (by path,
   * case-insensitively) that the target lacks, a new field whole, an existing struct down to its
   * assigned new fields (assigned whole, `SET st = s.st`: all its new nested fields). Fields the target
   * has keep the target's type.
   */
  private def migrationSchema(target: StructType, source: StructType): StructType = {
    val acting = clauses.filter(_.kind != MergeClause.NotMatchedBySource)
    if (acting.exists(_.star)) return source
    val paths = acting.flatMap(_.assignments.map(_._1.map(lc)))
    def under(p: Seq[String]) = paths.exists(q => q.size > p.size && q.startsWith(p))
    def filter(src: StructType, tgt: Option[StructType], base: Seq[String]): StructType = StructType(src.fields.flatMap { f =>
      val p = base :+ lc(f.name)
      val existing = tgt.flatMap(_.fields.find(x => lc(x.name) == lc(f.name)))
      (f.dataType, existing.map(_.dataType)) match {
        case (_, None) if paths.contains(p) => Some(f)
        // a struct the target has, assigned whole (`SET st = s.st`): its nested fields the target lacks
        case (st: StructType, Some(ts: StructType)) if paths.contains(p) =>
          Some(newNested(st, ts)).filter(_.nonEmpty).map(x => f.copy(dataType = x))
        case (st: StructType, None) if under(p) =>
          Some(filter(st, None, p)).filter(_.nonEmpty).map(x => f.copy(dataType = x))
        case (st: StructType, Some(ts: StructType)) if under(p) =>
          Some(filter(st, Some(ts), p)).filter(_.nonEmpty).map(x => f.copy(dataType = x))
        case _ => None
      }
    }.toSeq)
    filter(source, Some(target), Nil)
  }

  /** The fields of `source` (nested ones too) that `target` lacks, as a struct shaped like `source`. */
  private def newNested(source: StructType, target: StructType): StructType = StructType(source.fields.flatMap { f =>
    target.fields.find(x => lc(x.name) == lc(f.name)).map(_.dataType) match {
      case None => Some(f)
      case Some(ts: StructType) => f.dataType match {
        case st: StructType => Some(newNested(st, ts)).filter(_.nonEmpty).map(x => f.copy(dataType = x))
        case _ => None
      }
      case _ => None
    }
  }.toSeq)

  /**
   * delta-spark's extra read predicate of a MERGE with only matched clauses: the OR over those clauses
   * of the target-only conjuncts of each clause's condition (a target row satisfying none is left
   * alone); None when it is constantly true.
   */
  private def matchedTargetPredicate(t: DataFrame, s: DataFrame, clauses: Seq[MergeClause],
      partitionCols: Set[String]): Option[io.deltalog.expressions.Predicate] = {
    import io.deltalog.expressions.{AlwaysTrue, Predicate => LogPredicate}
    val perClause = clauses.map { c =>
      c.condition.fold[LogPredicate](AlwaysTrue) { x =>
        val plan = try Some(t.join(s, condition, "inner").where(x).asInstanceOf[ClassicDataset[_]].queryExecution.analyzed)
          catch { case NonFatal(_) => None }
        plan.flatMap(_.collectFirst { case Filter(cond, j: Join) => (cond, j.left.outputSet) }) match {
          case Some((cond, targetAttrs)) =>
            val targetOnly = DmlSupport.conjuncts(cond).filter(e => e.references.nonEmpty && e.references.subsetOf(targetAttrs))
            LogPredicate.and(targetOnly.flatMap(e => ReadPredicates.of(e, partitionCols)))
          case None => AlwaysTrue
        }
      }
    }
    if (perClause.contains(AlwaysTrue)) None else Some(LogPredicate.or(perClause))
  }

  /** True when a conjunct of `cond` equates an expression of target columns with one of source columns. */
  private def hasEquiKey(cond: Expression, targetAttrs: AttributeSet, sourceAttrs: AttributeSet): Boolean = {
    def side(e: Expression, attrs: AttributeSet) = e.references.nonEmpty && e.references.subsetOf(attrs)
    DmlSupport.conjuncts(cond).exists {
      case EqualTo(a, b) => (side(a, targetAttrs) && side(b, sourceAttrs)) || (side(b, targetAttrs) && side(a, sourceAttrs))
      case EqualNullSafe(a, b) =>
        (side(a, targetAttrs) && side(b, sourceAttrs)) || (side(b, targetAttrs) && side(a, sourceAttrs))
      case _ => false
    }
  }

  /**
   * True when the source is small enough to broadcast in pass 2: Spark's size estimate of it at most
   * [[BroadcastSourceKey]] bytes (default [[DefaultBroadcastSourceBytes]]; -1 never broadcasts).
   */
  private def smallSource(s: DataFrame): Boolean = {
    val limit = spark.conf.getOption(BroadcastSourceKey).map(_.trim.toLong).getOrElse(DefaultBroadcastSourceBytes)
    limit >= 0 && (try s.asInstanceOf[ClassicDataset[_]].queryExecution.optimizedPlan.stats.sizeInBytes <= limit
      catch { case NonFatal(_) => false })
  }

  /** The merge condition resolved over (target, source): (condition, target attributes, source attributes). */
  private def analyzeCondition(t: DataFrame, s: DataFrame, table: String): (Expression, AttributeSet, AttributeSet) = {
    val plan = try t.join(s, condition, "inner").asInstanceOf[ClassicDataset[_]].queryExecution.analyzed catch {
      case e: AnalysisException => throw new InvalidWriteException("DELTA_MERGE_UNRESOLVED_EXPRESSION", table,
        s"Table $table: the MERGE condition cannot be resolved against the target (${t.columns.filterNot(
          _.startsWith("__deltalog")).mkString(", ")}) and the source (${s.columns.filterNot(_.startsWith("__deltalog"))
          .mkString(", ")}): ${e.getMessage}")
    }
    plan.collectFirst { case j: Join => (j.condition.getOrElse(Literal.TrueLiteral), j.left.outputSet, j.right.outputSet) }
      .getOrElse(throw new IllegalStateException(s"no join in the analyzed MERGE plan: $plan"))
  }

  /** A clause condition as delta-spark logs it in the MERGE's `operationParameters` (resolved over `joined`). */
  private def conditionText(joined: DataFrame, c: Column): String =
    try {
      joined.where(c).asInstanceOf[ClassicDataset[_]].queryExecution.analyzed.collectFirst {
        case org.apache.spark.sql.catalyst.plans.logical.Filter(e, _) => DmlSupport.predicateText(e)
      }.getOrElse(SparkInternals.expression(c).sql)
    } catch { case NonFatal(_) => SparkInternals.expression(c).sql }

  /**
   * For each equality `target.k = source.k` of the condition on a column with comparable statistics:
   * a test that a file holds no row whose `k` equals a source key. A source of at most
   * [[SourceKeys.LimitKey]] rows has its key columns collected ([[SourceKeys]]: a file is skipped when
   * none of the keys lies within its bounds); a larger one gives its keys' range (one aggregation), and
   * a file outside the range is skipped.
   */
  private def sourceKeyExclusions(cond: Expression, targetAttrs: AttributeSet, sourceAttrs: AttributeSet, s: DataFrame,
      rw: RowLevelRewrite, tz: String): Seq[FileFacts => Boolean] = {
    val pairs: Seq[(Attribute, Attribute)] = DmlSupport.conjuncts(cond).collect {
      case EqualTo(a: Attribute, b: Attribute) if targetAttrs.contains(a) && sourceAttrs.contains(b) => (a, b)
      case EqualTo(b: Attribute, a: Attribute) if targetAttrs.contains(a) && sourceAttrs.contains(b) => (a, b)
    }.filter { case (a, b) => a.dataType == b.dataType && StatsProof.comparable(a.dataType) &&
      rw.schema.fieldNames.exists(n => lc(n) == lc(a.name)) }
    if (pairs.isEmpty) return Nil
    val keyCols = pairs.map { case (_, b) => SparkInternals.column(b) }
    val limit = spark.conf.getOption(SourceKeys.LimitKey).map(_.trim.toInt).getOrElse(SourceKeys.DefaultLimit)
    if (limit > 0) {
      val rows = try Some(s.select(keyCols: _*).limit(limit + 1).collect().toSeq) catch { case NonFatal(_) => None }
      rows.filter(_.size <= limit).foreach { r =>
        val keys = SourceKeys.of(pairs, r, rw.partitionCols, tz)
        if (keys.size == pairs.size) return keys.map(k => (f: FileFacts) => k.excludes(f))
      }
    }
    val aggs = keyCols.flatMap(c => Seq(min(c), max(c)))
    val row = try s.agg(aggs.head, aggs.tail: _*).collect().head catch { case NonFatal(_) => return Nil }
    pairs.zipWithIndex.flatMap { case ((a, _), i) =>
      val (lo, hi) = (row.get(2 * i), row.get(2 * i + 1))
      if (lo == null || hi == null) None
      else {
        val range = And(GreaterThanOrEqual(a, Literal.create(lo, a.dataType)), LessThanOrEqual(a, Literal.create(hi, a.dataType)))
        val proof = new StatsProof(range, rw.partitionCols, rw.physicalNames, tz)
        Some((f: FileFacts) => proof.prove(f)._2)
      }
    }
  }

  /** The (target column, value) pairs of an update clause; `*` takes every target column from the source. */
  private def updateAssignments(c: MergeClause, schema: StructType, sourceSchema: StructType, s: DataFrame,
      evolve: Boolean, table: String): Seq[(Seq[String], Column)] =
    if (!c.star) c.assignments
    else starValues(c, schema, sourceSchema, s, evolve, table).map { case (n, v) => (Seq(n), v) }

  private def insertAssignments(c: MergeClause, schema: StructType, sourceSchema: StructType, s: DataFrame,
      evolve: Boolean, table: String): Seq[(String, Column)] =
    if (!c.star) c.assignments.map { case (k, v) =>
      if (k.size != 1) throw new InvalidWriteException("DELTA_MERGE_INVALID_INSERT_COLUMN", table,
        s"Table $table: an INSERT clause of a MERGE names top-level columns only, not ${k.mkString(".")}.")
      (k.head, v)
    } else starValues(c, schema, sourceSchema, s, evolve, table)

  /**
   * `*`: each target column from the source column of the same name (nested fields aligned by
   * name). A target column the source lacks is an error (delta-spark's `DELTA_MERGE_UNRESOLVED_EXPRESSION`),
   * except generated and identity columns (computed) and, under schema evolution, any column (kept /
   * null).
   */
  private def starValues(c: MergeClause, schema: StructType, sourceSchema: StructType, s: DataFrame,
      evolve: Boolean, table: String): Seq[(String, Column)] =
    schema.fields.toSeq.flatMap { f =>
      sourceSchema.fields.find(sf => lc(sf.name) == lc(f.name)) match {
        case Some(sf) =>
          if (WriteRules.isIdentity(f) || WriteRules.generation(f).isDefined) None
          else {
            if (!evolve && hasExtraNestedFields(sf.dataType, f.dataType)) {
              throw new InvalidWriteException("DELTA_UPDATE_SCHEMA_MISMATCH_EXPRESSION", table,
                s"Table $table: cannot cast ${sf.dataType.simpleString} to ${f.dataType.simpleString} (column ${f.name}, " +
                  s"${c.title} ${c.action.toUpperCase(Locale.ROOT)} *). All nested columns must match: the source has " +
                  "nested fields the target lacks; merge WITH SCHEMA EVOLUTION to add them, or select the target's fields.")
            }
            Some(f.name -> WriteSchema.align(s.col("`" + sf.name.replace("`", "``") + "`"), sf.dataType, f.dataType))
          }
        case None if evolve || WriteRules.isIdentity(f) || WriteRules.generation(f).isDefined => None
        case None => throw new InvalidWriteException("DELTA_MERGE_UNRESOLVED_EXPRESSION", table,
          s"Table $table: cannot resolve ${f.name} in the ${c.title} ${c.action.toUpperCase(Locale.ROOT)} * clause " +
            s"given the source columns ${sourceSchema.fieldNames.mkString(", ")}; give the source that column, list " +
            "the columns explicitly, or merge WITH SCHEMA EVOLUTION.")
      }
    }

  /** A struct (possibly inside arrays / maps) of `source` has a field the matching struct of `target` lacks. */
  private def hasExtraNestedFields(source: DataType, target: DataType): Boolean = (source, target) match {
    case (s: StructType, t: StructType) => s.fields.exists { sf =>
      t.fields.find(tf => lc(tf.name) == lc(sf.name)) match {
        case Some(tf) => hasExtraNestedFields(sf.dataType, tf.dataType)
        case None => true
      }
    }
    case (s: ArrayType, t: ArrayType) => hasExtraNestedFields(s.elementType, t.elementType)
    case (s: MapType, t: MapType) => hasExtraNestedFields(s.keyType, t.keyType) || hasExtraNestedFields(s.valueType, t.valueType)
    case _ => false
  }

  private def metrics(o: RowLevelRewrite#Outcome, touched: Seq[RowLevelRewrite#Touched], sourceRows: Long,
      started: Long, materializeTimeMs: Long): Map[String, String] = {
    val updatedBySource = touched.map(_.updatedBySource).sum
    val deletedBySource = touched.map(_.deletedBySource).sum
    Map(
      "numSourceRows" -> sourceRows,
      "numTargetRowsInserted" -> o.numInserted,
      "numTargetRowsUpdated" -> o.numUpdated,
      "numTargetRowsMatchedUpdated" -> (o.numUpdated - updatedBySource),
      "numTargetRowsNotMatchedBySourceUpdated" -> updatedBySource,
      "numTargetRowsDeleted" -> o.numDeleted,
      "numTargetRowsMatchedDeleted" -> (o.numDeleted - deletedBySource),
      "numTargetRowsNotMatchedBySourceDeleted" -> deletedBySource,
      "numTargetRowsCopied" -> o.numCopied,
      "numOutputRows" -> (o.numCopied + o.numUpdated + o.numInserted),
      "numTargetFilesAdded" -> o.addedFiles.size,
      "numTargetFilesRemoved" -> o.removedFiles.size,
      "numTargetChangeFilesAdded" -> o.numChangeFiles,
      "numTargetBytesAdded" -> o.addedFiles.map(_.size).sum,
      "numTargetBytesRemoved" -> o.removedFiles.map(_.size).sum,
      "numTargetDeletionVectorsAdded" -> o.dvAdded,
      "numTargetDeletionVectorsRemoved" -> o.dvRemoved,
      "numTargetDeletionVectorsUpdated" -> o.dvUpdated,
      "executionTimeMs" -> (System.nanoTime() - started) / 1000000L,
      "scanTimeMs" -> o.scanTimeMs,
      "rewriteTimeMs" -> o.rewriteTimeMs,
      "materializeSourceTimeMs" -> materializeTimeMs).map { case (k, v) => k -> v.toString }
  }
}

object MergeCommand {
  private val log = LoggerFactory.getLogger(classOf[MergeCommand])
  val AutoMergeKey = "spark.databricks.delta.schema.autoMerge.enabled"
  /**
   * Sources whose estimated size (Spark's statistics) is at most this many bytes are broadcast in
   * pass 2, so the touched files are rewritten without shuffling them (-1: never).
   */
  val BroadcastSourceKey = "spark.deltalog.merge.broadcastSourceThreshold"
  val DefaultBroadcastSourceBytes: Long = 32L * 1024 * 1024
  /** The target's alias when the statement gives none. */
  val DefaultTargetAlias = "__deltalog_target"
  private val TargetMark = "__deltalog_target_row"
  private val SourceMark = "__deltalog_source_row"
  private val ClauseColumn = "__deltalog_clause"
  private val MatchedColumn = "__deltalog_matched"
  private val MatchesColumn = "__deltalog_matches"
  private val DedupColumn = "__deltalog_dedup"
  /** Pass 1's action for a target row more than one source row would change. */
  private val MultiMatch = 9

  private def actionCode(c: MergeClause): Int = c.action match {
    case "update" => RowChanges.Update
    case "delete" => RowChanges.Delete
    case _ => RowChanges.Insert
  }

  private def multipleMatches(table: String): InvalidWriteException =
    new InvalidWriteException("DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE", table,
      s"Cannot perform Merge into $table as multiple source rows matched and attempted to modify the same target " +
        "row in possibly conflicting ways; nothing was changed. By SQL semantics of MERGE the result would be " +
        "ambiguous: preprocess the source to eliminate multiple matches (e.g. deduplicate it on the merge keys).")
}
