package io.deltalog.actions

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{DynamicTest, TestFactory}

import io.deltalog.actions.ActionTestSupport._
import io.deltalog.exceptions.ActionParseException

/** The language-neutral vectors under tests/vectors/actions (shared with the Python package). */
class SharedVectorsSuite {
  private def json(name: String): JsonNode = Action.mapper.readTree(vectorText(name))

  private def cases(name: String, min: Int)(make: (JsonNode, Int) => DynamicTest): java.util.List[DynamicTest] = {
    val root = json(name)
    val arr = if (root.isArray) root else root.get("cases")
    assertTrue(arr != null && arr.isArray && arr.size() >= min, s"$name: expected at least $min cases")
    arr.elements().asScala.zipWithIndex.map { case (c, i) => make(c, i) }.toList.asJava
  }

  @TestFactory def roundTrip(): java.util.List[DynamicTest] = {
    val lines = vectorText("roundtrip.jsonl").split("\n").toSeq.map(_.stripSuffix("\r")).filter(_.trim.nonEmpty)
    assertTrue(lines.size >= 10, "roundtrip.jsonl has too few lines")
    lines.zipWithIndex.map { case (l, i) =>
      DynamicTest.dynamicTest(s"roundtrip.jsonl line ${i + 1}", () => {
        val a = ActionCodec.parseLine(l, "roundtrip.jsonl", i + 1).get
        val out = ActionCodec.serialize(Seq(a))
        assertTrue(out.endsWith("\n") && out.count(_ == '\n') == 1)
        assertEquals(Action.mapper.readTree(l), Action.mapper.readTree(out), s"input: $l\noutput: $out")
        assertEquals(tree(l), tree(out))
        assertEquals(a, ActionCodec.parseLine(out, "again.json", 1).get)
      })
    }.asJava
  }

  @TestFactory def malformed(): java.util.List[DynamicTest] = cases("malformed.json", 10) { (c, i) =>
    val line = c.get("line").textValue()
    val field = c.get("field").textValue()
    DynamicTest.dynamicTest(s"malformed.json #$i ($field)", () => {
      val file = "00000000000000000042.json"
      val lineNo = 5 + i
      val e = assertThrows(classOf[ActionParseException],
        () => { ActionCodec.parseLine(line, file, lineNo); () }, s"no error for $line")
      assertEquals(field, e.field, s"${e.getMessage}\nline: $line")
      assertTrue(e.getMessage.contains(file), e.getMessage)
      assertTrue(e.getMessage.contains(s"line $lineNo"), e.getMessage)
      assertEquals(file, e.file)
      assertEquals(lineNo, e.lineNumber)
    })
  }

  @TestFactory def paths(): java.util.List[DynamicTest] = cases("paths.json", 10) { (c, i) =>
    val raw = c.get("raw").textValue()
    val encoded = c.get("encoded").textValue()
    DynamicTest.dynamicTest(s"paths.json #$i ($raw)", () => {
      assertEquals(encoded, PathCodec.encodePath(raw), s"encode($raw)")
      assertEquals(raw, PathCodec.decodePath(encoded), s"decode($encoded)")
      assertEquals(encoded, PathCodec.canonicalPathKey(encoded), s"canonicalPathKey($encoded)")
    })
  }

  @TestFactory def deletionVectors(): java.util.List[DynamicTest] = {
    val root = json("dv.json")
    val tableRoot = root.get("tableRoot").textValue()
    cases("dv.json", 3) { (c, i) =>
      DynamicTest.dynamicTest(s"dv.json #$i (${Option(c.get("name")).map(_.asText).getOrElse("")})", () => {
        val line = s"""{"add":{"path":"f","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,""" +
          s""""deletionVector":${c.get("descriptor")}}}"""
        val d = ActionCodec.parseLine(line, "dv.json", i + 1).get.asInstanceOf[AddFile].deletionVector.get
        assertEquals(c.get("descriptor"), Action.mapper.readTree(Action.mapper.writeValueAsString(d.toJsonNode)))
        assertEquals(c.get("uniqueId").textValue(), d.uniqueId)
        val expected = c.get("absolutePath")
        if (expected == null || expected.isNull) {
          assertTrue(d.isInline)
          assertThrows(classOf[IllegalStateException], () => { d.absolutePath(tableRoot); () })
        } else {
          assertEquals(expected.textValue(), d.absolutePath(tableRoot))
        }
      })
    }
  }
}
