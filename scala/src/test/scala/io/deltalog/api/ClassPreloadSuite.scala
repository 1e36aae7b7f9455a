package io.deltalog.api

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class ClassPreloadSuite {
  @Test def listNamesDeltalogAndParquetClassesThatExist(): Unit = {
    val names = ClassPreload.listedNames
    assertTrue(names.size > 1000, s"${names.size} names in ${ClassPreload.ListResource}")
    assertTrue(names.exists(_.startsWith("org.apache.parquet.")), "parquet-mr's classes are listed")
    assertTrue(names.contains("io.deltalog.log.CheckpointReader$"), "the checkpoint reader is listed")
    assertFalse(names.exists(_.startsWith("org.apache.spark.")), "Spark's own classes are left to the session")
    val loader = getClass.getClassLoader
    val stale = names.filter(_.startsWith("io.deltalog.")).filterNot { n =>
      try { Class.forName(n, false, loader); true } catch { case _: ClassNotFoundException => false }
    }
    assertEquals(Nil, stale, "deltalog classes listed but gone: run `make preload-list` to rewrite the list")
  }

  @Test def preloadThreadLoadsTheListOnce(): Unit = {
    ClassPreload.start() // may have run already (TableApi starts it)
    assertFalse(ClassPreload.start(), "runs at most once per JVM")
    val deadline = System.currentTimeMillis() + 60000
    while (!ClassPreload.isFinished && System.currentTimeMillis() < deadline) Thread.sleep(10)
    assertTrue(ClassPreload.isFinished, ClassPreload.status)
    val listed = ClassPreload.listedNames.size
    assertEquals(listed, ClassPreload.loadedCount + ClassPreload.missingCount, ClassPreload.status)
    assertTrue(ClassPreload.loadedCount >= listed * 9 / 10, ClassPreload.status)
  }
}
