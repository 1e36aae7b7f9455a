package io.deltalog.exceptions

import java.io.File
import java.lang.reflect.Modifier
import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * Every deltalog exception class (found by scanning the engine's compiled classes, so a new class
 * cannot be forgotten) can be constructed through reflection with one `String`, as delta-spark's
 * exceptions can: the message is kept as given and the error class is derived.
 */
class OneMessageConstructorSuite {
  private val bases: Seq[Class[_]] = Seq(classOf[DeltalogException], classOf[DeltalogAssertionError])

  private def exceptionClasses: Seq[Class[_]] = {
    val root = Paths.get(classOf[DeltalogException].getProtectionDomain.getCodeSource.getLocation.toURI)
    assertTrue(Files.isDirectory(root), s"$root: the suite scans the compiled classes directory")
    val loader = getClass.getClassLoader
    val names = Files.walk(root).iterator().asScala
      .map(p => root.relativize(p).toString)
      .filter(n => n.endsWith(".class") && n.startsWith("io" + File.separator + "deltalog"))
      .map(n => n.stripSuffix(".class").replace(File.separatorChar, '.'))
      .toSeq
    names.flatMap { n =>
      try Some(Class.forName(n, false, loader)) catch { case _: Throwable => None }
    }.filter(c => bases.exists(_.isAssignableFrom(c)) && !c.isAnonymousClass &&
      Modifier.isPublic(c.getModifiers) && !Modifier.isAbstract(c.getModifiers)).sortBy(_.getName)
  }

  private def errorClassOf(e: Throwable): String = e match {
    case d: DeltalogException => d.errorClass
    case a: DeltalogAssertionError => a.errorClass
  }

  @Test def everyExceptionClassHasAOneStringConstructor(): Unit = {
    val classes = exceptionClasses
    assertTrue(classes.size >= 38, s"found ${classes.size} exception classes: ${classes.map(_.getName)}")
    val missing = classes.filter(c => scala.util.Try(c.getConstructor(classOf[String])).isFailure).map(_.getName)
    assertEquals(Nil, missing)
    classes.foreach { c =>
      val e = c.getConstructor(classOf[String]).newInstance("the message").asInstanceOf[Throwable]
      val ec = errorClassOf(e)
      assertTrue(ec.matches("[A-Z][A-Z_]+"), s"${c.getName}: error class '$ec'")
      val expected = if (e.isInstanceOf[DeltalogAssertionError]) "the message" else s"[$ec] the message"
      assertEquals(expected, e.getMessage, c.getName)
      assertNull(e.getCause, c.getName)
    }
  }

  @Test def errorClassesOfOneStringConstructors(): Unit = {
    def ec(c: Class[_]): String = errorClassOf(c.getConstructor(classOf[String]).newInstance("m").asInstanceOf[Throwable])
    assertEquals("DELTA_TABLE_NOT_FOUND", ec(classOf[TableNotFoundException]))
    assertEquals("DELTA_SCHEMA_MISMATCH", ec(classOf[io.deltalog.commands.SchemaMismatchException]))
    assertEquals("DELTA_INVALID_WRITE_OPTION", ec(classOf[io.deltalog.commands.InvalidWriteOptionException]))
    assertEquals("DELTA_INVALID_READ_OPTION", ec(classOf[io.deltalog.spark.read.InvalidReadOptionException]))
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES",
      ec(classOf[io.deltalog.commands.ConstraintViolationException]))
    assertEquals("DELTA_MAX_COMMIT_RETRIES_EXCEEDED", ec(classOf[MaxCommitAttemptsExceededException]))
    assertEquals("DELTA_CONCURRENT_WRITE", ec(classOf[ConcurrentWriteException]))
    assertEquals("DELTA_CONCURRENT_MODIFICATION", ec(classOf[DeltaConcurrentModificationException]))
    assertEquals("DELTA_APPEND_ONLY_TABLE", ec(classOf[AppendOnlyTableException]))
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_READ", ec(classOf[UnsupportedTableFeatureException]))
    assertEquals("DELTA_ASSERTION_FAILED", ec(classOf[DeltalogAssertionError]))
    assertEquals("DELTA_INVALID_PROTOCOL_VERSION", ec(classOf[InvalidProtocolVersionException]))
    Seq(classOf[DeltalogException], classOf[TableFeatureException], classOf[InvalidTablePropertyException],
      classOf[InvalidCommitException], classOf[io.deltalog.commands.InvalidWriteException])
      .foreach(c => assertEquals(DeltalogException.GenericErrorClass, ec(c), c.getName))
  }

  @Test def fieldConstructorsStillRenderTheirMessages(): Unit = {
    val e = new TableNotFoundException("/t", "there is no /t/_delta_log directory")
    assertEquals("[DELTA_TABLE_NOT_FOUND] /t is not a Delta table: there is no /t/_delta_log directory. " +
      "Check the path, or create the table first.", e.getMessage)
    assertEquals("/t", e.table)
    val m = new MaxCommitAttemptsExceededException("/t", 3, 7L)
    assertTrue(m.getMessage.startsWith("[DELTA_MAX_COMMIT_RETRIES_EXCEEDED] Table /t: gave up after 3"), m.getMessage)
    assertEquals(7L, m.winningVersion)
    val c = new CorruptLogFileException("f", "bad", new RuntimeException("x"))
    assertEquals("x", c.getCause.getMessage)
  }
}
