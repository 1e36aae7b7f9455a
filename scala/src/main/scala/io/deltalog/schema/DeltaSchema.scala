package io.deltalog.schema

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.types._

import io.deltalog.actions.{Metadata => DeltaMetadata}

/**
 * The table schema of the Delta log (`metaData.schemaString`, digest §7.7) as a Spark `StructType`
 * and back. Shared by the read and write paths.
 *
 * Parsing uses Spark's own `DataType.fromJson` (so collations, variant, timestamp_ntz and field
 * metadata behave exactly as in Spark); when Spark refuses a schema that other Delta writers
 * produce (a missing `nullable` / `metadata`, an extra key), a lenient parser with the same
 * result types is used instead.
 */
object DeltaSchema {
  private val mapper = new ObjectMapper()

  /**
   * `schemaString` → `StructType`.
   *
   * @param table for error messages only (may be null)
   * @throws InvalidSchemaException when the JSON is not a struct type
   */
  def fromJson(schemaString: String, table: String = null): StructType = {
    if (schemaString == null) throw new InvalidSchemaException(table, "schemaString is missing")
    val parsed = try DataType.fromJson(schemaString) catch {
      case NonFatal(_) => lenient(schemaString, table)
    }
    parsed match {
      case s: StructType => s
      case other => throw new InvalidSchemaException(table, s"schemaString is a ${other.typeName}, not a struct")
    }
  }

  /** `StructType` → `schemaString` (Spark's JSON form, as delta-spark writes it). */
  def toJson(schema: StructType): String = schema.json

  /** The full table schema of `metadata` (data and partition columns in schema order). */
  def tableSchema(metadata: DeltaMetadata, table: String = null): StructType =
    fromJson(metadata.schemaString, table)

  /**
   * The partition columns of `metadata` as a struct in `partitionColumns` order (names matched
   * case-insensitively against the schema, the schema's spelling kept).
   *
   * @throws InvalidSchemaException when a partition column is not in the schema
   */
  def partitionSchema(metadata: DeltaMetadata, table: String = null): StructType =
    partitionSchema(tableSchema(metadata, table), metadata.partitionColumns, table)

  /** The fields of `schema` named by `partitionColumns`, in that order. */
  def partitionSchema(schema: StructType, partitionColumns: Seq[String], table: String): StructType = {
    val byName = schema.fields.map(f => f.name.toLowerCase(Locale.ROOT) -> f).toMap
    StructType(partitionColumns.map { c =>
      byName.getOrElse(c.toLowerCase(Locale.ROOT), throw new InvalidSchemaException(table,
        s"partition column '$c' is not a column of the schema (${schema.fieldNames.mkString(", ")})"))
    })
  }

  /** `schema` without the partition columns (the columns stored in the data files). */
  def dataSchema(schema: StructType, partitionColumns: Seq[String]): StructType = {
    val parts = partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
    StructType(schema.fields.filterNot(f => parts.contains(f.name.toLowerCase(Locale.ROOT))))
  }

  // ------------------------------------------------------------------------------------ lenient

  private def lenient(json: String, table: String): DataType =
    try dataType(mapper.readTree(json), table)
    catch {
      case e: InvalidSchemaException => throw e
      case NonFatal(e) => throw new InvalidSchemaException(table, s"invalid schema JSON: ${e.getMessage}", e)
    }

  private val Decimal = """decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)""".r

  private def dataType(n: JsonNode, table: String): DataType = {
    if (n == null || n.isNull) throw new InvalidSchemaException(table, "a type is missing")
    if (n.isTextual) primitive(n.asText(), table)
    else n.path("type").asText("") match {
      case "struct" =>
        val fields = Option(n.get("fields")).filter(_.isArray).map(_.elements().asScala.toSeq).getOrElse(Nil)
        StructType(fields.map(field(_, table)))
      case "array" =>
        ArrayType(dataType(n.get("elementType"), table), bool(n, "containsNull", default = true))
      case "map" =>
        MapType(dataType(n.get("keyType"), table), dataType(n.get("valueType"), table),
          bool(n, "valueContainsNull", default = true))
      case other => throw new InvalidSchemaException(table, s"unknown complex type '$other'")
    }
  }

  private def field(n: JsonNode, table: String): StructField = {
    val name = Option(n.get("name")).filter(_.isTextual).map(_.asText())
      .getOrElse(throw new InvalidSchemaException(table, s"a struct field has no name: $n"))
    val meta = Option(n.get("metadata")).filter(_.isObject)
      .map(m => Metadata.fromJson(mapper.writeValueAsString(m))).getOrElse(Metadata.empty)
    StructField(name, dataType(n.get("type"), table), bool(n, "nullable", default = true), meta)
  }

  private def bool(n: JsonNode, name: String, default: Boolean): Boolean =
    Option(n.get(name)).filter(_.isBoolean).map(_.asBoolean()).getOrElse(default)

  private def primitive(name: String, table: String): DataType = name.toLowerCase(Locale.ROOT) match {
    case "string" => StringType
    case "long" | "bigint" => LongType
    case "integer" | "int" => IntegerType
    case "short" | "smallint" => ShortType
    case "byte" | "tinyint" => ByteType
    case "float" | "real" => FloatType
    case "double" => DoubleType
    case "boolean" => BooleanType
    case "binary" => BinaryType
    case "date" => DateType
    case "timestamp" => TimestampType
    case "timestamp_ntz" => TimestampNTZType
    case "void" | "null" => NullType
    case "variant" => VariantType
    case "decimal" => DecimalType.USER_DEFAULT
    case Decimal(p, s) => DecimalType(p.toInt, s.toInt)
    case other => throw new InvalidSchemaException(table, s"unknown data type '$other'")
  }
}
