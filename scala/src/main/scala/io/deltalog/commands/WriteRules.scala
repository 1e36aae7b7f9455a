package io.deltalog.commands

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{EqualNullSafe, Expression, IsNotNull, IsNull, Or}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.deltalog.SparkInternals
import org.apache.spark.sql.functions.{expr, lit}
import org.apache.spark.sql.types._

/**
 * The per-row rules of a write (digest §6.5), applied to the data in table order with logical
 * names: identity values assigned, generated columns computed when absent, and one filter that
 * checks every rule (NOT NULL incl. nested fields, `delta.invariants`, `delta.constraints.*`,
 * generated columns, and the replaceWhere predicate) and fails the write on the first violation.
 */
private[commands] object WriteRules {
  val InvariantsKey = "delta.invariants"
  val GenerationKey = "delta.generationExpression"
  val IdentityStart = "delta.identity.start"
  val IdentityStep = "delta.identity.step"
  val IdentityHighWaterMark = "delta.identity.highWaterMark"
  val IdentityAllowExplicit = "delta.identity.allowExplicitInsert"
  val ConstraintPrefix = "delta.constraints."

  private val mapper = new ObjectMapper()

  def isIdentity(f: StructField): Boolean = f.metadata.contains(IdentityStart) && f.metadata.contains(IdentityStep)
  def generation(f: StructField): Option[String] =
    if (f.metadata.contains(GenerationKey)) Some(f.metadata.getString(GenerationKey)) else None

  /** (start, step, highWaterMark) of an identity column. */
  def identityParams(f: StructField): (Long, Long, Option[Long]) = (f.metadata.getLong(IdentityStart),
    f.metadata.getLong(IdentityStep),
    if (f.metadata.contains(IdentityHighWaterMark)) Some(f.metadata.getLong(IdentityHighWaterMark)) else None)

  /**
   * `data` brought to `schema` (table order, logical names): present columns aligned, absent
   * ones null, identity columns generated, generated columns computed.
   */
  def complete(data: DataFrame, schema: StructType, table: String): DataFrame = {
    val dataSchema = data.schema
    val firstPass = schema.fields.map { f =>
      WriteSchema.findColumn(dataSchema, f.name) match {
        case Some(df) =>
          if (isIdentity(f) && !(f.metadata.contains(IdentityAllowExplicit) &&
              f.metadata.getBoolean(IdentityAllowExplicit))) {
            throw new InvalidWriteException("DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", table,
              s"Table $table: the data provides values for identity column ${f.name}, which is GENERATED ALWAYS " +
                s"($IdentityAllowExplicit is false). Leave the column out of the data and values are assigned.")
          }
          WriteSchema.align(WriteSchema.column(df.name), df.dataType, f.dataType).as(f.name)
        case None if isIdentity(f) => identityValues(f, table).as(f.name)
        case None => lit(null).cast(f.dataType).as(f.name)
      }
    }
    var out = data.select(firstPass.toIndexedSeq: _*)
    schema.fields.foreach { f =>
      generation(f).filter(_ => WriteSchema.findColumn(dataSchema, f.name).isEmpty).foreach { g =>
        out = out.withColumn(f.name, expr(g).cast(f.dataType))
      }
    }
    out
  }

  /** The next values of identity column `f` (above its high water mark), one per row. */
  def identityValues(f: StructField, table: String): Column = {
    val (start, step, hwm) = identityParams(f)
    val base = hwm.map(h => try Math.addExact(h, step) catch {
      case _: ArithmeticException => throw new ConstraintViolationException("DELTA_IDENTITY_OVERFLOW", table,
        s"identity column ${f.name}", s"highWaterMark $h", "No more values fit in a long.")
    }).getOrElse(start)
    SparkInternals.column(IdentityValues(base, step, table, f.name)).cast(f.dataType)
  }

  /**
   * The filter that checks every rule on `df` (table columns, logical names). `replaceWhere`:
   * the rows written must satisfy it.
   */
  def checkAll(df: DataFrame, schema: StructType, conf: Map[String, String], table: String,
      replaceWhere: Option[String]): DataFrame = {
    val spark = df.sparkSession.asInstanceOf[ClassicSession]
    val parser = spark.sessionState.sqlParser
    def parse(sql: String, what: String): Expression =
      try parser.parseExpression(sql)
      catch {
        case NonFatal(e) => throw new InvalidWriteException("DELTA_INVALID_CONSTRAINT_EXPRESSION", table,
          s"Table $table: $what '$sql' cannot be parsed: ${e.getMessage}")
      }
    def refs(e: Expression): (Seq[Expression], Seq[String]) = {
      val names = e.collect { case a: UnresolvedAttribute => a.nameParts }.distinct
      (names.map(n => UnresolvedAttribute(n): Expression), names.map(_.mkString(".")))
    }
    val checks = Seq.newBuilder[Expression]

    // NOT NULL, nested fields checked only where their parents are not null.
    def notNull(dt: DataType, path: Seq[String], parentsNull: Seq[Expression]): Unit = dt match {
      case s: StructType => s.fields.foreach { f =>
        val p = path :+ f.name
        val attr = UnresolvedAttribute(p)
        if (!f.nullable) {
          val cond = parentsNull.foldRight(IsNotNull(attr): Expression)((pn, acc) => Or(pn, acc))
          checks += ConstraintCheck(cond, Seq(attr), Seq(p.mkString(".")), "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", table,
            s"the NOT NULL constraint of column ${p.mkString(".")}",
            "Write a non-null value, or make the column nullable.")
        }
        notNull(f.dataType, p, parentsNull :+ IsNull(attr))
      }
      case _ =>
    }
    notNull(schema, Nil, Nil)

    // Column invariants.
    def invariants(dt: DataType, path: Seq[String]): Unit = dt match {
      case s: StructType => s.fields.foreach { f =>
        val p = path :+ f.name
        if (f.metadata.contains(InvariantsKey)) {
          val sql = invariantSql(f.metadata.getString(InvariantsKey), table, p.mkString("."))
          val e = parse(sql, s"the invariant of column ${p.mkString(".")}")
          val (vs, ns) = refs(e)
          checks += ConstraintCheck(e, vs, ns, "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", table,
            s"the invariant of column ${p.mkString(".")} ($sql)", "Only write rows for which the invariant is true.")
        }
        invariants(f.dataType, p)
      }
      case _ =>
    }
    invariants(schema, Nil)

    // CHECK constraints.
    conf.toSeq.sortBy(_._1).foreach { case (k, sql) =>
      if (k.toLowerCase(java.util.Locale.ROOT).startsWith(ConstraintPrefix)) {
        val name = k.substring(ConstraintPrefix.length)
        val e = parse(sql, s"CHECK constraint $name")
        val (vs, ns) = refs(e)
        checks += ConstraintCheck(e, vs, ns, "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", table,
          s"CHECK constraint $name ($sql)", "Only write rows for which the constraint is true, or drop the constraint.")
      }
    }

    // Generated columns: (column <=> expression) must be true.
    schema.fields.foreach { f =>
      generation(f).foreach { g =>
        val e = parse(g, s"the generation expression of column ${f.name}")
        val attr = UnresolvedAttribute(Seq(f.name))
        val (vs, ns) = refs(e)
        checks += ConstraintCheck(EqualNullSafe(attr, org.apache.spark.sql.catalyst.expressions.Cast(e, f.dataType)),
          attr +: vs, f.name +: ns, "DELTA_GENERATED_COLUMN_MISMATCH", table,
          s"generated column ${f.name} (GENERATED ALWAYS AS ($g))",
          "Leave the column out of the data (its value is computed) or write the value of the expression.")
      }
    }

    replaceWhere.foreach { sql =>
      val e = parse(sql, "replaceWhere predicate")
      val (vs, ns) = refs(e)
      checks += ConstraintCheck(e, vs, ns, "DELTA_REPLACE_WHERE_MISMATCH", table,
        s"the replaceWhere predicate ($sql)",
        "Every row written with replaceWhere must satisfy the predicate; filter the data first.")
    }

    val all = checks.result()
    if (all.isEmpty) df
    else df.filter(all.map(SparkInternals.column).reduce(_ && _))
  }

  /** `{"expression":{"expression":"<sql>"}}` → `<sql>`. */
  private def invariantSql(json: String, table: String, column: String): String = {
    val sql = try Option(mapper.readTree(json)).flatMap(n => Option(n.get("expression")))
      .flatMap(n => Option(n.get("expression"))).filter(_.isTextual).map(_.textValue())
    catch { case NonFatal(_) => None }
    sql.getOrElse(throw new InvalidWriteException("DELTA_INVALID_INVARIANT", table,
      s"Table $table: column $column has an unreadable ${InvariantsKey} value '$json'; expected " +
        """{"expression":{"expression":"<SQL boolean>"}}."""))
  }
}
