package io.deltalog.expressions

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Locale

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.deltalog.exceptions.DeltalogException

/**
 * Partition predicates: evaluating a [[Predicate]] against an `add.partitionValues` map (protocol
 * §7.6), as used by `filterFiles` and by conflict detection against winning adds.
 *
 * Partition value deserialisation, by the column's schema type name (case-insensitive):
 *  - `null` map value, missing key, or `""` (any type, per spec; for strings this is the spec's
 *    reading, delta-spark differs — protocol §9 item 8) => NULL;
 *  - `string` => the raw value (no trimming, no unescaping: values are stored raw, e.g. `a:b`);
 *  - `byte`/`short`/`integer`/`long` => Long; `float`/`double` => Double (`NaN`, `Infinity`
 *    accepted; compared by their decimal text, so a float partition "0.1" equals 0.1);
 *    `decimal(p,s)` => BigDecimal ("1.10" = 1.1, compared numerically);
 *  - `boolean` => `true`/`false` (case-insensitive);
 *  - `date` => LocalDate (`yyyy-MM-dd`);
 *  - `timestamp` => Instant: `yyyy-MM-dd HH:mm:ss[.ffffff]` (legacy, read as UTC) or ISO-8601
 *    with `T` and/or an offset (`1970-01-01T00:00:00.123456Z`, `...+01:00`);
 *  - `timestamp_ntz` => LocalDateTime (`yyyy-MM-dd HH:mm:ss[.ffffff]`, `T` accepted);
 *  - `binary` => the UTF-8 bytes of the value (what delta-spark's cast to string round-trips);
 *  - a value that does not parse as its type => [[PredicateEvaluationException]]
 *    (`DELTA_INVALID_PARTITION_VALUE`), never a silent non-match.
 *
 * Comparison coercion: see [[Values]]. Matching uses SQL three-valued logic and a file matches
 * only when the predicate is TRUE. Column names in predicates, `partitionValues` and
 * `partitionTypes` match case-insensitively.
 */
object PartitionPredicates {

  /** True when every column `p` references is a partition column (case-insensitive). */
  def isPartitionOnly(p: Predicate, partitionColumns: Seq[String]): Boolean = {
    val cols = partitionColumns.map(lower).toSet
    p.references.forall(r => cols.contains(lower(r)))
  }

  /**
   * Whether a file with these (serialized) partition values satisfies `p`: TRUE only.
   * `partitionTypes` maps partition column => schema type name (see [[partitionTypesFromSchema]]).
   * A column present in `partitionValues` but absent from `partitionTypes` is read as a string.
   *
   * @throws PredicateEvaluationException `DELTA_INVALID_PREDICATE` if `p` references a column
   *         that is in neither map; `DELTA_PREDICATE_TYPE_MISMATCH` for a literal that cannot be
   *         compared with its column; `DELTA_INVALID_PARTITION_VALUE` for a malformed value.
   */
  def matches(p: Predicate, partitionValues: Map[String, String], partitionTypes: Map[String, String]): Boolean =
    ExpressionEvaluator.isTrue(p, lookup(partitionValues, partitionTypes))

  /** Three-valued result (None = NULL) of `p` for these partition values; see [[matches]]. */
  def evaluate(p: Predicate, partitionValues: Map[String, String],
      partitionTypes: Map[String, String]): Option[Boolean] =
    ExpressionEvaluator.eval(p, lookup(partitionValues, partitionTypes))

  /** A case-insensitive column lookup that deserialises values by their types. */
  def lookup(partitionValues: Map[String, String], partitionTypes: Map[String, String]): String => Option[Any] = {
    val values = partitionValues.map { case (k, v) => lower(k) -> v }
    val types = partitionTypes.map { case (k, v) => lower(k) -> v }
    name => {
      val key = lower(name)
      val tpe = types.get(key) match {
        case Some(t) => t
        case None if values.contains(key) => "string"
        case None =>
          throw new PredicateEvaluationException("DELTA_INVALID_PREDICATE",
            s"Column '$name' is not a partition column (partition columns: " +
              s"${(types.keySet ++ values.keySet).toSeq.sorted.mkString(", ")}); " +
              "only partition columns can be used in a partition predicate.")
      }
      Option(parsePartitionValue(values.getOrElse(key, null), tpe, name))
    }
  }

