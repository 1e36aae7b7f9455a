package io.deltalog

import java.nio.file.{Files, Path}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * [[ConformanceCorpus]]: DELTALOG_CONFORMANCE wins over the default ../shared/conformance, and a
 * missing corpus fails with one message saying what is missing and how to point at it. Tested on
 * empty temp folders, never by moving the real corpus.
 */
class ConformanceCorpusSuite {
  import ConformanceCorpus._

  private def corpusAt(dir: Path): Path = {
    Files.createDirectories(dir)
    Files.writeString(dir.resolve("manifest.json"), "[]")
    dir
  }

  private def noEnv: String => Option[String] = _ => None
  private def env(v: String): String => Option[String] = k => if (k == EnvVar) Some(v) else None

  @Test def defaultIsSharedConformanceNextToTheRepository(): Unit = {
    val t = TestDirs.create("corpus-default")
    val expected = Location(t.resolve("shared/conformance"), fromEnv = false)
    assertEquals(expected, locate(noEnv, t.resolve("clone"), t))
    assertEquals(expected, locate(env("  "), t.resolve("clone"), t))
  }

  @Test def environmentVariableOverridesTheDefault(): Unit = {
    val t = TestDirs.create("corpus-env")
    val other = corpusAt(t.resolve("elsewhere"))
    corpusAt(t.resolve("shared/conformance"))
    assertEquals(Location(other, fromEnv = true), locate(env(other.toString), t.resolve("clone"), t.resolve("x")))
    assertEquals(Location(other, fromEnv = true), locate(env("elsewhere"), t.resolve("clone"), t))
    assertEquals(None, missing(locate(env(other.toString), t.resolve("clone"), t)))
  }

  @Test def presentCorpusHasNoMessage(): Unit = {
    val t = TestDirs.create("corpus-present")
    corpusAt(t.resolve("shared/conformance"))
    assertEquals(None, missing(locate(noEnv, t.resolve("clone"), t)))
  }

  @Test def missingDefaultCorpusSaysWhereAndHow(): Unit = {
    val t = TestDirs.create("corpus-missing")
    val c = t.resolve("shared/conformance")
    assertEquals(
      Some(s"conformance corpus not found: $c/manifest.json does not exist (looked in the default " +
        s"../shared/conformance of the repository, $c). Put the corpus at ../shared/conformance next " +
        "to the repository, or set DELTALOG_CONFORMANCE=/path/to/conformance (the folder holding manifest.json)."),
      missing(locate(noEnv, t.resolve("clone"), t)))
  }

  @Test def missingOverriddenCorpusNamesTheVariable(): Unit = {
    val t = TestDirs.create("corpus-missing-env")
    val empty = Files.createDirectories(t.resolve("empty")) // a folder without manifest.json is no corpus
    corpusAt(t.resolve("shared/conformance")) // not used when the variable is set
    val msg = missing(locate(env(empty.toString), t.resolve("clone"), t))
    assertTrue(msg.exists(_.contains(s"$empty/manifest.json does not exist (looked in DELTALOG_CONFORMANCE=$empty)")), msg.toString)
  }

  @Test def thisRunHasItsCorpus(): Unit = {
    assertEquals(None, missing(location))
    assertEquals(location.path, root)
    assertTrue(manifest.size >= 200, s"${manifest.size} manifest entries")
  }
}
