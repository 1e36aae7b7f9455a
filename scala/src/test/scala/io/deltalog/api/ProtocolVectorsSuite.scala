package io.deltalog.api

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{DynamicTest, Test, TestFactory}

import io.deltalog.actions.Action

/**
 * Runs every case of tests/vectors/protocol_cases.json (shared with the Python implementation)
 * through [[ProtocolCaseEvaluator]]. Fails when the file is missing or has fewer than 60 cases.
 */
class ProtocolVectorsSuite {
  private val MinCases = 60

  private def vectorsFile: Path = {
    val root = Option(System.getProperty("deltalog.repo.root")).getOrElse(
      throw new AssertionError("system property deltalog.repo.root is not set (it is set by pom.xml)"))
    Paths.get(root, "tests", "vectors", "protocol_cases.json")
  }

  private def loadCases(): Seq[JsonNode] = {
    val file = vectorsFile
    assertTrue(Files.isRegularFile(file), s"shared vectors file is missing: $file")
    val root = Action.mapper.readTree(Files.readAllBytes(file))
    val cases = root.get("cases")
    assertNotNull(cases, s"$file has no 'cases' array")
    assertTrue(cases.isArray, s"'cases' of $file is not an array")
    cases.elements().asScala.toSeq
  }

  @Test def fileHasEnoughCases(): Unit = {
    val cases = loadCases()
    assertTrue(cases.size >= MinCases, s"expected at least $MinCases protocol cases but found ${cases.size}")
    val unnamed = cases.count(c => c.get("name") == null || c.get("op") == null || c.get("expected") == null)
    assertEquals(0, unnamed, "every case needs name, op and expected")
  }

  @TestFactory def everyCase(): java.util.List[DynamicTest] =
    loadCases().zipWithIndex.map { case (c, i) =>
      val name = Option(c.get("name")).map(_.asText()).getOrElse(s"case #$i")
      DynamicTest.dynamicTest(s"[$i] $name", () => {
        val result = ProtocolCaseEvaluator.evaluate(c)
        VectorCompare.mismatch(c.get("expected"), result).foreach(m => fail(s"case '$name' (op ${c.get("op")}): $m"))
      })
    }.asJava
}