  private val DecimalType = """decimal\s*\(\s*(\d+)\s*,\s*(-?\d+)\s*\)""".r

  /**
   * Deserialises one partition value (protocol §7.6) to its canonical class (see [[Literal]]);
   * `null` for NULL (`null` or `""`).
   */
  def parsePartitionValue(raw: String, typeName: String, column: String = "?"): Any = {
    if (raw == null || raw.isEmpty) return null
    def bad(expected: String): Nothing =
      throw new PredicateEvaluationException("DELTA_INVALID_PARTITION_VALUE",
        s"Partition column '$column' of type $typeName has the value '$raw', which is not $expected. " +
          "The add action's partitionValues are corrupt or were written by a buggy writer.")
    lower(typeName).trim match {
      case "string" | "varchar" | "char" => raw
      case t if t.startsWith("varchar(") || t.startsWith("char(") => raw
      case "byte" | "short" | "integer" | "int" | "long" | "tinyint" | "smallint" | "bigint" =>
        try raw.trim.toLong catch { case _: NumberFormatException => bad("an integer") }
      case "float" | "double" | "real" =>
        Values.parseNumber(raw) match {
          case Some(d: Double) => d
          case Some(_) => try raw.trim.toDouble catch { case _: NumberFormatException => bad("a number") }
          case None => bad("a number")
        }
      case "decimal" | DecimalType(_, _) =>
        try BigDecimal(raw.trim) catch { case _: NumberFormatException => bad("a decimal number") }
      case "boolean" =>
        raw.trim.toLowerCase(Locale.ROOT) match {
          case "true" => true
          case "false" => false
          case _ => bad("true or false")
        }
      case "date" => Values.parseDate(raw).getOrElse(bad("a date (yyyy-MM-dd)"))
      case "timestamp" =>
        Values.parseTimestamp(raw).getOrElse(bad("a timestamp (yyyy-MM-dd HH:mm:ss[.ffffff] or ISO-8601)"))
      case "timestamp_ntz" =>
        Values.parseTimestampNtz(raw).getOrElse(bad("a timestamp_ntz (yyyy-MM-dd HH:mm:ss[.ffffff])"))
      case "binary" => raw.getBytes(UTF_8)
      case _ =>
        throw new PredicateEvaluationException("DELTA_INVALID_PARTITION_VALUE",
          s"Partition column '$column' has type $typeName, which cannot be a partition column type.")
    }
  }

  private lazy val mapper = new ObjectMapper()

  /**
   * The schema type name of each partition column, from a Spark StructType JSON `schemaString`
   * (top-level fields, matched case-insensitively). Keys are the names as given in
   * `partitionColumns`; values are primitive type names (`"integer"`, `"decimal(10,2)"`, ...) or,
   * for a nested type, its JSON `type` (`"struct"`, `"array"`, `"map"`).
   *
   * @throws DeltalogException `DELTA_INVALID_SCHEMA` for unparseable JSON or a partition column
   *         that is not in the schema.
   */
  def partitionTypesFromSchema(schemaString: String, partitionColumns: Seq[String]): Map[String, String] = {
    if (partitionColumns.isEmpty) return Map.empty
    def invalid(msg: String, cause: Throwable = null): Nothing =
      throw new DeltalogException("DELTA_INVALID_SCHEMA", msg, cause)
    val root: JsonNode =
      try mapper.readTree(Option(schemaString).getOrElse(""))
      catch { case e: Exception => invalid(s"schemaString is not valid JSON: ${e.getMessage}", e) }
    if (root == null || !root.isObject || !root.path("fields").isArray)
      invalid("schemaString must be a Spark StructType JSON object with a 'fields' array")
    val fields: Map[String, String] = root.get("fields").elements().asScala.flatMap { f =>
      val name = f.path("name")
      if (!name.isTextual) None
      else {
        val t = f.path("type")
        val tpe = if (t.isTextual) t.asText() else t.path("type").asText("unknown")
        Some(lower(name.asText()) -> tpe)
      }
    }.toMap
    partitionColumns.map { c =>
      c -> fields.getOrElse(lower(c),
        invalid(s"Partition column '$c' is not in the table schema (fields: " +
          s"${fields.keys.toSeq.sorted.mkString(", ")})"))
    }.toMap
  }

  private def lower(s: String): String = s.toLowerCase(Locale.ROOT)
}
