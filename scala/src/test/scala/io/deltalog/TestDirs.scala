package io.deltalog

import java.nio.file.{CopyOption, Files, Path, StandardCopyOption}
import java.util.Comparator
import java.util.concurrent.ConcurrentLinkedQueue

/**
 * Temporary directories of the JVM tests. Every directory made here is deleted, with what it holds, when
 * the test JVM exits, so repeated `make test` runs do not fill `java.io.tmpdir`; a test that wants its
 * directory gone sooner calls [[deleteRecursively]] itself.
 */
object TestDirs {
  private val made = new ConcurrentLinkedQueue[Path]()

  Runtime.getRuntime.addShutdownHook(new Thread(() => made.forEach(p => deleteRecursively(p)), "test-dirs-cleanup"))

  /** A new empty directory named `prefix...` under `java.io.tmpdir`. */
  def create(prefix: String): Path = {
    val dir = Files.createTempDirectory(prefix)
    made.add(dir)
    dir
  }

  /** A new empty file named `prefix...suffix` in a directory of its own. */
  def createFile(prefix: String, suffix: String): Path = Files.createTempFile(create(prefix), prefix, suffix)

  /**
   * Copies the tree `from` into `to` (directories created, files replaced); `keepAttributes`
   * keeps each file's modification time (commit timestamps of a copied log).
   */
  def copyTree(from: Path, to: Path, keepAttributes: Boolean = false): Unit = {
    val options: Array[CopyOption] =
      if (keepAttributes) Array(StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES)
      else Array(StandardCopyOption.REPLACE_EXISTING)
    val s = Files.walk(from)
    try s.forEach { p =>
      val target = to.resolve(from.relativize(p).toString)
      if (Files.isDirectory(p)) Files.createDirectories(target) else Files.copy(p, target, options: _*)
    } finally s.close()
  }

  /** Deletes `p` and everything under it; a path that is already gone is fine. */
  def deleteRecursively(p: Path): Unit =
    if (Files.exists(p)) {
      val s = Files.walk(p)
      try s.sorted(Comparator.reverseOrder[Path]()).forEach(x => Files.deleteIfExists(x))
      finally s.close()
    }
}
