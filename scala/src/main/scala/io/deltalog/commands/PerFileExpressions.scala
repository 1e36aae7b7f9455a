package io.deltalog.commands

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, LongType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * A value per data file (its `baseRowId`, its `defaultRowCommitVersion`), looked up by the file's
 * `_metadata.file_path` ([[TouchedFiles.fileKey]]'s form); null for a file without one. Shipped to
 * tasks by broadcast.
 */
private[commands] final class PerFile[V <: AnyRef](values: Broadcast[Map[String, V]]) extends Serializable {
  def get(path: UTF8String): V =
    if (path == null) null.asInstanceOf[V] else values.value.getOrElse(path.toString, null.asInstanceOf[V])
}

/** The long value of the file a row was read from (`baseRowId`, `defaultRowCommitVersion`), null if none. */
private[commands] final case class PerFileLong(path: Expression, values: PerFile[java.lang.Long])
    extends UnaryExpression {
  override def child: Expression = path
  override def dataType: DataType = LongType
  override def nullable: Boolean = true

  @transient private lazy val cache = new LastFile[java.lang.Long](values)

  override def eval(input: InternalRow): Any = cache(path.eval(input).asInstanceOf[UTF8String])

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val ref = ctx.addReferenceObj("values", values, classOf[PerFile[_]].getName)
    val p = path.genCode(ctx)
    val (lookup, v) = LastFile.genCode(ctx, ref, "java.lang.Long", p.value.toString)
    ev.copy(code = code"""
      ${p.code}
      $lookup
      boolean ${ev.isNull} = $v == null;
      long ${ev.value} = ${ev.isNull} ? -1L : $v.longValue();""")
  }

  override protected def withNewChildInternal(c: Expression): PerFileLong = copy(path = c)
}

/**
 * [[PerFile.get]] remembered for the last file: a scan task reads its rows file after file and Spark
 * gives the rows of a file the same `file_path` object, so the lookup (a string conversion and a map
 * probe) runs once per file, not once per row; a different object with equal bytes is recognised
 * too. This class serves interpreted evaluation; [[LastFile.genCode]] keeps the same state in the
 * generated class (one instance per task).
 */
private final class LastFile[V <: AnyRef](values: PerFile[V]) {
  private var lastPath: UTF8String = _
  private var last: V = _
  private var started = false

  def apply(path: UTF8String): V = {
    if (!started || !(if (path == null) lastPath == null else path.equals(lastPath))) {
      last = values.get(path)
      lastPath = if (path == null) null else path.clone()
      started = true
    }
    last
  }
}

private object LastFile {
  private val Utf8 = classOf[UTF8String].getName

  /**
   * Java code that sets a generated-class field to the value of `path` (a UTF8String variable),
   * looked up through `ref` (a [[PerFile]]) only when the path changed; returns (code, field).
   */
  def genCode(ctx: CodegenContext, ref: String, valueClass: String, path: String): (String, String) = {
    val lastRef = ctx.addMutableState(Utf8, "perFileLastRef", forceInline = true)
    val lastPath = ctx.addMutableState(Utf8, "perFileLastPath", forceInline = true)
    val started = ctx.addMutableState("boolean", "perFileStarted", forceInline = true)
    val last = ctx.addMutableState(valueClass, "perFileLast", forceInline = true)
    val code =
      s"""if (!$started || $path != $lastRef) {
         |  if (!$started || ($path == null ? $lastPath != null : !$path.equals($lastPath))) {
         |    $last = ($valueClass) $ref.get($path);
         |    $lastPath = $path == null ? null : $path.clone();
         |    $started = true;
         |  }
         |  $lastRef = $path;
         |}""".stripMargin
    (code, last)
  }
}
