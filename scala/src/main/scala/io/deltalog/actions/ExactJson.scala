package io.deltalog.actions

import com.fasterxml.jackson.databind.{DeserializationFeature, ObjectMapper}
import com.fasterxml.jackson.databind.node.JsonNodeFactory

/**
 * The mapper for `add.stats` JSON: a number with a fraction or an exponent is kept exact (a
 * `BigDecimal`, digits as written), not read as a double. A decimal(38, s) bound has up to 38
 * digits; read as a double it rounds, and a max rounded down (a min rounded up) skipped files or
 * proved "no row matches" for files holding the value (issue 25, interop seeds 34 and 50).
 * Double and float bounds convert back exactly; a `-0.0` bound reads as `0.0`, which Spark's
 * ordering treats as equal.
 */
object ExactJson {
  val mapper: ObjectMapper = new ObjectMapper()
    .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
    .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true))
}
