package org.apache.spark.sql.deltalog

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}

import io.deltalog.spark.SparkTestSession

/** The Hadoop configuration built without a session state equals the one Spark builds with it. */
class SessionHadoopConfSuite {
  /** True when the session's state was not created yet (Spark's lazy field, read by reflection). */
  private def stateMissing(session: ClassicSession): Boolean = {
    val f = classOf[ClassicSession].getDeclaredField("sessionState")
    f.setAccessible(true)
    f.get(session) == null
  }

  private def entries(c: Configuration): Map[String, String] = c.iterator().asScala.map(e => e.getKey -> e.getValue).toMap

  /** Ours, built first (the state must still be missing), then Spark's: the same entries. */
  private def assertSameAsSpark(session: ClassicSession): Configuration = {
    assertTrue(stateMissing(session), "the session has no state yet")
    val pending = SessionHadoopConf.sqlConfPending(session)
    val conf = SessionHadoopConf.of(session)
    assertTrue(stateMissing(session), "building the configuration must not create the state")
    assertEquals(pending, SessionHadoopConf.sqlConfPending(session), "nor the SQL configuration, when it was pending")
    val ours = entries(conf)
    val spark = entries(session.sessionState.newHadoopConf())
    assertFalse(stateMissing(session))
    val differing = (ours.keySet ++ spark.keySet).filter(k => ours.get(k) != spark.get(k))
    assertTrue(differing.isEmpty, s"keys that differ: ${differing.map(k => s"$k: ${ours.get(k)} vs ${spark.get(k)}")}")
    conf
  }

  @Test def newSessionGetsSparksEntries(): Unit = {
    val s = SparkTestSession.spark.newSession().asInstanceOf[ClassicSession]
    // it shares the shared state of the session it came from: Spark's own SQL configuration is used
    assertFalse(SessionHadoopConf.sqlConfPending(s))
    val conf = assertSameAsSpark(s)
    assertEquals("UTC", conf.get("spark.sql.session.timeZone")) // set on the test session's SparkConf
  }

  @Test def initialOptionsAreApplied(): Unit = {
    val base = SparkTestSession.spark.asInstanceOf[ClassicSession]
    // a static SQL entry (the shared state takes it) too
    val opts = Map("deltalog.commit.durable" -> "true", "spark.sql.session.timeZone" -> "Asia/Tokyo",
      "spark.sql.sources.schemaStringLengthThreshold" -> "1234")
    // a session with a shared state of its own still to create: its SQL configuration is merged here
    val session = new ClassicSession(base.sparkContext, new java.util.HashMap(opts.asJava))
    assertTrue(SessionHadoopConf.sqlConfPending(session))
    val conf = assertSameAsSpark(session)
    assertFalse(SessionHadoopConf.sqlConfPending(session)) // Spark's own, built by the comparison
    assertEquals("true", conf.get("deltalog.commit.durable"))
    assertEquals("1234", conf.get("spark.sql.sources.schemaStringLengthThreshold"))
    assertEquals("Asia/Tokyo", conf.get("spark.sql.session.timeZone"))
  }

  @Test def runtimeSettingsAreSeen(): Unit = {
    val s = SparkTestSession.spark.newSession().asInstanceOf[ClassicSession]
    s.conf.set("deltalog.test.runtime", "set at runtime")
    val conf = assertSameAsSpark(s)
    assertEquals("set at runtime", conf.get("deltalog.test.runtime"))
  }

  @Test def existingStateGivesTheSameEntries(): Unit = {
    val s = SparkTestSession.spark.newSession().asInstanceOf[ClassicSession]
    s.sessionState
    s.conf.set("deltalog.test.later", "after the state")
    assertEquals(entries(s.sessionState.newHadoopConf()), entries(SessionHadoopConf.of(s)))
    assertEquals("after the state", SessionHadoopConf.of(s).get("deltalog.test.later"))
  }
}
