package io.deltalog.protocol

import org.junit.jupiter.api.Assertions._

import io.deltalog.exceptions.{DeltalogAssertionError, DeltalogException}

/** Shorthands shared by the protocol suites. */
object ProtocolTestHelpers {
  /** A table-features protocol with the given lists (None when the version has no list). */
  def p(r: Int, w: Int, rf: Seq[String] = null, wf: Seq[String] = null): Protocol =
    Protocol(r, w, Option(rf).map(_.toSet).orElse(if (r >= 3) Some(Set.empty[String]) else None),
      Option(wf).map(_.toSet).orElse(if (w >= 7) Some(Set.empty[String]) else None))

  def names(fs: Iterable[TableFeature]): Set[String] = fs.map(_.name).toSet

  def md(conf: (String, String)*): TableMetadata = TableMetadata(conf.toMap, "")

  def mdSchema(schema: String, conf: (String, String)*): TableMetadata = TableMetadata(conf.toMap, schema)

  /** A one-column struct schema. */
  def schemaOf(fieldJson: String*): String = fieldJson.mkString("""{"type":"struct","fields":[""", ",", "]}")

  def field(name: String, tpe: String, nullable: Boolean = true, metadata: String = "{}"): String =
    s"""{"name":"$name","type":$tpe,"nullable":$nullable,"metadata":$metadata}"""

  /** Runs `body`, expects a DeltalogException (or DeltalogAssertionError) with `errorClass`. */
  def expectError(errorClass: String)(body: => Any): Throwable = {
    val t = try { body; null } catch { case e: Throwable => e }
    assertNotNull(t, s"expected $errorClass but nothing was thrown")
    val actual = t match {
      case e: DeltalogException => e.errorClass
      case e: DeltalogAssertionError => e.errorClass
      case other => fail(s"expected $errorClass but got $other", other)
    }
    assertEquals(errorClass, actual, t.getMessage)
    t
  }

  def assertMessageContains(t: Throwable, parts: String*): Unit =
    parts.foreach(s => assertTrue(t.getMessage.contains(s), s"'${t.getMessage}' should contain '$s'"))
}
