package io.deltalog.actions

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import com.fasterxml.jackson.databind.JsonNode
import org.junit.jupiter.api.Assertions._

import io.deltalog.exceptions.ActionParseException

/** Helpers shared by the action tests. */
object ActionTestSupport {
  /** Repository root: system property `deltalog.repo.root`, else the working directory. */
  def repoRoot: Path =
    Paths.get(Option(System.getProperty("deltalog.repo.root")).getOrElse(System.getProperty("user.dir")))

  /** Seconds to wait for a shared vector file written by another team (default 30). */
  private def waitSeconds: Long =
    Option(System.getProperty("deltalog.vectors.wait.seconds")).map(_.toLong).getOrElse(30L)

  /**
   * The text of `tests/vectors/actions/<name>`, polling for it for a while; fails the test with a
   * clear message if it never appears.
   */
  def vectorText(name: String): String = {
    val p = repoRoot.resolve("tests/vectors/actions").resolve(name)
    val deadline = System.nanoTime() + waitSeconds * 1000000000L
    while (!Files.isRegularFile(p) && System.nanoTime() < deadline) Thread.sleep(1000)
    if (!Files.isRegularFile(p)) fail(s"shared vector file $p is missing (it is written by the Python side)")
    new String(Files.readAllBytes(p), StandardCharsets.UTF_8)
  }

  /** Parses JSON for comparisons, with the same number handling as the codec. */
  def tree(json: String): JsonNode = ActionCodec.reader.readTree(json)

  /** Parses exactly one action from a line. */
  def parse(line: String): Action = ActionCodec.parseLine(line, "test.json", 1).get

  /** Serialized form of one action (one line, no newline). */
  def line(a: Action): String = ActionCodec.serialize(Seq(a)).stripSuffix("\n")

  /** Asserts parse → serialize gives JSON equal to the input, and returns the action. */
  def assertRoundTrip(input: String): Action = {
    val a = parse(input)
    val out = line(a)
    assertEquals(tree(input), tree(out), s"round trip of $input gave $out")
    // And a second pass is stable.
    assertEquals(out, line(parse(out)))
    a
  }

  /** Asserts that parsing `input` as line `lineNo` of `file` fails on `field`. */
  def assertParseError(input: String, field: String, file: String = "00000000000000000007.json",
      lineNo: Int = 3): ActionParseException = {
    val e = assertThrows(classOf[ActionParseException], () => { ActionCodec.parseLine(input, file, lineNo); () },
      s"expected a parse error on $field for $input")
    assertEquals(field, e.field, s"error field for $input: ${e.getMessage}")
    assertEquals(file, e.file)
    assertEquals(lineNo, e.lineNumber)
    assertTrue(e.getMessage.contains(file) && e.getMessage.contains(s"line $lineNo"), e.getMessage)
    assertEquals("DELTA_MALFORMED_LOG_LINE", e.errorClass)
    e
  }
}
