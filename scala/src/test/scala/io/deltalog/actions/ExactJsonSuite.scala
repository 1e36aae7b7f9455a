package io.deltalog.actions

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** Stats JSON numbers are read exactly (issue 25, interop seeds 34 and 50). */
class ExactJsonSuite {
  private val big = "-1234567890123456789.0123456789"

  @Test def decimalBoundsKeepAllDigits(): Unit = {
    val n = ExactJson.readTree(s"""{"minValues":{"big":$big,"e":9.999999999999997e+27},"numRecords":3}""")
    assertEquals(new java.math.BigDecimal(big), n.get("minValues").get("big").decimalValue())
    assertEquals(new java.math.BigDecimal("9.999999999999997e+27"), n.get("minValues").get("e").decimalValue())
    assertEquals(3L, n.get("numRecords").longValue())
    // the default mapper (doubles) rounds the same text: the bug this replaces
    assertNotEquals(new java.math.BigDecimal(big),
      Action.mapper.readTree(s"""{"b":$big}""").get("b").decimalValue())
  }

  @Test def doublesConvertBackExactlyAndNegativeZeroKeepsItsSign(): Unit = {
    val n = ExactJson.readTree("""{"a":-0.0,"b":0.1,"c":4.9E-324,"d":1.7976931348623157E308,"e":[1.5,null,true,"x"]}""")
    assertEquals(java.lang.Double.doubleToRawLongBits(-0.0), java.lang.Double.doubleToRawLongBits(n.get("a").doubleValue()))
    assertEquals(0.1, n.get("b").doubleValue())
    assertEquals(4.9e-324, n.get("c").doubleValue())
    assertEquals(Double.MaxValue, n.get("d").doubleValue())
    assertEquals("""[1.5,null,true,"x"]""", ExactJson.mapper.writeValueAsString(n.get("e")))
    assertEquals(s"""{"big":$big,"z":-0.0}""",
      ExactJson.mapper.writeValueAsString(ExactJson.readTree(s"""{"big":$big,"z":-0.0}""")))
  }

  @Test def malformedTextThrowsAsWithReadTree(): Unit = {
    assertThrows(classOf[Exception], () => ExactJson.readTree("""{"a":1"""))
    // what follows the first value is not read, as with ObjectMapper.readTree (the reader it replaces)
    assertEquals(Action.mapper.readTree("""{"a":1} x"""), ExactJson.readTree("""{"a":1} x"""))
    assertThrows(classOf[Exception], () => ExactJson.readTree(""))
  }
}
