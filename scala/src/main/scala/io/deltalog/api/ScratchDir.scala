package io.deltalog.api

import java.nio.file.{Files, Path}
import java.util.Comparator

/** A temporary directory for work that must leave nothing behind (warm-ups on a table of their own). */
private[api] object ScratchDir {
  /** Runs `body` on a new directory named `prefix...` under `java.io.tmpdir`, then deletes it. */
  def using[T](prefix: String)(body: Path => T): T = {
    val dir = Files.createTempDirectory(prefix)
    try body(dir) finally delete(dir)
  }

  private def delete(dir: Path): Unit =
    try {
      val s = Files.walk(dir)
      try s.sorted(Comparator.reverseOrder[Path]()).forEach(p => Files.deleteIfExists(p))
      finally s.close()
    } catch { case _: java.io.IOException => () }
}
