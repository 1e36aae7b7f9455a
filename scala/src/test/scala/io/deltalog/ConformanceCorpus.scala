package io.deltalog

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * Where the conformance corpus is, for every JVM suite: `DELTALOG_CONFORMANCE` when set (a relative
 * path is taken from the working directory), else `../shared/conformance` next to the repository
 * (`-Ddeltalog.repo.root`, set by pom.xml, else the working directory). The Python tests resolve it
 * the same way (tests/conformance_corpus.py) and say the same message when it is missing.
 *
 * [[root]] fails (AssertionError, so the test fails rather than skips) with that one message when
 * the folder holds no `manifest.json`.
 */
object ConformanceCorpus {
  val EnvVar = "DELTALOG_CONFORMANCE"
  val DefaultRelative = "../shared/conformance"

  /** The corpus folder and whether it came from [[EnvVar]]. */
  final case class Location(path: Path, fromEnv: Boolean)

  def locate(env: String => Option[String], repoRoot: Path, workingDir: Path): Location =
    env(EnvVar).map(_.trim).filter(_.nonEmpty) match {
      case Some(p) =>
        val expanded = if (p == "~" || p.startsWith("~/")) sys.props("user.home") + p.drop(1) else p
        Location(workingDir.resolve(expanded).toAbsolutePath.normalize(), fromEnv = true)
      case None => Location(repoRoot.resolve(DefaultRelative).toAbsolutePath.normalize(), fromEnv = false)
    }

  /** The one message of a run without its corpus (same text as tests/conformance_corpus.py). */
  def message(loc: Location): String = {
    val where = if (loc.fromEnv) s"$EnvVar=${loc.path}" else s"the default $DefaultRelative of the repository, ${loc.path}"
    s"conformance corpus not found: ${loc.path.resolve("manifest.json")} does not exist (looked in $where). " +
      s"Put the corpus at $DefaultRelative next to the repository, or set " +
      s"$EnvVar=/path/to/conformance (the folder holding manifest.json)."
  }

  /** None when `loc` holds a `manifest.json`, else [[message]]. */
  def missing(loc: Location): Option[String] =
    if (Files.isRegularFile(loc.path.resolve("manifest.json"))) None else Some(message(loc))

  /** This run's location (environment and system properties of the test JVM). */
  lazy val location: Location = {
    val cwd = Paths.get(System.getProperty("user.dir"))
    val repo = Option(System.getProperty("deltalog.repo.root")).map(Paths.get(_)).getOrElse(cwd)
    locate(sys.env.get, repo, cwd)
  }

  /** The corpus folder; fails with [[message]] when it is missing. */
  def root: Path = {
    missing(location).foreach(m => throw new AssertionError(m))
    location.path
  }

  /** `rel` (a `table_path` of the manifest, or any path under the corpus) resolved in [[root]]. */
  def resolve(rel: String): Path = root.resolve(rel)

  /** The entries of `manifest.json`. */
  def manifest: Seq[JsonNode] =
    new ObjectMapper().readTree(root.resolve("manifest.json").toFile).elements().asScala.toSeq
}
