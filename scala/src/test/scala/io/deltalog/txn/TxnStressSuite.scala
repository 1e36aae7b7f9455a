package io.deltalog.txn

import java.io.{ByteArrayOutputStream, PrintStream}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.tools.TxnStress

class TxnStressSuite {
  import TxnTestSupport._

  private def run(args: String*): (Int, Seq[String], String) = {
    val out = new ByteArrayOutputStream()
    val err = new ByteArrayOutputStream()
    val code = TxnStress.run(args, new PrintStream(out, true), new PrintStream(err, true))
    (code, out.toString("UTF-8").linesIterator.toSeq, err.toString("UTF-8"))
  }

  @Test def createAppendDelete(): Unit = withDir { d =>
    val t = d.resolve("table").toString
    assertEquals((0, Seq("committed 0"), ""), run("create", t))
    assertEquals((0, Seq("committed 1", "committed 2", "committed 3"), ""), run("append", t, "3", "7"))
    assertEquals(Set("w7-0.parquet", "w7-1.parquet", "w7-2.parquet"), livePaths(newLog(d.resolve("table"))))
    assertEquals((0, Seq("committed 4"), ""), run("delete", t, "w7-1.parquet"))
    val (code, out, _) = run("delete", t, "w7-1.parquet")
    assertEquals(1, code)
    assertEquals(Seq("not found w7-1.parquet"), out)
    val (c2, _, err) = run("create", t)
    assertEquals(1, c2)
    assertTrue(err.contains("DELTA_TABLE_ALREADY_EXISTS"), err)
    assertEquals(2, run("bogus")._1)
  }
}
